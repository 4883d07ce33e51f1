"""nki.isa (nisa): the instruction-level surface."""
import enum

from ._core import core
from . import _dtypes, language
from ._ops import op_name
from .language import _api


class nc_version(enum.IntEnum):
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
    return core.nc_matmul(stationary, moving, mask)


@_api("nisa.nc_transpose")
def nc_transpose(data, *, mask=None, dtype=None, engine=engine.unknown, **kwargs):
    return core.transpose("nisa.nc_transpose", data, mask, _dtype_arg(dtype))


@_api("nisa.tensor_reduce")
def tensor_reduce(op, data, axis, *, mask=None, dtype=None, negate=False, keepdims=False, **kwargs):
    axes = [int(a) for a in axis] if isinstance(axis, (tuple, list)) else [int(axis)]
    return core.reduce("nisa.tensor_reduce", op_name(op), data, axes, bool(keepdims), bool(negate), mask,
                       _dtype_arg(dtype))


@_api("nisa.tensor_tensor")
def tensor_tensor(data1, data2, op, *, dtype=None, mask=None, engine=engine.unknown, **kwargs):
    return core.elementwise(op_name(op), (data1, data2), mask, _dtype_arg(dtype))


@_api("nisa.tensor_scalar")
def tensor_scalar(data, op0, operand0, reverse0=False, op1=None, operand1=None, reverse1=False, *, dtype=None,
                  mask=None, engine=engine.unknown, **kwargs):
    out = core.elementwise(op_name(op0), (operand0, data) if reverse0 else (data, operand0), mask,
                           None if op1 is not None else _dtype_arg(dtype))
    if op1 is not None:
        out = core.elementwise(op_name(op1), (operand1, out) if reverse1 else (out, operand1), mask, _dtype_arg(dtype))
    return out


@_api("nisa.activation")
def activation(op, data, *, bias=None, scale=1.0, reduce_op=None, reduce_res=None, reduce_cmd=None, mask=None,
               dtype=None, **kwargs):
    x = data
    if not (isinstance(scale, (int, float)) and scale == 1.0):
        x = core.elementwise("multiply", (x, scale), mask, "float32")
    if bias is not None:
        x = core.elementwise("add", (x, bias), mask, "float32")
    return core.elementwise(op_name(op), (x,), mask, _dtype_arg(dtype) or core.tensor_info(data)[1])


@_api("nisa.tensor_copy")
def tensor_copy(src, *, mask=None, dtype=None, engine=engine.unknown, **kwargs):
    return core.elementwise("bypass", (src,), mask, _dtype_arg(dtype))


@_api("nisa.reciprocal")
def reciprocal(data, *, dtype=None, mask=None, **kwargs):
    return core.elementwise("reciprocal", (data,), mask, _dtype_arg(dtype))


@_api("nisa.memset")
def memset(shape, value, dtype, *, mask=None, engine=engine.unknown, **kwargs):
    return core.full([int(d) for d in shape], float(value), _dtypes.dtype_name(dtype), "sbuf", "", "nisa.memset")


@_api("nisa.iota")
def iota(expr, dtype, *, mask=None, **kwargs):
    return core.iota(expr, _dtypes.dtype_name(dtype), mask)


@_api("nisa.affine_select")
def affine_select(pred, on_true_tile, on_false_value, *, mask=None, dtype=None, **kwargs):
    return core.affine_select(pred, on_true_tile, float(on_false_value), mask, _dtype_arg(dtype))


class fp32:
    """nisa.fp32.min: the most negative finite fp32."""
    min = language.fp32.min
