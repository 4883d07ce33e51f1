"""RMSNorm over a row count that is not a multiple of 128:
    out[i, :] = x[i, :] / sqrt(mean(x[i, :]^2) + eps) * w

x is [n, d] with n = 300 (last row tile has 44 valid rows), w is a 1-D [d] weight
vector loaded once as a [1, d] tile (HBM reshape) and broadcast along the
partition dim with nl.broadcast_to. Three variants:
  * hand-written: nl.square, nl.sum(keepdims), multiply by 1/d, add eps,
    nl.rsqrt, free-dim broadcast multiply by the [128, 1] factor, times w;
  * nl.rms_norm(x, w_bcast, axis=[1], n=d);
  * hand-written with nisa.activation(op=nl.square, ...) + nisa.tensor_reduce and
    nisa.tensor_scalar (multiply by the per-row factor).
Every instruction of the row loop carries mask=(i_p < n).

Tolerances: the sum of d squares (all >= 0) is accumulated in fp32 in an
undocumented order, relative error <= d * 2^-24 (= 1.5e-5 for d = 256); the
rsqrt halves it and adds a few ulp; two fp32 multiplies add 2 ulp. So
rtol = 2e-5 against float64 for fp32 (atol 0: no output is 0). bf16 input and
output: one more rounding of the result, rtol = 2^-8 + 2e-5.
"""
import math

import numpy as np
import pytest

from neuronxcc import nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa

EPS = 1e-6


@nki.jit
def rmsnorm_manual_kernel(x, w):
    n, d = x.shape
    out = nl.ndarray((n, d), dtype=x.dtype, buffer=nl.shared_hbm)
    P = nl.tile_size.pmax
    i_f = nl.arange(d)[None, :]
    i_w = nl.arange(1)[:, None]

    w_tile = nl.load(w.reshape((1, d))[i_w, i_f])
    w_bcast = nl.broadcast_to(w_tile, shape=(P, d))

    for t in nl.affine_range(math.ceil(n / P)):
        i_p = t * P + nl.arange(P)[:, None]
        valid = i_p < n
        x_tile = nl.load(x[i_p, i_f], mask=valid)
        sq = nl.square(x_tile, mask=valid, dtype=nl.float32)
        ss = nl.sum(sq, axis=[1], keepdims=True, mask=valid)
        ms = nl.multiply(ss, 1.0 / d, mask=valid)
        r = nl.rsqrt(nl.add(ms, EPS, mask=valid), mask=valid)
        xr = nl.multiply(x_tile, r, mask=valid, dtype=nl.float32)
        y = nl.multiply(xr, w_bcast, mask=valid, dtype=x.dtype)
        nl.store(out[i_p, i_f], value=y, mask=valid)
    return out


@nki.jit
def rmsnorm_builtin_kernel(x, w):
    n, d = x.shape
    out = nl.ndarray((n, d), dtype=x.dtype, buffer=nl.shared_hbm)
    P = nl.tile_size.pmax
    i_f = nl.arange(d)[None, :]
    w_tile = nl.load(w.reshape((1, d))[nl.arange(1)[:, None], i_f])
    w_bcast = nl.broadcast_to(w_tile, shape=(P, d))
    for t in nl.affine_range(math.ceil(n / P)):
        i_p = t * P + nl.arange(P)[:, None]
        x_tile = nl.load(x[i_p, i_f], mask=(i_p < n))
        y = nl.rms_norm(x_tile, w_bcast, axis=[1], n=d, epsilon=EPS, compute_dtype=nl.float32, mask=(i_p < n))
        nl.store(out[i_p, i_f], value=nl.copy(y, dtype=x.dtype, mask=(i_p < n)), mask=(i_p < n))
    return out


@nki.jit
def rmsnorm_isa_kernel(x, w):
    n, d = x.shape
    out = nl.ndarray((n, d), dtype=x.dtype, buffer=nl.shared_hbm)
    P = nl.tile_size.pmax
    i_f = nl.arange(d)[None, :]
    w_bcast = nl.broadcast_to(nl.load(w.reshape((1, d))[nl.arange(1)[:, None], i_f]), shape=(P, d))
    for t in nl.affine_range(math.ceil(n / P)):
        i_p = t * P + nl.arange(P)[:, None]
        valid = i_p < n
        x_tile = nl.load(x[i_p, i_f], mask=valid)
        sq = nisa.activation(op=nl.square, data=x_tile, mask=valid, dtype=nl.float32)
        ss = nisa.tensor_reduce(np.add, sq, axis=[1], keepdims=True, mask=valid)
        # (ss * 1/d) + eps, then rsqrt
        ms = nisa.tensor_scalar(ss, np.multiply, 1.0 / d, op1=np.add, operand1=EPS, mask=valid)
        r = nisa.activation(op=nl.rsqrt, data=ms, mask=valid)
        xr = nisa.tensor_scalar(x_tile, np.multiply, r, mask=valid, dtype=nl.float32)
        y = nisa.tensor_tensor(xr, w_bcast, np.multiply, mask=valid, dtype=x.dtype)
        nl.store(out[i_p, i_f], value=y, mask=valid)
    return out


def reference(x, w):
    x64 = x.astype(np.float64)
    r = 1.0 / np.sqrt(np.mean(x64 * x64, axis=1, keepdims=True) + EPS)
    return x64 * r * w.astype(np.float64)[None, :]


def make_inputs(n, d, dtype, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d)).astype(np.float32).astype(dtype)
    w = (1.0 + 0.5 * rng.standard_normal(d)).astype(np.float32).astype(dtype)
    return x, w


KERNELS = [pytest.param(rmsnorm_manual_kernel, id="manual"),
           pytest.param(rmsnorm_builtin_kernel, id="nl.rms_norm"),
           pytest.param(rmsnorm_isa_kernel, id="nisa")]


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("n,d", [(300, 256), (128, 512), (1, 64), (1000, 128)])
def test_rmsnorm_fp32(kernel, n, d):
    x, w = make_inputs(n, d, np.float32)
    out = nki.simulate_kernel(kernel, x, w)
    assert out.shape == (n, d) and out.dtype == np.float32
    np.testing.assert_allclose(out, reference(x, w), rtol=2e-5, atol=0)


@pytest.mark.parametrize("kernel", KERNELS)
def test_rmsnorm_bf16(kernel):
    x, w = make_inputs(300, 256, nl.bfloat16, seed=1)
    out = nki.simulate_kernel(kernel, x, w)
    assert out.dtype == nl.bfloat16
    np.testing.assert_allclose(out.astype(np.float64), reference(x, w), rtol=2.0 ** -8 + 2e-5, atol=0)


@pytest.mark.parametrize("kernel", KERNELS)
def test_rmsnorm_masked_rows_never_read(kernel):
    x, w = make_inputs(300, 256, np.float32, seed=2)
    out = nki.simulate_kernel(kernel, x, w, check_uninitialized=True)
    np.testing.assert_allclose(out, reference(x, w), rtol=2e-5, atol=0)
