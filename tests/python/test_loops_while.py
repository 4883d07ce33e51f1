"""`while` in kernels (2.25): a plain Python condition is a Python loop; a runtime
condition (a one-element tile, nt.scalar) is a do-while loop axis: entered
unconditionally (err_while_loop_requires_unconditional_entry otherwise), body traced
once, repeated while the condition's binding after the body is nonzero."""
import numpy as np
import pytest

from neuronxcc import nki
import neuronxcc.nki.language as nl
from neuronxcc.nki.typing import scalar, tensor

from nki_test_util import Markers, check_diag, trace_error, trace_ir

M = Markers(__file__)


def count_up(a, limit):
    out = nl.ndarray((1, 1), dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((1, 1), dtype=a.dtype, buffer=nl.sbuf)
    t[...] = nl.load(a)
    cond = scalar(True)
    while cond:
        t[...] = t + 1
        cond = scalar(t) < limit
    nl.store(out, t)
    return out


@pytest.mark.parametrize("start,want", [(3, 10), (9, 10), (10, 11), (42, 43)])
def test_do_while_runs_at_least_once_and_until_the_condition_clears(start, want):
    assert nki.jit(count_up)(np.array([[start]], np.int32), 10)[0, 0] == want


def halve_rows(x):
    """Halves a tile until its largest value is below 1: a data-dependent trip count."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    t[...] = nl.load(x)
    cond = scalar(True)
    while cond:
        t[...] = nl.multiply(t, 0.5)
        biggest = nl.max(t[0:1, :], axis=1)
        cond = scalar(biggest) >= 1.0
    nl.store(out, t)
    return out


def test_trip_count_comes_from_the_data():
    x = np.full((1, 8), 37.0, np.float32)
    got = nki.jit(halve_rows)(x)
    np.testing.assert_array_equal(got, x / 64)  # 37 -> 0.578 after 6 halvings


def test_ir_has_one_do_while_axis():
    ir = trace_ir(count_up, np.array([[3]], np.int32), 10)
    assert ir.count("do w while") == 1 and "for " not in ir, ir


def pre_tested(a):
    out = nl.ndarray((1, 1), dtype=a.dtype, buffer=nl.shared_hbm)
    t: tensor[1, 1] = nl.load(a)
    s = scalar(t)
    while s < 10:  # ERR:pre_tested
        t[...] = t + 1
        s = scalar(t)
    nl.store(out, t)
    return out


def test_pre_tested_while_is_rejected():
    e = trace_error(pre_tested, np.array([[3]], np.int32))
    check_diag(e, M, "err_while_loop_requires_unconditional_entry",
               "Traditional while loops are not supported - use do-while pattern instead", [("pre_tested", "s < 10")])
    assert isinstance(e, ValueError)


def never_clears(a):
    out = nl.ndarray((1, 1), dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    cond = scalar(True)
    while cond:  # ERR:never_clears
        cond = scalar(t) > -1
    nl.store(out, t)
    return out


def test_a_condition_that_never_clears_is_a_runtime_error():
    with pytest.raises(RuntimeError) as info:
        nki.jit(never_clears)(np.array([[3]], np.int32))
    check_diag(info.value, M, "err_while_loop_does_not_terminate",
               "the while loop ran 1048576 iterations without its condition becoming zero", [("never_clears", "cond")])


def break_out(a):
    out = nl.ndarray((1, 1), dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    cond = scalar(True)
    while cond:
        cond = scalar(t) > 0
        break  # ERR:break_out
    nl.store(out, t)
    return out


def test_break_in_a_do_while_is_rejected():
    e = trace_error(break_out, np.array([[3]], np.int32))
    check_diag(e, M, "err_break_in_deferred_loop", "break", [("break_out", "break")])


def static_while(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    n = 0
    while n < 3:
        t = nl.add(t, 1.0)
        n += 1
    nl.store(out, t)
    return out


def test_python_conditions_stay_python_loops():
    a = np.zeros((4, 4), np.float32)
    np.testing.assert_array_equal(nki.jit(static_while)(a), a + 3)
    assert trace_ir(static_while, a).count("add") == 3


def bad_scalar(a):
    out = nl.ndarray((1, 1), dtype=a.dtype, buffer=nl.shared_hbm)
    s = scalar(nl.load(a))  # ERR:bad_scalar
    nl.store(out, nl.load(a[0:1, 0:1]))
    return out


def test_scalar_of_a_tile_needs_one_element():
    e = trace_error(bad_scalar, np.zeros((4, 4), np.float32))
    check_diag(e, M, "err_unexpected_type_of_operand", "a runtime scalar is one element", [("bad_scalar", "scalar(")])


def rebound_condition(x):
    out = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.shared_hbm)
    big = nl.load(x)
    cond = scalar(True)
    while cond:
        cond = nl.less(big, 10)  # ERR:rebound_condition
    nl.store(out, value=nl.zeros((1, 1), dtype=nl.int32))
    return out


def test_a_do_while_condition_rebound_to_a_whole_tile_has_no_truth_value():
    e = trace_error(rebound_condition, np.zeros((4, 4), np.float32))
    assert e.code == "err_ambiguous_tensor_truth_value" and "a tensor of shape [4, 4]" in e.message
