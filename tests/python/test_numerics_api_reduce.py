"""Numerics of the free-axis reductions (NKI_API.md §2.10): nl.sum, nl.max,
nl.min, nl.prod, nl.mean, nl.var, nl.all with axis / keepdims, and
nisa.tensor_reduce (§3.4) with negate, on every dtype they accept.

Model (§3.4 tensor_reduce): arithmetic folds run in fp32 on the decoded inputs
(integers included), bitvec folds on the integers' bits; the result rounds once
to the output dtype (the input dtype by default; nl.mean of integers -> float32).
The fold order is not documented, so:
  * max / min / all / bitwise folds only select or combine bits: exact;
  * sum: |fp32 sum - exact| <= gamma_(n-1) sum|x| (any order, Higham), and 0
    when every partial sum is an integer below 2^24 (integer inputs);
  * prod: relative gamma_(n-1);
  * mean: the sum's bound / n plus 2 fp32 ulps (the scaling by 1/n);
  * var (population): the bound propagated through mean -> x - mean ->
    square -> mean, first order, stated in `var_bound`.
Every bound applies to the fp32 result; `within` then checks the one rounding
to the output dtype exactly."""
import numpy as np
import pytest

from neuronxcc import nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

from test_numerics_api_ref import (ALL, FLOATS, INTS, U, assert_bits, dparams, full_range, gamma, is_float,
                                   rnd, seed, to_f32, ulp32, values, within)

P, A, B = 128, 6, 16  # 3-D tiles [P, A, B]; 2-D tiles [P, A * B]


@nki.jit
def reduce_kernel(x, fn):
    t = nl.load(x)
    r = fn(t)
    out = nl.ndarray(r.shape, dtype=r.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=r)
    return out


def _axes(axis):
    return tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)


def _count(x, axis):
    return int(np.prod([x.shape[a] for a in _axes(axis)]))


def sum_bound(x32, axis, keepdims):
    x = x32.astype(np.float64)
    n = _count(x, axis)
    s_abs = np.abs(x).sum(axis=_axes(axis), keepdims=keepdims)
    exact = np.all(x == np.rint(x)) and np.all(s_abs < 2.0 ** 24)
    return np.zeros_like(s_abs) if exact else gamma(n - 1) * s_abs


def var_bound(x32, axis):
    """First-order bound on fp32 mean((x - m)^2), m = fp32 mean, any fold order."""
    x = x32.astype(np.float64)
    ax = _axes(axis)
    n = _count(x, axis)
    m = x.mean(axis=ax, keepdims=True)
    em = gamma(n - 1) * np.abs(x).sum(axis=ax, keepdims=True) / n + 2 * U * np.abs(m)
    d = np.abs(x - m)
    ed = em + U * (d + em)                                  # fp32(x - m32)
    esq = 2 * d * ed + ed * ed + U * (d + ed) ** 2          # fp32(d * d)
    sq = (d + ed) ** 2
    return ((esq.sum(axis=ax) + gamma(n - 1) * sq.sum(axis=ax)) / n
            + 2 * U * sq.sum(axis=ax) / n)


def make_input(dt, rng, shape, lo=-4.0, hi=4.0):
    if is_float(dt):
        lim = 2.0 if dt in (nl.float8_e4m3, nl.float8_e5m2) else hi
        return values(dt, shape, rng, -lim if lo < 0 else lo, lim)
    return full_range(dt, shape, rng)


SHAPES = [  # (tile shape, axis, keepdims)
    pytest.param((P, A * B), 1, False, id="2d-ax1"),
    pytest.param((P, A * B), 1, True, id="2d-ax1-keep"),
    pytest.param((P, A, B), (1, 2), False, id="3d-ax12"),
    pytest.param((P, A, B), [1, 2], True, id="3d-ax12-keep"),
    pytest.param((P, A, B), 2, False, id="3d-ax2"),
]


def _out_shape(shape, axis, keepdims):
    """numpy's result shape, except that an on-chip tile stays at least 2-D
    (§1.1): reducing every free axis of [P, ...] without keepdims gives [P, 1]."""
    ax = _axes(axis)
    out = tuple(1 if i in ax else d for i, d in enumerate(shape) if keepdims or i not in ax)
    return out if len(out) >= 2 else out + (1,)


def _as_tile(ref, shape, axis, keepdims):
    return np.asarray(ref).reshape(_out_shape(shape, axis, keepdims))


@pytest.mark.parametrize("shape,axis,keepdims", SHAPES)
@pytest.mark.parametrize("dt", dparams(ALL))
@pytest.mark.parametrize("op", ["sum", "max", "min"])
def test_sum_max_min(op, dt, shape, axis, keepdims):
    rng = seed(op, dt, shape, axis, keepdims)
    x = make_input(dt, rng, shape)
    got = reduce_kernel(x, fn=lambda t: getattr(nl, op)(t, axis=axis, keepdims=keepdims))
    what = f"nl.{op}({np.dtype(dt)}, axis={axis}, keepdims={keepdims})"
    assert got.shape == _out_shape(shape, axis, keepdims), (what, got.shape)
    x32 = to_f32(x)
    if op == "sum":
        ref = _as_tile(x32.astype(np.float64).sum(axis=_axes(axis), keepdims=True), shape, axis, keepdims)
        within(got, ref, _as_tile(sum_bound(x32, axis, True), shape, axis, keepdims), dt, what)
    else:
        ref = _as_tile(getattr(np, op)(x32, axis=_axes(axis), keepdims=True), shape, axis, keepdims)
        assert_bits(got, rnd(ref, dt), what)


@pytest.mark.parametrize("shape,axis,keepdims", SHAPES[:3])
@pytest.mark.parametrize("dt", dparams(ALL))
def test_prod(dt, shape, axis, keepdims):
    rng = seed("prod", dt, shape, axis)
    if is_float(dt):
        x = rng.uniform(0.7, 1.4, shape) * rng.choice([-1.0, 1.0], shape)
        x = x.astype(np.float32).astype(dt)
    else:  # factors +-1, +-2: every product is +-2^k (k <= 96), exact in fp32
        signed = np.iinfo(dt).min < 0
        x = rng.choice([-2, -1, 1, 2] if signed else [1, 2], shape).astype(dt)
        flat = x.reshape(P, -1)
        flat[1::4, 5] = 0                                                       # products 0
        flat[2::4] = rng.choice([-1, 1] if signed else [1], flat[2::4].shape)  # products +-1, in range
    got = reduce_kernel(x, fn=lambda t: nl.prod(t, axis=axis, keepdims=keepdims))
    what = f"nl.prod({np.dtype(dt)}, axis={axis})"
    x64 = to_f32(x).astype(np.float64)
    ref = _as_tile(x64.prod(axis=_axes(axis), keepdims=True), shape, axis, keepdims)
    n = _count(x, axis)
    tol = 0.0 if not is_float(dt) else gamma(n - 1) * np.abs(ref)
    within(got, ref, tol, dt, what)


@pytest.mark.parametrize("n", [64, 48], ids=["n64", "n48"])
@pytest.mark.parametrize("dt", dparams(ALL))
def test_mean(dt, n):
    """Float inputs keep their dtype; integer inputs give float32 (§2.10). n = 48
    makes 1/n inexact in binary."""
    rng = seed("mean", dt, n)
    x = make_input(dt, rng, (P, n))
    got = reduce_kernel(x, fn=lambda t: nl.mean(t, axis=1))
    out = dt if is_float(dt) else np.float32
    what = f"nl.mean({np.dtype(dt)}, n={n})"
    x32 = to_f32(x)
    ref = x32.astype(np.float64).mean(axis=1, keepdims=True)
    tol = sum_bound(x32, 1, True) / n + 2 * ulp32(ref)
    within(got, ref, tol, out, what)


@pytest.mark.parametrize("dt", dparams(FLOATS))
def test_mean_keepdims(dt):
    x = make_input(dt, seed("meankd", dt), (P, A, B))
    got = reduce_kernel(x, fn=lambda t: nl.mean(t, axis=[1, 2], keepdims=True))
    assert got.shape == (P, 1, 1)
    x32 = to_f32(x)
    ref = x32.astype(np.float64).mean(axis=(1, 2), keepdims=True)
    within(got, ref, sum_bound(x32, (1, 2), True) / (A * B) + 2 * ulp32(ref), dt, f"nl.mean keepdims {dt}")


@pytest.mark.parametrize("n", [64, 48], ids=["n64", "n48"])
@pytest.mark.parametrize("dt", dparams(FLOATS))
def test_var(dt, n):
    rng = seed("var", dt, n)
    x = make_input(dt, rng, (P, n))
    x32 = to_f32(x)
    got = reduce_kernel(x, fn=lambda t: nl.var(t, axis=1))
    ref = x32.astype(np.float64).var(axis=1, keepdims=True)
    within(got, ref, var_bound(x32, 1)[:, None], dt, f"nl.var({np.dtype(dt)}, n={n})")


@pytest.mark.parametrize("dt", dparams(INTS + [nl.bfloat16]))
def test_var_float32_dtype(dt):
    """dtype=float32 computes and returns float32 for any input."""
    x = (values(dt, (P, 48), seed("varf", dt), -100, 100) if not is_float(dt)
         else make_input(dt, seed("varf", dt), (P, 48)))
    got = reduce_kernel(x, fn=lambda t: nl.var(t, axis=1, dtype=nl.float32))
    x32 = to_f32(x)
    ref = x32.astype(np.float64).var(axis=1, keepdims=True)
    within(got, ref, var_bound(x32, 1)[:, None], np.float32, f"nl.var({np.dtype(dt)}, dtype=float32)")


@pytest.mark.parametrize("dt", dparams(ALL))
def test_all(dt):
    rng = seed("all", dt)
    x = values(dt, (P, A, B), rng, 1, 3)
    # Rows with zeros at various places, rows without any.
    x[::3, 0, 0] = 0
    x[1::5, A - 1, B - 1] = 0
    x[2::7, 2, :] = 0
    for axis in (1, [1, 2]):
        got = reduce_kernel(x, fn=lambda t: nl.all(t, axis=axis))
        assert got.dtype == np.bool_  # dtype=bool by default (§2.10)
        expected = _as_tile(np.all(x != 0, axis=_axes(axis), keepdims=True), x.shape, axis, False)
        assert_bits(got, expected, f"nl.all({np.dtype(dt)}, axis={axis})")


@pytest.mark.parametrize("dt", dparams([np.float32, nl.bfloat16, np.int16]))
@pytest.mark.parametrize("op", ["sum", "max", "prod"])
def test_reduction_dtype_argument(op, dt):
    """dtype= sets the output: the fp32 fold rounds once to it."""
    rng = seed("rdt", op, dt)
    x = values(dt, (P, 32), rng, 0.8 if op == "prod" else -50, 1.25 if op == "prod" else 50)
    for out in (np.float32, nl.bfloat16, nl.float8_e4m3):
        got = reduce_kernel(x, fn=lambda t: getattr(nl, op)(t, axis=1, dtype=out))
        x32 = to_f32(x)
        what = f"nl.{op}({np.dtype(dt)}, dtype={np.dtype(out)})"
        if op == "max":
            assert_bits(got, rnd(x32.max(axis=1, keepdims=True), out), what)
            continue
        ref = getattr(x32.astype(np.float64), op)(axis=1, keepdims=True)
        tol = sum_bound(x32, 1, True) if op == "sum" else gamma(31) * np.abs(ref)
        within(got, ref, tol, out, what)


# ------------------------------------------------------------------ nisa.tensor_reduce

ARITH_FOLDS = {"add": np.sum, "maximum": np.max, "minimum": np.min, "multiply": np.prod}
BIT_FOLDS = {"bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or, "bitwise_xor": np.bitwise_xor}


@pytest.mark.parametrize("negate", [False, True], ids=["plain", "negate"])
@pytest.mark.parametrize("shape,axis,keepdims", [SHAPES[1], SHAPES[3]])
@pytest.mark.parametrize("dt", dparams(ALL))
@pytest.mark.parametrize("op", ["add", "maximum", "minimum", "multiply"])
def test_tensor_reduce_arith(op, dt, shape, axis, keepdims, negate):
    """Arithmetic folds in fp32; negate=True multiplies the result by -1 (§3.4),
    before the one rounding (so a negated unsigned result saturates to 0)."""
    rng = seed("tr", op, dt, shape, negate)
    if op == "multiply":
        x = (rng.uniform(0.8, 1.25, shape).astype(np.float32).astype(dt) if is_float(dt)
             else rng.choice([1, 1, 1, 2], shape).astype(dt))
    else:
        x = make_input(dt, rng, shape)
    got = reduce_kernel(x, fn=lambda t: nisa.tensor_reduce(getattr(nl, op), t, axis=axis, keepdims=keepdims,
                                                           negate=negate))
    what = f"nisa.tensor_reduce({op}, {np.dtype(dt)}, negate={negate})"
    assert got.shape == _out_shape(shape, axis, keepdims), (what, got.shape)
    x32 = to_f32(x)
    sign = -1.0 if negate else 1.0
    if op in ("maximum", "minimum"):
        r = ARITH_FOLDS[op](x32, axis=_axes(axis), keepdims=keepdims)
        assert_bits(got, rnd(sign * r.astype(np.float64), dt), what)
        return
    x64 = x32.astype(np.float64)
    ref = sign * ARITH_FOLDS[op](x64, axis=_axes(axis), keepdims=keepdims)
    n = _count(x, axis)
    if op == "add":
        tol = sum_bound(x32, axis, keepdims)
    else:
        exact = not is_float(dt) and np.all(np.abs(ref) < 2 ** 24)
        tol = 0.0 if exact else gamma(n - 1) * np.abs(ref)
    within(got, ref, tol, dt, what)


@pytest.mark.parametrize("dt", dparams(INTS))
@pytest.mark.parametrize("op", sorted(BIT_FOLDS))
def test_tensor_reduce_bitwise(op, dt):
    """Bitvec folds combine the integers' bits, no fp32 cast (§3.4)."""
    x = full_range(dt, (P, A * B), seed("trb", op, dt))
    got = reduce_kernel(x, fn=lambda t: nisa.tensor_reduce(getattr(nl, op), t, axis=1, keepdims=True))
    assert_bits(got, BIT_FOLDS[op].reduce(x, axis=1, keepdims=True), f"nisa.tensor_reduce({op}, {np.dtype(dt)})")
