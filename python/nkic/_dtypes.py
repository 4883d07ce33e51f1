"""NKI's element types as numpy dtypes, and the name mapping to the core."""
import numpy as np

from ._core import core

float32 = np.float32
float16 = np.float16
bfloat16 = core.bfloat16
float8_e4m3 = core.float8_e4m3
float8_e5m2 = core.float8_e5m2
int8, int16, int32 = np.int8, np.int16, np.int32
uint8, uint16, uint32 = np.uint8, np.uint16, np.uint32
bool_ = np.bool_


class _TFloat32:
    """tfloat32: fp32 storage with a 10-bit mantissa; numpy sees float32 bits."""
    name = "tfloat32"
    itemsize = 4

    def __repr__(self):
        return "tfloat32"


tfloat32 = _TFloat32()

_BY_NAME = {
    "float32": float32, "float16": float16, "bfloat16": bfloat16, "tfloat32": tfloat32,
    "float8_e4m3": float8_e4m3, "float8_e5m2": float8_e5m2, "int8": int8, "int16": int16,
    "int32": int32, "uint8": uint8, "uint16": uint16, "uint32": uint32, "bool": bool_,
}


def dtype_name(dt):
    """The core's name for any dtype spelling (nl.*, np.*, np.dtype, 'float32')."""
    if dt is tfloat32 or (isinstance(dt, str) and dt == "tfloat32"):
        return "tfloat32"
    try:
        name = np.dtype(dt).name
    except TypeError:
        raise TypeError(f"{dt!r} is not a dtype") from None
    return name


_FLOATS = {"float32", "float16", "bfloat16", "tfloat32", "float8_e4m3", "float8_e5m2"}


def is_float(name):
    """Whether the core dtype `name` is a floating-point format."""
    return name in _FLOATS


def from_name(name):
    """The nl dtype object the core's dtype name stands for."""
    return _BY_NAME[name]


def numpy_dtype(name):
    """The numpy dtype that stores the core dtype `name` (tfloat32 as float32)."""
    return np.dtype(np.float32 if name == "tfloat32" else _BY_NAME[name])
