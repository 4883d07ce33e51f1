"""Matmul 1/4: a single tile. lhsT is [K=128, M=128] (contraction on the
partition dim, as the PE array wants it), rhs is [K=128, N=512]; the product
lhsT.T @ rhs = [128, 512] lands in one PSUM bank, is copied to SBUF in the
output dtype and stored. Two spellings: nl.matmul(x, y, transpose_x=True) and
nisa.nc_matmul(stationary, moving).

Tolerances:
  * small-integer inputs (|x| <= 4): every product and partial sum is an integer
    below 2^24, so the fp32 PE-array result is exact whatever the summation
    order; the one rounding to the output dtype (identity for fp32, RNE for bf16)
    is reproduced by numpy -> compared bit for bit, fp32 and bf16 inputs.
  * random-normal inputs: the PE array sums K fp32 products in an undocumented
    order; the standard recursive-summation bound |err| <= K * 2^-24 * sum|a*b|
    (plus one fp32 rounding per product, absorbed by using K+1) is asserted
    against a float64 reference. bf16 outputs additionally get half a bf16 ulp
    (2^-8 relative) for the final rounding.
"""
import numpy as np
import pytest

from neuronxcc import nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def matmul_single_tile_kernel(lhsT, rhs):
    K, M = lhsT.shape
    K_, N = rhs.shape
    assert K == K_ == 128 and M <= 128 and N <= 512
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)

    i_lhsT_p, i_lhsT_f = nl.mgrid[0:K, 0:M]
    i_rhs_p, i_rhs_f = nl.mgrid[0:K, 0:N]
    i_out_p, i_out_f = nl.mgrid[0:M, 0:N]

    lhsT_tile = nl.load(lhsT[i_lhsT_p, i_lhsT_f])
    rhs_tile = nl.load(rhs[i_rhs_p, i_rhs_f])
    res_psum = nl.matmul(lhsT_tile, rhs_tile, transpose_x=True)
    res_sb = nl.copy(res_psum, dtype=result.dtype)
    nl.store(result[i_out_p, i_out_f], value=res_sb)
    return result


@nki.jit
def nc_matmul_single_tile_kernel(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    stationary = nl.load(lhsT)
    moving = nl.load(rhs)
    res_psum = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.psum)
    res_psum[...] = nisa.nc_matmul(stationary, moving)
    nl.store(result, value=nl.copy(res_psum, dtype=result.dtype))
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
    """Rigorous fp32-summation error bound (see the module docstring)."""
    K = lhsT.shape[0]
    ref = reference64(lhsT, rhs)
    mag = np.abs(lhsT.astype(np.float64)).T @ np.abs(rhs.astype(np.float64))
    bound = (K + 1) * 2.0 ** -24 * mag
    if out.dtype != np.float32:
        bound = bound + 2.0 ** -8 * np.abs(ref)
    err = np.abs(out.astype(np.float64) - ref)
    assert np.all(err <= bound + 1e-30), f"max excess {np.max(err - bound)}"


DTYPES = [pytest.param(np.float32, id="fp32"), pytest.param(nl.bfloat16, id="bf16")]
KERNELS = [pytest.param(matmul_single_tile_kernel, id="nl.matmul"),
           pytest.param(nc_matmul_single_tile_kernel, id="nisa.nc_matmul")]


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_single_tile_integers_exact(kernel, dtype):
    lhsT, rhs = make_inputs(128, 128, 512, dtype, integers=True)
    out = nki.simulate_kernel(kernel, lhsT, rhs)
    ref = reference64(lhsT, rhs).astype(np.float32).astype(dtype)
    assert out.dtype == ref.dtype and out.shape == (128, 512)
    assert np.array_equal(out.view(np.uint8), ref.view(np.uint8))


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_single_tile_random(kernel, dtype):
    lhsT, rhs = make_inputs(128, 128, 512, dtype, integers=False, seed=1)
    out = nki.simulate_kernel(kernel, lhsT, rhs)
    assert out.dtype == np.dtype(dtype) and out.shape == (128, 512)
    assert_matmul_close(out, lhsT, rhs)


def test_single_tile_smaller_m_n():
    # M = 64 stationary columns, N = 200 moving columns: still one instruction.
    lhsT, rhs = make_inputs(128, 64, 200, np.float32, integers=True, seed=2)
    out = nki.simulate_kernel(matmul_single_tile_kernel, lhsT, rhs)
    assert np.array_equal(out, reference64(lhsT, rhs).astype(np.float32))
