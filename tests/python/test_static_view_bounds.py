"""Bounds of static views (constant slices, no mask): an access that reads only tile
coordinates is checked at the corners of its iteration space. Views at the edge of a
tensor, strided ones and ones past the end, through both front ends: the in-bounds ones
simulate to numpy's values, the others stop at the user's line with the diagnostic."""
import numpy as np

import nki
import nki.isa as nisa
import nki.language as nl
from neuronxcc import nki as legacy
import neuronxcc.nki.language as lnl
from nki_current_util import hbm, loaded, sbuf, stored
from nki_test_util import Markers, check_diag, trace_error

M = Markers(__file__)
A = np.arange(32, dtype=np.float32).reshape(4, 8)


@nki.jit
def last_columns(a):
    x = loaded(a)
    y = sbuf((4, 4))
    nisa.tensor_tensor(dst=y, data1=x[0:4, 4:8], data2=x[0:4, 0:4], op=nl.add)
    return stored(y)


@nki.jit
def odd_columns(a):
    x = loaded(a)
    y = sbuf((4, 4))
    nisa.tensor_copy(dst=y, src=x[0:4, 1:8:2])
    return stored(y)


@nki.jit
def past_the_end(a):
    x = sbuf((4, 8))
    nisa.dma_copy(dst=x, src=a)
    y = sbuf((4, 8))
    nisa.tensor_tensor(dst=y, data1=x, data2=x[0:4, 4:12], op=nl.add)  # ERR:current_oob
    return stored(y)


@nki.jit
def past_the_last_partition(a):
    o = hbm((4, 8))
    nisa.dma_copy(dst=o[1:5, 0:8], src=a)  # ERR:current_oob_dst
    return o


def test_views_at_the_edge_and_strided_simulate_to_numpy():
    assert np.array_equal(nki.simulate(last_columns)(A), A[:, 4:8] + A[:, 0:4])
    assert np.array_equal(nki.simulate(odd_columns)(A), A[:, 1:8:2])


def test_a_source_view_past_the_end_names_its_dimension_and_range():
    e = trace_error(past_the_end, A)
    check_diag(e, M, "err_tensor_access_out_of_bound",
               "Out-of-bound access for tensor `x` on dimension 1: index range [4, 11] exceed dimension size of 8",
               [("current_oob", "nisa.tensor_tensor")])


def test_a_destination_view_past_the_last_partition_names_dimension_0():
    e = trace_error(past_the_last_partition, A)
    check_diag(e, M, "err_tensor_access_out_of_bound",
               "index range [1, 4] exceed dimension size of 4", [("current_oob_dst", "nisa.dma_copy")])


@legacy.jit
def legacy_edge(a):
    out = lnl.ndarray((4, 4), dtype=lnl.float32, buffer=lnl.shared_hbm)
    lnl.store(out, value=lnl.load(a[0:4, 4:8]))
    return out


def legacy_past_the_end(a):
    out = lnl.ndarray((4, 4), dtype=lnl.float32, buffer=lnl.shared_hbm)
    lnl.store(out, value=lnl.load(a[0:4, 5:9]))  # ERR:legacy_oob
    return out


def test_legacy_views_at_the_edge_and_past_it():
    assert np.array_equal(legacy.simulate_kernel(legacy_edge, A), A[:, 4:8])
    e = trace_error(legacy.jit(legacy_past_the_end), A)
    check_diag(e, M, "err_tensor_access_out_of_bound",
               "Out-of-bound access for tensor `a` on dimension 1: index range [5, 8] exceed dimension size of 8",
               [("legacy_oob", "lnl.load")])
