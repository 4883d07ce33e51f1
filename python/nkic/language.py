"""nki.language (nl): the NKI language surface. Every API carries the nki_func
marker, so the tracer's dispatcher treats a call as an op builder."""
import numpy as np

from ._core import core
from . import _dtypes
from ._dtypes import (bfloat16, bool_, float8_e4m3, float8_e5m2, float16, float32, int8, int16,  # noqa: F401
                      int32, tfloat32, uint8, uint16, uint32)
from ._loops import affine_range, sequential_range, static_range  # noqa: F401


def _api(name):
    def mark(fn):
        fn.nki_func = name
        return fn
    return mark


for _it in (affine_range, sequential_range, static_range):
    _it.nki_func = "nl." + _it.__name__


class _Buffer:
    """A memory kind (nl.sbuf, nl.psum, nl.shared_hbm, ...)."""
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"nl.{self.name}"


sbuf = _Buffer("sbuf")
psum = _Buffer("psum")
shared_hbm = _Buffer("shared_hbm")
private_hbm = _Buffer("private_hbm")
hbm = private_hbm
_BUFFERS = {b.name: b for b in (sbuf, psum, shared_hbm, private_hbm)}


def _buffer_name(buffer):
    if buffer is None:
        return "sbuf"
    if isinstance(buffer, _Buffer):
        return buffer.name
    raise TypeError(f"buffer= expects nl.sbuf, nl.psum, nl.hbm, nl.private_hbm or nl.shared_hbm, got {buffer!r}")


def _shape(shape):
    if isinstance(shape, (int, np.integer)):
        return [int(shape)]
    return [int(d) for d in shape]


class nc:
    """nl.nc(n): a launch-grid dimension spread over n physical NeuronCores."""

    def __init__(self, n):
        self.size = int(n)
        self.physical_cores = int(n)

    def __mul__(self, other):
        return spmd_dim(self, other)

    __rmul__ = lambda self, other: spmd_dim(other, self)  # noqa: E731

    def __repr__(self):
        return f"nl.nc({self.size})"


class spmd_dim:
    """nl.spmd_dim(*dims): one grid dimension composed of sub-dimensions."""

    def __init__(self, *dims):
        self.dims = dims
        self.size = 1
        self.physical_cores = 1
        for d in dims:
            self.size *= int(getattr(d, "size", d))
            self.physical_cores *= int(getattr(d, "physical_cores", 1))

    def __repr__(self):
        return f"nl.spmd_dim{self.dims}"


class tile_size:
    pmax = 128
    psum_fmax = 512
    gemm_stationary_fmax = 128
    gemm_moving_fmax = 512
    bn_stats_fmax = 512
    psum_min_align = 4
    sbuf_min_align = 1
    total_available_sbuf_size = 212984


def par_dim(n):
    """Marks the partition dimension in a shape; the leading dim is the default."""
    return int(n)


@_api("nl.ndarray")
def ndarray(shape, dtype, *, buffer=None, name="", **kwargs):
    return core.ndarray(_shape(shape), _dtypes.dtype_name(dtype), _buffer_name(buffer), name)


@_api("nl.full")
def full(shape, fill_value, dtype, *, buffer=None, name="", **kwargs):
    return core.full(_shape(shape), float(fill_value), _dtypes.dtype_name(dtype), _buffer_name(buffer), name, "nl.full")


@_api("nl.zeros")
def zeros(shape, dtype, *, buffer=None, name="", **kwargs):
    return core.full(_shape(shape), 0.0, _dtypes.dtype_name(dtype), _buffer_name(buffer), name, "nl.zeros")


@_api("nl.ones")
def ones(shape, dtype, *, buffer=None, name="", **kwargs):
    return core.full(_shape(shape), 1.0, _dtypes.dtype_name(dtype), _buffer_name(buffer), name, "nl.ones")


@_api("nl.load")
def load(src, *, mask=None, dtype=None, **kwargs):
    return core.load(src, mask, None if dtype is None else _dtypes.dtype_name(dtype))


@_api("nl.store")
def store(dst, value, *, mask=None, **kwargs):
    core.store(dst, value, mask)


@_api("nl.arange")
def arange(*args):
    if len(args) == 1:
        return core.arange(0, int(args[0]))
    return core.arange(int(args[0]), int(args[1]))


class ds:
    """nl.ds(start, size): the slice start:start+size; start may be symbolic."""
    __slots__ = ("start", "size")
    _nki_ds = True

    def __init__(self, start, size):
        self.start = start
        self.size = int(size)


@_api("nl.program_id")
def program_id(axis):
    return core.program_id(int(axis))


@_api("nl.num_programs")
def num_programs(axes=None):
    if axes is None:
        return core.num_programs(None)
    if isinstance(axes, (tuple, list)):
        n = 1
        for a in axes:
            n *= core.num_programs(int(a))
        return n
    return core.num_programs(int(axes))


@_api("nl.program_ndim")
def program_ndim():
    return core.program_ndim()


def _elementwise(op, *operands, mask=None, dtype=None):
    return core.elementwise(op, operands, mask, None if dtype is None else _dtypes.dtype_name(dtype))


def _unary(name, op=None):
    def fn(x, *, dtype=None, mask=None, **kwargs):
        return _elementwise(op or name, x, mask=mask, dtype=dtype)
    fn.__name__ = fn.__qualname__ = name
    fn.nki_func = "nl." + name
    return fn


def _binary(name, op=None):
    def fn(x, y, *, dtype=None, mask=None, **kwargs):
        return _elementwise(op or name, x, y, mask=mask, dtype=dtype)
    fn.__name__ = fn.__qualname__ = name
    fn.nki_func = "nl." + name
    return fn


_UNARY = ["abs", "negative", "sign", "trunc", "floor", "ceil", "exp", "log", "sin", "cos", "tan", "tanh",
          "arctan", "sqrt", "rsqrt", "reciprocal", "square", "sigmoid", "relu", "gelu", "gelu_dx",
          "gelu_apprx_tanh", "gelu_apprx_sigmoid", "silu", "silu_dx", "erf", "erf_dx", "softplus", "mish",
          "invert"]
_BINARY = ["add", "subtract", "multiply", "divide", "power", "maximum", "minimum", "bitwise_and",
           "bitwise_or", "bitwise_xor", "left_shift", "right_shift"]
for _n in _UNARY:
    globals()[_n] = _unary(_n)
for _n in _BINARY:
    globals()[_n] = _binary(_n)
copy = _unary("copy", "bypass")


@_api("nl.mod")
def mod(x, y, dtype=None, mask=None, **kwargs):
    return _elementwise("mod", x, y, mask=mask, dtype=dtype)


@_api("nl.fmod")
def fmod(x, y, dtype=None, mask=None, **kwargs):
    return _elementwise("fmod", x, y, mask=mask, dtype=dtype)


def _tensor_dtype(t):
    return _dtypes.from_name(core.tensor_info(t)[1])


def _tensor_buffer(t):
    return _BUFFERS[core.tensor_info(t)[2]]


core.NkiTensor.dtype = property(_tensor_dtype)
core.NkiTensor.buffer = property(_tensor_buffer)
core.NkiTensor.itemsize = property(lambda t: _dtypes.numpy_dtype(core.tensor_info(t)[1]).itemsize)
