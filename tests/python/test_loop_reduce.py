"""nl.loop_reduce: `dst[...] = nl.loop_reduce(x, op, loop_indices)` writes x in the
first iteration of the loops named and folds x into dst with `op` in every later one,
over one loop or a nest of several (in any order), against numpy."""
import numpy as np
import pytest

from neuronxcc import nki
import neuronxcc.nki.language as nl

X = np.random.default_rng(0).standard_normal((6, 5, 32, 16)).astype(np.float32)


@nki.jit
def reduce_one(x, op):
    out = nl.ndarray((32, 16), dtype=x.dtype, buffer=nl.shared_hbm)
    acc = nl.ndarray((32, 16), dtype=x.dtype, buffer=nl.sbuf)
    for i in nl.sequential_range(x.shape[0]):
        acc[...] = nl.loop_reduce(nl.load(x[i, 0]), op=op, loop_indices=(i,))
    nl.store(out, acc)
    return out


@nki.jit
def reduce_nest(x, op, order):
    out = nl.ndarray((32, 16), dtype=x.dtype, buffer=nl.shared_hbm)
    acc = nl.ndarray((32, 16), dtype=x.dtype, buffer=nl.sbuf)
    for i in nl.sequential_range(x.shape[0]):
        for j in nl.sequential_range(x.shape[1]):
            acc[...] = nl.loop_reduce(nl.load(x[i, j]), op=op, loop_indices=(i, j) if order else [j, i])
    nl.store(out, acc)
    return out


@nki.jit
def reduce_inner_only(x):
    """Reduces over j only: each i starts afresh, the last i's sum remains."""
    out = nl.ndarray((32, 16), dtype=x.dtype, buffer=nl.shared_hbm)
    acc = nl.ndarray((32, 16), dtype=x.dtype, buffer=nl.sbuf)
    for i in nl.sequential_range(x.shape[0]):
        for j in nl.sequential_range(x.shape[1]):
            acc[...] = nl.loop_reduce(nl.load(x[i, j]), op=np.add, loop_indices=j)
    nl.store(out, acc)
    return out


@pytest.mark.parametrize("op,ref", [(np.add, np.sum), (np.maximum, np.max), (np.multiply, np.prod)])
def test_one_loop(op, ref):
    np.testing.assert_allclose(reduce_one(X, op), ref(X[:, 0], axis=0), rtol=1e-5)


@pytest.mark.parametrize("order", [True, False])
@pytest.mark.parametrize("op,ref", [(np.add, np.sum), (np.minimum, np.min)])
def test_nest_of_two_loops(op, ref, order):
    np.testing.assert_allclose(reduce_nest(X, op, order), ref(X, axis=(0, 1)), rtol=1e-5, atol=1e-5)


def test_inner_loop_only():
    np.testing.assert_allclose(reduce_inner_only(X), X[-1].sum(axis=0), rtol=1e-5)


def test_one_iteration_loop_is_a_plain_write():
    np.testing.assert_array_equal(reduce_one(X[:1], np.add), X[0, 0])
    np.testing.assert_allclose(reduce_nest(X[:1], np.add, True), X[0].sum(axis=0), rtol=1e-5)
