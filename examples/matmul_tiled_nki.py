"""Tiled matmul in the current `nki` API: out = lhsT.T @ rhs, accumulated in PSUM over the
contraction (K) tiles by nc_matmul(accumulate=True), then copied to SBUF and stored. The legacy
twin is matmul_tiled.py."""
import numpy as np

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def matmul_kernel(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    TILE_K, TILE_M, TILE_N = nl.tile_size.pmax, nl.tile_size.gemm_stationary_fmax, nl.tile_size.gemm_moving_fmax
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    for m in nl.affine_range(M // TILE_M):
        for n in nl.affine_range(N // TILE_N):
            acc = nl.ndarray((TILE_M, TILE_N), dtype=nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // TILE_K):
                a = nl.ndarray((TILE_K, TILE_M), dtype=lhsT.dtype, buffer=nl.sbuf)
                b = nl.ndarray((TILE_K, TILE_N), dtype=rhs.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=a, src=lhsT[k * TILE_K:(k + 1) * TILE_K, m * TILE_M:(m + 1) * TILE_M])
                nisa.dma_copy(dst=b, src=rhs[k * TILE_K:(k + 1) * TILE_K, n * TILE_N:(n + 1) * TILE_N])
                nisa.nc_matmul(dst=acc, stationary=a, moving=b, accumulate=k > 0)
            res = nl.ndarray((TILE_M, TILE_N), dtype=nl.float32, buffer=nl.sbuf)
            nisa.tensor_copy(dst=res, src=acc)
            nisa.dma_copy(dst=out[m * TILE_M:(m + 1) * TILE_M, n * TILE_N:(n + 1) * TILE_N], src=res)
    return out


def make_inputs():
    rng = np.random.default_rng(1)
    lhsT = rng.standard_normal((512, 256)).astype(nl.bfloat16)
    rhs = rng.standard_normal((512, 1024)).astype(nl.bfloat16)
    return lhsT, rhs


def reference(lhsT, rhs):
    return lhsT.astype(np.float32).T @ rhs.astype(np.float32)


TOLERANCE = 1e-5  # times max(1, max |reference|): fp32 sums in another order than numpy's

if __name__ == "__main__":
    lhsT, rhs = make_inputs()
    expected = reference(lhsT, rhs)
    np.testing.assert_allclose(nki.simulate(matmul_kernel)(lhsT, rhs), expected, rtol=0,
                               atol=TOLERANCE * max(1.0, np.abs(expected).max()))
    print("matmul_tiled_nki: ok")
