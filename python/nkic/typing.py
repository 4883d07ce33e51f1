"""nki.typing (nt): kernel annotations. They are classes, so they compose with
typing.Union / Optional like any type hint. nt.scalar makes runtime scalars."""
import numpy as np

from ._core import core
from . import _dtypes
from ._ops import nki_api


class _TensorType(type):
    """Traced tensors are instances of nt.tensor (of nt.tensor[shape] when the shape
    matches): kernels test their arguments with isinstance(x, nt.tensor)."""

    def __instancecheck__(cls, obj):
        if isinstance(obj, core.NkiTensor):
            return cls.shape is None or tuple(obj.shape) == tuple(cls.shape)
        return super().__instancecheck__(obj)


class mutable:
    """nt.mutable: the qualifier of nt.tensor[nt.mutable] (also nt.tensor[nt.mutable, 128, 512]),
    a kernel input the kernel may write, as nt.mutable_tensor."""


class tensor(metaclass=_TensorType):
    """nt.tensor[128, 512]: an annotation checked against the value's shape. With a dtype,
    nt.tensor[[128, 512], nl.bfloat16] is also a shape spec nki.benchmark / nki.profile take
    in place of an array (they predict latency without data)."""
    shape = None
    dtype = None  # the core's dtype name, when the spec gives one

    def __class_getitem__(cls, dims):
        dims = dims if isinstance(dims, tuple) else (dims,)
        qualified = mutable in dims
        shape = tuple(d for d in dims if d is not mutable)
        dtype = cls.dtype
        if len(shape) == 2 and isinstance(shape[0], (list, tuple)):  # nt.tensor[[128, 512], nl.bfloat16]
            shape, dtype = tuple(shape[0]), _dtypes.dtype_name(shape[1])
        if not all(isinstance(d, (int, np.integer)) and not isinstance(d, bool) for d in shape):
            core.raise_unexpected_operand("nt.tensor[...]", f"{dims!r}; its dims are integers (nt.tensor[128, 512])")
        shape = tuple(core.int_arg(d, "dimension", "nt.tensor[...]") for d in shape)
        name = f"{cls.__name__}[{', '.join('mutable' if d is mutable else str(d) for d in dims)}]"
        if dtype is not cls.dtype:
            name = f"{cls.__name__}[[{', '.join(map(str, shape))}], {dtype}]"
        attrs = {"shape": shape or cls.shape, "dtype": dtype, "__module__": cls.__module__}
        if qualified:
            attrs["_nki_mutable"] = True
        return type(name, (cls,), attrs)


class mutable_tensor(tensor):
    """nt.mutable_tensor: a kernel input the kernel may write (and must return)."""
    _nki_mutable = True


@nki_api("nt.scalar")
def scalar(value):
    """nt.scalar(x): a runtime scalar, the one-element tile a do-while condition or a
    runtime loop bound reads. A Python bool or number becomes a constant [1, 1] tile
    (uint8, int32 or float32); a one-element tile is itself."""
    if isinstance(value, core.NkiTensor):
        if int(np.prod(value.shape)) != 1:
            core.raise_unexpected_operand("scalar", f"a tile of shape {tuple(value.shape)}; a runtime scalar is one element")
        return value
    dtype = "uint8" if isinstance(value, (bool, np.bool_)) else "int32" if isinstance(value, (int, np.integer)) else "float32"
    return core.full([1, 1], float(value), dtype, "sbuf", "", "nt.scalar", 0)


def is_shape_spec(value):
    """Whether `value` is an nt.tensor[...] class standing for an argument (not an array)."""
    return isinstance(value, type) and issubclass(value, tensor) and value.shape is not None
