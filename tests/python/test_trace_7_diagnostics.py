"""Seed 000, item 7: diagnostics raised inside inlined helpers.

An error inside an inlined helper points at the helper's line and carries a
note (e.notes: (file, line, col, message)) at each call site, innermost first.
nkic's own frames are hidden from the traceback unless NKIC_FRONTEND_DEBUG=1."""
import os
import re
import subprocess
import sys
import traceback

import numpy as np
import pytest

import _nkic
import nkic
from neuronxcc import nki
import neuronxcc.nki.language as nl

from nki_test_util import ROOT, Markers, check_diag, f32, in_nkic, simulate, trace_error

M = Markers(__file__)
THIS_DIR = os.path.dirname(os.path.realpath(__file__))

TOO_MANY = "number of partitions 256 exceed architecture limitation of 128"


# ---------------------------------------------------------------- helpers and kernels

def inner(t):
    scratch = nl.ndarray((256, 512), dtype=nl.float32, buffer=nl.sbuf)  # ERR:inner
    return t


def middle(t):
    u = nl.exp(t)
    return inner(u)  # ERR:middle_calls_inner


def k_two_levels(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    r = middle(t)  # ERR:kernel_calls_middle
    nl.store(out, value=r)
    return out


def k_one_level(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    r = inner(t)  # ERR:kernel_calls_inner
    nl.store(out, value=r)
    return out


def k_at_kernel_level(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    scratch = nl.ndarray((256, 512), dtype=nl.float32, buffer=nl.sbuf)  # ERR:kernel_level
    nl.store(out, value=nl.load(a))
    return out


def tile_rows(t, rows):
    return nl.ndarray((rows, 512), dtype=nl.float32, buffer=nl.sbuf)  # ERR:tile_rows


def k_second_call_site(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    ok = tile_rows(t, 128)  # ERR:first_call
    bad = tile_rows(t, 256)  # ERR:second_call
    nl.store(out, value=t)
    return out


def after_helper(t):
    return nl.exp(t)


def k_error_after_helper_returned(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = after_helper(nl.load(a))
    scratch = nl.ndarray((256, 512), dtype=nl.float32, buffer=nl.sbuf)  # ERR:after_helper
    nl.store(out, value=t)
    return out


@nki.trace
def nested_kernel(t):
    for i in nl.affine_range(2):
        if i is not None:
            s = nl.ndarray((256, 512), dtype=nl.float32, buffer=nl.sbuf)  # ERR:nested_kernel
    return t


class Stage:
    def run(self, t):
        return nested_kernel(t)  # ERR:method_calls_nested

    def __call__(self, t):
        return self.run(t)  # ERR:call_calls_method


def k_object_chain(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    stage = Stage()
    r = stage(t)  # ERR:kernel_calls_object
    nl.store(out, value=r)
    return out


def k_for_debug(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    r = middle(t)  # ERR:debug_kernel_call
    nl.store(out, value=r)
    return out


def main_for_subprocess():
    """Run by a subprocess: an uncaught diagnostic, printed by Python."""
    a = np.ones((128, 512), np.float32)
    nki.simulate_kernel(nki.jit(k_for_debug), a)  # ERR:user_call


# ---------------------------------------------------------------- notes

def test_error_in_helper_points_at_helper_with_one_note():
    e = trace_error(k_one_level, f32())
    check_diag(e, M, "err_num_partition_exceed_arch_limit", TOO_MANY, [("inner", "nl.ndarray")],
               notes=[("kernel_calls_inner", "inner(t)", "inner")], api="nl.ndarray")


def test_two_levels_of_helpers_give_two_notes_innermost_first():
    e = trace_error(k_two_levels, f32())
    check_diag(e, M, "err_num_partition_exceed_arch_limit", TOO_MANY, [("inner", "nl.ndarray")],
               notes=[("middle_calls_inner", "inner(u)", "inner"),
                      ("kernel_calls_middle", "middle(t)", "middle")], api="nl.ndarray")
    text = str(e)
    first, second = (text.index(f":{n[1]}:{n[2]}: note: ") for n in e.notes)
    assert text.index(": error: ") < first < second
    # Each note shows the call's source line.
    assert "    return inner(u)" in text and "    r = middle(t)" in text


def test_no_note_at_kernel_level():
    e = trace_error(k_at_kernel_level, f32())
    check_diag(e, M, "err_num_partition_exceed_arch_limit", TOO_MANY, [("kernel_level", "nl.ndarray")])
    assert e.notes == [] and "note:" not in str(e)


def test_note_names_the_call_site_that_failed():
    e = trace_error(k_second_call_site, f32())
    check_diag(e, M, "err_num_partition_exceed_arch_limit", TOO_MANY, [("tile_rows", "nl.ndarray")],
               notes=[("second_call", "tile_rows(t, 256)", "tile_rows")])


def test_no_stale_note_after_the_helper_returned():
    e = trace_error(k_error_after_helper_returned, f32())
    check_diag(e, M, "err_num_partition_exceed_arch_limit", TOO_MANY, [("after_helper", "nl.ndarray")])


def test_notes_through_callable_object_method_and_nested_kernel():
    e = trace_error(k_object_chain, f32())
    check_diag(e, M, "err_num_partition_exceed_arch_limit", TOO_MANY, [("nested_kernel", "nl.ndarray")],
               notes=[("method_calls_nested", "nested_kernel(t)", "nested_kernel"),
                      ("call_calls_method", "self.run(t)", "run"),
                      ("kernel_calls_object", "stage(t)", "__call__")], api="nl.ndarray")


# ---------------------------------------------------------------- tracebacks

def _frames(e):
    return traceback.extract_tb(e.__traceback__)


def _launch_error(kernel):
    with pytest.raises(nkic.NKIError) as info:
        simulate(kernel, f32())
    return info.value


def test_traceback_hides_nkic_frames(monkeypatch):
    monkeypatch.delenv("NKIC_FRONTEND_DEBUG", raising=False)
    frames = _frames(_launch_error(k_two_levels))
    names = [(os.path.basename(f.filename), f.name) for f in frames]
    # The test's frames, then the nkic entry points it called, then user code only.
    i = next(i for i, f in enumerate(frames) if in_nkic(f.filename))
    while i < len(frames) and in_nkic(frames[i].filename):
        i += 1
    user = frames[i:]
    assert all(not in_nkic(f.filename) for f in user), names
    assert [f.name for f in user] == ["k_two_levels", "middle", "inner"], names
    assert [f.lineno for f in user] == [M.line("kernel_calls_middle"), M.line("middle_calls_inner"),
                                        M.line("inner")]


def test_traceback_shows_nkic_frames_with_frontend_debug(monkeypatch):
    monkeypatch.setenv("NKIC_FRONTEND_DEBUG", "1")
    frames = _frames(_launch_error(k_two_levels))
    first_user = next(i for i, f in enumerate(frames) if f.name == "k_two_levels")
    assert any(in_nkic(f.filename) for f in frames[first_user:]), [(f.filename, f.name) for f in frames]


_FRAME = re.compile(r'^  File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<name>\S+)$')


def _run_subprocess(debug):
    env = dict(os.environ)
    env.pop("NKIC_FRONTEND_DEBUG", None)
    if debug:
        env["NKIC_FRONTEND_DEBUG"] = "1"
    # The same nkic and core as this process.
    paths = [os.path.join(ROOT, "python"), os.path.dirname(os.path.realpath(_nkic.__file__)), THIS_DIR]
    env["PYTHONPATH"] = os.pathsep.join(paths + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    code = "import test_trace_7_diagnostics as t; t.main_for_subprocess()"
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1, (proc.returncode, proc.stdout, proc.stderr)
    lines = proc.stderr.splitlines()
    frames = [m.groupdict() for m in map(_FRAME.match, lines) if m]
    assert frames, proc.stderr
    return frames, proc.stderr


def test_subprocess_traceback_without_and_with_frontend_debug():
    frames, stderr = _run_subprocess(debug=False)
    assert "[err_num_partition_exceed_arch_limit]" in stderr
    # The user's call, then the nkic entry point(s) it called, then user code only.
    call = next(i for i, f in enumerate(frames) if f["name"] == "main_for_subprocess")
    assert int(frames[call]["line"]) == M.line("user_call")
    i = call + 1
    while i < len(frames) and in_nkic(frames[i]["file"]):
        i += 1
    user = frames[i:]
    assert all(not in_nkic(f["file"]) for f in user), stderr
    assert [(f["name"], int(f["line"])) for f in user] == [
        ("k_for_debug", M.line("debug_kernel_call")), ("middle", M.line("middle_calls_inner")),
        ("inner", M.line("inner"))], stderr

    dframes, dstderr = _run_subprocess(debug=True)
    assert "[err_num_partition_exceed_arch_limit]" in dstderr
    first_user = next(i for i, f in enumerate(dframes) if f["name"] == "k_for_debug")
    internal = [f for f in dframes[first_user:] if in_nkic(f["file"])]
    assert internal, dstderr
    assert len(dframes) > len(frames)
