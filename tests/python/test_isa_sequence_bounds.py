"""nisa.sequence_bounds [2.26] against the reference loop of its documentation:
starts and (exclusive) ends of runs of equal segment ids, padding (id 0) as (n, -1)."""
import numpy as np
import pytest

from neuronxcc import nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

from nki_test_util import Markers, check_diag, trace_error

M = Markers(__file__)


def reference(seq):
    n = len(seq)
    start, end = np.zeros(n), np.zeros(n)
    start[0] = 0 if seq[0] != 0 else n
    for i in range(1, n):
        start[i] = n if seq[i] == 0 else start[i - 1] if seq[i] == seq[i - 1] else i
    end[-1] = n if seq[-1] != 0 else -1
    for i in range(n - 2, -1, -1):
        end[i] = -1 if seq[i] == 0 else end[i + 1] if seq[i] == seq[i + 1] else i + 1
    return np.vstack((start, end))


@nki.jit
def bounds(ids, dtype=None):
    out = nl.ndarray((1, 2, ids.shape[1]), dtype=dtype or ids.dtype, buffer=nl.shared_hbm)
    nl.store(out, nisa.sequence_bounds(segment_ids=nl.load(ids), dtype=dtype))
    return out


@pytest.mark.parametrize("n", [1, 2, 3, 31, 32, 33, 512])
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_matches_the_reference(n, dtype):
    rng = np.random.default_rng(n)
    ids = np.sort(rng.integers(0, max(2, n // 4), size=n)).reshape(1, n).astype(dtype)
    got = bounds(ids)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got[0], reference(ids[0]))


def test_padding_between_segments_and_unsorted_ids():
    ids = np.array([[0, 4, 4, 0, 2, 2, 2, 4, 0, 0]], np.int32)
    np.testing.assert_array_equal(bounds(ids)[0], reference(ids[0]))
    assert bounds(ids, dtype=nl.float32).dtype == np.float32


def k_bad_dtype(ids):
    out = nl.ndarray((1, 2, 8), dtype=nl.float32, buffer=nl.shared_hbm)
    nl.store(out, nisa.sequence_bounds(segment_ids=nl.load(ids)))  # ERR:dtype
    return out


def test_segment_ids_must_be_float32_or_int32():
    e = trace_error(k_bad_dtype, np.zeros((1, 8), np.int16))
    check_diag(e, M, "err_supported_operand_dtype",
               "operand 'segment_ids' of 'nisa.sequence_bounds' has dtype 'int16', which is not supported; "
               "expected one of {float32, int32}", [("dtype", "nisa.")], api="nisa.sequence_bounds")
