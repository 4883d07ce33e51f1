"""Loop-carried dependencies with nl.sequential_range (and a builtin range(),
which NKI treats as sequential_range):

  * prefix_sum_kernel: x is [128, T * C]; chunk j of the output is the elementwise
    sum of chunks 0..j of the input: out[:, j] = out[:, j-1] + x[:, j]. The
    running tile is declared before the loop and updated in place
    (acc[...] = nl.add(acc, chunk)), the loop is nl.sequential_range.
  * row_cumsum_kernel: column-by-column running sum along the free dim of each
    row (out[:, c] = out[:, c-1] + x[:, c]) through a [128, 1] carry, one column
    per iteration of a builtin range() loop.
  * running_max_kernel: running maximum over row tiles of a ragged [n, d] input
    (carry across nl.sequential_range iterations, mask=(i_p < n) on the last tile).

Exactness: the inputs are small integers, so every running sum is an integer
below 2^24 and exact in fp32 whatever the order; max is exact. Compared with
numpy bit for bit.
"""
import math

import numpy as np
import pytest

from neuronxcc import nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa  # noqa: F401


@nki.jit
def prefix_sum_kernel(x, C):
    P, F = x.shape
    T = F // C
    out = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.shared_hbm)
    acc = nl.zeros((P, C), dtype=nl.float32, buffer=nl.sbuf)
    for j in nl.sequential_range(T):
        chunk = nl.load(x[:, nl.ds(j * C, C)])
        acc[...] = nl.add(acc, chunk)
        nl.store(out[:, nl.ds(j * C, C)], value=acc)
    return out


@nki.jit
def row_cumsum_kernel(x):
    P, F = x.shape
    out = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.shared_hbm)
    tile = nl.load(x)
    res = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.sbuf)
    carry = nl.zeros((P, 1), dtype=nl.float32, buffer=nl.sbuf)
    for c in range(F):
        carry[...] = nl.add(carry, tile[:, nl.ds(c, 1)])
        res[:, nl.ds(c, 1)] = nl.copy(carry)
    nl.store(out, value=res)
    return out


@nki.jit
def running_max_kernel(x):
    n, d = x.shape
    out = nl.ndarray((128, d), dtype=x.dtype, buffer=nl.shared_hbm)
    i_f = nl.arange(d)[None, :]
    best = nl.full((128, d), -1e30, dtype=nl.float32, buffer=nl.sbuf)
    for t in nl.sequential_range(math.ceil(n / 128)):
        i_p = nl.arange(128)[:, None]
        tile = nl.load(x[t * 128 + i_p, i_f], mask=(t * 128 + i_p < n))
        best[i_p, i_f] = nl.maximum(best, tile, mask=(t * 128 + i_p < n))
    nl.store(out, value=best)
    return out


def int_input(shape, seed=0):
    return np.random.default_rng(seed).integers(-100, 101, size=shape).astype(np.float32)


@pytest.mark.parametrize("T,C", [(8, 64), (3, 128), (16, 16)])
def test_prefix_sum_over_chunks(T, C):
    x = int_input((128, T * C))
    out = nki.simulate_kernel(prefix_sum_kernel, x, C)
    ref = np.cumsum(x.reshape(128, T, C), axis=1).reshape(128, T * C)
    assert np.array_equal(out, ref)


def test_prefix_sum_bf16_io():
    # bf16 inputs in [-100, 100] are exact; the fp32 running sums (|s| <= 800) are
    # integers, and each rounds once to the bf16 output.
    x = int_input((128, 8 * 32), seed=1).astype(nl.bfloat16)
    out = nki.simulate_kernel(prefix_sum_kernel, x, 32)
    ref = np.cumsum(x.astype(np.float32).reshape(128, 8, 32), axis=1).reshape(128, 256).astype(nl.bfloat16)
    assert out.dtype == nl.bfloat16
    assert np.array_equal(out.view(np.uint16), ref.view(np.uint16))


def test_row_cumsum_builtin_range():
    x = int_input((128, 48), seed=2)
    out = nki.simulate_kernel(row_cumsum_kernel, x)
    assert np.array_equal(out, np.cumsum(x, axis=1))


@pytest.mark.parametrize("n", [1000, 128, 77])
def test_running_max_ragged(n):
    x = int_input((n, 64), seed=3)
    out = nki.simulate_kernel(running_max_kernel, x)
    ref = np.full((128, 64), -1e30, np.float32)
    for t in range(math.ceil(n / 128)):
        blk = x[t * 128:(t + 1) * 128]
        ref[:blk.shape[0]] = np.maximum(ref[:blk.shape[0]], blk)
    assert np.array_equal(out, ref)
