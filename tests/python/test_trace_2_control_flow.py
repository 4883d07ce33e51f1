"""Seed 000, item 2: static control flow (eval_if_cnd) and predicated `if`.

`if`, `elif`, conditional expressions and `while` on a concrete condition are
evaluated while tracing: the condition picks the branch and only that branch is
traced (the IR has no instruction of the branch not taken); a `while` on a
concrete condition unrolls. An `if`/`elif` whose condition is a scalar
predicate over loop variables only (`if i < 2:` in nl.affine_range) is a
predicated scope: both branches are traced once, every instruction of the
then-branch carries the predicate and every instruction of the else-branch its
negation (extra mask constraints on the loop variable). The else-branch of a
compound predicate (a disjunction once negated) is
err_unsupported_expression_in_mask. A tensor or program-id condition is
err_dynamic_control_flow_not_supported, and so is a loop-variable predicate in
a `while` or a conditional expression; a condition derived from
nl.arange/nl.mgrid is err_control_flow_condition_depending_on_arange, and
and/or/not/bool() of a multi-element tensor is err_ambiguous_tensor_truth_value.
Each diagnostic says where the symbolic value came from and how to fix it."""
import traceback

import numpy as np
import pytest

import _nkic
import nkic
from neuronxcc import nki
import neuronxcc.nki.language as nl

from nki_test_util import Markers, check_diag, f32, ir_op, ir_ops, simulate, trace_error, trace_ir

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


def k_ifexp_loop_var(a):
    out = nl.ndarray((4, 128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):
        scale = 2.0 if i < 2 else 3.0  # ERR:ifexp_loop_var
        nl.store(out[i], value=nl.multiply(nl.load(a), scale))
    return out


def k_while_loop_var(a):
    out = nl.ndarray((4, 128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):
        while i < 2:  # ERR:while_loop_var
            nl.store(out[i], value=nl.load(a))
    return out


def k_if_loop_var_and_program_id(a):
    out = nl.ndarray((4, 128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):
        if i < nl.program_id(0):  # ERR:if_loop_var_and_program_id
            nl.store(out[i], value=nl.load(a))
    return out


def k_if_program_id_in_loop(a):
    out = nl.ndarray((4, 128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):
        if nl.program_id(0) < 2:  # ERR:if_program_id_in_loop
            nl.store(out[i], value=nl.load(a))
    return out


def k_if_arange_and_loop_var(a):
    out = nl.ndarray((4, 128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    for i in nl.affine_range(4):
        if i_p + i < 64:  # ERR:if_arange_and_loop_var
            nl.store(out[i], value=nl.load(a))
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


def k_if_numpy_array(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    rows = np.zeros((2, 2)) % 128
    if rows == 0:  # ERR:if_numpy
        nl.store(out, value=nl.load(a))
    return out


def k_numpy_array_and(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    rows = np.zeros((2, 2)) % 128
    assert rows == 0 and a.shape[0] == 128  # ERR:numpy_and
    nl.store(out, value=nl.load(a))
    return out


def k_numpy_array_or(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    rows = np.ones((2, 2))
    assert rows or a.shape[0] == 128  # ERR:numpy_or
    nl.store(out, value=nl.load(a))
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


LOOP_VAR_CASES = {
    # An `if` on a loop variable is predicated (see below); a conditional
    # expression or a `while` still needs a bool at trace time.
    "while": (k_while_loop_var, ("while_loop_var", "i < 2")),
}


@pytest.mark.parametrize("case", list(LOOP_VAR_CASES))
def test_loop_variable_condition_outside_if_is_dynamic_control_flow(case):
    kernel, where = LOOP_VAR_CASES[case]
    e = trace_error(kernel, f32())
    check_diag(e, M, "err_dynamic_control_flow_not_supported", [DYNAMIC, "loop variable", "ScalarPredicate"],
               [where])
    assert "mask=" in e.hint or "nl.where" in e.hint, e.hint


@pytest.mark.parametrize("kernel, where", [
    (k_if_loop_var_and_program_id, ("if_loop_var_and_program_id", "i < nl.program_id(0)")),
    (k_if_program_id_in_loop, ("if_program_id_in_loop", "nl.program_id(0) < 2")),
], ids=["loop variable and program id", "program id inside a loop"])
def test_if_on_a_program_id_is_not_predicated(kernel, where):
    # Only predicates over loop variables alone become predicated scopes.
    e = trace_error(kernel, f32(), grid=(4,))
    check_diag(e, M, "err_dynamic_control_flow_not_supported", [DYNAMIC, "program id", "ScalarPredicate"],
               [where])


def test_if_on_tile_indices_and_a_loop_variable_is_an_arange_condition():
    e = trace_error(k_if_arange_and_loop_var, f32())
    check_diag(e, M, "err_control_flow_condition_depending_on_arange", [ARANGE], [("if_arange_and_loop_var",
                                                                                   "i_p + i < 64")])


@pytest.mark.parametrize("kernel,grid", [(k_ifexp_loop_var, None), (k_ifexp_program_id, (4,))])
def test_a_conditional_expression_on_a_predicate_takes_its_first_branch(kernel, grid):
    # NKI's tracer finds a predicate object true outside `if` statements: the first
    # branch, for every iteration and program, with a warning at the user's line.
    a = f32()
    with pytest.warns(UserWarning, match="NKI takes its first branch for every iteration") as seen:
        got = simulate(kernel, a, grid=grid)
    marker = "ifexp_loop_var" if grid is None else "ifexp_program_id"
    assert seen[0].lineno == M.line(marker)
    want = np.stack([2 * a] * 4) if grid is None else 2 * a
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_symbolic_condition_message_names_its_own_origin():
    # "where the symbolic value came from": a program-id condition is not blamed
    # on a loop variable, nor a loop-variable condition on the program id.
    pid = trace_error(k_if_program_id, f32(), grid=(4,)).message
    loop = trace_error(k_while_loop_var, f32()).message
    both = trace_error(k_if_loop_var_and_program_id, f32(), grid=(4,)).message
    assert "program" in pid and "loop variable" not in pid, pid
    assert "loop variable" in loop and "program" not in loop, loop
    assert "loop variable" in both and "program id" in both, both


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


NUMPY_AMBIGUOUS_CASES = {
    "if": (k_if_numpy_array, ("if_numpy", "rows == 0")),
    "and": (k_numpy_array_and, ("numpy_and", "rows == 0 and")),
    "or": (k_numpy_array_or, ("numpy_or", "rows or")),
}


@pytest.mark.parametrize("case", list(NUMPY_AMBIGUOUS_CASES))
def test_truth_value_of_multi_element_numpy_array_is_ambiguous_at_the_users_line(case):
    # Python raises its ValueError at the condition; nkic's rewritten if/and/or report it there.
    kernel, where = NUMPY_AMBIGUOUS_CASES[case]
    e = trace_error(kernel, f32())
    check_diag(e, M, "err_ambiguous_tensor_truth_value", [AMBIGUOUS + " (a numpy array of shape [2, 2])"], [where])
    assert e.api == "" and "(in '" not in str(e), str(e)


class _NoTruth:
    def __bool__(self):
        raise ValueError("no truth here")  # ERR:no_truth


def k_and_of_a_value_without_truth(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    assert _NoTruth() and True
    nl.store(out, value=nl.load(a))
    return out


def test_a_values_own_truth_error_is_raised_from_its_own_code():
    e = trace_error(k_and_of_a_value_without_truth, f32(), exc=ValueError)
    assert str(e) == "no truth here"
    last = traceback.extract_tb(e.__traceback__)[-1]
    assert (last.filename, last.lineno) == (__file__, M.line("no_truth")), last


def test_a_tensor_condition_names_no_api_call():
    # The condition is Python's construct: the nl.load before it is not "in flight".
    e = trace_error(k_if_not, f32())
    assert e.api == "" and "(in '" not in str(e), str(e)
    assert isinstance(e, ValueError)
    for fix in ("&", "|", "~", "is None"):
        assert fix in e.hint, (fix, e.hint)


@pytest.mark.parametrize("flag", [False, True])
def test_short_circuit_skips_the_tensor_truth_test(flag):
    a = f32()
    np.testing.assert_allclose(simulate(k_and_python_first, a, flag), a)


# ---------------------------------------------------------------- predicated if (loop-variable predicates)
#
# `if` on a scalar predicate over loop variables: both branches are traced once,
# the then-branch predicated on the condition, the else-branch on its negation.

MASK = "NKI mask expressions must be affine expressions of static loop indices"
TRACED = []  # which branch bodies Python ran while tracing


def k_pred_if_else(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):
        if i < 2:
            TRACED.append("then")
            nl.store(out[i], value=nl.load(a[i]))
        else:
            TRACED.append("else")
            nl.store(out[i], value=nl.load(b[i]))
    return out


def k_pred_if_only(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):
        nl.store(out[i], value=nl.load(b[i]))
        if i >= 1:
            nl.store(out[i], value=nl.exp(nl.load(a[i])))
    return out


def k_pred_nested(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):
        if i >= 1:
            if i < 3:
                nl.store(out[i], value=nl.load(a[i]))
            else:
                nl.store(out[i], value=nl.load(b[i]))
        else:
            nl.store(out[i], value=nl.exp(nl.load(a[i])))
    return out


def k_pred_elif(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):
        if i < 1:
            nl.store(out[i], value=nl.load(a[i]))
        elif i < 3:
            nl.store(out[i], value=nl.load(b[i]))
        else:
            nl.store(out[i], value=nl.exp(nl.load(b[i])))
    return out


def k_pred_eq(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):
        nl.store(out[i], value=nl.load(b[i]))
        if i == 2:
            nl.store(out[i], value=nl.load(a[i]))
    return out


def k_pred_compound_then(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):
        nl.store(out[i], value=nl.load(b[i]))
        if (i >= 1) & (i < 3):
            nl.store(out[i], value=nl.load(a[i]))
    return out


def k_pred_chained_then(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):
        nl.store(out[i], value=nl.load(b[i]))
        if 1 <= i < 3:
            nl.store(out[i], value=nl.load(a[i]))
    return out


def k_pred_inner_loop(a, b):
    # A predicate on the outer variable reaches the inner loop's instructions,
    # and an inner `if` may compare both variables.
    out = nl.ndarray((4, 4, 128, 64), dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):
        if i < 2:
            for j in nl.affine_range(4):
                nl.store(out[i, j], value=nl.load(a[j]))
        else:
            for j in nl.affine_range(4):
                if j >= i:
                    nl.store(out[i, j], value=nl.load(b[j]))
                else:
                    nl.store(out[i, j], value=nl.load(a[i]))
    return out


def k_pred_sequential(a, b):
    out = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.shared_hbm)
    acc = nl.zeros((128, 64), dtype=nl.float32)
    for i in nl.sequential_range(4):
        if i > 0:
            acc[...] = nl.add(acc, nl.load(a[i]))
        else:
            acc[...] = nl.load(b[i])
    nl.store(out, value=acc)
    return out


def k_pred_own_mask(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(64)[None, :]
    for i in nl.affine_range(4):
        nl.store(out[i], value=nl.load(b[i]))
        if i < 2:
            nl.store(out[i, i_p, i_f], value=nl.load(a[i, i_p, i_f]), mask=(i_p < 64))
    return out


def k_pred_bounds(a, b):
    # a[i + 1] is out of bounds for i = 3 only, which the predicate excludes.
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):
        if i < 3:
            nl.store(out[i], value=nl.load(a[i + 1]))
        else:
            nl.store(out[i], value=nl.load(b[0]))
    return out


def k_unpredicated_bounds(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):
        nl.store(out[i], value=nl.load(a[i + 1]))  # ERR:unpredicated_bounds
    return out


def k_pred_in_grid(a, b):
    # A program id may index the data; only the condition must not use it.
    out = nl.ndarray((2, 4, 128, 64), dtype=a.dtype, buffer=nl.shared_hbm)
    p = nl.program_id(0)
    for i in nl.affine_range(4):
        if i < 2:
            nl.store(out[p, i], value=nl.load(a[i]))
        else:
            nl.store(out[p, i], value=nl.load(b[i]))
    return out


def k_static_range_if(a, b):
    # A static_range variable is an int: the `if` is static, one branch per iteration.
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.static_range(4):
        if i < 2:
            nl.store(out[i], value=nl.load(a[i]))
        else:
            nl.store(out[i], value=nl.exp(nl.load(b[i])))
    return out


def k_pred_compound_else(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):
        if (i >= 1) & (i < 3):  # ERR:pred_compound_else
            nl.store(out[i], value=nl.load(a[i]))
        else:
            nl.store(out[i], value=nl.load(b[i]))
    return out


def k_pred_chained_else(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):
        if 1 <= i < 3:  # ERR:pred_chained_else
            nl.store(out[i], value=nl.load(a[i]))
        else:
            nl.store(out[i], value=nl.load(b[i]))
    return out


def k_pred_compound_elif(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):
        if i < 1:
            nl.store(out[i], value=nl.load(b[i]))
        elif (i >= 1) & (i < 3):  # ERR:pred_compound_elif
            nl.store(out[i], value=nl.load(a[i]))
        else:
            nl.store(out[i], value=nl.load(b[i]))
    return out


def k_pred_eq_else(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):
        if i == 2:  # ERR:pred_eq_else
            nl.store(out[i], value=nl.load(a[i]))
        else:
            nl.store(out[i], value=nl.load(b[i]))
    return out


def k_pred_eq_first_else(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):
        if i == 0:
            nl.store(out[i], value=nl.load(a[i]))
        else:
            nl.store(out[i], value=nl.load(b[i]))
        if i == 3:
            nl.store(out[i, 0:1, 0:1], value=-1.0)
        else:
            nl.store(out[i, 0:1, 0:1], value=-2.0)
    return out


def test_else_of_equality_with_the_first_or_last_loop_value_is_a_bound():
    """`i != first` is `i >= first + 1` and `i != last` is `i <= last - 1` over the loop's range."""
    a, b = ab()
    out = simulate(k_pred_eq_first_else, a, b)
    expected = np.concatenate([a[:1], b[1:]])
    expected[:3, 0, 0] = -2.0
    expected[3, 0, 0] = -1.0
    np.testing.assert_array_equal(out, expected)


def ab(shape=(4, 128, 64)):
    return f32(shape, seed=1), f32(shape, seed=2)


def loop_instructions(ir):
    """(op, mask) of every instruction of the IR text; mask is None without one."""
    found = []
    for line in ir.splitlines():
        line = line.strip()
        if line.startswith(("kernel ", "tensor ", "for ")) or " = " not in line:
            continue
        op = ir_op(line.split(" = ", 1)[1])
        mask = line.split(" mask=(", 1)[1].rsplit(")", 1)[0] if " mask=(" in line else None
        found.append((op, mask))
    return found


def test_predicated_if_runs_each_branch_where_its_condition_holds():
    a, b = ab()
    np.testing.assert_array_equal(simulate(k_pred_if_else, a, b), np.concatenate([a[:2], b[2:]]))


def test_predicated_if_traces_both_branches_once():
    a, b = ab()
    TRACED.clear()
    trace_ir(k_pred_if_else, a, b)
    assert TRACED == ["then", "else"]


def test_predicated_if_ir_has_both_branches_with_complementary_masks():
    a, b = ab()
    assert loop_instructions(trace_ir(k_pred_if_else, a, b)) == [
        ("load", "i <= 1"), ("store", "i <= 1"),     # then: i < 2
        ("load", "i >= 2"), ("store", "i >= 2"),     # else: not (i < 2)
    ]


def test_predicated_if_without_else():
    a, b = ab()
    assert loop_instructions(trace_ir(k_pred_if_only, a, b)) == [
        ("load", None), ("store", None), ("load", "i >= 1"), ("exp", "i >= 1"), ("store", "i >= 1")]
    np.testing.assert_allclose(simulate(k_pred_if_only, a, b), np.concatenate([b[:1], np.exp(a[1:])]),
                               rtol=1e-6)


def test_nested_predicated_ifs_combine_their_constraints():
    a, b = ab()
    assert loop_instructions(trace_ir(k_pred_nested, a, b)) == [
        ("load", "i >= 1 & i <= 2"), ("store", "i >= 1 & i <= 2"),
        ("load", "i >= 1 & i >= 3"), ("store", "i >= 1 & i >= 3"),
        ("load", "i <= 0"), ("exp", "i <= 0"), ("store", "i <= 0"),
    ]
    np.testing.assert_allclose(simulate(k_pred_nested, a, b),
                               np.concatenate([np.exp(a[:1]), a[1:3], b[3:]]), rtol=1e-6)


def test_predicated_elif_chain():
    a, b = ab()
    masks = [m for _, m in loop_instructions(trace_ir(k_pred_elif, a, b))]
    assert masks == ["i <= 0"] * 2 + ["i >= 1 & i <= 2"] * 2 + ["i >= 1 & i >= 3"] * 3
    np.testing.assert_allclose(simulate(k_pred_elif, a, b),
                               np.concatenate([a[:1], b[1:3], np.exp(b[3:])]), rtol=1e-6)


def test_predicated_if_on_an_equality():
    a, b = ab()
    assert loop_instructions(trace_ir(k_pred_eq, a, b))[2:] == [("load", "i == 2"), ("store", "i == 2")]
    np.testing.assert_array_equal(simulate(k_pred_eq, a, b), np.concatenate([b[:2], a[2:3], b[3:]]))


@pytest.mark.parametrize("kernel", [k_pred_compound_then, k_pred_chained_then], ids=["&", "chained comparison"])
def test_compound_predicate_without_else(kernel):
    a, b = ab()
    assert loop_instructions(trace_ir(kernel, a, b))[2:] == [("load", "i >= 1 & i <= 2"),
                                                             ("store", "i >= 1 & i <= 2")]
    np.testing.assert_array_equal(simulate(kernel, a, b), np.concatenate([b[:1], a[1:3], b[3:]]))


def test_predicate_reaches_inner_loops_and_may_compare_loop_variables():
    a, b = ab()
    ir = trace_ir(k_pred_inner_loop, a, b)
    masks = [m for _, m in loop_instructions(ir)]
    assert masks[:2] == ["i <= 1"] * 2
    assert all(m.startswith("i >= 2 & ") for m in masks[2:]), masks
    ref = np.empty((4, 4, 128, 64), np.float32)
    for i in range(4):
        for j in range(4):
            ref[i, j] = a[j] if i < 2 else (b[j] if j >= i else a[i])
    np.testing.assert_array_equal(simulate(k_pred_inner_loop, a, b), ref)


def test_predicated_if_in_a_sequential_loop():
    a, b = ab()
    np.testing.assert_allclose(simulate(k_pred_sequential, a, b), b[0] + a[1:].sum(axis=0), rtol=1e-6)


def test_predicate_and_an_instruction_mask_combine():
    a, b = ab()
    assert loop_instructions(trace_ir(k_pred_own_mask, a, b))[3] == ("store", "i0 <= 63 & i <= 1")
    ref = b.copy()
    ref[:2, :64] = a[:2, :64]
    np.testing.assert_array_equal(simulate(k_pred_own_mask, a, b), ref)


def test_static_bounds_check_sees_the_predicate():
    a, b = ab()
    np.testing.assert_array_equal(simulate(k_pred_bounds, a, b), np.concatenate([a[1:], b[:1]]))
    # Without the `if` the same access is out of bounds.
    e = trace_error(k_unpredicated_bounds, a, b)
    check_diag(e, M, "err_tensor_access_out_of_bound", "index range [1, 4]",
               [("unpredicated_bounds", "nl.load"), ("unpredicated_bounds", "a[i + 1]")])


def test_predicated_if_in_an_spmd_kernel():
    a, b = ab()
    out = simulate(k_pred_in_grid, a, b, grid=(2,))
    for p in range(2):
        np.testing.assert_array_equal(out[p], np.concatenate([a[:2], b[2:]]))


def test_if_on_a_static_range_variable_stays_static():
    a, b = ab()
    ir = trace_ir(k_static_range_if, a, b)
    assert "mask=" not in ir, ir
    assert ir_ops(ir) == ["load", "store"] * 2 + ["load", "exp", "store"] * 2
    np.testing.assert_allclose(simulate(k_static_range_if, a, b), np.concatenate([a[:2], np.exp(b[2:])]),
                               rtol=1e-6)


def k_pred_single_writer(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):
        nl.store(out[i], value=nl.load(b[i]))
    for i in nl.affine_range(4):
        if i == 0:
            nl.store(out[0], value=nl.load(a[i]))  # one iteration writes out[0]
    return out


def k_pred_two_writers(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):
        nl.store(out[i], value=nl.load(b[i]))
    for i in nl.affine_range(4):
        if i < 2:
            nl.store(out[0], value=nl.load(a[i]))  # two iterations write out[0]
    return out


def test_race_check_sees_the_predicate():
    a, b = ab()
    out = nki.simulate_kernel(nki.jit(k_pred_single_writer), a, b, check_races=True)
    np.testing.assert_array_equal(out, np.concatenate([a[:1], b[1:]]))
    with pytest.raises(nkic.NKIError) as info:
        nki.simulate_kernel(nki.jit(k_pred_two_writers), a, b, check_races=True)
    assert info.value.code == "err_unexpected_output_dependencies"


UNEXPRESSIBLE_ELSE_CASES = {
    "&": (k_pred_compound_else, [("pred_compound_else", "if"), ("pred_compound_else", "(i >= 1) & (i < 3)")],
          "else branch of a compound loop-variable condition"),
    "chained comparison": (k_pred_chained_else, [("pred_chained_else", "if"), ("pred_chained_else", "1 <= i < 3")],
                           "else branch of a compound loop-variable condition"),
    "elif": (k_pred_compound_elif, [("pred_compound_elif", "elif"),
                                    ("pred_compound_elif", "(i >= 1) & (i < 3)")],
             "else branch of a compound loop-variable condition"),
    # The complement of an equality is a `!=`, which no mask can express either.
    "==": (k_pred_eq_else, [("pred_eq_else", "if"), ("pred_eq_else", "i == 2")], "'not equal'"),
}


@pytest.mark.parametrize("case", list(UNEXPRESSIBLE_ELSE_CASES))
def test_else_of_a_predicate_whose_negation_is_no_conjunction(case):
    kernel, locs, why = UNEXPRESSIBLE_ELSE_CASES[case]
    e = trace_error(kernel, *ab())
    check_diag(e, M, "err_unsupported_expression_in_mask", [MASK, why], locs)


# ---------------------------------------------------------------- known bugs (see the reasons)

def k_pred_non_affine(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):
        if i * i == 1:  # ERR:pred_non_affine
            nl.store(out[i], value=nl.load(a[i]))
        else:
            nl.store(out[i], value=nl.exp(nl.load(a[i])))
    return out


def k_pred_quasi_affine(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):
        if i % 2 == 1:
            nl.store(out[i], value=nl.load(a[i]))
        else:
            nl.store(out[i], value=nl.exp(nl.load(a[i])))
    return out


def pick(t, i):
    if i < 2:
        return nl.exp(t)
    else:
        return nl.negative(t)


def k_pred_return(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):
        nl.store(out[i], value=pick(nl.load(a[i]), i))
    return out


def test_non_affine_loop_variable_condition_is_rejected():
    e = trace_error(k_pred_non_affine, *ab())
    assert e.code in ("err_dynamic_control_flow_not_supported", "err_unsupported_expression_in_mask"), e.code
    assert (e.line, e.col) == M.loc("pred_non_affine", "i * i == 1")


def test_quasi_affine_loop_variable_condition_is_a_predicated_branch():
    a, b = ab()
    out = nki.simulate_kernel(nki.jit(k_pred_quasi_affine), a, b)
    odd = (np.arange(a.shape[0]) % 2 == 1).reshape((-1,) + (1,) * (a.ndim - 1))
    np.testing.assert_allclose(out, np.where(odd, a, np.exp(a)), rtol=1e-6)


def test_return_inside_a_predicated_branch_is_rejected():
    e = trace_error(k_pred_return, *ab())
    assert e.code == "err_return_in_predicated_branch", e.code
    assert "both branches are traced" in e.message
