"""Loop structure in the IR (seed 003's decision tree), one iterator at a time:

* nl.static_range: unrolled at trace time, N copies of the body, no `for` line,
  the loop variable a Python int (usable as a list index);
* nl.affine_range / nl.sequential_range: one deferred axis, the body traced
  once, `for v in affine_range(lb, ub, stride)` vs `sequential_range(...)`;
* a builtin range(): sequential_range by default, unrolled with the
  trace_time_unroll_builtin_range option (global or on @nki.jit);
* range-like arguments (stop | start, stop | start, stop, step; negative step;
  empty: the body is never traced; one trip: the trivial loop, no axis, the
  variable is the Python int lb);
* iterators picked through an alias, nested loops mixing kinds, loop
  directives on the for line, the static_range unroll warning;
* break/continue in a deferred loop (err_break_in_deferred_loop) and a symbolic
  loop variable where Python needs an int (err_symbolic_value_used_as_python_int);
* Python-side accumulation inside a deferred loop runs once (the body is traced once).

Expected lines are found through `# L:<name>` marker comments."""
import os
import re
import warnings

import numpy as np
import pytest

import nkic
import nkic._kernel
import nkic._loops
from neuronxcc import nki
import neuronxcc.nki.compiler as ncc
import neuronxcc.nki.language as nl

THIS_FILE = os.path.realpath(__file__)
with open(THIS_FILE) as _f:
    SOURCE = _f.read().splitlines()


def marker_line(name):
    tag = f"# L:{name}"
    hits = [i for i, l in enumerate(SOURCE, 1) if l.rstrip().endswith(tag)]
    assert len(hits) == 1, f"marker {tag!r} found {len(hits)} times"
    return hits[0]


A = np.zeros((128, 512), np.float32)
A_ROWS = np.zeros((1024, 64), np.float32)


def trace(fn, *args, **kwargs):
    kernel = fn if isinstance(fn, nkic.TraceKernel) else nki.jit(fn)
    return kernel.trace(None, args, kwargs).ir


def ir_text(fn, *args, **kwargs):
    return trace(fn, *args, **kwargs).text(False)


def body_lines(text):
    """The statement lines of the kernel body (tensor declarations dropped)."""
    return [l for l in text.splitlines()[1:] if not l.strip().startswith("tensor ")]


def for_lines(text):
    return [l.strip() for l in text.splitlines() if l.strip().startswith("for ")]


def indent(line):
    return len(line) - len(line.lstrip())


def instr_lines(text):
    return [l for l in body_lines(text) if not l.strip().startswith("for ")]


@pytest.fixture
def restore_options():
    saved_opts = dict(nkic._kernel._options)
    saved_threshold = dict(nkic._loops.UNROLL_WARNING_THRESHOLD)
    yield
    nkic._kernel._options.clear()
    nkic._kernel._options.update(saved_opts)
    nkic._loops.UNROLL_WARNING_THRESHOLD.clear()
    nkic._loops.UNROLL_WARNING_THRESHOLD.update(saved_threshold)


# ---------------------------------------------------------------- static_range

SEEN = []


def k_static(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    cols = [0, 128, 256, 384]
    for s in nl.static_range(4):
        SEEN.append(s)
        c = cols[s]  # a Python int indexes a Python list
        t = nl.load(a[0:128, c:c + 128])
        nl.store(out[0:128, c:c + 128], value=t)
    return out


def test_static_range_unrolls_n_copies_without_a_loop_axis():
    SEEN.clear()
    ir = trace(k_static, A)
    text = ir.text(False)
    assert for_lines(text) == []
    assert not any("_range" in l for l in body_lines(text))
    assert ir.num_instructions() == 8  # 4 x (load, store)
    assert SEEN == [0, 1, 2, 3]
    assert all(type(s) is int for s in SEEN)
    loads = [l.strip() for l in instr_lines(text) if "load[dma](" in l]
    stores = [l.strip() for l in instr_lines(text) if "store[dma](" in l]
    assert len(loads) == 4 and len(stores) == 4
    # Each copy has its own concrete column offset, no loop variable.
    for c, l in zip([0, 128, 256, 384], loads):
        assert l.endswith(f"load[dma](a[i0, i1{f' + {c}' if c else ''}]) iter=[128, 128]"), l
    for c, l in zip([0, 128, 256, 384], stores):
        assert f"out[i0, i1{f' + {c}' if c else ''}] = store[dma](" in l, l
    # Every copy allocates its own tile (no buffer reuse implied by an axis).
    assert len({l.split("[")[0] for l in loads}) == 4
    # All at kernel level.
    assert {indent(l) for l in body_lines(text)} == {2}


def test_static_range_simulates():
    a = np.random.default_rng(0).standard_normal((128, 512)).astype(np.float32)
    assert np.array_equal(nki.simulate_kernel(nki.jit(k_static), a), a)


# ---------------------------------------------------------------- affine / sequential

def k_affine(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):  # L:affine
        SEEN.append(i)
        t = nl.load(a[0:128, i * 128:(i + 1) * 128])
        nl.store(out[0:128, i * 128:(i + 1) * 128], value=t)
    return out


def k_sequential(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.sequential_range(4):  # L:sequential
        SEEN.append(i)
        t = nl.load(a[0:128, i * 128:(i + 1) * 128])
        nl.store(out[0:128, i * 128:(i + 1) * 128], value=t)
    return out


@pytest.mark.parametrize("fn,kind", [(k_affine, "affine"), (k_sequential, "sequential")])
def test_deferred_range_is_one_axis_with_the_body_once(fn, kind):
    SEEN.clear()
    ir = trace(fn, A)
    text = ir.text(False)
    assert for_lines(text) == [f"for i in {kind}_range(0, 4, 1)"]
    other = "sequential" if kind == "affine" else "affine"
    assert f"{other}_range" not in text
    assert ir.num_instructions() == 2  # the body, once
    assert len(SEEN) == 1 and not isinstance(SEEN[0], int)  # one symbolic variable
    lines = body_lines(text)
    loop = next(n for n, l in enumerate(lines) if l.strip().startswith("for "))
    body = lines[loop + 1:]
    assert len(body) == 2 and all(indent(l) > indent(lines[loop]) for l in body)
    assert "load[dma](a[i0, i1 + 128*i])" in body[0]
    assert body[1].strip().startswith("out[i0, i1 + 128*i] = store[dma](")


@pytest.mark.parametrize("fn,name", [(k_affine, "affine"), (k_sequential, "sequential")])
def test_deferred_range_for_line_points_at_the_user_loop(fn, name):
    text = trace(fn, A).text(True)
    line = next(l for l in text.splitlines() if l.strip().startswith("for "))
    m = re.search(r"@ (\S+):(\d+):(\d+)\s*$", line)
    assert m, line
    assert os.path.realpath(m.group(1)) == THIS_FILE
    assert int(m.group(2)) == marker_line(name)


@pytest.mark.parametrize("fn", [k_affine, k_sequential])
def test_deferred_range_simulates(fn):
    a = np.random.default_rng(1).standard_normal((128, 512)).astype(np.float32)
    assert np.array_equal(nki.simulate_kernel(nki.jit(fn), a), a)


# ---------------------------------------------------------------- builtin range

def k_builtin(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    cols = [0, 128, 256, 384]
    for i in range(4):
        SEEN.append(i)
        t = nl.load(a[0:128, i * 128:(i + 1) * 128])
        nl.store(out[0:128, i * 128:(i + 1) * 128], value=t)
    return out


k_builtin_unrolled = nki.jit(k_builtin, trace_time_unroll_builtin_range=True)


@nki.jit(trace_time_unroll_builtin_range=True)
def k_builtin_unrolled_decorated(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    cols = [0, 128, 256, 384]
    for i in range(4):
        c = cols[i]  # a Python int when unrolled
        t = nl.load(a[0:128, c:c + 128])
        nl.store(out[0:128, c:c + 128], value=t)
    return out


def assert_unrolled_copy(text):
    assert for_lines(text) == []
    assert not any("_range" in l for l in body_lines(text))
    loads = [l.strip() for l in instr_lines(text) if "load[dma](" in l]
    assert len(loads) == 4
    for c, l in zip([0, 128, 256, 384], loads):
        assert l.endswith(f"load[dma](a[i0, i1{f' + {c}' if c else ''}]) iter=[128, 128]"), l


def test_builtin_range_is_sequential_by_default(restore_options):
    assert nkic._kernel._options["trace_time_unroll_builtin_range"] is False
    SEEN.clear()
    ir = trace(k_builtin, A)
    text = ir.text(False)
    assert for_lines(text) == ["for i in sequential_range(0, 4, 1)"]
    assert "affine_range" not in text
    assert ir.num_instructions() == 2
    assert len(SEEN) == 1 and not isinstance(SEEN[0], int)


def test_builtin_range_unrolls_with_the_global_option(restore_options):
    nkic.set_option("trace_time_unroll_builtin_range", True)
    SEEN.clear()
    ir = trace(k_builtin, A)
    assert_unrolled_copy(ir.text(False))
    assert ir.num_instructions() == 8
    assert SEEN == [0, 1, 2, 3] and all(type(s) is int for s in SEEN)
    # Back to the default: sequential again (the option is read at each trace).
    nkic.set_option("trace_time_unroll_builtin_range", False)
    assert for_lines(ir_text(k_builtin, A)) == ["for i in sequential_range(0, 4, 1)"]


def test_builtin_range_unrolls_with_the_decorator_keyword(restore_options):
    assert nkic._kernel._options["trace_time_unroll_builtin_range"] is False
    SEEN.clear()
    assert_unrolled_copy(ir_text(k_builtin_unrolled, A))
    assert SEEN == [0, 1, 2, 3]
    assert_unrolled_copy(ir_text(k_builtin_unrolled_decorated, A))
    # The keyword is per kernel: the same function without it stays sequential.
    assert for_lines(ir_text(k_builtin, A)) == ["for i in sequential_range(0, 4, 1)"]


def test_decorator_keyword_false_overrides_the_global_option(restore_options):
    nkic.set_option("trace_time_unroll_builtin_range", True)
    k = nki.jit(k_builtin, trace_time_unroll_builtin_range=False)
    assert for_lines(ir_text(k, A)) == ["for i in sequential_range(0, 4, 1)"]


def test_unknown_option_is_rejected(restore_options):
    with pytest.raises(nkic.NKIError) as info:
        nkic.set_option("trace_time_unroll_builtin_rnage", True)
    assert info.value.code == "err_unsupported_args"
    assert info.value.message == ("unsupported arguments to 'nkic.set_option': unknown option "
                                  "'trace_time_unroll_builtin_rnage'; did you mean 'trace_time_unroll_builtin_range'?")
    assert info.value.file == __file__


def test_builtin_range_both_ways_simulate_equal(restore_options):
    a = np.random.default_rng(2).standard_normal((128, 512)).astype(np.float32)
    seq = nki.simulate_kernel(nki.jit(k_builtin), a)
    unr = nki.simulate_kernel(k_builtin_unrolled, a)
    assert np.array_equal(seq, a) and np.array_equal(unr, a)


def test_range_outside_a_kernel_is_plain_python():
    # The loop hook only changes loops while a kernel is traced.
    assert list(nl.static_range(2, 5)) == [2, 3, 4]


# ---------------------------------------------------------------- range-like arguments

def k_range_args(a, it, args):
    out = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.shared_hbm)
    t0 = nl.load(a[0:128, 0:64])
    nl.store(out, value=t0)  # the output is written even if the loop body is not
    for i in it(*args):
        SEEN.append(i)
        t = nl.load(a[i * 128:i * 128 + 128, 0:64])
        nl.store(out, value=t)
    return out


ITERATORS = [pytest.param(nl.affine_range, "affine", id="affine"),
             pytest.param(nl.sequential_range, "sequential", id="sequential"),
             pytest.param(range, "sequential", id="builtin")]


@pytest.mark.parametrize("it,kind", ITERATORS)
@pytest.mark.parametrize("args,header", [
    ((5,), "(0, 5, 1)"),
    ((2, 6), "(2, 6, 1)"),
    ((1, 8, 3), "(1, 8, 3)"),
    ((6, 0, -2), "(6, 0, -2)"),
    ((7, -1, -1), "(7, -1, -1)"),
])
def test_range_like_arguments(it, kind, args, header):
    SEEN.clear()
    ir = trace(k_range_args, A_ROWS, it=it, args=args)
    text = ir.text(False)
    assert for_lines(text) == [f"for i in {kind}_range{header}"]
    assert ir.num_instructions() == 4
    assert len(SEEN) == 1


@pytest.mark.parametrize("args,values", [
    ((5,), [0, 1, 2, 3, 4]),
    ((2, 6), [2, 3, 4, 5]),
    ((1, 8, 3), [1, 4, 7]),
    ((6, 0, -2), [6, 4, 2]),
    ((7, -1, -1), [7, 6, 5, 4, 3, 2, 1, 0]),
])
def test_static_range_like_arguments(args, values):
    SEEN.clear()
    ir = trace(k_range_args, A_ROWS, it=nl.static_range, args=args)
    assert for_lines(ir.text(False)) == []
    assert SEEN == values
    assert ir.num_instructions() == 2 + 2 * len(values)
    offsets = [int(m) if m else 0 for m in re.findall(r"load\[dma\]\(a\[i0(?: \+ (\d+))?, i1\]\)", ir.text(False))]
    assert offsets == [0] + [128 * v for v in values]


@pytest.mark.parametrize("it", [nl.affine_range, nl.sequential_range, range, nl.static_range])
@pytest.mark.parametrize("args", [(0,), (3, 3), (5, 2), (0, 4, -1), (-2,)])
def test_empty_range_body_is_never_traced(it, args):
    SEEN.clear()
    ir = trace(k_range_args, A_ROWS, it=it, args=args)
    text = ir.text(False)
    assert SEEN == []
    assert for_lines(text) == []
    assert ir.num_instructions() == 2  # just the writes before the loop


@pytest.mark.parametrize("it", [nl.affine_range, nl.sequential_range, range, nl.static_range])
@pytest.mark.parametrize("args,lb", [((1,), 0), ((3, 4), 3), ((5, 6, 7), 5), ((4, 3, -1), 4), ((2, 0, -5), 2)])
def test_one_trip_is_the_trivial_loop(it, args, lb):
    SEEN.clear()
    ir = trace(k_range_args, A_ROWS, it=it, args=args)
    text = ir.text(False)
    assert for_lines(text) == []  # no axis
    assert not any("_range" in l for l in body_lines(text))
    assert SEEN == [lb] and type(SEEN[0]) is int  # the variable is the Python int lb
    assert ir.num_instructions() == 4
    assert f"load[dma](a[i0 + {128 * lb}, i1])" in text if lb else "load[dma](a[i0, i1])" in text
    assert {indent(l) for l in body_lines(text)} == {2}


def k_zero_trip_only_writer(a, it):
    out = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.shared_hbm)  # L:zero_trip_out
    for i in it(0):
        t = nl.load(a[i * 128:(i + 1) * 128, 0:64])
        nl.store(out, value=t)
    return out


@pytest.mark.parametrize("it", [nl.affine_range, nl.sequential_range, range, nl.static_range])
def test_zero_trip_loop_leaves_its_output_unwritten(it):
    # NKI_API.md §7.1: err_tensor_output_not_written_to, "e.g. zero-trip loop".
    with pytest.raises(nkic.NKIError) as info:
        trace(k_zero_trip_only_writer, A_ROWS, it=it)
    assert info.value.code == "err_tensor_output_not_written_to"
    assert info.value.line == marker_line("zero_trip_out")


def k_bad_range_args(a, it, args):
    out = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.shared_hbm)
    t0 = nl.load(a[0:128, 0:64])
    nl.store(out, value=t0)
    for i in it(*args):  # L:bad_range_args
        t = nl.load(a[0:128, 0:64])
        nl.store(out, value=t)
    return out


@pytest.mark.parametrize("it", [nl.affine_range, nl.sequential_range, nl.static_range])
@pytest.mark.parametrize("args,kind,text", [
    ((0, 4, 0), ValueError, "step must not be zero"),
    ((), TypeError, "got 0"),
    ((1, 2, 3, 4), TypeError, "got 4"),
    ((4.0,), TypeError, ""),
    ((0, 4, 1.5), TypeError, ""),
])
def test_invalid_range_arguments(it, args, kind, text):
    with pytest.raises(nkic.NKIError) as info:
        trace(k_bad_range_args, A_ROWS, it=it, args=args)
    e = info.value
    assert e.code == "err_invalid_range_args"
    assert text in e.message
    assert isinstance(e, kind)
    assert os.path.realpath(e.file) == THIS_FILE
    assert e.line == marker_line("bad_range_args")


def test_numpy_integer_bounds_are_ints():
    ir = trace(k_range_args, A_ROWS, it=nl.affine_range, args=(np.int64(1), np.int32(7), np.int64(2)))
    assert for_lines(ir.text(False)) == ["for i in affine_range(1, 7, 2)"]


def test_trivial_loop_simulates():
    a = np.random.default_rng(3).standard_normal((1024, 64)).astype(np.float32)
    out = nki.simulate_kernel(nki.jit(k_range_args), a, it=nl.affine_range, args=(3, 4))
    assert np.array_equal(out, a[384:512])


def test_negative_step_simulates_in_order():
    # sequential_range(7, -1, -1): the last store is iteration 0's.
    a = np.random.default_rng(4).standard_normal((1024, 64)).astype(np.float32)
    out = nki.simulate_kernel(nki.jit(k_range_args), a, it=nl.sequential_range, args=(7, -1, -1))
    assert np.array_equal(out, a[0:128])
    out = nki.simulate_kernel(nki.jit(k_range_args), a, it=nl.sequential_range, args=(0, 8, 1))
    assert np.array_equal(out, a[896:1024])


def test_range_bounds_from_tensor_shapes():
    # Bounds are usually computed from shapes: Python ints at trace time.
    def k(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        for i in nl.affine_range(a.shape[0] // 128):
            t = nl.load(a[i * 128:(i + 1) * 128, :])
            nl.store(out[i * 128:(i + 1) * 128, :], value=t)
        return out
    assert for_lines(ir_text(k, A_ROWS)) == ["for i in affine_range(0, 8, 1)"]


# ---------------------------------------------------------------- iterator alias

def k_alias(a, flag):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    _range = nl.sequential_range if flag else nl.affine_range
    for i in _range(4):
        t = nl.load(a[0:128, i * 128:(i + 1) * 128])
        nl.store(out[0:128, i * 128:(i + 1) * 128], value=t)
    return out


def k_alias_three(a, kind):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    _range = {"affine": nl.affine_range, "sequential": nl.sequential_range, "static": nl.static_range,
              "builtin": range}[kind]
    for i in _range(4):
        t = nl.load(a[0:128, i * 128:(i + 1) * 128])
        nl.store(out[0:128, i * 128:(i + 1) * 128], value=t)
    return out


def test_iterator_chosen_through_an_alias():
    assert for_lines(ir_text(k_alias, A, flag=True)) == ["for i in sequential_range(0, 4, 1)"]
    assert for_lines(ir_text(k_alias, A, flag=False)) == ["for i in affine_range(0, 4, 1)"]


@pytest.mark.parametrize("kind,expected", [("affine", ["for i in affine_range(0, 4, 1)"]),
                                           ("sequential", ["for i in sequential_range(0, 4, 1)"]),
                                           ("builtin", ["for i in sequential_range(0, 4, 1)"]),
                                           ("static", [])])
def test_iterator_chosen_through_a_table(kind, expected):
    ir = trace(k_alias_three, A, kind=kind)
    assert for_lines(ir.text(False)) == expected
    assert ir.num_instructions() == (8 if kind == "static" else 2)


def test_range_object_built_before_the_loop():
    # The iterator object may be created ahead of the `for` statement.
    def k(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        rng = nl.sequential_range(1, 4)
        for j in rng:
            t = nl.load(a[0:128, j * 128:(j + 1) * 128])
            nl.store(out[0:128, j * 128:(j + 1) * 128], value=t)
        t0 = nl.load(a[0:128, 0:128])
        nl.store(out[0:128, 0:128], value=t0)
        return out
    assert for_lines(ir_text(k, A)) == ["for j in sequential_range(1, 4, 1)"]


# ---------------------------------------------------------------- nesting

def k_nested(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(2):  # L:nested_i
        for j in nl.sequential_range(2):  # L:nested_j
            for s in nl.static_range(2):
                SEEN.append((i, j, s))
                r = i * 64 + j * 32 + s * 16
                t = nl.load(a[r:r + 16, 0:512])
                nl.store(out[r:r + 16, 0:512], value=t)
    return out


def test_nested_loops_mixing_kinds():
    SEEN.clear()
    ir = trace(k_nested, A)
    text = ir.text(False)
    lines = body_lines(text)
    assert [l.strip() for l in lines if l.strip().startswith("for ")] == [
        "for i in affine_range(0, 2, 1)", "for j in sequential_range(0, 2, 1)"]
    fi = next(n for n, l in enumerate(lines) if "for i in" in l)
    fj = next(n for n, l in enumerate(lines) if "for j in" in l)
    assert fi < fj and indent(lines[fj]) > indent(lines[fi])
    inner = lines[fj + 1:]
    # The static innermost loop: two copies inside the sequential axis.
    assert len(inner) == 4 and all(indent(l) > indent(lines[fj]) for l in inner)
    assert "load[dma](a[i0 + 64*i + 32*j, i1])" in inner[0]
    assert "load[dma](a[i0 + 64*i + 32*j + 16, i1])" in inner[2]
    assert ir.num_instructions() == 4
    assert len(SEEN) == 2
    assert [s for (_, _, s) in SEEN] == [0, 1]
    assert all(not isinstance(i, int) and not isinstance(j, int) for (i, j, _) in SEEN)


def test_nested_loop_lines_point_at_their_for_statements():
    text = trace(k_nested, A).text(True)
    for var, name in (("i", "nested_i"), ("j", "nested_j")):
        line = next(l for l in text.splitlines() if l.strip().startswith(f"for {var} in"))
        m = re.search(r":(\d+):\d+\s*$", line)
        assert m and int(m.group(1)) == marker_line(name), line


def test_nested_loops_simulate():
    a = np.random.default_rng(5).standard_normal((128, 512)).astype(np.float32)
    assert np.array_equal(nki.simulate_kernel(nki.jit(k_nested), a), a)


def k_static_outer(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for s in nl.static_range(2):
        for i in nl.affine_range(2):
            r = s * 64 + i * 32
            t = nl.load(a[r:r + 32, 0:512])
            nl.store(out[r:r + 32, 0:512], value=t)
    return out


def test_static_outer_replays_the_deferred_inner_axis():
    ir = trace(k_static_outer, A)
    text = ir.text(False)
    fl = for_lines(text)
    assert len(fl) == 2 and all(re.fullmatch(r"for i\S* in affine_range\(0, 2, 1\)", l) for l in fl), fl
    assert fl[0] != fl[1]  # two distinct axes
    assert "load[dma](a[i0 + 32*i, i1])" in text
    assert re.search(r"load\[dma\]\(a\[i0 \+ 32\*i\S* \+ 64, i1\]\)", text)
    assert ir.num_instructions() == 4
    a = np.random.default_rng(6).standard_normal((128, 512)).astype(np.float32)
    assert np.array_equal(nki.simulate_kernel(nki.jit(k_static_outer), a), a)


def test_deferred_loops_over_a_helper_function():
    def copy_tile(a, out, r):
        t = nl.load(a[r:r + 32, 0:512])
        nl.store(out[r:r + 32, 0:512], value=t)

    def k(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        for i in nl.affine_range(4):
            copy_tile(a, out, i * 32)
        return out
    ir = trace(k, A)
    assert for_lines(ir.text(False)) == ["for i in affine_range(0, 4, 1)"]
    assert ir.num_instructions() == 2


# ---------------------------------------------------------------- directives

def k_directives(a, it, directives):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in it(4, directives=directives):
        t = nl.load(a[0:128, i * 128:(i + 1) * 128])
        nl.store(out[0:128, i * 128:(i + 1) * 128], value=t)
    return out


@pytest.mark.parametrize("it,kind", [(nl.affine_range, "affine"), (nl.sequential_range, "sequential")])
def test_loop_directives_on_the_for_line(it, kind):
    text = ir_text(k_directives, A, it=it, directives=[ncc.multi_buffer(2), ncc.no_reorder()])
    assert for_lines(text) == [f"for i in {kind}_range(0, 4, 1) multi_buffer=2 no_reorder=true"]
    # Order-independent (sorted by kind) and the last directive of a kind wins.
    text = ir_text(k_directives, A, it=it, directives=[ncc.no_reorder(), ncc.multi_buffer(2), ncc.multi_buffer(4)])
    assert for_lines(text) == [f"for i in {kind}_range(0, 4, 1) multi_buffer=4 no_reorder=true"]
    text = ir_text(k_directives, A, it=it, directives=[])
    assert for_lines(text) == [f"for i in {kind}_range(0, 4, 1)"]


def test_directives_do_not_change_the_results():
    a = np.random.default_rng(7).standard_normal((128, 512)).astype(np.float32)
    out = nki.simulate_kernel(nki.jit(k_directives), a, it=nl.affine_range,
                              directives=[ncc.multi_buffer(2), ncc.no_reorder()])
    assert np.array_equal(out, a)


# ---------------------------------------------------------------- static_range unroll warning

def k_big_unroll(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for s in nl.static_range(4):  # L:big_unroll
        t = nl.load(a[0:128, s * 128:(s + 1) * 128])
        nl.store(out[0:128, s * 128:(s + 1) * 128], value=t)
    return out


def loop_warnings(record):
    return [w for w in record if "static_range unrolled" in str(w.message)]


def test_static_range_unroll_warning_above_the_threshold(restore_options):
    nkic._loops.UNROLL_WARNING_THRESHOLD["instructions"] = 5
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        trace(k_big_unroll, A)
    ws = loop_warnings(record)
    assert len(ws) == 1
    w = ws[0]
    assert issubclass(w.category, UserWarning)
    assert str(w.message).startswith("static_range unrolled 4 iterations into 8 instructions (more than 5)")
    assert "nl.affine_range or nl.sequential_range" in str(w.message)
    assert os.path.realpath(w.filename) == THIS_FILE
    assert w.lineno == marker_line("big_unroll")


def test_static_range_unroll_warning_threshold_is_exclusive(restore_options):
    nkic._loops.UNROLL_WARNING_THRESHOLD["instructions"] = 8
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        trace(k_big_unroll, A)
    assert loop_warnings(record) == []


def test_no_unroll_warning_at_the_default_threshold_or_for_deferred_loops(restore_options):
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        trace(k_big_unroll, A)
    assert loop_warnings(record) == []
    nkic._loops.UNROLL_WARNING_THRESHOLD["instructions"] = 0
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        trace(k_affine, A)
        trace(k_sequential, A)
        trace(k_builtin, A)
    assert loop_warnings(record) == []


def test_unrolled_builtin_range_warns_like_static_range(restore_options):
    nkic._loops.UNROLL_WARNING_THRESHOLD["instructions"] = 5
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        trace(k_builtin_unrolled, A)
    ws = loop_warnings(record)
    assert len(ws) == 1 and "unrolled 4 iterations into 8 instructions" in str(ws[0].message)


# ---------------------------------------------------------------- break / continue

def k_break_affine(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):
        t = nl.load(a[0:128, i * 128:(i + 1) * 128])
        nl.store(out[0:128, i * 128:(i + 1) * 128], value=t)
        break  # L:break_affine
    return out


def k_continue_sequential(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.sequential_range(4):
        t = nl.load(a[0:128, i * 128:(i + 1) * 128])
        nl.store(out[0:128, i * 128:(i + 1) * 128], value=t)
        continue  # L:continue_sequential
    return out


def k_break_builtin(a, stop):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in range(4):
        t = nl.load(a[0:128, i * 128:(i + 1) * 128])
        nl.store(out[0:128, i * 128:(i + 1) * 128], value=t)
        if stop:
            break  # L:break_builtin
    return out


def k_break_in_nested_deferred(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for s in nl.static_range(2):
        for i in nl.affine_range(2):
            r = s * 64 + i * 32
            t = nl.load(a[r:r + 32, 0:512])
            nl.store(out[r:r + 32, 0:512], value=t)
            break  # L:break_nested
    return out


@pytest.mark.parametrize("fn,statement,marker,kwargs", [
    (k_break_affine, "break", "break_affine", {}),
    (k_continue_sequential, "continue", "continue_sequential", {}),
    (k_break_builtin, "break", "break_builtin", {"stop": True}),
    (k_break_in_nested_deferred, "break", "break_nested", {}),
])
def test_break_or_continue_in_a_deferred_loop_is_an_error(fn, statement, marker, kwargs):
    with pytest.raises(nkic.NKIError) as info:
        trace(fn, A, **kwargs)
    e = info.value
    assert e.code == "err_break_in_deferred_loop"
    assert e.message.startswith(f"'{statement}' inside an nl.affine_range / nl.sequential_range loop")
    assert os.path.realpath(e.file) == THIS_FILE
    assert e.line == marker_line(marker)
    assert isinstance(e, SyntaxError)


def test_break_in_an_unrolled_builtin_range_is_plain_python(restore_options):
    nkic.set_option("trace_time_unroll_builtin_range", True)
    ir = trace(k_break_builtin, A, stop=True)
    assert ir.num_instructions() == 2  # one copy, then break


def k_break_in_static_inside_affine(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(2):
        for s in nl.static_range(4):
            if s == 2:
                break
            r = i * 64 + s * 16
            t = nl.load(a[r:r + 16, 0:512])
            nl.store(out[r:r + 16, 0:512], value=t)
        for c in [0, 1, 2]:
            if c == 1:
                continue
            r = i * 64 + 32 + c * 8
            t = nl.load(a[r:r + 16, 0:512])
            nl.store(out[r:r + 16, 0:512], value=t)
        k = 0
        while True:
            k = k + 1
            if k >= 1:
                break
    return out


def test_break_and_continue_in_static_or_list_loops_inside_a_deferred_loop():
    ir = trace(k_break_in_static_inside_affine, A)
    text = ir.text(False)
    assert for_lines(text) == ["for i in affine_range(0, 2, 1)"]
    loads = [l.strip() for l in instr_lines(text) if "load[dma](" in l]
    assert [re.search(r"load\[dma\]\(a\[(.*?), i1\]\)", l).group(1) for l in loads] == [
        "i0 + 64*i", "i0 + 64*i + 16", "i0 + 64*i + 32", "i0 + 64*i + 48"]
    assert ir.num_instructions() == 8


def copy_two_of_four(a, out, i):
    """A helper with its own static loop that breaks (plain Python)."""
    for s in nl.static_range(4):
        if s == 2:
            break
        r = i * 32 + s * 16
        t = nl.load(a[r:r + 16, 0:512])
        nl.store(out[r:r + 16, 0:512], value=t)


def k_helper_static_break_in_affine(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):
        copy_two_of_four(a, out, i)
    return out


def test_break_in_a_helpers_static_loop_called_from_a_deferred_loop():
    # The helper's loop is the innermost loop being run: its break is legal,
    # whatever loop of the kernel encloses the call.
    ir = trace(k_helper_static_break_in_affine, A)
    text = ir.text(False)
    assert for_lines(text) == ["for i in affine_range(0, 4, 1)"]
    assert ir.num_instructions() == 4


def copy_rows_deferred_break(a, out):
    for j in nl.sequential_range(2):
        t = nl.load(a[j * 64:(j + 1) * 64, 0:512])
        nl.store(out[j * 64:(j + 1) * 64, 0:512], value=t)
        break  # L:helper_break


def k_helper_deferred_break(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for s in nl.static_range(1):
        copy_rows_deferred_break(a, out)
    return out


def test_break_in_a_helpers_deferred_loop_is_an_error():
    with pytest.raises(nkic.NKIError) as info:
        trace(k_helper_deferred_break, A)
    e = info.value
    assert e.code == "err_break_in_deferred_loop"
    assert e.line == marker_line("helper_break")


# ---------------------------------------------------------------- symbolic loop variables

def k_list_index(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    cols = [0, 128, 256, 384]
    for i in nl.affine_range(4):
        c = cols[i]  # L:list_index
        t = nl.load(a[0:128, c:c + 128])
        nl.store(out[0:128, c:c + 128], value=t)
    return out


def k_range_of_loop_var(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.sequential_range(4):
        for j in range(i):  # L:range_of_var
            t = nl.load(a[0:128, j * 128:(j + 1) * 128])
            nl.store(out[0:128, j * 128:(j + 1) * 128], value=t)
    return out


def k_nki_range_bound_of_loop_var(a, it):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):
        for j in it(i):  # L:nki_range_of_var
            t = nl.load(a[0:128, j * 128:(j + 1) * 128])
            nl.store(out[0:128, j * 128:(j + 1) * 128], value=t)
    return out


def k_int_of_loop_var(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in range(4):
        c = int(i)  # L:int_of_var
        t = nl.load(a[0:128, c * 128:(c + 1) * 128])
        nl.store(out[0:128, c * 128:(c + 1) * 128], value=t)
    return out


@pytest.mark.parametrize("fn,marker", [(k_list_index, "list_index"), (k_range_of_loop_var, "range_of_var"),
                                       (k_int_of_loop_var, "int_of_var")])
def test_symbolic_loop_variable_used_as_python_int(fn, marker):
    with pytest.raises(nkic.NKIError) as info:
        trace(fn, A)
    e = info.value
    assert e.code == "err_symbolic_value_used_as_python_int"
    assert "cannot be used where Python needs an int" in e.message
    assert os.path.realpath(e.file) == THIS_FILE
    assert e.line == marker_line(marker)


@pytest.mark.parametrize("it", [nl.affine_range, nl.sequential_range, nl.static_range])
def test_symbolic_loop_variable_as_an_nki_range_bound(it):
    # An nl.*_range bound is a constant slot of an NKI API (seed 004's
    # assert_constant_value), reported at the user's loop, not a bare TypeError.
    with pytest.raises(nkic.NKIError) as info:
        trace(k_nki_range_bound_of_loop_var, A, it=it)
    e = info.value
    assert e.code == "err_expected_constant_value"
    assert e.message == ("expected a compile-time constant value, but got the index expression `L0`: its value "
                         "comes from a loop variable (nl.affine_range / nl.sequential_range / range)")
    assert e.api == "nl." + it.__name__
    assert os.path.realpath(e.file) == THIS_FILE
    assert e.line == marker_line("nki_range_of_var")


def k_program_id_bound(a, it):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for j in it(nl.program_id(0) + 1):  # L:pid_bound
        t = nl.load(a[0:128, j * 128:(j + 1) * 128])
        nl.store(out[0:128, j * 128:(j + 1) * 128], value=t)
    return out


@pytest.mark.parametrize("it", [nl.affine_range, nl.sequential_range, nl.static_range, range])
def test_program_id_as_a_loop_bound(it):
    with pytest.raises(nkic.NKIError) as info:
        nki.jit(k_program_id_bound).trace((2,), (A,), {"it": it})
    e = info.value
    # builtin range is the user's Python; nl.*_range bounds are API constants
    assert e.code == ("err_symbolic_value_used_as_python_int" if it is range else "err_expected_constant_value")
    assert e.line == marker_line("pid_bound")


def k_loop_var_after_loop(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):
        t = nl.load(a[0:128, i * 128:(i + 1) * 128])
        nl.store(out[0:128, i * 128:(i + 1) * 128], value=t)
    t2 = nl.load(a[0:128, i * 128:(i + 1) * 128])  # L:var_after_loop
    nl.store(out[0:128, 0:128], value=t2)
    return out


def test_deferred_loop_variable_used_after_its_loop():
    # After the loop there is no axis: the symbolic variable means nothing, so
    # the trace must reject it at the user's line (as a tensor made in the loop
    # would be, err_local_variable_used_out_of_scope), not hand the simulator
    # malformed IR.
    with pytest.raises(nkic.NKIError) as info:
        trace(k_loop_var_after_loop, A)
    e = info.value
    assert e.code == "err_local_variable_used_out_of_scope"
    assert os.path.realpath(e.file) == THIS_FILE
    assert e.line == marker_line("var_after_loop")


def test_static_loop_variable_after_its_loop_is_the_last_int():
    def k(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        for s in nl.static_range(4):
            t = nl.load(a[0:128, s * 128:(s + 1) * 128])
            nl.store(out[0:128, s * 128:(s + 1) * 128], value=t)
        COUNTS.append(s)
        return out
    COUNTS.clear()
    trace(k, A)
    assert COUNTS == [3]


def test_list_index_with_static_range_is_fine():
    # The GOTCHA of seed 003 §3: static_range gives ints where Python needs them.
    def k(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        tiles = []
        for s in nl.static_range(4):
            tiles.append(nl.load(a[0:128, s * 128:(s + 1) * 128]))
        for s in nl.static_range(4):
            nl.store(out[0:128, s * 128:(s + 1) * 128], value=tiles[3 - s])
        return out
    a = np.random.default_rng(8).standard_normal((128, 512)).astype(np.float32)
    out = nki.simulate_kernel(nki.jit(k), a)
    expected = np.concatenate([a[:, 384:512], a[:, 256:384], a[:, 128:256], a[:, 0:128]], axis=1)
    assert np.array_equal(out, expected)


# ---------------------------------------------------------------- Python-side accumulation

COUNTS = []


def k_count(a, it):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    count = 0
    for i in it(4):
        count += 1
        t = nl.load(a[0:128, i * 128:(i + 1) * 128])
        nl.store(out[0:128, i * 128:(i + 1) * 128], value=t)
    COUNTS.append(count)
    return out


@pytest.mark.parametrize("it,count", [(nl.affine_range, 1), (nl.sequential_range, 1), (range, 1),
                                      (nl.static_range, 4)])
def test_python_side_accumulation_runs_once_per_traced_body(it, count):
    # The Beta-1 quirk of NKI_API.md §1.5: a deferred loop's body is traced
    # once, so `count += 1` in it runs once, not tripcount times.
    COUNTS.clear()
    trace(k_count, A, it=it)
    assert COUNTS == [count]


def test_python_side_accumulation_unrolled_builtin_range(restore_options):
    nkic.set_option("trace_time_unroll_builtin_range", True)
    COUNTS.clear()
    trace(k_count, A, it=range)
    assert COUNTS == [4]


# ---------------------------------------------------------------- bin/nkic trace

def test_cli_trace_shows_the_nested_loop_structure():
    import subprocess
    root = os.path.dirname(os.path.dirname(os.path.dirname(THIS_FILE)))
    env = dict(os.environ)
    env.pop("NKIC_FRONTEND_DEBUG", None)
    r = subprocess.run([os.path.join(root, "bin", "nkic"), "trace", f"{THIS_FILE}::k_nested",
                        "--arg", "a=f32[128,512]"], cwd=root, capture_output=True, text=True, timeout=60, env=env)
    assert r.returncode == 0, r.stderr
    fl = [l for l in r.stdout.splitlines() if l.strip().startswith("for ")]
    assert len(fl) == 2
    assert fl[0].strip().startswith("for i in affine_range(0, 2, 1)")
    assert fl[1].strip().startswith("for j in sequential_range(0, 2, 1)")
    assert fl[0].rstrip().split(":")[-2] == str(marker_line("nested_i"))
    assert fl[1].rstrip().split(":")[-2] == str(marker_line("nested_j"))
    r = subprocess.run([os.path.join(root, "bin", "nkic"), "trace", f"{THIS_FILE}::k_nested",
                        "--arg", "a=f32[128,512]", "--no-locations"], cwd=root, capture_output=True, text=True,
                       timeout=60, env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout == ir_text(k_nested, A)
