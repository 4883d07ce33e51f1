"""Fork server that runs fuzz cases and classifies their outcomes.

The server imports numpy and nkic once, then reads one case (a JSON line) at a time from
stdin, forks a child for it and answers one JSON line on stdout. The child starts from
the server's pristine state, so cases cannot leak into each other and the outcome of a
case does not depend on which server ran it or what ran before. The child runs under an
address-space limit (memory blow-ups fail an allocation instead of swapping) and is
killed at the per-case timeout; a child that dies by a signal is reported with the tail
of its output (faulthandler prints the Python stack of a crash, ASan its report).

Every kernel a case simulates is first predicted by the cost model (nkic.profile's
path) on the target it was traced for, so mutated kernels reach the model as well: a
crash, hang or bare exception there is the case's outcome; a diagnostic is not.

Outcome classes: ok, diagnostic (an nkic diagnostic with an err_* code at the case's own
file), user_error (the case's own code raised: an assertion of a test, a NameError a
mutation introduced, a MemoryError of its own allocation, ...), and the failures: signal, bare_exception, pybind_text,
cxx_text, missing_location, timeout, memory, exit.
"""
import faulthandler
import json
import os
import re
import resource
import runpy
import select
import signal
import sys
import time
import traceback
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # no BLAS thread pool across fork()

import numpy  # noqa: E402,F401  (imported once, before the forks)
import pytest  # noqa: E402,F401
import nkic  # noqa: E402
import neuronxcc.nki  # noqa: E402,F401
import neuronxcc.nki.isa  # noqa: E402,F401
import neuronxcc.nki.language  # noqa: E402,F401
from nkic._core import core  # noqa: E402
from nkic import _kernel as nkic_kernel, _profile as nkic_profile  # noqa: E402
from runner import FAILURES, UNDER_ASAN  # noqa: E402  (this directory is the script's sys.path[0])

NKIC_DIRS = [str(ROOT / "python" / "nkic"), str(ROOT / "python" / "neuronxcc"),
             str(Path(core.__file__).resolve().parent)]
PYBIND_TEXT = ["incompatible function arguments", "No constructor defined", "SystemError", "Invoked with:",
               "Unable to convert function return value", "Unable to cast", "pybind11",
               "returned a result with an exception set", "returned NULL without setting"]
CXX_TEXT = re.compile(r"std::|::_M_|\bvector::|basic_string|bad_alloc|bad_variant_access|bad_optional_access|"
                      r"bad_any_cast|\bsto(i|l|ll|ul|ull|f|d)\b|nkic::|\.cpp\b|terminate called|what\(\)")
# The diagnostics docs/errors.md documents as carrying no code ("Diagnostics without a code").
CODELESS = ("Returning value from top level nki kernel is not supported", "Unexpected type ",
            "Cannot promote from ")


def _predicting(simulate_traced):
    def simulate(traced, *args, **kwargs):
        # The caller is the kernel's run(): its target is the one the kernel was traced for.
        kernel = sys._getframe(1).f_locals.get("self")
        try:
            nkic_profile.predict_traced(traced, getattr(kernel, "target", None) or "trn2")
        except nkic.NKIError:
            pass  # a diagnostic (a target without cost figures): the simulation still runs
        return simulate_traced(traced, *args, **kwargs)
    return simulate


nkic_kernel.simulate_traced = _predicting(nkic_kernel.simulate_traced)


def _owner(filename, case_path):
    if filename == case_path:
        return "user"
    if any(filename.startswith(d + os.sep) for d in NKIC_DIRS):
        return "nkic"
    return "other"


def _rel(filename):
    try:
        return str(Path(filename).resolve().relative_to(ROOT))
    except ValueError:
        return filename


def _raiser(exc, case_path):
    """The innermost frame of the traceback that is the case's or nkic's, and whose."""
    for f in reversed(traceback.extract_tb(exc.__traceback__)):
        who = _owner(f.filename, case_path)
        if who != "other":
            return who, f
    return None, None


def classify(exc, case_path):
    """(outcome, detail) of an exception a case raised."""
    text = f"{type(exc).__name__}: {exc}"
    pybind = next((p for p in PYBIND_TEXT if p in text), None)
    cxx = CXX_TEXT.search(str(exc))
    # A MemoryError the case's own allocation raised (np.zeros((2**32, 2))) is the case's error.
    if "bad_alloc" in text or (isinstance(exc, MemoryError) and _raiser(exc, case_path)[0] != "user"):
        return "memory", type(exc).__name__
    if pybind or isinstance(exc, SystemError):
        api = re.search(r"(\w+)\(\): incompatible|built-in method (\w+) of", text)
        return "pybind_text", (pybind or "SystemError") + (f" in {api.group(1) or api.group(2)}()" if api else "")
    if isinstance(exc, nkic.NKIError):
        code = getattr(exc, "code", "") or ""
        if code == "err_internal" or cxx:
            return "cxx_text", f"{code or type(exc).__name__}: {cxx.group(0) if cxx else 'internal error'}"
        documented = not code and str(getattr(exc, "message", "")).startswith(CODELESS)
        if not code.startswith("err_") and not documented:
            return "missing_location", f"{type(exc).__name__} without an err_* code"
        if getattr(exc, "file", None) != case_path or not getattr(exc, "line", 0):
            return "missing_location", f"{code or type(exc).__name__} at {_rel(exc.file) if exc.file else None}"
        return "diagnostic", code or f"{type(exc).__name__} without a code"
    if cxx:
        return "cxx_text", f"{type(exc).__name__}: {cxx.group(0)}"
    who, f = _raiser(exc, case_path)
    # nkic's assertion helpers (pytest_plugin.assert_close) fail the test by contract.
    if who == "nkic" and not (isinstance(exc, AssertionError) and f.name.startswith("assert_")):
        return "bare_exception", f"{type(exc).__name__} at {_rel(f.filename)}:{f.name}"
    return "user_error", type(exc).__name__


def _parametrized_args(func):
    """The first parametrization of a test function, as keyword arguments."""
    kwargs = {}
    for mark in getattr(func, "pytestmark", []):
        if mark.name != "parametrize":
            continue
        names = mark.args[0]
        names = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
        first = list(mark.args[1] if len(mark.args) > 1 else mark.kwargs["argvalues"])[0]
        values = first.values if hasattr(first, "values") and hasattr(first, "marks") else \
            (first,) if len(names) == 1 else first
        kwargs.update(zip(names, values))
    return kwargs


def run_case(case, path):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if case["mode"] == "main":
                runpy.run_path(path, run_name="__main__")
            else:
                test = runpy.run_path(path, run_name="fuzz_case")[case["test"]]
                test(**_parametrized_args(test))
        return "ok", ""
    except BaseException as e:  # noqa: B902  (SystemExit and KeyboardInterrupt are outcomes too)
        outcome, detail = classify(e, path)
        return outcome, detail, f"{type(e).__name__}: {e}"[:600]


def _child(case, path, log, mem_mb, result_w):
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    if not UNDER_ASAN:  # under ASan its report names the C++ frames; faulthandler would cut it short
        faulthandler.enable()
    if mem_mb:
        limit = mem_mb << 20
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    outcome = run_case(case, path)
    os.write(result_w, json.dumps(list(outcome)).encode())
    os._exit(0)


def _tail(log, limit=1500):
    try:
        data = Path(log).read_bytes().decode(errors="replace")
    except OSError:
        return ""
    return data[-limit:]


def _sanitizer_report(output):
    """'ASan <kind> in <innermost nkic function>' or 'UBSan at <file:line>' of a sanitizer
    report (scripts/test_asan.sh), which ends the child with a plain exit status."""
    asan = re.search(r"ERROR: AddressSanitizer: ([\w-]+)", output)
    if asan:
        kind = re.search(r"SUMMARY: AddressSanitizer: ([\w-]+)", output)  # e.g. allocation-size-too-big
        frame = re.search(r"#\d+ 0x[0-9a-f]+ in (nkic::[\w:<>~]+)", output[asan.end():])
        return f"ASan {(kind or asan).group(1)} in {frame.group(1) if frame else 'an unknown function'}"
    ubsan = re.search(r"([\w./-]+:\d+):\d+: runtime error", output)
    return f"UBSan at {ubsan.group(1)}" if ubsan else None


def serve_one(case, workdir, timeout, mem_mb):
    path = os.path.join(workdir, f"case_{case['id']}.py")
    log = os.path.join(workdir, "output.log")
    with open(path, "w") as f:
        f.write(case["source"])
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            os.chdir(workdir)
            _child(case, path, log, mem_mb, w)
        finally:
            os._exit(70)
    os.close(w)
    data, deadline, timed_out = b"", time.monotonic() + timeout, False
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            timed_out = True
            break
        ready, _, _ = select.select([r], [], [], left)
        if not ready:
            continue
        chunk = os.read(r, 65536)
        if not chunk:
            break
        data += chunk
    os.close(r)
    if timed_out:
        os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    os.unlink(path)
    if timed_out:
        return {"outcome": "timeout", "detail": f"> {timeout:g} s", "output": _tail(log)}
    report = _sanitizer_report(_tail(log, 20000))
    if report:
        return {"outcome": "signal", "detail": report, "output": _tail(log, 4000)}
    if os.WIFSIGNALED(status):
        output = _tail(log)
        # faulthandler lists the innermost frame first: name the innermost one of nkic's.
        frames = re.findall(r'File "([^"]+)", line \d+ in (\w+)', output)
        inner = next((f for f in frames if _owner(f[0], path) == "nkic"), None)
        where = f" in {_rel(inner[0])}:{inner[1]}" if inner else " in the case's own code" if frames else ""
        name = signal.Signals(os.WTERMSIG(status)).name
        if "bad_alloc" in output:
            return {"outcome": "memory", "detail": f"{name}: bad_alloc", "output": output}
        return {"outcome": "signal", "detail": name + where, "output": output}
    if not data:
        return {"outcome": "exit", "detail": f"exit status {os.WEXITSTATUS(status)}", "output": _tail(log)}
    outcome = json.loads(data)
    return {"outcome": outcome[0], "detail": outcome[1], "message": outcome[2] if len(outcome) > 2 else "",
            "output": _tail(log, 600) if outcome[0] in FAILURES else ""}


def main():
    workdir = sys.argv[1]
    for line in sys.stdin:
        request = json.loads(line)
        began = time.monotonic()
        result = serve_one(request["case"], workdir, request["timeout"], request["mem_mb"])
        result["id"], result["seconds"] = request["case"]["id"], round(time.monotonic() - began, 3)
        sys.stdout.write(json.dumps(result) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
