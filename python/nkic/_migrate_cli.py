"""`nkic migrate FILE.py[::KERNEL]`: the legacy file's kernels are traced on the file's
make_inputs() (or --arg), the file is rewritten into the current API (printed, or written
with -o), and --check simulates both versions on the same inputs and compares them."""
import inspect
import json
import os
import sys
import tempfile

from ._core import core
from ._version import __version__
from . import _cli_output as out, _migrate, _migrate_trace as mt, _user_exceptions
from ._kernel_file import CliError, load_module, user_call


def _kernel_inputs(cli, mod, kernels, ns):
    """kernel name -> (args, kwargs) for the kernels the given inputs fit."""
    if ns.arg:
        if len(kernels) != 1:
            raise CliError("--arg needs one kernel: name it as FILE.py::KERNEL")
        return {next(iter(kernels)): ((), dict(cli.parse_arg(a) for a in ns.arg))}
    make = getattr(mod, "make_inputs", None)
    if make is None:
        return {}
    args = tuple(user_call("make_inputs()", make))
    fits = {}
    for name, k in kernels.items():
        try:
            inspect.signature(k.func).bind(*args)
        except TypeError:
            continue
        fits[name] = (args, {})
    return fits


def _legacy(path, kname):
    """(module or None, {name: legacy kernel}); a file that does not load migrates untraced."""
    try:
        mod = load_module(path)
    except CliError as e:
        return None, {}, str(e)
    kernels = {n: v for n, v in vars(mod).items() if mt.legacy_kernel(v) is not None}
    if kname:
        if kname not in kernels:
            raise CliError(f"{path} defines no legacy kernel named {kname!r}")
        kernels = {kname: kernels[kname]}
    return mod, kernels, None


def cmd_migrate(ns, pr):
    from . import cli
    path, _, kname = ns.kernel.partition("::")
    if not os.path.exists(path):
        raise CliError(f"no such file: {path}")
    with open(path) as f:
        source = f.read()
    mod, kernels, load_error = _legacy(path, kname)
    if load_error and ns.check:
        raise CliError(f"--check needs the legacy file to run: {load_error}")
    inputs = _kernel_inputs(cli, mod, kernels, ns) if mod is not None else {}
    grid = cli._parse_grid(ns.grid) or getattr(mod, "GRID", None)
    sites, grids = {}, {}
    try:
        for name, (args, kwargs) in inputs.items():
            k = kernels[name].retarget(ns.target) if ns.target else kernels[name]
            sites.update(mt.trace_legacy(k, path, grid, args, kwargs))
            if grid is not None:
                grids[name] = grid
        text, notes = _migrate.migrate_source(source, sites, grids)
    except core.NKIError as e:  # before SyntaxError: the kernel diagnostics derive from it
        return _fail(ns, pr, path, e)
    except SyntaxError as e:
        raise CliError(f"{path}:{e.lineno}: cannot parse the file: {e.msg}") from None
    except Exception as e:  # the legacy kernel's own code raised it while traced
        return _fail(ns, pr, path, _user_exceptions.diagnostic(e, None))
    if ns.output:
        with open(ns.output, "w") as f:
            f.write(text)
    report = {"schema": "nkic.migrate/1", "version": __version__, "file": path, "output": ns.output,
              "traced": sorted(inputs), "notes": [{"line": n.line, "message": n.message} for n in notes],
              "check": [], "ok": True}
    if load_error:
        print(f"nkic: warning: {path} does not run ({load_error}); destinations of ISA results are marked",
              file=sys.stderr)
    for n in notes:
        print(f"{path}:{n.line}: note: nkic-migrate: {n.message}", file=sys.stderr)
    status = cli.EXIT_OK
    if ns.check:
        if not inputs:
            raise CliError("--check needs inputs: define make_inputs() in the file or give --arg")
        try:
            status = _check(ns, report, path, text, kernels, inputs, grid, getattr(mod, "TOLERANCE", None))
        except core.NKIError as e:
            return _fail(ns, pr, path, e)
        except Exception as e:  # a kernel's own code raised it while traced
            return _fail(ns, pr, path, _user_exceptions.diagnostic(e, None))
    if ns.json:
        report["text"] = None if ns.output else text
        print(json.dumps(report, indent=2))
    elif not ns.output:
        sys.stdout.write(text)
    return status


def _check(ns, report, path, text, kernels, inputs, grid, tolerance):
    """Simulates every traced kernel in both versions; the rows go to stderr (stdout
    carries the migrated file) and into the JSON report."""
    from . import cli
    with tempfile.TemporaryDirectory(prefix="nkic_migrate_") as tmp:
        migrated = ns.output or os.path.join(tmp, os.path.basename(path))
        if not ns.output:
            with open(migrated, "w") as f:
                f.write(text)
        for name, (args, kwargs) in inputs.items():
            k = kernels[name].retarget(ns.target) if ns.target else kernels[name]
            legacy = mt.run_legacy(k, grid, args, kwargs)
            current = mt.run_current(migrated, name, grid, args, kwargs, ns.target)
            for i, c in enumerate(mt.compare(legacy, current, tolerance)):
                same = c.ok and c.max_abs_error == 0
                verdict = "bitwise equal" if same else ("ok: " if c.ok else "MISMATCH: ") + c.summary()
                report["check"].append({"kernel": name, "output": i, "bitwise": same, **c.as_dict()})
                if not ns.json and not (ns.quiet and c.ok):
                    print(f"{name} output {i} ({c.dtype}{c.shape}): {verdict}", file=sys.stderr)
    report["ok"] = all(row["ok"] for row in report["check"])
    return cli.EXIT_OK if report["ok"] else cli.EXIT_MISMATCH


def _fail(ns, pr, path, e):
    from . import cli
    if ns.json:
        print(json.dumps({"schema": "nkic.migrate/1", "version": __version__, "file": path, "ok": False,
                          "diagnostics": [out.diagnostic(e)]}, indent=2))
    else:
        pr.diagnostic(e)
    return cli.EXIT_DIAGNOSTIC
