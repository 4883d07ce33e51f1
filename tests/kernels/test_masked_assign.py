"""Masked instructions whose result is assigned into an existing tile:
    dst[...] = nl.<op>(..., mask=m)
NKI_API.md §1.3: an assignment "invokes a copy (or writes the producing
instruction's output into dst)", and §6: a mask makes the instruction run only on
the predicated region, so elements of dst outside the mask keep their previous
contents. These kernels rely on that:

  * masked_update_kernel: a tile initialised to -7, then
    best[i_p, i_f] = nl.maximum(best, tile, mask=(i_p < n)) for n < 128 rows:
    rows >= n must still be -7;
  * zero_padded_load_kernel: t = nl.zeros(...); t[...] = nl.load(x, mask=(i_p < n)):
    rows >= n must still be 0;
  * ragged_k_matmul_kernel: a K = 200 contraction in two 128-row K tiles; each K
    tile is zero-filled and then loaded under mask=(k*128 + i_p < K), so the
    padded rows contribute 0 to res_psum += nl.matmul(..., transpose_x=True);
  * partial_matmul_into_zeros_kernel: an operand-masked nl.matmul (64 x 256 of
    the 128 x 512 result) assigned into a zero-filled PSUM tile: the rest stays 0.

Values are small integers, so all results are exact and compared bit for bit.
"""
import math

import numpy as np
import pytest

from neuronxcc import nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa  # noqa: F401


@nki.jit
def masked_update_kernel(x):
    n, d = x.shape
    out = nl.ndarray((128, d), dtype=x.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(d)[None, :]
    best = nl.full((128, d), -7.0, dtype=nl.float32, buffer=nl.sbuf)
    tile = nl.load(x[i_p, i_f], mask=(i_p < n))
    best[i_p, i_f] = nl.maximum(best, tile, mask=(i_p < n))
    nl.store(out, value=best)
    return out


@nki.jit
def zero_padded_load_kernel(x):
    n, d = x.shape
    out = nl.ndarray((128, d), dtype=x.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(d)[None, :]
    t = nl.zeros((128, d), dtype=x.dtype, buffer=nl.sbuf)
    t[i_p, i_f] = nl.load(x[i_p, i_f], mask=(i_p < n))
    nl.store(out, value=t)
    return out


@nki.jit
def ragged_k_matmul_kernel(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    result = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_m = nl.arange(M)[None, :]
    i_n = nl.arange(N)[None, :]
    res_psum = nl.zeros((M, N), nl.float32, buffer=nl.psum)
    for k in nl.affine_range(math.ceil(K / 128)):
        a = nl.zeros((128, M), dtype=lhsT.dtype, buffer=nl.sbuf)
        b = nl.zeros((128, N), dtype=rhs.dtype, buffer=nl.sbuf)
        a[i_p, i_m] = nl.load(lhsT[k * 128 + i_p, i_m], mask=(k * 128 + i_p < K))
        b[i_p, i_n] = nl.load(rhs[k * 128 + i_p, i_n], mask=(k * 128 + i_p < K))
        res_psum += nl.matmul(a, b, transpose_x=True)
    nl.store(result, value=nl.copy(res_psum))
    return result


@nki.jit
def partial_matmul_into_zeros_kernel(lhsT, rhs):
    """Operand masks (NKI_API.md §6): only the top-left 64 x 256 block of the
    product is computed, into a PSUM tile that was zero-filled first."""
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    i_m = nl.arange(128)[None, :]
    i_n = nl.arange(512)[None, :]
    a = nl.load(lhsT)
    b = nl.load(rhs)
    res_psum = nl.zeros((128, 512), nl.float32, buffer=nl.psum)
    res_psum[...] = nl.matmul(a[i_m < 64], b[i_n < 256], transpose_x=True)
    nl.store(out, value=nl.copy(res_psum))
    return out


def int_input(shape, seed=0):
    return np.random.default_rng(seed).integers(-9, 10, size=shape).astype(np.float32)


@pytest.mark.parametrize("n", [3, 77, 128])
def test_masked_update_keeps_rows_outside_mask(n):
    x = int_input((n, 16))
    out = nki.simulate_kernel(masked_update_kernel, x)
    ref = np.full((128, 16), -7.0, np.float32)
    ref[:n] = np.maximum(ref[:n], x)
    assert np.array_equal(out, ref)


@pytest.mark.parametrize("n", [5, 100])
def test_zero_padded_masked_load(n):
    x = int_input((n, 32), seed=1)
    out = nki.simulate_kernel(zero_padded_load_kernel, x)
    ref = np.zeros((128, 32), np.float32)
    ref[:n] = x
    assert np.array_equal(out, ref)


@pytest.mark.parametrize("K", [200, 256, 100])
def test_ragged_k_matmul_zero_padded(K):
    lhsT = int_input((K, 64), seed=2)
    rhs = int_input((K, 96), seed=3)
    out = nki.simulate_kernel(ragged_k_matmul_kernel, lhsT, rhs)
    assert np.array_equal(out, (lhsT.astype(np.float64).T @ rhs).astype(np.float32))


def test_operand_masked_matmul_into_zero_tile():
    lhsT = int_input((128, 128), seed=4)
    rhs = int_input((128, 512), seed=5)
    out = nki.simulate_kernel(partial_matmul_into_zeros_kernel, lhsT, rhs)
    ref = np.zeros((128, 512), np.float32)
    ref[:64, :256] = (lhsT.astype(np.float64).T @ rhs)[:64, :256]
    assert np.array_equal(out, ref)
