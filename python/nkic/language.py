"""nki.language (nl): the NKI language surface. Every API carries the nki_func
marker, so the tracer's dispatcher treats a call as an op builder."""
import numpy as np

from ._core import core
from . import _dtypes
from ._dtypes import (bfloat16, bool_, float8_e4m3, float8_e5m2, float16, float32, int8, int16,  # noqa: F401
                      int32, tfloat32, uint8, uint16, uint32, float8_e4m3fn_x4, float8_e5m2_x4, float4_e2m1fn_x4)
from ._loops import affine_range, sequential_range, static_range  # noqa: F401
from ._ops import nki_api as _api, op_name as _op_name
from ._lang_math import (_LoopReduce, _axes, _dtype_arg, loop_reduce, abs, add, all, arctan, bitwise_and, bitwise_or, bitwise_xor,  # noqa: F401,A004
                         ceil, copy, cos, divide, equal, erf, erf_dx, exp, floor, fmod, gelu, gelu_apprx_sigmoid,
                         gelu_apprx_tanh, gelu_dx, greater, greater_equal, invert, left_shift, less, less_equal,
                         log, logical_and, logical_not, logical_or, logical_xor, matmul, max, maximum, mean, min,
                         minimum, mish, mod, multiply, negative, not_equal, power, prod, reciprocal, relu,
                         right_shift, rms_norm, rsqrt, sigmoid, sign, silu, silu_dx, sin, softmax, softplus, sqrt,
                         square, subtract, sum, tan, tanh, transpose, trunc, var, where)


for _it in (affine_range, sequential_range, static_range):
    _it.nki_func = "nl." + _it.__name__


class _Buffer:
    """A memory kind (nl.sbuf, nl.psum, nl.shared_hbm, ...). On-chip kinds also
    serve ncc.sbuf / ncc.psum: direct allocation (alloc, mod_alloc) places a
    tensor at chosen addresses, which changes no value the simulator computes,
    so those allocators return the same memory kind."""
    __slots__ = ("name", "direct")

    def __init__(self, name, direct=False):
        self.name = name
        self.direct = direct  # a direct allocation (ncc.sbuf.alloc / mod_alloc)

    def __repr__(self):
        return f"nl.{self.name}"

    def auto_alloc(self):
        return _BUFFERS[self.name]

    def alloc(self, func):
        return _Buffer(self.name, direct=True)

    def mod_alloc(self, **kwargs):
        return _Buffer(self.name, direct=True)

    def __eq__(self, other):  # `t.buffer is nl.psum` style checks see the memory kind
        return isinstance(other, _Buffer) and other.name == self.name

    def __hash__(self):
        return hash(self.name)


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
        if buffer.direct:
            core.note_direct_allocation()
        return buffer.name
    core.raise_unsupported_buffer(buffer if isinstance(buffer, str) else repr(buffer))


def _shape(shape):
    if isinstance(shape, (int, np.integer)):
        return [_whole(shape, "dimension")]
    return [_whole(d, "dimension") for d in shape]


def _whole(value, what, api=""):
    """The integer `value`; a fractional number is an invalid shape (int() would drop the
    fraction). core.int_arg names any other non-integer (None, a string, a huge int, a tile)."""
    if isinstance(value, (float, np.floating)) and np.isfinite(value) and not float(value).is_integer():
        core.raise_invalid_shape(f"{what} {value!r} is not an integer")
    return core.int_arg(value, what, api)


@_api("nl.nc")
class nc:
    """nl.nc(n): a launch-grid dimension spread over n physical NeuronCores."""

    def __init__(self, n):
        self.size = core.int_arg(n, "n")
        self.physical_cores = self.size

    def __mul__(self, other):
        return spmd_dim(self, other)

    __rmul__ = lambda self, other: spmd_dim(other, self)  # noqa: E731

    def __repr__(self):
        return f"nl.nc({self.size})"


@_api("nl.spmd_dim")
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


class _ActiveTarget(type):
    """nl.tile_size reads the target being traced for; its class attributes hold the default
    target's values (for introspection), and `_sizes` gives the values of the moment."""

    def __getattribute__(cls, name):
        if not name.startswith("_"):
            sizes = type.__getattribute__(cls, "_sizes")()
            if name in sizes:
                return sizes[name]
        return type.__getattribute__(cls, name)


class tile_size(metaclass=_ActiveTarget):
    """Hardware tile size constants of the target being traced for (outside a trace: trn2's):
    pmax, psum_fmax, gemm_stationary_fmax, gemm_moving_fmax, bn_stats_fmax, psum_min_align,
    sbuf_min_align, total_available_sbuf_size."""
    _sizes = staticmethod(core.tile_sizes)


for _name, _value in core.tile_sizes().items():
    setattr(tile_size, _name, _value)
del _name, _value


@_api("nl.par_dim")
class par_dim(int):
    """nl.par_dim(n): marks the partition dimension in a shape (the leading dim by default)."""


def _partition_dim(shape):
    """Which dimension of a shape is the partition dimension."""
    if isinstance(shape, (int, np.integer)):
        return 0
    marked = [i for i, d in enumerate(shape) if isinstance(d, par_dim)]
    return marked[0] if marked else 0


@_api("nl.ndarray")
def ndarray(shape, dtype, *, buffer=None, name="", **kwargs):
    return core.ndarray(_shape(shape), _dtypes.dtype_name(dtype), _buffer_name(buffer), name, _partition_dim(shape))


@_api("nl.full")
def full(shape, fill_value, dtype, *, buffer=None, name="", **kwargs):
    return core.full(_shape(shape), float(fill_value), _dtypes.dtype_name(dtype), _buffer_name(buffer), name, "nl.full",
                     _partition_dim(shape))


@_api("nl.zeros")
def zeros(shape, dtype, *, buffer=None, name="", **kwargs):
    return core.full(_shape(shape), 0.0, _dtypes.dtype_name(dtype), _buffer_name(buffer), name, "nl.zeros",
                     _partition_dim(shape))


@_api("nl.ones")
def ones(shape, dtype, *, buffer=None, name="", **kwargs):
    return core.full(_shape(shape), 1.0, _dtypes.dtype_name(dtype), _buffer_name(buffer), name, "nl.ones",
                     _partition_dim(shape))


@_api("nl.empty_like")
def empty_like(a, dtype=None, *, buffer=None, name="", **kwargs):
    return ndarray(a.shape, a.dtype if dtype is None else dtype, buffer=buffer or _tensor_buffer(a), name=name)


@_api("nl.zeros_like")
def zeros_like(a, dtype=None, *, buffer=None, name="", **kwargs):
    return zeros(a.shape, a.dtype if dtype is None else dtype, buffer=buffer or _tensor_buffer(a), name=name)


def _oob_skip(kwargs):
    """oob_mode.skip (passed as mode= or oob_mode=): indirect accesses out of bounds are dropped."""
    return int(kwargs.get("mode", kwargs.get("oob_mode", 0))) == 1


@_api("nl.load")
def load(src, *, mask=None, dtype=None, **kwargs):
    """An HBM tensor (or view) copied into a new SBUF tile, converted to `dtype` when given."""
    return core.load(src, mask, None if dtype is None else _dtypes.dtype_name(dtype), _oob_skip(kwargs))


load.nki_native = "load"  # the dispatcher runs load's plain calls in the core (native_calls.h)


@_api("nl.load_transpose2d")
def load_transpose2d(src, *, mask=None, dtype=None, **kwargs):
    """An HBM [N, M] tensor copied into a new SBUF tile [M, N] (transposed by the DMA)."""
    return core.load_transpose2d(None, src, mask, None if dtype is None else _dtypes.dtype_name(dtype), None, False)


@_api("nl.store")
def store(dst, value, *, mask=None, **kwargs):
    """Writes `value` (a tile or a number) into the HBM tensor or view `dst`, converted to its dtype."""
    core.store(dst, value, mask, _oob_skip(kwargs))


store.nki_native = "store"


@_api("nl.arange")
def arange(*args):
    if len(args) not in (1, 2):
        core.raise_unsupported_args("nl.arange", f"nl.arange(stop) or nl.arange(start, stop) takes 1 or 2 bounds, "
                                                 f"got {len(args)}")
    if len(args) == 1:
        return core.arange(0, _whole(args[0], "nl.arange bound"))
    return core.arange(_whole(args[0], "nl.arange bound"), _whole(args[1], "nl.arange bound"))


@_api("nl.ds")
class ds:
    """nl.ds(start, size): the slice start:start+size; start may be symbolic."""
    __slots__ = ("start", "size")
    _nki_ds = True

    def __init__(self, start, size):
        self.start = start
        self.size = core.int_arg(size, "size")


@_api("nl.program_id")
def program_id(axis):
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        core.raise_unexpected_operand("axis", f"{type(axis).__name__} {axis!r}; it is an int naming a launch-grid dim")
    return core.program_id(core.int_arg(axis, "axis"))


@_api("nl.num_programs")
def num_programs(axes=None):
    if axes is None:
        return core.num_programs(None)
    if isinstance(axes, (tuple, list)):
        n = 1
        for a in axes:
            n *= core.num_programs(core.int_arg(a, "axes"))
        return n
    return core.num_programs(core.int_arg(axes, "axes"))


@_api("nl.program_ndim")
def program_ndim():
    return core.program_ndim()


def _tensor_dtype(t):
    return _dtypes.from_name(core.tensor_info(t)[1])


def _tensor_buffer(t):
    return _BUFFERS[core.tensor_info(t)[2]]


core.NkiTensor.dtype = property(_tensor_dtype)
core.NkiTensor.buffer = property(_tensor_buffer)
core.NkiTensor.itemsize = property(lambda t: _dtypes.numpy_dtype(core.tensor_info(t)[1]).itemsize)


class _MGrid:
    """nl.mgrid[0:128, 0:512]: one tile index per dimension, each over the whole
    (dense) grid like numpy's mgrid, and varying along its own dimension only."""

    def __getitem__(self, key):
        key = key if isinstance(key, tuple) else (key,)
        grids = []
        for k, s in enumerate(key):
            if not isinstance(s, slice) or s.step not in (None, 1):
                core.raise_unsupported_index("nl.mgrid takes slices start:stop without steps")
            idx = core.arange(_whole(0 if s.start is None else s.start, "start", "nl.mgrid"),
                              _whole(s.stop, "stop", "nl.mgrid"))
            grids.append(idx[(None,) * k + (slice(None),) + (None,) * (len(key) - k - 1)])
        # 0 * g_j contributes g_j's extent, not its value: each index spans the full grid.
        dense = []
        for k, g in enumerate(grids):
            for j, other in enumerate(grids):
                if j != k:
                    g = g + 0 * other
            dense.append(g)
        return _Grid(dense)


class _Grid(tuple):
    """The value of nl.mgrid[...]: unpackable, with .p (partition) and .x/.y/.z (free)."""

    @property
    def p(self):
        return self[0]

    @property
    def x(self):
        return self[1]

    @property
    def y(self):
        return self[2]

    @property
    def z(self):
        return self[3]


mgrid = _MGrid()


@_api("nl.static_cast")
def static_cast(input_data, dtype):
    """Cast a host value (numpy array or scalar) to an NKI dtype."""
    return np.asarray(input_data).astype(_dtypes.numpy_dtype(_dtypes.dtype_name(dtype)))


@_api("nl.finfo")
class finfo:
    """numpy-like finfo for NKI's float types."""

    def __init__(self, dtype):
        name = _dtypes.dtype_name(dtype)
        info = {"bfloat16": (3.3895313892515355e38, 0.0078125, 1.1754943508222875e-38),
                "float8_e4m3": (240.0, 0.125, 0.015625), "float8_e5m2": (57344.0, 0.25, 6.103515625e-05),
                "float8_e4m3fn": (448.0, 0.125, 0.015625), "float8_e8m0fnu": (2.0 ** 127, 1.0, 2.0 ** -127),
                "tfloat32": (3.4028234663852886e38, 0.0009765625, 1.1754943508222875e-38)}
        if name in info:
            self.max, self.eps, self.tiny = info[name]
        else:
            f = np.finfo(_dtypes.numpy_dtype(name))
            self.max, self.eps, self.tiny = float(f.max), float(f.eps), float(f.tiny)
        self.min = self.tiny if name == "float8_e8m0fnu" else -self.max  # e8m0 has no sign
        self.dtype = _dtypes.from_name(name)


class fp32:
    """nl.fp32.min: the most negative finite fp32 (bit pattern 0xff7fffff)."""
    min = float(np.frombuffer(np.uint32(0xFF7FFFFF).tobytes(), np.float32)[0])


class bfp16:
    """nl.bfp16.min: bit pattern 0xff80 (documented as bf16's most negative; it encodes -inf)."""
    min = float("-inf")


@_api("nl.broadcast_to")
def broadcast_to(src, *, shape, **kwargs):
    shape = tuple(_shape(shape))
    if tuple(src.shape) == shape:
        return src
    return core.elementwise("bypass", (core.broadcast_view(src, list(shape)),), None, None)


@_api("nl.expand_dims")
def expand_dims(data, axis):
    """`data` with a size-1 dimension inserted at each of `axis` (a view, not a copy)."""
    for a in sorted(_axes(axis)):
        data = core.expand_dims_view(data, a)
    return data


def _astype(t, dtype):
    return core.elementwise("bypass", (t,), None, _dtypes.dtype_name(dtype))


def _assert_shape(t, shape):
    core.assert_shape(t, _shape(shape))
    return t


def _broadcast_to(t, shape):
    return core.broadcast_view(t, _shape(shape))


def _expand_dims(t, axis):
    return expand_dims(t, axis)


@_api("nl.shared_constant")
def shared_constant(constant, dtype=None, **kwargs):
    """A shared-HBM tensor holding the compile-time numpy array `constant` (in `dtype` when given)."""
    values = np.asarray(constant)
    name = _dtypes.dtype_name(values.dtype if dtype is None else dtype)
    flat = values.astype(np.float64).ravel().tolist()
    return core.shared_constant(list(values.shape), name, flat, "nl.shared_constant")


@_api("nl.shared_identity_matrix")
def shared_identity_matrix(n, dtype=uint8, **kwargs):
    n = _whole(n, "n")
    return core.shared_constant([n, n], _dtypes.dtype_name(dtype), np.eye(n).ravel().tolist(),
                                "nl.shared_identity_matrix")


def _reshape(t, *shape, **kwargs):
    if "shape" in kwargs:
        shape = kwargs["shape"]
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    return core.reshape_view(t, _shape(shape))


def _view(t, dtype):
    return core.dtype_view(t, _dtypes.dtype_name(dtype))


def _len(t, what="len() of", api="len()"):
    if not t.shape:  # numpy: a 0-d array has no length and does not iterate
        core.raise_unsupported_index(f"{what} a 0-dimensional tensor: it has no first dimension", api)
    return t.shape[0]


def _iter(t):
    """`for row in t`: the views t[0], t[1], ... along the first dim, as numpy iterates."""
    return (t[i] for i in range(_len(t, "iteration over", "tensor iteration")))


core.NkiTensor.__len__ = _len
core.NkiTensor.__iter__ = _iter


# Tensor methods are NKI APIs too: the dispatcher builds them, never inlines them.
for _name, _method in (("astype", _astype), ("broadcast_to", _broadcast_to), ("expand_dims", _expand_dims),
                       ("assert_shape", _assert_shape), ("reshape", _reshape), ("view", _view)):
    _method.nki_func = "tensor." + _name
    setattr(core.NkiTensor, _name, _method)


@_api("nl.rand")
def rand(shape, dtype=float32, **kwargs):
    """A new tile of `shape` filled with uniform random values in [0, 1) (in `dtype`)."""
    return core.rand(_shape(shape), _dtypes.dtype_name(dtype), kwargs.get("mask"))


@_api("nl.random_seed")
def random_seed(seed, *, mask=None, **kwargs):
    """Seeds the random number generator nl.rand and nl.dropout read, with the integer `seed`."""
    if isinstance(seed, core.NkiTensor):
        core.raise_unexpected_operand("seed", "a tile; nkic takes the seed as a Python integer")
    core.random_seed(float(core.int_arg(seed, "seed")))


@_api("nl.dropout")
def dropout(x, rate, *, dtype=None, mask=None, **kwargs):
    """Zeroes each element with probability `rate` (a number or a tile that broadcasts), no rescaling."""
    return core.dropout(None, x, rate, mask, _dtype_arg(dtype))


@_api("nl.all_reduce")
def all_reduce(x, op, program_axes, *, dtype=None, mask=None, parallel_reduce=True, asynchronous=False, **kwargs):
    """The fold of x with `op` over the SPMD programs whose ids differ only on `program_axes`;
    every one of them receives the result."""
    axes = [program_axes] if isinstance(program_axes, int) else [int(a) for a in program_axes]
    return core.all_reduce(x, _op_name(op), axes, mask, _dtype_arg(dtype))


@_api("nl.device_print")
def device_print(prefix, x, *, mask=None, **kwargs):
    """Prints `prefix` and the values of x when the kernel runs on the simulator."""
    core.device_print(str(prefix), x, mask)


@_api("nl.gather_flattened")
def gather_flattened(data, indices, *, mask=None, dtype=None, **kwargs):
    """Per partition, out[p, j] = data[p, indices[p, j]] over data's flattened free dimensions,
    as a new tile."""
    return core.gather_flattened(None, data, indices, mask, _dtype_arg(dtype), "nl.gather_flattened")


@_api("nl.atomic_rmw")
def atomic_rmw(dst, value, op, *, mask=None, **kwargs):
    core.atomic_rmw(dst, value, _op_name(op), mask)


_core_setitem = core.NkiTensor.__setitem__


def _setitem(t, key, value):
    if isinstance(value, _LoopReduce):  # dst[...] = nl.loop_reduce(...)
        value.store_in(t[key])
        return
    _core_setitem(t, key, value)


core.NkiTensor.__setitem__ = _setitem
