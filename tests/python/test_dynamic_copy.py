"""nisa.tensor_copy_dynamic_src / tensor_copy_dynamic_dst: on-chip copies at
runtime free-dim offsets read from SBUF (NKI_API.md §1.3), written as
`x[i_p, i_f + off[0, j]]` (either order), `x[i_p, off]`, or per-row offset tiles;
their numerics against numpy, the runtime bounds check, and the diagnostics for
runtime offsets anywhere else."""
import numpy as np
import pytest

import nkic
from neuronxcc import nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

from nki_test_util import Markers, check_diag, trace_error

M = Markers(__file__)
X = np.arange(128 * 256, dtype=np.float32).reshape(128, 256)


@nki.jit
def window(x, offs):
    """out[:, 64*j : 64*j+64] = x[:, offs[0, j] : offs[0, j] + 64], for each j."""
    n = offs.shape[1]
    out = nl.ndarray((128, 64 * n), dtype=x.dtype, buffer=nl.shared_hbm)
    src = nl.load(x)
    off = nl.load(offs)
    res = nl.ndarray((128, 64 * n), dtype=x.dtype, buffer=nl.sbuf)
    i_p, i_f = nl.mgrid[0:128, 0:64]
    for j in nl.affine_range(n):
        res[i_p, j * 64 + i_f] = nisa.tensor_copy_dynamic_src(src[i_p, i_f + off[0, j]])
    nl.store(out, res)
    return out


def test_dynamic_src_reads_at_the_runtime_offset():
    offs = np.array([[0, 5, 192, 17]], dtype=np.int32)
    got = window(X, offs)
    want = np.concatenate([X[:, o:o + 64] for o in offs[0]], axis=1)
    np.testing.assert_array_equal(got, want)


@nki.jit
def column(x, offs):
    out = nl.ndarray((128, 1), dtype=nl.bfloat16, buffer=nl.shared_hbm)
    src = nl.load(x)
    off = nl.load(offs)
    i_p, i_c = nl.mgrid[0:128, 2:3]
    nl.store(out, nisa.tensor_copy_dynamic_src(src[i_p, off[0, 1] + i_c], dtype=nl.bfloat16))
    return out


def test_tensor_first_offset_and_dtype_cast():
    got = column(X, np.array([[0, 40]], dtype=np.uint32))
    np.testing.assert_array_equal(got.astype(np.float32), X[:, 42:43].astype(nl.bfloat16).astype(np.float32))


@nki.jit
def gather_rows(data, idx):
    """out[r, :] = data[0, idx[r, 0], :] from an on-chip [1, R, C] tensor, R offsets at once."""
    out = nl.ndarray((8, 4), dtype=data.dtype, buffer=nl.shared_hbm)
    d = nl.load(data)
    idx_tile = nl.load(idx)
    iy, iz = nl.mgrid[0:8, 0:4]
    o = nl.ndarray((8, 4), dtype=data.dtype, buffer=nl.sbuf)
    o[iy, iz] = nisa.tensor_copy_dynamic_src(d[0, idx_tile, iz])
    nl.store(out, o)
    return out


def test_per_row_offset_tile():
    data = np.arange(16 * 4, dtype=np.float32).reshape(1, 16, 4)
    idx = np.array([[3], [0], [15], [7], [7], [1], [2], [9]], dtype=np.int32)
    np.testing.assert_array_equal(gather_rows(data, idx), data[0, idx[:, 0], :])


@nki.jit
def scatter(x, offs):
    out = nl.ndarray((128, 256), dtype=x.dtype, buffer=nl.shared_hbm)
    buf = nl.zeros((128, 256), dtype=x.dtype, buffer=nl.sbuf)
    t = nl.load(x)
    off = nl.load(offs)
    i_p, i_f = nl.mgrid[0:128, 0:32]
    for j in nl.sequential_range(2):
        nisa.tensor_copy_dynamic_dst(dst=buf[i_p, off[0, j] + i_f], src=t[i_p, j * 32 + i_f],
                                     mask=(i_f < 30))
    nl.store(out, buf)
    return out


def test_dynamic_dst_writes_at_the_runtime_offset_under_a_mask():
    x = np.random.default_rng(0).standard_normal((128, 64)).astype(np.float32)
    offs = np.array([[100, 7]], dtype=np.int32)
    want = np.zeros((128, 256), np.float32)
    want[:, 100:130] = x[:, 0:30]
    want[:, 7:37] = x[:, 32:62]
    np.testing.assert_array_equal(scatter(x, offs), want)


def test_offset_past_the_end_is_a_runtime_out_of_bound_error():
    with pytest.raises(nkic.NKIError) as info:
        window(X, np.array([[0, 193]], dtype=np.int32))
    e = info.value
    assert e.code == "err_tensor_access_out_of_bound"
    assert "index 256 exceed dimension size of 256" in e.message


# ---------------------------------------------------------------- diagnostics

def e_compute_on_dynamic(x, offs):
    src = nl.load(x)
    off = nl.load(offs)
    i_p, i_f = nl.mgrid[0:128, 0:64]
    y = nl.exp(src[i_p, i_f + off[0, 0]])  # ERR:compute


def e_assign_dynamic(x, offs):
    src = nl.load(x)
    off = nl.load(offs)
    i_p, i_f = nl.mgrid[0:128, 0:64]
    res = nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.sbuf)
    res[i_p, i_f] = src[i_p, i_f + off[0, 0]]  # ERR:assign


def e_partition_offset(x, offs):
    src = nl.load(x)
    off = nl.load(offs)
    i_p, i_f = nl.mgrid[0:64, 0:64]
    y = nisa.tensor_copy_dynamic_src(src[i_p + off[0, 0], i_f])  # ERR:partition


def e_float_offset(x, offs):
    src = nl.load(x)
    off = nl.load(offs, dtype=nl.float32)
    i_p, i_f = nl.mgrid[0:128, 0:64]
    y = nisa.tensor_copy_dynamic_src(src[i_p, i_f + off[0, 0]])  # ERR:float


def e_subtracted(x, offs):
    src = nl.load(x)
    off = nl.load(offs)
    i_p, i_f = nl.mgrid[0:128, 0:64]
    y = nisa.tensor_copy_dynamic_src(src[i_p, i_f - off[0, 0]])  # ERR:subtracted


DIAGS = {
    "compute": ("err_indirect_indices_are_not_supported_with_nki_api", "indirect indices are not supported by 'exp'",
                "nl.exp"),
    "assign": ("err_copy_dynamic_indirect_indices_not_natively_supported",
               "cannot copy a tensor with indirect memory reference access to `res`", "res["),
    "partition": ("err_tensor_index_not_supported",
                  "a runtime index into an on-chip tensor offsets a free dimension, not the partition dimension", "src["),
    "float": ("err_tensor_index_not_supported", "is not an integer tile", "src["),
    "subtracted": ("err_unexpected_type_of_operand", "a tensor subtracted in an index expression", "i_f - "),
}
KERNELS = {"compute": e_compute_on_dynamic, "assign": e_assign_dynamic, "partition": e_partition_offset,
           "float": e_float_offset, "subtracted": e_subtracted}


@pytest.mark.parametrize("case", list(DIAGS))
def test_runtime_offset_diagnostics(case):
    code, message, token = DIAGS[case]
    e = trace_error(KERNELS[case], X, np.zeros((1, 2), np.int32))
    check_diag(e, M, code, message, [(case, token)])


def test_a_dynamic_copy_issues_no_faster_than_min_ii_dynamic():
    # The nki.isa reference: max(MIN_II_DYNAMIC, N) engine cycles, MIN_II_DYNAMIC about 600.
    # window copies 64 columns per call: on trn1's Vector Engine (1.12 GHz) each takes 600 cycles.
    offs = np.array([[0, 5, 192, 17]], dtype=np.int32)
    r = nkic.profile(window, X, offs, target="trn1")
    copies = [(busy, n) for f, ln, busy, _, n in r.lines if f and f.endswith("test_dynamic_copy.py") and n == 4]
    assert copies == [(pytest.approx(4 * 600 / 1.12 / 1e3), 4)], r.lines
