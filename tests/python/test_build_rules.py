"""What the trn2 build rejects, nkic's check rejects (issue: `nkic check` answers "will this
build"): each rule's illegal kernel is a diagnostic at the user's line, its legal twin runs
and matches numpy. The rules and their sources are in docs/errors.md."""
import numpy as np
import pytest

import nki
import nki.isa as nisa
import nki.language as nl
from neuronxcc import nki as legacy
import neuronxcc.nki.language as lnl
from nki_current_util import loaded, sbuf, stored
from nki_test_util import Markers, check_diag, trace_error

M = Markers(__file__)
X = np.random.default_rng(11).normal(size=(128, 64)).astype(np.float32)


@pytest.fixture(autouse=True)
def _trn2(monkeypatch):
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn2")


# The engines' start partition: 0, 32, 64 or 96 for up to 32 partitions, 0 or 64 up to 64, else 0.
def one_row(start):
    @nki.jit
    def k(a):
        t = loaded(a)
        nisa.tensor_scalar(dst=t[start:start + 1, :], data=t[start:start + 1, :], op0=nl.multiply, operand0=2.0)  # ERR:row
        return stored(t)

    return k


def rows_in_a_loop(width, step):
    @nki.jit
    def k(a):
        t = loaded(a)
        for i in nl.affine_range(a.shape[0] // step):
            nisa.memset(dst=t[i * step:i * step + width, :], value=0.0)  # ERR:loop
        return stored(t)

    return k


@pytest.mark.parametrize("start", [1, 16, 33, 127])
def test_an_engine_access_of_one_partition_starts_at_a_quadrant(start):
    e = trace_error(one_row(start), X)
    check_diag(e, M, "err_invalid_partition_access",
               f"Invalid access of 1 partitions starting at partition {start} of 't': an engine reads or writes 1 "
               "partitions from partition 0, 32, 64 or 96", [("row", "nisa.")], api="nisa.tensor_scalar")


@pytest.mark.parametrize("start", [0, 32, 64, 96])
def test_a_one_partition_access_at_a_quadrant_runs(start):
    want = X.copy()
    want[start] *= 2
    np.testing.assert_array_equal(nki.simulate(one_row(start))(X), want)


@pytest.mark.parametrize("width, step, bad, allowed", [(32, 16, 16, "partition 0, 32, 64 or 96"),
                                                      (64, 32, 32, "partition 0 or 64"),
                                                      (1, 1, 1, "partition 0, 32, 64 or 96")])
def test_every_iteration_of_a_loop_starts_at_an_allowed_partition(width, step, bad, allowed):
    e = trace_error(rows_in_a_loop(width, step), X)
    check_diag(e, M, "err_invalid_partition_access",
               f"Invalid access of {width} partitions starting at partition {bad} of 't': an engine reads or writes "
               f"{width} partitions from {allowed}", [("loop", "nisa.")])


@pytest.mark.parametrize("width", [32, 64])
def test_aligned_slices_in_a_loop_run(width):
    got = nki.simulate(rows_in_a_loop(width, width))(X)
    np.testing.assert_array_equal(got, np.zeros_like(X))


def test_a_dma_reads_any_partition():
    @nki.jit
    def k(a):
        t = loaded(a)
        row = sbuf((1, a.shape[1]))
        nisa.dma_copy(dst=row, src=t[5:6, :])
        nisa.tensor_scalar(dst=row, data=row, op0=nl.add, operand0=1.0)
        return stored(row)

    np.testing.assert_array_equal(nki.simulate(k)(X), X[5:6] + 1)


@legacy.jit
def legacy_one_row(a):
    out = lnl.ndarray((1, a.shape[1]), dtype=a.dtype, buffer=lnl.shared_hbm)
    t = lnl.load(a)
    r = lnl.exp(t[3:4, :])  # ERR:legacy
    lnl.store(out, value=r)
    return out


def test_the_rule_holds_in_the_legacy_api():
    e = trace_error(legacy_one_row, X)
    check_diag(e, M, "err_invalid_partition_access", "Invalid access of 1 partitions starting at partition 3",
               [("legacy", "lnl.")])


# An engine writes the partitions it computes on: a (1, P) dst is not a (P, 1) result.
@nki.jit
def reduce_into_a_row(a):
    d = sbuf((1, a.shape[0]))
    nisa.tensor_reduce(dst=d, op=nl.add, data=loaded(a), axis=1)  # ERR:row_dst
    return stored(d)


@nki.jit
def reduce_into_a_column(a):
    d = sbuf((a.shape[0], 1))
    nisa.tensor_reduce(dst=d, op=nl.add, data=loaded(a), axis=1)
    return stored(d)


def test_a_reduce_into_a_row_is_a_partition_mismatch():
    e = trace_error(reduce_into_a_row, X)
    check_diag(e, M, "err_num_partition_mismatch",
               "number of partitions (dimension 0 size of a tile) mismatch in parameters (dst[1, 128], "
               "result[128, 1]) of 'tensor_reduce'", [("row_dst", "nisa.")])


def test_a_reduce_into_a_column_runs():
    np.testing.assert_allclose(nki.simulate(reduce_into_a_column)(X), X.sum(axis=1, keepdims=True), rtol=1e-5)


# What the compiler tolerates: an empty slice is a no-op with a warning at the user's line.
@legacy.jit
def ragged_copy(a):
    out = lnl.ndarray(a.shape, dtype=a.dtype, buffer=lnl.shared_hbm)
    n = a.shape[1]
    lnl.store(out[:, 0:n], value=lnl.load(a[:, 0:n]))
    tail = lnl.load(a[:, n:n])  # ERR:tail
    lnl.store(out[:, n:n], value=lnl.exp(tail))  # ERR:tail_store
    return out


@nki.jit
def ragged_copy_current(a):
    n = a.shape[1]
    t = loaded(a)
    e = sbuf((a.shape[0], 4))
    nisa.dma_copy(dst=e[:, 0:0], src=a[:, n:n])  # ERR:current
    return stored(t)


def _warnings(run):
    with pytest.warns(UserWarning) as caught:
        out = run()
    return out, [w for w in caught if str(w.message).startswith("[warn_empty_access]")]


def test_an_empty_slice_is_a_no_op_with_a_warning_in_the_legacy_api():
    out, caught = _warnings(lambda: legacy.simulate_kernel(ragged_copy, X))
    np.testing.assert_array_equal(out, X)
    assert [(w.lineno, str(w.message)) for w in caught] == [
        (M.loc("tail", "lnl.load")[0], "[warn_empty_access] 'nl.load' is given an empty slice of 'a' (shape [128, 0]): "
                                       "it covers no element, and nothing is executed"),
        (M.loc("tail_store", "lnl.exp")[0], "[warn_empty_access] 'nl.exp' is given an empty slice of 'a' (shape "
                                            "[128, 0]): it covers no element, and nothing is executed"),
        (M.loc("tail_store", "lnl.store")[0], "[warn_empty_access] 'nl.store' is given an empty slice of 'out' (shape "
                                              "[128, 0]): it covers no element, and nothing is executed")]


def test_an_empty_slice_is_a_no_op_with_a_warning_in_the_current_api():
    out, caught = _warnings(lambda: nki.simulate(ragged_copy_current)(X))
    np.testing.assert_array_equal(out, X)
    assert [w.lineno for w in caught] == [M.loc("current", "nisa.")[0]]
    assert "'nisa.dma_copy' is given an empty slice of 'e' (shape [128, 0])" in str(caught[0].message)


@nki.jit
def reversed_slice(a):
    t = loaded(a)
    nisa.dma_copy(dst=t[:, 0:0], src=a[:, 5:3])  # ERR:reversed
    return stored(t)


def test_a_slice_that_ends_before_it_starts_is_an_error():
    e = trace_error(reversed_slice, X)
    check_diag(e, M, "err_unsupported_index", "the slice of tensor `a` on dimension 1 is empty", [("reversed", "a[")])


# nisa.tensor_tensor: "the same number of elements per partition" (the current API's reference).
@nki.jit
def add_a_column(a):
    t = loaded(a)
    col = sbuf((a.shape[0], 1))
    nisa.memset(dst=col, value=1.0)
    nisa.tensor_tensor(dst=t, data1=t, data2=col, op=nl.add)  # ERR:column
    return stored(t)


@nki.jit
def add_a_column_with_tensor_scalar(a):
    t = loaded(a)
    col = sbuf((a.shape[0], 1))
    nisa.memset(dst=col, value=1.0)
    nisa.tensor_scalar(dst=t, data=t, op0=nl.add, operand0=col)
    return stored(t)


def test_tensor_tensor_does_not_broadcast_a_column_in_the_current_api():
    e = trace_error(add_a_column, X)
    check_diag(e, M, "err_tile_shape_mismatch",
               "number of elements per partition mismatch in parameters (data1[128, 64], data2[128, 1]) of "
               "'tensor_tensor'", [("column", "nisa.")])


def test_a_column_operand_is_tensor_scalars():
    np.testing.assert_array_equal(nki.simulate(add_a_column_with_tensor_scalar)(X), X + 1)
