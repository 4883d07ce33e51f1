"""Numerics of every nl.* elementwise unary op (NKI_API.md §2.8, §2.9) and of
nisa.activation with scale/bias (§3.3, §3.4), on every input dtype: float32,
float16, bfloat16, float8_e4m3, float8_e5m2 and the six integer formats.

Model (§1.6): the input is decoded to fp32, the op computed in fp32, and the
result rounded once to the output dtype (the input dtype by default, dtype=
when given). References: test_numerics_api_ref.

  * Exactly rounded in fp32 (abs, negative, sign, trunc, floor, ceil, square,
    relu, sqrt, reciprocal, invert on integers): numpy float32 computes the same
    fp32 value, rounded the same way to the output dtype -> compared bit for bit.
  * Transcendentals: the exact value in float64 from the documented formula;
    allowed |fp32 result - exact| <= 4 fp32 ulps of the result (library-grade
    exp/log/sin/... and a few correctly rounded fp32 steps), plus, where the
    formula's fp32 evaluation cancels or amplifies argument rounding, the error
    of that step stated per op (e.g. gelu: 4 * 2^-24 * |x| for the 1 + erf(...)
    cancellation at negative x). Checked exactly on the output grid by `within`.
Input domains follow the activation table's valid ranges (§3.3)."""
import math

import numpy as np
import pytest

from neuronxcc import nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

from test_numerics_api_ref import (ALL, INTS, U, assert_bits, dparams, dt_id, fmax, ftiny, full_range,
                                   is_float, rnd, seed, to_f32, ulp32, values, within)

SHAPE = (128, 64)


@nki.jit
def unary_kernel(x, fn, dtype=None):
    t = nl.load(x)
    r = fn(t) if dtype is None else fn(t, dtype=dtype)
    out = nl.ndarray(r.shape, dtype=r.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=r)
    return out


# ------------------------------------------------------------------ references

_erf = np.vectorize(math.erf, otypes=[np.float64])
_erfc = np.vectorize(math.erfc, otypes=[np.float64])


def _sig(x):
    return 0.5 * (1.0 + np.tanh(0.5 * x))  # no overflow in float64


def _phi_cdf(x):
    return 0.5 * _erfc(-x / math.sqrt(2.0))


def _softplus(x):
    return np.logaddexp(0.0, x)


def _sign32(x):
    return np.where(x > 0, np.float32(1), np.where(x < 0, np.float32(-1), np.where(x == 0, np.float32(0), x)))


# Exact ops: the fp32 result, computed by numpy in float32.
EXACT = {
    "abs": np.abs,
    "negative": np.negative,
    "sign": _sign32,
    "trunc": np.trunc,
    "floor": np.floor,
    "ceil": np.ceil,
    "square": lambda x: x * x,
    "relu": lambda x: np.where(x > 0, x, np.float32(0)),
    "sqrt": np.sqrt,
    "reciprocal": lambda x: np.float32(1) / x,
}


def _ulps(k):
    return lambda x, r: k * ulp32(r)


# Transcendentals: (exact value in float64, tolerance(x, exact) in float64).
TRANSCENDENTAL = {
    "exp": (np.exp, _ulps(4)),
    "log": (np.log, _ulps(4)),
    "sin": (np.sin, _ulps(4)),
    "cos": (np.cos, _ulps(4)),
    "tan": (np.tan, _ulps(4)),
    "tanh": (np.tanh, _ulps(4)),
    "arctan": (np.arctan, _ulps(4)),
    "rsqrt": (lambda x: 1.0 / np.sqrt(x), _ulps(4)),
    "sigmoid": (_sig, _ulps(4)),
    # 0.5 x (1 + erf(x / sqrt 2)): 1 + erf cancels for x < 0; its absolute error
    # (a few 2^-24) is scaled by 0.5 |x|.
    "gelu": (lambda x: x * _phi_cdf(x), lambda x, r: 4 * ulp32(r) + 4 * U * np.abs(x)),
    # Phi(x) + x phi(x): terms of magnitude <= 1 cancel near the root x ~ -0.75.
    "gelu_dx": (lambda x: _phi_cdf(x) + x * np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi),
                lambda x, r: 4 * ulp32(r) + 4 * U),
    # 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))): same cancellation as gelu.
    "gelu_apprx_tanh": (lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3))),
                        lambda x, r: 4 * ulp32(r) + 4 * U * np.abs(x)),
    # x sigmoid(1.702 x): the rounding of 1.702 x (relative 2^-24) moves
    # sigmoid's tail by a relative |1.702 x| 2^-24.
    "gelu_apprx_sigmoid": (lambda x: x * _sig(1.702 * x), lambda x, r: (4 + 2 * np.abs(x)) * ulp32(r)),
    "silu": (lambda x: x * _sig(x), _ulps(6)),
    # s (1 + x (1 - s)): 1 - s and 1 + x(1 - s) cancel; absolute error ~ s (1 + |x|) 2^-24.
    "silu_dx": (lambda x: _sig(x) * (1 + x * (1 - _sig(x))),
                lambda x, r: 4 * ulp32(r) + 8 * U * _sig(x) * (1 + np.abs(x))),
    "erf": (_erf, _ulps(4)),
    # 2/sqrt(pi) exp(-x^2): the fp32 rounding of x^2 is a relative x^2 2^-24 error of the result.
    "erf_dx": (lambda x: 2 / math.sqrt(math.pi) * np.exp(-x * x), lambda x, r: (4 + 2 * x * x) * ulp32(r)),
    "softplus": (_softplus, _ulps(4)),
    "mish": (lambda x: x * np.tanh(_softplus(x)), _ulps(8)),
}

# Input domains: ("lin", lo, hi) uniform, ("log", lo, hi) log-uniform positive,
# ("pmlog", lo, hi) log-uniform with random sign (§3.3 ranges).
DOMAIN = {
    "exp": ("lin", -20, 20), "log": ("log", 2.0 ** -20, 2.0 ** 20), "sin": ("lin", -math.pi, math.pi),
    "cos": ("lin", -math.pi, math.pi), "tan": ("lin", -1.4, 1.4), "arctan": ("lin", -math.pi / 2, math.pi / 2),
    "sqrt": ("log", 2.0 ** -20, 2.0 ** 20), "rsqrt": ("log", 2.0 ** -20, 2.0 ** 20),
    "reciprocal": ("pmlog", 2.0 ** -20, 2.0 ** 20),
    "abs": ("lin", -100, 100), "negative": ("lin", -100, 100), "sign": ("lin", -100, 100),
    "trunc": ("lin", -100, 100), "floor": ("lin", -100, 100), "ceil": ("lin", -100, 100),
    "square": ("lin", -100, 100), "relu": ("lin", -100, 100),
}


def make_input(op, dt, rng):
    kind, lo, hi = DOMAIN.get(op, ("lin", -6, 6))
    if not is_float(dt):
        if op in ("abs", "negative", "sign", "trunc", "floor", "ceil", "relu", "square"):
            return full_range(dt, SHAPE, rng)
        if kind != "lin":
            return values(dt, SHAPE, rng, 1, min(hi, 1000))
        return values(dt, SHAPE, rng, lo, hi)
    if kind == "lin":
        x = rng.uniform(lo, hi, SHAPE)
    else:
        lo, hi = max(lo, ftiny(dt)), min(hi, fmax(dt) / 2)
        x = np.exp(rng.uniform(math.log(lo), math.log(hi), SHAPE))
        if kind == "pmlog":
            x *= rng.choice([-1.0, 1.0], SHAPE)
    x = x.astype(np.float32).astype(dt)
    if kind == "lin" and lo <= 0 <= hi:
        x.reshape(-1)[:2] = 0  # exact zero (and its sign handling) in every run
    return x


def expected_exact(op, x, out_dt):
    with np.errstate(all="ignore"):
        return rnd(EXACT[op](to_f32(x)), out_dt)


def check(op, x, got, out_dt):
    what = f"nl.{op} {x.dtype}->{np.dtype(out_dt)}"
    assert got.dtype == np.dtype(out_dt), (what, got.dtype)
    if op in EXACT:
        assert_bits(got, expected_exact(op, x, out_dt), what)
    else:
        f, tol = TRANSCENDENTAL[op]
        x64 = to_f32(x).astype(np.float64)
        with np.errstate(all="ignore"):
            ref = f(x64)
            within(got, ref, tol(x64, ref), out_dt, what, x=x)


UNARY = sorted(EXACT) + sorted(TRANSCENDENTAL)


@pytest.mark.parametrize("dt", dparams(ALL))
@pytest.mark.parametrize("op", UNARY)
def test_unary_default_dtype(op, dt):
    rng = seed(op, dt_id(dt))
    x = make_input(op, dt, rng)
    got = unary_kernel(x, fn=getattr(nl, op))
    check(op, x, got, dt)  # unary ops keep the input dtype (§2.8)


# (input dtype, dtype=): the rounding happens once, at the op's output.
CASTS = [(np.float32, nl.bfloat16), (nl.bfloat16, np.float32), (np.float16, nl.float8_e5m2),
         (np.float32, nl.float8_e4m3), (np.float32, np.int16), (np.int32, np.float16)]


@pytest.mark.parametrize("src,dst", [pytest.param(s, d, id=f"{dt_id(s)}->{dt_id(d)}") for s, d in CASTS])
@pytest.mark.parametrize("op", UNARY)
def test_unary_dtype_argument(op, src, dst):
    rng = seed(op, dt_id(src), "cast")
    x = make_input(op, src, rng)
    got = unary_kernel(x, fn=getattr(nl, op), dtype=dst)
    check(op, x, got, dst)


@pytest.mark.parametrize("dt", dparams(INTS))
def test_invert_integers(dt):
    x = full_range(dt, SHAPE, np.random.default_rng(5))
    got = unary_kernel(x, fn=nl.invert)
    assert_bits(got, ~x, f"nl.invert {np.dtype(dt)}")


@pytest.mark.parametrize("dt", dparams(ALL))
def test_logical_not(dt):
    rng = np.random.default_rng(6)
    x = values(dt, SHAPE, rng, -2, 2)
    got = unary_kernel(x, fn=nl.logical_not)
    assert_bits(got, to_f32(x) == 0, f"nl.logical_not {np.dtype(dt)}")  # dtype=bool by default (§2.9)


# ------------------------------------------------------------------ nisa.activation

@nki.jit
def activation_kernel(x, op, scale_tile=None, bias=None, scale=1.0, dtype=None):
    t = nl.load(x)
    b = None if bias is None else nl.load(bias)
    s = scale if scale_tile is None else nl.load(scale_tile)
    r = nisa.activation(op=op, data=t, bias=b, scale=s, dtype=dtype)
    out = nl.ndarray(r.shape, dtype=r.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=r)
    return out


# The activation table (§3.3); identity is nl.copy.
ACTIVATION = ["copy", "square", "sigmoid", "relu", "gelu", "gelu_dx", "gelu_apprx_tanh", "gelu_apprx_sigmoid",
              "silu", "silu_dx", "tanh", "softplus", "mish", "erf", "erf_dx", "exp", "sign", "abs", "log", "sin",
              "arctan", "sqrt", "rsqrt", "reciprocal"]
POSITIVE = {"log", "sqrt", "rsqrt", "reciprocal"}


@pytest.mark.parametrize("form", ["scalar-scale", "tile-scale", "bf16-bias"])
@pytest.mark.parametrize("dt", dparams([np.float32, nl.bfloat16, np.float16]))
@pytest.mark.parametrize("op", ACTIVATION)
def test_activation_scale_bias(op, dt, form):
    """out = op(data * scale + bias) in fp32 (§3.4). Scales are powers of two, so
    data * scale is exact and the affine step has one rounding (the add)."""
    rng = seed(op, dt_id(dt), form)
    if op in POSITIVE:
        x = rng.uniform(0.25, 8.0, SHAPE).astype(np.float32).astype(dt)
        bias = rng.uniform(0.0, 1.0, (SHAPE[0], 1)).astype(np.float32)
    else:
        x = rng.uniform(-3, 3, SHAPE).astype(np.float32).astype(dt)
        bias = rng.uniform(-1.0, 1.0, (SHAPE[0], 1)).astype(np.float32)
    if op in ("sin", "arctan"):  # keep the argument inside [-pi/2, pi/2] (§3.3)
        x = (to_f32(x) / 4).astype(dt)
        bias = bias / 4
    if form == "bf16-bias":
        bias = bias.astype(nl.bfloat16)
    fn = nl.copy if op == "copy" else getattr(nl, op)
    if form == "tile-scale":
        scale = rng.choice([0.5, 1.0, 2.0], (SHAPE[0], 1)).astype(np.float32)
        got = activation_kernel(x, op=fn, scale_tile=scale, bias=bias)
    else:
        scale = np.float32(0.5)
        got = activation_kernel(x, op=fn, bias=bias, scale=0.5)
    arg = to_f32(x) * scale + to_f32(bias)  # float32: the exact product, one rounded add
    assert arg.dtype == np.float32
    what = f"nisa.activation({op}) {form} {np.dtype(dt)}"
    assert got.dtype == np.dtype(dt), (what, got.dtype)
    if op == "copy":
        assert_bits(got, rnd(arg, dt), what)
    elif op in EXACT:
        with np.errstate(all="ignore"):
            assert_bits(got, rnd(EXACT[op](arg), dt), what)
    else:
        f, tol = TRANSCENDENTAL[op]
        a64 = arg.astype(np.float64)
        ref = f(a64)
        within(got, ref, tol(a64, ref), dt, what, x=arg)


@pytest.mark.parametrize("out", dparams([np.float32, nl.bfloat16, nl.float8_e4m3, np.int8]))
def test_activation_dtype_argument(out):
    rng = np.random.default_rng(11)
    x = rng.uniform(-3, 3, SHAPE).astype(np.float32)
    got = activation_kernel(x, op=nl.exp, scale=2.0, dtype=out)
    ref = np.exp((x * np.float32(2)).astype(np.float64))
    within(got, ref, 4 * ulp32(ref), out, f"nisa.activation(exp, dtype={np.dtype(out)})")
