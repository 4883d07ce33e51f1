"""DynamicAxis (seed 003): an upper bound held in a tile is read at run time;
Affine/Sequential stays an independent attribute."""
import numpy as np
import pytest

from neuronxcc import nki
import neuronxcc.nki.language as nl

from nki_test_util import Markers, check_diag

MARKERS = Markers(__file__)


@nki.jit(mode="simulation")
def running_sum(a, n):
    out = nl.ndarray((128, 1), dtype=a.dtype, buffer=nl.shared_hbm)
    cnt = nl.load(n[0:1, 0:1])
    acc = nl.zeros((128, 1), dtype=nl.float32)
    for j in nl.sequential_range(cnt):
        t = nl.load(a[:, j:j + 1])
        acc[...] = acc + t
    nl.store(out, value=acc)
    return out


@nki.jit(mode="simulation")
def affine_copy(a, n):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=0.0)
    cnt = nl.load(n[0:1, 0:1])
    for j in nl.affine_range(1, cnt, 2):
        nl.store(out[:, j:j + 1], value=nl.load(a[:, j:j + 1]))
    return out


@nki.jit(mode="simulation")
def float_bound(a, n):
    out = nl.ndarray((128, 1), dtype=a.dtype, buffer=nl.shared_hbm)
    cnt = nl.load(n[0:1, 0:1])
    for j in nl.affine_range(cnt):  # ERR:float_bound
        nl.store(out, value=nl.load(a[:, j:j + 1]))
    return out


@pytest.mark.parametrize("count", [0, 1, 5, 16])
def test_runtime_bound_is_read_when_the_loop_starts(count):
    a = np.arange(128 * 16, dtype=np.float32).reshape(128, 16)
    out = running_sum(a, np.array([[count]], np.int32))
    np.testing.assert_array_equal(out[:, 0], a[:, :count].sum(axis=1))


def test_ir_shows_one_dynamic_axis_with_its_attribute():
    a = np.zeros((128, 16), np.float32)
    n = np.array([[3]], np.int32)
    text = running_sum.trace(None, (a, n), {}).ir.text(False)
    assert "for j in sequential_range(0, cnt[0, 0], 1) DynamicAxis" in text
    text = affine_copy.trace(None, (a, n), {}).ir.text(False)
    assert "for j in affine_range(1, cnt[0, 0], 2) DynamicAxis" in text


def test_dynamic_affine_range_with_start_and_step():
    a = np.arange(128 * 8, dtype=np.float32).reshape(128, 8)
    out = affine_copy(a, np.array([[7]], np.int32))
    expected = np.zeros_like(a)
    expected[:, 1:7:2] = a[:, 1:7:2]
    np.testing.assert_array_equal(out, expected)


def test_runtime_bound_must_be_an_integer_tile():
    a = np.zeros((128, 4), np.float32)
    with pytest.raises(nki.NKIError) as info:
        float_bound(a, np.array([[2.0]], np.float32))
    check_diag(info.value, MARKERS, "err_invalid_range_args", "a runtime loop bound must be a one-element integer tile",
               [("float_bound", "for")])
