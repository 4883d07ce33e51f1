"""nisa.local_gather: each 16-partition GpSimd core flattens its slice of the uint16
index tile partition-first and, for every partition it serves, gathers
num_elem_per_idx contiguous elements at each index of the partition's flattened
free dims; the result is [P, ceil(valid/16), 16, num_elem_per_idx]."""
import numpy as np
import pytest

from neuronxcc import nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

from nki_test_util import Markers, check_diag, trace_error

M = Markers(__file__)


def gather(src, index, num_elem, num_valid):
    p = src.shape[0]
    rows = -(-num_valid // 16)
    out = nl.ndarray((p, rows, 16, num_elem), dtype=src.dtype, buffer=nl.shared_hbm)
    g = nisa.local_gather(nl.load(src), nl.load(index), num_elem, num_valid)  # ERR:gather
    nl.store(out, g)
    return out


def reference(src, index, num_elem, num_valid):
    p = src.shape[0]
    flat = src.reshape(p, -1)
    rows = -(-num_valid // 16)
    out = np.full((p, rows * 16, num_elem), np.nan, src.dtype)
    for c in range(p // 16):
        idx = index[16 * c:16 * c + 16].flatten(order="F")[:num_valid].astype(np.int64)
        for v, i in enumerate(idx):
            out[16 * c:16 * c + 16, v] = flat[16 * c:16 * c + 16, i:i + num_elem]
    return out.reshape(p, rows, 16, num_elem)


@pytest.mark.parametrize("p,k,num_elem,num_valid", [(128, 4, 4, 64), (32, 2, 1, 32), (16, 3, 8, 40)])
def test_gathers_per_core_with_shared_indices(p, k, num_elem, num_valid):
    rng = np.random.default_rng(p + k)
    src = rng.random((p, 64, 4), dtype=np.float32)
    index = (rng.integers(0, 256 // num_elem, size=(p, k)) * num_elem).astype(np.uint16)
    got = nki.jit(gather)(src, index, num_elem, num_valid)
    want = reference(src, index, num_elem, num_valid)
    written = ~np.isnan(want)
    np.testing.assert_array_equal(got[written], want[written])


@pytest.mark.parametrize("case,p,num_elem,code,message", [
    ("partitions", 24, 1, "err_unexpected_type_of_operand", "partitions must be a multiple of 16"),
    ("num_elem", 16, 3, "err_unexpected_type_of_operand", "'num_elem_per_idx': got 3; it is one of 1, 2, 4, 8, 16, 32"),
])
def test_shape_rules(case, p, num_elem, code, message):
    e = trace_error(gather, np.zeros((p, 64), np.float32), np.zeros((p, 2), np.uint16), num_elem, 16)
    check_diag(e, M, code, message, [("gather", "nisa.")], api="nisa.local_gather")


def test_index_must_be_uint16():
    e = trace_error(gather, np.zeros((16, 64), np.float32), np.zeros((16, 2), np.int32), 1, 16)
    check_diag(e, M, "err_supported_operand_dtype", "operand 'index' of 'nisa.local_gather' has dtype 'int32'",
               [("gather", "nisa.")])
