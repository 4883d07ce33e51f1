"""Foundation diagnostics: each error has its official `err_*` code, its message,
and the location (file, line, column) of the offending expression in the user's
kernel, never a file of nkic. Expected lines are found through the `# ERR:<name>`
marker comments on the offending lines below."""
import os
import traceback

import numpy as np
import pytest

import nkic
from neuronxcc import nki
import neuronxcc.nki.language as nl

THIS_FILE = os.path.realpath(__file__)
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(THIS_FILE)))
NKIC_DIRS = (os.path.join(ROOT, "python", "nkic") + os.sep, os.path.join(ROOT, "python", "neuronxcc") + os.sep)
with open(THIS_FILE) as _f:
    SOURCE = _f.read().splitlines()


def marker_line(name):
    """1-based line number of the line carrying `# ERR:<name>`."""
    tag = f"# ERR:{name}"
    hits = [i for i, l in enumerate(SOURCE, 1) if l.rstrip().endswith(tag)]
    assert len(hits) == 1, f"marker {tag!r} found {len(hits)} times"
    return hits[0]


def loc(name, token, offset=0):
    """(line, 1-based col) of `token` on the line marked `name`."""
    line = marker_line(name)
    text = SOURCE[line - 1].split("# ERR:")[0]
    assert token in text, (token, text)
    return line, text.index(token) + 1 + offset


def in_nkic(path):
    return os.path.realpath(path).startswith(NKIC_DIRS)


# ---------------------------------------------------------------- kernels

def k_if_tile(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    if t:  # ERR:if_tile
        nl.store(out, value=t)
    return out


def k_if_scalar_tile(a):
    out = nl.ndarray((1, 1), dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a[0:1, 0:1])
    if t:  # ERR:if_scalar_tile
        nl.store(out, value=t)
    return out


def k_if_arange(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    n = 64
    if (i_p < n):  # ERR:if_arange
        nl.store(out, value=nl.load(a))
    return out


def k_if_program_id(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    if nl.program_id(0) < 4:  # ERR:if_program_id
        nl.store(out, value=nl.load(a))
    return out


def k_while_program_id(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    while nl.program_id(0) >= 2:  # ERR:while_program_id
        nl.store(out, value=nl.load(a))
    return out


def load_rows(x):
    i = nl.arange(128)
    j = nl.arange(512)[None, :]
    return nl.load(x[i, j])  # ERR:helper_body


def k_helper(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = load_rows(a)  # ERR:helper_call
    nl.store(out, value=t)
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


def k_store_input(a):
    t = nl.load(a)
    nl.store(a, value=t)  # ERR:store_input
    return a


def k_return_int(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.load(a))
    return 3  # ERR:return_int


def k_not_written(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)  # ERR:not_written_alloc
    return out  # ERR:not_written_return


def k_arange_1d(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    i = nl.arange(128)
    j = nl.arange(512)[None, :]
    t = nl.load(a[i, j])  # ERR:arange_1d
    nl.store(out, value=t)
    return out


def k_mixed_indexing(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    i = nl.arange(128)[:, None]
    t = nl.load(a[i, 0:512])  # ERR:mixed_indexing
    nl.store(out, value=t)
    return out


def k_256_partitions(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((256, 512), dtype=nl.float32, buffer=nl.sbuf)  # ERR:256_partitions
    nl.store(out, value=nl.load(a))
    return out


def k_load_from_sbuf(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    u = nl.load(t)  # ERR:load_from_sbuf
    nl.store(out, value=u)
    return out


def k_hbm_init_value(a):
    out = nl.zeros(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)  # ERR:hbm_init_value
    return out


def k_if_scope(a):
    # As in the NKI documentation's example: an `if` on the loop variable is a
    # predicated scope, so `t` dies at the end of the branch.
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):
        if i < 2:
            t = nl.load(a[i * 32:(i + 1) * 32, :])
        nl.store(out[i * 32:(i + 1) * 32, :], value=t)  # ERR:if_scope
    return out


def k_static_if_no_scope(a):
    # A static `if` is not a scope: `t` outlives it.
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    if a.shape[0] == 128:
        t = nl.load(a)
    nl.store(out, value=t)
    return out


def k_loop_scope(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(2):
        t = nl.load(a)
    nl.store(out, value=t)  # ERR:loop_scope
    return out


@nki.jit
def inner_kernel(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.load(a))
    return out


def k_nested_grid(a):
    r = inner_kernel[2](a)  # ERR:nested_grid
    return r


def k_shared_hbm_in_loop(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.load(a))
    for i in nl.affine_range(2):
        tmp = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)  # ERR:shared_hbm_in_loop
    return out


# ---------------------------------------------------------------- cases

DOC_UNSUPPORTED_MEMORY = ("Expected operand 'src' of 'load' to be in address space 'hbm', "
                          "but got a tile in 'sbuf' instead.")

# id: (kernel, grid, code, message substring, acceptable (marker, token[, offset]) locations)
CASES = {
    "if_tile": (k_if_tile, None, "err_dynamic_control_flow_not_supported",
                "dynamic control-flow depending on tensor value is not supported", [("if_tile", "t:")]),
    "if_scalar_tile": (k_if_scalar_tile, None, "err_dynamic_control_flow_not_supported",
                       "dynamic control-flow depending on tensor value is not supported",
                       [("if_scalar_tile", "t:")]),
    "if_arange": (k_if_arange, None, "err_control_flow_condition_depending_on_arange",
                  "Control-flow depending on `nl.arange` or `nl.mgrid` is not supported",
                  [("if_arange", "i_p < n")]),
    "if_program_id": (k_if_program_id, (8,), "err_dynamic_control_flow_not_supported",
                      "dynamic control-flow depending on tensor value is not supported",
                      [("if_program_id", "nl.program_id(0) < 4")]),
    "while_program_id": (k_while_program_id, (8,), "err_dynamic_control_flow_not_supported",
                         "dynamic control-flow depending on tensor value is not supported",
                         [("while_program_id", "nl.program_id(0) >= 2")]),
    "and": (k_and, None, "err_ambiguous_tensor_truth_value",
            "Cannot evaluate truth value of a multi-element tensor/array", [("and", "t and t")]),
    "or": (k_or, None, "err_ambiguous_tensor_truth_value",
           "Cannot evaluate truth value of a multi-element tensor/array", [("or", "t or t")]),
    "not": (k_not, None, "err_ambiguous_tensor_truth_value",
            "Cannot evaluate truth value of a multi-element tensor/array", [("not", "not t")]),
    "store_input": (k_store_input, None, "err_cannot_update_immutable_parameter",
                    "Cannot update immutable parameter", [("store_input", "nl.store")]),
    "return_int": (k_return_int, None, None, "Returning value from top level nki kernel is not supported",
                   [("return_int", "return"), ("return_int", "3")]),
    "not_written": (k_not_written, None, "err_tensor_output_not_written_to", "'out'",
                    [("not_written_return", "return"), ("not_written_return", "out"),
                     ("not_written_alloc", "nl.ndarray"), ("not_written_alloc", "out")]),
    "arange_1d": (k_arange_1d, None, "err_1d_arange_not_supported", "with 1d arange is not supported",
                  [("arange_1d", "a[i, j]"), ("arange_1d", "nl.load")]),
    "mixed_indexing": (k_mixed_indexing, None, "err_unsupported_mixing_basic_advanced_tensor_indexing",
                       "mixing basic", [("mixed_indexing", "a[i, 0:512]"), ("mixed_indexing", "nl.load")]),
    "256_partitions": (k_256_partitions, None, "err_num_partition_exceed_arch_limit",
                       "number of partitions 256 exceed architecture limitation of 128",
                       [("256_partitions", "nl.ndarray")]),
    "load_from_sbuf": (k_load_from_sbuf, None, "err_unsupported_memory", DOC_UNSUPPORTED_MEMORY,
                       [("load_from_sbuf", "nl.load"), ("load_from_sbuf", "t)")]),
    "hbm_init_value": (k_hbm_init_value, None, "err_hbm_tensor_with_init_value_not_supported",
                       "initial value", [("hbm_init_value", "nl.zeros")]),
    "if_scope": (k_if_scope, None, "err_local_variable_used_out_of_scope",
                 "Local variable 't' is referenced outside of its parent scope",
                 [("if_scope", "nl.store"), ("if_scope", "=t)", 1)]),
    "loop_scope": (k_loop_scope, None, "err_local_variable_used_out_of_scope",
                   "Local variable 't' is referenced outside of its parent scope",
                   [("loop_scope", "nl.store"), ("loop_scope", "=t)", 1)]),
    "nested_grid": (k_nested_grid, None, "err_nested_kernel_with_spmd_grid", "grid",
                    [("nested_grid", "inner_kernel[2](a)")]),
    "shared_hbm_in_loop": (k_shared_hbm_in_loop, None, "err_shared_hbm_must_in_kernel_level",
                           "shared_hbm buffer can only be created top level kernel scope",
                           [("shared_hbm_in_loop", "nl.ndarray")]),
}


# Raised by the return check, after the kernel body has returned.
RAISED_AFTER_RETURN = {"return_int", "not_written"}


def run_kernel(fn, grid, *args):
    kernel = nki.jit(fn)
    return nki.simulate_kernel(kernel[grid] if grid else kernel, *args)


def expected_locations(specs):
    return {loc(*s) for s in specs}


def raise_case(case):
    fn, grid, *_ = CASES[case]
    a = np.zeros((128, 512), np.float32)
    with pytest.raises(nkic.NKIError) as info:
        run_kernel(fn, grid, a)
    return info.value


@pytest.mark.parametrize("case", list(CASES))
def test_error_code_message_and_location(case):
    fn, grid, code, message, locs = CASES[case]
    e = raise_case(case)
    if code is not None:
        assert e.code == code
    assert message in e.message
    assert e.file is not None and os.path.realpath(e.file) == THIS_FILE, e.file
    assert (e.line, e.col) in expected_locations(locs), (e.line, e.col, sorted(expected_locations(locs)))


@pytest.mark.parametrize("case", list(CASES))
def test_error_text_names_user_location_only(case):
    e = raise_case(case)
    text = str(e)
    assert e.message in text
    assert f"{THIS_FILE}:{e.line}:" in text or f"{os.path.basename(THIS_FILE)}:{e.line}:" in text
    for d in NKIC_DIRS:
        assert d not in text
    assert "python/nkic/" not in text and "python/neuronxcc/" not in text


@pytest.mark.parametrize("entry", ["simulate_kernel", "launch"])
@pytest.mark.parametrize("case", list(CASES))
def test_error_traceback_has_no_nkic_frames_below_the_kernel(case, entry):
    fn, grid = CASES[case][:2]
    kernel = nki.jit(fn)
    launch = kernel[grid] if grid else kernel
    a = np.zeros((128, 512), np.float32)
    with pytest.raises(nkic.NKIError) as info:
        if entry == "simulate_kernel":
            nki.simulate_kernel(launch, a)
        else:
            launch(a)
    frames = traceback.extract_tb(info.value.__traceback__)
    where = [(f.filename, f.lineno, f.name) for f in frames]
    # The test's own frame, then nkic's entry frames (the API it called), then user code only.
    assert not in_nkic(frames[0].filename)
    i = 1
    while i < len(frames) and in_nkic(frames[i].filename):
        i += 1
    assert all(not in_nkic(f.filename) for f in frames[i:]), where
    kernel_frames = [f for f in frames if os.path.realpath(f.filename) == THIS_FILE and f.name == fn.__name__]
    assert len(kernel_frames) <= 1, where
    if case not in RAISED_AFTER_RETURN:
        # Raised while the body was traced: the innermost frame is the kernel's offending line.
        last = frames[-1]
        assert os.path.realpath(last.filename) == THIS_FILE and last.name == fn.__name__, where
        assert last.lineno == marker_line(case), where


def test_helper_error_points_at_helper_with_call_site_note():
    e = raise_case("arange_1d")  # sanity: the same error at kernel level has no note
    assert e.notes == []
    a = np.zeros((128, 512), np.float32)
    with pytest.raises(nkic.NKIError) as info:
        run_kernel(k_helper, None, a)
    e = info.value
    assert e.code == "err_1d_arange_not_supported"
    assert os.path.realpath(e.file) == THIS_FILE
    assert (e.line, e.col) in {loc("helper_body", "x[i, j]"), loc("helper_body", "nl.load")}
    assert len(e.notes) == 1
    nfile, nline, ncol, nmsg = e.notes[0]
    assert os.path.realpath(nfile) == THIS_FILE
    assert (nline, ncol) == loc("helper_call", "load_rows(a)")
    assert "load_rows" in nmsg
    text = str(e)
    assert f":{nline}:" in text and nmsg in text
    frames = traceback.extract_tb(e.__traceback__)
    first = next(i for i, f in enumerate(frames) if f.name == "k_helper")
    assert [f.name for f in frames[first:]] == ["k_helper", "load_rows"]


def test_static_if_body_is_not_a_scope():
    # The old if_scope kernel (a tensor made in a static `if`, used after it) is legal.
    a = np.random.default_rng(0).random((128, 512), dtype=np.float32)
    np.testing.assert_array_equal(run_kernel(k_static_if_no_scope, None, a), a)


def test_errors_are_python_exception_kinds():
    # Diagnostics are also the builtin exception kinds that neuronx-cc raises.
    assert isinstance(raise_case("and"), ValueError)
    assert isinstance(raise_case("256_partitions"), SyntaxError)


OUTSIDE_CALLS = {
    "nl.load": lambda a: nl.load(a),
    "nl.store": lambda a: nl.store(a, value=a),
    "nl.add": lambda a: nl.add(a, a),
    "nl.exp": lambda a: nl.exp(a),
    "nl.ndarray": lambda a: nl.ndarray((128, 512), dtype=nl.float32),
    "nl.zeros": lambda a: nl.zeros((128, 512), dtype=nl.float32),
    "nl.arange": lambda a: nl.arange(128),
    "nl.program_id": lambda a: nl.program_id(0),
    "nl.num_programs": lambda a: nl.num_programs(0),
}


@pytest.mark.parametrize("api", list(OUTSIDE_CALLS))
def test_api_outside_kernel(api):
    a = np.zeros((128, 512), np.float32)
    with pytest.raises(nkic.NKIError) as info:
        OUTSIDE_CALLS[api](a)
    e = info.value
    assert e.code == "err_nki_api_outside_of_nki_kernel"
    assert f"'{api}'" in e.message
