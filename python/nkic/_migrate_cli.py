"""`nkic migrate FILE.py[::KERNEL]`: the legacy file's kernels are traced on the file's
make_inputs() (or --arg), the file is rewritten into the current API (printed, or written
with -o), and --check simulates both versions on the same inputs and compares them."""
import ast
import inspect
import json
import os
import sys
import tempfile

import numpy as np

from ._core import core
from ._version import __version__
from . import _cli_output as out, _migrate, _migrate_trace as mt, _migrate_versions, _user_exceptions
from ._arg_spec import SEED, describe, parse_args
from ._kernel_file import CliError, load_module, user_call


def _kernel_inputs(mod, kernels, ns):
    """kernel name -> (args, kwargs) for the kernels the given inputs fit."""
    if ns.arg:
        if len(kernels) != 1:
            raise CliError("--arg needs one kernel: name it as FILE.py::KERNEL")
        return {next(iter(kernels)): ((), parse_args(ns.arg))}
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


def _legacy(path, kname, check):
    """(module or None, {name: legacy kernel defined in the file}); a file that does not load
    migrates untraced. A kernel the file imports is migrated with the file that defines it."""
    try:
        mod = load_module(path)
    except CliError as e:
        return None, {}, str(e)
    found = {n: v for n, v in vars(mod).items() if mt.legacy_kernel(v) is not None}
    kernels = {n: v for n, v in found.items()
               if os.path.realpath(v.func.__code__.co_filename) == os.path.realpath(path)}
    imported = sorted(set(found) - set(kernels))
    if imported and (kname in imported or (check and not kernels)):
        raise CliError(f"{path} defines no legacy kernel{' named ' + repr(kname) if kname else ''}; "
                       f"{', '.join(imported)} {'comes' if len(imported) == 1 else 'come'} from another file: "
                       f"migrate that file")
    if kname:
        if kname not in kernels:
            raise CliError(f"{path} defines no legacy kernel named {kname!r}")
        kernels = {kname: kernels[kname]}
    return mod, kernels, None


def _current_api_file(source):
    """Whether the file imports the current `nki` package and no `neuronxcc` (an unparsable one is
    left to migrate_source)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False
    modules = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)] + \
              [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    roots = {m.split(".")[0] for m in modules}
    return "nki" in roots and "neuronxcc" not in roots


def cmd_migrate(ns, pr):
    from . import cli
    path, _, kname = ns.kernel.partition("::")
    if not os.path.exists(path):
        raise CliError(f"no such file: {path}")
    with open(path) as f:
        source = f.read()
    legacy = not _current_api_file(source)
    if not legacy and ns.check:
        raise CliError(f"--check compares legacy kernels with their migration; {path} is written against the "
                       "current nki API, whose older forms are rewritten unchecked")
    # A current-API file is not run: its kernels may be of an nki version other than the one served.
    mod, kernels, load_error = _legacy(path, kname, ns.check) if legacy else (None, {}, None)
    if load_error and ns.check:
        raise CliError(f"--check needs the legacy file to run: {load_error}")
    inputs = _kernel_inputs(mod, kernels, ns) if mod is not None else {}
    grid = cli._parse_grid(ns.grid) or getattr(mod, "GRID", None)
    sites, grids = {}, {}
    try:
        for name, (args, kwargs) in inputs.items():
            k = kernels[name].retarget(ns.target) if ns.target else kernels[name]
            sites.update(mt.trace_legacy(k, path, grid, args, kwargs))
            if grid is not None:
                grids[name] = grid
        # A current-API file has only the forms of older nki versions to change.
        text, notes = _migrate.migrate_source(source, sites, grids) if legacy else (source, [])
        text, newest = _migrate_versions.migrate_to_newest(text)
        notes += newest
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
        refused = _refused(source, notes, inputs)
        if refused:
            report.update(ok=False, refused=[{"kernel": k, "line": n.line, "message": n.message} for k, n in refused])
            if ns.json:
                report["text"] = None if ns.output else text
                print(json.dumps(report, indent=2))
            for k, n in refused:
                print(f"{path}:{n.line}: error: nkic-migrate: {k} is not checked: this line is left as written "
                      f"({n.message})", file=sys.stderr)
            return cli.EXIT_DIAGNOSTIC
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


def _refused(source, notes, inputs):
    """[(kernel, note)]: the marks that keep a checked kernel from running migrated, those
    in its body and those outside every function (the module would not load)."""
    tree = ast.parse(source)
    spans = {f.name: (f.lineno, f.end_lineno) for f in tree.body if isinstance(f, ast.FunctionDef)}
    inside = [span for span in spans.values()]
    out = []
    for name in inputs:
        lo, hi = spans.get(name, (0, -1))
        for n in notes:
            if lo <= n.line <= hi or not any(a <= n.line <= b for a, b in inside):
                out.append((name, n))
    return out


def _inputs(ns, func, args, kwargs):
    """What the check compares on: where the inputs come from, each one, and a caveat
    when every array is all zero."""
    source = f"--arg (arrays of seeded random values, seed {SEED})" if ns.arg else "make_inputs()"
    named = list(inspect.signature(func).bind(*args, **kwargs).arguments.items())
    arrays = [v for _, v in named if isinstance(v, np.ndarray)]
    zero = " (every input array is all zero: equal outputs prove little)" if arrays and not any(
        a.any() for a in arrays) else ""
    return source, [describe(n, v) for n, v in named], zero


def _check(ns, report, path, text, kernels, inputs, grid, tolerance):
    """Simulates every traced kernel in both versions; the rows go to stderr (stdout
    carries the migrated file) and into the JSON report, after a line saying what the
    inputs are."""
    from . import cli
    report["inputs"] = {}
    for name, (args, kwargs) in inputs.items():
        source, described, zero = _inputs(ns, kernels[name].func, args, kwargs)
        report["inputs"][name] = {"source": source, "values": described, "all_zero": bool(zero)}
        if not ns.json:
            print(f"{name} inputs from {source}: {', '.join(described)}{zero}", file=sys.stderr)
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
