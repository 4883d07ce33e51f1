"""Runtime offsets of on-chip views in the current nki API (NKI_CURRENT_API.md §4.2-4.3):
`.ap(scalar_offset=, indirect_dim=)` and a run-time `select` of SBUF and PSUM tiles, read
and written by DMAs, copies and compute instructions, simulated against numpy; an
offset out of range is a runtime error (or skipped by a DMA's oob_mode.skip), and each
misuse a diagnostic at the user's line."""
import numpy as np
import pytest

import nki
import nki.isa as nisa
import nki.language as nl
import nkic
from nki_current_util import hbm, loaded, sbuf, stored
from nki_test_util import Markers, check_diag, trace_error

M = Markers(__file__)
RNG = np.random.default_rng(7)
A = RNG.standard_normal((128, 256)).astype(np.float32)
B = RNG.standard_normal((128, 4, 64)).astype(np.float32)


def offset(value):
    return np.array([[value]], np.int32)


def window(x, r):
    """Elements r .. r + 63 of each partition of the (128, 256) tile x."""
    return x.ap([[256, 128], [1, 64]], offset=0, scalar_offset=r, indirect_dim=1)


@nki.jit
def windows_through_engines(a, off):
    x, r = loaded(a), loaded(off)
    y = sbuf((128, 64))
    nisa.tensor_copy(dst=y, src=window(x, r))
    z = sbuf((128, 64))
    nisa.tensor_tensor(dst=z, data1=window(x, r), data2=y, op=nl.add)
    e = sbuf((128, 64))
    nisa.activation(dst=e, op=nl.exp, data=window(x, r), scale=0.5)
    m = sbuf((128, 1))
    nisa.tensor_reduce(dst=m, op=nl.maximum, data=window(x, r), axis=1)
    d = sbuf((128, 64))
    nisa.dma_copy(dst=d, src=window(x, r))  # an SBUF-to-SBUF DMA
    return stored(z), stored(e), stored(m), stored(d)


@pytest.mark.parametrize("r", [0, 10, 192])
def test_a_scalar_offset_moves_an_sbuf_operand_of_every_engine(r):
    z, e, m, d = nki.simulate(windows_through_engines)(A, offset(r))
    w = A[:, r:r + 64]
    np.testing.assert_allclose(z, 2 * w, rtol=1e-6)
    np.testing.assert_allclose(e, np.exp(0.5 * w), rtol=1e-5)
    np.testing.assert_array_equal(m, w.max(axis=1, keepdims=True))
    np.testing.assert_array_equal(d, w)


@nki.jit
def block_writes(b, off):
    """Block r of dim 1 of a (128, 4, 64) tile: read by a run-time select, written at .ap()."""
    x, r = loaded(b), loaded(off)
    t = sbuf((128, 64))
    nisa.tensor_scalar(dst=t, data=x.select(1, r), op0=nl.multiply, operand0=3.0)
    nisa.tensor_copy(dst=x.ap([[256, 128], [1, 64]], offset=0, scalar_offset=r, indirect_dim=1), src=t)
    nisa.memset(dst=x.ap([[256, 128], [1, 8]], offset=4, scalar_offset=r, indirect_dim=1), value=-1.0)
    return stored(x)


@pytest.mark.parametrize("r", [0, 3])
def test_a_runtime_select_reads_and_an_offset_dst_writes_one_block(r):
    want = B.copy()
    want[:, r] *= 3
    want[:, r, 4:12] = -1
    np.testing.assert_allclose(nki.simulate(block_writes)(B, offset(r)), want, rtol=1e-6)


@nki.jit
def block_products(b, off):
    """The Tensor Engine and a free-axis reduction read block r of dim 1 at run time."""
    x, r = loaded(b), loaded(off)
    blk = x.ap([[256, 128], [1, 64]], offset=0, scalar_offset=r, indirect_dim=1)
    p = nl.ndarray((64, 64), nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=p, stationary=blk, moving=blk)
    g = sbuf((64, 64))
    nisa.tensor_copy(dst=g, src=p)
    s = sbuf((128, 1))
    nisa.tensor_reduce(dst=s, op=nl.add, data=x.select(1, r), axis=1)
    return stored(g), stored(s)


def test_matmul_operands_and_reductions_take_runtime_offsets():
    g, s = nki.simulate(block_products)(B, offset(1))
    w = B[:, 1]
    np.testing.assert_allclose(g, w.T @ w, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(s[:, 0], w.sum(axis=1), rtol=1e-5)
    assert "64*" in block_products.trace(None, (B, offset(1)), {}).ir.text(False)  # rows of 64 elements


@nki.jit
def block_sum(b):
    """The sum of the four blocks of dim 1, one block per trip of a runtime loop."""
    x = loaded(b)
    acc = sbuf((128, 64))
    nisa.memset(dst=acc, value=0.0)

    def body(i):
        nisa.tensor_tensor(dst=acc, data1=acc, data2=x.ap([[256, 128], [1, 64]], offset=0, scalar_offset=i,
                                                          indirect_dim=1), op=nl.add)

    nl.fori_loop(0, 4, body)
    return stored(acc)


def test_a_loop_register_is_an_on_chip_scalar_offset():
    np.testing.assert_allclose(nki.simulate(block_sum)(B), B.sum(axis=1), rtol=1e-5)
    text = block_sum.trace(None, (B,), {}).ir.text(False)
    assert text.count("for ") == 1  # one loop: the offset is read at every trip


@nki.jit
def psum_window(b, off):
    x, r = loaded(b), loaded(off)
    p = nl.ndarray((128, 4, 64), nl.float32, buffer=nl.psum)
    nisa.tensor_copy(dst=p, src=x)
    y = sbuf((128, 64))
    nisa.tensor_copy(dst=y, src=p.select(1, r))
    return stored(y)


def test_a_psum_tile_takes_a_runtime_select():
    np.testing.assert_array_equal(nki.simulate(psum_window)(B, offset(2)), B[:, 2])


@nki.jit
def bf16_window(a, off):
    """The stub's example: an fp32 tile read as bf16, moved along its free dim."""
    x, r = loaded(a), loaded(off)
    y = sbuf((128, 16), nl.bfloat16)
    nisa.tensor_copy(dst=y, src=x.ap([[512, 128], [1, 16]], dtype=nl.bfloat16, scalar_offset=r, indirect_dim=1))
    return stored(y)


def test_an_offset_counts_elements_of_the_reinterpreting_dtype():
    got = nki.simulate(bf16_window)(A, offset(6))
    halves = A.view(np.uint16).reshape(128, 512)
    np.testing.assert_array_equal(got.view(np.uint16), halves[:, 6:22])


@nki.jit
def late_window(a, off):
    x, r = loaded(a), loaded(off)
    z = sbuf((128, 64))
    nisa.tensor_tensor(dst=z, data1=window(x, r), data2=window(x, r), op=nl.add)  # ERR:oob_engine
    return stored(z)


@nki.jit
def late_dma(a, off, skip):
    x, r = loaded(a), loaded(off)
    d = sbuf((128, 64))
    nisa.memset(dst=d, value=5.0)
    mode = nisa.oob_mode.skip if skip else nisa.oob_mode.error
    nisa.dma_copy(dst=d, src=window(x, r), oob_mode=mode)  # ERR:oob_dma
    return stored(d)


@pytest.mark.parametrize("kernel,marker", [(late_window, "oob_engine"), (late_dma, "oob_dma")])
def test_an_offset_past_the_partition_is_a_runtime_error_at_the_call(kernel, marker):
    args = (A, offset(200)) + ((False,) if kernel is late_dma else ())
    with pytest.raises(nkic.NKIError) as info:
        nki.simulate(kernel)(*args)
    e = info.value
    assert e.code == "err_tensor_access_out_of_bound", str(e)
    assert isinstance(e, IndexError)
    assert "exceed dimension size of 256" in e.message, e.message
    assert e.line == M.line(marker)


def test_a_dma_with_oob_mode_skip_drops_the_elements_outside():
    got = nki.simulate(late_dma)(A, offset(200), True)
    np.testing.assert_array_equal(got[:, :56], A[:, 200:])
    np.testing.assert_array_equal(got[:, 56:], np.full((128, 8), 5.0, np.float32))


@nki.jit
def transposed_rows(h, off, skip):
    """Rows r .. r + 15 of the HBM (64, 32) h, transposed by the DMA."""
    r = loaded(off)
    t = sbuf((32, 16))
    nisa.memset(dst=t, value=7.0)
    mode = nisa.oob_mode.skip if skip else nisa.oob_mode.error
    nisa.dma_transpose(dst=t, src=h.ap([[32, 16], [1, 32]], offset=0, scalar_offset=r, indirect_dim=0),  # ERR:oob_t
                       oob_mode=mode)
    return stored(t)


H = RNG.standard_normal((64, 32)).astype(np.float32)


def test_dma_transpose_reads_its_source_at_a_scalar_offset():
    np.testing.assert_array_equal(nki.simulate(transposed_rows)(H, offset(9), False), H[9:25].T)


def test_dma_transpose_skips_rows_past_the_end_with_oob_mode_skip():
    got = nki.simulate(transposed_rows)(H, offset(60), True)
    np.testing.assert_array_equal(got[:, :4], H[60:].T)
    np.testing.assert_array_equal(got[:, 4:], np.full((32, 12), 7.0, np.float32))
    with pytest.raises(nkic.NKIError) as info:
        nki.simulate(transposed_rows)(H, offset(60), False)
    assert info.value.code == "err_tensor_access_out_of_bound" and info.value.line == M.line("oob_t")


@nki.jit
def transposed_gather(h):
    ix = sbuf((16, 1), nl.int32)
    nisa.memset(dst=ix, value=0)
    t = sbuf((32, 16))
    nisa.dma_transpose(dst=t, src=h.ap([[32, 16], [1, 32]], offset=0, vector_offset=ix, indirect_dim=0))  # ERR:vt
    return stored(t)


def test_dma_transpose_refuses_a_vector_offset():
    e = trace_error(transposed_gather, H)
    check_diag(e, M, "err_indirect_indices_are_not_supported_with_nki_api",
               "indirect indices are not supported by 'dma_transpose'", [("vt", "nisa.")])
    assert "a vector_offset source; nkic transposes a source at a scalar_offset" in str(e)


# ---------------------------------------------------------------- diagnostics

@nki.jit
def vector_on_chip(a):
    x = loaded(a)
    ix = sbuf((128, 1), nl.int32)
    nisa.memset(dst=ix, value=0)
    x.ap([[256, 128], [1, 64]], offset=0, vector_offset=ix, indirect_dim=0)  # ERR:vector
    return a


@nki.jit
def partition_offset(a, off):
    x, r = loaded(a), loaded(off)
    x.ap([[256, 128], [1, 64]], offset=0, scalar_offset=r, indirect_dim=0)  # ERR:partition
    return a


@nki.jit
def select_partition(a, off):
    x, r = loaded(a), loaded(off)
    x.select(0, r)  # ERR:select_partition
    return a


@nki.jit
def vector_select_on_chip(a):
    x = loaded(a)
    ix = sbuf((128, 1), nl.int32)
    nisa.memset(dst=ix, value=0)
    x.vector_select(0, ix)  # ERR:vector_select
    return a


@nki.jit
def float_offset(a):
    x = loaded(a)
    f = sbuf((1, 1))
    nisa.memset(dst=f, value=1.0)
    x.ap([[256, 128], [1, 64]], offset=0, scalar_offset=f, indirect_dim=1)  # ERR:float_offset
    return a


CASES = [
    (vector_on_chip, "vector", (A,), "err_indirect_indices_are_not_supported_with_nki_api",
     ["indirect indices are not supported by 'ap'"]),
    (partition_offset, "partition", (A, offset(0)), "err_unsupported_index",
     "indirect_dim 0 is the partition dim of on-chip `t.1`: a runtime offset moves an on-chip access along a free dim"),
    (select_partition, "select_partition", (A, offset(0)), "err_unsupported_args",
     "dim 0 of an on-chip view is its partition dim; it cannot be selected this way"),
    (vector_select_on_chip, "vector_select", (A,), "err_unsupported_args",
     "unsupported arguments to 'tensor.vector_select': gathers rows of an HBM tensor; `t.1` is on chip"),
    (float_offset, "float_offset", (A,), "err_tensor_index_not_supported", "is not an integer tile"),
]


@pytest.mark.parametrize("kernel,marker,args,code,message", CASES, ids=[c[1] for c in CASES])
def test_misuse(kernel, marker, args, code, message):
    check_diag(trace_error(kernel, *args), M, code, message, [(marker, "x.")])


def test_a_vector_offset_on_chip_says_why():
    e = trace_error(vector_on_chip, A)
    assert ("vector_offset= gathers rows of an HBM tensor; `t.1` is on chip, where a runtime offset is one "
            "scalar_offset= on a free dim") in str(e)


@nki.jit
def tensor_indirection(a):
    x = loaded(a)
    ix = sbuf((128, 2), nl.int32)
    nisa.memset(dst=ix, value=0)
    x.indirect(ix)  # ERR:indirect
    return a


def test_tensor_indirection_is_gated_to_neuroncore_v4(monkeypatch):
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn2")
    check_diag(trace_error(tensor_indirection, A), M, "err_min_arch_support_for_inst",
               "'tensor.indirect' is available on NeuronCore-v4 and newer only", [("indirect", "x.")])


def test_tensor_indirection_is_refused_on_neuroncore_v4_with_the_reason(monkeypatch):
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn3")
    check_diag(trace_error(tensor_indirection, A), M, "err_unsupported_args",
               "unsupported arguments to 'tensor.indirect': nkic does not simulate tensor indirection: the sources "
               "disagree on what its index selects", [("indirect", "x.")])


@nki.jit
def diagonal_of_window(a, off):
    x, r = loaded(a), loaded(off)
    y = sbuf((128, 64))
    nisa.affine_select(dst=y, pattern=[[-1, 64]], channel_multiplier=1, on_true_tile=window(x, r), on_false_value=-9.0)
    return stored(y)


def test_affine_select_keeps_the_diagonal_of_an_offset_window():
    """Partitions 64 and up meet their diagonal past the row's end: they keep nothing."""
    got = nki.simulate(diagonal_of_window)(A, offset(5))
    keep = np.arange(128)[:, None] == np.arange(64)[None, :]
    np.testing.assert_array_equal(got, np.where(keep, A[:, 5:69], np.float32(-9.0)))


@nki.jit
def reshaped_offset_dst(a, off):
    x, r = loaded(a), loaded(off)
    t = sbuf((128, 64))
    nisa.memset(dst=t, value=1.0)
    d = x.ap([[256, 128], [8, 8], [1, 8]], offset=0, scalar_offset=r, indirect_dim=1)
    nisa.tensor_copy(dst=d, src=t)  # ERR:shape
    return stored(x)


def test_a_dst_at_a_runtime_offset_has_the_instructions_shape():
    e = trace_error(reshaped_offset_dst, A, offset(0))
    check_diag(e, M, "err_unsupported_index",
               "at runtime offsets must have the instruction's shape [128, 64], not [128, 8, 8]",
               [("shape", "nisa.tensor_copy")])
