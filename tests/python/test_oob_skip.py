"""oob_mode.skip (NKI_API.md §3.3 DMA): indirect accesses out of bounds are dropped,
not errors: a gather leaves the destination's rows as they were, a scatter writes
only the rows in bounds. nl.load/nl.store take it as mode= (the docs' name) or
oob_mode=; nisa.dma_copy as oob_mode=. Without it, the access is an error."""
import numpy as np
import pytest

import nkic
from neuronxcc import nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl
from neuronxcc.nki.isa.constants import dge_mode, oob_mode

DATA = np.arange(16 * 8, dtype=np.float32).reshape(16, 8)
IDX = np.array([[1], [20], [3], [-1]], np.int32)


@nki.jit
def gather(data, idx, skip):
    out = nl.ndarray((4, 8), dtype=data.dtype, buffer=nl.shared_hbm)
    rows = nl.full((4, 8), 7.0, dtype=data.dtype, buffer=nl.sbuf)
    i = nl.load(idx)
    if skip:
        rows[...] = nl.load(data[i, nl.arange(8)[None, :]], mode=oob_mode.skip)
    else:
        rows[...] = nl.load(data[i, nl.arange(8)[None, :]])
    nl.store(out, rows)
    return out


@nki.jit
def scatter(data, idx, via_dma):
    out = nl.ndarray((16, 8), dtype=data.dtype, buffer=nl.shared_hbm)
    nl.store(out, nl.zeros((16, 8), dtype=data.dtype, buffer=nl.sbuf))
    i = nl.load(idx)
    rows = nl.load(data[0:4, :])
    if via_dma:
        nisa.dma_copy(dst=out[i, nl.arange(8)[None, :]], src=rows, oob_mode=nisa.oob_mode.skip)
    else:
        nl.store(out[i, nl.arange(8)[None, :]], rows, oob_mode=oob_mode.skip)
    return out


def test_gather_skips_out_of_bound_rows():
    got = gather(DATA, IDX, True)
    np.testing.assert_array_equal(got[[0, 2]], DATA[[1, 3]])
    np.testing.assert_array_equal(got[[1, 3]], np.full((2, 8), 7.0))


@pytest.mark.parametrize("via_dma", [False, True])
def test_scatter_skips_out_of_bound_rows(via_dma):
    got = scatter(DATA, IDX, via_dma)
    want = np.zeros((16, 8), np.float32)
    want[1], want[3] = DATA[0], DATA[2]
    np.testing.assert_array_equal(got, want)


def test_without_skip_an_out_of_bound_index_is_an_error():
    with pytest.raises(nkic.NKIError) as info:
        gather(DATA, IDX, False)
    assert info.value.code == "err_tensor_access_out_of_bound"
    assert isinstance(info.value, IndexError)  # as the same check at trace time
    assert "index 20 exceed dimension size of 16" in info.value.message


def test_isa_constants_module():
    assert oob_mode is nisa.oob_mode and dge_mode is nisa.dge_mode
