"""Idioms of public NKI kernels that nkic must accept and compute exactly:
compile-time helpers looping with builtin range, one-element aranges broadcast
into larger grids, masks that no iteration satisfies, and loop variables added
to tiles."""
import numpy as np
import pytest

from neuronxcc import nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

X = np.random.default_rng(0).random((128, 512), dtype=np.float32)


def replication_factor(rep_from, rep_to):
    """A helper on Python ints: the largest i <= rep_from with i * rep_to <= 128."""
    for i in range(rep_from, 0, -1):
        if i * rep_to <= 128:
            return i
    return 1


def widths(n):
    total, cols = 0, []
    for i in range(n):
        cols.append(total)
        total += i + 1
    return total, cols


@nki.jit
def helper_ints(x):
    rep = replication_factor(3, 64)
    total, cols = widths(4)
    assert cols == [0, 1, 3, 6]
    out = nl.ndarray((128, rep + total), dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.load(x[:, 0:rep + total]))
    return out


def test_a_helpers_builtin_range_is_the_helpers_own_python():
    # The kernel body's range is a sequential_range axis; a helper's range loops
    # in Python, so break/return and Python-int results work there.
    out = helper_ints(X)
    assert out.shape == (128, 12) and np.array_equal(out, X[:, 0:12])


@nki.jit
def row_masked_store(x):
    out = nl.ndarray((1, 512), dtype=x.dtype, buffer=nl.shared_hbm)
    i_m = nl.arange(1)[None, :]   # a one-row index written free-style (tiled matmul with M = 1)
    i_n = nl.arange(512)[None, :]
    nl.store(out[i_m, i_n], value=nl.load(x[0:1, :]), mask=(i_m < 1))
    return out


def test_a_one_element_arange_is_its_start_wherever_it_is_broadcast():
    assert np.array_equal(row_masked_store(X), X[0:1, :])


@nki.jit
def carry_to_next_tile(x):
    n = x.shape[1] // 512
    out = nl.ndarray((128, 1), dtype=x.dtype, buffer=nl.shared_hbm)
    carry = nl.zeros((128, 1), dtype=nl.float32)
    for j in nl.sequential_range(n):
        carry[...] = nl.copy(nl.load(x[:, j * 512 + 511:j * 512 + 512]), mask=j + 1 < n)
    nl.store(out, value=carry)
    return out


@pytest.mark.parametrize("tiles", [1, 3])
def test_a_mask_no_iteration_satisfies_writes_nothing(tiles):
    x = np.random.default_rng(tiles).random((128, 512 * tiles), dtype=np.float32)
    want = np.zeros((128, 1), np.float32) if tiles == 1 else x[:, 512 * (tiles - 2) + 511:512 * (tiles - 2) + 512]
    assert np.array_equal(carry_to_next_tile(x), want)


@nki.jit
def shifted_static_mask(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    nl.store(out, value=t)
    i_p, i_f = nl.mgrid[0:128, 0:512]
    nl.store(out[i_p, i_f + 1000], value=t, mask=(i_f < 0))  # never true: not out of bounds either
    return out


def test_an_always_false_mask_accesses_nothing():
    assert np.array_equal(shifted_static_mask(X), X)
