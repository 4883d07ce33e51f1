"""bfloat16 / float8_e4m3 / float8_e5m2 as numpy dtypes: bit-exact rounding,
casts, ufuncs, scalars and printing. The rounding references here are written
from scratch on integer bit patterns and float64, independent of the C++ code."""
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nkic.language import bfloat16, float8_e4m3, float8_e5m2

NARROW = [bfloat16, float8_e4m3, float8_e5m2]
FP8 = [float8_e4m3, float8_e5m2]
# (exponent bits, mantissa bits) of each format; all are IEEE-like (bias 2^(E-1)-1).
LAYOUT = {bfloat16: (8, 7), float8_e4m3: (4, 3), float8_e5m2: (5, 2)}
UINT = {bfloat16: np.uint16, float8_e4m3: np.uint8, float8_e5m2: np.uint8}


def f32(*bits):
    return np.array(bits, np.uint32).view(np.float32)


def to_bits(values, dt):
    return np.asarray(values, np.float32).astype(dt).view(UINT[dt])


def is_nan_bits(bits, dt):
    e, m = LAYOUT[dt]
    bits = np.asarray(bits).astype(np.int64)
    return ((bits >> m) & ((1 << e) - 1) == (1 << e) - 1) & (bits & ((1 << m) - 1) != 0)


# ----------------------------------------------------------- references

def ref_decode(bits, dt):
    """Every pattern's value in float64, from the field definitions."""
    e, m = LAYOUT[dt]
    bias = (1 << (e - 1)) - 1
    out = []
    for b in np.asarray(bits).astype(np.int64).ravel():
        sign = -1.0 if b >> (e + m) else 1.0
        exp, man = (b >> m) & ((1 << e) - 1), b & ((1 << m) - 1)
        if exp == (1 << e) - 1:
            out.append(sign * math.inf if man == 0 else math.nan)
        elif exp == 0:
            out.append(sign * math.ldexp(man, 1 - bias - m))
        else:
            out.append(sign * math.ldexp((1 << m) + man, int(exp) - bias - m))
    return np.array(out, np.float64)


def ref_bf16_bits(u32):
    """float32 bit patterns -> bf16 bits, round to nearest even, by comparing
    the exact float64 distances to the two bf16 neighbours."""
    u = np.asarray(u32, np.uint32).astype(np.uint64)
    sign = (u >> 16) & 0x8000
    mag = u & 0x7FFFFFFF
    with np.errstate(invalid="ignore"):  # signalling NaN patterns
        x = mag.astype(np.uint32).view(np.float32).astype(np.float64)
        lo = mag >> 16
        hi = lo + 1
        lo_v = (lo << 16).astype(np.uint32).view(np.float32).astype(np.float64)
        hi_v = (hi << 16).astype(np.uint32).view(np.float32).astype(np.float64)
    hi_v = np.where(hi == 0x7F80, 2.0 ** 128, hi_v)  # the step past the max rounds to inf
    d_lo, d_hi = x - lo_v, hi_v - x
    pick_hi = (d_hi < d_lo) | ((d_hi == d_lo) & ((lo & 1) == 1))
    r = np.where(pick_hi, hi, lo)
    r = np.where(mag == 0x7F800000, 0x7F80, r)
    r = np.where(mag > 0x7F800000, 0x7FC0, r)
    return (r | sign).astype(np.uint16)


def ref_fp8_bits(values, dt):
    """Nearest of all 128 non-negative fp8 patterns, ties to the even one; the
    value one step past the largest finite number stands for inf."""
    e, m = LAYOUT[dt]
    inf_bits = ((1 << e) - 1) << m
    table = ref_decode(np.arange(inf_bits + 1), dt)
    table[inf_bits] = math.ldexp(1.0, (1 << e) - 1 - ((1 << (e - 1)) - 1))
    out = []
    for v in np.asarray(values, np.float32).astype(np.float64):
        if math.isnan(v):
            out.append(inf_bits | 1)
            continue
        a = abs(v)
        if a >= table[inf_bits]:
            best = inf_bits
        else:  # distances to the nearest candidates are exact in float64 here
            d = np.abs(table - a)
            best = min(range(len(table)), key=lambda b: (d[b], b & 1))
        out.append(best | (0x80 if math.copysign(1.0, v) < 0 else 0))
    return np.array(out, np.uint8)


# --------------------------------------------------------- dtype basics

@pytest.mark.parametrize("dt,name,size", [(bfloat16, "bfloat16", 2), (float8_e4m3, "float8_e4m3", 1),
                                          (float8_e5m2, "float8_e5m2", 1)])
def test_dtype_identity(dt, name, size):
    d = np.dtype(dt)
    assert d.name == name and str(d) == name
    assert d.itemsize == size
    assert d.type is dt
    assert dt.__name__ == name
    assert issubclass(dt, np.generic)
    assert np.dtype(name) == d


@pytest.mark.parametrize("dt", NARROW)
def test_creation(dt):
    assert np.zeros(3, dtype=dt).view(UINT[dt]).tolist() == [0, 0, 0]
    assert np.ones(2, dtype=dt).astype(np.float32).tolist() == [1.0, 1.0]
    a = np.array([1.5, -2, 0.25], dtype=dt)
    assert a.dtype == np.dtype(dt) and a.shape == (3,)
    assert a.astype(np.float32).tolist() == [1.5, -2.0, 0.25]
    assert np.full((2, 2), 3.0, dtype=dt).astype(np.float32).tolist() == [[3.0, 3.0], [3.0, 3.0]]
    assert np.arange(4, dtype=dt).astype(np.float32).tolist() == [0.0, 1.0, 2.0, 3.0]
    assert np.array([dt(1.5), dt(2)]).dtype == np.dtype(dt)
    zero_d = np.array(dt(1.5))
    assert zero_d.shape == () and zero_d.dtype == np.dtype(dt)
    assert type(a[0]) is dt


def test_tobytes_gives_the_bits():
    assert np.array([1.5], dtype=bfloat16).tobytes() == np.array([0x3FC0], "<u2").tobytes()
    assert np.array([1.0, -2.0], dtype=float8_e4m3).tobytes() == bytes([0x38, 0xC0])
    assert np.array([1.0, -2.0], dtype=float8_e5m2).tobytes() == bytes([0x3C, 0xC0])


# ------------------------------------------------- bit-exact conversions

def test_bf16_rounding_edges():
    cases = {
        0x3F800000: 0x3F80,
        0x3F808000: 0x3F80,  # 1.00390625: tie -> even, down
        0x3F818000: 0x3F82,  # tie -> even, up
        0x3F808001: 0x3F81,
        0x3F807FFF: 0x3F80,
        0x7F7F0000: 0x7F7F,  # largest finite
        0x7F7F7FFF: 0x7F7F,  # just below the overflow threshold
        0x7F7F8000: 0x7F80,  # tie at the threshold -> inf
        0x7F7FFFFF: 0x7F80,
        0xFF7FFFFF: 0xFF80,
        0x00010000: 0x0001,  # smallest subnormal
        0x00008000: 0x0000,  # half of it -> even zero
        0x00018000: 0x0002,
        0x80008000: 0x8000,  # underflow keeps the sign
        0x80000000: 0x8000,
        0x7F800000: 0x7F80,
        0xFF800000: 0xFF80,
    }
    got = to_bits(f32(*cases), bfloat16)
    assert [hex(b) for b in got] == [hex(b) for b in cases.values()]
    assert to_bits(np.array([1.00390625], np.float32), bfloat16).tolist() == [0x3F80]
    nan = to_bits(f32(0x7FC00000, 0x7F800001, 0xFFC00000), bfloat16)
    assert is_nan_bits(nan, bfloat16).all()


@pytest.mark.parametrize("dt,cases", [
    (float8_e4m3, {1.0: 0x38, 1.0625: 0x38, 1.1875: 0x3A, 240.0: 0x77, 247.9: 0x77, 248.0: 0x78,
                   -248.0: 0xF8, 1e6: 0x78, 2.0 ** -6: 0x08, 2.0 ** -9: 0x01, 2.0 ** -10: 0x00,
                   3 * 2.0 ** -10: 0x02, 7.5 * 2.0 ** -9: 0x08, -(2.0 ** -11): 0x80, -0.0: 0x80,
                   math.inf: 0x78, -math.inf: 0xF8}),
    (float8_e5m2, {1.0: 0x3C, 1.125: 0x3C, 1.375: 0x3E, 57344.0: 0x7B, 61439.0: 0x7B, 61440.0: 0x7C,
                   -61440.0: 0xFC, 2.0 ** -16: 0x01, 2.0 ** -17: 0x00, 3 * 2.0 ** -17: 0x02,
                   2.0 ** -14: 0x04, -0.0: 0x80, math.inf: 0x7C}),
])
def test_fp8_rounding_edges(dt, cases):
    got = to_bits(list(cases), dt)
    assert [hex(b) for b in got] == [hex(b) for b in cases.values()]
    assert is_nan_bits(to_bits([math.nan], dt), dt).all()


@pytest.mark.parametrize("dt", NARROW)
def test_every_pattern_decodes_and_round_trips(dt):
    e, m = LAYOUT[dt]
    bits = np.arange(1 << (1 + e + m)).astype(UINT[dt])
    with np.errstate(invalid="ignore"):  # bf16 keeps signalling NaNs signalling
        values = bits.view(dt).astype(np.float64)
    want = ref_decode(bits, dt)
    nan = is_nan_bits(bits, dt)
    assert np.isnan(values[nan]).all()
    np.testing.assert_array_equal(values[~nan], want[~nan])
    assert (np.signbit(values[~nan]) == (bits[~nan] >> (e + m)).astype(bool)).all()
    again = bits.view(dt).astype(np.float32).astype(dt).view(UINT[dt])
    np.testing.assert_array_equal(again[~nan], bits[~nan])
    assert is_nan_bits(again[nan], dt).all()


def test_casts_from_float64_round_via_float32():
    x = np.array([1.00390625, 3.0e38, 1e-45], np.float64)
    np.testing.assert_array_equal(x.astype(bfloat16).view(np.uint16),
                                  x.astype(np.float32).astype(bfloat16).view(np.uint16))


@pytest.mark.parametrize("src", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
                                 np.uint64, np.float16, np.float32, np.float64, np.bool_])
@pytest.mark.parametrize("dt", NARROW)
def test_casts_with_every_numpy_type(src, dt):
    x = np.array([0, 1, 3, 100], dtype=src) if src is not np.bool_ else np.array([False, True])
    y = x.astype(dt)
    np.testing.assert_array_equal(y.view(UINT[dt]), x.astype(np.float32).astype(dt).view(UINT[dt]))
    via_f32 = x.astype(np.float32).astype(dt).astype(np.float32)
    np.testing.assert_array_equal(y.astype(src), via_f32.astype(src))


def test_float_to_integer_casts_truncate_and_saturate():
    a = np.array([1.75, -1.75, 300.0, -300.0, np.nan, np.inf], np.float32).astype(bfloat16)
    assert a.astype(np.int8).tolist() == [1, -1, 127, -128, 0, 127]
    assert a.astype(np.uint8).tolist() == [1, 0, 255, 0, 0, 255]
    assert a.astype(np.int32).tolist() == [1, -1, 300, -300, 0, 2**31 - 1]
    assert a.astype(np.bool_).tolist() == [True, True, True, True, True, True]
    assert np.array([0.0, -0.0], dtype=bfloat16).astype(np.bool_).tolist() == [False, False]


@pytest.mark.parametrize("src", NARROW)
@pytest.mark.parametrize("dst", NARROW)
def test_casts_between_narrow_types(src, dst):
    e, m = LAYOUT[src]
    bits = np.arange(1 << (1 + e + m)).astype(UINT[src])
    x = bits.view(src)
    got = x.astype(dst).view(UINT[dst])
    want = x.astype(np.float32).astype(dst).view(UINT[dst])
    nan = is_nan_bits(want, dst)
    np.testing.assert_array_equal(got[~nan], want[~nan])
    assert is_nan_bits(got[nan], dst).all()


def test_promotion():
    assert np.result_type(bfloat16, np.float32) == np.float32
    assert np.result_type(bfloat16, np.float64) == np.float64
    assert np.result_type(float8_e4m3, bfloat16) == np.dtype(bfloat16)
    assert np.result_type(float8_e5m2, bfloat16) == np.dtype(bfloat16)
    assert np.result_type(float8_e4m3, np.float16) == np.float16
    assert np.result_type(bfloat16, np.uint8) == np.dtype(bfloat16)
    assert np.can_cast(bfloat16, np.float32) and not np.can_cast(np.float32, bfloat16)


# ---------------------------------------------------------------- ufuncs

def test_bf16_arithmetic_rounds_to_the_dtype():
    one = np.array([1.0], dtype=bfloat16)
    tiny = np.array([2.0 ** -8], dtype=bfloat16)
    assert (one + tiny).view(np.uint16).tolist() == [0x3F80]  # tie -> even
    assert (one + 3 * tiny.astype(np.float32)).dtype == np.float32
    three = np.array([3 * 2.0 ** -8], dtype=bfloat16)
    assert (one + three).view(np.uint16).tolist() == [0x3F82]


@pytest.mark.parametrize("dt", NARROW)
@pytest.mark.parametrize("op", [np.add, np.subtract, np.multiply, np.divide, np.maximum, np.minimum])
def test_binary_ufuncs_compute_in_fp32_and_round_once(dt, op):
    rng = np.random.default_rng(0)
    a = rng.normal(0, 4, 500).astype(np.float32).astype(dt)
    b = rng.normal(0, 4, 500).astype(np.float32).astype(dt)
    with np.errstate(all="ignore"):
        got = op(a, b)
        want = op(a.astype(np.float32), b.astype(np.float32)).astype(dt)
    assert got.dtype == np.dtype(dt)
    np.testing.assert_array_equal(got.view(UINT[dt]), want.view(UINT[dt]))


@pytest.mark.parametrize("dt", NARROW)
@pytest.mark.parametrize("op", [np.negative, np.absolute, np.sqrt, np.exp])
def test_unary_ufuncs(dt, op):
    a = np.array([0.5, -1.5, 2.0, 0.0, -0.0, np.inf, np.nan], np.float32).astype(dt)
    with np.errstate(all="ignore"):
        got = op(a)
        want = op(a.astype(np.float32)).astype(dt)
    assert got.dtype == np.dtype(dt)
    np.testing.assert_array_equal(got.astype(np.float32), want.astype(np.float32))
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("dt", NARROW)
def test_comparisons_and_predicates(dt):
    a = np.array([1.0, 2.0, np.nan, -np.inf], np.float32).astype(dt)
    b = np.array([2.0, 2.0, 1.0, 0.0], np.float32).astype(dt)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # NaN compares quietly, as numpy's own floats do
        assert (a < b).tolist() == [True, False, False, True]
        assert (a <= b).tolist() == [True, True, False, True]
        assert (a > b).tolist() == [False, False, False, False]
        assert (a >= b).tolist() == [False, True, False, False]
        assert (a == b).tolist() == [False, True, False, False]
        assert (a != b).tolist() == [True, False, True, True]
        assert np.isnan(a).tolist() == [False, False, True, False]
        assert np.isinf(a).tolist() == [False, False, False, True]
        assert np.isfinite(a).tolist() == [True, True, False, False]
        assert np.isnan(np.maximum(a, b).astype(np.float32)[2])  # maximum propagates NaN


def test_mixing_with_float32():
    a = np.array([1.5, 2.25, -3.0], dtype=bfloat16)
    b = np.array([0.1, 0.2, 0.3], np.float32)
    np.testing.assert_array_equal(a.astype(np.float32) + b, np.float32([1.5, 2.25, -3.0]) + b)
    mixed = a + b
    assert mixed.dtype == np.float32
    np.testing.assert_array_equal(mixed, a.astype(np.float32) + b)
    np.testing.assert_allclose(a.astype(np.float32), [1.5, 2.25, -3.0])
    np.testing.assert_allclose(np.float32([1.01, 3.14159]).astype(bfloat16).astype(np.float32),
                               [1.01, 3.14159], rtol=2.0 ** -8)


def test_reductions_and_sorting():
    a = np.array([3.0, -1.0, 2.0, 0.5], dtype=bfloat16)
    assert float(a.sum()) == 4.5
    assert a.argmax() == 0 and a.argmin() == 1
    assert np.sort(a).astype(np.float32).tolist() == [-1.0, 0.5, 2.0, 3.0]
    assert float(np.dot(a, a)) == 14.25


# ---------------------------------------------------------------- scalars

def test_scalar_behaviour():
    x = bfloat16(1.5)
    assert float(x) == 1.5 and int(bfloat16(2.75)) == 2 and bool(x) and not bool(bfloat16(0))
    assert str(x) == "1.5" and repr(x) == "1.5"
    assert hash(x) == hash(1.5)
    assert x == 1.5 and x != 1.25 and x < 2 and x > 1 and x <= 1.5 and x >= 1.5
    assert x == bfloat16(1.5) and x == float8_e4m3(1.5)
    assert type(x + bfloat16(1)) is bfloat16 and float(x + bfloat16(1)) == 2.5
    assert float(x * bfloat16(2)) == 3.0 and float(x - bfloat16(2)) == -0.5 and float(x / bfloat16(2)) == 0.75
    assert float(-x) == -1.5 and float(abs(bfloat16(-2))) == 2.0
    assert float(x + 1.0) == 2.5 and float(2.0 * x) == 3.0
    assert np.array(bfloat16(1.00390625)).view(np.uint16) == 0x3F80  # tie -> even
    assert bfloat16("2.5") == 2.5 and float8_e5m2(bfloat16(3)) == 3
    assert float(bfloat16(np.float32(1.00390625))) == 1.0
    assert f"{x:.3f}" == "1.500"
    assert {bfloat16(1.5): "a"}[bfloat16(1.5)] == "a"
    with pytest.raises(TypeError):
        bfloat16([1, 2])


@pytest.mark.parametrize("dt,value,text", [
    (bfloat16, 1.5, "1.5"), (bfloat16, 2.0, "2"), (bfloat16, 3.14159, "3.14"), (bfloat16, -0.0, "-0"),
    (bfloat16, 1e-5, "1e-05"), (bfloat16, 2000.0, "2000"), (bfloat16, math.inf, "inf"),
    (bfloat16, -math.inf, "-inf"), (bfloat16, math.nan, "nan"), (float8_e4m3, 240.0, "240"),
    (float8_e4m3, 0.3, "0.3"), (float8_e5m2, 57344.0, "57344"),
])
def test_scalar_text(dt, value, text):
    assert str(dt(value)) == text and repr(dt(value)) == text


def test_array_printing():
    assert repr(np.array([1.5, 2.0, -3.0], dtype=bfloat16)) == "array([1.5, 2, -3], dtype=bfloat16)"
    assert str(np.array([1.5, np.inf], dtype=bfloat16)) == "[1.5 inf]"
    assert repr(np.array([[1.0, 0.5]], dtype=float8_e4m3)) == "array([[1, 0.5]], dtype='float8_e4m3')"
    assert "float8_e5m2" in repr(np.zeros(2, dtype=float8_e5m2))
    assert "..." in repr(np.zeros(5000, dtype=bfloat16))


# --------------------------------------------------- property-based tests

@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 2**32 - 1), min_size=1, max_size=64))
def test_astype_bf16_matches_reference_on_any_bits(bits):
    u = np.array(bits, np.uint32)
    got = u.view(np.float32).astype(bfloat16).view(np.uint16)
    want = ref_bf16_bits(u)
    nan = (u & 0x7FFFFFFF) > 0x7F800000
    np.testing.assert_array_equal(got[~nan], want[~nan])
    assert is_nan_bits(got[nan], bfloat16).all()


# Inputs near a bf16 rounding boundary: a bf16 pattern with low bits close to
# the halfway point 0x8000.
@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 0xFFFF), st.integers(0x7FF0, 0x8010)), min_size=1, max_size=64))
def test_astype_bf16_matches_reference_near_ties(pairs):
    u = np.array([(hi << 16) | lo for hi, lo in pairs], np.uint32)
    got = u.view(np.float32).astype(bfloat16).view(np.uint16)
    nan = (u & 0x7FFFFFFF) > 0x7F800000
    np.testing.assert_array_equal(got[~nan], ref_bf16_bits(u)[~nan])


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(FP8),
       st.lists(st.floats(width=32), min_size=1,
                max_size=32))
def test_astype_fp8_matches_nearest_search(dt, values):
    x = np.array(values, np.float32)
    got = x.astype(dt).view(np.uint8)
    want = ref_fp8_bits(x, dt)
    nan = np.isnan(x)
    np.testing.assert_array_equal(got[~nan], want[~nan])
    assert is_nan_bits(got[nan], dt).all()


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(FP8), st.lists(st.floats(-300.0, 300.0, width=32), min_size=1, max_size=32))
def test_astype_fp8_in_range_matches_nearest_search(dt, values):
    x = np.array(values, np.float32)
    np.testing.assert_array_equal(x.astype(dt).view(np.uint8), ref_fp8_bits(x, dt))
