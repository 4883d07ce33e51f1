"""nki.language (nl) of NKI 0.3-0.6 on nkic's builders: creation, data movement, the
convenience wrappers, loops (compile-time, unrolled with Python semantics), tile sizes."""
import os
import dataclasses

from nkic._core import core
from nkic import language as _legacy, _dtypes, _loops
from nkic._ops import nki_api as _mark
from nkic import _lang_math
from nkic._lang_math import (abs, abs_max, abs_min, add, all, arctan, bitwise_and, bitwise_or, bitwise_xor, ceil, copy, cos,  # noqa: F401,A004
                             divide, erf, erf_dx, exp, floor, fmod, gelu, gelu_apprx_sigmoid, gelu_apprx_sigmoid_dx, gelu_apprx_tanh,
                             gelu_dx, invert, left_shift, log, logical_and,
                             logical_not, logical_or, logical_xor, matmul, max, maximum, mean, min, minimum, mish,
                             mod, multiply, negative, power, prod, reciprocal, relu, right_shift, rms_norm,
                             rsqrt, sigmoid, sign, silu, silu_dx, sin, softmax, softplus, sqrt, square, subtract, sum,
                             tan, tanh, transpose, trunc, var, where)
from nkic.language import (sbuf, psum, shared_hbm, private_hbm, hbm, ds, fp32, finfo, load, store,  # noqa: F401
                           load_transpose2d, expand_dims, device_print, gather_flattened, rand, random_seed, dropout,
                           shared_constant)
from ._api import api as _api, unavailable as _unavailable
from . import _schedule
from nkic import _targets
from . import _dtype, _lnc

NkiTensor = core.NkiTensor

# The dtypes, one module attribute per name of the core's table (`bool` as `bool_`); DType,
# their type, for annotations.
DType = _dtype.DType
globals().update(("bool_" if n == "bool" else n, t) for n, t in _dtype.BY_NAME.items())
float32 = _dtype.BY_NAME["float32"]  # the comparisons' default dtype, named here for them


def _tile_sizes():
    """nl.tile_size's values: of the traced kernel's target, else of the one nki.jit would trace for."""
    pe_transpose = os.environ.get("NKI_DMA_TRANSPOSE_AS_PE_TRANSPOSE", "").lower() == "true"
    return core.tile_sizes(current_api=True, target=_targets.default_target(), dma_transpose_as_pe=pe_transpose)


class tile_size(metaclass=type(_legacy.tile_size)):
    """Hardware tile size constants of the target (the traced kernel's; outside a trace, the one
    NEURON_PLATFORM_TARGET_OVERRIDE names, else trn3): pmax, psum_bank_fmax (fp32 elements) and
    psum_bank_fmax_bytes of one PSUM bank per partition, psum_num_banks (7 with
    NKI_DMA_TRANSPOSE_AS_PE_TRANSPOSE=true on trn2+), sbuf_size_bytes (all partitions), sbuf_fmax
    (fp32 elements) and sbuf_fmax_bytes usable per partition, gemm_stationary_fmax, gemm_moving_fmax,
    bn_stats_fmax, psum_min_align, sbuf_min_align; psum_fmax and total_available_sbuf_size are the
    deprecated (0.4) names of psum_bank_fmax and sbuf_fmax_bytes."""
    _sizes = staticmethod(_tile_sizes)


for _n, _v in core.tile_sizes(current_api=True).items():
    setattr(tile_size, _n, _v)


def _comparison(name):
    """nl comparisons of 0.6: 1/0 in the first tile operand's dtype unless dtype= (§13 #21)."""
    legacy = getattr(_lang_math, name)

    @_api("nl." + name)
    def compare(x, y, dtype=None):
        """1 where the comparison of x and y holds element by element, else 0, as a new tile in `dtype`
        (default: the first tile operand's dtype)."""
        if dtype is None:
            dtype = next((t.dtype for t in (x, y) if isinstance(t, core.NkiTensor)), float32)
        return legacy(x, y, dtype=dtype)
    compare.__name__ = name
    return compare


for _n in (n for n, _, kind in _lang_math._ALU_OPS if kind == "Compare"):
    globals()[_n] = _comparison(_n)


def _loop_range(name):
    """`name(start, stop=None, step=1)`: range-like bounds known at trace time; the body is
    traced once per iteration (Python semantics: values computed in the body may differ
    from trip to trip). 0.6 documents the three nl.*_range as aliases of range (§5.1, §13 #1)."""
    @_api(name)
    def loop_range(start, stop=None, step=1):
        """A loop over range(start, stop, step), bounds known when the kernel is traced; the body is
        traced once per iteration, with Python semantics."""
        return _loops.static_range(start, stop, step) if stop is not None else _loops.static_range(0, start, step)
    loop_range.__name__ = name.rsplit(".", 1)[-1]
    return loop_range


affine_range, sequential_range = _loop_range("nl.affine_range"), _loop_range("nl.sequential_range")
static_range, range = _loop_range("nl.static_range"), _loop_range("nl.range")  # noqa: A001


def _buffer(buffer):
    return _legacy._buffer_name(sbuf if buffer is None else buffer)


def _storage(dtype, buffer):
    """(dtype name, buffer name) a tensor is made with (NKI_PRECISE_FP=0's fp32 storage of narrow
    float formats on chip is the core's, _begin_trace)."""
    return _dtypes.dtype_name(dtype), _buffer(buffer)


def _begin_trace():
    """NKI_PRECISE_FP=0 asks for the official simulator's fp32 storage of narrow float
    formats: on-chip tensors of them hold fp32."""
    core.set_narrow_floats_as_fp32(os.environ.get("NKI_PRECISE_FP", "1") == "0")


@_api("nl.ndarray")
def ndarray(shape, dtype, buffer=sbuf, name="", address=None):
    """An uninitialised tensor; address=(partition, free byte offset) places it: checked to
    fit the target's buffer (values do not depend on the placement)."""
    t = core.ndarray(_legacy._shape(shape), *_storage(dtype, buffer), name or "", 0)
    _place(t, address, "nl.ndarray")
    return t


def _place(t, address, api):
    """address=(partition, free byte offset) of a new tensor: checked by the core."""
    if address is None:
        return
    if not isinstance(address, (tuple, list)) or len(address) != 2:
        core.raise_unsupported_args(api, "address= is a (partition, free byte offset) pair")
    partition, offset = address
    core.check_address(t, core.int_arg(partition, "address", api), core.int_arg(offset, "address", api))


ndarray.nki_native = "ndarray"  # the dispatcher runs its plain calls in the core (native_calls.h)


@_api("nl.zeros")
def zeros(shape, dtype, buffer=sbuf, name=""):
    """A new tensor of `shape` filled with 0 (on chip: HBM tensors have no initial value)."""
    return core.full(_legacy._shape(shape), 0.0, *_storage(dtype, buffer), name or "", "nl.zeros", 0)


@_api("nl.ones")
def ones(shape, dtype, buffer=sbuf, name=""):
    """A new tensor of `shape` filled with 1 (on chip: HBM tensors have no initial value)."""
    return core.full(_legacy._shape(shape), 1.0, *_storage(dtype, buffer), name or "", "nl.ones", 0)


@_api("nl.full")
def full(shape, fill_value, dtype, buffer=sbuf, name=""):
    """A new tensor of `shape` filled with fill_value (on chip: HBM tensors have no initial value)."""
    return core.full(_legacy._shape(shape), float(fill_value), *_storage(dtype, buffer), name or "",
                     "nl.full", 0)


@_api("nl.zeros_like")
def zeros_like(x, dtype=None, buffer=None, name=""):
    """A new tensor of x's shape (and dtype and buffer unless given) filled with 0."""
    return zeros(x.shape, x.dtype if dtype is None else dtype, buffer or x.buffer, name)


@_api("nl.empty_like")
def empty_like(x, dtype=None, buffer=None, name=""):
    """A new uninitialised tensor of x's shape (and dtype and buffer unless given)."""
    return ndarray(x.shape, x.dtype if dtype is None else dtype, buffer or x.buffer, name)


@_api("nl.shared_identity_matrix")
def shared_identity_matrix(n, dtype=uint8, dst=None):
    """The n x n identity as an SBUF operand (kernels use it so, §13 #18): the constant
    lives in shared HBM and one DMA brings it on chip (into dst when given)."""
    constant = _legacy.shared_identity_matrix(n, dtype)
    if dst is None:
        dst = ndarray(constant.shape, dtype, buffer=sbuf)
    core.assign(dst, constant, None, False, False)
    return dst


@_api("nl.broadcast_to")
def broadcast_to(x, shape, dtype=None):
    """x broadcast along its size-1 dimensions to `shape`, as a new tile (in `dtype` when given)."""
    out = _legacy.broadcast_to(x, shape=shape)
    return out if dtype is None else copy(out, dtype=dtype)


@_api("nl.program_id")
def program_id(axis=0):
    """kernel[n]: the core being traced, a compile-time int (§8.1)."""
    cores = _lnc.active()
    if cores is None:
        return _legacy.program_id(axis)
    if core.int_arg(axis, "axis", "nl.program_id") != 0:
        return _legacy.program_id(axis)  # a launch of one axis: err_program_id_axis_out_of_bounds
    return cores[1]


@_api("nl.program_ndim")
def program_ndim():
    """kernel[n] launches over one axis of cores."""
    return _legacy.program_ndim() if _lnc.active() is None else 1


@_api("nl.num_programs")
def num_programs(axes=None):
    """The launch's program count along `axes`; without it the total (§13 #16)."""
    cores = _lnc.active()
    return _legacy.num_programs(axes) if cores is None else cores[0]


@_api("nl.no_reorder")
def no_reorder():
    """Each instruction traced inside waits for the one before (dynamically scoped): the engines
    no longer overlap them. Loops inside are unrolled; runtime loops are refused."""
    return _schedule.no_reorder()


class _NKIObjectType(type):
    """Builds NKIObjects with NKI's field rules unless the class writes its own __init__:
    a generated dataclass __init__ would miss the fields that are plain class attributes."""

    def __call__(cls, *args, **kwargs):
        init = cls.__init__
        code = getattr(init, "__code__", None)
        if init is NKIObject.__init__ or (code is not None and code.co_filename == "<string>"
                                          and "__dataclass_fields__" in cls.__dict__):
            obj = cls.__new__(cls)
            NKIObject.__init__(obj, *args, **kwargs)
            return obj
        return super().__call__(*args, **kwargs)


class NKIObject(metaclass=_NKIObjectType):
    """Base of the classes a kernel may define or receive: dataclass-like (§2.2). Its
    fields (annotated or plain class attributes with defaults) are __init__ parameters
    and __post_init__ runs, with or without @dataclass."""

    def __init__(self, *args, **kwargs):
        names = _fields(type(self))
        if len(args) > len(names):
            raise TypeError(f"{type(self).__name__}() takes at most {len(names)} positional arguments")
        values = dict(zip(names, args))
        for k, v in kwargs.items():
            if k not in names or k in values:
                raise TypeError(f"{type(self).__name__}() got an unexpected keyword argument {k!r}")
            values[k] = v
        declared = getattr(type(self), "__dataclass_fields__", {})
        for k in names:
            if k in values:
                object.__setattr__(self, k, values[k])
            elif k in declared and declared[k].default_factory is not dataclasses.MISSING:
                object.__setattr__(self, k, declared[k].default_factory())
        post = getattr(self, "__post_init__", None)
        if post is not None:
            post()


def _fields(cls):
    """The field names of an NKIObject class, base classes first, in definition order."""
    names = []
    for klass in reversed(cls.__mro__):
        if klass is object or klass is NKIObject:
            continue
        for k in list(getattr(klass, "__annotations__", {})) + [
                k for k, v in vars(klass).items()
                if not k.startswith("_") and not callable(v) and not isinstance(v, (property, classmethod, staticmethod))]:
            if k not in names:
                names.append(k)
    return names


class MemoryRegion:
    sbuf, psum, private_hbm, shared_hbm = "sbuf", "psum", "private_hbm", "shared_hbm"


def is_hbm(buffer):
    """Whether `buffer` is an HBM buffer (nl.shared_hbm or nl.private_hbm)."""
    return buffer in (private_hbm, shared_hbm)


def is_on_chip(buffer):
    """Whether `buffer` is on chip (nl.sbuf or nl.psum)."""
    return buffer in (sbuf, psum)


def is_psum(buffer):
    """Whether `buffer` is nl.psum."""
    return buffer == psum


def is_sbuf(buffer):
    """Whether `buffer` is nl.sbuf."""
    return buffer == sbuf


# Named as op= only: tensor_partition_reduce's average, and [0.4+] an activation function of two inputs.
average = _unavailable("nl.average", "is the op= of nisa.tensor_partition_reduce, not a tile API")
prelu = _unavailable("nl.prelu", "is an activation function, not a tile API: pass it as op= of nisa.activate2, "
                     "with the slope of negative inputs as relu_param=")


@_mark("nl.bypass")
def bypass(x):
    """The no-op ALU stage (op1=nl.bypass)."""
    return x


# Tensor attributes and view methods of the current API.
def _ap(t, pattern, offset=None, scalar_offset=None, vector_offset=None, indirect_dim=0, dtype=None):
    scalar_offset = getattr(scalar_offset, "tile", scalar_offset)  # an NkiScalar's or a VirtualRegister's value
    if scalar_offset is not None and vector_offset is not None:
        core.raise_unsupported_args("tensor.ap", "takes scalar_offset= or vector_offset=, not both")
    steps = [(core.int_arg(p[0], "step", "tensor.ap"), core.int_arg(p[1], "count", "tensor.ap")) for p in pattern]
    return core.ap_view(t, steps, None if offset is None else core.int_arg(offset, "offset", "tensor.ap"),
                        scalar_offset, vector_offset, core.int_arg(indirect_dim, "indirect_dim", "tensor.ap"),
                        None if dtype is None else _dtypes.dtype_name(dtype))


_ap.nki_func = "tensor.ap"
core.NkiTensor.ap = _ap


def _none_aware(compare, if_none):
    """`t == None` / `t != None`: the structural comparison nki 0.3 kernels write (for
    optional tensor arguments); anything else compares elementwise as before."""
    def op(t, other):
        return if_none if other is None else compare(t, other)
    return op


core.NkiTensor.__eq__ = _none_aware(core.NkiTensor.__eq__, False)
core.NkiTensor.__ne__ = _none_aware(core.NkiTensor.__ne__, True)

from . import _views  # noqa: E402,F401  (attaches the 0.5 view methods to NkiTensor)
from ._registers import dynamic_range  # noqa: E402,F401
from ._control import fori_loop, if_else, while_loop  # noqa: E402,F401
from ._grids import NkiGrid, NkiTileGrid, NkiBlockGrid, tiles, blocks, alloc_tiles, alloc_blocks  # noqa: E402,F401

# Removed from the language (NKI_CURRENT_API.md §2.3, §12): a call says what replaces it.
arange = _unavailable("nl.arange", "was removed in nki 0.1: index with slices, nl.ds(start, size) or .ap(pattern=)")
mgrid = _unavailable("nl.mgrid", "was removed in nki 0.1: index with slices, nl.ds(start, size) or .ap(pattern=)")
par_dim = _unavailable("nl.par_dim", "was removed in nki 0.1: dim 0 is the partition dim; a block dim becomes a "
                       "tuple of tensors or a (P, B, F) tensor")
spmd_dim = _unavailable("nl.spmd_dim", "was removed in nki 0.1: launch kernel[2] over the logical NeuronCore")
nc = _unavailable("nl.nc", "was removed in nki 0.1: launch kernel[2] over the logical NeuronCore")
