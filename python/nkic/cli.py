"""The nkic command line: trace, run and check NKI kernels without hardware.

  nkic trace FILE::KERNEL --arg 'x=f32[250,512]' [--grid 2,4] [--target trn2] [--json]
  nkic run FILE[::KERNEL] [--no-checks] [--json]
  nkic check FILE::KERNEL --arg ... [--target trn1,trn2 | all] [--json | --sarif]
  nkic profile FILE[::KERNEL] [--target trn2] [--trace-json FILE] [--html FILE] [--json]
  nkic sweep FILE[::KERNEL] --param NAME=V1,V2 ... [--target trn1,trn2] [--scheduler tcp://HOST:PORT | auto]
  nkic migrate FILE[::KERNEL] [--arg ...] [--check] [-o OUT.py] [--json]

Without --target a command runs on NEURON_PLATFORM_TARGET_OVERRIDE, else trn2; `check` (and
`--target all`) covers the targets the kernel's API supports.
Exit status: 0 ok, 1 numeric mismatch (run), 2 kernel diagnostic, 3 usage error.
docs/cli.md documents the options and the JSON schemas.
"""
import argparse
import inspect
import json
import os
import sys
import time
import traceback
import warnings


from ._core import core
from ._version import __version__
from . import _cli_output as out, _compare, _kernel, _profile, _sweep, _sweep_output, _targets, _user_exceptions
from ._kernel_file import CliError, find_kernel, load_module, user_call
from ._arg_spec import parse_args
from ._migrate_cli import cmd_migrate

EXIT_OK, EXIT_MISMATCH, EXIT_DIAGNOSTIC, EXIT_USAGE = 0, 1, 2, 3


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse's own usage errors exit 3 like nkic's
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def _parse_grid(text):
    if not text:
        return None
    try:
        return tuple(int(g) for g in text.split(","))
    except ValueError:
        raise CliError(f"cannot parse --grid {text!r}; expected sizes like 2,4") from None


def _kernel_args(mod, arg_specs):
    if arg_specs:
        return (), parse_args(arg_specs)
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
        k = k.retarget(ns.target)
    args, kwargs = _kernel_args(mod, ns.arg)
    grid = _parse_grid(ns.grid) or getattr(mod, "GRID", None)
    try:
        inspect.signature(k.func).bind(*args, **kwargs)
    except TypeError as e:
        raise CliError(f"the arguments do not match {k.__name__}: {e}") from None
    return path, mod, k, args, kwargs, grid


def _trace(k, grid, args, kwargs):
    """(traced kernel or None, NKIError or None, tracer warnings); an exception of the
    kernel's own code is a diagnostic at its line like any other."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            return k.trace(grid, args, kwargs), None, caught
        except core.NKIError as e:
            return None, e, caught
        except Exception as e:
            return None, _user_exceptions.diagnostic(e, k), caught


class _Printer:
    """Text output under -q / -v, with colour on a terminal."""

    def __init__(self, ns):
        self.quiet, self.verbose, self.silent = ns.quiet, ns.verbose, ns.json is True  # JSON replaces the text

    def line(self, text="", *, always=False):
        if not self.silent and (always or not self.quiet):
            print(text)

    def warnings(self, caught):
        for w in caught:
            print(out.paint(out.warning_text(w), "warning", sys.stderr), file=sys.stderr)

    def diagnostic(self, e):
        print(str(e), file=sys.stderr)
        if self.verbose and e.code == "err_internal" and e.__cause__ is not None:
            traceback.print_exception(e.__cause__)  # nkic's defect, for its report


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
    try:
        tolerance = _compare.tolerance_of(getattr(mod, "TOLERANCE", None))
    except ValueError as e:
        raise CliError(str(e)) from None
    for i, c in enumerate(_compare.compare_outputs(outs, refs, tolerance)):
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
    outs = None
    if traced is not None:
        report["instructions"], report["trace_ms"] = traced.ir.num_instructions(), round(1e3 * (t1 - t0), 3)
        bound = inspect.signature(k.func).bind(*args, **kwargs).arguments
        bar = out.ProgressBar(sys.stderr) if out.ProgressBar.wanted(sys.stderr, ns.quiet or ns.json) else None
        try:
            with warnings.catch_warnings(record=True) as simulated:  # uninitialized values dropped
                warnings.simplefilter("always")
                outs = _kernel.simulate_traced(traced, traced.arrays(bound), uninit, races, progress=bar)
            caught += simulated
        except core.NKIError as e:
            err = e
        finally:
            if bar is not None:
                bar.close()
        report["simulate_ms"] = round(1e3 * (time.perf_counter() - t1), 3)
    report["warnings"] = [out.warning(w) for w in caught]
    if not ns.json:
        pr.warnings(caught)
    if err is not None:
        report["diagnostics"] = [out.diagnostic(err)]
        return _finish_run(ns, pr, report, EXIT_DIAGNOSTIC, err)
    checks = ", ".join(n for n, on in (("races", races), ("uninitialized reads", uninit)) if on) or "none"
    pr.line(f"{os.path.basename(path)}::{k.__name__} on {k.target}: traced {report['instructions']} instructions in "
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


def cmd_check(ns, pr):
    path, mod, k, args, kwargs, grid = _prepare(ns)
    report = {"schema": "nkic.check/1", "version": __version__, "kernel": f"{path}::{k.__name__}", "ok": True,
              "targets": [], "warnings": []}
    errors, seen = [], {}
    for t in _targets.covered(k, ns.target):
        _, err, caught = _trace(k.retarget(t), grid, args, kwargs)
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


EXIT_INTERRUPTED = 130  # Ctrl-C, as a shell reports it


def cmd_sweep(ns, pr):
    grid = {}
    for spec in ns.param:
        name, values = _sweep.parse_param(spec)
        if name in grid:
            raise CliError(f"--param {name} is given twice; list all its values in one --param")
        grid[name] = values
    if not grid:
        raise CliError("give the values to sweep with --param NAME=V1,V2,... (e.g. --param TILE_N=256,512)")
    _sweep_output.check_outputs(ns.json_file, ns.csv, ns.plot)
    resume = ()
    if ns.resume:
        try:
            resume = _sweep_output.read_rows(ns.resume)
        except (OSError, ValueError) as e:
            raise CliError(f"cannot resume from {ns.resume}: {e}") from None
    targets = [t.strip() for t in ns.target.split(",") if t.strip()] if ns.target else None
    bar = out.ProgressBar(sys.stderr, "sweep", delay=0.0) if out.ProgressBar.wanted(sys.stderr, ns.quiet) else None
    done, best = [], []

    def progress(row, count, total):
        done.append(row)
        if row["status"] == "ok" and row["predicted_latency_us"] is not None and (
                not best or row["predicted_latency_us"] < best[0]["predicted_latency_us"]):
            best[:] = [row]
        if bar is not None:
            lead = f"  best {_best_text(best[0])}" if best else ""
            bar(count / total, f" {count}/{total}{lead}")

    try:
        rows = _sweep.sweep(ns.kernel, grid, targets=targets, scheduler=ns.scheduler, workers=ns.workers,
                            checks=not ns.no_checks, resume=resume, progress=progress)
    except KeyboardInterrupt:
        if bar is not None:
            bar.close()
        if ns.json_file:  # what finished is kept: --resume continues from it
            _sweep_output.write_json(ns.json_file, [*resume, *done], ns.kernel, grid, targets)
        print(f"nkic: interrupted after {len(done)} configuration(s)"
              f"{'; --resume ' + ns.json_file + ' continues' if ns.json_file else ''}", file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        if bar is not None:
            bar.close()
    targets = list(dict.fromkeys(r["target"] for r in rows))
    if ns.json_file:
        _sweep_output.write_json(ns.json_file, rows, ns.kernel, grid, targets)
    if ns.csv:
        _sweep_output.write_csv(ns.csv, rows, list(grid))
    if ns.plot:
        _sweep_output.plot(ns.plot, rows, list(grid))
    ranked = _sweep.rank(rows)
    if not ns.quiet:
        print(_sweep_output.table(ranked, list(grid)))
    statuses = {r["status"] for r in rows}
    failed = sum(r["status"] == "failed" for r in rows)
    if failed:
        print(f"nkic: {failed} configuration(s) failed twice (see their rows)", file=sys.stderr)
    return EXIT_OK if "ok" in statuses else EXIT_MISMATCH if "mismatch" in statuses else EXIT_DIAGNOSTIC


def _best_text(row):
    params = ", ".join(f"{k}={v}" for k, v in row["params"].items())
    return f"{row['predicted_latency_us']:.3f} us ({params} on {row['target']})"


def _parser():
    p = _Parser(prog="nkic", description="Trace, check and simulate NKI kernels on the CPU.",
                epilog="exit status: 0 ok, 1 numeric mismatch, 2 kernel diagnostic, 3 usage error")
    p.add_argument("--version", action="version", version=f"nkic {__version__}")
    base = _Parser(add_help=False)
    base.add_argument("kernel", help="FILE.py or FILE.py::KERNEL")
    base.add_argument("--target", help=f"{', '.join(_targets.names())}; default NEURON_PLATFORM_TARGET_OVERRIDE, "
                      "else trn2 (check, sweep: comma list or 'all', the targets of the kernel's API, which check "
                      "covers by default)")
    loud = base.add_mutually_exclusive_group()
    loud.add_argument("-q", "--quiet", action="store_true", help="print only failures")
    loud.add_argument("-v", "--verbose", action="store_true", help="print full diagnostics and tracebacks")
    common = _Parser(add_help=False, parents=[base])
    common.add_argument("--arg", action="append", default=[],
                        help="NAME=DTYPE[D0,D1,...] (seeded random values, e.g. x=f32[128,512]) or NAME=VALUE (e.g. n=2)")
    common.add_argument("--grid", help="SPMD launch grid, e.g. 2,4")
    common.add_argument("--json", action="store_true", help="print one JSON object (docs/cli.md has the schema)")
    sub = p.add_subparsers(dest="cmd", required=True, parser_class=_Parser)
    for name, fn, help_ in (("trace", cmd_trace, "print the IR of FILE::KERNEL"),
                            ("run", cmd_run, "trace, simulate and compare with the file's reference()"),
                            ("check", cmd_check, "legality on one or more targets"),
                            ("profile", cmd_profile, "predicted latency, engine use and timeline on a target"),
                            ("migrate", cmd_migrate, "rewrite a legacy neuronxcc.nki file into the current nki API")):
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
        if name == "migrate":
            sp.add_argument("--check", action="store_true",
                            help="simulate the legacy and the migrated kernels on the same inputs and compare")
            sp.add_argument("-o", "--output", metavar="OUT.py", help="write the migrated file (default: stdout)")
        if name == "check":
            sp.add_argument("--sarif", action="store_true", help="print a SARIF 2.1.0 log instead of text")
    sp = sub.add_parser("sweep", parents=[base], help="legality, numerics and predicted latency over a grid of "
                        "keyword arguments (docs/sweep.md)")
    sp.set_defaults(fn=cmd_sweep, json=False)
    sp.add_argument("--param", action="append", default=[], metavar="NAME=V1,V2",
                    help="a keyword argument of the kernel and its values (int, float, True/False, None or text)")
    sp.add_argument("--scheduler", metavar="tcp://HOST:PORT",
                    help="run on a dask.distributed cluster ('auto': a local one); default: a process pool")
    sp.add_argument("--workers", type=int, metavar="N", help="processes of the local pool or of 'auto' (default: "
                    "one per core)")
    sp.add_argument("--no-checks", action="store_true", help="simulate without the race and uninitialized-read checks")
    sp.add_argument("--json", dest="json_file", metavar="FILE", help="write every row as JSON")
    sp.add_argument("--csv", metavar="FILE", help="write every row as CSV")
    sp.add_argument("--plot", metavar="FILE", help="plot predicted latency against each parameter, and the "
                    "configurations that did not trace (png, svg, pdf, ...)")
    sp.add_argument("--resume", metavar="FILE.json", help="skip the configurations a --json file already holds")
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
