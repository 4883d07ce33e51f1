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
    return core.nc_matmul(None, stationary, moving, mask, kwargs.get("perf_mode") == "double_row_gen3",
                          bool(is_transpose), tile_position, tile_size, None)


@_api("nisa.nc_matmul_mx")
def nc_matmul_mx(dst, stationary, moving, stationary_scale, moving_scale, tile_position=None, tile_size=None,
                 name=None, **kwargs):
    """NeuronCore-v4+: dst (PSUM) += the dequantized stationary.T @ moving of two
    packed mx tiles; tile_position/tile_size place it on a row tile of the PE array."""
    core.nc_matmul_mx(dst, stationary, moving, stationary_scale, moving_scale, True, tile_position, tile_size)


@_api("nisa.quantize_mx")
def quantize_mx(dst, src, dst_scale, name=None, **kwargs):
    """NeuronCore-v4+: src (bf16/fp16) -> packed fp8 x4 dst and its E8M0 block scales."""
    core.quantize_mx(dst, src, dst_scale)


@_api("nisa.nc_transpose")
def nc_transpose(data, *, mask=None, dtype=None, engine=engine.unknown, **kwargs):
    return core.nc_transpose(None, data, mask, _dtype_arg(dtype), _engine_id(engine))


@_api("nisa.tensor_reduce")
def tensor_reduce(op, data, axis, *, mask=None, dtype=None, negate=False, keepdims=False, **kwargs):
    axes = [int(a) for a in axis] if isinstance(axis, (tuple, list)) else [int(axis)]
    return core.reduce(None, "nisa.tensor_reduce", op_name(op), data, axes, bool(keepdims), bool(negate), mask,
                       _dtype_arg(dtype))


@_api("nisa.tensor_tensor")
def tensor_tensor(data1, data2, op, *, dtype=None, mask=None, engine=engine.unknown, **kwargs):
    return core.tensor_tensor(None, data1, data2, op_name(op), mask, _dtype_arg(dtype), _engine_id(engine))


def _step(op, operand, reverse=False):
    """One ALU stage of an ISA instruction as the builders take it: (op, operand, reverse)."""
    return (op, operand, bool(reverse))


def _engine_id(engine):
    return int(engine) if isinstance(engine, enum.IntEnum) else 0


@_api("nisa.tensor_scalar")
def tensor_scalar(data, op0, operand0, reverse0=False, op1=None, operand1=None, reverse1=False, *, dtype=None,
                  mask=None, engine=engine.unknown, **kwargs):
    steps = [_step(op_name(op0, "op0"), operand0, reverse0)]
    if op1 is not None:
        steps.append(_step(op_name(op1), operand1, reverse1))
    return core.tensor_scalar(None, data, steps, None, None, 0, mask, _dtype_arg(dtype), _engine_id(engine))


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


@_api("nisa.activation")
def activation(op, data, *, bias=None, scale=1.0, reduce_op=None, reduce_res=None, reduce_cmd=reduce_cmd.idle,
               mask=None, dtype=None, **kwargs):
    return core.activation(None, op_name(op), data, bias, scale, op_name(reduce_op, None), reduce_res, int(reduce_cmd), mask,
                           _dtype_arg(dtype))


@_api("nisa.activation_reduce")
def activation_reduce(op, data, *, reduce_op, reduce_res, bias=None, scale=1.0, mask=None, dtype=None, **kwargs):
    return core.activation(None, op_name(op), data, bias, scale, op_name(reduce_op, None), reduce_res,
                           int(reduce_cmd.reset_reduce), mask, _dtype_arg(dtype))


@_api("nisa.tensor_scalar_reduce")
def tensor_scalar_reduce(*, data, op0, operand0, reduce_op, reduce_res, reverse0=False, dtype=None, mask=None,
                         **kwargs):
    return core.tensor_scalar(None, data, [_step(op_name(op0, "op0"), operand0, reverse0)], op_name(reduce_op, "reduce_op"),
                              reduce_res, int(reduce_cmd.reset_reduce), mask, _dtype_arg(dtype), 0)


@_api("nisa.scalar_tensor_tensor")
def scalar_tensor_tensor(*, data, op0, operand0, op1, operand1, reverse0=False, reverse1=False, dtype=None,
                         mask=None, **kwargs):
    first, second = op_name(op0, "op0"), op_name(op1, "op1")
    return core.scalar_tensor_tensor(None, data, first, operand0, bool(reverse0), second, operand1, bool(reverse1), mask,
                                     _dtype_arg(dtype))


@_api("nisa.tensor_copy_predicated")
def tensor_copy_predicated(*, src, dst, predicate, mask=None, dtype=None, reverse_pred=False, **kwargs):
    """dst = src (a tile or a number) where predicate is nonzero (zero with reverse_pred); the
    copy lands in dst's dtype."""
    core.tensor_copy_predicated(dst, src, predicate, bool(reverse_pred), mask)


@_api("nisa.tensor_partition_reduce")
def tensor_partition_reduce(op, data, *, mask=None, dtype=None, **kwargs):
    return core.partition_reduce(None, op_name(op), data, mask, _dtype_arg(dtype))


def _check_dge(mode):
    if mode == dge_mode.hwdge:
        core.check_hwdge()


@_api("nisa.dma_copy")
def dma_copy(*, dst, src, mask=None, dst_rmw_op=None, oob_mode=oob_mode.error, dge_mode=dge_mode.unknown,
             **kwargs):
    _check_dge(dge_mode)
    core.dma_copy(dst, src, mask, op_name(dst_rmw_op, None), int(oob_mode) == 1)  # 1: oob_mode.skip (the arg shadows the enum)


@_api("nisa.dma_transpose")
def dma_transpose(src, *, axes=None, mask=None, dtype=None, dge_mode=dge_mode.unknown, **kwargs):
    _check_dge(dge_mode)
    return core.load_transpose2d(None, src, mask, _dtype_arg(dtype), None, False)


@_api("nisa.tensor_copy")
def tensor_copy(src, *, mask=None, dtype=None, engine=engine.unknown, **kwargs):
    return core.tensor_copy(None, src, mask, _dtype_arg(dtype), _engine_id(engine))


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
    return core.reciprocal(None, data, mask, _dtype_arg(dtype))


@_api("nisa.memset")
def memset(shape, value, dtype, *, mask=None, engine=engine.unknown, **kwargs):
    return core.memset(None, language._shape(shape), float(value), _dtypes.dtype_name(dtype))


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
    return core.bn_stats(None, data, mask, _dtype_arg(dtype))


@_api("nisa.bn_aggr")
def bn_aggr(data, *, mask=None, dtype=None, **kwargs):
    """Combines bn_stats groups ([count, mean, variance * count] triples along
    the free dim) into [mean, variance] per partition (Chan's parallel formula)."""
    return core.bn_aggr(None, data, mask, _dtype_arg(dtype))


@_api("nisa.tensor_tensor_scan")
def tensor_tensor_scan(data0, data1, initial, op0, op1, reverse0=False, reverse1=False, *, dtype=None, mask=None,
                       **kwargs):
    """Per partition, along the free elements: r[:, i] = op1(op0(data0[:, i], r[:, i-1]), data1[:, i])
    with r[:, -1] = initial; kept in fp32 and rounded once into the result. One column step
    per free element, as the engine walks them; `mask` (over the whole tile) applies to the
    result, and a column's value only flows into later columns."""
    return core.tensor_tensor_scan(None, data0, data1, initial, op_name(op0, "op0"), op_name(op1, "op1"), bool(reverse0),
                                   bool(reverse1), mask, _dtype_arg(dtype))


@_api("nisa.sequence_bounds")
def sequence_bounds(*, segment_ids, dtype=None, **kwargs):
    """(P, 2, n): for each element, the start and the end (exclusive) of the run of equal
    segment ids holding it; padding (id 0) gets start n and end -1."""
    return core.sequence_bounds(None, segment_ids, _dtype_arg(dtype))


@_api("nisa.dropout")
def dropout(data, prob, *, mask=None, dtype=None, **kwargs):
    """Zeroes each element with probability `prob` (a scalar or a [P, 1] tile)."""
    return core.dropout(None, data, prob, mask, _dtype_arg(dtype))


@_api("nisa.select_reduce")
def select_reduce(*, dst, predicate, on_true, on_false, reduce_res=None, reduce_cmd=reduce_cmd.idle,
                  reduce_op=np.amax, reverse_pred=False, mask=None, dtype=None, **kwargs):
    core.select_reduce(dst, predicate, on_true, on_false, bool(reverse_pred), op_name(reduce_op, None), reduce_res,
                       int(reduce_cmd), mask)
    return dst


@_api("nisa.range_select")
def range_select(*, on_true_tile, comp_op0, comp_op1, bound0, bound1, reduce_cmd=reduce_cmd.idle, reduce_res=None,
                 reduce_op=np.amax, range_start=0, on_false_value=language.fp32.min, mask=None, dtype=None,
                 **kwargs):
    """Keeps on_true_tile[p, i] where comp_op0(range_start + i, bound0[p]) and
    comp_op1(range_start + i, bound1[p]) hold (index i over the flattened free elements)."""
    return core.range_select(None, on_true_tile, op_name(comp_op0, "comp_op0"), op_name(comp_op1, "comp_op1"), bound0, bound1,
                             op_name(reduce_op, None), reduce_res, int(reduce_cmd), int(range_start), on_false_value,
                             mask, _dtype_arg(dtype))


@_api("nisa.max8")
def max8(*, src, mask=None, dtype=None, **kwargs):
    """The 8 largest values per partition, descending (repeated values repeat)."""
    return core.max8(None, src, mask, _dtype_arg(dtype))


@_api("nisa.nc_find_index8")
def nc_find_index8(*, data, vals, mask=None, dtype=None, **kwargs):
    """Per partition, the position of each of the 8 `vals` in `data` (equal values: successive
    occurrences; absent values: all ones)."""
    return core.find_index8(None, data, vals, mask, _dtype_arg(dtype))


@_api("nisa.nc_match_replace8")
def nc_match_replace8(*, data, vals, imm, dst_idx=None, mask=None, dtype=None, **kwargs):
    """`data` with the first occurrence of each of the 8 `vals` replaced by `imm` (the engine
    walks vals from the last to the first: of equal vals, the last takes the first occurrence,
    as the Neuron SDK documents); the positions go to `dst_idx` when given."""
    return core.match_replace8(None, data, vals, float(imm), dst_idx, mask, _dtype_arg(dtype))


@_api("nisa.local_gather")
def local_gather(src_buffer, index, num_elem_per_idx=1, num_valid_indices=None, *, mask=None, **kwargs):
    """Per 16-partition GpSimd core: the core's uint16 indices, flattened partition-first,
    each gather num_elem_per_idx elements of every partition's flattened free dims."""
    return core.local_gather(None, src_buffer, index, int(num_elem_per_idx),
                             None if num_valid_indices is None else int(num_valid_indices), mask)


@_api("nisa.nc_stream_shuffle")
def nc_stream_shuffle(src, dst, shuffle_mask, *, dtype=None, mask=None, **kwargs):
    """Within each 32-partition quadrant, partition i of dst receives partition shuffle_mask[i]
    of src (255: dst keeps it); the same 32-entry mask serves every quadrant."""
    core.nc_stream_shuffle(src, dst, [int(m) for m in shuffle_mask])
