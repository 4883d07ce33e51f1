"""Matmul 4/4: blocked, with several PSUM tiles live per block.

The output is cut into blocks of BLOCK_M = TILES_M * 128 rows and
BLOCK_N = TILES_N * 512 columns, and K into blocks of BLOCK_K = TILES_K * 128.
For one (M-block, N-block) the kernel keeps an SBUF accumulator
[128, TILES_M, BLOCK_N] (fp32). For every K-block it loads the lhsT block
[128, TILES_K, BLOCK_M] and rhs block [128, TILES_K, BLOCK_N] once, computes all
TILES_M x TILES_N output tiles of the block, each in its own PSUM tile
(`res_psum += nl.matmul(...)` over the TILES_K tiles), and adds every PSUM tile
into the SBUF accumulator (`acc[:, bm, n-slice] += res_psum`). Only PSUM
accumulation may cross affine_range iterations, so the K-block loop that adds into
the SBUF accumulator is a sequential_range. The accumulator is finally cast to
the output dtype and stored tile by tile.

A second kernel keeps a whole [128, TILES_N, 512] PSUM tensor per M tile (TILES_N
banks live at once) and accumulates into its [:, bn, :] slices.

Tolerances: as in test_matmul_single_tile.py. Integer inputs are exact bit for
bit. Random inputs: the K-blocked sum adds fp32 partial sums, still a recursive
fp32 summation of K products, so the same (K+1) * 2^-24 * sum|a*b| bound holds
(+ 2^-8 |ref| for the final bf16 rounding).
"""
import numpy as np
import pytest

from neuronxcc import nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa  # noqa: F401

TILE_K, TILE_M, TILE_N = 128, 128, 512


@nki.jit
def matmul_blocked_kernel(lhsT, rhs, TILES_M=2, TILES_N=2, TILES_K=2):
    K, M = lhsT.shape
    K_, N = rhs.shape
    BLOCK_M, BLOCK_N, BLOCK_K = TILES_M * TILE_M, TILES_N * TILE_N, TILES_K * TILE_K
    assert K == K_ and M % BLOCK_M == 0 and N % BLOCK_N == 0 and K % BLOCK_K == 0
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)

    i_p = nl.arange(TILE_K)[:, None, None]
    i_kt = nl.arange(TILES_K)[None, :, None]
    i_bm = nl.arange(BLOCK_M)[None, None, :]
    i_bn = nl.arange(BLOCK_N)[None, None, :]

    for mb in nl.affine_range(M // BLOCK_M):
        for nb in nl.affine_range(N // BLOCK_N):
            acc = nl.zeros((TILE_M, TILES_M, BLOCK_N), nl.float32, buffer=nl.sbuf)
            for kb in nl.sequential_range(K // BLOCK_K):  # SBUF `acc +=` below: a loop-carried dependency
                lhsT_blk = nl.load(lhsT[kb * BLOCK_K + i_kt * TILE_K + i_p, mb * BLOCK_M + i_bm])
                rhs_blk = nl.load(rhs[kb * BLOCK_K + i_kt * TILE_K + i_p, nb * BLOCK_N + i_bn])
                for bm in nl.affine_range(TILES_M):
                    for bn in nl.affine_range(TILES_N):
                        res_psum = nl.zeros((TILE_M, TILE_N), nl.float32, buffer=nl.psum)
                        for kt in nl.affine_range(TILES_K):
                            res_psum += nl.matmul(lhsT_blk[:, kt, nl.ds(bm * TILE_M, TILE_M)],
                                                  rhs_blk[:, kt, nl.ds(bn * TILE_N, TILE_N)],
                                                  transpose_x=True)
                        acc[:, bm, nl.ds(bn * TILE_N, TILE_N)] += res_psum
            for bm in nl.affine_range(TILES_M):
                out_tile = nl.copy(acc[:, bm, :], dtype=result.dtype)
                nl.store(result[nl.ds(mb * BLOCK_M + bm * TILE_M, TILE_M), nl.ds(nb * BLOCK_N, BLOCK_N)],
                         value=out_tile)
    return result


@nki.jit
def matmul_multi_psum_kernel(lhsT, rhs, TILES_N=4):
    K, M = lhsT.shape
    _, N = rhs.shape
    KT = K // TILE_K
    BLOCK_N = TILES_N * TILE_N
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for m in nl.affine_range(M // TILE_M):
        for nb in nl.affine_range(N // BLOCK_N):
            res_psum = nl.zeros((TILE_M, TILES_N, TILE_N), nl.float32, buffer=nl.psum)
            for k in nl.affine_range(KT):
                lhsT_tile = nl.load(lhsT[nl.ds(k * TILE_K, TILE_K), nl.ds(m * TILE_M, TILE_M)])
                for bn in nl.affine_range(TILES_N):
                    rhs_tile = nl.load(rhs[nl.ds(k * TILE_K, TILE_K), nl.ds(nb * BLOCK_N + bn * TILE_N, TILE_N)])
                    res_psum[:, bn, :] += nl.matmul(lhsT_tile, rhs_tile, transpose_x=True)
            for bn in nl.affine_range(TILES_N):
                nl.store(result[nl.ds(m * TILE_M, TILE_M), nl.ds(nb * BLOCK_N + bn * TILE_N, TILE_N)],
                         value=nl.copy(res_psum[:, bn, :], dtype=result.dtype))
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


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("K,M,N,blocks", [
    pytest.param(512, 512, 2048, dict(TILES_M=2, TILES_N=2, TILES_K=2), id="2x2x2-blocks"),
    pytest.param(384, 256, 1024, dict(TILES_M=1, TILES_N=2, TILES_K=3), id="1x2x3-one-kblock"),
    pytest.param(256, 256, 512, dict(TILES_M=2, TILES_N=1, TILES_K=1), id="2x1x1"),
])
def test_blocked_integers_exact(K, M, N, blocks, dtype):
    lhsT, rhs = make_inputs(K, M, N, dtype, integers=True)
    out = nki.simulate_kernel(matmul_blocked_kernel, lhsT, rhs, **blocks)
    ref = reference64(lhsT, rhs).astype(np.float32).astype(dtype)
    assert out.dtype == ref.dtype and out.shape == (M, N)
    assert np.array_equal(out.view(np.uint8), ref.view(np.uint8))


@pytest.mark.parametrize("dtype", DTYPES)
def test_blocked_random(dtype):
    lhsT, rhs = make_inputs(512, 512, 2048, dtype, integers=False, seed=1)
    out = nki.simulate_kernel(matmul_blocked_kernel, lhsT, rhs)
    assert_matmul_close(out, lhsT, rhs)


@pytest.mark.parametrize("dtype", DTYPES)
def test_multi_psum_integers_exact(dtype):
    lhsT, rhs = make_inputs(256, 256, 2048, dtype, integers=True, seed=2)
    out = nki.simulate_kernel(matmul_multi_psum_kernel, lhsT, rhs)
    ref = reference64(lhsT, rhs).astype(np.float32).astype(dtype)
    assert np.array_equal(out.view(np.uint8), ref.view(np.uint8))


def test_multi_psum_random_fp32():
    lhsT, rhs = make_inputs(384, 128, 2048, np.float32, integers=False, seed=3)
    out = nki.simulate_kernel(matmul_multi_psum_kernel, lhsT, rhs)
    assert_matmul_close(out, lhsT, rhs)


def test_blocked_accumulation_is_not_a_race():
    # PSUM `+=` over the K tiles inside affine_range is the sanctioned accumulation;
    # SBUF `acc[...] += res_psum` runs over the sequential K blocks: no race.
    lhsT, rhs = make_inputs(512, 256, 1024, np.float32, integers=True, seed=4)
    out = nki.simulate_kernel(matmul_blocked_kernel, lhsT, rhs, TILES_M=2, TILES_N=2, TILES_K=2,
                              check_races=True, check_uninitialized=True)
    assert np.array_equal(out, reference64(lhsT, rhs).astype(np.float32))
