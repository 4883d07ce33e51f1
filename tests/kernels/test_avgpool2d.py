"""2-D average pooling with 5-D index grids (NKI_API.md §1.3).

in_tensor is [C, H, W] with C <= 128 on the partition dim. With pool size P, the
5-D grid (i_0, i_1, i_2, i_3, i_4) = mgrid[0:C, 0:H/P, 0:P, 0:W/P, 0:P] addresses
in_tile[i_0, P*i_1 + i_2, P*i_3 + i_4], a [C, H/P, P, W/P, P] view whose axes 2
and 4 are the pool window; nl.sum over axis=[2, 4] gives the window sums, and a
multiply by 1/P^2 the average. A max-pool variant uses nl.max the same way, and a
third variant builds the grid from nl.arange with explicit [:, None, ...] axes.

Tolerances:
  * max pool only selects values: exact.
  * sum pool of small integers is exact in fp32 (every partial sum is an integer
    far below 2^24), so its average (a multiply by the exact power of two 1/P^2
    for P = 2, 4) is exact too.
  * average pool of random normals: the window is summed in fp32 in an order the
    hardware does not document, so compare with a float64 reference at
    rtol=1e-6, atol=1e-6 (a P*P <= 16-term fp32 sum has error <= 16 * 2^-24 * sum|x|).
  * bf16 input/output: the fp32 result rounds once to bf16; compare with the
    float64 reference at one bf16 ulp (rtol=2^-8) plus atol for tiny values.
"""
import numpy as np
import pytest

from neuronxcc import nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa  # noqa: F401


@nki.jit
def avgpool2d_kernel(in_tensor, pool_size):
    sz_cin, sz_hin, sz_win = in_tensor.shape
    sz_hout, sz_wout = sz_hin // pool_size, sz_win // pool_size
    out = nl.ndarray((sz_cin, sz_hout, sz_wout), dtype=in_tensor.dtype, buffer=nl.shared_hbm)
    P = pool_size

    i_0, i_1, i_2, i_3, i_4 = nl.mgrid[0:sz_cin, 0:sz_hout, 0:P, 0:sz_wout, 0:P]

    in_tile = nl.load(in_tensor)
    window_sum = nl.sum(in_tile[i_0, P * i_1 + i_2, P * i_3 + i_4], axis=[2, 4])
    avg = nl.multiply(window_sum, 1.0 / (P * P), dtype=in_tensor.dtype)
    nl.store(out, value=avg)
    return out


@nki.jit
def maxpool2d_kernel(in_tensor, pool_size):
    sz_cin, sz_hin, sz_win = in_tensor.shape
    sz_hout, sz_wout = sz_hin // pool_size, sz_win // pool_size
    out = nl.ndarray((sz_cin, sz_hout, sz_wout), dtype=in_tensor.dtype, buffer=nl.shared_hbm)
    P = pool_size

    # The same 5-D grid, built from nl.arange with explicit new axes.
    i_0 = nl.arange(sz_cin)[:, None, None, None, None]
    i_1 = nl.arange(sz_hout)[None, :, None, None, None]
    i_2 = nl.arange(P)[None, None, :, None, None]
    i_3 = nl.arange(sz_wout)[None, None, None, :, None]
    i_4 = nl.arange(P)[None, None, None, None, :]

    in_tile = nl.load(in_tensor)
    out_tile = nl.max(in_tile[i_0, P * i_1 + i_2, P * i_3 + i_4], axis=[2, 4])
    nl.store(out, value=out_tile)
    return out


def pool_reference(x, P, reduce):
    c, h, w = x.shape
    v = x.astype(np.float64).reshape(c, h // P, P, w // P, P)
    return reduce(v, axis=(2, 4))


def make_input(shape, dtype, seed=0, integers=False):
    rng = np.random.default_rng(seed)
    if integers:
        return rng.integers(-8, 9, size=shape).astype(np.float32).astype(dtype)
    return rng.standard_normal(shape).astype(np.float32).astype(dtype)


@pytest.mark.parametrize("P", [2, 4])
def test_avgpool_integers_exact(P):
    x = make_input((128, 16, 32), np.float32, integers=True)
    out = nki.simulate_kernel(avgpool2d_kernel, x, P)
    ref = pool_reference(x, P, np.mean).astype(np.float32)
    assert out.shape == ref.shape and out.dtype == np.float32
    assert np.array_equal(out, ref)


@pytest.mark.parametrize("shape,P", [((128, 16, 32), 2), ((64, 12, 24), 3), ((100, 8, 8), 4)])
def test_avgpool_random_fp32(shape, P):
    x = make_input(shape, np.float32, seed=1)
    out = nki.simulate_kernel(avgpool2d_kernel, x, P)
    ref = pool_reference(x, P, np.mean)
    assert out.shape == ref.shape
    np.testing.assert_allclose(out, ref, rtol=1e-6, atol=1e-6)


def test_avgpool_bf16():
    x = make_input((128, 16, 16), nl.bfloat16, seed=2)
    out = nki.simulate_kernel(avgpool2d_kernel, x, 2)
    assert out.dtype == nl.bfloat16
    ref = pool_reference(x, 2, np.mean)
    np.testing.assert_allclose(out.astype(np.float64), ref, rtol=2.0 ** -8, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, nl.bfloat16], ids=["fp32", "bf16"])
@pytest.mark.parametrize("shape,P", [((128, 16, 32), 2), ((48, 9, 15), 3)])
def test_maxpool_exact(shape, P, dtype):
    x = make_input(shape, dtype, seed=3)
    out = nki.simulate_kernel(maxpool2d_kernel, x, P)
    ref = pool_reference(x, P, np.max).astype(dtype)
    assert out.dtype == ref.dtype and out.shape == ref.shape
    assert np.array_equal(out, ref)
