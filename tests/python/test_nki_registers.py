"""Registers and runtime loops of the current nki API (NKI_CURRENT_API.md §5.2-5.4):
nisa.register_*, nl.fori_loop, nl.while_loop (checked before each trip) and the
nl.dynamic_range (deprecated in 0.6, served as 0.6: removed in 0.7), simulated against numpy, and each misuse a diagnostic
at the user's line."""
import numpy as np
import pytest

import nki
import nki.isa as nisa
import nki.language as nl
import nkic
from nki_test_util import Markers, check_diag, trace_error

M = Markers(__file__)
N = 8
DATA = np.arange(1, N + 1, dtype=np.float32).reshape(1, N)


def count_tile(src):
    t = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=src)
    return t


@nki.jit
def copy_prefix(data, n):
    """output[0, i] = data[0, i] for i < n (a run-time count), the rest 0."""
    output = nl.ndarray((1, N), dtype=nl.float32, buffer=nl.shared_hbm)
    ub = nisa.register_alloc()
    nisa.register_load(ub, count_tile(n))
    nisa.dma_copy(dst=output, src=nl.zeros((1, N), dtype=nl.float32, buffer=nl.sbuf))
    temp = nl.ndarray((1, 1), dtype=nl.float32, buffer=nl.sbuf)

    def body(i):
        nisa.dma_copy(dst=temp, src=data.ap([[1, 1], [1, 1]], scalar_offset=i, indirect_dim=1))
        nisa.dma_copy(dst=output.ap([[1, 1], [1, 1]], scalar_offset=i, indirect_dim=1), src=temp)

    nl.fori_loop(0, ub, body)
    return output


@pytest.mark.parametrize("n", [0, 1, 5, N])
def test_fori_loop_with_a_register_bound_runs_its_count(n):
    out = nki.simulate(copy_prefix)(DATA, np.array([[n]], np.int32))
    np.testing.assert_array_equal(out, np.where(np.arange(N) < n, DATA, 0))


def test_fori_loop_stays_one_loop_in_the_ir():
    text = copy_prefix.trace(None, (DATA, np.array([[3]], np.int32)), {}).ir.text(False)
    assert text.count("for ") == 1 and "DynamicAxis" in text
    assert "iota[pool](" in text  # the loop register, written at every trip


@nki.jit
def every_other(data):
    """fori_loop(1, N, ..., step=2) with compile-time bounds; the register is the index."""
    output = nl.ndarray((1, N), dtype=nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=output, src=nl.zeros((1, N), dtype=nl.float32, buffer=nl.sbuf))
    temp = nl.ndarray((1, 1), dtype=nl.float32, buffer=nl.sbuf)

    def body(i):
        nisa.dma_copy(dst=temp, src=data.ap([[1, 1], [1, 1]], scalar_offset=i, indirect_dim=1))
        nisa.dma_copy(dst=output.ap([[1, 1], [1, 1]], scalar_offset=i, indirect_dim=1), src=temp)

    nl.fori_loop(1, N, body, step=2)
    nl.fori_loop(3, 3, body)  # empty: the body is never traced
    return output


def test_fori_loop_with_compile_time_bounds_and_a_step():
    out = nki.simulate(every_other)(DATA)
    np.testing.assert_array_equal(out, np.where(np.arange(N) % 2 == 1, DATA, 0))


def counter(data, count_input):
    """val, acc = 0, a counter in SBUF, the constant 1 and a register holding the counter."""
    val = nl.ndarray((1, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=val, src=data)
    acc = nl.zeros((1, 1), dtype=nl.float32, buffer=nl.sbuf)
    count_sb = count_tile(count_input)
    one_sb = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.memset(dst=one_sb, value=1)
    reg = nisa.register_alloc()
    nisa.register_load(reg, count_sb)
    return val, acc, count_sb, one_sb, reg


def count_step(val, acc, count_sb, one_sb, reg):
    nisa.tensor_tensor(dst=acc, data1=acc, data2=val, op=nl.add)
    nisa.tensor_tensor(dst=count_sb, data1=count_sb, data2=one_sb, op=nl.subtract)
    nisa.register_load(reg, count_sb)


def result_of(acc):
    result = nl.ndarray((1, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=result, src=acc)
    return result


@nki.jit
def count_down(data, count_input):
    """The SDK's while_loop example: acc += val while a counter, decremented in SBUF, is nonzero."""
    val, acc, count_sb, one_sb, reg = counter(data, count_input)

    def body(r):
        count_step(val, acc, count_sb, one_sb, r)
        return r

    nl.while_loop(reg, body)
    return result_of(acc)


@pytest.mark.parametrize("count", [0, 1, 4])
def test_while_loop_checks_its_condition_before_each_trip(count):
    out = nki.simulate(count_down)(np.array([[2.5]], np.float32), np.array([[count]], np.int32))
    np.testing.assert_array_equal(out, [[2.5 * count]])


@nki.jit
def registers_round_trip(n):
    """register_alloc(int), register_move (int and register), register_store to SBUF and HBM."""
    out = nl.ndarray((1, 4), dtype=nl.int32, buffer=nl.shared_hbm)
    a = nisa.register_alloc(7)
    b = nisa.register_alloc()
    nisa.register_move(b, a)
    c = nisa.register_alloc()
    nisa.register_load(c, count_tile(n))
    d = nisa.register_alloc(0)
    nisa.register_move(d, -3)
    sb = nl.ndarray((1, 4), dtype=nl.int32, buffer=nl.sbuf)
    for k, r in enumerate((a, b, c)):
        nisa.register_store(sb[0:1, k:k + 1], r)
    nisa.dma_copy(dst=out[0:1, 0:3], src=sb[0:1, 0:3])
    nisa.register_store(out[0:1, 3:4], d)
    return out


def test_register_instructions_move_values():
    out = nki.simulate(registers_round_trip)(np.array([[42]], np.int32))
    np.testing.assert_array_equal(out, [[7, 7, 42, -3]])


@nki.jit
def dynamic_rows(data, n):
    output = nl.ndarray((1, N), dtype=nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=output, src=nl.zeros((1, N), dtype=nl.float32, buffer=nl.sbuf))
    ub = nisa.register_alloc()
    nisa.register_load(ub, count_tile(n))
    temp = nl.ndarray((1, 1), dtype=nl.float32, buffer=nl.sbuf)
    for i in nl.dynamic_range(ub):
        nisa.dma_copy(dst=temp, src=data.ap([[1, 1], [1, 1]], scalar_offset=i, indirect_dim=1))
        nisa.dma_copy(dst=output.ap([[1, 1], [1, 1]], scalar_offset=i, indirect_dim=1), src=temp)
    return output


def test_dynamic_range_is_deprecated_and_runs_like_fori_loop(monkeypatch):
    monkeypatch.setenv("NKIC_NKI_VERSION", "0.6")  # removed in 0.7 (test_nki_versions.py)
    with pytest.warns(DeprecationWarning, match="nl.dynamic_range is deprecated since nki 0.6"):
        out = nki.simulate(dynamic_rows)(DATA, np.array([[3]], np.int32))
    np.testing.assert_array_equal(out, np.where(np.arange(N) < 3, DATA, 0))


def test_a_register_loop_is_profiled_as_one_trip():
    r = nkic.profile(copy_prefix, DATA, np.array([[5]], np.int32), target="trn2")
    assert r.latency_us > 0
    assert any("known only at run time" in n for n in r.notes)


@nki.jit
def alloc_float(a):
    nisa.register_alloc(1.5)  # ERR:alloc
    return a


@nki.jit
def load_wide(a):
    r = nisa.register_alloc()
    t = nl.ndarray((2, 2), dtype=nl.int32, buffer=nl.sbuf)
    nisa.register_load(r, t)  # ERR:wide
    return a


@nki.jit
def load_into_tile(a):
    t = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.register_load(t, t)  # ERR:not_reg
    return a


@nki.jit
def zero_step(a):
    nl.fori_loop(0, 4, lambda i: None, step=0)  # ERR:step
    return a


@nki.jit
def python_arithmetic(a):
    def body(i):
        return i + 1  # ERR:arith
    nl.fori_loop(0, nisa.register_alloc(4), body)  # ERR:arith_call
    return a


@nki.jit
def python_truth(a):
    r = nisa.register_alloc(1)
    if r:  # ERR:truth
        pass
    return a


@nki.jit
def while_on_tile(a):
    t = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
    nl.while_loop(t, lambda r: r)  # ERR:while
    return a


@nki.jit
def not_a_body(a):
    nl.fori_loop(0, 4, 5)  # ERR:body
    return a


RULES = [
    (alloc_float, "alloc", "err_unexpected_type_of_operand", "'float', expected None or an int", "nisa."),
    (load_wide, "wide", "err_unsupported_args", "src is a one-element tensor ([1] or [1, 1]), got [2, 2]", "nisa."),
    (load_into_tile, "not_reg", "err_unexpected_type_of_operand", "expected a VirtualRegister", "nisa."),
    (zero_step, "step", "err_unsupported_args", "step is a positive int known at compile time, got 0", "nl."),
    (python_arithmetic, "arith", "err_unsupported_args", "Python arithmetic on it is not possible", "i "),
    (python_truth, "truth", "err_unsupported_args", "which Python cannot test", "r:"),
    (while_on_tile, "while", "err_unexpected_type_of_operand", "expected an NkiScalar or a VirtualRegister", "nl."),
    (not_a_body, "body", "err_unexpected_type_of_operand", "'nl.fori_loop body_fun': got 'int', expected a function",
     "nl."),
]


@pytest.mark.parametrize("kernel, marker, code, message, token", RULES, ids=[r[1] for r in RULES])
def test_register_misuse_is_a_diagnostic_at_the_call(kernel, marker, code, message, token):
    # The body of a runtime loop is the user's function: the loop call is a note.
    notes = [("arith_call", "nl.", "body")] if marker == "arith" else []
    check_diag(trace_error(kernel, np.zeros((1, 1), np.float32)), M, code, message, [(marker, token)], notes)


@nki.jit
def count_down_deprecated(data, count_input):
    """The 0.2-0.6 form of count_down: `while reg:`, the body reloading the register."""
    val, acc, count_sb, one_sb, reg = counter(data, count_input)
    while reg:
        count_step(val, acc, count_sb, one_sb, reg)
    return result_of(acc)


@pytest.mark.parametrize("count", [0, 3])
def test_while_on_a_register_is_deprecated_and_tested_before_each_trip(monkeypatch, count):
    monkeypatch.setenv("NKIC_NKI_VERSION", "0.6")  # removed in 0.7 (test_nki_versions.py)
    with pytest.warns(DeprecationWarning, match="`while reg:` is deprecated since nki 0.6"):
        out = nki.simulate(count_down_deprecated)(np.array([[1.5]], np.float32), np.array([[count]], np.int32))
    np.testing.assert_array_equal(out, [[1.5 * count]])
