"""The view methods and attributes of NkiTensor in nki 0.5+ (NKI_CURRENT_API.md §4.3);
each is one call into the C++ view builder (codegen/ViewMethods), which holds the rules."""
import math

from nkic._core import core
from nkic import _dtypes
from ._registers import VirtualRegister
from ._scalars import NkiScalar



def _slice(t, dim, start, end, step=1):
    return core.view_slice(t, dim, start, end, step)


def _select(t, dim, index):
    if isinstance(index, (NkiScalar, VirtualRegister)):  # a run-time index: its register tile
        index = index.tile
    return core.view_select(t, dim, index)


def _vector_select(t, dim, vector_offset):
    return core.view_vector_select(t, dim, vector_offset)


def _indirect(t, index, num_elem=None):
    return core.view_indirect(t, index, num_elem)


def _permute(t, dims):
    return core.view_permute(t, dims)


def _broadcast(t, dim, size):
    return core.view_broadcast(t, dim, size)


def _expand_dim(t, dim):
    return core.view_expand_dim(t, dim)


def _squeeze_dim(t, dim):
    return core.view_squeeze_dim(t, dim)


def _reshape_dim(t, dim, shape):
    return core.view_reshape_dim(t, dim, shape)


def _flatten_dims(t, start_dim, end_dim):
    return core.view_flatten_dims(t, start_dim, end_dim)


def _rearrange(t, src_pattern, dst_pattern, fixed_sizes=None):
    return core.view_rearrange(t, src_pattern, dst_pattern, fixed_sizes)


def _get_pattern(t):
    return [list(pair) for pair in core.view_pattern(t)[0]]


def _is_contiguous(t):
    return core.view_is_contiguous(t)


def _is_indirect(t):
    return core.view_is_indirect(t)


_legacy_view = core.NkiTensor.view


def _view(t, dtype):
    """The current API reinterprets any view whose last dim is contiguous; a legacy
    kernel keeps `view` of a whole tensor."""
    if not core.current_api():
        return _legacy_view(t, dtype)
    return core.view_reinterpret(t, _dtypes.dtype_name(dtype))


for _name, _method in (("slice", _slice), ("select", _select), ("vector_select", _vector_select), ("indirect", _indirect),
                       ("permute", _permute), ("broadcast", _broadcast), ("expand_dim", _expand_dim),
                       ("squeeze_dim", _squeeze_dim), ("reshape_dim", _reshape_dim),
                       ("flatten_dims", _flatten_dims), ("rearrange", _rearrange), ("get_pattern", _get_pattern),
                       ("is_contiguous", _is_contiguous), ("is_indirect", _is_indirect),
                       ("view", _view), ("reinterpret_cast", _view)):
    _method.nki_func = "tensor." + _name
    setattr(core.NkiTensor, _name, _method)


# Attributes known at specialization (§3.1): strides and offset in elements of the view's storage.
core.NkiTensor.strides = property(lambda t: tuple(step for step, _ in core.view_pattern(t)[0]))
core.NkiTensor.offset = property(lambda t: core.view_pattern(t)[1])
core.NkiTensor.size = property(lambda t: math.prod(t.shape))
core.NkiTensor.name = property(core.view_name)
# NKI 0.7: a tensor is its own `.data`, so a tile grid's selection and a tensor are used alike.
core.NkiTensor.data = property(lambda t: t)
