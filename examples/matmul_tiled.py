"""Tiled matmul: M and N tiles in nl.affine_range, K accumulated in PSUM with
`+=` (the sanctioned reduction inside an affine loop), bf16 inputs."""
import numpy as np

from neuronxcc import nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def matmul_kernel(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    TK, TM, TN = nl.tile_size.pmax, nl.tile_size.gemm_stationary_fmax, nl.tile_size.gemm_moving_fmax
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    for m in nl.affine_range(M // TM):
        for n in nl.affine_range(N // TN):
            acc = nl.zeros((TM, TN), dtype=nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // TK):
                a = nl.load(lhsT[k * TK:(k + 1) * TK, m * TM:(m + 1) * TM])
                b = nl.load(rhs[k * TK:(k + 1) * TK, n * TN:(n + 1) * TN])
                acc += nisa.nc_matmul(a, b)
            nl.store(out[m * TM:(m + 1) * TM, n * TN:(n + 1) * TN], value=nl.copy(acc))
    return out


def make_inputs():
    rng = np.random.default_rng(2)
    lhsT = rng.standard_normal((512, 256)).astype(np.float32).astype(nl.bfloat16)
    rhs = rng.standard_normal((512, 1024)).astype(np.float32).astype(nl.bfloat16)
    return lhsT, rhs


def reference(lhsT, rhs):
    return lhsT.astype(np.float32).T @ rhs.astype(np.float32)


TOLERANCE = 1e-5  # fp32 accumulation order differs from numpy's blocked sum


if __name__ == "__main__":
    out = nki.simulate_kernel(matmul_kernel, *make_inputs())
    np.testing.assert_allclose(out, reference(*make_inputs()), rtol=1e-4, atol=1e-3)
    print("matmul_tiled: ok")
