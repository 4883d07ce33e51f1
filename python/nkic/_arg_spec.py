"""`--arg NAME=VALUE`, the same in every command: an array spec DTYPE[D0,D1,...] becomes an
array of seeded random values of that dtype (never all zero: a comparison on zeros proves
little), any other VALUE a Python literal (2, 0.5, True, (3, 4), None)."""
import ast
import re

import numpy as np

from . import _dtypes
from ._kernel_file import CliError

SEED = 0
_SHORT_DTYPES = {
    "f32": "float32", "f16": "float16", "bf16": "bfloat16", "tf32": "tfloat32", "fp8e4m3": "float8_e4m3",
    "fp8e5m2": "float8_e5m2", "i8": "int8", "i16": "int16", "i32": "int32", "u8": "uint8", "u16": "uint16",
    "u32": "uint32", "bool": "bool",
}
_ARRAY = re.compile(r"(\w+)\s*\[([\d,\s]*)\]")
_SCALARS = (bool, int, float, type(None))


def _literal(value):
    """A number, bool, None or a tuple of them."""
    if isinstance(value, tuple):
        return all(_literal(v) for v in value)
    return isinstance(value, _SCALARS)


def _random(rng, dt, shape):
    """Seeded values of core dtype `dt`: floats uniform in [-1, 1) (powers of two for the
    exponent-only float8_e8m0fnu, any bits for packed words), integers in [-16, 16] within
    the type's range, bools half true; the first element is made nonzero if none is."""
    storage = _dtypes.numpy_dtype(dt)
    if dt == "bool":
        values = rng.random(shape) < 0.5
    elif dt == "float8_e8m0fnu":
        values = 2.0 ** rng.integers(-4, 5, shape)
    elif _dtypes.is_float(dt) and storage.kind == "u":  # packed microscaling words
        values = rng.integers(0, np.iinfo(storage).max, shape, endpoint=True)
    elif _dtypes.is_float(dt):
        values = rng.uniform(-1.0, 1.0, shape)
    else:
        info = np.iinfo(storage)
        values = rng.integers(max(info.min, -16), min(info.max, 16), shape, endpoint=True)
    array = np.asarray(values).astype(storage)
    if array.size and not array.any():
        array.reshape(-1)[0] = np.ones((), storage) if dt != "bool" else True
    return array


def parse_args(specs):
    """{name: value} for the --arg options in order; the arrays draw from one generator
    seeded with SEED, so the same options give the same values in every command."""
    rng = np.random.default_rng(SEED)
    values = {}
    for text in specs:
        name, sep, value = text.partition("=")
        name, value = name.strip(), value.strip()
        if not sep or not name.isidentifier() or not value:
            raise CliError(f"cannot parse --arg {text!r}; expected NAME=DTYPE[D0,D1,...] (e.g. x=f32[128,512]) "
                           f"or NAME=VALUE (e.g. n=2, eps=1e-5)")
        array = _ARRAY.fullmatch(value)
        if array:
            dt = _SHORT_DTYPES.get(array.group(1), array.group(1))
            if dt not in _dtypes._BY_NAME:
                raise CliError(f"unknown dtype {array.group(1)!r} in --arg {text!r}")
            values[name] = _random(rng, dt, [int(d) for d in array.group(2).split(",") if d.strip()])
            continue
        try:
            literal = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            literal = value
        if not _literal(literal):
            raise CliError(f"cannot parse --arg {text!r}: {value!r} is neither an array spec DTYPE[D0,D1,...] "
                           f"nor a number, True, False, None or a tuple of them")
        values[name] = literal
    return values


def describe(name, value):
    """How an input was made, for a report: 'x: float32[128, 512], seeded random' or 'n = 2'."""
    if isinstance(value, np.ndarray):
        return f"{name}: {_dtypes.dtype_name(value.dtype)}{list(value.shape)}"
    return f"{name} = {value!r}"
