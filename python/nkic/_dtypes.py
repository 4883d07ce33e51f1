"""NKI's element types as numpy dtypes, and the name mapping to the core."""
import numpy as np

from ._core import core

float32 = np.float32
float16 = np.float16
bfloat16 = core.bfloat16
float8_e4m3 = core.float8_e4m3
float8_e5m2 = core.float8_e5m2
# The OCP formats (NKI 0.2+ / 0.5+), numpy dtypes of the names ml_dtypes gives them.
float8_e4m3fn = core.float8_e4m3fn
float8_e8m0fnu = core.float8_e8m0fnu
int8, int16, int32 = np.int8, np.int16, np.int32
uint8, uint16, uint32 = np.uint8, np.uint16, np.uint32
int64, uint64 = np.int64, np.uint64  # nki 0.7+: device scalars and HBM offsets
bool_ = np.bool_


class _StoredDType:
    """An NKI dtype numpy has no type for: it names the format and stores its
    elements in a numpy type of the same size."""

    def __init__(self, name, storage, doc):
        self.name = name
        self.storage = np.dtype(storage)
        self.itemsize = self.storage.itemsize
        self.__doc__ = doc

    def __repr__(self):
        return self.name


tfloat32 = _StoredDType("tfloat32", np.float32, "fp32 storage with a 10-bit mantissa; numpy sees float32 bits.")
# The microscaling (mx) dtypes: four fp8 (fp4) values packed in one element,
# value j in byte (nibble) j. Kernel outputs of them are arrays of unsigned words;
# an argument may also be an array of the numpy dtype of the same name
# (words.view("float8_e4m3fn_x4")), which a kernel then sees as that dtype.
float8_e4m3fn_x4 = _StoredDType("float8_e4m3fn_x4", np.uint32, "four float8_e4m3fn values (max 448, no inf).")
float8_e5m2_x4 = _StoredDType("float8_e5m2_x4", np.uint32, "four float8_e5m2 values.")
float4_e2m1fn_x4 = _StoredDType("float4_e2m1fn_x4", np.uint16, "four float4_e2m1fn values (max 6).")
_STORED = {t.name: t for t in (tfloat32, float8_e4m3fn_x4, float8_e5m2_x4, float4_e2m1fn_x4)}

_BY_NAME = {
    "float32": float32, "float16": float16, "bfloat16": bfloat16, "tfloat32": tfloat32,
    "float8_e4m3": float8_e4m3, "float8_e5m2": float8_e5m2, "float8_e4m3fn": float8_e4m3fn,
    "float8_e8m0fnu": float8_e8m0fnu, "int8": int8, "int16": int16,
    "int32": int32, "uint8": uint8, "uint16": uint16, "uint32": uint32, "int64": int64, "uint64": uint64,
    "bool": bool_, **_STORED,
}


def dtype_name(dt):
    """The core's name for any dtype spelling (nl.*, np.*, np.dtype, 'float32')."""
    if isinstance(dt, _StoredDType):
        return dt.name
    name = getattr(dt, "nki_dtype_name", None)  # the current API's dtypes (nki.language)
    if isinstance(name, str):
        return name
    if isinstance(dt, str) and dt in _STORED:
        return dt
    if dt is None:  # np.dtype(None) would be float64
        core.raise_unsupported_dtype("None: a dtype is required here")
    if not isinstance(dt, (str, type, np.dtype)):  # numpy would take an array's or a tile's .dtype, deprecated
        core.raise_unsupported_dtype(f"a {type(dt).__name__} object: not a dtype (pass its .dtype)")
    try:
        return np.dtype(dt).name
    except TypeError:
        core.raise_unsupported_dtype(f"{dt!r}: not a dtype")


_FLOATS = frozenset(name for name, is_float in core.dtypes() if is_float)  # the core's dtype table


def is_float(name):
    """Whether the core dtype `name` is a floating-point format."""
    return name in _FLOATS


def from_name(name):
    """The nl dtype object the core's dtype name stands for."""
    return _BY_NAME[name]


def sizeinbytes(dtype):
    """Bytes per element of an NKI dtype (neuronxcc.nki.language.constants.sizeinbytes)."""
    return numpy_dtype(dtype_name(dtype)).itemsize


def numpy_dtype(name):
    """The numpy dtype that stores the core dtype `name` (tfloat32 as float32,
    the packed mx dtypes as unsigned words)."""
    return _STORED[name].storage if name in _STORED else np.dtype(_BY_NAME[name])
