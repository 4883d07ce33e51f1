"""nki.isa (nisa): the instruction-level surface."""
import enum
import numpy as np

from ._core import core
from . import _dtypes, language
from ._ops import nki_api as _api, op_name


class nc_version(enum.IntEnum):
    gen1 = 1
    gen2 = 2
    gen3 = 3
    gen4 = 4


class engine(enum.IntEnum):
    unknown = 0
    tensor = 1
    scalar = 2
    gpsimd = 3
    vector = 5
    sync = 6


unknown_engine, tensor_engine, scalar_engine = engine.unknown, engine.tensor, engine.scalar
gpsimd_engine, vector_engine, dma_engine = engine.gpsimd, engine.vector, engine.sync


@_api("nisa.get_nc_version")
def get_nc_version():
    return nc_version(core.nc_version())


def _dtype_arg(dtype):
    return None if dtype is None else _dtypes.dtype_name(dtype)


@_api("nisa.nc_matmul")
def nc_matmul(stationary, moving, *, is_stationary_onezero=False, is_moving_onezero=False, is_transpose=False,
              tile_position=(), tile_size=(), mask=None, **kwargs):
    if tuple(tile_size) == (32, 32):
        core.assert_nc_version(3, "nisa.nc_matmul(tile_size=(32, 32))")  # NC-v2 tiles the PE array in halves only
    return core.nc_matmul(stationary, moving, mask, kwargs.get("perf_mode") == "double_row_gen3", bool(is_transpose))


@_api("nisa.nc_matmul_mx")
def nc_matmul_mx(dst, stationary, moving, stationary_scale, moving_scale, tile_position=None, tile_size=None,
                 name=None, **kwargs):
    """NeuronCore-v4+: dst (PSUM) += the dequantized stationary.T @ moving of two
    packed mx tiles; tile_position/tile_size place the instruction only."""
    core.nc_matmul_mx(dst, stationary, moving, stationary_scale, moving_scale)


@_api("nisa.quantize_mx")
def quantize_mx(dst, src, dst_scale, name=None, **kwargs):
    """NeuronCore-v4+: src (bf16/fp16) -> packed fp8 x4 dst and its E8M0 block scales."""
    core.quantize_mx(dst, src, dst_scale)


@_api("nisa.nc_transpose")
def nc_transpose(data, *, mask=None, dtype=None, engine=engine.unknown, **kwargs):
    data = _flat2d(data)  # several free axes collapse into one
    if engine == vector_engine:
        return core.vector_transpose(data, mask, _dtype_arg(dtype))
    return core.transpose("nisa.nc_transpose", data, mask, _dtype_arg(dtype))


@_api("nisa.tensor_reduce")
def tensor_reduce(op, data, axis, *, mask=None, dtype=None, negate=False, keepdims=False, **kwargs):
    axes = [int(a) for a in axis] if isinstance(axis, (tuple, list)) else [int(axis)]
    return core.reduce("nisa.tensor_reduce", op_name(op), data, axes, bool(keepdims), bool(negate), mask,
                       _dtype_arg(dtype))


@_api("nisa.tensor_tensor")
def tensor_tensor(data1, data2, op, *, dtype=None, mask=None, engine=engine.unknown, **kwargs):
    name = op_name(op)
    _one_psum_input(("data1", data1), ("data2", data2))
    if name == "power" or engine == gpsimd_engine:
        _no_psum(("data1", data1), ("data2", data2))
    return core.elementwise(name, _operands(name, data1, data2), mask, _dtype_arg(dtype))


def _in_psum(t):
    return isinstance(t, core.NkiTensor) and core.tensor_info(t)[2] == "psum"


def _one_psum_input(*operands):
    """NKI_API §3.4: an engine reads at most one of its tile inputs from PSUM."""
    if sum(_in_psum(t) for _, t in operands) > 1:
        core.raise_unsupported_memory(operands[-1][0], "sbuf", "psum")


def _no_psum(*operands):
    """GpSimd (power, engine=gpsimd_engine) cannot access PSUM."""
    for name, t in operands:
        if _in_psum(t):
            core.raise_unsupported_memory(name, "sbuf", "psum")


_BITVEC = {"bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift", "invert"}
# One-operand ops the ISA's tensor ops take in an op slot (NKI_API.md §3.2): they read
# the data and ignore the slot's operand.
_ONE_OPERAND = {"abs", "rsqrt", "reciprocal"}


def _operands(op, data, operand, reverse=False):
    """What op `op` reads in a tensor op slot: (data, operand), swapped with reverse."""
    if op in _ONE_OPERAND:
        return (data,)
    return (operand, data) if reverse else (data, operand)


def _fused_dtype(data, op0, op1):
    """The first op's result in a fused pair: the engine keeps it in fp32, or, when
    either op is a bitvec op, in the data's integer bits; only the final result is rounded."""
    return core.tensor_info(data)[1] if {op0, op1} & _BITVEC else "float32"


@_api("nisa.tensor_scalar")
def tensor_scalar(data, op0, operand0, reverse0=False, op1=None, operand1=None, reverse1=False, *, dtype=None,
                  mask=None, engine=engine.unknown, **kwargs):
    final = _dtype_arg(dtype) or core.tensor_info(data)[1]  # ISA results default to the data's dtype
    first = op_name(op0, "op0")
    second = op_name(op1, None)
    if second is not None and (first in _BITVEC) != (second in _BITVEC):
        # NKI_API §3.4: a fused pair is two bitvec ops (integer bits) or two arithmetic ones (fp32)
        core.raise_unsupported_op(f"{first} with {second}")
    out = core.elementwise(first, _operands(first, data, operand0, reverse0), mask,
                           _fused_dtype(data, first, second) if second is not None else final)
    if second is not None:
        out = core.elementwise(second, _operands(second, out, operand1, reverse1), mask, final)
    return out


class reduce_cmd(enum.IntEnum):
    idle = 0
    reset = 1
    reduce = 2
    reset_reduce = 3


class dge_mode(enum.IntEnum):
    none = 0
    swdge = 1
    hwdge = 2
    unknown = 3


class oob_mode(enum.IntEnum):
    error = 0
    skip = 1


def _free_axes(t):
    return list(range(1, len(t.shape)))


def _reduce_into(res, op, t, mask, cmd=reduce_cmd.reset_reduce):
    """The engine's reduce accumulator, one fp32 register per partition kept across
    instructions: reset_reduce restarts it with `t` folded over its free axes,
    reduce folds that into it, reset zeroes it; `res` (P, 1), when given, receives it."""
    if op != "add" and core.cur_api() in ("nisa.activation", "nisa.activation_reduce"):
        core.assert_nc_version(3, f"nisa.activation(reduce_op={op})")  # NC-v2's activation reduces with add only
    acc = core.engine_accumulator()[0:t.shape[0], :]
    if cmd == reduce_cmd.reset:
        acc[...] = 0.0
    else:
        r = core.reduce(core.cur_api(), op, t, _free_axes(t), True, False, mask, "float32")
        acc[...] = core.elementwise(op, (acc, r), mask, "float32") if cmd == reduce_cmd.reduce else r
    if res is not None:
        res[...] = acc


@_api("nisa.activation")
def activation(op, data, *, bias=None, scale=1.0, reduce_op=None, reduce_res=None, reduce_cmd=reduce_cmd.idle,
               mask=None, dtype=None, **kwargs):
    core.check_activation_operands(data, bias, scale)
    x = data
    if not (isinstance(scale, (int, float)) and scale == 1.0):
        x = core.elementwise("multiply", (x, scale), mask, "float32")
    if bias is not None:
        x = core.elementwise("add", (x, bias), mask, "float32")
    out = core.elementwise(op_name(op), (x,), mask, _dtype_arg(dtype) or core.tensor_info(data)[1])
    if reduce_res is not None or reduce_cmd != type(reduce_cmd).idle:
        _reduce_into(reduce_res, op_name(reduce_op, None) or "add", out, mask, reduce_cmd)
    return out


@_api("nisa.activation_reduce")
def activation_reduce(op, data, *, reduce_op, reduce_res, bias=None, scale=1.0, mask=None, dtype=None, **kwargs):
    return activation(op, data, bias=bias, scale=scale, reduce_op=reduce_op, reduce_res=reduce_res,
                      reduce_cmd=reduce_cmd.reset_reduce, mask=mask, dtype=dtype)


@_api("nisa.tensor_scalar_reduce")
def tensor_scalar_reduce(*, data, op0, operand0, reduce_op, reduce_res, reverse0=False, dtype=None, mask=None,
                         **kwargs):
    first = op_name(op0, "op0")
    out = core.elementwise(first, _operands(first, data, operand0, reverse0), mask,
                           _dtype_arg(dtype) or core.tensor_info(data)[1])  # ISA results keep the data's dtype
    _reduce_into(reduce_res, op_name(reduce_op, "reduce_op"), out, mask)
    return out


@_api("nisa.scalar_tensor_tensor")
def scalar_tensor_tensor(*, data, op0, operand0, op1, operand1, reverse0=False, reverse1=False, dtype=None,
                         mask=None, **kwargs):
    first, second = op_name(op0, "op0"), op_name(op1, "op1")
    _one_psum_input(("data", data), ("operand1", operand1))
    t = core.elementwise(first, _operands(first, data, operand0, reverse0), mask, _fused_dtype(data, first, second))
    return core.elementwise(second, _operands(second, t, operand1, reverse1), mask, _dtype_arg(dtype))


def _predicate(predicate, reverse_pred, mask):
    """The predicate tile, or its complement (zero elements) with reverse_pred."""
    return core.elementwise("equal", (predicate, 0), mask, "uint8") if reverse_pred else predicate


@_api("nisa.tensor_copy_predicated")
def tensor_copy_predicated(*, src, dst, predicate, mask=None, dtype=None, reverse_pred=False, **kwargs):
    if not isinstance(src, core.NkiTensor):  # a scalar src is copied where the predicate holds
        src = memset(tuple(dst.shape), src, core.tensor_info(dst)[1])
    src, predicate = _like(src, dst), _like(predicate, dst)
    dst[...] = core.where(_predicate(predicate, reverse_pred, mask), src, dst, mask, _dtype_arg(dtype) or core.tensor_info(dst)[1])


def _like(t, dst):
    """`t` in dst's shape when only the split of their free elements differs (the engines
    walk free elements flat): [128, 64] against a [128, 2, 32] dst."""
    if not isinstance(t, core.NkiTensor) or tuple(t.shape) == tuple(dst.shape) or t.shape[0] != dst.shape[0]:
        return t
    if int(np.prod(t.shape)) != int(np.prod(dst.shape)):
        return t
    return t.reshape(tuple(dst.shape))


@_api("nisa.tensor_partition_reduce")
def tensor_partition_reduce(op, data, *, mask=None, dtype=None, **kwargs):
    return core.partition_reduce(op_name(op), data, mask, _dtype_arg(dtype))


def _check_dge(mode):
    if mode == dge_mode.hwdge:
        core.check_hwdge()


@_api("nisa.dma_copy")
def dma_copy(*, dst, src, mask=None, dst_rmw_op=None, oob_mode=oob_mode.error, dge_mode=dge_mode.unknown,
             **kwargs):
    _check_dge(dge_mode)
    if dst_rmw_op is not None and op_name(dst_rmw_op) != "add":
        core.raise_unsupported_op(op_name(dst_rmw_op))
    core.assign(dst, src, mask, dst_rmw_op is not None, int(oob_mode) == 1)  # 1: oob_mode.skip (the arg shadows the enum)


@_api("nisa.dma_transpose")
def dma_transpose(src, *, axes=None, mask=None, dtype=None, dge_mode=dge_mode.unknown, **kwargs):
    _check_dge(dge_mode)
    return core.load_transpose2d(src, mask, _dtype_arg(dtype))


@_api("nisa.tensor_copy")
def tensor_copy(src, *, mask=None, dtype=None, engine=engine.unknown, **kwargs):
    if engine == gpsimd_engine:
        _no_psum(("src", src))
    return core.elementwise("bypass", (src,), mask, _dtype_arg(dtype))


@_api("nisa.tensor_copy_dynamic_src")
def tensor_copy_dynamic_src(src, *, mask=None, dtype=None, engine=engine.unknown, **kwargs):
    """A copy of `src`, an on-chip view at a runtime offset: `x[i_p, i_f + off[0, j]]`."""
    return core.tensor_copy_dynamic_src(src, mask, _dtype_arg(dtype))


@_api("nisa.tensor_copy_dynamic_dst")
def tensor_copy_dynamic_dst(*, dst, src, mask=None, dtype=None, engine=engine.unknown, **kwargs):
    """Copies `src` into `dst`, an on-chip view at a runtime offset."""
    core.tensor_copy_dynamic_dst(dst, src, mask)


@_api("nisa.reciprocal")
def reciprocal(data, *, dtype=None, mask=None, **kwargs):
    return core.elementwise("reciprocal", (data,), mask, _dtype_arg(dtype))


@_api("nisa.memset")
def memset(shape, value, dtype, *, mask=None, engine=engine.unknown, **kwargs):
    return core.full(language._shape(shape), float(value), _dtypes.dtype_name(dtype), "sbuf", "", "nisa.memset", 0)


@_api("nisa.iota")
def iota(expr, dtype, *, mask=None, **kwargs):
    return core.iota(expr, _dtypes.dtype_name(dtype), mask)


@_api("nisa.affine_select")
def affine_select(pred, on_true_tile, on_false_value, *, mask=None, dtype=None, **kwargs):
    return core.affine_select(pred, on_true_tile, float(on_false_value), mask, _dtype_arg(dtype))


class fp32:
    """nisa.fp32.min: the most negative finite fp32."""
    min = language.fp32.min


@_api("nisa.bn_stats")
def bn_stats(data, *, mask=None, dtype=None, **kwargs):
    """Per partition, over the free elements split into even and odd positions:
    [count, mean, variance * count] of each half, as a [P, 6] tile (the layout
    nisa.bn_aggr reads). Elements `mask` leaves out take no part (docs/masks.md,
    "Masks on nisa.bn_stats")."""
    core.check_bn_stats(data, mask)
    p = data.shape[0]
    # Each element's value and a 0/1 weight; both 0 where the mask leaves it out.
    vals, weight = memset(data.shape, 0.0, "float32"), memset(data.shape, 0.0, "float32")
    vals[...] = core.elementwise("bypass", (data,), mask, "float32")
    weight[...] = core.elementwise("add", (weight, 1.0), mask, "float32")
    vals, weight = _flat2d(vals), _flat2d(weight)
    n = vals.shape[1]
    out = language.ndarray((p, 6), dtype=_dtype_arg(dtype) or core.tensor_info(data)[1])  # fp32 results cast back
    for k in range(2):
        x, w = vals[:, k:n:2], weight[:, k:n:2]
        count = core.reduce("nisa.bn_stats", "add", w, [1], True, False, None, "float32")
        total = core.reduce("nisa.bn_stats", "add", x, [1], True, False, None, "float32")
        # An empty half (every element masked out) has mean 0, not 0 / 0.
        mean = core.elementwise("divide", (total, core.elementwise("maximum", (count, 1.0), None, "float32")),
                                None, "float32")
        centered = core.elementwise("multiply", (core.elementwise("subtract", (x, mean), None, "float32"), w),
                                    None, "float32")
        m2 = core.reduce("nisa.bn_stats", "add", core.elementwise("multiply", (centered, centered), None, "float32"),
                         [1], True, False, None, "float32")
        out[:, 3 * k:3 * k + 1] = count
        out[:, 3 * k + 1:3 * k + 2] = mean
        out[:, 3 * k + 2:3 * k + 3] = m2
    return out


@_api("nisa.bn_aggr")
def bn_aggr(data, *, mask=None, dtype=None, **kwargs):
    """Combines bn_stats groups ([count, mean, variance * count] triples along
    the free dim) into [mean, variance] per partition (Chan's parallel formula)."""
    p, width = data.shape[0], data.shape[1]
    counts, means, m2s = data[:, 0:width:3], data[:, 1:width:3], data[:, 2:width:3]
    total = core.reduce("nisa.bn_aggr", "add", counts, [1], True, False, mask, "float32")
    weighted = core.reduce("nisa.bn_aggr", "add", core.elementwise("multiply", (counts, means), mask, "float32"),
                           [1], True, False, mask, "float32")
    mean = core.elementwise("divide", (weighted, total), mask, "float32")
    delta = core.elementwise("subtract", (means, mean), mask, "float32")
    spread = core.elementwise("multiply", (counts, core.elementwise("multiply", (delta, delta), mask, "float32")),
                              mask, "float32")
    m2 = core.reduce("nisa.bn_aggr", "add", core.elementwise("add", (m2s, spread), mask, "float32"),
                     [1], True, False, mask, "float32")
    out = language.ndarray((p, 2), dtype=_dtype_arg(dtype) or core.tensor_info(data)[1])
    out[:, 0:1] = mean
    out[:, 1:2] = core.elementwise("divide", (m2, total), mask, "float32")
    return out


@_api("nisa.tensor_tensor_scan")
def tensor_tensor_scan(data0, data1, initial, op0, op1, reverse0=False, reverse1=False, *, dtype=None, mask=None,
                       **kwargs):
    """Per partition, along the free elements: r[:, i] = op1(op0(data0[:, i], r[:, i-1]), data1[:, i])
    with r[:, -1] = initial; kept in fp32 and rounded once into the result. One column step
    per free element, as the engine walks them; `mask` (over the whole tile) applies to the
    result, and a column's value only flows into later columns."""
    for op in (op0, op1):
        if op_name(op) in _BITVEC:
            core.raise_unsupported_op(op_name(op))  # NKI_API §3.4: the scan takes arithmetic operators only
    _one_psum_input(("data0", data0), ("data1", data1))
    d0, d1 = _flat2d(data0), _flat2d(data1)
    acc = language.ndarray(d0.shape, dtype="float32")
    prev = initial
    for i in range(d0.shape[1]):
        a, b = d0[:, i:i + 1], d1[:, i:i + 1]
        t = core.elementwise(op_name(op0, "op0"), (prev, a) if reverse0 else (a, prev), None, "float32")
        prev = core.elementwise(op_name(op1, "op1"), (b, t) if reverse1 else (t, b), None, "float32")
        acc[:, i:i + 1] = prev
    out = core.elementwise("bypass", (acc,), mask, _dtype_arg(dtype) or core.tensor_info(data0)[1])
    return _unflat(out, data0)


def _scan(x, op, forward):
    """Inclusive prefix (forward) or suffix fold of `op` along the free axis, in
    log2(n) doubling steps: each reads the previous step's whole tile."""
    p, n = x.shape
    shift = 1
    while shift < n:
        y = language.ndarray((p, n), dtype="float32")
        y[...] = x
        if forward:
            y[:, shift:n] = core.elementwise(op, (x[:, shift:n], x[:, 0:n - shift]), None, "float32")
        else:
            y[:, 0:n - shift] = core.elementwise(op, (x[:, 0:n - shift], x[:, shift:n]), None, "float32")
        x, shift = y, 2 * shift
    return x


@_api("nisa.sequence_bounds")
def sequence_bounds(*, segment_ids, dtype=None, **kwargs):
    """(P, 2, n): for each element, the start and the end (exclusive) of the run of equal
    segment ids holding it; padding (id 0) gets start n and end -1."""
    core.check_operand(segment_ids, "segment_ids")
    ids = segment_ids
    p, n = ids.shape
    idx = _free_index(ids)
    begins = language.ndarray((p, n), dtype="float32")  # i where a run begins, else 0
    ends = language.ndarray((p, n), dtype="float32")    # i + 1 where a run ends, else n
    begins[:, 0:1] = 0
    ends[:, n - 1:n] = n
    if n > 1:
        new = core.elementwise("not_equal", (ids[:, 1:n], ids[:, 0:n - 1]), None, "float32")
        begins[:, 1:n] = core.elementwise("multiply", (new, idx[:, 1:n]), None, "float32")
        last = core.elementwise("add", (idx[:, 0:n - 1], 1 - n), None, "float32")
        ends[:, 0:n - 1] = core.elementwise("add", (core.elementwise("multiply", (new, last), None, "float32"), n),
                                            None, "float32")
    real = core.elementwise("not_equal", (ids, 0), None, "uint8")
    out = language.ndarray((p, 2, n), dtype=_dtype_arg(dtype) or core.tensor_info(ids)[1])
    out[:, 0, :] = core.where(real, _scan(begins, "maximum", True), n, None, "float32")
    out[:, 1, :] = core.where(real, _scan(ends, "minimum", False), -1, None, "float32")
    return out


@_api("nisa.dropout")
def dropout(data, prob, *, mask=None, dtype=None, **kwargs):
    """nl.dropout with `prob` a scalar or a [P, 1] tile."""
    return language.dropout(data, prob, dtype=dtype, mask=mask)


def _select_into(out, keep, on_true, on_false, reduce_res, reduce_op, cmd, mask):
    """`out = keep ? on_true : on_false`, then the per-partition reduction into `reduce_res`
    that reduce_cmd asks for (idle: none; reset: the accumulator restarts; reduce: it folds on)."""
    out[...] = core.where(keep, on_true, on_false, mask, core.tensor_info(out)[1])
    if cmd != reduce_cmd.idle:
        _reduce_into(reduce_res, op_name(reduce_op, "reduce_op"), out, mask, cmd)
    return out


@_api("nisa.select_reduce")
def select_reduce(*, dst, predicate, on_true, on_false, reduce_res=None, reduce_cmd=reduce_cmd.idle,
                  reduce_op=np.amax, reverse_pred=False, mask=None, dtype=None, **kwargs):
    predicate, on_true = _like(predicate, dst), _like(on_true, dst)
    return _select_into(dst, _predicate(predicate, reverse_pred, mask), on_true, on_false, reduce_res, reduce_op, reduce_cmd, mask)


@_api("nisa.range_select")
def range_select(*, on_true_tile, comp_op0, comp_op1, bound0, bound1, reduce_cmd=reduce_cmd.idle, reduce_res=None,
                 reduce_op=np.amax, range_start=0, on_false_value=language.fp32.min, mask=None, dtype=None,
                 **kwargs):
    """Keeps on_true_tile[p, i] where comp_op0(range_start + i, bound0[p]) and
    comp_op1(range_start + i, bound1[p]) hold (index i over the flattened free elements)."""
    flat = _flat2d(on_true_tile)
    idx = _free_index(flat, range_start, mask)
    keep = core.elementwise("logical_and", (core.elementwise(op_name(comp_op0, "comp_op0"), (idx, bound0), mask, "uint8"),
                                            core.elementwise(op_name(comp_op1, "comp_op1"), (idx, bound1), mask, "uint8")),
                            mask, "uint8")
    out = language.ndarray(flat.shape, dtype=_dtype_arg(dtype) or core.tensor_info(on_true_tile)[1])
    _select_into(out, keep, flat, on_false_value, reduce_res, reduce_op, reduce_cmd, mask)
    return _unflat(out, on_true_tile)


def _flat2d(t):
    """t as [P, F]: the free dims flattened, as the engines walk them."""
    return t if len(t.shape) == 2 else t.reshape((t.shape[0], int(np.prod(t.shape[1:]))))


def _free_index(flat, start=0, mask=None):
    """The fp32 tile of free positions start + i (exact below 2^24)."""
    p, n = flat.shape
    return core.iota(0 * language.arange(p)[:, None] + language.arange(n)[None, :] + start, "float32", mask)


# What an unmatched slot of the top-8 instructions holds: 2^32 in fp32, which the
# saturating conversion turns into the all-ones index of any unsigned result.
_NOT_FOUND = 2.0 ** 32


def _first_match(data, idx, val, mask):
    """Per partition, the first free position where data == val ([P, 1], fp32; _NOT_FOUND when absent)."""
    hit = core.elementwise("equal", (data, val), mask, "uint8")
    return core.reduce(core.cur_api(), "minimum", core.where(hit, idx, _NOT_FOUND, mask, "float32"),
                       [1], True, False, mask, "float32")


def _take8(data, value_of, replacement, mask, order=range(8)):
    """For k in `order`: the value value_of(work, k) ([P, 1]) is looked up, and the first position
    still holding it then holds `replacement` (so equal values find successive positions).
    Returns the updated data, the [P, 8] positions and the [P, 8] values taken."""
    work = language.ndarray(data.shape, dtype="float32")
    work[...] = data
    idx = _free_index(data, 0, mask)
    found = language.ndarray((data.shape[0], 8), dtype="float32")
    taken = language.ndarray((data.shape[0], 8), dtype="float32")
    for k in order:
        value = value_of(work, k)
        taken[:, k:k + 1] = value
        first = _first_match(work, idx, value, mask)
        found[:, k:k + 1] = first
        elsewhere = core.elementwise("not_equal", (idx, first), mask, "uint8")
        work[...] = core.where(elsewhere, work, replacement, mask, "float32")
    return work, found, taken


def _unflat(out, like):
    """A [P, F] result back in the shape of the tile it was computed from."""
    return out if out.shape == like.shape else out.reshape(like.shape)


@_api("nisa.max8")
def max8(*, src, mask=None, dtype=None, **kwargs):
    """The 8 largest values per partition, descending (repeated values repeat)."""
    def largest(work, k):
        return core.reduce(core.cur_api(), "maximum", work, [1], True, False, mask, "float32")
    core.assert_elements_per_partition(src, "src", *core.topk_elements())
    _, _, taken = _take8(_flat2d(src), largest, -float("inf"), mask)
    return core.elementwise("bypass", (taken,), None, _dtype_arg(dtype) or core.tensor_info(src)[1])


@_api("nisa.nc_find_index8")
def nc_find_index8(*, data, vals, mask=None, dtype=None, **kwargs):
    """Per partition, the position of each of the 8 `vals` in `data` (equal values: successive
    occurrences; absent values: all ones)."""
    core.assert_elements_per_partition(data, "data", *core.topk_elements())
    vals = _flat2d(vals)
    _, found, _ = _take8(_flat2d(data), lambda work, k: vals[:, k:k + 1], float("nan"), mask)
    return core.elementwise("bypass", (found,), None, _dtype_arg(dtype) or "uint32")


@_api("nisa.nc_match_replace8")
def nc_match_replace8(*, data, vals, imm, dst_idx=None, mask=None, dtype=None, **kwargs):
    """`data` with the first occurrence of each of the 8 `vals` replaced by `imm`; the positions
    go to `dst_idx` when given."""
    core.assert_elements_per_partition(data, "data", 1, core.topk_elements()[1])
    # The engine walks vals from the last to the first: of equal vals, the last takes the
    # first occurrence (the Neuron SDK documents this tie-break).
    vals = _flat2d(vals)
    work, found, _ = _take8(_flat2d(data), lambda work, k: vals[:, k:k + 1], float(imm), mask, range(7, -1, -1))
    if dst_idx is not None:
        dst_idx[...] = found
    return _unflat(core.elementwise("bypass", (work,), None, _dtype_arg(dtype) or core.tensor_info(data)[1]), data)


@_api("nisa.local_gather")
def local_gather(src_buffer, index, num_elem_per_idx=1, num_valid_indices=None, *, mask=None, **kwargs):
    """Per 16-partition GpSimd core: the core's uint16 indices, flattened partition-first,
    each gather num_elem_per_idx elements of every partition's flattened free dims."""
    return core.local_gather(src_buffer, index, int(num_elem_per_idx),
                             None if num_valid_indices is None else int(num_valid_indices), mask)


@_api("nisa.nc_stream_shuffle")
def nc_stream_shuffle(src, dst, shuffle_mask, *, dtype=None, mask=None, **kwargs):
    """Within each 32-partition quadrant, partition i of dst receives partition shuffle_mask[i]
    of src (255: dst keeps it); the same 32-entry mask serves every quadrant."""
    shuffle = [int(m) for m in shuffle_mask]
    core.assert_elements_per_partition(dst, "dst", *[int(np.prod(src.shape[1:]))] * 2)
    if len(shuffle) != 32:
        core.raise_unexpected_operand("shuffle_mask", f"{len(shuffle)} entries; it names a source partition (or 255) "
                                      "for each of the 32 partitions of a quadrant")
    # The engine reads every source partition before writing: an in-place shuffle
    # (src and dst the same tile) must not see its own writes.
    src = core.elementwise("bypass", (src,), None, None)
    rows = max(src.shape[0], dst.shape[0])
    for base in range(0, rows, 32):
        for i, s in enumerate(shuffle):
            d, s = base + i, base + s
            if shuffle[i] != 255 and d < dst.shape[0] and s < src.shape[0]:
                dst[d:d + 1] = src[s:s + 1]
