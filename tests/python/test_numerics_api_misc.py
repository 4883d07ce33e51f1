"""Numerics of the data-movement and composite APIs, and output dtype promotion:

  * casts: nl.copy(dtype=), tensor.astype, nisa.tensor_copy(dtype=),
    nl.load(dtype=), nl.store into an HBM tensor of another dtype, and the
    host-side nl.static_cast, over every (source, destination) dtype pair;
  * nl.where (tile/tile, tile/scalar), nl.transpose / nisa.nc_transpose,
    nl.matmul (both transpose_x forms) / nisa.nc_matmul, nl.softmax, nl.rms_norm;
  * the promotion pairs of NKI_API.md §1.6, read off the kernel's output array.

Model (§1.6): values decode to fp32 and round once to the destination
(ints: toward zero, saturating, NaN -> 0 -- nkic's documented conversion,
src/sim/Numerics.h). Casts, where, transpose: exact (bit for bit). Matmul: the
products of bf16/fp16/fp8 values are exact in fp32, fp32 products round once;
the K-term fp32 accumulation (order undocumented) is bounded by
gamma_K sum|a b| (gamma_(K+1) for fp32 operands), and is 0 when the operands
are small integers. softmax / rms_norm: fp32 error bounds stated at each test,
then one rounding to the output dtype (checked exactly by `within`).

Integer -> integer casts use 32-bit values below 2^24 in magnitude: there the
exact conversion and a conversion through fp32 agree (which of the two the
engines do for e.g. int32 -> uint32 is not documented)."""
import math

import numpy as np
import pytest

from neuronxcc import nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

from test_numerics_api_ref import (ALL, FLOATS, INTS, U, assert_bits, dparams, dt_id, fmax, full_range, gamma,
                                   is_float, promote, rnd, seed, to_f32, values, within)

SHAPE = (128, 64)


@nki.jit
def unary_kernel(x, fn):
    t = nl.load(x)
    r = fn(t)
    out = nl.ndarray(r.shape, dtype=r.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=r)
    return out


@nki.jit
def store_cast_kernel(x, dtype):
    out = nl.ndarray(x.shape, dtype=dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.load(x))
    return out


@nki.jit
def load_cast_kernel(x, dtype):
    t = nl.load(x, dtype=dtype)
    out = nl.ndarray(x.shape, dtype=t.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=t)
    return out


def cast_source(src, dst, rng):
    """Values of dtype src that exercise dst: beyond its range, in its subnormal
    range, ties at several scales, and (floats) +-0, +-inf, NaN."""
    if not is_float(src):
        if not is_float(dst) and np.dtype(src).itemsize == 4:
            return values(src, SHAPE, rng, -2 ** 24, 2 ** 24)
        return full_range(src, SHAPE, rng)
    top = min(fmax(src), 1e6 if dst in INTS else 3e38)
    mag = np.exp(rng.uniform(math.log(2.0 ** -30), math.log(top), SHAPE))
    x = mag * rng.choice([-1.0, 1.0], SHAPE)
    x[:, :8] = rng.integers(-300, 300, (SHAPE[0], 8)) + rng.choice([0.0, 0.5, 0.25], (SHAPE[0], 8))
    x = x.astype(np.float32).astype(src)
    x.reshape(-1)[:6] = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0], np.float32).astype(src)
    return x


def cast_expected(x, dst, how=""):
    if not is_float(x.dtype.type) and not is_float(dst):
        # A DMA (load/store) between signed and unsigned of one width keeps the bits.
        if how in ("nl.load(dtype=)", "nl.store") and np.dtype(dst).itemsize == x.dtype.itemsize and dst is not np.bool_ \
                and x.dtype != np.bool_:
            return x.view(dst)
        info = np.iinfo(dst)
        return np.clip(x.astype(np.int64), info.min, info.max).astype(dst)
    return rnd(to_f32(x), dst)


CASTERS = {
    "nl.copy": lambda x, dst: unary_kernel(x, fn=lambda t: nl.copy(t, dtype=dst)),
    "astype": lambda x, dst: unary_kernel(x, fn=lambda t: t.astype(dst)),
    "nisa.tensor_copy": lambda x, dst: unary_kernel(x, fn=lambda t: nisa.tensor_copy(t, dtype=dst)),
    "nl.load(dtype=)": lambda x, dst: load_cast_kernel(x, dtype=dst),
    "nl.store": lambda x, dst: store_cast_kernel(x, dtype=dst),
}


@pytest.mark.parametrize("how", sorted(CASTERS))
@pytest.mark.parametrize("dst", dparams(ALL))
@pytest.mark.parametrize("src", dparams(ALL))
def test_cast(src, dst, how):
    x = cast_source(src, dst, seed("cast", src, dst))
    got = CASTERS[how](x, dst)
    assert_bits(got, cast_expected(x, dst, how), f"{how} {np.dtype(src)} -> {np.dtype(dst)}")


@pytest.mark.parametrize("dst", dparams(FLOATS))
@pytest.mark.parametrize("src", dparams([np.float32, np.float16, nl.bfloat16]))
def test_static_cast_floats(src, dst):
    """nl.static_cast (host side, §2.3) rounds like the kernel casts."""
    x = cast_source(src, dst, seed("static", src, dst))
    with np.errstate(over="ignore"):  # numpy's cast warns on the values that become inf
        got = nl.static_cast(x, dst)
    assert_bits(got, rnd(to_f32(x), dst), f"nl.static_cast {np.dtype(src)} -> {np.dtype(dst)}")


@pytest.mark.parametrize("dst", dparams(ALL))
@pytest.mark.parametrize("src", dparams(INTS))
def test_static_cast_integers(src, dst):
    x = values(src, SHAPE, seed("static-int", src, dst), -2 ** 24, 2 ** 24)
    info = np.iinfo(dst) if not is_float(dst) else None
    if info is not None:  # in range: every conversion agrees
        x = np.clip(x.astype(np.int64), info.min, info.max).astype(src)
    with np.errstate(over="ignore"):  # beyond fp16's range: inf
        got = nl.static_cast(x, dst)
    assert_bits(got, cast_expected(x, dst), f"nl.static_cast {np.dtype(src)} -> {np.dtype(dst)}")


@pytest.mark.parametrize("dst", dparams(INTS))
@pytest.mark.parametrize("src", dparams(FLOATS))
def test_static_cast_floats_to_integers(src, dst):
    """Integral float values inside the destination's range convert exactly
    (how a host-side cast rounds fractions or handles out-of-range values is
    not specified for nl.static_cast)."""
    info = np.iinfo(dst)
    rng = seed("static-f2i", src, dst)
    lim = min(float(info.max), 2.0 ** 24, fmax(src))
    x = np.rint(rng.uniform(max(float(info.min), -lim), lim, SHAPE)).astype(np.float32).astype(src)
    x = np.where(to_f32(x) > info.max, np.float32(0).astype(src), x)  # a value rounded up past the max
    assert np.all(to_f32(x) == np.rint(to_f32(x)))
    assert_bits(nl.static_cast(x, dst), cast_expected(x, dst), f"nl.static_cast {np.dtype(src)} -> {np.dtype(dst)}")


# ------------------------------------------------------------------ where

@nki.jit
def where_kernel(c, a, b, scalar=None, dtype=None):
    cond = nl.load(c)
    x = nl.load(a)
    y = nl.load(b) if scalar is None else scalar
    r = nl.where(cond, x, y, dtype=dtype)
    out = nl.ndarray(r.shape, dtype=r.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=r)
    return out


@pytest.mark.parametrize("cdt", dparams([np.uint8, np.float32, nl.bfloat16]))
@pytest.mark.parametrize("dt", dparams(ALL))
def test_where_tiles(dt, cdt):
    rng = seed("where", dt, cdt)
    c = rng.choice([0.0, 1.0, -2.5, 3.0], SHAPE).astype(np.float32).astype(cdt)
    a = full_range(dt, SHAPE, rng) if not is_float(dt) else values(dt, SHAPE, rng, -100, 100)
    b = full_range(dt, SHAPE, rng) if not is_float(dt) else values(dt, SHAPE, rng, -100, 100)
    got = where_kernel(c, a, b)
    assert_bits(got, np.where(to_f32(c) != 0, a, b), f"nl.where({np.dtype(cdt)}, {np.dtype(dt)} x2)")


@pytest.mark.parametrize("dt", dparams([np.float32, nl.bfloat16, np.float16, np.int32, np.int8]))
def test_where_scalar_and_dtype(dt):
    rng = seed("where-s", dt)
    c = rng.integers(0, 2, SHAPE).astype(np.uint8)
    a = values(dt, SHAPE, rng, -100, 100)
    out = promote(dt, "float")
    got = where_kernel(c, a, a, scalar=-0.3)  # y scalar (§2.8): a float promotes like any operand
    assert_bits(got, rnd(np.where(c != 0, to_f32(a), np.float32(-0.3)), out), f"nl.where(c, {np.dtype(dt)}, -0.3)")
    got = where_kernel(c, a, a, scalar=-0.3, dtype=nl.bfloat16)
    assert_bits(got, rnd(np.where(c != 0, to_f32(a), np.float32(-0.3)), nl.bfloat16),
                f"nl.where(c, {np.dtype(dt)}, -0.3, dtype=bf16)")


# ------------------------------------------------------------------ transpose

@pytest.mark.parametrize("fn", ["nl.transpose", "nisa.nc_transpose"])
@pytest.mark.parametrize("dt", dparams(ALL))
def test_transpose(dt, fn):
    rng = seed("transpose", dt, fn)
    x = full_range(dt, (128, 96), rng) if not is_float(dt) else values(dt, (128, 96), rng, -100, 100)
    f = nl.transpose if fn == "nl.transpose" else nisa.nc_transpose
    got = unary_kernel(x, fn=f)
    assert_bits(got, np.ascontiguousarray(x.T), f"{fn} {np.dtype(dt)}")


@pytest.mark.parametrize("dst", dparams([nl.bfloat16, nl.float8_e5m2, np.int16]))
def test_transpose_dtype(dst):
    x = values(np.float32, (64, 128), seed("transpose-dt", dst), -1000, 1000)
    got = unary_kernel(x, fn=lambda t: nl.transpose(t, dtype=dst))
    assert_bits(got, rnd(np.ascontiguousarray(x.T), dst), f"nl.transpose(dtype={np.dtype(dst)})")


# ------------------------------------------------------------------ matmul

@nki.jit
def matmul_kernel(a, b, fn, out_dtype):
    r = fn(nl.load(a), nl.load(b))
    out = nl.ndarray(r.shape, dtype=out_dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.copy(r, dtype=out_dtype))
    return out


MATMUL_FORMS = {
    "nc_matmul": lambda x, y: nisa.nc_matmul(x, y),              # stationary [K, M], moving [K, N]
    "transpose_x": lambda x, y: nl.matmul(x, y, transpose_x=True),  # x [K, M]
    "plain": lambda x, y: nl.matmul(x, y),                        # x [M, K]
}
MATMUL_DTYPES = [np.float32, nl.bfloat16, np.float16, nl.float8_e4m3, nl.float8_e5m2]


@pytest.mark.parametrize("ints", [False, True], ids=["random", "small-int"])
@pytest.mark.parametrize("out", dparams([np.float32, nl.bfloat16]))
@pytest.mark.parametrize("form", ["nc_matmul", "transpose_x", "plain"])
@pytest.mark.parametrize("dt", dparams(MATMUL_DTYPES))
def test_matmul(dt, form, out, ints):
    K, M, N = 128, 64, 96
    rng = seed("matmul", dt, form, out, ints)
    if ints:
        s, mv = rng.integers(-4, 5, (K, M)), rng.integers(-4, 5, (K, N))
    else:
        lim = 2.0 if dt in (nl.float8_e4m3, nl.float8_e5m2) else 4.0
        s, mv = rng.uniform(-lim, lim, (K, M)), rng.uniform(-lim, lim, (K, N))
    s = s.astype(np.float32).astype(dt)
    mv = mv.astype(np.float32).astype(dt)
    a = np.ascontiguousarray(s.T) if form == "plain" else s  # nl.matmul(x, y) takes x as [M, K]
    got = matmul_kernel(a, mv, fn=MATMUL_FORMS[form], out_dtype=out)
    assert got.shape == (M, N)
    s64, m64 = to_f32(s).astype(np.float64), to_f32(mv).astype(np.float64)
    ref = s64.T @ m64
    absum = np.abs(s64).T @ np.abs(m64)
    if ints:
        tol = 0.0  # every product and partial sum is an integer below 2^24
    else:
        tol = gamma(K + 1 if dt is np.float32 else K) * absum
    within(got, ref, tol, out, f"{form} {np.dtype(dt)} -> {np.dtype(out)}")


# ------------------------------------------------------------------ softmax, rms_norm

def softmax_bound(x32, ref):
    """fp32 softmax via m = max, e = exp(x - m), s = sum e, e / s: the rounding
    of x - m (relative u|x - m| in e), exp (4 ulps <= 8u), the any-order sum
    (gamma_D) and the division (u); +2u for second-order terms."""
    x = x32.astype(np.float64)
    d = x.shape[1]
    delta = U * np.abs(x - x.max(axis=1, keepdims=True)) + 8 * U
    return np.abs(ref) * (delta + delta.max(axis=1, keepdims=True) + gamma(d) + 3 * U)


def softmax_ref(x32):
    x = x32.astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("dt", dparams([np.float32, nl.bfloat16, np.float16]))
def test_softmax(dt):
    """Default dtype: the input's (unary, §1.6); computed in fp32, rounded once."""
    x = values(dt, SHAPE, seed("softmax", dt), -8, 8)
    got = unary_kernel(x, fn=lambda t: nl.softmax(t, axis=1))
    x32 = to_f32(x)
    ref = softmax_ref(x32)
    within(got, ref, softmax_bound(x32, ref), dt, f"nl.softmax({np.dtype(dt)})")


@pytest.mark.parametrize("dt", dparams([nl.bfloat16, np.float16, nl.float8_e4m3]))
def test_softmax_fp32_compute(dt):
    """compute_dtype=float32 on narrow input: fp32 intermediates; the result is
    float32 ('dtype and compute_dtype currently behave the same', §2.8)."""
    x = values(dt, SHAPE, seed("softmax32", dt), -8, 8)
    got = unary_kernel(x, fn=lambda t: nl.softmax(t, axis=1, compute_dtype=nl.float32))
    x32 = to_f32(x)
    ref = softmax_ref(x32)
    within(got, ref, softmax_bound(x32, ref), np.float32, f"nl.softmax({np.dtype(dt)}, compute_dtype=f32)")


@nki.jit
def rms_norm_kernel(x, w, eps):
    t = nl.load(x)
    wt = nl.load(w)
    r = nl.rms_norm(t, wt, axis=1, n=x.shape[1], epsilon=eps)
    out = nl.ndarray(r.shape, dtype=r.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=r)
    return out


@pytest.mark.parametrize("dt", dparams([np.float32, nl.bfloat16, np.float16]))
def test_rms_norm(dt):
    """x / sqrt(sum(x^2)/n + eps) * w (§2.8); output dtype = promoted(x, w)
    (§1.6). fp32 bound: squares + sum (D u), scaling and eps (3u) give the mean
    square a relative (D + 3) u, halved by the square root; rsqrt 4 ulps (8u);
    two products (2u); +1u second order."""
    rng = seed("rms", dt)
    x = values(dt, SHAPE, rng, -3, 3)
    w = values(dt, SHAPE, rng, 0.5, 2)
    eps = 1e-3
    got = rms_norm_kernel(x, w, eps=eps)
    x64, w64 = to_f32(x).astype(np.float64), to_f32(w).astype(np.float64)
    ref = x64 / np.sqrt((x64 * x64).sum(axis=1, keepdims=True) / SHAPE[1] + np.float32(eps)) * w64
    tol = np.abs(ref) * ((SHAPE[1] + 3) / 2 + 11) * U
    within(got, ref, tol, promote(dt, dt), f"nl.rms_norm({np.dtype(dt)})")


# ------------------------------------------------------------------ promotion (§1.6)

@nki.jit
def add_kernel(a, b):
    r = nl.add(nl.load(a), nl.load(b))
    out = nl.ndarray(r.shape, dtype=r.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=r)
    return out


@nki.jit
def add_scalar_kernel(a, s):
    r = nl.add(nl.load(a), s)
    out = nl.ndarray(r.shape, dtype=r.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=r)
    return out


PAIRS = [  # the documented pairs (§1.6), then the rest of the grid
    (np.float32, nl.bfloat16), (np.float16, nl.bfloat16), (nl.float8_e4m3, np.float16),
    (nl.float8_e4m3, nl.bfloat16), (nl.float8_e4m3, nl.float8_e5m2), (np.int32, np.float16),
    (np.int16, np.int32), (np.uint8, np.uint16), (np.uint16, np.int32), (np.int8, np.uint8),
    (np.int8, np.uint16), (np.int32, np.uint32),
]
PAIRS += [(a, b) for i, a in enumerate(ALL) for b in ALL[i + 1:] if (a, b) not in PAIRS and (b, a) not in PAIRS]


@pytest.mark.parametrize("a_dt,b_dt", [pytest.param(a, b, id=f"{dt_id(a)}+{dt_id(b)}") for a, b in PAIRS])
def test_promotion_pairs(a_dt, b_dt):
    """Output dtype of nl.add is the §1.6 promotion, either operand order; the
    value is the fp32 (or exact integer) sum rounded once to it."""
    rng = seed("promote", a_dt, b_dt)
    a, b = values(a_dt, SHAPE, rng, -100, 100), values(b_dt, SHAPE, rng, -100, 100)
    out = promote(a_dt, b_dt)
    for x, y in ((a, b), (b, a)):
        got = add_kernel(x, y)
        what = f"nl.add({np.dtype(x.dtype)}, {np.dtype(y.dtype)})"
        assert got.dtype == np.dtype(out), (what, got.dtype, np.dtype(out))
        if is_float(out):
            assert_bits(got, rnd(to_f32(x) + to_f32(y), out), what)
        else:
            info = np.iinfo(out)
            assert_bits(got, np.clip(x.astype(np.int64) + y.astype(np.int64), info.min, info.max).astype(out), what)


SCALARS = [(np.int8, 2, np.int32), (np.float16, 1.2, np.float32), (nl.bfloat16, 1.2, np.float32),
           (nl.float8_e4m3, 3, nl.float8_e4m3), (np.uint8, True, np.uint8), (np.int16, True, np.int16),
           (np.float32, 7, np.float32), (np.uint16, 5, np.int32), (np.uint32, 5, np.float32),
           (np.int32, 2.5, np.float32), (np.uint8, 0.5, np.float32)]


@pytest.mark.parametrize("dt,s,out", [pytest.param(d, s, o, id=f"{dt_id(d)}+{s!r}") for d, s, o in SCALARS])
def test_promotion_weak_scalars(dt, s, out):
    """Python scalars are weakly typed: bool -> uint8, int -> int32, float ->
    float32 (§1.6: (int8, 2) -> int32, (float16, 1.2) -> float32)."""
    rng = seed("promote-s", dt, s)
    a = values(dt, SHAPE, rng, 0, 100)
    got = add_scalar_kernel(a, s=s)
    what = f"nl.add({np.dtype(dt)}, {s!r})"
    assert got.dtype == np.dtype(out), (what, got.dtype, np.dtype(out))
    if is_float(out):
        assert_bits(got, rnd(to_f32(a) + np.float32(s), out), what)
    else:
        assert_bits(got, np.clip(a.astype(np.int64) + int(s), np.iinfo(out).min, np.iinfo(out).max).astype(out), what)


@pytest.mark.parametrize("a_dt,b_dt", [(np.int8, np.uint8), (np.int8, np.uint16), (np.int16, np.uint16)],
                         ids=["i8|u8", "i8|u16", "i16|u16"])
@pytest.mark.parametrize("op", ["bitwise_and", "bitwise_or", "bitwise_xor"])
def test_mixed_signedness_bitwise(op, a_dt, b_dt):
    """(int8, uint8) -> int16 etc. (§1.6): both operands' values fit the
    promoted type, so the result is the op on their two's-complement bits in
    that type -- e.g. int8 1 | uint8 200 = int16 201."""
    rng = seed("mixbits", op, a_dt, b_dt)
    a, b = full_range(a_dt, SHAPE, rng), full_range(b_dt, SHAPE, rng)
    a.reshape(-1)[:3] = [1, -1, -128]
    b.reshape(-1)[:3] = [200, 128, 255]
    out = promote(a_dt, b_dt)
    got = add_like_kernel(a, b, fn=getattr(nl, op))
    expected = getattr(np, op)(a.astype(out), b.astype(out))
    assert_bits(got, expected, f"nl.{op}({np.dtype(a_dt)}, {np.dtype(b_dt)})")


@nki.jit
def add_like_kernel(a, b, fn):
    r = fn(nl.load(a), nl.load(b))
    out = nl.ndarray(r.shape, dtype=r.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=r)
    return out


def test_integer_index_load_is_a_column_tile():
    """A[:, j] drops the free dim; the loaded tile is [P, 1], usable as a column operand."""
    @nki.jit
    def scale_by_column(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        col = nl.load(x[:, 3])
        assert col.shape == (128, 1)
        nl.store(out, value=nl.multiply(nl.load(x), col))
        return out

    x = np.random.default_rng(7).random((128, 16), np.float32)
    assert np.array_equal(nki.simulate_kernel(scale_by_column, x), x * x[:, 3:4])


@pytest.mark.parametrize("width", [2, 7, 512])
def test_bn_stats_then_bn_aggr_is_mean_and_variance(width):
    @nki.jit
    def stats(x):
        raw = nl.ndarray((128, 6), dtype=nl.float32, buffer=nl.shared_hbm)
        agg = nl.ndarray((128, 2), dtype=nl.float32, buffer=nl.shared_hbm)
        s = nisa.bn_stats(nl.load(x))
        nl.store(raw, value=s)
        nl.store(agg, value=nisa.bn_aggr(s))
        return raw, agg

    x = np.random.default_rng(width).normal(-1.0, 3.0, (128, width)).astype(np.float32)
    raw, agg = nki.simulate_kernel(stats, x)
    for k, half in enumerate((x[:, 0::2], x[:, 1::2])):
        assert np.array_equal(raw[:, 3 * k], np.full(128, half.shape[1], np.float32))
        assert np.allclose(raw[:, 3 * k + 1], half.mean(1), rtol=1e-5, atol=1e-6)
        assert np.allclose(raw[:, 3 * k + 2], half.var(1) * half.shape[1], rtol=1e-4, atol=1e-5)
    assert np.allclose(agg[:, 0], x.mean(1), rtol=1e-5, atol=1e-6)
    assert np.allclose(agg[:, 1], x.var(1), rtol=1e-4, atol=1e-6)


def test_integer_indices_load_a_scalar_as_one_by_one_tile():
    @nki.jit
    def add_element(x, s):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        e = nl.load(s[1, 2])
        assert e.shape == (1, 1)
        assert nl.load(s[0]).shape == (3, 1)  # the remaining dim is the partition dim
        nl.store(out, value=nl.add(nl.load(x), nl.broadcast_to(e, shape=x.shape)))
        return out

    x = np.random.default_rng(3).random((128, 8), np.float32)
    s = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert np.array_equal(nki.simulate_kernel(add_element, x, s), x + s[1, 2])


def test_store_to_one_element_with_integer_indices():
    @nki.jit
    def row_sums(x):
        out = nl.ndarray((2, 2), dtype=x.dtype, buffer=nl.shared_hbm)
        for i in nl.static_range(2):
            for j in nl.static_range(2):
                t = nl.load(x[i, j])
                nl.store(out[i, j], value=nl.sum(t, axis=1, keepdims=True))
        return out

    x = np.random.default_rng(5).random((2, 2, 1, 16), np.float32)
    assert np.allclose(nki.simulate_kernel(row_sums, x), x.sum(axis=(2, 3)), rtol=1e-6)


def _scan_ref(a, b, init, f0, f1):
    r, out = init.astype(np.float32).copy(), np.zeros_like(a)
    for i in range(a.shape[1]):
        r = f1(f0(a[:, i], r), b[:, i])
        out[:, i] = r
    return out


def test_tensor_tensor_scan_recurrences():
    @nki.jit
    def scans(a, b, init):
        o = nl.ndarray((3,) + a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
        ta, tb = nl.load(a), nl.load(b)
        nl.store(o[0], value=nisa.tensor_tensor_scan(ta, tb, initial=0, op0=np.multiply, op1=np.add))
        nl.store(o[1], value=nisa.tensor_tensor_scan(ta, tb, initial=nl.load(init), op0=np.subtract, op1=np.add,
                                                     reverse0=True))
        nl.store(o[2], value=nisa.tensor_tensor_scan(ta, tb, 1.5, np.maximum, np.subtract, reverse1=True))
        return o

    rng = np.random.default_rng(11)
    a, b = rng.random((128, 24), np.float32), rng.random((128, 24), np.float32)
    init = rng.random((128, 1), np.float32)
    o = nki.simulate_kernel(scans, a, b, init)
    assert np.array_equal(o[0], _scan_ref(a, b, np.zeros(128), lambda x, r: x * r, np.add))
    assert np.array_equal(o[1], _scan_ref(a, b, init[:, 0], lambda x, r: r - x, np.add))
    assert np.array_equal(o[2], _scan_ref(a, b, np.full(128, 1.5), np.maximum, lambda t, y: y - t))


def test_tensor_tensor_scan_ragged_cumsum_carried_across_tiles():
    """A cumulative sum over 600 columns in 256-wide tiles, rows and columns ragged;
    the last column of each tile seeds the next tile's scan."""
    @nki.jit
    def cumsum(x):
        y = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        n, m = x.shape
        pi, fi = nl.mgrid[0:128, 0:256]
        ones = nl.ones((128, 256), dtype=nl.float32)
        for i in nl.affine_range((n + 127) // 128):
            init = nl.zeros((128, 1), dtype=nl.float32)
            for j in nl.sequential_range((m + 255) // 256):
                mask = (i * 128 + pi < n) & (j * 256 + fi < m)
                data = nl.load(x[i * 128 + pi, j * 256 + fi], mask=mask)
                r = nisa.tensor_tensor_scan(ones, data, init, np.multiply, np.add, mask=mask)
                nl.store(y[i * 128 + pi, j * 256 + fi], r, mask=mask)
                init[:, :] = nl.copy(r[:, 255])
        return y

    x = np.random.default_rng(12).random((200, 600), np.float32)
    assert np.allclose(nki.simulate_kernel(cumsum, x), np.cumsum(x, axis=1), rtol=1e-5)


def test_range_select_select_reduce_and_isa_dropout():
    @nki.jit(platform_target="trn2")
    def selects(x, lo, hi, pr):
        o = nl.ndarray((4, 128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        r = nl.ndarray((3, 128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
        tx = nl.load(x)
        acc = nl.ndarray((128, 1), dtype=nl.float32)
        nl.store(o[0], value=nisa.range_select(on_true_tile=tx, comp_op0=nl.greater_equal, comp_op1=nl.less,
                                               bound0=nl.load(lo), bound1=nl.load(hi), range_start=2,
                                               reduce_cmd=nisa.reduce_cmd.reset_reduce, reduce_res=acc))
        nl.store(r[0], value=acc)
        dst = nl.ndarray((128, 64), dtype=nl.float32)
        acc2 = nl.ndarray((128, 1), dtype=nl.float32)
        nisa.select_reduce(dst=dst, predicate=nl.load(pr), on_true=tx, on_false=-5.0,
                           reduce_res=acc2, reduce_cmd=nisa.reduce_cmd.reset_reduce)
        nl.store(o[1], value=dst)
        nl.store(r[1], value=acc2)
        nisa.select_reduce(dst=dst, predicate=nl.load(pr), on_true=tx, on_false=nl.load(lo), reverse_pred=True,
                           reduce_res=acc2, reduce_cmd=nisa.reduce_cmd.reduce, reduce_op=np.add)
        nl.store(o[2], value=dst)
        nl.store(r[2], value=acc2)
        nl.store(o[3], value=nisa.dropout(tx, 0.5))
        return o, r

    rng = np.random.default_rng(13)
    x = rng.standard_normal((128, 64)).astype(np.float32)
    lo = rng.integers(0, 30, (128, 1)).astype(np.float32)
    hi = lo + rng.integers(1, 30, (128, 1)).astype(np.float32)
    pr = rng.integers(0, 2, (128, 64)).astype(np.uint8)
    o, r = nki.simulate_kernel(selects, x, lo, hi, pr)
    idx = 2 + np.arange(64)[None, :]
    ref0 = np.where((idx >= lo) & (idx < hi), x, nl.fp32.min)
    assert np.array_equal(o[0], ref0) and np.array_equal(r[0][:, 0], ref0.max(1))
    ref1 = np.where(pr != 0, x, np.float32(-5.0))
    assert np.array_equal(o[1], ref1) and np.array_equal(r[1][:, 0], ref1.max(1))
    ref2 = np.where(pr == 0, x, lo)
    assert np.array_equal(o[2], ref2)
    assert np.allclose(r[2][:, 0], ref1.max(1) + ref2.sum(1, dtype=np.float32), rtol=1e-5)
    dropped = o[3] == 0
    assert np.array_equal(o[3][~dropped], x[~dropped]) and 0.4 < dropped.mean() < 0.6


def test_isa_dropout_takes_a_probability_per_partition():
    @nki.jit
    def k(x, p):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        nl.store(out, value=nisa.dropout(nl.load(x), nl.load(p)))
        return out

    x = np.ones((128, 256), np.float32)
    p = np.where(np.arange(128) < 64, 0.0, 1.0).astype(np.float32).reshape(128, 1)
    out = nki.simulate_kernel(k, x, p)
    assert np.array_equal(out[:64], x[:64]) and not out[64:].any()
