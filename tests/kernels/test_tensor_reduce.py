"""Free-axis reductions with nisa.tensor_reduce (keepdims, negate) and the nl.*
reductions, over ragged rows (n = 200: the second row tile has 72 valid rows,
mask=(i_p < n) everywhere).

  * reduce_rows_kernel: [n, d] -> [n, 1] per-row reduction with keepdims=True
    (op = np.add / np.max / np.min / np.multiply passed as a kernel argument),
    optionally negate=True;
  * reduce_3d_kernel: x viewed as [n, A, B] on chip (3-D load through index grids);
    sum over axes [1, 2] with keepdims=True -> [n, 1, 1] (stored to an [n, 1, 1] output), max over [2] without
    keepdims -> [n, A] (nl.max), and nl.sum over [1] of a [n, A, B] tile
    -> [n, B];
  * nl.prod / nl.min / nl.mean on the same rows.

Tolerances: max/min only select: exact. Sums of small integers are exact in fp32
(partial sums < 2^24): exact. Products of values in {-2, -1, -0.5, 0.5, 1, 2} are
signed powers of two within range: exact. Random-normal sums are checked against
float64 with the recursive-summation bound |err| <= (d + 1) * 2^-24 * sum|x|.
"""
import math

import numpy as np
import pytest

from neuronxcc import nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def reduce_rows_kernel(x, op, negate=False):
    n, d = x.shape
    out = nl.ndarray((n, 1), dtype=x.dtype, buffer=nl.shared_hbm)
    i_f = nl.arange(d)[None, :]
    i_0 = nl.arange(1)[None, :]
    for t in nl.affine_range(math.ceil(n / 128)):
        i_p = t * 128 + nl.arange(128)[:, None]
        tile = nl.load(x[i_p, i_f], mask=(i_p < n))
        r = nisa.tensor_reduce(op, tile, axis=[1], keepdims=True, negate=negate, mask=(i_p < n))
        assert tuple(r.shape) == (128, 1)
        nl.store(out[i_p, i_0], value=r, mask=(i_p < n))
    return out


@nki.jit
def reduce_3d_kernel(x, A, B):
    n, d = x.shape
    assert d == A * B
    sum_all = nl.ndarray((n, 1, 1), dtype=x.dtype, buffer=nl.shared_hbm)
    max_b = nl.ndarray((n, A), dtype=x.dtype, buffer=nl.shared_hbm)
    sum_a = nl.ndarray((n, B), dtype=x.dtype, buffer=nl.shared_hbm)
    i_a = nl.arange(A)[None, :, None]
    i_b = nl.arange(B)[None, None, :]
    for t in nl.affine_range(math.ceil(n / 128)):
        i_p3 = t * 128 + nl.arange(128)[:, None, None]
        i_p = t * 128 + nl.arange(128)[:, None]
        tile = nl.load(x[i_p3, i_a * B + i_b], mask=(i_p3 < n))                 # [128, A, B]
        s = nisa.tensor_reduce(np.add, tile, axis=[1, 2], keepdims=True, mask=(i_p3 < n))
        assert tuple(s.shape) == (128, 1, 1)
        m = nl.max(tile, axis=[2], mask=(i_p3 < n))                              # [128, A]
        assert tuple(m.shape) == (128, A)
        sa = nl.sum(tile[:, :, :], axis=1, mask=(i_p3 < n))                       # [128, B]
        assert tuple(sa.shape) == (128, B)
        i_1 = nl.arange(1)[None, :, None]
        i_2 = nl.arange(1)[None, None, :]
        nl.store(sum_all[i_p3, i_1, i_2], value=s, mask=(i_p3 < n))
        nl.store(max_b[i_p, nl.arange(A)[None, :]], value=m, mask=(i_p < n))
        nl.store(sum_a[i_p, nl.arange(B)[None, :]], value=sa, mask=(i_p < n))
    return sum_all, max_b, sum_a


@nki.jit
def nl_reductions_kernel(x):
    n, d = x.shape
    outs = [nl.ndarray((n, 1), dtype=nl.float32, buffer=nl.shared_hbm) for _ in range(3)]
    prod_out, min_out, mean_out = outs
    i_f = nl.arange(d)[None, :]
    i_0 = nl.arange(1)[None, :]
    for t in nl.affine_range(math.ceil(n / 128)):
        i_p = t * 128 + nl.arange(128)[:, None]
        tile = nl.load(x[i_p, i_f], mask=(i_p < n))
        nl.store(prod_out[i_p, i_0], value=nl.prod(tile, axis=[1], keepdims=True, mask=(i_p < n)), mask=(i_p < n))
        nl.store(min_out[i_p, i_0], value=nl.min(tile, axis=[1], keepdims=True, mask=(i_p < n)), mask=(i_p < n))
        nl.store(mean_out[i_p, i_0], value=nl.mean(tile, axis=[1], keepdims=True, mask=(i_p < n)), mask=(i_p < n))
    return prod_out, min_out, mean_out


def int_input(n, d, seed=0):
    rng = np.random.default_rng(seed)
    return rng.integers(-50, 51, size=(n, d)).astype(np.float32)


OPS = [pytest.param(np.add, np.sum, id="add"), pytest.param(np.max, np.max, id="max"),
       pytest.param(np.min, np.min, id="min"), pytest.param(nl.maximum, np.max, id="nl.maximum"),
       pytest.param(nl.add, np.sum, id="nl.add")]


@pytest.mark.parametrize("negate", [False, True], ids=["plain", "negate"])
@pytest.mark.parametrize("op,ref_op", OPS)
def test_tensor_reduce_rows_exact(op, ref_op, negate):
    x = int_input(200, 384)
    out = nki.simulate_kernel(reduce_rows_kernel, x, op=op, negate=negate)
    ref = ref_op(x.astype(np.float64), axis=1, keepdims=True)
    if negate:
        ref = -ref
    assert out.shape == (200, 1)
    assert np.array_equal(out, ref.astype(np.float32))


def test_tensor_reduce_multiply_powers_of_two_exact():
    rng = np.random.default_rng(1)
    x = rng.choice(np.array([-2.0, -1.0, -0.5, 0.5, 1.0, 2.0], np.float32), size=(200, 64))
    out = nki.simulate_kernel(reduce_rows_kernel, x, op=np.multiply)
    assert np.array_equal(out, np.prod(x.astype(np.float64), axis=1, keepdims=True).astype(np.float32))


def test_tensor_reduce_add_random():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((300, 512)).astype(np.float32)
    out = nki.simulate_kernel(reduce_rows_kernel, x, op=np.add)
    ref = x.astype(np.float64).sum(axis=1, keepdims=True)
    bound = (512 + 1) * 2.0 ** -24 * np.abs(x.astype(np.float64)).sum(axis=1, keepdims=True)
    assert np.all(np.abs(out - ref) <= bound)


def test_tensor_reduce_bf16_rounds_once():
    # Integer sums up to 50 * 128 are exact in fp32; the bf16 output is that sum
    # rounded once (RNE), which numpy reproduces.
    x = int_input(200, 128, seed=3).astype(nl.bfloat16)
    out = nki.simulate_kernel(reduce_rows_kernel, x, op=np.add)
    assert out.dtype == nl.bfloat16
    ref = x.astype(np.float64).sum(axis=1, keepdims=True).astype(np.float32).astype(nl.bfloat16)
    assert np.array_equal(out.view(np.uint16), ref.view(np.uint16))


def test_reduce_3d_axes():
    A, B = 6, 16
    x = int_input(200, A * B, seed=4)
    sum_all, max_b, sum_a = nki.simulate_kernel(reduce_3d_kernel, x, A, B)
    x3 = x.reshape(200, A, B).astype(np.float64)
    assert np.array_equal(sum_all, x3.sum(axis=(1, 2)).reshape(200, 1, 1).astype(np.float32))
    assert np.array_equal(max_b, x3.max(axis=2).astype(np.float32))
    assert np.array_equal(sum_a, x3.sum(axis=1).astype(np.float32))


def test_nl_prod_min_mean():
    rng = np.random.default_rng(5)
    x = rng.choice(np.array([-2.0, -1.0, -0.5, 0.5, 1.0, 2.0], np.float32), size=(200, 64))
    prod_out, min_out, mean_out = nki.simulate_kernel(nl_reductions_kernel, x)
    x64 = x.astype(np.float64)
    assert np.array_equal(prod_out, np.prod(x64, axis=1, keepdims=True).astype(np.float32))
    assert np.array_equal(min_out, np.min(x64, axis=1, keepdims=True).astype(np.float32))
    # mean = sum * (1/64): the sum of halves and integers is exact, 1/64 is a power of two.
    assert np.array_equal(mean_out, np.mean(x64, axis=1, keepdims=True).astype(np.float32))
