"""Reference numerics shared by the test_numerics_api_* modules, and tests of the
references themselves (so a wrong reference cannot hide a wrong simulator).

The hardware model the references implement (NKI_API.md §1.6, §3.2, §3.4):
engines decode every operand to fp32, compute in fp32, and round the fp32 result
once to the destination dtype. Float destinations round to nearest, ties to even
(bf16/fp8 through nkic's numpy dtypes, fp16 through numpy). Integer destinations
truncate toward zero, saturated to the format's range, NaN -> 0 (the conversion
nkic specifies in src/sim/Numerics.h, matching NKI's numpy-based simulator;
NKI_API.md is silent).

Tolerances (`within`): when the fp32 result r satisfies |r - f(x)| <= tol, with
f(x) the exact value in float64, rounding being monotonic gives
round(f(x) - tol) <= round(r) <= round(f(x) + tol) in every destination format,
so the check is exact on the destination grid, no extra slack for the final
rounding."""
import math
import zlib

import numpy as np
import pytest

import neuronxcc.nki.language as nl

U = 2.0 ** -24  # unit roundoff of fp32

FLOATS = [np.float32, np.float16, nl.bfloat16, nl.float8_e4m3, nl.float8_e5m2]
NARROW = [np.float16, nl.bfloat16, nl.float8_e4m3, nl.float8_e5m2]
INTS = [np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32]
ALL = FLOATS + INTS
NAMES = {np.float32: "f32", np.float16: "f16", nl.bfloat16: "bf16", nl.float8_e4m3: "e4m3",
         nl.float8_e5m2: "e5m2", np.int8: "i8", np.int16: "i16", np.int32: "i32", np.uint8: "u8",
         np.uint16: "u16", np.uint32: "u32", np.bool_: "bool"}
UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32}
# (exponent bits, mantissa bits); every float format here is IEEE-like: bias
# 2^(E-1)-1, all-ones exponent = inf/NaN (e4m3 as ml_dtypes' float8_e4m3: max 240).
LAYOUT = {np.float32: (8, 23), np.float16: (5, 10), nl.bfloat16: (8, 7), nl.float8_e4m3: (4, 3),
          nl.float8_e5m2: (5, 2)}


def dt_id(dt):
    return NAMES[dt]


def seed(*parts):
    """A deterministic RNG per test case (str hashes are salted per process)."""
    key = "/".join(dt_id(p) if isinstance(p, type) and p in NAMES else str(p) for p in parts)
    return np.random.default_rng(zlib.crc32(key.encode()))


def dparams(dts):
    return [pytest.param(d, id=dt_id(d)) for d in dts]


def is_float(dt):
    return dt in LAYOUT


def fmax(dt):
    """Largest finite value of a float format, from its layout."""
    e, m = LAYOUT[dt]
    bias = (1 << (e - 1)) - 1
    return math.ldexp(2.0 - 2.0 ** -m, (1 << e) - 2 - bias)


def ftiny(dt):
    """Smallest positive normal value of a float format."""
    e, _ = LAYOUT[dt]
    return math.ldexp(1.0, 2 - (1 << (e - 1)))


def bits(a):
    a = np.ascontiguousarray(a)
    return a.view(UINT[a.dtype.itemsize])


def decode(a):
    """Exact float64 values of a kernel input/output of any dtype."""
    a = np.asarray(a)
    if a.dtype == np.bool_:
        return a.astype(np.float64)
    if np.issubdtype(a.dtype, np.integer):
        return a.astype(np.float64)
    return a.astype(np.float32).astype(np.float64)


def to_f32(a):
    """An operand as the fp32 value an engine reads (integers round to fp32 here)."""
    a = np.asarray(a)
    if a.dtype == np.bool_:
        return a.astype(np.float32)
    return a.astype(np.float32)


def rnd(v, dt):
    """The value v (float64 or float32 array) rounded as the hardware does: to
    fp32 first (the engine's result), then once to `dt`."""
    with np.errstate(over="ignore", invalid="ignore"):
        v32 = np.asarray(v, np.float64).astype(np.float32)
        if dt is np.float32:
            return v32
        if dt is np.bool_:
            return v32 != 0
        if is_float(dt):
            return v32.astype(dt)
        info = np.iinfo(dt)
        w = np.where(np.isnan(v32), 0.0, v32.astype(np.float64))
        return np.trunc(np.clip(w, info.min, info.max)).astype(dt)


def sat(v, dt):
    """Exact integers (int64 / Python ints) saturated to integer format dt."""
    info = np.iinfo(dt)
    return np.clip(np.asarray(v, np.int64), info.min, info.max).astype(dt)


def ulp32(v):
    """fp32 ulp of |v| (float64 array); 0 where v is not finite."""
    v = np.abs(np.asarray(v, np.float64))
    with np.errstate(over="ignore", invalid="ignore"):
        s = np.spacing(np.minimum(v, 3.4e38).astype(np.float32)).astype(np.float64)
    return np.where(np.isfinite(v), s, 0.0)


def assert_bits(got, expected, what=""):
    """Bit-for-bit equality, dtype included (NaNs must be NaNs of any payload)."""
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.dtype == expected.dtype, (what, got.dtype, expected.dtype)
    assert got.shape == expected.shape, (what, got.shape, expected.shape)
    if got.dtype == np.bool_ or np.issubdtype(got.dtype, np.integer):
        bad = got != expected
    else:
        gnan, enan = np.isnan(got.astype(np.float32)), np.isnan(expected.astype(np.float32))
        bad = (bits(got) != bits(expected)) & ~(gnan & enan)
    if bad.any():
        idx = tuple(np.argwhere(bad)[0])
        raise AssertionError(f"{what}: {int(bad.sum())} of {bad.size} elements differ; first at {idx}: "
                             f"got {got[idx]!r} expected {expected[idx]!r}")


def within(got, ref, tol, dt, what="", x=None):
    """got (dtype dt) equals the fp32 result of some computation r with
    |r - ref| <= tol, rounded once to dt (see the module docstring)."""
    got = np.asarray(got)
    assert got.dtype == np.dtype(dt), (what, got.dtype, np.dtype(dt))
    ref = np.asarray(ref, np.float64)
    tol = np.where(np.isfinite(ref), np.broadcast_to(np.asarray(tol, np.float64), ref.shape), 0.0)
    g = decode(got)
    lo, hi = decode(rnd(ref - tol, dt)), decode(rnd(ref + tol, dt))
    if not is_float(dt):
        # The int result also saturates; a NaN result stores 0.
        nan = np.isnan(ref)
        ok = (g >= lo) & (g <= hi)
        ok = np.where(nan, g == 0, ok)
    else:
        nan = np.isnan(ref)
        ok = ((g >= lo) & (g <= hi)) | (nan & np.isnan(g))
    if not ok.all():
        idx = tuple(np.argwhere(~ok)[0])
        xs = "" if x is None else f" input {np.asarray(x)[idx]!r}"
        raise AssertionError(f"{what}: {int((~ok).sum())} of {ok.size} elements out of bounds; first at "
                             f"{idx}:{xs} got {g[idx]!r}, exact {ref[idx]!r}, allowed [{lo[idx]!r}, "
                             f"{hi[idx]!r}] (tol {tol[idx]:.3g})")


def gamma(n):
    """Higham's gamma_n = n u / (1 - n u): the relative bound of any-order fp32
    summation of n terms (applied to sum |x|)."""
    return n * U / (1 - n * U)


def values(dt, shape, rng, lo=-4.0, hi=4.0):
    """Random values exactly representable in dt: uniform floats in [lo, hi]
    rounded to dt, or uniform integers over the range [lo, hi] clipped to dt."""
    if is_float(dt):
        return rng.uniform(lo, hi, shape).astype(np.float32).astype(dt)
    info = np.iinfo(dt)
    a, b = max(int(math.ceil(lo)), int(info.min)), min(int(math.floor(hi)), int(info.max))
    return rng.integers(a, b, shape, endpoint=True, dtype=np.int64).astype(dt)


def full_range(dt, shape, rng):
    """Integers over the whole range of an integer format, extremes included."""
    info = np.iinfo(dt)
    a = rng.integers(int(info.min), int(info.max), shape, endpoint=True, dtype=np.int64)
    flat = a.reshape(-1)
    flat[:4] = [info.min, info.max, 0, info.min + 1 if info.min < 0 else 1]
    return a.astype(dt)


def promote(a, b):
    """NKI_API.md §1.6 promotion of two operand dtypes (Python scalars: pass
    'int' / 'float' / 'bool' for the weak scalar types)."""
    weak = {"bool": np.uint8, "int": np.int32, "float": np.float32}
    a, b = weak.get(a, a), weak.get(b, b)
    a, b = (np.uint8 if d is np.bool_ else d for d in (a, b))
    if a is b:
        return a
    fa, fb = is_float(a), is_float(b)
    if fa and fb:
        za, zb = np.dtype(a).itemsize, np.dtype(b).itemsize
        if za != zb:
            return a if za > zb else b
        return nl.bfloat16 if za == 1 else np.float32  # (fp16, bf16) -> fp32, (e4m3, e5m2) -> bf16
    if fa or fb:
        return a if fa else b
    ia, ib = np.iinfo(a), np.iinfo(b)
    za, zb = np.dtype(a).itemsize, np.dtype(b).itemsize
    if (ia.min < 0) == (ib.min < 0):
        return a if za >= zb else b
    s, u = (a, b) if ia.min < 0 else (b, a)
    if np.dtype(s).itemsize > np.dtype(u).itemsize:
        return s
    return {1: np.int16, 2: np.int32}.get(np.dtype(u).itemsize, np.float32)  # no 64-bit ints on HW


# ------------------------------------------------------ tests of the references

def test_rnd_float_formats_ties_to_even():
    # 1 + 2^-8 is a bf16 tie (even down), 1 + 3*2^-8 a tie (even up).
    assert bits(rnd(np.array([1 + 2 ** -8, 1 + 3 * 2 ** -8]), nl.bfloat16)).tolist() == [0x3F80, 0x3F82]
    # fp16: 1 + 2^-11 ties down, 1 + 3*2^-11 ties up.
    assert bits(rnd(np.array([1 + 2 ** -11, 1 + 3 * 2 ** -11]), np.float16)).tolist() == [0x3C00, 0x3C02]
    # e4m3: 1.0625 ties between 1 (0x38) and 1.125 (0x39) -> 0x38; 1.1875 -> 1.25 (0x3A).
    assert bits(rnd(np.array([1.0625, 1.1875]), nl.float8_e4m3)).tolist() == [0x38, 0x3A]
    # e5m2: 1.125 ties between 1 (0x3C) and 1.25 (0x3D) -> 0x3C; 1.375 -> 1.5 (0x3E).
    assert bits(rnd(np.array([1.125, 1.375]), nl.float8_e5m2)).tolist() == [0x3C, 0x3E]


def test_rnd_integer_formats():
    v = np.array([2.5, 3.5, -2.5, 1e10, -1e10, np.nan, np.inf, -np.inf, 0.49999997])
    assert rnd(v, np.int8).tolist() == [2, 3, -2, 127, -128, 0, 127, -128, 0]
    assert rnd(v, np.uint16).tolist() == [2, 3, 0, 65535, 0, 0, 65535, 0, 0]
    # Through fp32 first: 2^31 - 1 is 2^31 in fp32, then saturates.
    assert rnd(np.array([2.0 ** 31 - 1, 16777217.0]), np.int32).tolist() == [2 ** 31 - 1, 16777216]


def test_format_constants():
    assert fmax(nl.bfloat16) == float(np.finfo(np.float32).max) * (1 - 2 ** -8) / (1 - 2 ** -24)
    assert fmax(np.float16) == 65504.0 and ftiny(np.float16) == 2.0 ** -14
    assert fmax(nl.float8_e4m3) == 240.0 and ftiny(nl.float8_e4m3) == 2.0 ** -6
    assert fmax(nl.float8_e5m2) == 57344.0 and ftiny(nl.float8_e5m2) == 2.0 ** -14


def test_within_accepts_only_the_rounded_interval():
    ref = np.array([1.0, 1.0])
    got = np.array([1.0, 1.0 + 2 ** -7], np.float32).astype(nl.bfloat16)
    within(got[:1], ref[:1], 0.0, nl.bfloat16)
    with pytest.raises(AssertionError):
        within(got, ref, 2 ** -10, nl.bfloat16)
    with pytest.raises(AssertionError):  # 1 + 2^-8 is a tie and rounds to even (1.0) ...
        within(got, ref, 2 ** -8, nl.bfloat16)
    within(got, ref, 2 ** -8 * 1.01, nl.bfloat16)  # ... just past the tie admits 1 + 2^-7


def test_promote_documented_pairs():
    # Every pair spelled out in NKI_API.md §1.6 (tfloat32 ones aside).
    assert promote(np.float32, nl.bfloat16) is np.float32
    assert promote(np.float16, nl.bfloat16) is np.float32
    assert promote(nl.float8_e4m3, np.float16) is np.float16
    assert promote(nl.float8_e4m3, nl.bfloat16) is nl.bfloat16
    assert promote(nl.float8_e4m3, nl.float8_e5m2) is nl.bfloat16
    assert promote(np.int32, np.float16) is np.float16
    assert promote(np.int16, np.int32) is np.int32
    assert promote(np.uint8, np.uint16) is np.uint16
    assert promote(np.uint16, np.int32) is np.int32
    assert promote(np.int8, np.uint8) is np.int16
    assert promote(np.int8, np.uint16) is np.int32
    assert promote(np.int32, np.uint32) is np.float32
    assert promote(np.int8, "int") is np.int32
    assert promote(np.float16, "float") is np.float32
    assert promote(np.uint8, "bool") is np.uint8
