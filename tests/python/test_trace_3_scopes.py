"""Seed 000, item 3: scopes.

A tensor created inside a deferred loop body (affine_range, sequential_range,
builtin range) or inside a predicated `if`/`elif`/`else` branch (an `if` on a
loop-variable predicate, see test_trace_2_control_flow.py) dies at the end of
that body: using it afterwards is err_local_variable_used_out_of_scope. A
static `if` (concrete condition) is not a scope: only its taken branch is
traced, and tensors made there live on after it. shared_hbm tensors may be
created only at kernel top level, a static `if` there included
(err_shared_hbm_must_in_kernel_level in a loop, a predicated branch, a helper,
a nested kernel). Every diagnostic raised while an NKI API runs names it
(e.api; str(e) contains "(in 'nl.xxx')")."""
import warnings

import numpy as np
import pytest

from neuronxcc import nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

from nki_test_util import Markers, check_diag, f32, simulate, trace_error

M = Markers(__file__)

OUT_OF_SCOPE = "Local variable '{}' is referenced outside of its parent scope"
SHARED_HBM = "shared_hbm buffer can only be created top level kernel scope"


# ---------------------------------------------------------------- out of scope

def k_if_body(a):
    out = nl.ndarray((4, 128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):
        if i < 2:
            t = nl.load(a)
        nl.store(out[i], value=t)  # ERR:if_body
    return out


def k_else_body(a):
    out = nl.ndarray((4, 128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):
        if i < 2:
            nl.store(out[i], value=nl.load(a))
        else:
            t = nl.load(a)
        u = nl.exp(t)  # ERR:else_body
        nl.store(out[i], value=u)
    return out


def k_elif_body(a):
    out = nl.ndarray((4, 128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):
        if i < 1:
            nl.store(out[i], value=nl.load(a))
        elif i < 3:
            t = nl.load(a)
        else:
            nl.store(out[i], value=nl.load(a))
        u = nl.add(t, 1.0)  # ERR:elif_body
        nl.store(out[i], value=u)
    return out


def k_nested_if_body(a):
    out = nl.ndarray((4, 128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):
        if i >= 1:
            if i < 3:
                t = nl.load(a)
            u = nl.exp(t)  # ERR:nested_if_body
            nl.store(out[i], value=u)
    return out


def k_static_inside_predicated(a):
    # A static `if` inside a predicated branch adds no scope of its own: `t`
    # lives to the end of the predicated branch, not beyond.
    out = nl.ndarray((4, 128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):
        if i < 2:
            if a.shape[0] == 128:
                t = nl.load(a)
            nl.store(out[i], value=t)
        nl.store(out[i], value=t)  # ERR:static_inside_predicated
    return out


def k_documented_example(a, b):
    # The NKI documentation's example of err_local_variable_used_out_of_scope.
    c = nl.ndarray((4, 128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):
        if i < 2:
            tmp = nl.load(a)
        else:
            tmp = nl.load(b)
        nl.store(c[i], tmp)  # ERR:documented_example
    return c


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


def load_in_if(a, i):
    if i < 2:
        t = nl.load(a)
    return nl.exp(t)  # ERR:helper_if_body


def k_helper_if_body(a):
    out = nl.ndarray((4, 128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):
        u = load_in_if(a, i)  # ERR:call_load_in_if
        nl.store(out[i], value=u)
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


def k_declared_before_predicated(a, b):
    # The fix of the documented example: one tile declared in the loop body,
    # written in place in both predicated branches.
    c = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):
        tmp = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.sbuf)
        if i < 2:
            tmp[...] = nl.load(a[i])
        else:
            tmp[...] = nl.exp(nl.load(b[i]))
        nl.store(c[i], tmp)
    return c


def k_used_inside(a):
    # Within its own body a tensor is live, also in nested blocks.
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    if a.shape[0] == 128:
        t = nl.load(a)
        if a.shape[1] == 512:
            nl.store(out, value=nl.exp(t))
    return out


def k_used_inside_predicated(a):
    out = nl.ndarray((4, 128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):
        if i < 3:
            t = nl.load(a)
            if i >= 1:
                nl.store(out[i], value=nl.exp(t))
            else:
                nl.store(out[i], value=t)
        else:
            t = nl.load(a)
            nl.store(out[i], value=nl.multiply(t, 2.0))
    return out


# ---------------------------------------------------------------- static if: not a scope

def k_static_if_body(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    if a.shape[0] == 128:
        t = nl.load(a)
    nl.store(out, value=t)
    return out


def k_static_else_body(a, flag):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    if flag:
        nl.store(out, value=nl.load(a))
    else:
        t = nl.load(a)
    u = nl.exp(t)
    nl.store(out, value=u)
    return out


def k_static_elif_body(a, mode):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    if mode == 0:
        t = nl.load(a)
    elif mode == 1:
        t = nl.exp(nl.load(a))
    else:
        t = nl.sqrt(nl.load(a))
    u = nl.add(t, 1.0)
    nl.store(out, value=u)
    return out


def k_static_nested_if_body(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    if a.shape[0] == 128:
        if a.shape[1] == 512:
            t = nl.load(a)
        u = nl.exp(t)
    nl.store(out, value=u)
    return out


def k_static_if_in_loop(a, flag):
    # A static `if` inside a loop: its tensors live to the end of the loop body.
    out = nl.ndarray((4, 128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):
        if flag:
            t = nl.load(a)
        else:
            t = nl.exp(nl.load(a))
        nl.store(out[i], value=t)
    return out


def static_load_in_if(a):
    if a.shape[0] == 128:
        t = nl.load(a)
    return nl.exp(t)


def k_static_helper_if_body(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=static_load_in_if(a))
    return out


def k_static_if_nc_version(a):
    # The pattern of public kernels: pick an allocation by target, use it after.
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    if nisa.get_nc_version() >= nisa.nc_version.gen3:
        t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    else:
        t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    t[...] = nl.load(a)
    nl.store(out, value=t)
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
    out = nl.ndarray((4, 128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):
        nl.store(out[i], value=nl.load(a))
        if i < 2:
            other = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)  # ERR:shared_hbm_if
    return out


def k_shared_hbm_else(a):
    out = nl.ndarray((4, 128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):
        if i < 2:
            nl.store(out[i], value=nl.load(a))
        else:
            other = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)  # ERR:shared_hbm_else
    return out


def k_shared_hbm_static_if_in_loop(a, flag):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.load(a))
    for i in nl.affine_range(2):
        if flag:
            other = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)  # ERR:shared_hbm_static_if_in_loop
    return out


def output_if(a, flag):
    if flag:
        return nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)  # ERR:shared_hbm_static_if_helper
    return None


def k_shared_hbm_static_if_helper(a):
    out = output_if(a, True)  # ERR:call_output_if
    nl.store(out, value=nl.load(a))
    return out


def k_shared_hbm_static_if(a, training):
    # A static `if` at the kernel's top level is the kernel level (a
    # flash-attention kernel creates its `lse` output under `if config.training:`).
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    if training:
        lse = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    nl.store(out, value=t)
    if training:
        nl.store(lse, value=nl.exp(t))
        return out, lse
    return out


def k_shared_hbm_static_if_else(a, negate):
    if negate:
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out, value=nl.negative(nl.load(a)))
    else:
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out, value=nl.load(a))
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
    "else": (k_else_body, (), [("else_body", "nl.exp"), ("else_body", "t)")], "nl.exp"),
    "elif": (k_elif_body, (), [("elif_body", "nl.add"), ("elif_body", "t, 1.0")], "nl.add"),
    "nested if": (k_nested_if_body, (), [("nested_if_body", "nl.exp"), ("nested_if_body", "t)")], "nl.exp"),
    "static if inside a predicated if": (k_static_inside_predicated, (),
                                         [("static_inside_predicated", "nl.store"),
                                          ("static_inside_predicated", "=t)", 1)], "nl.store"),
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


def test_documented_example_is_out_of_scope():
    # for i in nl.affine_range(4): if i < 2: tmp = load(a) else: tmp = load(b); store(c, tmp)
    e = trace_error(k_documented_example, f32(), f32(seed=1))
    check_diag(e, M, "err_local_variable_used_out_of_scope", "is referenced outside of its parent scope",
               [("documented_example", "nl.store"), ("documented_example", "tmp)")], api="nl.store")
    assert "[...] =" in e.hint, e.hint


def test_documented_example_names_the_python_variable():
    e = trace_error(k_documented_example, f32(), f32(seed=1))
    assert OUT_OF_SCOPE.format("tmp") in e.message, e.message


def test_out_of_scope_inside_a_helper_has_call_site_note():
    e = trace_error(k_helper_if_body, f32())
    check_diag(e, M, "err_local_variable_used_out_of_scope", OUT_OF_SCOPE.format("t"),
               [("helper_if_body", "nl.exp"), ("helper_if_body", "t)")],
               notes=[("call_load_in_if", "load_in_if(a, i)", "load_in_if")], api="nl.exp")


@pytest.mark.parametrize("flag", [True, False])
def test_declared_before_and_updated_in_place_is_fine(flag):
    a = f32()
    expected = 2.0 * (a if flag else np.exp(a))
    np.testing.assert_allclose(simulate(k_declared_before, a, flag), expected, rtol=1e-5)


def test_declared_before_predicated_branches_is_fine():
    a, b = f32((4, 128, 512), seed=1), f32((4, 128, 512), seed=2)
    np.testing.assert_allclose(simulate(k_declared_before_predicated, a, b),
                               np.concatenate([a[:2], np.exp(b[2:])]), rtol=1e-6)


def test_tensor_is_live_in_its_own_and_nested_blocks():
    a = f32()
    np.testing.assert_allclose(simulate(k_used_inside, a), np.exp(a), rtol=1e-5)


def test_tensor_is_live_in_its_own_and_nested_predicated_branches():
    a = f32()
    np.testing.assert_allclose(simulate(k_used_inside_predicated, a), np.stack([a, np.exp(a), np.exp(a), 2.0 * a]),
                               rtol=1e-6)


STATIC_CASES = {
    # kernel, extra args, expected result of a
    "if": (k_static_if_body, (), lambda a: a),
    "else": (k_static_else_body, (False,), np.exp),
    "elif": (k_static_elif_body, (1,), lambda a: np.exp(a) + 1.0),
    "final else": (k_static_elif_body, (2,), lambda a: np.sqrt(a) + 1.0),
    "nested if": (k_static_nested_if_body, (), np.exp),
    "in a loop": (k_static_if_in_loop, (False,), lambda a: np.stack([np.exp(a)] * 4)),
    "helper": (k_static_helper_if_body, (), np.exp),
    "nc_version": (k_static_if_nc_version, (), lambda a: a),
}


@pytest.mark.parametrize("case", list(STATIC_CASES))
def test_static_if_is_not_a_scope(case):
    kernel, extra, ref = STATIC_CASES[case]
    a = f32()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no shadowing warning either
        out = simulate(kernel, a, *extra)
    np.testing.assert_allclose(out, ref(a), rtol=1e-6)


SHARED_HBM_CASES = {
    "affine_range": (k_shared_hbm_affine, (), ("shared_hbm_affine", "nl.ndarray"), []),
    "sequential_range": (k_shared_hbm_sequential, (), ("shared_hbm_sequential", "nl.ndarray"), []),
    "if": (k_shared_hbm_if, (), ("shared_hbm_if", "nl.ndarray"), []),
    "else": (k_shared_hbm_else, (), ("shared_hbm_else", "nl.ndarray"), []),
    "static if in a loop": (k_shared_hbm_static_if_in_loop, (True,), ("shared_hbm_static_if_in_loop", "nl.ndarray"),
                            []),
    "static if in a helper": (k_shared_hbm_static_if_helper, (), ("shared_hbm_static_if_helper", "nl.ndarray"),
                              [("call_output_if", "output_if(a, True)", "output_if")]),
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


@pytest.mark.parametrize("training", [True, False])
def test_shared_hbm_in_a_static_if_at_kernel_level_is_fine(training):
    a = f32()
    out = simulate(k_shared_hbm_static_if, a, training)
    if training:
        np.testing.assert_array_equal(out[0], a)
        np.testing.assert_allclose(out[1], np.exp(a), rtol=1e-6)
    else:
        np.testing.assert_array_equal(out, a)


@pytest.mark.parametrize("negate", [True, False])
def test_shared_hbm_in_static_if_and_else_is_fine(negate):
    a = f32()
    np.testing.assert_array_equal(simulate(k_shared_hbm_static_if_else, a, negate), -a if negate else a)


def test_private_hbm_in_a_loop_is_fine():
    a = f32()
    np.testing.assert_allclose(simulate(k_hbm_in_loop, a), a)


# ---------------------------------------------------------------- ncc.allocation_scope

import nkic  # noqa: E402
import neuronxcc.nki.compiler as ncc  # noqa: E402


def k_allocation_scope(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    acc = nl.zeros(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    with ncc.allocation_scope():
        t = nl.load(x)
        acc[...] = nl.add(acc, t)
    nl.store(out, acc)
    return out


def k_allocation_scope_escape(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    with ncc.allocation_scope():
        t = nl.load(x)
    nl.store(out, t)  # ERR:alloc_scope_escape
    return out


def test_allocation_scope_block_runs_and_its_tensors_die_at_its_end():
    x = f32((4, 8))
    np.testing.assert_array_equal(simulate(k_allocation_scope, x), x)
    e = trace_error(k_allocation_scope_escape, x)
    check_diag(e, M, "err_local_variable_used_out_of_scope", OUT_OF_SCOPE.format("t"),
               [("alloc_scope_escape", "nl.store")], api="nl.store")


def test_allocation_scope_outside_a_kernel():
    with pytest.raises(nkic.NKIError) as info:
        with ncc.allocation_scope():
            pass
    assert info.value.code == "err_nki_api_outside_of_nki_kernel"
    assert "'ncc.allocation_scope'" in info.value.message

