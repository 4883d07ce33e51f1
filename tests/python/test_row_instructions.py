"""Row instructions (scan, max8, ...) read and write whole partition rows at once, and keep
the element-by-element semantics at the edges: a masked scan writes only the positions the
mask keeps, and a checked read of a never-written element is reported at the user's line."""
import numpy as np
import pytest
from neuronxcc import nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

import nkic
from nki_test_util import Markers, simulate

M = Markers(__file__)


def k_masked_scan(x):
    out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(x)
    acc = nl.full((128, 64), -5.0, dtype=nl.float32)
    i_f = nl.arange(64)[None, :]
    acc[...] = nisa.tensor_tensor_scan(t, t, 0.0, np.multiply, np.add, mask=(i_f < 40))
    nl.store(out, value=acc)
    return out


def test_masked_scan_writes_only_kept_positions():
    x = np.full((128, 64), 0.5, np.float32)
    out = simulate(k_masked_scan, x)
    r, want = 0.0, []
    for _ in range(40):
        r = np.float32(0.5) * np.float32(r) + np.float32(0.5)
        want.append(r)
    np.testing.assert_array_equal(out[:, :40], np.tile(np.array(want, np.float32), (128, 1)))
    np.testing.assert_array_equal(out[:, 40:], np.full((128, 24), -5.0, np.float32))


def k_uninit_max8(x):
    out = nl.ndarray((128, 8), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 64), dtype=nl.float32)
    t[:, 0:32] = nl.load(x[:, 0:32])
    m = nisa.max8(src=t)  # ERR:uninit
    nl.store(out, value=m)  # ERR:uninit_store
    return out


def test_a_never_written_element_reaching_the_output_names_both_user_lines():
    x = np.random.rand(128, 64).astype(np.float32)
    with pytest.raises(nkic.NKIError) as info:
        nki.simulate_kernel(nki.jit(k_uninit_max8), x, check_uninitialized=True)
    e = info.value
    assert e.code == "err_read_uninitialized_memory"
    assert e.message == ("Read of uninitialized memory reaches an output: element [0, 0] of tensor `out` is computed "
                         "from element [0, 32] of tensor `t`, which was never written in this program instance "
                         f"(read at line {M.line('uninit')})")
    assert M.same_file(e.file) and (e.line, e.col) == M.loc("uninit_store", "nl.store")
    assert [(n[1], n[2], n[3]) for n in e.notes] == [(*M.loc("uninit", "nisa.max8"), "the uninitialized value is read here")]


def test_unchecked_max8_of_a_full_row_matches_numpy():
    x = np.random.rand(128, 64).astype(np.float32)

    def k(x):
        out = nl.ndarray((128, 8), dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(out, value=nisa.max8(src=nl.load(x)))
        return out

    np.testing.assert_array_equal(simulate(k, x), -np.sort(-x, axis=1)[:, :8])
