"""Seed 000, item 1: the call dispatcher TraceContext.call.

Gates, in this order: nki_func marker -> builder; __nki_dont_trace__ -> run
concretely; a nested traced kernel -> traced into the same kernel; the library
gate (defining module is, or is under, numpy / math / the NKI surface), applied
only to plain functions and builtins; everything else is inlined and traced in
a new FunctionScope. Then the return-consistency assert.

How "inlined" is told apart from "run concretely": an inlined body is rewritten,
so `if t:` on a tensor goes through eval_if_cnd (err_dynamic_control_flow_not_supported,
reported at the helper's line with a call-site note); a body run as plain
Python calls t.__bool__ (err_ambiguous_tensor_truth_value). The dont_trace
`probe` also records the scope chain and the NKI API in flight."""
import math
import sys
import types

import numpy as np
import pytest

import _nkic
import nkic
from nkic import _rewrite
from neuronxcc import nki
import neuronxcc.nki.language as nl

from nki_test_util import Markers, check_diag, f32, ir_ops, simulate, trace_error, trace_ir

M = Markers(__file__)

# Library modules the gate must recognise by their dotted name.
FAKE_NUMPY = sys.modules.setdefault("numpy.fake", types.ModuleType("numpy.fake"))
FAKE_MATH = sys.modules.setdefault("math.fake", types.ModuleType("math.fake"))
NOT_NUMPY = sys.modules.setdefault("numpyish", types.ModuleType("numpyish"))
FAKE_NKI = sys.modules.setdefault("neuronxcc.nki.fake", types.ModuleType("neuronxcc.nki.fake"))
FAKE_PENGUIN = sys.modules.setdefault("neuronxcc.starfish.penguin.fake",
                                      types.ModuleType("neuronxcc.starfish.penguin.fake"))

RECORD = []


@nki.dont_trace
def probe(tag, *values):
    """Runs as Python: what the tracer looks like from where it is called."""
    RECORD.append((tag, tuple(_nkic.scope_kinds()), _nkic.cur_api()) + values)
    return 0


def recorded(tag):
    hits = [r for r in RECORD if r[0] == tag]
    assert hits, (tag, RECORD)
    return hits[-1]


@pytest.fixture(autouse=True)
def _clear_record():
    RECORD.clear()
    yield
    RECORD.clear()


# ---------------------------------------------------------------- callees

def user_helper(t):
    probe("user_helper")
    return nl.exp(t)


def ceil(x):  # named like math.ceil, but defined here: a user helper
    probe("user_ceil")
    return x + 1


def truthy_helper(t):
    if t:  # ERR:truthy_helper
        pass
    return 0


def lib_function(t):
    probe("lib_function")
    return 7


lib_function.__module__ = "numpy.fake"
FAKE_NUMPY.lib_function = lib_function


def lib_truthy(t):
    if t:  # ERR:lib_truthy
        pass
    return 0


lib_truthy.__module__ = "numpy.fake"
FAKE_NUMPY.lib_truthy = lib_truthy


def math_function(x):
    return x


math_function.__module__ = "math.fake"


def nki_surface_function(x):
    return x


nki_surface_function.__module__ = "neuronxcc.nki.fake"


def penguin_function(x):
    return x


penguin_function.__module__ = "neuronxcc.starfish.penguin.fake"


def numpyish_function(x):
    return x


numpyish_function.__module__ = "numpyish"


def lib_conjure():
    """A library function returning nki data from no nki data: not checked."""
    return nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)


lib_conjure.__module__ = "numpy.fake"


class LibCallable:
    """A callable object whose class lives in an excluded module: inlined."""
    __module__ = "numpy.fake"

    def __call__(self, t):
        if t:  # ERR:lib_callable_if
            pass
        return t


FAKE_NUMPY.LibCallable = LibCallable


class LibPlainCallable:
    __module__ = "numpy.fake"

    def __call__(self, t):
        probe("lib_callable")
        return t


class MathCallable:
    __module__ = "math"

    def __call__(self, t):
        return t


class UserObject:
    def __init__(self, scale):
        self.scale = scale

    def __call__(self, t):
        probe("user_call")
        return nl.multiply(t, self.scale)

    def apply(self, t):
        probe("user_method")
        return nl.add(t, self.scale)

    def truthy(self, t):
        if t:  # ERR:method_if
            pass
        return t


class LibObject:
    __module__ = "numpy.fake"

    def apply(self, t):
        probe("lib_method")
        return nl.exp(t)


class ConcreteClass:
    """Classes run concretely: __init__ is plain Python."""

    def __init__(self, t):
        probe("class_init")
        self.ok = t is not None
        if t:  # ERR:class_init_if
            pass


@nki.dont_trace
def dt_bare(t):
    probe("dt_bare")
    return t.shape[0]


@nki.dont_trace()
def dt_paren(t):
    probe("dt_paren")
    return t.shape[1]


@nki.dont_trace
def dt_truthy(t):
    if t:  # ERR:dt_truthy
        pass
    return 0


@nki.dont_trace
def dt_conjure():
    return nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)


def op_marked_dont_trace(x):
    """An NKI op that is also tagged dont_trace: the builder gate wins."""
    probe("op_marked")
    return nl.exp(x)


op_marked_dont_trace.nki_func = "nl.op_marked"
op_marked_dont_trace.__nki_dont_trace__ = True


def op_marked_bad_alloc(x):
    return nl.ndarray((256, 512), dtype=nl.float32, buffer=nl.sbuf)


op_marked_bad_alloc.nki_func = "nl.op_marked_bad_alloc"
op_marked_bad_alloc.__nki_dont_trace__ = True

_NS = {"probe": probe}
exec("def no_source(t):\n    if t:\n        pass\n    return 5\n", _NS)
no_source = _NS["no_source"]


@nki.trace
def nested_trace(src, dst):
    probe("nested_trace")
    dst[...] = nl.exp(src)


@nki.jit(mode="trace")
def nested_jit_trace(src, dst):
    dst[...] = nl.sqrt(src)


@nki.jit
def nested_jit(src, dst):
    dst[...] = nl.multiply(src, 3.0)


@nki.trace
def nested_returning(src):
    return nl.add(src, 1.0)


def make_tile():
    return nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)


def make_mask():
    i_p = nl.arange(128)[:, None]
    return i_p < 64


def shape_of(t):
    return t.shape[0] * 2


def cached_helper(t):
    return nl.exp(t)


def make_scaler(k):
    def scale(t):
        return nl.multiply(t, k)
    return scale


# ---------------------------------------------------------------- kernels

def k_calls(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    u = user_helper(t)
    n = ceil(3)
    m = lib_function(t)
    r = math.ceil(2.5) + int(np.sum(np.ones(3))) + len(t.shape)
    obj = UserObject(2.0)
    v = obj(u)
    w = obj.apply(v)
    x = LibObject().apply(w)
    c = ConcreteClass(None)
    s = dt_bare(t) + dt_paren(t)
    y = LibPlainCallable()(x)
    probe("values", n, m, r, s, c.ok)
    nl.store(out, value=y)
    return out


def k_truthy_helper(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    truthy_helper(t)  # ERR:call_truthy_helper
    nl.store(out, value=t)
    return out


def k_lib_truthy(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    lib_truthy(t)  # ERR:call_lib_truthy
    nl.store(out, value=t)
    return out


def k_lib_callable_truthy(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    f = LibCallable()
    f(t)  # ERR:call_lib_callable
    nl.store(out, value=t)
    return out


def k_method_truthy(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    obj = UserObject(1.0)
    obj.truthy(t)  # ERR:call_method
    nl.store(out, value=t)
    return out


def k_class_truthy(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    ConcreteClass(t)  # ERR:call_class
    nl.store(out, value=t)
    return out


def k_dt_truthy(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    dt_truthy(t)  # ERR:call_dt_truthy
    nl.store(out, value=t)
    return out


def k_no_source_truthy(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    no_source(t)  # ERR:call_no_source
    nl.store(out, value=t)
    return out


def k_op_marked(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    u = op_marked_dont_trace(t)
    nl.store(out, value=u)
    return out


def k_op_marked_error(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    u = op_marked_bad_alloc(t)  # ERR:op_marked_error
    nl.store(out, value=u)
    return out


def k_nested(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    u = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    v = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    w = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    nested_trace(t, u)
    nested_jit_trace(u, v)
    nested_jit(v, w)
    r = nested_returning(w)
    nl.store(out, value=r)
    return out


def k_conjure(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = make_tile()
    nl.store(out, value=nl.load(a))
    return out


def k_conjure_mask(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    m = make_mask()
    nl.store(out, value=nl.load(a))
    return out


def k_no_check_outside_inline(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = dt_conjure()
    u = lib_conjure()
    n = shape_of(a)
    t[...] = nl.load(a)
    u[...] = nl.add(t, float(n))
    nl.store(out, value=u)
    return out


def k_cached(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    u = cached_helper(t)
    v = cached_helper(u)
    nl.store(out, value=v)
    return out


def k_closures(a):
    out1 = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    out2 = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    twice = make_scaler(2.0)
    thrice = make_scaler(3.0)
    nl.store(out1, value=twice(t))
    nl.store(out2, value=thrice(t))
    return out1, out2


# ---------------------------------------------------------------- gate names

both_markers = op_marked_dont_trace


def _dont_trace_kernel():
    k = nki.trace(lambda x: x)
    k.__nki_dont_trace__ = True
    return k


def _op_marked_kernel():
    k = nki.trace(lambda x: x)
    k.nki_func = "nl.kernel_op"
    return k


GATES = {
    "nl.load": (nl.load, "Builder"),
    "nl.exp": (nl.exp, "Builder"),
    "nki_func+dont_trace": (both_markers, "Builder"),
    "kernel+nki_func": (_op_marked_kernel(), "Builder"),
    "dont_trace bare": (dt_bare, "RunConcrete"),
    "dont_trace()": (dt_paren, "RunConcrete"),
    "kernel+dont_trace": (_dont_trace_kernel(), "RunConcrete"),
    "lib function+dont_trace": (nki.dont_trace(lambda: None), "RunConcrete"),
    "@nki.trace": (nested_trace, "NestedKernel"),
    "@nki.jit(mode='trace')": (nested_jit_trace, "NestedKernel"),
    "@nki.jit": (nested_jit, "NestedKernel"),
    "numpy.fake function": (lib_function, "Library"),
    "math.fake function": (math_function, "Library"),
    "math.ceil builtin": (math.ceil, "Library"),
    "numpy.sum function": (np.sum, "Library"),
    "numpy builtin": (np.array, "Library"),
    "numpy submodule function": (np.random.default_rng, "Library"),
    "neuronxcc.nki.fake function": (nki_surface_function, "Library"),
    "neuronxcc.starfish.penguin.fake function": (penguin_function, "Library"),
    "NKI surface function without nki_func": (nkic.compiler.force_auto_alloc, "Library"),
    "numpyish function": (numpyish_function, "Inline"),
    "user function named ceil": (ceil, "Inline"),
    "user helper": (user_helper, "Inline"),
    "numpy.fake callable object": (LibCallable(), "Inline"),
    "math callable object": (MathCallable(), "Inline"),
    "user callable object": (UserObject(1.0), "Inline"),
    "user bound method": (UserObject(1.0).apply, "Inline"),
    "numpy.fake bound method": (LibObject().apply, "Inline"),
    "builtin len": (len, "RunConcrete"),
    "class": (ConcreteClass, "RunConcrete"),
}


@pytest.mark.parametrize("name", list(GATES))
def test_gate_decision(name):
    func, expected = GATES[name]
    assert _nkic.dispatch_action(func) == expected


def test_dont_trace_bare_and_with_parentheses():
    def f(x):
        return x

    def g(x):
        return x

    assert nki.dont_trace(f) is f and f.__nki_dont_trace__ is True
    assert nki.dont_trace()(g) is g and g.__nki_dont_trace__ is True
    assert dt_bare.__nki_dont_trace__ is True and dt_paren.__nki_dont_trace__ is True
    assert dt_bare.__name__ == "dt_bare" and dt_paren.__name__ == "dt_paren"


def test_library_gate_needs_a_dotted_prefix():
    # numpyish is not numpy; numpy.fake is under numpy.
    assert _nkic.dispatch_action(numpyish_function) == "Inline"
    assert _nkic.dispatch_action(lib_function) == "Library"


# ---------------------------------------------------------------- behaviour

def test_each_callee_kind_traced_or_run_as_its_gate_says():
    a = f32()
    out = simulate(k_calls, a)
    k = "KernelScope"
    f = "FunctionScope"
    # Inlined: a FunctionScope is pushed, and the body's calls go through the dispatcher.
    assert recorded("user_helper")[1] == (k, f)
    assert recorded("user_ceil")[1] == (k, f)
    assert recorded("user_call")[1] == (k, f)
    assert recorded("user_method")[1] == (k, f)
    assert recorded("lib_method")[1] == (k, f)
    assert recorded("lib_callable")[1] == (k, f)
    # Run as plain Python: no FunctionScope.
    assert recorded("lib_function")[1] == (k,)
    assert recorded("dt_bare")[1] == (k,)
    assert recorded("dt_paren")[1] == (k,)
    assert recorded("class_init")[1] == (k,)
    _, _, _, n, m, r, s, ok = recorded("values")
    assert (n, m, r, s, ok) == (4, 7, 3 + 3 + 2, 128 + 512, False)
    expected = np.exp(np.exp(a) * 2.0 + 2.0)
    np.testing.assert_allclose(out, expected, rtol=1e-5)


def test_inlined_helper_body_is_traced():
    e = trace_error(k_truthy_helper, f32())
    check_diag(e, M, "err_dynamic_control_flow_not_supported",
               "dynamic control-flow depending on tensor value is not supported",
               [("truthy_helper", "t:")],
               notes=[("call_truthy_helper", "truthy_helper(t)", "truthy_helper")])


def test_callable_object_from_excluded_module_is_inlined_not_run():
    # Seed GOTCHA: gate 4 only applies to plain functions and builtins.
    e = trace_error(k_lib_callable_truthy, f32())
    check_diag(e, M, "err_dynamic_control_flow_not_supported",
               "dynamic control-flow depending on tensor value is not supported",
               [("lib_callable_if", "t:")],
               notes=[("call_lib_callable", "f(t)", "__call__")])


def test_bound_method_of_user_class_is_inlined():
    e = trace_error(k_method_truthy, f32())
    check_diag(e, M, "err_dynamic_control_flow_not_supported",
               "dynamic control-flow depending on tensor value is not supported",
               [("method_if", "t:")],
               notes=[("call_method", "obj.truthy(t)", "truthy")])


CONCRETE = {
    # kernel, marker of the call site, call token, marker inside the callee
    "library function": (k_lib_truthy, "call_lib_truthy", "lib_truthy(t)", "lib_truthy"),
    "dont_trace function": (k_dt_truthy, "call_dt_truthy", "dt_truthy(t)", "dt_truthy"),
    "class": (k_class_truthy, "call_class", "ConcreteClass(t)", "class_init_if"),
}


@pytest.mark.parametrize("case", list(CONCRETE))
def test_concrete_callees_run_as_python(case):
    kernel, call_marker, call_token, body_marker = CONCRETE[case]
    e = trace_error(kernel, f32())
    # t.__bool__ ran: the plain-Python truth test of a multi-element tensor.
    check_diag(e, M, "err_ambiguous_tensor_truth_value",
               "Cannot evaluate truth value of a multi-element tensor/array",
               [(call_marker, call_token), (body_marker, "t:")])


def test_function_without_source_runs_as_python():
    e = trace_error(k_no_source_truthy, f32())
    check_diag(e, M, "err_ambiguous_tensor_truth_value",
               "Cannot evaluate truth value of a multi-element tensor/array",
               [("call_no_source", "no_source(t)")])


def test_dont_trace_tagged_nki_op_is_still_traced():
    # Seed GOTCHA: nki_func is checked before __nki_dont_trace__.
    a = f32()
    assert "exp" in ir_ops(trace_ir(k_op_marked, a))
    tag, scopes, api = recorded("op_marked")
    assert api == "nl.op_marked"
    np.testing.assert_allclose(simulate(k_op_marked, a), np.exp(a), rtol=1e-5)


def test_dont_trace_tagged_nki_op_errors_name_the_op():
    e = trace_error(k_op_marked_error, f32())
    check_diag(e, M, "err_num_partition_exceed_arch_limit",
               "number of partitions 256 exceed architecture limitation of 128",
               [("op_marked_error", "op_marked_bad_alloc(t)")], api="nl.op_marked_bad_alloc")


def test_nested_kernels_are_traced_into_the_same_kernel():
    a = f32()
    ir = trace_ir(k_nested, a)
    assert ir.count("kernel ") == 1 and ir.startswith("kernel k_nested\n")
    assert [op for op in ir_ops(ir) if op != "copy"] == ["load", "exp", "sqrt", "multiply", "add", "store"], ir
    assert recorded("nested_trace")[1] == ("KernelScope", "FunctionScope")
    out = simulate(k_nested, a)
    np.testing.assert_allclose(out, np.sqrt(np.exp(a)) * 3.0 + 1.0, rtol=1e-5)


def test_return_consistency_is_a_plain_assertion():
    with pytest.raises(AssertionError) as info:
        trace_ir(k_conjure, f32())
    assert type(info.value) is AssertionError
    assert not isinstance(info.value, nkic.NKIError)
    assert str(info.value) == "function without nki data as input should not return nki data"


def test_return_consistency_counts_masks_as_nki_data():
    with pytest.raises(AssertionError) as info:
        trace_ir(k_conjure_mask, f32())
    assert type(info.value) is AssertionError
    assert str(info.value) == "function without nki data as input should not return nki data"


def test_return_consistency_only_guards_inlined_helpers():
    # dont_trace and library callees return straight from their gate; a helper
    # returning plain Python from a tensor input is fine.
    a = f32()
    out = simulate(k_no_check_outside_inline, a)
    np.testing.assert_allclose(out, a + 256.0, rtol=1e-6)


def test_is_nki_data():
    assert not _nkic.is_nki_data(3)
    assert not _nkic.is_nki_data(np.zeros(3))
    seen = {}

    @nki.dont_trace
    def classify(t, i, m):
        seen.update(tensor=_nkic.is_nki_data(t), index=_nkic.is_nki_data(i), mask=_nkic.is_nki_data(m))
        return 0

    def kern(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        t = nl.load(a)
        i = nl.arange(128)[:, None]
        classify(t, i, i < 64)
        nl.store(out, value=t)
        return out

    # kern is a closure defined in this file: it has source, so it can be traced.
    trace_ir(kern, f32())
    assert seen == {"tensor": True, "index": False, "mask": True}


def test_rewritten_code_is_cached(monkeypatch):
    calls = []
    real = _rewrite.inspect.getsourcelines

    def counting(obj):
        if getattr(obj, "__name__", "") == "cached_helper":
            calls.append(obj)
        return real(obj)

    monkeypatch.setattr(_rewrite.inspect, "getsourcelines", counting)
    a = f32()
    trace_ir(k_cached, a)
    trace_ir(k_cached, a)
    np.testing.assert_allclose(simulate(k_cached, a), np.exp(np.exp(a)), rtol=1e-5)
    assert len(calls) == 1
    assert cached_helper.__code__ in _rewrite._code_cache
    assert _rewrite.rewritten(cached_helper) is _rewrite.rewritten(cached_helper)


def test_cached_code_keeps_each_closure_its_own_cells():
    a = f32()
    out1, out2 = simulate(k_closures, a)
    np.testing.assert_allclose(out1, a * 2.0, rtol=1e-6)
    np.testing.assert_allclose(out2, a * 3.0, rtol=1e-6)


def test_gate_is_read_at_each_call():
    # The seed reads the markers at every call: a helper tagged dont_trace after
    # it was first inlined runs concretely from then on.
    def late(t):
        probe("late")
        return t

    def kern(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        t = nl.load(a)
        late(t)
        nl.store(out, value=t)
        return out

    trace_ir(kern, f32())
    assert recorded("late")[1] == ("KernelScope", "FunctionScope")
    nki.dont_trace(late)
    trace_ir(kern, f32())
    assert recorded("late")[1] == ("KernelScope",)


class _Tiling:
    """The shape of public kernels' tiling helpers: a classmethod turns a tile index into a mask."""

    @classmethod
    def _mask(cls, idx, limit):
        return idx < limit

    def tile_mask(self, tile, offset, limit):
        return self._mask(tile * 128 + offset, limit)


def k_index_to_mask_helper(a):
    out = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.shared_hbm)
    i_p, i_f = nl.mgrid[0:128, 0:64]
    nl.store(out, value=nl.load(a[i_p, i_f]), mask=_Tiling().tile_mask(0, i_p, 100))
    return out


def test_return_consistency_counts_tile_indices_as_inputs():
    a = f32((128, 64))
    out = simulate(k_index_to_mask_helper, a)
    np.testing.assert_array_equal(out[:100], a[:100])


def test_a_callee_made_afresh_each_iteration_is_decided_anew():
    # Decisions are cached per callee; a dead callee's entry goes with it, so a new
    # function (perhaps at the dead one's address) of another kind gets its own gate.
    def kern(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        t = nl.load(a)
        for i in nl.static_range(40):
            def step(x, i=i):
                probe("step", i)
                return x
            if i % 2:
                step = nki.dont_trace(step)
            step(t)
        nl.store(out, value=t)
        return out

    trace_ir(kern, f32())
    kinds = {r[3]: r[1] for r in RECORD if r[0] == "step"}
    assert len(kinds) == 40
    for i, scopes in kinds.items():
        assert scopes == (("KernelScope",) if i % 2 else ("KernelScope", "FunctionScope")), (i, scopes)
