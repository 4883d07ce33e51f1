"""LayerNorm over ragged rows:
    out[i, :] = (x[i, :] - mean_i) / sqrt(var_i + eps) * gamma + beta
(population variance, like numpy's np.var). x is [n, d] with n not a multiple of
128; gamma and beta are 1-D [d] vectors loaded once as [1, d] tiles and broadcast
along the partition dim.

Two kernels:
  * nl.mean / nl.var (keepdims on the mean, var reshaped implicitly [128, 1]),
  * hand-written: nl.sum * 1/d for the mean, nl.subtract, nl.square, nl.sum for
    the variance, nl.rsqrt, then gamma/beta with nisa.tensor_tensor.
Every instruction of the row loop carries mask=(i_p < n).

Tolerances: inputs have |x| ~ 1 (x = 0.5 + N(0,1)). The mean of d fp32 values
summed in an undocumented order has absolute error <= d * 2^-24 * mean|x|
(~1.5e-5 for d = 256, |x| ~ 1); the variance likewise; (x - m) * rsqrt(v + eps)
with v ~ 1 turns that into an absolute error of a few 1e-5 on outputs of size
~1, scaled by |gamma| <= ~2. Hence rtol = 3e-5, atol = 6e-5 against float64.
bf16 input/output: + one bf16 rounding of the output, rtol = 2^-8 + 3e-5.
"""
import math

import numpy as np
import pytest

from neuronxcc import nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa

EPS = 1e-5


@nki.jit
def layernorm_meanvar_kernel(x, gamma, beta):
    n, d = x.shape
    out = nl.ndarray((n, d), dtype=x.dtype, buffer=nl.shared_hbm)
    P = nl.tile_size.pmax
    i_f = nl.arange(d)[None, :]
    i_0 = nl.arange(1)[:, None]
    g = nl.broadcast_to(nl.load(gamma.reshape((1, d))[i_0, i_f]), shape=(P, d))
    b = nl.broadcast_to(nl.load(beta.reshape((1, d))[i_0, i_f]), shape=(P, d))

    for t in nl.affine_range(math.ceil(n / P)):
        i_p = t * P + nl.arange(P)[:, None]
        valid = i_p < n
        x_tile = nl.load(x[i_p, i_f], mask=valid, dtype=nl.float32)
        mean = nl.mean(x_tile, axis=[1], keepdims=True, mask=valid)        # [128, 1]
        var = nl.var(x_tile, axis=[1], mask=valid)                         # [128, 1]
        rstd = nl.rsqrt(nl.add(var, EPS, mask=valid), mask=valid)
        centered = nl.subtract(x_tile, mean, mask=valid)
        normed = nl.multiply(centered, rstd, mask=valid)
        y = nl.add(nl.multiply(normed, g, mask=valid), b, mask=valid, dtype=x.dtype)
        nl.store(out[i_p, i_f], value=y, mask=valid)
    return out


@nki.jit
def layernorm_manual_kernel(x, gamma, beta):
    n, d = x.shape
    out = nl.ndarray((n, d), dtype=x.dtype, buffer=nl.shared_hbm)
    P = nl.tile_size.pmax
    i_f = nl.arange(d)[None, :]
    i_0 = nl.arange(1)[:, None]
    g = nl.load(gamma.reshape((1, d))[i_0, i_f]).broadcast_to((P, d))
    b = nl.load(beta.reshape((1, d))[i_0, i_f]).broadcast_to((P, d))

    for t in nl.affine_range(math.ceil(n / P)):
        i_p = t * P + nl.arange(P)[:, None]
        valid = i_p < n
        x_tile = nl.load(x[i_p, i_f], mask=valid)
        mean = nl.multiply(nl.sum(x_tile, axis=[1], keepdims=True, mask=valid, dtype=nl.float32), 1.0 / d,
                           mask=valid)
        centered = nl.subtract(x_tile, mean, mask=valid, dtype=nl.float32)
        var = nl.multiply(nl.sum(nl.square(centered, mask=valid), axis=[1], keepdims=True, mask=valid), 1.0 / d,
                          mask=valid)
        rstd = nl.rsqrt(nl.add(var, EPS, mask=valid), mask=valid)
        normed = nisa.tensor_scalar(centered, np.multiply, rstd, mask=valid)
        scaled = nisa.tensor_tensor(normed, g, np.multiply, mask=valid)
        y = nisa.tensor_tensor(scaled, b, np.add, mask=valid, dtype=x.dtype)
        nl.store(out[i_p, i_f], value=y, mask=valid)
    return out


def reference(x, gamma, beta):
    x64 = x.astype(np.float64)
    m = x64.mean(axis=1, keepdims=True)
    v = x64.var(axis=1, keepdims=True)
    return (x64 - m) / np.sqrt(v + EPS) * gamma.astype(np.float64) + beta.astype(np.float64)


def make_inputs(n, d, dtype, seed=0):
    rng = np.random.default_rng(seed)
    x = (0.5 + rng.standard_normal((n, d))).astype(np.float32).astype(dtype)
    gamma = (1.0 + 0.3 * rng.standard_normal(d)).astype(np.float32).astype(dtype)
    beta = (0.1 * rng.standard_normal(d)).astype(np.float32).astype(dtype)
    return x, gamma, beta


KERNELS = [pytest.param(layernorm_meanvar_kernel, id="nl.mean-nl.var"),
           pytest.param(layernorm_manual_kernel, id="manual")]


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("n,d", [(300, 256), (1000, 64), (129, 512), (5, 32)])
def test_layernorm_fp32(kernel, n, d):
    x, gamma, beta = make_inputs(n, d, np.float32)
    out = nki.simulate_kernel(kernel, x, gamma, beta)
    assert out.shape == (n, d) and out.dtype == np.float32
    np.testing.assert_allclose(out, reference(x, gamma, beta), rtol=3e-5, atol=6e-5)


@pytest.mark.parametrize("kernel", KERNELS)
def test_layernorm_bf16(kernel):
    x, gamma, beta = make_inputs(300, 256, nl.bfloat16, seed=1)
    out = nki.simulate_kernel(kernel, x, gamma, beta)
    assert out.dtype == nl.bfloat16
    np.testing.assert_allclose(out.astype(np.float64), reference(x, gamma, beta), rtol=2.0 ** -8 + 3e-5, atol=6e-5)


@pytest.mark.parametrize("kernel", KERNELS)
def test_layernorm_masked_rows_never_read(kernel):
    x, gamma, beta = make_inputs(300, 128, np.float32, seed=2)
    out = nki.simulate_kernel(kernel, x, gamma, beta, check_uninitialized=True)
    np.testing.assert_allclose(out, reference(x, gamma, beta), rtol=3e-5, atol=6e-5)


def test_layernorm_constant_rows_give_beta():
    # A constant row has mean = value and variance 0 exactly in fp32 (value is an
    # integer), so the output is beta + 0 * gamma = beta, bit for bit.
    n, d = 200, 64
    x = np.repeat(np.arange(n, dtype=np.float32)[:, None] - 100.0, d, axis=1)
    _, gamma, beta = make_inputs(n, d, np.float32, seed=3)
    for kernel in (layernorm_meanvar_kernel, layernorm_manual_kernel):
        out = nki.simulate_kernel(kernel, x, gamma, beta)
        assert np.array_equal(out, np.broadcast_to(beta, (n, d)))
