"""Matmul 3/4: hoisted loads and reordered loops.

The N loop is outermost: for one 512-wide column block every K tile of rhs is
loaded once, with one load through a 3-D advanced index
    rhs[k_idx * 128 + i_p, n * 512 + i_n]  ->  tile [128, K/128, 512]
(K tiles folded into the free dim, no deprecated block dims). Inside, the M loop
loads the matching lhsT tiles the same way ([128, K/128, 128]) and the K loop
only slices the already-resident tiles: lhsT_tiles[:, k, :], rhs_tiles[:, k, :].
A second kernel hoists with per-k stores into a pre-declared SBUF tile
(`lhsT_tiles[:, k, :] = nl.load(...)`) instead of one 3-D load.

Tolerances: as in test_matmul_single_tile.py (integer inputs exact bit for bit;
random inputs within (K+1) * 2^-24 * sum|a*b| of float64, + 2^-8 |ref| for bf16).
"""
import numpy as np
import pytest

from neuronxcc import nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa  # noqa: F401

TILE_K, TILE_M, TILE_N = 128, 128, 512


@nki.jit
def matmul_hoisted_kernel(lhsT, rhs):
    K, M = lhsT.shape
    K_, N = rhs.shape
    assert K == K_ and K % TILE_K == 0 and M % TILE_M == 0 and N % TILE_N == 0
    KT = K // TILE_K
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)

    i_p = nl.arange(TILE_K)[:, None, None]
    i_kt = nl.arange(KT)[None, :, None]
    i_m = nl.arange(TILE_M)[None, None, :]
    i_n = nl.arange(TILE_N)[None, None, :]
    i_out_p = nl.arange(TILE_M)[:, None]
    i_out_f = nl.arange(TILE_N)[None, :]

    for n in nl.affine_range(N // TILE_N):
        rhs_tiles = nl.load(rhs[i_kt * TILE_K + i_p, n * TILE_N + i_n])  # [128, KT, 512]
        for m in nl.affine_range(M // TILE_M):
            lhsT_tiles = nl.load(lhsT[i_kt * TILE_K + i_p, m * TILE_M + i_m])  # [128, KT, 128]
            res_psum = nl.zeros((TILE_M, TILE_N), nl.float32, buffer=nl.psum)
            for k in nl.affine_range(KT):
                res_psum += nl.matmul(lhsT_tiles[:, k, :], rhs_tiles[:, k, :], transpose_x=True)
            res_sb = nl.copy(res_psum, dtype=result.dtype)
            nl.store(result[m * TILE_M + i_out_p, n * TILE_N + i_out_f], value=res_sb)
    return result


@nki.jit
def matmul_hoisted_per_k_kernel(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    KT = K // TILE_K
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)

    for m in nl.affine_range(M // TILE_M):
        # All K tiles of this lhsT column block, loaded once per m.
        lhsT_tiles = nl.ndarray((TILE_K, KT, TILE_M), dtype=lhsT.dtype, buffer=nl.sbuf)
        for k in nl.affine_range(KT):
            lhsT_tiles[:, k, :] = nl.load(lhsT[nl.ds(k * TILE_K, TILE_K), nl.ds(m * TILE_M, TILE_M)])
        for n in nl.affine_range(N // TILE_N):
            rhs_tiles = nl.ndarray((TILE_K, KT, TILE_N), dtype=rhs.dtype, buffer=nl.sbuf)
            for k in nl.affine_range(KT):
                rhs_tiles[:, k, :] = nl.load(rhs[nl.ds(k * TILE_K, TILE_K), nl.ds(n * TILE_N, TILE_N)])
            res_psum = nl.zeros((TILE_M, TILE_N), nl.float32, buffer=nl.psum)
            for k in nl.affine_range(KT):
                res_psum += nl.matmul(lhsT_tiles[:, k, :], rhs_tiles[:, k, :], transpose_x=True)
            nl.store(result[nl.ds(m * TILE_M, TILE_M), nl.ds(n * TILE_N, TILE_N)],
                     value=nl.copy(res_psum, dtype=result.dtype))
    return result


def make_inputs(K, M, N, dtype, integers, seed=0):
    rng = np.random.default_rng(seed)
    if integers:
        a = rng.integers(-4, 5, size=(K, M)).astype(np.float32)
        b = rng.integers(-4, 5, size=(K, N)).astype(np.float32)
    else:
        a = rng.standard_normal((K, M)).astype(np.float32)
        b = rng.standard_normal((K, N)).astype(np.float32)
    return a.astype(dtype), b.astype(dtype)


def reference64(lhsT, rhs):
    return lhsT.astype(np.float64).T @ rhs.astype(np.float64)


def assert_matmul_close(out, lhsT, rhs):
    K = lhsT.shape[0]
    ref = reference64(lhsT, rhs)
    mag = np.abs(lhsT.astype(np.float64)).T @ np.abs(rhs.astype(np.float64))
    bound = (K + 1) * 2.0 ** -24 * mag
    if out.dtype != np.float32:
        bound = bound + 2.0 ** -8 * np.abs(ref)
    err = np.abs(out.astype(np.float64) - ref)
    assert np.all(err <= bound + 1e-30), f"max excess {np.max(err - bound)}"


DTYPES = [pytest.param(np.float32, id="fp32"), pytest.param(nl.bfloat16, id="bf16")]
KERNELS = [pytest.param(matmul_hoisted_kernel, id="3d-load"),
           pytest.param(matmul_hoisted_per_k_kernel, id="per-k-load")]


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("K,M,N", [(512, 256, 1024), (256, 384, 512)])
def test_hoisted_integers_exact(kernel, K, M, N, dtype):
    lhsT, rhs = make_inputs(K, M, N, dtype, integers=True)
    out = nki.simulate_kernel(kernel, lhsT, rhs)
    ref = reference64(lhsT, rhs).astype(np.float32).astype(dtype)
    assert out.dtype == ref.dtype and out.shape == (M, N)
    assert np.array_equal(out.view(np.uint8), ref.view(np.uint8))


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_hoisted_random(kernel, dtype):
    lhsT, rhs = make_inputs(512, 256, 1024, dtype, integers=False, seed=1)
    out = nki.simulate_kernel(kernel, lhsT, rhs)
    assert_matmul_close(out, lhsT, rhs)
