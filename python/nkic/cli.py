"""The nkic command line: trace, run and check NKI kernels without hardware.

  nkic trace FILE::KERNEL --arg 'x=f32[250,512]' [--grid 2,4] [--target trn2]
  nkic run FILE[::KERNEL] [--check-uninitialized]
  nkic check FILE::KERNEL --arg ... --target trn1,trn2 | all
"""
import argparse
import importlib.util
import inspect
import os
import re
import sys
import time

import numpy as np

from ._core import core
from . import _dtypes, _kernel

_SHORT_DTYPES = {
    "f32": "float32", "f16": "float16", "bf16": "bfloat16", "tf32": "tfloat32", "fp8e4m3": "float8_e4m3",
    "fp8e5m2": "float8_e5m2", "i8": "int8", "i16": "int16", "i32": "int32", "u8": "uint8", "u16": "uint16",
    "u32": "uint32", "bool": "bool",
}
_TOLERANCE = {"float32": 1e-5, "tfloat32": 1e-3, "float16": 1e-3, "bfloat16": 1e-2, "float8_e4m3": 1.3e-1,
              "float8_e5m2": 2.6e-1}


class CliError(Exception):
    pass


def _load_module(path):
    if not os.path.exists(path):
        raise CliError(f"no such file: {path}")
    name = "nkic_user_" + re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0])
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def _find_kernel(mod, name, path):
    if name:
        k = getattr(mod, name, None)
        if k is None:
            raise CliError(f"{path} defines no kernel named {name!r}")
    else:
        found = [v for v in vars(mod).values() if isinstance(v, _kernel.TraceKernel)]
        if len(found) != 1:
            raise CliError(f"{path} defines {len(found)} kernels; name one as {path}::KERNEL")
        k = found[0]
    return k if isinstance(k, _kernel.TraceKernel) else _kernel.TraceKernel(k, mode="simulation")


def _split_target(spec):
    path, _, kernel = spec.partition("::")
    return path, kernel or None


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
    return tuple(int(g) for g in text.split(","))


def _kernel_args(mod, kernel, arg_specs):
    if arg_specs:
        return (), dict(parse_arg(a) for a in arg_specs)
    make = getattr(mod, "make_inputs", None)
    if make is None:
        raise CliError(f"give the kernel's arguments with --arg NAME=DTYPE[SHAPE] (or define make_inputs() in the file)")
    return tuple(make()), {}


def _prepare(ns):
    """The file's module, its kernel (retargeted by --target), arguments and grid."""
    path, kname = _split_target(ns.kernel)
    mod = _load_module(path)
    k = _find_kernel(mod, kname, path)
    if ns.target and ns.cmd != "check":
        k.target = ns.target
    args, kwargs = _kernel_args(mod, k, ns.arg)
    grid = _parse_grid(ns.grid) or getattr(mod, "GRID", None)
    try:
        inspect.signature(k.func).bind(*args, **kwargs)
    except TypeError as e:
        raise CliError(f"the arguments do not match {k.__name__}: {e}") from None
    return path, mod, k, args, kwargs, grid


def cmd_trace(ns):
    path, mod, k, args, kwargs, grid = _prepare(ns)
    traced = k.trace(grid, args, kwargs)
    sys.stdout.write(traced.ir.text(not ns.no_locations))
    return 0


def _max_error(out, ref):
    o = np.asarray(out).astype(np.float64)
    r = np.asarray(ref).astype(np.float64)
    with np.errstate(invalid="ignore"):
        return float(np.nanmax(np.abs(o - r))) if o.size else 0.0


def cmd_run(ns):
    path, mod, k, args, kwargs, grid = _prepare(ns)
    t0 = time.perf_counter()
    traced = k.trace(grid, args, kwargs)
    t1 = time.perf_counter()
    bound = inspect.signature(k.func).bind(*args, **kwargs).arguments
    arrays = traced.arrays(bound)
    outs = _kernel.simulate_traced(traced, arrays, ns.check_uninitialized, ns.check_races)
    t2 = time.perf_counter()
    print(f"{os.path.basename(path)}::{k.__name__}: traced {traced.ir.num_instructions()} instructions "
          f"in {1e3 * (t1 - t0):.2f} ms, simulated in {1e3 * (t2 - t1):.2f} ms")
    reference = getattr(mod, "reference", None)
    if reference is None:
        print("  no reference() in the file: nothing to compare")
        return 0
    refs = reference(*args, **kwargs)
    outs = outs if isinstance(outs, tuple) else (outs,)
    refs = refs if isinstance(refs, tuple) else (refs,)
    ok = True
    for i, (o, r) in enumerate(zip(outs, refs)):
        dt = _dtypes.dtype_name(o.dtype)
        tol = getattr(mod, "TOLERANCE", _TOLERANCE.get(dt, 0.0))
        err = _max_error(o, r)
        scale = max(1.0, float(np.nanmax(np.abs(np.asarray(r).astype(np.float64)))) if np.size(r) else 1.0)
        passed = np.asarray(o).shape == np.asarray(r).shape and err <= tol * scale
        ok = ok and passed
        print(f"  output {i} ({dt}{list(np.shape(o))}): max abs error {err:.3g} "
              f"(tolerance {tol * scale:.3g}) {'ok' if passed else 'MISMATCH'}")
    return 0 if ok else 1


def cmd_check(ns):
    path, mod, k, args, kwargs, grid = _prepare(ns)
    targets = ["inf1", "trn1", "inf2", "trn2", "trn3"] if ns.target in (None, "all") else ns.target.split(",")
    failures = 0
    for t in targets:
        k.target = t
        try:
            k.trace(grid, args, kwargs)
            print(f"{t}: ok")
        except core.NKIError as e:
            failures += 1
            print(f"{t}: FAIL {e.code}: {e.message}" + (f" at {e.file}:{e.line}:{e.col}" if e.file else ""))
    return 1 if failures else 0


def main(argv=None):
    p = argparse.ArgumentParser(prog="nkic", description="Trace, check and simulate NKI kernels on the CPU.")
    sub = p.add_subparsers(dest="cmd", required=True)
    for name, fn, help_ in (("trace", cmd_trace, "print the IR of FILE::KERNEL"),
                            ("run", cmd_run, "trace, simulate and compare with the file's reference()"),
                            ("check", cmd_check, "legality on one or more targets")):
        sp = sub.add_parser(name, help=help_)
        sp.add_argument("kernel", help="FILE.py or FILE.py::KERNEL")
        sp.add_argument("--arg", action="append", default=[], help="NAME=DTYPE[D0,D1,...] (e.g. x=f32[128,512])")
        sp.add_argument("--grid", help="SPMD launch grid, e.g. 2,4")
        sp.add_argument("--target", help="trn1, inf2, trn2, trn3, inf1 (check: comma list or 'all')")
        sp.set_defaults(fn=fn)
        if name == "trace":
            sp.add_argument("--no-locations", action="store_true", help="omit source locations")
        if name == "run":
            sp.add_argument("--check-uninitialized", action="store_true",
                            help="report reads of memory no instruction wrote")
            sp.add_argument("--check-races", action="store_true",
                            help="report affine_range iterations that depend on each other")
    ns = p.parse_args(argv)
    try:
        return ns.fn(ns)
    except CliError as e:
        print(f"nkic: error: {e}", file=sys.stderr)
        return 2
    except core.NKIError as e:
        print(str(e), file=sys.stderr)
        return 1
