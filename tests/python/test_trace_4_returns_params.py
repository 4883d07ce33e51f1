"""Seed 000, item 4: kernel returns and parameters.

Returning shared_hbm tensors (one, or a tuple) registers the kernel outputs,
which simulate returns in that order; a returned on-chip tile is stored into a
new HBM output at the return (NKI's simulator returns tiles too); returning
anything else is "Returning value from top level nki kernel is not supported". Tensors a helper returns are
hoisted into the caller. Storing into an input is
err_cannot_update_immutable_parameter unless it is annotated nt.mutable_tensor,
which must then be returned (err_mutable_parameter_not_returned); a returned
mutable input is updated in place in the caller's numpy array. An output never
written is err_tensor_output_not_written_to; launching a grid inside a kernel is
err_nested_kernel_with_spmd_grid. Python scalars, tuples and objects passed as
kernel arguments are compile-time constants."""
import dataclasses
import typing

import numpy as np
import pytest

from neuronxcc import nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.typing as nt

from nki_test_util import Markers, check_diag, f32, ir_ops, simulate, trace_error, trace_ir

M = Markers(__file__)

RETURNING = "Returning value from top level nki kernel is not supported"


# ---------------------------------------------------------------- outputs

def k_one_output(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.exp(nl.load(a)))
    return out


def k_two_outputs(a, swap):
    first = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    second = nl.ndarray((128, 1), dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    nl.store(first, value=nl.exp(t))
    nl.store(second, value=nl.sum(t, axis=1, keepdims=True))
    if swap:
        return second, first
    return first, second


def k_return_int(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.load(a))
    return 3  # ERR:return_int


def k_return_sbuf(a):
    t = nl.exp(nl.load(a))
    return t


def k_return_tuple_with_int(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.load(a))
    return out, 3  # ERR:return_tuple_with_int


def k_return_str(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.load(a))
    return "out"  # ERR:return_str


def k_return_in_branch(a, flag):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    nl.store(out, value=t)
    if flag:
        return t, out
    return out


# ---------------------------------------------------------------- helpers' returns

def exp_tile(a):
    t = nl.load(a)
    return nl.exp(t)


def exp_and_sqrt(a):
    t = nl.load(a)
    return nl.exp(t), nl.sqrt(t)


def exp_list(a):
    t = nl.load(a)
    return [nl.exp(t)]


def outer_helper(a):
    return exp_tile(a)


def k_helper_returns(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    u = exp_tile(a)
    e, s = exp_and_sqrt(a)
    (l,) = exp_list(a)
    w = outer_helper(a)
    nl.store(out, value=nl.add(nl.add(u, e), nl.add(nl.add(s, l), w)))
    return out


def leak_temp(a, box):
    t = nl.load(a)
    box.append(t)
    return nl.exp(t)


def k_helper_leaks_local(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    box = []
    u = leak_temp(a, box)
    nl.store(out, value=box[0])  # ERR:helper_leaks_local
    return out


# ---------------------------------------------------------------- parameters

def k_store_input(a):
    t = nl.load(a)
    nl.store(a, value=nl.exp(t))  # ERR:store_input
    return a


def k_assign_input(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    a[...] = t  # ERR:assign_input
    nl.store(out, value=t)
    return out


def k_store_input_slice(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    nl.store(a[0:64, 0:512], value=t[0:64, 0:512])  # ERR:store_input_slice
    nl.store(out, value=t)
    return out


def write_into(dst, value):
    nl.store(dst, value=value)  # ERR:write_into


def k_store_input_in_helper(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    write_into(a, t)  # ERR:call_write_into
    nl.store(out, value=t)
    return out


def k_mutable(a: nt.mutable_tensor):
    t = nl.load(a)
    nl.store(a, value=nl.exp(t))
    return a


def k_mutable_and_output(a: nt.mutable_tensor, b):
    out = nl.ndarray(b.shape, dtype=b.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    nl.store(a, value=nl.multiply(t, 2.0))
    nl.store(out, value=nl.add(nl.load(b), t))
    return out, a


def k_mutable_not_returned(a: nt.mutable_tensor, b):
    out = nl.ndarray(b.shape, dtype=b.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    nl.store(a, value=nl.exp(t))  # ERR:mutable_write
    nl.store(out, value=nl.load(b))
    return out  # ERR:mutable_return


def k_mutable_only_read(a: nt.mutable_tensor):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.exp(nl.load(a)))
    return out


def k_not_written(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)  # ERR:not_written_alloc
    t = nl.load(a)
    return out  # ERR:not_written_return


def k_not_written_branch(a, flag):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)  # ERR:branch_alloc
    if flag:
        nl.store(out, value=nl.load(a))
    return out  # ERR:branch_return


def k_second_not_written(a):
    out1 = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    out2 = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)  # ERR:second_alloc
    nl.store(out1, value=nl.load(a))
    return out1, out2  # ERR:second_return


def k_no_output(a):  # ERR:no_output_def
    t = nl.load(a)
    u = nl.exp(t)  # ERR:no_output_last


@nki.trace
def traced_copy(src, dst):
    dst[...] = nl.exp(src)


@nki.jit
def jit_kernel(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.load(a))
    return out


def k_nested_trace_grid(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    u = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    traced_copy[2](t, u)  # ERR:nested_trace_grid
    nl.store(out, value=u)
    return out


def k_nested_jit_grid(a):
    r = jit_kernel[2, 2](a)  # ERR:nested_jit_grid
    return r


def launch_inside(a):
    return jit_kernel[nl.nc(2)](a)  # ERR:launch_inside


def k_nested_grid_in_helper(a):
    r = launch_inside(a)  # ERR:call_launch_inside
    return r


# ---------------------------------------------------------------- compile-time constants

@dataclasses.dataclass(frozen=True)
class Config:
    use_exp: bool
    scale: float
    tile: tuple = (128, 512)


def k_constants(a, scale, shape, cfg, *, bias=0.0, square=False):
    out = nl.ndarray(shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a[0:shape[0], 0:shape[1]])
    u = nl.exp(t) if cfg.use_exp else nl.sqrt(t)
    v = nl.multiply(u, scale * cfg.scale)
    w = nl.square(v) if square else v
    nl.store(out, value=nl.add(w, bias))
    return out


# ---------------------------------------------------------------- tests

def test_single_output_is_returned():
    a = f32()
    out = simulate(k_one_output, a)
    assert isinstance(out, np.ndarray) and out.shape == a.shape
    np.testing.assert_allclose(out, np.exp(a), rtol=1e-5)


@pytest.mark.parametrize("swap", [False, True])
def test_tuple_of_outputs_in_return_order(swap):
    a = f32()
    traced = nki.jit(k_two_outputs).trace(None, (a, swap), {})
    names = [o[0] for o in traced.ir.outputs]
    assert names == (["second", "first"] if swap else ["first", "second"])
    res = simulate(k_two_outputs, a, swap)
    assert isinstance(res, tuple) and len(res) == 2
    first, second = (res[1], res[0]) if swap else res
    np.testing.assert_allclose(first, np.exp(a), rtol=1e-5)
    np.testing.assert_allclose(second, a.sum(axis=1, keepdims=True), rtol=1e-4)


RETURN_CASES = {
    "int": (k_return_int, (), [("return_int", "return"), ("return_int", "3")]),
    "tuple with int": (k_return_tuple_with_int, (), [("return_tuple_with_int", "return"),
                                                      ("return_tuple_with_int", "out, 3")]),
    "str": (k_return_str, (), [("return_str", "return"), ("return_str", '"out"')]),
}


@pytest.mark.parametrize("case", list(RETURN_CASES))
def test_returning_anything_else_is_an_error(case):
    kernel, extra, locs = RETURN_CASES[case]
    e = trace_error(kernel, f32(), *extra)
    check_diag(e, M, "", RETURNING, locs)


def test_returned_on_chip_tiles_become_outputs():
    a = f32()
    np.testing.assert_allclose(simulate(k_return_sbuf, a), np.exp(a), rtol=1e-6)
    t, out = simulate(k_return_in_branch, a, True)
    assert np.array_equal(t, a) and np.array_equal(out, a)
    assert np.array_equal(simulate(k_return_in_branch, a, False), a)


def test_helper_returned_tensors_are_hoisted():
    a = f32()
    out = simulate(k_helper_returns, a)
    np.testing.assert_allclose(out, 4 * np.exp(a) + np.sqrt(a), rtol=1e-5)


def test_helper_locals_not_returned_die_with_the_helper():
    e = trace_error(k_helper_leaks_local, f32())
    check_diag(e, M, "err_local_variable_used_out_of_scope",
               "Local variable 't' is referenced outside of its parent scope",
               [("helper_leaks_local", "nl.store"), ("helper_leaks_local", "box[0]")], api="nl.store")


IMMUTABLE_CASES = {
    "nl.store": (k_store_input, [("store_input", "nl.store"), ("store_input", "a,")], [], "nl.store"),
    "assignment": (k_assign_input, [("assign_input", "a[...]")], [], "tensor assignment"),
    "slice": (k_store_input_slice, [("store_input_slice", "nl.store"), ("store_input_slice", "a[0:64")],
              [], "nl.store"),
    "helper": (k_store_input_in_helper, [("write_into", "nl.store"), ("write_into", "dst,")],
               [("call_write_into", "write_into(a, t)", "write_into")], "nl.store"),
}


@pytest.mark.parametrize("case", list(IMMUTABLE_CASES))
def test_storing_into_an_input_is_an_error(case):
    kernel, locs, notes, api = IMMUTABLE_CASES[case]
    e = trace_error(kernel, f32())
    check_diag(e, M, "err_cannot_update_immutable_parameter", "Cannot update immutable parameter 'a'",
               locs, notes=notes, api=api)
    assert "nt.mutable_tensor" in e.hint


def test_mutable_parameter_is_updated_in_place():
    a = f32()
    original = a.copy()
    res = simulate(k_mutable, a)
    np.testing.assert_allclose(a, np.exp(original), rtol=1e-5)
    np.testing.assert_allclose(res, np.exp(original), rtol=1e-5)


def test_mutable_parameter_returned_with_an_output():
    a = f32()
    b = f32(seed=3)
    original = a.copy()
    out, a_res = simulate(k_mutable_and_output, a, b)
    np.testing.assert_allclose(out, b + original, rtol=1e-6)
    np.testing.assert_allclose(a, original * 2.0, rtol=1e-6)
    np.testing.assert_allclose(a_res, original * 2.0, rtol=1e-6)


def test_mutable_parameter_must_be_returned():
    e = trace_error(k_mutable_not_returned, f32(), f32(seed=1))
    check_diag(e, M, "err_mutable_parameter_not_returned",
               "Mutable kernel parameter not returned by `return` statement",
               [("mutable_write", "nl.store"), ("mutable_write", "a,"), ("mutable_return", "return"),
                ("mutable_return", "out")])
    assert "return a" in e.hint


def test_mutable_parameter_only_read_need_not_be_returned():
    a = f32()
    original = a.copy()
    np.testing.assert_allclose(simulate(k_mutable_only_read, a), np.exp(original), rtol=1e-5)
    np.testing.assert_array_equal(a, original)


NOT_WRITTEN_CASES = {
    "never": (k_not_written, (), "out", [("not_written_alloc", "nl.ndarray"), ("not_written_alloc", "out"),
                                         ("not_written_return", "return"), ("not_written_return", "out")]),
    "untaken branch": (k_not_written_branch, (False,), "out",
                       [("branch_alloc", "nl.ndarray"), ("branch_alloc", "out"),
                        ("branch_return", "return"), ("branch_return", "out")]),
    "second of two": (k_second_not_written, (), "out2",
                      [("second_alloc", "nl.ndarray"), ("second_alloc", "out2"),
                       ("second_return", "return"), ("second_return", "out2")]),
}


@pytest.mark.parametrize("case", list(NOT_WRITTEN_CASES))
def test_output_never_written(case):
    kernel, extra, name, locs = NOT_WRITTEN_CASES[case]
    e = trace_error(kernel, f32(), *extra)
    check_diag(e, M, "err_tensor_output_not_written_to", f"'{name}'", locs)


def test_kernel_without_any_output():
    # NKI_API 7.1: err_tensor_output_not_written_to also covers "no output at all".
    e = trace_error(k_no_output, f32())
    check_diag(e, M, "err_tensor_output_not_written_to", [],
               [("no_output_def", "def"), ("no_output_def", "k_no_output"), ("no_output_last", "u"),
                ("no_output_last", "nl.exp")])


NESTED_GRID_CASES = {
    "@nki.trace": (k_nested_trace_grid, ("nested_trace_grid", "traced_copy[2](t, u)"), []),
    "@nki.jit 2-d grid": (k_nested_jit_grid, ("nested_jit_grid", "jit_kernel[2, 2](a)"), []),
    "in a helper": (k_nested_grid_in_helper, ("launch_inside", "jit_kernel[nl.nc(2)](a)"),
                    [("call_launch_inside", "launch_inside(a)", "launch_inside")]),
}


@pytest.mark.parametrize("case", list(NESTED_GRID_CASES))
def test_nested_kernel_with_spmd_grid(case):
    kernel, where, notes = NESTED_GRID_CASES[case]
    e = trace_error(kernel, f32())
    check_diag(e, M, "err_nested_kernel_with_spmd_grid", "grid", [where], notes=notes)


def test_python_arguments_are_compile_time_constants():
    a = f32()
    base = Config(use_exp=True, scale=1.0)
    ir = trace_ir(k_constants, a, 2.0, (128, 512), base)
    # A different scalar, tuple, config object or keyword changes the IR.
    variants = {
        "scalar": trace_ir(k_constants, a, 3.0, (128, 512), base),
        "tuple": trace_ir(k_constants, a, 2.0, (64, 512), base),
        "config": trace_ir(k_constants, a, 2.0, (128, 512), Config(use_exp=False, scale=1.0)),
        "kw scalar": trace_ir(k_constants, a, 2.0, (128, 512), base, bias=1.5),
        "kw flag": trace_ir(k_constants, a, 2.0, (128, 512), base, square=True),
    }
    for name, other in variants.items():
        assert other != ir, name
    assert trace_ir(k_constants, a, 2.0, (128, 512), Config(use_exp=True, scale=1.0)) == ir
    assert "exp" in ir_ops(ir) and "sqrt" not in ir_ops(ir)
    assert "sqrt" in ir_ops(variants["config"]) and "exp" not in ir_ops(variants["config"])
    assert "square" in ir_ops(variants["kw flag"])
    assert "[64, 512]" in variants["tuple"]
    # Constants are folded into the instructions, not kernel inputs.
    traced = nki.jit(k_constants).trace(None, (a, 2.0, (128, 512), base), {})
    assert [i[0] for i in traced.ir.inputs] == ["a"]


def test_python_arguments_values_reach_the_simulation():
    a = f32()
    cfg = Config(use_exp=False, scale=0.5)
    out = simulate(k_constants, a, 4.0, (64, 256), cfg, bias=1.0, square=True)
    expected = np.square(np.sqrt(a[:64, :256]) * 2.0) + 1.0
    np.testing.assert_allclose(out, expected, rtol=1e-5)


class _Pair(typing.NamedTuple):
    first: object
    scale: float


def make_pair(a):
    return _Pair(nl.exp(nl.load(a)), 2.0)


def k_helper_returns_namedtuple(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    p = make_pair(a)
    assert isinstance(p, _Pair)
    nl.store(out, value=nl.multiply(p.first, p.scale))
    return out


def make_dict(a):
    return {"t": nl.exp(nl.load(a))}


def k_helper_returns_dict(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=make_dict(a)["t"])
    return out


def test_helper_namedtuples_and_dicts_keep_their_type_and_tensors():
    a = f32()
    np.testing.assert_allclose(simulate(k_helper_returns_namedtuple, a), 2 * np.exp(a), rtol=1e-5)
    np.testing.assert_allclose(simulate(k_helper_returns_dict, a), np.exp(a), rtol=1e-5)


def k_returns_reshaped_output(a):
    flat = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(flat, value=nl.exp(nl.load(a.reshape((128, 64)))))
    return flat.reshape((2, 64, 64))


def test_returning_a_reshape_of_a_written_output():
    a = f32((2, 64, 64))
    out = simulate(k_returns_reshaped_output, a)
    assert out.shape == (2, 64, 64)
    np.testing.assert_allclose(out, np.exp(a), rtol=1e-5)


@nki.jit
def k_tuple_of_arrays(q, past):
    k, v = past
    out = nl.ndarray(q.shape, dtype=q.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.add(nl.load(q), nl.multiply(nl.load(k), nl.load(v))))
    return out


def test_arrays_inside_a_tuple_argument_are_kernel_inputs():
    q, k, v = f32(seed=1), f32(seed=2), f32(seed=3)
    np.testing.assert_allclose(k_tuple_of_arrays(q, (k, v)), q + k * v, rtol=1e-6)
    np.testing.assert_allclose(k_tuple_of_arrays(q, [v, k]), q + k * v, rtol=1e-6)
