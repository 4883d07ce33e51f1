"""Bit-exact rounding of bf16 / fp16 / fp8 outputs through the whole kernel
path (HBM -> load -> compute -> store -> HBM), on edge values: ties to even,
values just off a tie, subnormals (and the subnormal/normal boundary), +-0,
inf/NaN propagation, and overflow to infinity (every format here is IEEE-like:
the largest finite value plus half an ulp is a tie that rounds to the even
neighbour, +-inf -- bf16 0x7F7F8000 -> 0x7F80, fp16 65520 -> inf, e5m2 61440
-> inf, e4m3 248 -> inf with max 240).

References are written here, independently of nkic and of each other:
  * fp16: numpy's float32 -> float16 conversion;
  * bf16: round-to-nearest-even on the float32 bit pattern, by integer ops;
  * fp8: the nearest of all 256 patterns' values, decoded from the field
    definitions, ties to the even pattern, past max + ulp/2 -> inf.
NaN outputs must be NaN patterns (any payload). Several producers are checked:
nl.copy(dtype=), tensor.astype, nl.multiply(x, 2.0, dtype=) on x = edge / 2,
nl.add(x, -0.0 tile, dtype=), nisa.activation(copy, dtype=),
nisa.tensor_scalar(dtype=), nisa.tensor_reduce(max, dtype=), nl.load(dtype=),
and nl.store into an HBM tensor of the narrow dtype. Narrow -> narrow casts are
exhaustive over every source pattern."""
import math

import numpy as np
import pytest

from neuronxcc import nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

BF16, F16, E4M3, E5M2 = nl.bfloat16, np.float16, nl.float8_e4m3, nl.float8_e5m2
FORMATS = {BF16: (8, 7), F16: (5, 10), E4M3: (4, 3), E5M2: (5, 2)}  # (exponent bits, mantissa bits)
UINT = {BF16: np.uint16, F16: np.uint16, E4M3: np.uint8, E5M2: np.uint8}
ID = {BF16: "bf16", F16: "f16", E4M3: "e4m3", E5M2: "e5m2"}


def fparams(fmts=FORMATS):
    return [pytest.param(f, id=ID[f]) for f in fmts]


# ------------------------------------------------------------------ independent references

def field_value(b, fmt):
    """The value of pattern b of fmt from its fields (float64; NaN for NaNs)."""
    e, m = FORMATS[fmt]
    bias = (1 << (e - 1)) - 1
    sign = -1.0 if (b >> (e + m)) & 1 else 1.0
    exp, man = (b >> m) & ((1 << e) - 1), b & ((1 << m) - 1)
    if exp == (1 << e) - 1:
        return sign * math.inf if man == 0 else math.nan
    if exp == 0:
        return sign * math.ldexp(man, 1 - bias - m)
    return sign * math.ldexp((1 << m) | man, exp - bias - m)


def params(fmt):
    e, m = FORMATS[fmt]
    bias = (1 << (e - 1)) - 1
    emax = (1 << e) - 2 - bias
    return dict(emin=1 - bias, emax=emax, m=m, max=math.ldexp(2.0 - 2.0 ** -m, emax),
                min_sub=math.ldexp(1.0, 1 - bias - m), min_norm=math.ldexp(1.0, 1 - bias))


def ref_bf16(x32):
    """float32 -> bf16 bits: keep the top 16 bits, round the dropped 16 to
    nearest, ties to an even kept half; the carry walks into the exponent."""
    u = np.ascontiguousarray(x32, np.float32).view(np.uint32).astype(np.uint64)
    keep, drop = u >> 16, u & 0xFFFF
    up = (drop > 0x8000) | ((drop == 0x8000) & ((keep & 1) == 1))
    return (keep + up.astype(np.uint64)).astype(np.uint16)


def ref_fp8(x32, fmt):
    """float32 -> fp8 bits by nearest search over the format's non-negative
    finite values (ties to the even pattern); a virtual value 2^(emax+1) one
    step past the largest stands for inf (IEEE overflow)."""
    e, m = FORMATS[fmt]
    inf_bits = ((1 << e) - 1) << m
    pats = np.arange(inf_bits + 1)                          # +0 ... largest finite, then inf
    vals = np.array([field_value(int(b), fmt) for b in pats[:-1]] + [math.ldexp(1.0, params(fmt)["emax"] + 1)])
    x = np.asarray(x32, np.float32).astype(np.float64).ravel()
    a = np.abs(x)
    i = np.clip(np.searchsorted(vals, a), 1, len(vals) - 1)  # vals[i-1] < a <= vals[i]
    lo, hi = vals[i - 1], vals[i]
    pick_hi = (hi - a < a - lo) | ((hi - a == a - lo) & (pats[i] % 2 == 0))
    best = np.where(pick_hi, pats[i], pats[i - 1])
    best = np.where(a >= vals[-1], inf_bits, best)
    best = np.where(a == 0, 0, best)
    best = best | np.where(np.signbit(x), 1 << (e + m), 0)
    best = np.where(np.isnan(x), inf_bits | 1, best)        # some NaN
    return best.astype(np.uint8).reshape(np.shape(x32))


def ref_bits(x32, fmt):
    if fmt is F16:
        with np.errstate(over="ignore"):
            return np.asarray(x32, np.float32).astype(np.float16).view(np.uint16)
    if fmt is BF16:
        return ref_bf16(x32)
    return ref_fp8(x32, fmt)


def is_nan_bits(b, fmt):
    e, m = FORMATS[fmt]
    b = np.asarray(b).astype(np.int64)
    return (((b >> m) & ((1 << e) - 1)) == (1 << e) - 1) & ((b & ((1 << m) - 1)) != 0)


def assert_rounded(got, x32, fmt, what):
    """got (dtype fmt) holds the correctly rounded x32, bit for bit; NaN -> any NaN."""
    assert got.dtype == np.dtype(fmt), (what, got.dtype)
    gb = np.ascontiguousarray(got).view(UINT[fmt])
    eb = ref_bits(x32, fmt)
    nan_x = np.isnan(np.asarray(x32, np.float32))
    ok = np.where(nan_x, is_nan_bits(gb, fmt), gb == eb)
    if not ok.all():
        i = tuple(np.argwhere(~ok)[0])
        x = np.asarray(x32, np.float32)[i]
        raise AssertionError(f"{what}: {int((~ok).sum())} of {ok.size} wrong; first: input {x!r} "
                             f"(f32 bits {np.float32(x).view(np.uint32):#010x}) -> got {int(gb[i]):#x}, "
                             f"expected {int(eb[i]):#x}")


def edge_values(fmt):
    """float32 values around every rounding edge of fmt, both signs."""
    p = params(fmt)
    m, ulp1 = p["m"], 2.0 ** -p["m"]
    v = []
    for ex in (p["emin"], 0, 1, p["emax"] - 1, p["emax"]):    # ties in several binades
        for k in (0, 1, 2, 3, (1 << m) - 2, (1 << m) - 1):
            base = math.ldexp(1.0 + k * ulp1, ex)
            tie = base + math.ldexp(ulp1 / 2, ex)
            v += [base, tie, np.nextafter(np.float32(tie), np.float32(0)),
                  np.nextafter(np.float32(tie), np.float32(np.inf))]
    ms = p["min_sub"]
    for k in (0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.5, 3.5):        # subnormal grid and its ties
        v.append(k * ms)
    largest_sub = p["min_norm"] - ms
    v += [largest_sub, largest_sub + ms / 2, largest_sub + ms / 4, p["min_norm"],
          np.nextafter(np.float32(ms / 2), np.float32(0)), np.nextafter(np.float32(ms / 2), np.float32(1))]
    top = p["max"] + math.ldexp(ulp1 / 2, p["emax"])            # the overflow tie
    v += [p["max"], top, np.nextafter(np.float32(top), np.float32(0)),
          np.nextafter(np.float32(top), np.float32(np.inf)), 2 * p["max"], 3.4e38]
    v += [0.0, 1e-45, 1e-40, np.float32(1.1754942e-38), np.inf, np.nan]  # f32 subnormals flush to 0 here
    with np.errstate(over="ignore"):  # 2 * max of bf16 is beyond fp32 too: inf
        x = np.array(v, np.float64).astype(np.float32)
    x = np.concatenate([x, -x])
    n = len(x)
    cols = 4
    rows = math.ceil(n / cols)
    x = np.concatenate([x, np.ones(rows * cols - n, np.float32)])
    return x.reshape(rows, cols)


def test_references_agree_on_shared_edges():
    """Sanity of the three references: hand-derived patterns."""
    f = np.array([1 + 2 ** -8, 1 + 3 * 2 ** -8, 3.3895314e38, 3.3961776e38], np.float32)
    assert ref_bf16(f).tolist() == [0x3F80, 0x3F82, 0x7F7F, 0x7F80]
    assert ref_fp8(np.array([1.0625, 1.1875, 240.0, 247.99998, 248.0, 2 ** -10, 2 ** -10 * 1.0001],
                            np.float32), E4M3).tolist() == [0x38, 0x3A, 0x77, 0x77, 0x78, 0x00, 0x01]
    assert ref_fp8(np.array([57344.0, 61440.0, 2 ** -17, -0.0], np.float32), E5M2).tolist() == [0x7B, 0x7C, 0x00,
                                                                                                  0x80]
    assert [field_value(b, E4M3) for b in (0x01, 0x08, 0x77, 0x78)] == [2 ** -9, 2 ** -6, 240.0, math.inf]


# ------------------------------------------------------------------ producers

@nki.jit
def produce_kernel(x, fn, dtype):
    r = fn(nl.load(x), dtype)
    out = nl.ndarray(r.shape, dtype=r.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=r)
    return out


@nki.jit
def store_kernel(x, dtype):
    out = nl.ndarray(x.shape, dtype=dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.load(x))
    return out


@nki.jit
def load_kernel(x, dtype):
    t = nl.load(x, dtype=dtype)
    out = nl.ndarray(x.shape, dtype=dtype, buffer=nl.shared_hbm)
    nl.store(out, value=t)
    return out


@nki.jit
def add_neg_zero_kernel(x, dtype):
    z = nl.full(x.shape, -0.0, dtype=nl.float32)
    r = nl.add(nl.load(x), z, dtype=dtype)
    out = nl.ndarray(r.shape, dtype=r.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=r)
    return out


@nki.jit
def reduce_max_kernel(x, dtype):
    # Each element paired with -inf along a new free axis: max picks the element.
    t = nl.load(x)
    pair = nl.ndarray((x.shape[0], x.shape[1], 2), dtype=nl.float32)
    pair[:, :, 0] = t
    pair[:, :, 1] = nl.full((x.shape[0], x.shape[1]), -np.inf, dtype=nl.float32)
    r = nisa.tensor_reduce(nl.maximum, pair, axis=2, dtype=dtype)
    out = nl.ndarray(r.shape, dtype=r.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=r)
    return out


PRODUCERS = {
    "nl.copy": lambda x, d: produce_kernel(x, fn=lambda t, dt: nl.copy(t, dtype=dt), dtype=d),
    "astype": lambda x, d: produce_kernel(x, fn=lambda t, dt: t.astype(dt), dtype=d),
    "activation": lambda x, d: produce_kernel(x, fn=lambda t, dt: nisa.activation(nl.copy, t, dtype=dt), dtype=d),
    "tensor_scalar": lambda x, d: produce_kernel(
        x, fn=lambda t, dt: nisa.tensor_scalar(t, nl.multiply, 1.0, dtype=dt), dtype=d),
    "add(-0)": lambda x, d: add_neg_zero_kernel(x, dtype=d),
    "tensor_reduce(max)": lambda x, d: reduce_max_kernel(x, dtype=d),
    "nl.load(dtype=)": lambda x, d: load_kernel(x, dtype=d),
    "nl.store": lambda x, d: store_kernel(x, dtype=d),
}


@pytest.mark.parametrize("how", sorted(PRODUCERS))
@pytest.mark.parametrize("fmt", fparams())
def test_edges_fp32_to_narrow(fmt, how):
    x = edge_values(fmt)
    got = PRODUCERS[how](x, fmt)
    assert_rounded(got, x, fmt, f"{how} f32 -> {ID[fmt]}")


@pytest.mark.parametrize("fmt", fparams())
def test_edges_through_multiply(fmt):
    """x = edge / 2 (exact in fp32), out = nl.multiply(x, 2.0, dtype=fmt): the
    fp32 product is the edge value, rounded once."""
    x = edge_values(fmt)
    half = x / np.float32(2)
    keep = (half * np.float32(2) == x) | ~np.isfinite(x)  # drop the f32 subnormals that lose a bit
    x = np.where(keep, x, np.float32(1))
    half = x / np.float32(2)
    got = produce_kernel(half, fn=lambda t, dt: nl.multiply(t, 2.0, dtype=dt), dtype=fmt)
    assert_rounded(got, x, fmt, f"nl.multiply(edge / 2, 2.0) -> {ID[fmt]}")


# ------------------------------------------------------------------ exhaustive narrow -> narrow / decode

def all_patterns(fmt):
    n = 1 << (8 * np.dtype(fmt).itemsize)
    b = np.arange(n, dtype=np.int64).astype(UINT[fmt])
    cols = 512 if n > 512 else 16
    return b.reshape(-1, cols).view(fmt)


@pytest.mark.parametrize("fmt", fparams())
def test_decode_every_pattern(fmt):
    """Every pattern of fmt loaded and stored as float32: the exact field value
    (NaN patterns give NaN)."""
    x = all_patterns(fmt)
    got = produce_kernel(x, fn=lambda t, dt: nl.copy(t, dtype=dt), dtype=np.float32)
    ub = np.ascontiguousarray(x).view(UINT[fmt]).ravel()
    expected = np.array([field_value(int(b), fmt) for b in ub]).reshape(x.shape)
    nan = np.isnan(expected)
    assert np.array_equal(np.isnan(got), nan), f"{ID[fmt]} NaN patterns"
    g, e = got[~nan].astype(np.float64), expected[~nan]
    assert np.array_equal(g, e) and np.array_equal(np.signbit(g), np.signbit(e)), f"decode {ID[fmt]}"


@pytest.mark.parametrize("src,dst", [pytest.param(s, d, id=f"{ID[s]}->{ID[d]}") for s in FORMATS for d in FORMATS
                                     if s is not d])
def test_every_pattern_to_other_format(src, dst):
    """All 2^8 / 2^16 source patterns cast to dst: decode exactly, round once."""
    x = all_patterns(src)
    got = produce_kernel(x, fn=lambda t, dt: nl.copy(t, dtype=dt), dtype=dst)
    ub = np.ascontiguousarray(x).view(UINT[src]).ravel()
    exact = np.array([field_value(int(b), src) for b in ub]).astype(np.float32).reshape(x.shape)
    assert_rounded(got, exact, dst, f"{ID[src]} -> {ID[dst]}")


# ------------------------------------------------------------------ inf / NaN / overflow through compute

@nki.jit
def binary_kernel(a, b, fn):
    r = fn(nl.load(a), nl.load(b))
    out = nl.ndarray(r.shape, dtype=r.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=r)
    return out


INF, NAN = np.inf, np.nan
SPECIAL_BINARY = [  # (op, a, b): IEEE results, computed by numpy in float32
    ("add", [INF, INF, -INF, NAN, 1.0, 0.0, -0.0, -0.0],
            [1.0, -INF, -INF, 1.0, NAN, -0.0, -0.0, 0.0]),
    ("subtract", [INF, INF, 0.0, -0.0, NAN, 1.0, 1.0, 2.0],
                 [INF, -INF, 0.0, 0.0, NAN, 1.0, -INF, 3.0]),
    ("multiply", [0.0, INF, -INF, NAN, -0.0, 2.0, -3.0, 0.5],
                 [INF, -2.0, -INF, 0.0, 5.0, -0.0, 0.0, -0.25]),
    ("divide", [1.0, -1.0, 0.0, 1.0, INF, INF, NAN, -0.0],
               [0.0, 0.0, 0.0, -0.0, INF, 2.0, 1.0, 3.0]),
]


@pytest.mark.parametrize("fmt", fparams())
@pytest.mark.parametrize("op", [s[0] for s in SPECIAL_BINARY])
def test_ieee_specials_in_narrow_formats(op, fmt):
    """inf/NaN/signed-zero operands in fmt, result in fmt (same-dtype promotion)."""
    _, a, b = next(s for s in SPECIAL_BINARY if s[0] == op)
    a32, b32 = np.tile(np.array(a, np.float32), (4, 1)), np.tile(np.array(b, np.float32), (4, 1))
    got = binary_kernel(a32.astype(fmt), b32.astype(fmt), fn=getattr(nl, op))
    with np.errstate(all="ignore"):
        expected = getattr(np, op)(a32, b32)
    assert_rounded(got, expected, fmt, f"nl.{op} specials {ID[fmt]}")


@pytest.mark.parametrize("fmt", fparams())
def test_nan_comparisons(fmt):
    """NaN compares unequal to everything, itself included; inf compares as a number."""
    a = np.array([[NAN, NAN, INF, -INF, 1.0, -0.0]], np.float32)
    b = np.array([[NAN, 1.0, INF, 1.0, NAN, 0.0]], np.float32)
    for op in ("equal", "not_equal", "less", "greater_equal"):
        got = binary_kernel(a.astype(fmt), b.astype(fmt), fn=getattr(nl, op))
        assert got.dtype == np.bool_
        assert np.array_equal(got, getattr(np, op)(a, b)), (op, ID[fmt], got)


@pytest.mark.parametrize("fmt", fparams())
def test_overflow_in_compute(fmt):
    """Finite operands whose fp32 sum / product overflows fmt: inf (or the max
    finite value when the exact result stays below max + ulp/2)."""
    p = params(fmt)
    mx = np.float32(p["max"])
    half_ulp = np.float32(math.ldexp(2.0 ** -p["m"] / 2, p["emax"]))
    a = np.array([[mx, mx, -mx, mx, mx, mx / 2]], np.float32)
    b = np.array([[mx, half_ulp / 2, -mx, half_ulp, -mx, np.float32(2)]], np.float32)
    with np.errstate(over="ignore"):
        total, product = a + b, a * b
    got = binary_kernel(a.astype(fmt), b.astype(fmt), fn=nl.add)
    assert_rounded(got, total, fmt, f"nl.add overflow {ID[fmt]}")
    got = binary_kernel(a.astype(fmt), b.astype(fmt), fn=nl.multiply)
    assert_rounded(got, product, fmt, f"nl.multiply overflow {ID[fmt]}")


@nki.jit
def unary_kernel(x, fn):
    r = fn(nl.load(x))
    out = nl.ndarray(r.shape, dtype=r.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=r)
    return out


SPECIAL_UNARY = [  # (op, inputs, exact results)
    ("exp", [INF, -INF, NAN, 0.0, -0.0], [INF, 0.0, NAN, 1.0, 1.0]),
    ("log", [0.0, -0.0, -1.0, INF, 1.0], [-INF, -INF, NAN, INF, 0.0]),
    ("sqrt", [-1.0, 0.0, -0.0, INF, NAN], [NAN, 0.0, -0.0, INF, NAN]),
    ("reciprocal", [0.0, -0.0, INF, -INF, NAN], [INF, -INF, 0.0, -0.0, NAN]),
    ("abs", [-INF, -0.0, NAN, -2.0, INF], [INF, 0.0, NAN, 2.0, INF]),
    ("negative", [INF, 0.0, -0.0, NAN, 1.0], [-INF, -0.0, 0.0, NAN, -1.0]),
    ("tanh", [INF, -INF, NAN, 0.0, -0.0], [1.0, -1.0, NAN, 0.0, -0.0]),
    ("sigmoid", [INF, -INF, NAN, 0.0, 0.0], [1.0, 0.0, NAN, 0.5, 0.5]),
]


@pytest.mark.parametrize("fmt", fparams())
@pytest.mark.parametrize("op", [s[0] for s in SPECIAL_UNARY])
def test_unary_specials(op, fmt):
    _, x, y = next(s for s in SPECIAL_UNARY if s[0] == op)
    x32 = np.tile(np.array(x, np.float32), (4, 1))
    got = unary_kernel(x32.astype(fmt), fn=getattr(nl, op))
    assert_rounded(got, np.tile(np.array(y, np.float32), (4, 1)), fmt, f"nl.{op} specials {ID[fmt]}")
