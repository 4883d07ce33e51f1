"""Elementwise activations on a [256, 384] tensor (two row tiles), fp32 and bf16.

  * activation_kernel(x, op=...): y = op(x) with an nl.* activation passed in as
    a compile-time kernel argument (nl.exp, nl.tanh, nl.sigmoid,
    nl.gelu_apprx_tanh, nl.silu, nl.relu, nl.gelu, nl.softplus);
  * activation_isa_kernel: nisa.activation(op, x, bias=b, scale=s) = op(x * s + b)
    with a per-partition [128, 1] bias tile and a scalar or per-partition scale.

Tolerances: NKI computes activations in fp32 and rounds once to the output dtype.
Against a float64 reference, fp32 allows a few ulps from the fp32 evaluation of
each function (rtol = 2e-6), plus atol = 1e-6 for the compositions that cancel
near zero output (gelu_apprx_tanh / silu / softplus for x << 0, where
1 + tanh(.) or 1 + e^x lose relative but not absolute accuracy: |x| <= 6 gives an
absolute error <= ~6 * 2^-23). bf16 outputs round the fp32 value once:
rtol = 2^-8 + 2e-6 (half an ulp of 8 significant bits, plus the fp32 error),
same atol. relu only selects: exact.
"""
import math

import numpy as np
import pytest

from neuronxcc import nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def activation_kernel(x, op):
    n, d = x.shape
    out = nl.ndarray((n, d), dtype=x.dtype, buffer=nl.shared_hbm)
    i_f = nl.arange(d)[None, :]
    for t in nl.affine_range(n // 128):
        i_p = t * 128 + nl.arange(128)[:, None]
        tile = nl.load(x[i_p, i_f])
        nl.store(out[i_p, i_f], value=op(tile))
    return out


@nki.jit
def activation_isa_kernel(x, bias, op, scale):
    """out = op(x * scale + bias[row]); scale is a Python float or None (then the
    per-row scale is 1 + bias/4, computed on chip)."""
    n, d = x.shape
    out = nl.ndarray((n, d), dtype=x.dtype, buffer=nl.shared_hbm)
    i_f = nl.arange(d)[None, :]
    i_0 = nl.arange(1)[None, :]
    for t in nl.affine_range(n // 128):
        i_p = t * 128 + nl.arange(128)[:, None]
        tile = nl.load(x[i_p, i_f])
        b = nl.load(bias[i_p, i_0])                                  # [128, 1] fp32
        s = nisa.tensor_scalar(b, np.multiply, 0.25, op1=np.add, operand1=1.0) if scale is None else scale
        y = nisa.activation(op=op, data=tile, bias=b, scale=s)
        nl.store(out[i_p, i_f], value=y)
    return out


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


_erf = np.vectorize(math.erf)

REFERENCES = {
    "exp": np.exp,
    "tanh": np.tanh,
    "sigmoid": _sigmoid,
    "gelu_apprx_tanh": lambda x: 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3))),
    "silu": lambda x: x * _sigmoid(x),
    "relu": lambda x: np.maximum(x, 0.0),
    "gelu": lambda x: 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0))),
    "softplus": lambda x: np.logaddexp(0.0, x),
}


def make_input(dtype, seed=0, shape=(256, 384)):
    rng = np.random.default_rng(seed)
    # Mostly in [-3, 3] with tails up to +-6, where the functions saturate.
    x = np.clip(2.0 * rng.standard_normal(shape), -6.0, 6.0)
    return x.astype(np.float32).astype(dtype)


def check(out, ref, dtype, name):
    assert out.dtype == np.dtype(dtype)
    if name == "relu":
        assert np.array_equal(out, ref.astype(np.float32).astype(dtype))
        return
    rtol = 2e-6 if dtype == np.float32 else 2.0 ** -8 + 2e-6
    np.testing.assert_allclose(out.astype(np.float64), ref, rtol=rtol, atol=1e-6)


DTYPES = [pytest.param(np.float32, id="fp32"), pytest.param(nl.bfloat16, id="bf16")]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(REFERENCES))
def test_nl_activation(name, dtype):
    x = make_input(dtype)
    out = nki.simulate_kernel(activation_kernel, x, op=getattr(nl, name))
    check(out, REFERENCES[name](x.astype(np.float64)), dtype, name)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["exp", "tanh", "sigmoid", "gelu_apprx_tanh"])
@pytest.mark.parametrize("scale", [0.5, None], ids=["scalar-scale", "tile-scale"])
def test_isa_activation_bias_scale(name, scale, dtype):
    x = make_input(dtype, seed=1)
    rng = np.random.default_rng(2)
    bias = rng.uniform(-1.0, 1.0, size=(x.shape[0], 1)).astype(np.float32)
    out = nki.simulate_kernel(activation_isa_kernel, x, bias, op=getattr(nl, name), scale=scale)
    b64 = bias.astype(np.float64)
    s64 = 0.5 if scale is not None else 1.0 + b64 * 0.25
    ref = REFERENCES[name](x.astype(np.float64) * s64 + b64)
    # scale * x + bias adds one fp32 rounding of an argument <= ~7 in magnitude
    # (<= 2^-21 absolute), amplified by the function's slope (<= e^7 for exp;
    # relative 2^-21 for exp): covered by rtol 2e-6 + one more ulp -> 3e-6.
    rtol = 3e-6 if dtype == np.float32 else 2.0 ** -8 + 3e-6
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_allclose(out.astype(np.float64), ref, rtol=rtol, atol=1e-6)


def test_activation_bf16_rounds_once():
    # Bit-level check for exp: the fp32 result (numpy's float32 exp agrees with a
    # correctly rounded exp to within 1 ulp) rounded once to bf16 must match
    # numpy's fp32 exp rounded to bf16, except where the fp32 value sits within
    # 1 fp32 ulp of a bf16 rounding boundary.
    x = make_input(nl.bfloat16, seed=3)
    out = nki.simulate_kernel(activation_kernel, x, op=nl.exp)
    e32 = np.exp(x.astype(np.float32))
    ref = e32.astype(nl.bfloat16)
    lo = np.nextafter(e32, -np.inf).astype(nl.bfloat16)
    hi = np.nextafter(e32, np.inf).astype(nl.bfloat16)
    ok = (out == ref) | (out == lo) | (out == hi)
    assert np.all(ok)
    assert np.mean(out == ref) > 0.99
