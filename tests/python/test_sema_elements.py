"""Seed 004's element-count companions on the 2.24 Vector-Engine ops with a fixed
lane structure: max8 / nc_find_index8 take 8..16384 elements per partition,
nc_match_replace8 up to 16384 (limits read off the target), nc_stream_shuffle
moves equal element counts. Code, message and user line:col for each, and the
boundaries pass."""
import numpy as np
import pytest

from neuronxcc import nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

from nki_test_util import Markers, check_diag, trace_error

M = Markers(__file__)


def k_max8(x):
    out = nl.ndarray((x.shape[0], 8), dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(out, nisa.max8(src=nl.load(x)))  # ERR:max8
    return out


def k_find_index8(x):
    out = nl.ndarray((x.shape[0], 8), dtype=nl.uint32, buffer=nl.shared_hbm)
    t = nl.load(x)
    vals = nl.zeros((x.shape[0], 8), dtype=x.dtype, buffer=nl.sbuf)
    nl.store(out, nisa.nc_find_index8(data=t, vals=vals))  # ERR:find_index8
    return out


def k_match_replace8(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    vals = nl.zeros((x.shape[0], 8), dtype=x.dtype, buffer=nl.sbuf)
    nl.store(out, nisa.nc_match_replace8(data=t, vals=vals, imm=0.0))  # ERR:match_replace8
    return out


def k_shuffle(x, dst_cols):
    out = nl.ndarray((32, dst_cols), dtype=x.dtype, buffer=nl.shared_hbm)
    d = nl.zeros((32, dst_cols), dtype=x.dtype, buffer=nl.sbuf)
    nisa.nc_stream_shuffle(src=nl.load(x), dst=d, shuffle_mask=list(range(32)))  # ERR:shuffle
    nl.store(out, d)
    return out


CASES = {  # name: (kernel, free size, args, operand, api, bounds text)
    "max8_7": (k_max8, 7, (), "max8", "'src' of 'max8' has 7 elements per partition, but must have between 8 and 16384"),
    "max8_16385": (k_max8, 16385, (), "max8",
                   "'src' of 'max8' has 16385 elements per partition, but must have between 8 and 16384"),
    "find_index8_4": (k_find_index8, 4, (), "find_index8",
                      "'data' of 'nc_find_index8' has 4 elements per partition, but must have between 8 and 16384"),
    "match_replace8_16385": (k_match_replace8, 16385, (), "match_replace8",
                             "'data' of 'nc_match_replace8' has 16385 elements per partition, but must have between "
                             "1 and 16384"),
    "shuffle": (k_shuffle, 5, (4,), "shuffle",
                "'dst' of 'nc_stream_shuffle' has 4 elements per partition, but must have exactly 5"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_elements_per_partition_code_message_and_location(case):
    fn, cols, extra, marker, message = CASES[case]
    e = trace_error(fn, np.zeros((32, cols), np.float32), *extra)
    check_diag(e, M, "err_elements_per_partition_mismatch", message, [(marker, "nisa.")])


@pytest.mark.parametrize("fn,cols", [(k_max8, 8), (k_max8, 16384), (k_find_index8, 8), (k_match_replace8, 16384)])
def test_limits_pass_at_the_boundary(fn, cols):
    x = np.tile(np.arange(cols, dtype=np.float32), (2, 1))
    got = nki.jit(fn)(x)
    if fn is k_max8:
        np.testing.assert_array_equal(got, np.tile(np.arange(cols - 1, cols - 9, -1, dtype=np.float32), (2, 1)))


def test_shuffle_with_equal_counts_passes():
    x = np.arange(32 * 5, dtype=np.float32).reshape(32, 5)
    np.testing.assert_array_equal(nki.jit(k_shuffle)(x, 5), x)
