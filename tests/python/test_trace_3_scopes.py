"""Seed 000, item 3: scopes.

A tensor created inside an `if`/`elif`/`else` body or a deferred loop body
(affine_range, sequential_range, builtin range) dies at the end of that body:
using it afterwards is err_local_variable_used_out_of_scope. shared_hbm tensors
may be created only at kernel top level (err_shared_hbm_must_in_kernel_level in
a loop, an if, a helper). Every diagnostic raised while an NKI API runs names
it (e.api; str(e) contains "(in 'nl.xxx')")."""
import numpy as np
import pytest

from neuronxcc import nki
import neuronxcc.nki.language as nl

from nki_test_util import Markers, check_diag, f32, simulate, trace_error

M = Markers(__file__)

OUT_OF_SCOPE = "Local variable '{}' is referenced outside of its parent scope"
SHARED_HBM = "shared_hbm buffer can only be created top level kernel scope"


# ---------------------------------------------------------------- out of scope

def k_if_body(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    if a.shape[0] == 128:
        t = nl.load(a)
    nl.store(out, value=t)  # ERR:if_body
    return out


def k_else_body(a, flag):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    if flag:
        nl.store(out, value=nl.load(a))
    else:
        t = nl.load(a)
    u = nl.exp(t)  # ERR:else_body
    nl.store(out, value=u)
    return out


def k_elif_body(a, mode):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    if mode == 0:
        nl.store(out, value=nl.load(a))
    elif mode == 1:
        t = nl.load(a)
    else:
        nl.store(out, value=nl.load(a))
    u = nl.add(t, 1.0)  # ERR:elif_body
    nl.store(out, value=u)
    return out


def k_nested_if_body(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    if a.shape[0] == 128:
        if a.shape[1] == 512:
            t = nl.load(a)
        u = nl.exp(t)  # ERR:nested_if_body
        nl.store(out, value=u)
    return out


def k_affine_body(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(2):
        t = nl.load(a)
    nl.store(out, value=t)  # ERR:affine_body
    return out


def k_sequential_body(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.sequential_range(2):
        t = nl.load(a)
    u = nl.multiply(t, 2.0)  # ERR:sequential_body
    nl.store(out, value=u)
    return out


def k_range_body(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in range(2):
        t = nl.load(a)
    nl.store(out, value=t)  # ERR:range_body
    return out


def k_operator_out_of_scope(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(2):
        t = nl.load(a)
    u = t + t  # ERR:operator_out_of_scope
    nl.store(out, value=u)
    return out


def load_in_if(a):
    if a.shape[0] == 128:
        t = nl.load(a)
    return nl.exp(t)  # ERR:helper_if_body


def k_helper_if_body(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    u = load_in_if(a)  # ERR:call_load_in_if
    nl.store(out, value=u)
    return out


def k_declared_before(a, flag):
    # The fix: declare before the block, update in place inside it.
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    if flag:
        t[...] = nl.load(a)
    else:
        t[...] = nl.exp(nl.load(a))
    acc = nl.zeros(a.shape, dtype=nl.float32, buffer=nl.sbuf)
    for i in nl.affine_range(2):
        acc[...] = nl.add(acc, t)
    nl.store(out, value=acc)
    return out


def k_used_inside(a):
    # Within its own body a tensor is live, also in nested blocks.
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    if a.shape[0] == 128:
        t = nl.load(a)
        if a.shape[1] == 512:
            nl.store(out, value=nl.exp(t))
    return out


# ---------------------------------------------------------------- shared_hbm

def k_shared_hbm_affine(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.load(a))
    for i in nl.affine_range(2):
        tmp = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)  # ERR:shared_hbm_affine
    return out


def k_shared_hbm_sequential(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.load(a))
    for i in nl.sequential_range(3):
        tmp = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)  # ERR:shared_hbm_sequential
    return out


def k_shared_hbm_if(a):
    if a.shape[0] == 128:
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)  # ERR:shared_hbm_if
        nl.store(out, value=nl.load(a))
    return a


def k_shared_hbm_else(a, flag):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    if flag:
        nl.store(out, value=nl.load(a))
    else:
        other = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)  # ERR:shared_hbm_else
    return out


def make_output(shape, dtype):
    return nl.ndarray(shape, dtype=dtype, buffer=nl.shared_hbm)  # ERR:shared_hbm_helper


def k_shared_hbm_helper(a):
    out = make_output(a.shape, a.dtype)  # ERR:call_make_output
    nl.store(out, value=nl.load(a))
    return out


@nki.trace
def nested_output(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)  # ERR:shared_hbm_nested
    nl.store(out, value=nl.load(a))
    return out


def k_shared_hbm_nested_kernel(a):
    out = nested_output(a)  # ERR:call_nested_output
    return out


def k_shared_hbm_top_level(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    tmp = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(tmp, value=nl.load(a))
    nl.store(out, value=nl.exp(nl.load(tmp)))
    return out


def k_hbm_in_loop(a):
    # Only shared_hbm is restricted; private HBM scratch may live in a loop.
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(2):
        tmp = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.hbm)
        nl.store(tmp, value=nl.load(a))
    nl.store(out, value=nl.load(a))
    return out


# ---------------------------------------------------------------- tests

SCOPE_CASES = {
    # kernel, extra args, locations, api in flight
    "if": (k_if_body, (), [("if_body", "nl.store"), ("if_body", "=t)", 1)], "nl.store"),
    "else": (k_else_body, (False,), [("else_body", "nl.exp"), ("else_body", "t)")], "nl.exp"),
    "elif": (k_elif_body, (1,), [("elif_body", "nl.add"), ("elif_body", "t, 1.0")], "nl.add"),
    "nested if": (k_nested_if_body, (), [("nested_if_body", "nl.exp"), ("nested_if_body", "t)")], "nl.exp"),
    "affine_range": (k_affine_body, (), [("affine_body", "nl.store"), ("affine_body", "=t)", 1)], "nl.store"),
    "sequential_range": (k_sequential_body, (), [("sequential_body", "nl.multiply"),
                                                 ("sequential_body", "t, 2.0")], "nl.multiply"),
    "builtin range": (k_range_body, (), [("range_body", "nl.store"), ("range_body", "=t)", 1)], "nl.store"),
    "operator": (k_operator_out_of_scope, (), [("operator_out_of_scope", "t + t")], "nl.add"),
}


@pytest.mark.parametrize("case", list(SCOPE_CASES))
def test_local_variable_used_out_of_scope(case):
    kernel, extra, locs, api = SCOPE_CASES[case]
    e = trace_error(kernel, f32(), *extra)
    check_diag(e, M, "err_local_variable_used_out_of_scope", OUT_OF_SCOPE.format("t"), locs, api=api)
    assert "t[...]" in e.hint or "[...] =" in e.hint, e.hint


def test_out_of_scope_inside_a_helper_has_call_site_note():
    e = trace_error(k_helper_if_body, f32())
    check_diag(e, M, "err_local_variable_used_out_of_scope", OUT_OF_SCOPE.format("t"),
               [("helper_if_body", "nl.exp"), ("helper_if_body", "t)")],
               notes=[("call_load_in_if", "load_in_if(a)", "load_in_if")], api="nl.exp")


@pytest.mark.parametrize("flag", [True, False])
def test_declared_before_and_updated_in_place_is_fine(flag):
    a = f32()
    expected = 2.0 * (a if flag else np.exp(a))
    np.testing.assert_allclose(simulate(k_declared_before, a, flag), expected, rtol=1e-5)


def test_tensor_is_live_in_its_own_and_nested_blocks():
    a = f32()
    np.testing.assert_allclose(simulate(k_used_inside, a), np.exp(a), rtol=1e-5)


SHARED_HBM_CASES = {
    "affine_range": (k_shared_hbm_affine, (), ("shared_hbm_affine", "nl.ndarray"), []),
    "sequential_range": (k_shared_hbm_sequential, (), ("shared_hbm_sequential", "nl.ndarray"), []),
    "if": (k_shared_hbm_if, (), ("shared_hbm_if", "nl.ndarray"), []),
    "else": (k_shared_hbm_else, (False,), ("shared_hbm_else", "nl.ndarray"), []),
    "helper": (k_shared_hbm_helper, (), ("shared_hbm_helper", "nl.ndarray"),
               [("call_make_output", "make_output(a.shape, a.dtype)", "make_output")]),
    "nested kernel": (k_shared_hbm_nested_kernel, (), ("shared_hbm_nested", "nl.ndarray"),
                      [("call_nested_output", "nested_output(a)", "nested_output")]),
}


@pytest.mark.parametrize("case", list(SHARED_HBM_CASES))
def test_shared_hbm_only_at_kernel_level(case):
    kernel, extra, where, notes = SHARED_HBM_CASES[case]
    e = trace_error(kernel, f32(), *extra)
    check_diag(e, M, "err_shared_hbm_must_in_kernel_level", SHARED_HBM, [where], notes=notes, api="nl.ndarray")


def test_shared_hbm_at_kernel_level_is_fine():
    a = f32()
    np.testing.assert_allclose(simulate(k_shared_hbm_top_level, a), np.exp(a), rtol=1e-5)


def test_private_hbm_in_a_loop_is_fine():
    a = f32()
    np.testing.assert_allclose(simulate(k_hbm_in_loop, a), a)
