"""nki.isa (nisa) of NKI 0.3-0.6: every instruction in destination-passing style. Each call
hands its dst to the instruction's builder (the one the legacy surface shares, which there
makes a fresh tile), so its instruction writes dst itself: signatures and defaults only."""
import enum
import types

import numpy as np

from nkic._core import core
from nkic import _dtypes
from nkic._ops import op_name
from . import language as nl
from . import _lnc, _schedule
from ._api import api as _api, enum_arg, unavailable as _unavailable


class engine(enum.IntEnum):
    unknown = 0
    tensor = 1
    scalar = 2
    gpsimd = 3
    dma = 4
    vector = 5
    sync = 6


unknown_engine, tensor_engine, scalar_engine = engine.unknown, engine.tensor, engine.scalar
gpsimd_engine, vector_engine = engine.gpsimd, engine.vector


class reduce_cmd(enum.IntEnum):
    idle = 0
    reset = 1
    reduce = 2
    reset_reduce = 3
    load_reduce = 4


class dge_mode(enum.IntEnum):
    """Renumbered in nki 0.3 (neuronxcc: none=0, unknown=3)."""
    unknown = 0
    swdge = 1
    hwdge = 2
    none = 3


class oob_mode(enum.IntEnum):
    error = 0
    skip = 1


class matmul_perf_mode(str, enum.Enum):
    none = "none"
    double_row = "double_row"


class nc_version(enum.IntEnum):
    gen2 = 2
    gen3 = 3
    gen4 = 4


class dma_engine(enum.IntEnum):
    dma = 1
    gpsimd_dma = 2


# The diagnostics a current kernel's trace raises derive from it (and from nkic.NKIError).
NkiValidationError = core.NkiValidationError
NkiInstruction = _schedule.NkiInstruction


constants = types.ModuleType(__name__ + ".constants")
for _enum in (oob_mode, dge_mode, engine, reduce_cmd, matmul_perf_mode, nc_version, dma_engine):
    setattr(constants, _enum.__name__, _enum)

fp32 = nl.fp32


def _engine(value):
    return int(enum_arg(value, engine, "engine"))


# The enums under names their calls' parameters do not shadow.
_ENGINE, _OOB, _DGE, _CMD = engine, oob_mode, dge_mode, reduce_cmd


def _cmd(value):
    return int(enum_arg(value, reduce_cmd, "reduce_cmd"))


@_api("nisa.get_nc_version")
def get_nc_version():
    """The NeuronCore version of the target traced for (nc_version.gen2 / gen3 / gen4)."""
    return nc_version(core.nc_version())


@_api("nisa.get_nc_sub_version")
def get_nc_sub_version():
    """The NeuronCore sub-version; 0 on every target nkic models."""
    return 0


# Tensor Engine.
@_api("nisa.nc_matmul")
def nc_matmul(dst, stationary, moving, is_stationary_onezero=False, is_moving_onezero=False, is_transpose=False,
              accumulate=None, tile_position=(), tile_size=(), perf_mode=matmul_perf_mode.none, name=None):
    """Tensor Engine: dst (PSUM) = stationary.T @ moving, contracting over the partition
    dimension. accumulate=False overwrites, True adds to dst, None infers (a location's first
    write overwrites). tile_position/tile_size place it on a tile of the PE array (tiling mode)."""
    core.nc_matmul(dst, stationary, moving, None, perf_mode == matmul_perf_mode.double_row, bool(is_transpose),
                   tile_position, tile_size, accumulate)


@_api("nisa.nc_matmul_mx")
def nc_matmul_mx(dst, stationary, moving, stationary_scale, moving_scale, tile_position=None, tile_size=None,
                 accumulate=None, name=None):
    """Tensor Engine, NeuronCore-v4+: dst (PSUM) = the dequantized stationary.T @ moving of two
    packed microscaling tiles and their E8M0 scales; accumulate as nc_matmul's.
    tile_position/tile_size place it on a row tile of the PE array (tiling mode, rows only)."""
    core.nc_matmul_mx(dst, stationary, moving, stationary_scale, moving_scale, accumulate, tile_position, tile_size)


@_api("nisa.nc_transpose")
def nc_transpose(dst, data, engine=engine.unknown, name=None):
    """dst = data transposed (partition and free dimension swapped): on the Tensor Engine
    (into PSUM) or on the Vector Engine, 32 x 32 blocks at a time."""
    core.nc_transpose(dst, data, None, None, _engine(engine))


# Scalar Engine.
@_api("nisa.activation")
def activation(dst, op, data, bias=None, scale=1.0, reduce_op=None, reduce_res=None, reduce_cmd=reduce_cmd.idle,
               name=None):
    """Scalar Engine: dst = op(data * scale + bias), bias a [P, 1] tile or number; reduce_cmd
    resets or adds to the engine's accumulator the free-axis sum of the result, read out into
    reduce_res when given."""
    core.activation(dst, op_name(op), data, bias, scale, op_name(reduce_op, None), reduce_res, _cmd(reduce_cmd), None,
                    None)


@_api("nisa.activation_reduce")
def activation_reduce(dst, op, data, reduce_op, reduce_res, bias=None, scale=1.0, name=None):
    """Scalar Engine: dst = op(data * scale + bias) and reduce_res = each row of it reduced
    with reduce_op along the free dimension."""
    core.activation(dst, op_name(op), data, bias, scale, op_name(reduce_op, None), reduce_res,
                    int(globals()["reduce_cmd"].reset_reduce), None, None)


@_api("nisa.activate2")
def activate2(dst, op, data, imm0, imm1, op0, op1, relu_param=0.0, reverse0=False, reverse1=False, reduce_op=None,
              reduce_res=None, reduce_cmd=reduce_cmd.idle, name=None):
    """Scalar Engine, NeuronCore-v4+: v = (data op0 imm0) op1 imm1 (reverse0/reverse1 swap a
    step's operands), dst = op(v, relu_param), optionally accumulating with reduce_op into
    reduce_res. New in nki 0.4."""
    core.activate2(dst, op_name(op), data, imm0, imm1, op_name(op0, "op0"), op_name(op1, "op1"), relu_param,
                   bool(reverse0), bool(reverse1), op_name(reduce_op, None) or "add", reduce_res, _cmd(reduce_cmd))


# Vector Engine.
@_api("nisa.exponential")
def exponential(dst, src, max_value=0.0, reduce_res=None, reduce_cmd=reduce_cmd.idle, reduce_init=0.0, name=None):
    """Vector Engine, NeuronCore-v4+: dst = exp(src - max_value), optionally summing each row
    into reduce_res (starting from reduce_init). New in nki 0.3."""
    core.exponential(dst, src, max_value, reduce_res, _cmd(reduce_cmd), reduce_init)


@_api("nisa.tensor_scalar_cumulative")
def tensor_scalar_cumulative(dst, src, op0, op1, imm0, imm1=None, reduce_cmd=reduce_cmd.reset_reduce, name=None):
    """Vector Engine scan: per element acc = op1(src[i] op0 imm0, acc), dst[i] = acc; reduce_cmd
    starts acc at op1's identity (reset_reduce), keeps it (reduce) or loads imm1 (load_reduce)."""
    core.tensor_scalar_cumulative(dst, src, op_name(op0, "op0"), op_name(op1, "op1"), imm0, imm1, _cmd(reduce_cmd))


@_api("nisa.tensor_tensor")
def tensor_tensor(dst, data1, data2, op, engine=engine.unknown, name=None):
    """dst = data1 op data2, element by element (op an nl arithmetic, comparison or bitwise op),
    on the Vector or GpSimd engine."""
    core.tensor_tensor(dst, data1, data2, op_name(op), None, None, engine if type(engine) is _ENGINE else _engine(engine))


tensor_tensor.nki_native = "tensor_tensor"  # the dispatcher runs its plain calls in the core (native_calls.h)


@_api("nisa.tensor_scalar")
def tensor_scalar(dst, data, op0, operand0, reverse0=False, op1=None, operand1=None, reverse1=False,
                  engine=engine.unknown, name=None):
    """dst = (data op0 operand0) op1 operand1, each operand a number or a [P, 1] tile broadcast
    along the free dimension; reverse0/reverse1 swap a step's operands."""
    steps = [(op_name(op0, "op0"), operand0, bool(reverse0))]
    if op1 is not None:
        steps.append((op_name(op1), operand1, bool(reverse1)))
    core.tensor_scalar(dst, data, steps, None, None, 0, None, None, _engine(engine))


@_api("nisa.scalar_tensor_tensor")
def scalar_tensor_tensor(dst, data, op0, operand0, op1, operand1, reverse0=False, reverse1=False, name=None):
    """dst = (data op0 operand0) op1 operand1: operand0 a number or a [P, 1] tile, operand1 a tile
    of data's shape."""
    core.scalar_tensor_tensor(dst, data, op_name(op0, "op0"), operand0, bool(reverse0), op_name(op1, "op1"), operand1,
                              bool(reverse1), None, None)


@_api("nisa.tensor_scalar_reduce")
def tensor_scalar_reduce(dst, data, op0, operand0, reduce_op, reduce_res=None, reverse0=False,
                         reduce_cmd=reduce_cmd.reset_reduce, reduce_init=None, reduce_res_negate=False, name=None):
    """dst = data op0 operand0, and reduce_res = each row of dst reduced with reduce_op
    (negated with reduce_res_negate)."""
    core.tensor_scalar_reduce(dst, data, op_name(op0, "op0"), operand0, bool(reverse0), op_name(reduce_op, "reduce_op"),
                              reduce_res, _cmd(reduce_cmd), reduce_init, bool(reduce_res_negate))


@_api("nisa.tensor_reduce")
def tensor_reduce(dst, op, data, axis, negate=False, keepdims=False, name=None):
    """dst = data reduced with op (nl.add, nl.maximum, ...) along the free axis or axes `axis`;
    negate negates the result, keepdims keeps the reduced axes as size 1."""
    axes = [int(a) for a in axis] if isinstance(axis, (tuple, list)) else [int(axis)]
    core.reduce(dst, "nisa.tensor_reduce", op_name(op), data, axes, bool(keepdims), bool(negate), None, None)


@_api("nisa.tensor_tensor_scan")
def tensor_tensor_scan(dst, data0, data1, initial, op0, op1, reverse0=False, reverse1=False, name=None):
    """Per partition, r[i] = (data0[i] op0 r[i - 1]) op1 data1[i] along the free dimension, with
    r[-1] = initial; dst = r."""
    core.tensor_tensor_scan(dst, data0, data1, initial, op_name(op0, "op0"), op_name(op1, "op1"), bool(reverse0),
                            bool(reverse1), None, None)


@_api("nisa.tensor_copy")
def tensor_copy(dst, src, engine=engine.unknown, name=None, dtype=None):
    """dst = src (converted to dst's dtype), on the engine `engine` selects. nki 0.2 also
    took dtype=; a given dst's dtype decides, as for every instruction given its dst."""
    if dtype is not None:
        core.check_versioned_form("nisa.tensor_copy(dtype=)")
        dtype = _dtypes.dtype_name(dtype)
    core.tensor_copy(dst, src, None, dtype, _engine(engine))


@_api("nisa.tensor_copy_predicated")
def tensor_copy_predicated(dst, src, predicate, reverse_pred=False, name=None):
    """dst = src where predicate is nonzero (zero with reverse_pred); dst keeps its values
    elsewhere."""
    core.tensor_copy_predicated(dst, src, predicate, bool(reverse_pred), None)


@_api("nisa.select_reduce")
def select_reduce(dst, predicate, on_true, on_false, reduce_res=None, reduce_cmd=reduce_cmd.idle,
                  reduce_op=nl.maximum, reverse_pred=False, name=None):
    """dst = on_true where predicate is nonzero (zero with reverse_pred), else on_false; with
    reduce_res, also reduces each row of dst with reduce_op."""
    core.select_reduce(dst, predicate, on_true, on_false, bool(reverse_pred), op_name(reduce_op, None), reduce_res,
                       _cmd(reduce_cmd), None)


@_api("nisa.range_select")
def range_select(dst, on_true_tile, comp_op0, comp_op1, bound0, bound1, reduce_cmd=reduce_cmd.reset_reduce,
                 reduce_res=None, reduce_op=nl.maximum, range_start=0, on_false_value=fp32.min, name=None):
    """NeuronCore-v3+: with i = range_start + the free index, dst = on_true_tile where
    comp_op0(i, bound0) and comp_op1(i, bound1) hold, else on_false_value; each row is reduced
    with reduce_op into reduce_res."""
    core.range_select(dst, on_true_tile, op_name(comp_op0, "comp_op0"), op_name(comp_op1, "comp_op1"), bound0, bound1,
                      op_name(reduce_op, None), reduce_res, _cmd(reduce_cmd), int(range_start), on_false_value, None,
                      None)


@_api("nisa.reciprocal")
def reciprocal(dst, data, name=None):
    """dst = 1 / data, element by element, on the Vector Engine."""
    core.reciprocal(dst, data, None, None)


@_api("nisa.memset")
def memset(dst, value, engine=engine.unknown, name=None):
    """Fills dst with value."""
    _engine(engine)
    core.memset(dst, [], value, None)


@_api("nisa.bn_stats")
def bn_stats(dst, data, name=None):
    """Vector Engine: per partition, the batch-norm statistics (count, mean, variance) of data,
    for bn_aggr."""
    core.bn_stats(dst, data, None, None)


@_api("nisa.bn_aggr")
def bn_aggr(dst, data, name=None):
    """Vector Engine: per partition, mean and variance aggregated from bn_stats results."""
    core.bn_aggr(dst, data, None, None)


@_api("nisa.max8")
def max8(dst, src, name=None):
    """Vector Engine: dst = the 8 largest values of each partition of src."""
    core.max8(dst, src, None, None)


@_api("nisa.nc_find_index8")
def nc_find_index8(dst, data, vals, name=None):
    """Vector Engine: dst = per partition, the free index of each of the 8 values in vals within
    data."""
    core.find_index8(dst, data, vals, None, None)


@_api("nisa.nc_match_replace8")
def nc_match_replace8(dst, data, vals, imm, dst_idx=None, name=None):
    """Vector Engine: dst = data with the first occurrence of each of vals' 8 values per
    partition replaced by imm; their indices into dst_idx when given."""
    core.match_replace8(dst, data, vals, float(imm), dst_idx, None, None)


@_api("nisa.nc_stream_shuffle")
def nc_stream_shuffle(dst, src, shuffle_mask, name=None):
    """Within each quadrant of 32 partitions, dst[i] = src[shuffle_mask[i]] (255 keeps dst[i])."""
    core.nc_stream_shuffle(src, dst, [int(m) for m in shuffle_mask])


@_api("nisa.dropout")
def dropout(dst, data, prob, name=None):
    """dst = data with each element zeroed with probability prob (no rescaling)."""
    core.dropout(dst, data, prob, None, None)


# The engines' random number generators.
@_api("nisa.rng")
def rng(dst, engine=engine.vector, name=None):
    """Fills the integer dst with 32 random bits from the engine's generator, truncated to its width."""
    core.rng(dst, _engine(engine))


@_api("nisa.rand2")
def rand2(dst, min, max, name=None):
    """NeuronCore-v4+: fills dst with uniform random values in [min, max]."""
    core.rand2(dst, min, max)


@_api("nisa.set_rng_seed")
def set_rng_seed(src_seeds, name=None):
    """Seeds the random number generator from the src_seeds tile."""
    core.set_rng_seed(src_seeds)


@_api("nisa.rand_set_state")
def rand_set_state(src_seeds, engine=engine.gpsimd, name=None):
    """NeuronCore-v3+: sets the engine's random generator state from src_seeds."""
    core.rand_set_state(src_seeds, _engine(engine))


@_api("nisa.rand_get_state")
def rand_get_state(dst, engine=engine.gpsimd, name=None):
    """NeuronCore-v3+: writes the engine's random generator state into dst."""
    core.rand_get_state(dst, _engine(engine))


# GpSimd Engine.
def _pattern(pattern):
    """The [step, count] pairs of an access pattern, as integers."""
    return [(core.int_arg(p[0], "step"), core.int_arg(p[1], "count")) for p in pattern]


@_api("nisa.iota")
def iota(dst, pattern, offset=0, channel_multiplier=0, name=None):
    """dst = offset + channel_multiplier * partition + the affine free index `pattern`
    ([step, count] pairs) describes."""
    core.iota_pattern(dst, _pattern(pattern), offset, channel_multiplier)


@_api("nisa.affine_select")
def affine_select(dst, pattern, channel_multiplier, on_true_tile, on_false_value, cmp_op=nl.equal, offset=0,
                  name=None):
    """dst = on_true_tile where (offset + channel_multiplier * partition + pattern's free
    index) cmp_op 0 holds, else on_false_value."""
    core.affine_select_pattern(dst, _pattern(pattern), channel_multiplier, on_true_tile, float(on_false_value),
                               op_name(cmp_op, "cmp_op"), offset)


@_api("nisa.tensor_partition_reduce")
def tensor_partition_reduce(dst, op, data, name=None):
    """dst = data reduced with op across its partitions (one partition of results)."""
    core.partition_reduce(dst, op_name(op), data, None, None)


@_api("nisa.sequence_bounds")
def sequence_bounds(dst, segment_ids, name=None):
    """dst (1, 2, n) = the [start, end] of each element's segment in segment_ids (1, n); id 0
    (padding) gives (n, -1)."""
    core.sequence_bounds(dst, segment_ids, None)


@_api("nisa.nonzero_with_count")
def nonzero_with_count(dst, src, index_offset=0, padding_val=-1, name=None):
    """NeuronCore-v3+: on partitions 0, 16, ..., 112, dst = the indices (plus index_offset) of
    src's nonzero elements, then padding_val, then their count."""
    core.nonzero_with_count(dst, src, index_offset, padding_val)


@_api("nisa.topk")
def topk(val_dst, idx_dst, src, n, name=None):
    """val_dst = the K largest (K its free size) of the first n values of src, ascending, and
    idx_dst their indices. New in nki 0.6."""
    core.topk(val_dst, idx_dst, src, n)


@_api("nisa.local_gather")
def local_gather(dst, src_buffer, index, num_elem_per_idx=1, num_valid_indices=None, name=None):
    """GpSimd Engine: within each group of partitions a GpSimd core serves, dst = the elements
    of src_buffer that `index` names (num_elem_per_idx each)."""
    core.local_gather(dst, src_buffer, index, int(num_elem_per_idx),
                      None if num_valid_indices is None else int(num_valid_indices), None)


@_api("nisa.nc_n_gather")
def nc_n_gather(dst, data, indices, name=None):
    """dst[p, j] = data[p, indices[p, j]] over data's flattened free dimensions."""
    core.gather_flattened(dst, data, indices, None, None, "nisa.nc_n_gather")


@_api("nisa.quantize_mx")
def quantize_mx(dst, src, dst_scale, name=None):
    """NeuronCore-v4+: dst = src (bf16/fp16) quantized to packed fp8 x4, with its E8M0 block
    scales in dst_scale."""
    core.quantize_mx(dst, src, dst_scale)


# DMA.
def _priority(priority, api):
    return None if priority is None else core.int_arg(priority, "priority", api)


@_api("nisa.dma_copy")
def dma_copy(dst, src, priority=None, oob_mode=oob_mode.error, dge_mode=dge_mode.unknown, engine=engine.unknown,
             name=None):
    """DMA: dst = src between HBM, SBUF and PSUM (converting dtypes); oob_mode.skip drops the
    elements an indirect access puts out of bounds; dge_mode.hwdge needs NeuronCore-v3+."""
    # The enum defaults pass without a call; anything else is checked (enum_arg).
    oob = oob_mode if type(oob_mode) is _OOB else enum_arg(oob_mode, _OOB, "oob_mode")
    dge = dge_mode if type(dge_mode) is _DGE else enum_arg(dge_mode, _DGE, "dge_mode", ints=True)
    if type(engine) is not _ENGINE:
        _engine(engine)
    core.dma_copy(dst, src, None, None, oob == _OOB.skip, dge == _DGE.hwdge,
                  None if priority is None else _priority(priority, "nisa.dma_copy"))


dma_copy.nki_native = "dma_copy"


@_api("nisa.dma_transpose")
def dma_transpose(dst, src, axes=None, priority=None, dge_mode=dge_mode.unknown, oob_mode=oob_mode.error,
                  name=None):
    """DMA: dst = src permuted by axes, (1, 0), (2, 1, 0) or (3, 1, 2, 0) for a 2-, 3- or 4-D
    src (the transpose done by the DMA engines)."""
    dge = enum_arg(dge_mode, globals()["dge_mode"], "dge_mode", ints=True)
    skip = enum_arg(oob_mode, globals()["oob_mode"], "oob_mode") == globals()["oob_mode"].skip
    if axes is not None:
        axes = [core.int_arg(a, "axes", "nisa.dma_transpose")
                for a in (axes if isinstance(axes, (tuple, list)) else (axes,))]
    core.load_transpose2d(dst, src, None, None, axes, skip, dge == _DGE.hwdge, _priority(priority, "nisa.dma_transpose"))


@_api("nisa.dma_compute")
def dma_compute(dst, srcs, reduce_op, scales=None, unique_indices=True, oob_mode=oob_mode.error, name=None):
    """dst = the sum of srcs (§13 #25, the stub's reading): one source is a copy; the
    read-modify-write form lists dst among two sources (dst += src)."""
    skip = enum_arg(oob_mode, globals()["oob_mode"], "oob_mode") == globals()["oob_mode"].skip
    core.dma_compute(dst, list(srcs), op_name(reduce_op, "reduce_op"), [] if scales is None else list(scales),
                     bool(unique_indices), skip)


@_api("nisa.core_barrier")
def core_barrier(data, cores, engine=engine.gpsimd, name=None):
    """kernel[n]: every core's instructions before it run before any core's after it (_lnc).
    One core has nothing to wait for. Deprecated since nki 0.8: nki.lnc.core_barrier."""
    _engine(engine)
    cores = [core.int_arg(c, "cores", "nisa.core_barrier") for c in (cores if isinstance(cores, (tuple, list)) else (cores,))]
    core.core_barrier(data, cores)


@_api("nisa.sendrecv")
def sendrecv(src, dst, send_to_rank, recv_from_rank, pipe_id, dma_engine=dma_engine.dma, name=None):
    """kernel[n]: core c's src lands in core send_to_rank's dst once every core has reached the
    call (one DMA per core, between the cores' segments). Deprecated since nki 0.8 (pipe_id is
    ignored): nki.lnc.sendrecv."""
    enum_arg(dma_engine, globals()["dma_engine"], "dma_engine")
    core.sendrecv(src, dst, core.int_arg(send_to_rank, "send_to_rank", "nisa.sendrecv"),
                  core.int_arg(recv_from_rank, "recv_from_rank", "nisa.sendrecv"))


@_api("nisa.sendrecv_compute")
def sendrecv_compute(src, dst, send_to_rank, recv_from_rank, reduce_op, name=None):
    """NKI 0.7, kernel[n]: each core's dst = reduce_op(its own src, the src core recv_from_rank
    sends), reduced by the DMA engine (nl.add, nl.maximum or nl.minimum) once every core has
    reached the call. Deprecated since nki 0.8: nki.lnc.sendrecv_compute."""
    core.sendrecv_compute(src, dst, core.int_arg(send_to_rank, "send_to_rank", "nisa.sendrecv_compute"),
                          core.int_arg(recv_from_rank, "recv_from_rank", "nisa.sendrecv_compute"),
                          op_name(reduce_op, "reduce_op"))

# Removed in 0.4 (NKI_CURRENT_API.md §12): a call says what replaces it.
_DYNAMIC_COPY = "was removed in nki 0.4: nisa.tensor_copy(dst, src.ap(pattern, offset, scalar_offset=reg))"
tensor_copy_dynamic_src = _unavailable("nisa.tensor_copy_dynamic_src", _DYNAMIC_COPY)
tensor_copy_dynamic_dst = _unavailable("nisa.tensor_copy_dynamic_dst", _DYNAMIC_COPY)

from ._registers import VirtualRegister, register_alloc, register_load, register_move, register_store  # noqa: E402,F401
from ._scalars import NkiScalar, scalar_alu, scalar_load, scalar_store  # noqa: E402,F401
