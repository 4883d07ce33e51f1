"""Matmul 2/4: tiled over M and N, K accumulated in PSUM.

result[M, N] = lhsT.T @ rhs with lhsT [K, M], rhs [K, N]. The output is cut into
128 x 512 tiles (nl.affine_range over M and N); for each output tile a PSUM
buffer starts at zero and K/128 products are accumulated into it with
`res_psum += nl.matmul(lhsT_tile, rhs_tile, transpose_x=True)` inside an
nl.affine_range over K (the accumulation pattern NKI_API.md §1.5 sanctions).
Tile bounds use slices with loop-variable starts, e.g. lhsT[k*128:(k+1)*128, ...].

Tolerances: as in test_matmul_single_tile.py. Small-integer inputs are exact in
fp32 (all partial sums are integers < 2^24), so fp32 and bf16 outputs are
compared bit for bit with numpy's float64 product rounded once. Random inputs
are checked against the rigorous bound |err| <= (K+1) * 2^-24 * sum|a*b|
(+ 2^-8 |ref| for a bf16 output).
"""
import numpy as np
import pytest

from neuronxcc import nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa  # noqa: F401

TILE_K = 128  # nl.tile_size.pmax
TILE_M = 128  # nl.tile_size.gemm_stationary_fmax
TILE_N = 512  # nl.tile_size.gemm_moving_fmax


@nki.jit
def matmul_tiled_kernel(lhsT, rhs):
    K, M = lhsT.shape
    K_, N = rhs.shape
    assert K == K_ and K % TILE_K == 0 and M % TILE_M == 0 and N % TILE_N == 0
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)

    for m in nl.affine_range(M // TILE_M):
        for n in nl.affine_range(N // TILE_N):
            res_psum = nl.zeros((TILE_M, TILE_N), nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // TILE_K):
                lhsT_tile = nl.ndarray((TILE_K, TILE_M), dtype=lhsT.dtype, buffer=nl.sbuf)
                rhs_tile = nl.ndarray((TILE_K, TILE_N), dtype=rhs.dtype, buffer=nl.sbuf)
                lhsT_tile[...] = nl.load(lhsT[k * TILE_K:(k + 1) * TILE_K, m * TILE_M:(m + 1) * TILE_M])
                rhs_tile[...] = nl.load(rhs[k * TILE_K:(k + 1) * TILE_K, n * TILE_N:(n + 1) * TILE_N])
                res_psum += nl.matmul(lhsT_tile, rhs_tile, transpose_x=True)
            res_sb = nl.copy(res_psum, dtype=result.dtype)
            nl.store(result[m * TILE_M:(m + 1) * TILE_M, n * TILE_N:(n + 1) * TILE_N], value=res_sb)
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
SHAPES = [pytest.param(512, 256, 1024, id="K512-M256-N1024"),
          pytest.param(128, 128, 512, id="K128-one-tile"),
          pytest.param(384, 384, 512, id="K384-M384-N512")]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("K,M,N", SHAPES)
def test_tiled_integers_exact(K, M, N, dtype):
    lhsT, rhs = make_inputs(K, M, N, dtype, integers=True)
    out = nki.simulate_kernel(matmul_tiled_kernel, lhsT, rhs)
    ref = reference64(lhsT, rhs).astype(np.float32).astype(dtype)
    assert out.dtype == ref.dtype and out.shape == (M, N)
    assert np.array_equal(out.view(np.uint8), ref.view(np.uint8))


@pytest.mark.parametrize("dtype", DTYPES)
def test_tiled_random(dtype):
    lhsT, rhs = make_inputs(512, 256, 1024, dtype, integers=False, seed=1)
    out = nki.simulate_kernel(matmul_tiled_kernel, lhsT, rhs)
    assert_matmul_close(out, lhsT, rhs)


def test_psum_starts_at_zero_for_every_output_tile():
    # lhsT = ones, rhs = ones: every output element is exactly K. Any PSUM
    # accumulation leaking from one (m, n) tile into the next would show as 2K, 3K...
    K, M, N = 256, 256, 1024
    lhsT = np.ones((K, M), np.float32)
    rhs = np.ones((K, N), np.float32)
    out = nki.simulate_kernel(matmul_tiled_kernel, lhsT, rhs)
    assert np.array_equal(out, np.full((M, N), K, np.float32))


def test_psum_accumulation_in_affine_range_is_not_a_race():
    # `res_psum += nl.matmul(...)` across the K affine_range is the sanctioned
    # associative accumulation (NKI_API.md §1.5): not a loop-carried dependency.
    lhsT, rhs = make_inputs(384, 256, 1024, np.float32, integers=True, seed=4)
    out = nki.simulate_kernel(matmul_tiled_kernel, lhsT, rhs, check_races=True, check_uninitialized=True)
    assert np.array_equal(out, reference64(lhsT, rhs).astype(np.float32))
