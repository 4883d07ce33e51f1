"""Seed 000, item 2: static control flow (eval_if_cnd).

`if`, `elif`, conditional expressions and `while` are evaluated while tracing:
a concrete condition picks the branch and only that branch is traced (the IR
has no instruction of the branch not taken); a `while` on a concrete condition
unrolls. A tensor or ScalarPredicate condition is
err_dynamic_control_flow_not_supported, a condition derived from
nl.arange/nl.mgrid is err_control_flow_condition_depending_on_arange, and
and/or/not/bool() of a multi-element tensor is err_ambiguous_tensor_truth_value.
Each diagnostic says where the symbolic value came from and how to fix it."""
import numpy as np
import pytest

import _nkic
from neuronxcc import nki
import neuronxcc.nki.language as nl

from nki_test_util import Markers, check_diag, f32, ir_ops, simulate, trace_error, trace_ir

M = Markers(__file__)

DYNAMIC = "dynamic control-flow depending on tensor value is not supported"
ARANGE = "Control-flow depending on `nl.arange` or `nl.mgrid` is not supported"
AMBIGUOUS = "Cannot evaluate truth value of a multi-element tensor/array"


# ---------------------------------------------------------------- concrete conditions

def k_if(a, flag):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    if flag:
        nl.store(out, value=nl.exp(t))
    else:
        nl.store(out, value=nl.sqrt(t))
    return out


def k_elif(a, mode):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    if mode == "exp":
        nl.store(out, value=nl.exp(t))
    elif mode == "sqrt":
        nl.store(out, value=nl.sqrt(t))
    elif a.shape[0] == 128:
        nl.store(out, value=nl.tanh(t))
    else:
        nl.store(out, value=nl.square(t))
    return out


def k_ifexp(a, flag):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    nl.store(out, value=nl.exp(t) if flag else nl.sqrt(t))
    return out


def k_while(a, n):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    acc = nl.load(a)
    i = 0
    while i < n:
        acc[...] = nl.multiply(acc, 2.0)
        i += 1
    nl.store(out, value=acc)
    return out


def k_while_shape(a):
    # A condition on shapes and Python values is concrete too.
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    acc = nl.load(a)
    width = a.shape[1]
    while width > 128:
        acc[...] = nl.add(acc, 1.0)
        width //= 2
    nl.store(out, value=acc)
    return out


def k_none_check(a, bias=None):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    if bias is not None:
        b = nl.load(bias)
        nl.store(out, value=nl.add(t, b))
    else:
        nl.store(out, value=t)
    return out


# ---------------------------------------------------------------- symbolic conditions

def k_if_tensor(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    if t:  # ERR:if_tensor
        nl.store(out, value=t)
    return out


def k_elif_tensor(a, flag):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    if flag:
        nl.store(out, value=t)
    elif nl.greater(t, 1.0):  # ERR:elif_tensor
        nl.store(out, value=t)
    return out


def k_ifexp_tensor(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    nl.store(out, value=nl.exp(t) if t else t)  # ERR:ifexp_tensor
    return out


def k_while_tensor(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    while t:  # ERR:while_tensor
        nl.store(out, value=t)
    return out


def k_if_one_element_tensor(a):
    out = nl.ndarray((1, 1), dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a[0:1, 0:1])
    if t:  # ERR:if_one_element
        nl.store(out, value=t)
    return out


def k_if_program_id(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    if nl.program_id(0) < 2:  # ERR:if_program_id
        nl.store(out, value=nl.load(a))
    return out


def k_elif_program_id(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    if a.shape[0] == 64:
        nl.store(out, value=nl.load(a))
    elif nl.program_id(0) < 2:  # ERR:elif_program_id
        nl.store(out, value=nl.load(a))
    return out


def k_ifexp_program_id(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    scale = 2.0 if nl.program_id(0) < 2 else 3.0  # ERR:ifexp_program_id
    nl.store(out, value=nl.multiply(nl.load(a), scale))
    return out


def k_while_program_id(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    while nl.program_id(0) < 2:  # ERR:while_program_id
        nl.store(out, value=nl.load(a))
    return out


def k_chained_program_id(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    if 0 < nl.program_id(0) < 2:  # ERR:chained_program_id
        nl.store(out, value=nl.load(a))
    return out


def k_chained_concrete(a, lo, hi):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    if lo < a.shape[0] <= hi:
        nl.store(out, value=nl.exp(t))
    else:
        nl.store(out, value=nl.sqrt(t))
    return out


def k_if_loop_var(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):
        if i < 2:  # ERR:if_loop_var
            nl.store(out, value=nl.load(a))
    return out


def k_if_arange(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    if i_p < 64:  # ERR:if_arange
        nl.store(out, value=nl.load(a))
    return out


def k_if_arange_value(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    i_f = nl.arange(512)[None, :]
    if i_f:  # ERR:if_arange_value
        nl.store(out, value=nl.load(a))
    return out


def k_if_mgrid(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    g = nl.mgrid[0:128, 0:512]
    if g.x >= 256:  # ERR:if_mgrid
        nl.store(out, value=nl.load(a))
    return out


def k_ifexp_mgrid(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    i_p, i_f = nl.mgrid[0:128, 0:512]
    v = 1.0 if i_p + i_f < 100 else 2.0  # ERR:ifexp_mgrid
    nl.store(out, value=nl.multiply(nl.load(a), v))
    return out


def k_chained_arange(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    if 0 <= i_p < 64:  # ERR:chained_arange
        nl.store(out, value=nl.load(a))
    return out


def k_while_arange(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    while i_p < 64:  # ERR:while_arange
        nl.store(out, value=nl.load(a))
    return out


def k_and(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    u = t and t  # ERR:and
    nl.store(out, value=u)
    return out


def k_or(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    u = t or t  # ERR:or
    nl.store(out, value=u)
    return out


def k_not(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    u = not t  # ERR:not
    nl.store(out, value=t)
    return out


def k_bool(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    u = bool(t)  # ERR:bool
    nl.store(out, value=t)
    return out


def k_if_not(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    if not t:  # ERR:if_not
        nl.store(out, value=t)
    return out


def k_and_python_first(a, flag):
    # `flag and t` never asks for t's truth value: it returns flag or t.
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    u = flag and t
    nl.store(out, value=t)
    return out


# ---------------------------------------------------------------- concrete: only the taken branch

def test_if_traces_only_the_taken_branch():
    a = f32()
    ir_t = ir_ops(trace_ir(k_if, a, True))
    ir_f = ir_ops(trace_ir(k_if, a, False))
    assert "exp" in ir_t and "sqrt" not in ir_t
    assert "sqrt" in ir_f and "exp" not in ir_f
    np.testing.assert_allclose(simulate(k_if, a, True), np.exp(a), rtol=1e-5)
    np.testing.assert_allclose(simulate(k_if, a, False), np.sqrt(a), rtol=1e-5)


@pytest.mark.parametrize("mode, op", [("exp", "exp"), ("sqrt", "sqrt"), ("other", "tanh")])
def test_elif_traces_only_the_taken_branch(mode, op):
    ir = ir_ops(trace_ir(k_elif, f32(), mode))
    for other in {"exp", "sqrt", "tanh", "square"} - {op}:
        assert other not in ir, (other, ir)
    assert op in ir


def test_elif_final_else():
    ir = ir_ops(trace_ir(k_elif, f32((64, 512)), "other"))
    assert "square" in ir
    for other in ("exp", "sqrt", "tanh"):
        assert other not in ir


def test_conditional_expression_traces_only_the_taken_arm():
    a = f32()
    ir_t = ir_ops(trace_ir(k_ifexp, a, True))
    ir_f = ir_ops(trace_ir(k_ifexp, a, False))
    assert "exp" in ir_t and "sqrt" not in ir_t
    assert "sqrt" in ir_f and "exp" not in ir_f
    np.testing.assert_allclose(simulate(k_ifexp, a, False), np.sqrt(a), rtol=1e-5)


@pytest.mark.parametrize("n", [0, 1, 3])
def test_while_on_concrete_condition_unrolls(n):
    a = f32()
    ir = ir_ops(trace_ir(k_while, a, n))
    assert ir.count("multiply") == n, ir
    np.testing.assert_allclose(simulate(k_while, a, n), a * 2.0 ** n, rtol=1e-6)


def test_while_on_shapes_unrolls():
    a = f32()
    ir = ir_ops(trace_ir(k_while_shape, a))
    assert ir.count("add") == 2, ir  # 512 -> 256 -> 128
    np.testing.assert_allclose(simulate(k_while_shape, a), a + 2.0, rtol=1e-6)


@pytest.mark.parametrize("lo, hi, op", [(0, 128, "exp"), (128, 256, "sqrt"), (0, 64, "sqrt")])
def test_chained_comparison_of_python_values_is_concrete(lo, hi, op):
    ops = ir_ops(trace_ir(k_chained_concrete, f32(), lo, hi))
    assert op in ops and ({"exp", "sqrt"} - {op}).isdisjoint(ops), ops


def test_is_none_checks_are_concrete():
    a = f32()
    b = f32(seed=1)
    assert "add" not in ir_ops(trace_ir(k_none_check, a))
    np.testing.assert_allclose(simulate(k_none_check, a, b), a + b, rtol=1e-6)
    np.testing.assert_allclose(simulate(k_none_check, a), a, rtol=1e-6)


def test_eval_if_cnd_on_concrete_values():
    # Outside a trace eval_if_cnd is Python truth.
    assert _nkic.eval_if_cnd(1) is True
    assert _nkic.eval_if_cnd([]) is False
    assert _nkic.eval_if_cnd(np.bool_(True)) is True


# ---------------------------------------------------------------- symbolic: rejected

TENSOR_CASES = {
    "if": (k_if_tensor, (), ("if_tensor", "t:")),
    "elif": (k_elif_tensor, (False,), ("elif_tensor", "nl.greater")),
    "ifexp": (k_ifexp_tensor, (), ("ifexp_tensor", "t else")),
    "while": (k_while_tensor, (), ("while_tensor", "t:")),
    "one-element tensor": (k_if_one_element_tensor, (), ("if_one_element", "t:")),
}


@pytest.mark.parametrize("case", list(TENSOR_CASES))
def test_tensor_condition_is_dynamic_control_flow(case):
    kernel, extra, where = TENSOR_CASES[case]
    e = trace_error(kernel, f32(), *extra)
    check_diag(e, M, "err_dynamic_control_flow_not_supported", [DYNAMIC, "tensor", "device"], [where])
    # How to fix it: select with nl.where / mask= or make the value static.
    assert "nl.where" in e.hint and "mask=" in e.hint, e.hint
    assert "hint: " + e.hint in str(e)


PREDICATE_CASES = {
    "if": (k_if_program_id, ("if_program_id", "nl.program_id(0) < 2")),
    "elif": (k_elif_program_id, ("elif_program_id", "nl.program_id(0) < 2")),
    "ifexp": (k_ifexp_program_id, ("ifexp_program_id", "nl.program_id(0) < 2")),
    "while": (k_while_program_id, ("while_program_id", "nl.program_id(0) < 2")),
    "chained comparison": (k_chained_program_id, ("chained_program_id", "0 < nl.program_id(0) < 2")),
}


@pytest.mark.parametrize("case", list(PREDICATE_CASES))
def test_scalar_predicate_condition_is_dynamic_control_flow(case):
    kernel, where = PREDICATE_CASES[case]
    e = trace_error(kernel, f32(), grid=(4,))
    check_diag(e, M, "err_dynamic_control_flow_not_supported", [DYNAMIC, "program id"], [where])
    assert "ScalarPredicate" in e.message
    assert "mask=" in e.hint or "nl.where" in e.hint, e.hint


def test_program_id_comparison_is_a_scalar_predicate():
    seen = []

    @nki.dont_trace
    def keep(p):
        seen.append(p)
        return 0

    def kern(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        keep(nl.program_id(0) < 2)
        nl.store(out, value=nl.load(a))
        return out

    trace_ir(kern, f32(), grid=(4,))
    assert isinstance(seen[0], _nkic.ScalarPredicate), type(seen[0])
    assert not isinstance(seen[0], bool)


def test_loop_variable_condition_is_dynamic_control_flow():
    e = trace_error(k_if_loop_var, f32())
    check_diag(e, M, "err_dynamic_control_flow_not_supported", [DYNAMIC, "loop variable"],
               [("if_loop_var", "i < 2")])


def test_symbolic_condition_message_names_its_own_origin():
    # "where the symbolic value came from": a program-id condition is not blamed
    # on a loop variable, nor a loop-variable condition on the program id.
    pid = trace_error(k_if_program_id, f32(), grid=(4,)).message
    loop = trace_error(k_if_loop_var, f32()).message
    assert "program" in pid and "loop variable" not in pid, pid
    assert "loop variable" in loop and "program" not in loop, loop


ARANGE_CASES = {
    "if arange comparison": (k_if_arange, ("if_arange", "i_p < 64"), "nl.arange"),
    "if arange value": (k_if_arange_value, ("if_arange_value", "i_f:"), "nl.arange"),
    "if mgrid": (k_if_mgrid, ("if_mgrid", "g.x >= 256"), "nl.mgrid"),
    "ifexp mgrid": (k_ifexp_mgrid, ("ifexp_mgrid", "i_p + i_f < 100"), "nl.mgrid"),
    "while arange": (k_while_arange, ("while_arange", "i_p < 64"), "nl.arange"),
    "chained arange": (k_chained_arange, ("chained_arange", "0 <= i_p < 64"), "nl.arange"),
}


@pytest.mark.parametrize("case", list(ARANGE_CASES))
def test_arange_condition(case):
    kernel, where, origin = ARANGE_CASES[case]
    e = trace_error(kernel, f32())
    check_diag(e, M, "err_control_flow_condition_depending_on_arange", [ARANGE, origin], [where])
    assert "mask=" in e.hint, e.hint


AMBIGUOUS_CASES = {
    "and": (k_and, (), ("and", "t and t")),
    "or": (k_or, (), ("or", "t or t")),
    "not": (k_not, (), ("not", "not t")),
    "bool()": (k_bool, (), ("bool", "bool(t)")),
    "if not": (k_if_not, (), ("if_not", "not t")),
}


@pytest.mark.parametrize("case", list(AMBIGUOUS_CASES))
def test_truth_value_of_multi_element_tensor_is_ambiguous(case):
    kernel, extra, where = AMBIGUOUS_CASES[case]
    e = trace_error(kernel, f32(), *extra)
    check_diag(e, M, "err_ambiguous_tensor_truth_value", [AMBIGUOUS, "[128, 512]"], [where])
    assert isinstance(e, ValueError)
    for fix in ("&", "|", "~", "is None"):
        assert fix in e.hint, (fix, e.hint)


@pytest.mark.parametrize("flag", [False, True])
def test_short_circuit_skips_the_tensor_truth_test(flag):
    a = f32()
    np.testing.assert_allclose(simulate(k_and_python_first, a, flag), a)
