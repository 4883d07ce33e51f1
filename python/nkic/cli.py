"""The nkic command line: trace, run and check NKI kernels without hardware.

  nkic trace FILE::KERNEL --arg 'x=f32[250,512]' [--grid 2,4] [--target trn2] [--json]
  nkic run FILE[::KERNEL] [--no-checks] [--json]
  nkic check FILE::KERNEL --arg ... --target trn1,trn2 | all [--json | --sarif]
  nkic profile FILE[::KERNEL] [--target trn2] [--trace-json FILE] [--html FILE] [--json]

Exit status: 0 ok, 1 numeric mismatch (run), 2 kernel diagnostic, 3 usage error.
docs/cli.md documents the options and the JSON schemas.
"""
import argparse
import inspect
import json
import os
import re
import sys
import time
import traceback
import warnings

import numpy as np

from ._core import core
from ._version import __version__
from . import _cli_output as out, _compare, _dtypes, _kernel, _profile
from ._kernel_file import CliError, find_kernel, load_module, user_call

EXIT_OK, EXIT_MISMATCH, EXIT_DIAGNOSTIC, EXIT_USAGE = 0, 1, 2, 3
TARGETS = ("inf1", "trn1", "inf2", "trn2", "trn3")
_SHORT_DTYPES = {
    "f32": "float32", "f16": "float16", "bf16": "bfloat16", "tf32": "tfloat32", "fp8e4m3": "float8_e4m3",
    "fp8e5m2": "float8_e5m2", "i8": "int8", "i16": "int16", "i32": "int32", "u8": "uint8", "u16": "uint16",
    "u32": "uint32", "bool": "bool",
}


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse's own usage errors exit 3 like nkic's
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def parse_arg(text):
    """'x=f32[250,512]' -> ('x', numpy array of that dtype and shape)."""
    m = re.fullmatch(r"\s*(\w+)\s*=\s*(\w+)\s*\[([\d,\s]*)\]\s*", text)
    if not m:
        raise CliError(f"cannot parse --arg {text!r}; expected NAME=DTYPE[D0,D1,...], e.g. x=f32[128,512]")
    name, dt, dims = m.groups()
    dt = _SHORT_DTYPES.get(dt, dt)
    if dt not in _dtypes._BY_NAME:
        raise CliError(f"unknown dtype {m.group(2)!r} in --arg {text!r}")
    shape = [int(d) for d in dims.split(",") if d.strip()]
    return name, np.zeros(shape, dtype=_dtypes.numpy_dtype(dt))


def _parse_grid(text):
    if not text:
        return None
    try:
        return tuple(int(g) for g in text.split(","))
    except ValueError:
        raise CliError(f"cannot parse --grid {text!r}; expected sizes like 2,4") from None


def _kernel_args(mod, arg_specs):
    if arg_specs:
        return (), dict(parse_arg(a) for a in arg_specs)
    make = getattr(mod, "make_inputs", None)
    if make is None:
        raise CliError("give the kernel's arguments with --arg NAME=DTYPE[SHAPE] (or define make_inputs() in the file)")
    return tuple(user_call("make_inputs()", make)), {}


def _prepare(ns):
    """The file's module, its kernel (retargeted by --target), arguments and grid."""
    path, _, kname = ns.kernel.partition("::")
    mod = load_module(path)
    k = find_kernel(mod, kname or None, path)
    if ns.target and ns.cmd != "check":
        k.target = ns.target
    args, kwargs = _kernel_args(mod, ns.arg)
    grid = _parse_grid(ns.grid) or getattr(mod, "GRID", None)
    try:
        inspect.signature(k.func).bind(*args, **kwargs)
    except TypeError as e:
        raise CliError(f"the arguments do not match {k.__name__}: {e}") from None
    return path, mod, k, args, kwargs, grid


def _trace(k, grid, args, kwargs):
    """(traced kernel or None, NKIError or None, tracer warnings)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            return k.trace(grid, args, kwargs), None, caught
        except core.NKIError as e:
            return None, e, caught


class _Printer:
    """Text output under -q / -v, with colour on a terminal."""

    def __init__(self, ns):
        self.quiet, self.verbose, self.silent = ns.quiet, ns.verbose, ns.json  # JSON replaces the text

    def line(self, text="", *, always=False):
        if not self.silent and (always or not self.quiet):
            print(text)

    def warnings(self, caught):
        for w in caught:
            print(out.paint(out.warning_text(w), "warning", sys.stderr), file=sys.stderr)

    def diagnostic(self, e):
        print(str(e), file=sys.stderr)


def _dump(obj):
    print(json.dumps(obj, indent=2))


def cmd_trace(ns, pr):
    path, mod, k, args, kwargs, grid = _prepare(ns)
    traced, err, caught = _trace(k, grid, args, kwargs)
    if ns.json:
        report = out.ir_json(traced, k.__name__, path, k.target) if traced else {
            "schema": "nkic.trace/1", "version": __version__, "kernel": k.__name__, "file": path, "target": k.target}
        report.update(ok=err is None, diagnostics=[out.diagnostic(err)] if err else [],
                      warnings=[out.warning(w) for w in caught])
        _dump(report)
        return EXIT_DIAGNOSTIC if err else EXIT_OK
    pr.warnings(caught)
    if err:
        pr.diagnostic(err)
        return EXIT_DIAGNOSTIC
    sys.stdout.write(traced.ir.text(not ns.no_locations))
    return EXIT_OK


def _compare_outputs(mod, outs, refs, checked_uninitialized):
    """[(output report, text line)], one per output."""
    rows = []
    for i, c in enumerate(_compare.compare_outputs(outs, refs, getattr(mod, "TOLERANCE", None))):
        row = {"index": i, **c.as_dict(), "hint": None}
        if c.nan_count and not checked_uninitialized:
            row["hint"] = (f"{c.nan_count} NaN value(s) in the output; a read of memory no instruction wrote "
                           f"often causes this: run without --no-checks (or with --check-uninitialized)")
        text = f"output {i} ({c.dtype}{c.shape}): {c.summary()}"
        if c.shape_ok and c.nan_count:
            text += f"; {c.nan_count} NaN"
        rows.append((row, text))
    return rows


def cmd_run(ns, pr):
    path, mod, k, args, kwargs, grid = _prepare(ns)
    uninit = ns.check_uninitialized or not ns.no_checks
    races = ns.check_races or not ns.no_checks
    report = {"schema": "nkic.run/1", "version": __version__, "kernel": f"{path}::{k.__name__}", "target": k.target,
              "checks": {"uninitialized": uninit, "races": races}, "ok": False, "status": "diagnostic",
              "instructions": None, "trace_ms": None, "simulate_ms": None, "outputs": [], "message": None,
              "diagnostics": [], "warnings": []}
    t0 = time.perf_counter()
    traced, err, caught = _trace(k, grid, args, kwargs)
    t1 = time.perf_counter()
    report["warnings"] = [out.warning(w) for w in caught]
    outs = None
    if traced is not None:
        report["instructions"], report["trace_ms"] = traced.ir.num_instructions(), round(1e3 * (t1 - t0), 3)
        bound = inspect.signature(k.func).bind(*args, **kwargs).arguments
        bar = out.ProgressBar(sys.stderr) if out.ProgressBar.wanted(sys.stderr, ns.quiet or ns.json) else None
        try:
            outs = _kernel.simulate_traced(traced, traced.arrays(bound), uninit, races, progress=bar)
        except core.NKIError as e:
            err = e
        finally:
            if bar is not None:
                bar.close()
        report["simulate_ms"] = round(1e3 * (time.perf_counter() - t1), 3)
    if not ns.json:
        pr.warnings(caught)
    if err is not None:
        report["diagnostics"] = [out.diagnostic(err)]
        return _finish_run(ns, pr, report, EXIT_DIAGNOSTIC, err)
    checks = ", ".join(n for n, on in (("races", races), ("uninitialized reads", uninit)) if on) or "none"
    pr.line(f"{os.path.basename(path)}::{k.__name__}: traced {report['instructions']} instructions in "
            f"{report['trace_ms']:.2f} ms, simulated in {report['simulate_ms']:.2f} ms (checks: {checks})")
    reference = getattr(mod, "reference", None)
    if reference is None:
        report.update(ok=True, status="ok", message="no reference() in the file: nothing to compare")
        pr.line("  " + report["message"])
        return _finish_run(ns, pr, report, EXIT_OK)
    refs = user_call("reference()", reference, *args, **kwargs)
    try:
        rows = _compare_outputs(mod, outs, refs, uninit)
    except _compare.OutputsMismatch as e:
        report.update(status="mismatch", message=str(e))
        pr.line("  " + out.paint(f"MISMATCH: {e}", "mismatch", sys.stdout), always=True)
        return _finish_run(ns, pr, report, EXIT_MISMATCH)
    ok = all(row["ok"] for row, _ in rows)
    report.update(ok=ok, status="ok" if ok else "mismatch", outputs=[row for row, _ in rows])
    for row, text in rows:
        verdict = out.paint("ok", "ok", sys.stdout) if row["ok"] else out.paint("MISMATCH", "mismatch", sys.stdout)
        pr.line(f"  {text} {verdict}", always=not row["ok"])
        if row["hint"]:
            pr.line("  " + out.paint("hint: " + row["hint"], "note", sys.stdout), always=True)
    return _finish_run(ns, pr, report, EXIT_OK if ok else EXIT_MISMATCH)


def _finish_run(ns, pr, report, status, err=None):
    if ns.json:
        _dump(report)
    elif err is not None:
        pr.diagnostic(err)
    return status


def _check_targets(spec):
    if spec in (None, "all"):
        return list(TARGETS)
    return [t.strip() for t in spec.split(",") if t.strip()]


def cmd_check(ns, pr):
    path, mod, k, args, kwargs, grid = _prepare(ns)
    report = {"schema": "nkic.check/1", "version": __version__, "kernel": f"{path}::{k.__name__}", "ok": True,
              "targets": [], "warnings": []}
    errors, seen = [], {}
    for t in _check_targets(ns.target):
        k.target = t
        _, err, caught = _trace(k, grid, args, kwargs)
        for w in caught:  # the same warning from every target is reported once
            seen.setdefault(out.warning_key(w), w)
        report["targets"].append({"target": t, "ok": err is None, "diagnostics": [out.diagnostic(err)] if err else []})
        errors.append((t, err))
    report["warnings"] = [out.warning(w) for w in seen.values()]
    report["ok"] = all(e is None for _, e in errors)
    status = EXIT_OK if report["ok"] else EXIT_DIAGNOSTIC
    if ns.sarif:
        _dump(out.sarif(report))
        return status
    if ns.json:
        _dump(report)
        return status
    for t, e in errors:
        if e is None:
            pr.line(f"{t}: {out.paint('ok', 'ok', sys.stdout)}")
            continue
        where = f" at {e.file}:{e.line}:{e.col}" if e.file else ""
        pr.line(f"{t}: {out.paint('FAIL', 'error', sys.stdout)} {e.code}: {e.message}{where}", always=True)
        if pr.verbose:
            pr.line(str(e), always=True)
    pr.warnings(seen.values())
    return status


def cmd_profile(ns, pr):
    path, mod, k, args, kwargs, grid = _prepare(ns)
    traced, err, caught = _trace(k, grid, args, kwargs)
    if err is None:
        try:
            result = _profile.predict_traced(traced, k.target)
        except core.NKIError as e:
            err = e
    if err is not None:
        if ns.json:
            _dump({"schema": "nkic.profile/1", "version": __version__, "kernel": f"{path}::{k.__name__}",
                   "target": k.target, "ok": False, "diagnostics": [out.diagnostic(err)]})
        else:
            pr.warnings(caught)
            pr.diagnostic(err)
        return EXIT_DIAGNOSTIC
    for name, text in ((ns.trace_json, result.trace_json), (ns.html, result.html)):
        if name:
            with open(name, "w") as f:
                f.write(text())
    if ns.json:
        _dump(out.profile_json(result, f"{path}::{k.__name__}"))
        return EXIT_OK
    pr.warnings(caught)
    pr.line(result.summary(top=10))
    return EXIT_OK


def _parser():
    p = _Parser(prog="nkic", description="Trace, check and simulate NKI kernels on the CPU.",
                epilog="exit status: 0 ok, 1 numeric mismatch, 2 kernel diagnostic, 3 usage error")
    p.add_argument("--version", action="version", version=f"nkic {__version__}")
    common = _Parser(add_help=False)
    common.add_argument("kernel", help="FILE.py or FILE.py::KERNEL")
    common.add_argument("--arg", action="append", default=[], help="NAME=DTYPE[D0,D1,...] (e.g. x=f32[128,512])")
    common.add_argument("--grid", help="SPMD launch grid, e.g. 2,4")
    common.add_argument("--target", help="trn1, inf2, trn2, trn3, inf1 (check: comma list or 'all')")
    loud = common.add_mutually_exclusive_group()
    loud.add_argument("-q", "--quiet", action="store_true", help="print only failures")
    loud.add_argument("-v", "--verbose", action="store_true", help="print full diagnostics and tracebacks")
    common.add_argument("--json", action="store_true", help="print one JSON object (docs/cli.md has the schema)")
    sub = p.add_subparsers(dest="cmd", required=True, parser_class=_Parser)
    for name, fn, help_ in (("trace", cmd_trace, "print the IR of FILE::KERNEL"),
                            ("run", cmd_run, "trace, simulate and compare with the file's reference()"),
                            ("check", cmd_check, "legality on one or more targets"),
                            ("profile", cmd_profile, "predicted latency, engine use and timeline on a target")):
        sp = sub.add_parser(name, help=help_, parents=[common])
        sp.set_defaults(fn=fn)
        if name == "trace":
            sp.add_argument("--no-locations", action="store_true", help="omit source locations")
        if name == "run":
            sp.add_argument("--no-checks", action="store_true",
                            help="skip the race and uninitialized-read checks (on by default)")
            sp.add_argument("--check-uninitialized", action="store_true",
                            help="with --no-checks: still report reads of memory no instruction wrote")
            sp.add_argument("--check-races", action="store_true",
                            help="with --no-checks: still report affine_range iterations that depend on each other")
        if name == "profile":
            sp.add_argument("--trace-json", metavar="FILE", help="write the engine timeline (Perfetto / Chrome JSON)")
            sp.add_argument("--html", metavar="FILE", help="write a self-contained HTML report")
        if name == "check":
            sp.add_argument("--sarif", action="store_true", help="print a SARIF 2.1.0 log instead of text")
    return p


def main(argv=None):
    ns = _parser().parse_args(argv)
    pr = _Printer(ns)
    try:
        return ns.fn(ns, pr)
    except BrokenPipeError:  # the reader (`| head`) stopped early: no traceback, no flush error at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_USAGE
    except CliError as e:
        print(f"nkic: {out.paint('error', 'error', sys.stderr)}: {e}", file=sys.stderr)
        if ns.verbose and e.__cause__ is not None:
            traceback.print_exception(e.__cause__)
        return EXIT_USAGE
    except core.NKIError as e:  # raised while loading the file (a decorator's arguments)
        if ns.json:
            _dump({"schema": f"nkic.{ns.cmd}/1", "version": __version__, "ok": False,
                   "diagnostics": [out.diagnostic(e)]})
        else:
            pr.diagnostic(e)
        return EXIT_DIAGNOSTIC
