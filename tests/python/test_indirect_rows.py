"""Indirect (runtime-indexed) loads and stores move whole rows at once when the index
tile holds one value per row; these cases pin that the row walk gives the same elements
as the definition, point by point: strided and offset columns, dtype conversion on the
way, a mask that changes along the row, accumulating stores of repeated indices, and
rows of a 3-D access."""
import numpy as np

from neuronxcc import nki
import neuronxcc.nki.language as nl

RNG = np.random.default_rng(7)
DATA = RNG.standard_normal((32, 64)).astype(np.float32)
IDX = np.array([[5], [0], [31], [5], [17], [2], [9], [30]], np.int32)


@nki.jit
def gather(data, idx, col0, step, width, out_dtype):
    out = nl.ndarray((8, width), dtype=out_dtype, buffer=nl.shared_hbm)
    i = nl.load(idx)
    i_f = nl.arange(width)[None, :]
    rows = nl.load(data[i, col0 + step * i_f])
    nl.store(out, rows)
    return out


def test_gather_rows_with_offset_and_stride_match_numpy():
    for col0, step, width in [(0, 1, 64), (3, 1, 40), (1, 2, 30)]:
        got = gather(DATA, IDX, col0, step, width, np.float32)
        want = DATA[IDX[:, 0]][:, col0:col0 + step * width:step]
        np.testing.assert_array_equal(got, want)


@nki.jit
def scatter(data, idx, out_dtype, add):
    out = nl.ndarray((32, 64), dtype=out_dtype, buffer=nl.shared_hbm)
    nl.store(out, nl.zeros((32, 64), dtype=out_dtype, buffer=nl.sbuf))
    i = nl.load(idx)
    rows = nl.load(data[0:8, :])
    if add:
        nl.atomic_rmw(out[i, nl.arange(64)[None, :]], value=rows, op=np.add)
    else:
        nl.store(out[i, nl.arange(64)[None, :]], rows)
    return out


def test_scatter_converts_each_element_as_a_store_does():
    got = scatter(DATA, IDX, nl.bfloat16, False).astype(np.float32)
    want = np.zeros((32, 64), np.float32)
    for r, target in enumerate(IDX[:, 0]):  # later rows win, in program order
        want[target] = DATA[r]
    bf16 = nl.bfloat16 if isinstance(nl.bfloat16, np.dtype) else np.dtype(nl.bfloat16)
    np.testing.assert_array_equal(got, want.astype(bf16).astype(np.float32))


@nki.jit
def masked_gather(data, idx, cols):
    out = nl.ndarray((8, 64), dtype=data.dtype, buffer=nl.shared_hbm)
    rows = nl.full((8, 64), -1.0, dtype=data.dtype, buffer=nl.sbuf)
    i = nl.load(idx)
    i_p, i_f = nl.arange(8)[:, None], nl.arange(64)[None, :]
    if cols < 64:
        rows[i_p, i_f] = nl.load(data[i, i_f], mask=(i_f < cols) & (i_p < 6))
    else:  # a mask of whole rows
        rows[i_p, i_f] = nl.load(data[i, i_f], mask=(i_p < 6))
    nl.store(out, rows)
    return out


def test_a_mask_keeps_only_its_elements():
    for cols in (21, 64):
        got = masked_gather(DATA, IDX, cols)
        want = np.full((8, 64), -1.0, np.float32)
        want[:6, :cols] = DATA[IDX[:6, 0], :cols]
        np.testing.assert_array_equal(got, want)


def test_accumulating_store_adds_repeated_rows_in_order():
    got = scatter(DATA, IDX, nl.float32, True)
    want = np.zeros((32, 64), np.float32)
    for r, target in enumerate(IDX[:, 0]):
        want[target] = (want[target] + DATA[r]).astype(np.float32)
    np.testing.assert_array_equal(got, want)


@nki.jit
def gather_3d(data, idx):
    out = nl.ndarray((8, 4, 16), dtype=data.dtype, buffer=nl.shared_hbm)
    i = nl.load(idx.reshape((8, 1, 1)))
    view = data.reshape((32, 4, 16))
    rows = nl.load(view[i, nl.arange(4)[None, :, None], nl.arange(16)[None, None, :]])
    nl.store(out, rows)
    return out


def test_rows_of_a_3d_access():
    got = gather_3d(DATA, IDX)
    np.testing.assert_array_equal(got, DATA.reshape(32, 4, 16)[IDX[:, 0]])
