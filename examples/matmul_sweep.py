"""Tiled matmul with its tile sizes as keyword parameters, for `nkic sweep`:

    nkic sweep examples/matmul_sweep.py --param TILE_N=256,512,1024 --param TILE_K=64,128

TILE_K is the contraction tile (the partitions of both operands), TILE_N the free size of the
moving operand; 1024 is more than the Tensor Engine takes, and the sweep reports that
configuration's diagnostic instead of a latency (docs/sweep.md)."""
import numpy as np

from neuronxcc import nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def matmul_sweep(lhsT, rhs, TILE_N=512, TILE_K=128):
    K, M = lhsT.shape
    _, N = rhs.shape
    TILE_M = nl.tile_size.gemm_stationary_fmax
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    for m in nl.affine_range(M // TILE_M):
        for n in nl.affine_range(N // TILE_N):
            acc = nl.zeros((TILE_M, TILE_N), dtype=nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // TILE_K):
                a = nl.load(lhsT[k * TILE_K:(k + 1) * TILE_K, m * TILE_M:(m + 1) * TILE_M])
                b = nl.load(rhs[k * TILE_K:(k + 1) * TILE_K, n * TILE_N:(n + 1) * TILE_N])
                acc += nisa.nc_matmul(a, b)
            nl.store(out[m * TILE_M:(m + 1) * TILE_M, n * TILE_N:(n + 1) * TILE_N], value=nl.copy(acc))
    return out


def make_inputs():
    rng = np.random.default_rng(7)
    lhsT = rng.standard_normal((256, 256)).astype(np.float32).astype(nl.bfloat16)
    rhs = rng.standard_normal((256, 1024)).astype(np.float32).astype(nl.bfloat16)
    return lhsT, rhs


def reference(lhsT, rhs, **tiles):
    """The same product for every tile size: the parameters change the schedule, not the result."""
    return lhsT.astype(np.float32).T @ rhs.astype(np.float32)


TOLERANCE = 1e-5  # fp32 accumulation in PSUM, in a different order than numpy's
