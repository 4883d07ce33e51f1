"""Seed 000, item 5: object shadowing (warn_object_shadowing) and annotations
(annotate_object).

Rebinding a name that holds a tensor of an enclosing scope to a different
tensor inside a loop body or a predicated if/else branch (an `if` on a
loop-variable predicate), or rebinding it to a tensor of another dtype or shape,
warns, at the user's line. A static `if` (concrete condition) is no scope of its
own, so rebinding inside one to the same dtype and shape is silent:
  SyntaxWarning: shadowing local tensor '<dtype> <name>[shape]' with a new
  object, use '<name>[...] =' if you want to update the existing object
`x: nt.tensor[128, 512] = value` checks the value's shape
(err_annotation_shape_mismatch) and then goes through the same shadowing check."""
import warnings

import numpy as np
import pytest

import neuronxcc.nki.language as nl
import neuronxcc.nki.typing as nt
from neuronxcc.nki.typing import tensor

from nki_test_util import Markers, check_diag, f32, simulate, trace_error, trace_ir

M = Markers(__file__)


def shadow_message(dtype, name, shape):
    return (f"shadowing local tensor '{dtype} {name}{shape}' with a new object, "
            f"use '{name}[...] =' if you want to update the existing object")


# ---------------------------------------------------------------- shadowing

def k_shadow_in_loop(a):
    out = nl.ndarray((2, 128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    for i in nl.affine_range(2):
        t = nl.exp(t)  # ERR:shadow_in_loop
        nl.store(out[i], value=t)
    return out


def k_shadow_in_if(a):
    out = nl.ndarray((4, 128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    for i in nl.affine_range(4):
        if i < 2:
            t = nl.sqrt(t)  # ERR:shadow_in_if
            nl.store(out[i], value=t)
        else:
            nl.store(out[i], value=nl.load(a))
    return out


def k_shadow_in_else(a):
    out = nl.ndarray((4, 128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
    acc = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    for i in nl.affine_range(4):
        if i < 2:
            nl.store(out[i], value=acc)
        else:
            acc = nl.load(a)  # ERR:shadow_in_else
            nl.store(out[i], value=acc)
    return out


def k_shadow_in_static_if_other_dtype(a, flag):
    out = nl.ndarray(a.shape, dtype=nl.bfloat16, buffer=nl.shared_hbm)
    t = nl.load(a)
    if flag:
        t = nl.exp(t, dtype=nl.bfloat16)  # ERR:shadow_in_static_if_other_dtype
    nl.store(out, value=t)
    return out


def k_rebind_in_static_if(a, flag):
    # Same scope (a static `if` is none), same dtype and shape: no warning, and
    # the new tensor is used after the `if`.
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    if flag:
        t = nl.sqrt(t)
    else:
        t = nl.exp(t)
    nl.store(out, value=t)
    return out


def k_shadow_in_sequential_loop(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    acc = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    for i in nl.sequential_range(4):
        acc = nl.add(acc, nl.load(a))  # ERR:shadow_in_sequential_loop
        nl.store(out, value=acc)
    return out


def k_shadow_other_dtype(a):
    out = nl.ndarray(a.shape, dtype=nl.bfloat16, buffer=nl.shared_hbm)
    t = nl.load(a)
    t = nl.exp(t, dtype=nl.bfloat16)  # ERR:shadow_other_dtype
    nl.store(out, value=t)
    return out


def k_shadow_other_shape(a):
    out = nl.ndarray((128, 1), dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    t = nl.sum(t, axis=1, keepdims=True)  # ERR:shadow_other_shape
    nl.store(out, value=t)
    return out


def scale_twice(t):
    if t.shape[0] == 128:
        t = nl.multiply(t, 2.0)  # ERR:shadow_in_helper
        return nl.add(t, 0.0)
    return t


def k_shadow_in_helper(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    u = scale_twice(nl.load(a))
    nl.store(out, value=u)
    return out


def k_no_shadowing(a):
    # Same scope, same dtype and shape; in-place updates; non-tensor names; a
    # tensor made in the same body; a name first bound inside the loop.
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    t = nl.exp(t)
    n = 1
    acc = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    for i in nl.affine_range(2):
        n = 2
        acc[...] = nl.add(acc, t)
        u = nl.multiply(t, 2.0)
        u = nl.add(u, 1.0)
        nl.store(out, value=u)
    if n == 1:
        t[...] = nl.add(t, acc)
    nl.store(out, value=t)
    return out


# ---------------------------------------------------------------- annotations

def k_annotation_mismatch(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    x: nt.tensor[128, 512] = nl.load(a[0:128, 0:256])  # ERR:annotation_mismatch
    nl.store(out[0:128, 0:256], value=x)
    return out


def k_annotation_mismatch_zeros(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    data: tensor[128, 512] = nl.zeros((nl.par_dim(128), 128), dtype=np.float32)  # ERR:annotation_zeros
    nl.store(out, value=nl.load(a))
    return out


def annotated_helper(t):
    y: nt.tensor[64, 512] = nl.exp(t)  # ERR:annotation_helper
    return y


def k_annotation_in_helper(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    y = annotated_helper(nl.load(a))  # ERR:call_annotated_helper
    nl.store(out, value=y)
    return out


def k_annotation_ok(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    x: nt.tensor[128, 512] = nl.load(a)
    y: tensor[128, 512] = nl.exp(x)
    n: int = 3
    nl.store(out, value=nl.multiply(y, float(n)))
    return out


def k_annotated_shadowing(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    for i in nl.affine_range(2):
        t: nt.tensor[128, 512] = nl.exp(t)  # ERR:annotated_shadowing
        nl.store(out, value=t)
    return out


# ---------------------------------------------------------------- tests

def trace_warnings(kernel, *args):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        trace_ir(kernel, *args)
    return [w for w in caught if issubclass(w.category, SyntaxWarning)]


SHADOW_CASES = {
    "affine loop": (k_shadow_in_loop, (), "shadow_in_loop", ("float32", "t", "[128, 512]")),
    "if": (k_shadow_in_if, (), "shadow_in_if", ("float32", "t", "[128, 512]")),
    "else": (k_shadow_in_else, (), "shadow_in_else", ("float32", "acc", "[128, 512]")),
    "static if, other dtype": (k_shadow_in_static_if_other_dtype, (True,), "shadow_in_static_if_other_dtype",
                               ("float32", "t", "[128, 512]")),
    "sequential loop": (k_shadow_in_sequential_loop, (), "shadow_in_sequential_loop",
                        ("float32", "acc", "[128, 512]")),
    "other dtype": (k_shadow_other_dtype, (), "shadow_other_dtype", ("float32", "t", "[128, 512]")),
    "other shape": (k_shadow_other_shape, (), "shadow_other_shape", ("float32", "t", "[128, 512]")),
    "helper parameter": (k_shadow_in_helper, (), "shadow_in_helper", ("float32", "t", "[128, 512]")),
    "annotated": (k_annotated_shadowing, (), "annotated_shadowing", ("float32", "t", "[128, 512]")),
}


@pytest.mark.parametrize("case", list(SHADOW_CASES))
def test_shadowing_warns_at_the_user_line(case):
    kernel, extra, marker, (dtype, name, shape) = SHADOW_CASES[case]
    caught = trace_warnings(kernel, f32(), *extra)
    assert len(caught) == 1, [str(w.message) for w in caught]
    w = caught[0]
    assert w.category is SyntaxWarning
    assert str(w.message) == shadow_message(dtype, name, shape)
    assert M.same_file(w.filename), w.filename
    assert w.lineno == M.line(marker)


def test_shadowing_warning_with_pytest_warns():
    with pytest.warns(SyntaxWarning, match=r"shadowing local tensor 'float32 t\[128, 512\]' with a new object"):
        trace_ir(k_shadow_in_loop, f32())


def test_shadowing_keeps_the_kernel_meaning():
    a = f32()
    with pytest.warns(SyntaxWarning):
        out = simulate(k_shadow_in_if, a)
    np.testing.assert_allclose(out, np.stack([np.sqrt(a)] * 2 + [a] * 2), rtol=1e-5)
    with pytest.warns(SyntaxWarning):
        out = simulate(k_shadow_in_else, a)
    np.testing.assert_allclose(out, np.stack([np.zeros_like(a)] * 2 + [a] * 2))
    with pytest.warns(SyntaxWarning):
        out = simulate(k_shadow_in_static_if_other_dtype, a, True)
    np.testing.assert_allclose(out.astype(np.float32), np.exp(a), rtol=1e-2)


def test_no_warning_without_shadowing():
    a = f32()
    assert trace_warnings(k_no_shadowing, a) == []
    assert trace_warnings(k_shadow_in_static_if_other_dtype, a, False) == []
    assert trace_warnings(k_rebind_in_static_if, a, True) == []
    assert trace_warnings(k_rebind_in_static_if, a, False) == []


@pytest.mark.parametrize("flag, ref", [(True, np.sqrt), (False, np.exp)])
def test_rebinding_in_a_static_if_is_a_same_scope_rebinding(flag, ref):
    a = f32()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = simulate(k_rebind_in_static_if, a, flag)
    np.testing.assert_allclose(out, ref(a), rtol=1e-6)


ANNOTATION_CASES = {
    "nt.tensor": (k_annotation_mismatch, [("annotation_mismatch", "x:"), ("annotation_mismatch", "nl.load")],
                  "shape of `x[128, 256]` does not match the expected shape of [128, 512]", []),
    "typing.tensor, documented example": (
        k_annotation_mismatch_zeros, [("annotation_zeros", "data:"), ("annotation_zeros", "nl.zeros")],
        "shape of `data[128, 128]` does not match the expected shape of [128, 512]", []),
    "helper": (k_annotation_in_helper, [("annotation_helper", "y:"), ("annotation_helper", "nl.exp")],
               "shape of `y[128, 512]` does not match the expected shape of [64, 512]",
               [("call_annotated_helper", "annotated_helper(nl.load(a))", "annotated_helper")]),
}


@pytest.mark.parametrize("case", list(ANNOTATION_CASES))
def test_annotation_shape_mismatch(case):
    kernel, locs, message, notes = ANNOTATION_CASES[case]
    e = trace_error(kernel, f32())
    check_diag(e, M, "err_annotation_shape_mismatch", message, locs, notes=notes)


def test_matching_annotations_are_fine():
    a = f32()
    np.testing.assert_allclose(simulate(k_annotation_ok, a), 3.0 * np.exp(a), rtol=1e-5)
