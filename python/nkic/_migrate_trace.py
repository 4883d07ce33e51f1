"""What `nkic migrate` learns by tracing the legacy kernel, and how it checks the result:
the traced IR's tensors (shape, dtype, memory, source line:col) become the destinations
of rewritten calls, and both versions are simulated on the same inputs and compared."""
import importlib.util
import inspect
import os
import re
import sys
import warnings

import numpy as np

from . import _compare, _kernel

# `tensor NAME: DTYPE[D0, D1] BUFFER local  @ FILE:LINE:COL` in the IR's text
_TENSOR = re.compile(r"^\s*tensor (?P<name>\S+): (?P<dtype>\w+)\[(?P<shape>[\d, ]*)\] (?P<buffer>\w+) local\s+@ "
                     r"(?P<file>.+):(?P<line>\d+):(?P<col>\d+)\s*$")


class Site:
    """The result of one legacy call site: shape, dtype and buffer; `unique` is False when
    traced calls there made tensors of different shapes."""
    __slots__ = ("shape", "dtype", "buffer", "unique")

    def __init__(self, shape, dtype, buffer):
        self.shape, self.dtype, self.buffer, self.unique = shape, dtype, buffer, True


def sites(ir_text, path):
    """(line, col) -> Site for the tensors the IR allocates at calls in `path`."""
    found = {}
    real = os.path.realpath(path)
    for line in ir_text.splitlines():
        m = _TENSOR.match(line)
        # The engine's reduce register is the kernel's, placed at its first user: no call's result.
        if not m or os.path.realpath(m.group("file")) != real or m.group("name") == "reduce_accumulator":
            continue
        shape = tuple(int(d) for d in m.group("shape").split(",") if d.strip())
        key = (int(m.group("line")), int(m.group("col")))
        site = Site(shape, m.group("dtype"), m.group("buffer"))
        old = found.setdefault(key, site)
        if old is not site and (old.shape, old.dtype, old.buffer) != (site.shape, site.dtype, site.buffer):
            old.unique = False
    return found


def legacy_kernel(value):
    """A legacy kernel object of a module (a TraceKernel, or None)."""
    return value if isinstance(value, _kernel.TraceKernel) and type(value).__module__.startswith("nkic") else None


def trace_legacy(kernel, path, grid, args, kwargs):
    """Sites of one legacy kernel traced on (args, kwargs)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        traced = kernel.trace(grid, args, kwargs)
    return sites(traced.ir.text(True), path)


def load_module(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def run_legacy(kernel, grid, args, kwargs):
    """Simulates the legacy kernel (as a plain simulation: no hardware notice), with the
    uninitialized-value check: an output computed from memory nothing wrote would make
    equal outputs meaningless. (Both versions run their loops in order, so a race
    changes nothing the comparison sees.)"""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        traced = kernel.trace(grid, args, kwargs)
        bound = inspect.signature(kernel.func).bind(*args, **kwargs).arguments
        return _kernel.simulate_traced(traced, traced.arrays(bound), check_uninitialized=True)


def run_current(path, name, grid, args, kwargs, target=None):
    """Simulates the kernel `name` of the migrated file at `path`, checked as run_legacy
    (the legacy SPMD grid becomes the kernel's spmd_grid argument; `target` as
    NEURON_PLATFORM_TARGET_OVERRIDE)."""
    import nki
    mod = load_module(path, "nkic_migrated_" + re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0]))
    if grid is not None:
        kwargs = dict(kwargs, spmd_grid=tuple(grid))
    saved = os.environ.get("NEURON_PLATFORM_TARGET_OVERRIDE")
    if target:
        os.environ["NEURON_PLATFORM_TARGET_OVERRIDE"] = target
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return nki.simulate(getattr(mod, name), check_uninitialized=True, check_races=False)(*args, **kwargs)
    finally:
        if target:
            if saved is None:
                del os.environ["NEURON_PLATFORM_TARGET_OVERRIDE"]
            else:
                os.environ["NEURON_PLATFORM_TARGET_OVERRIDE"] = saved


def compare(legacy_outs, current_outs, tolerance=None):
    """[Comparison] of the migrated kernel's outputs against the legacy ones: bitwise for
    integers, within the dtype tolerance (or `tolerance`) for floats."""
    legacy_outs, current_outs = _compare.as_tuple(legacy_outs), _compare.as_tuple(current_outs)
    if len(legacy_outs) != len(current_outs):
        raise ValueError(f"the migrated kernel returns {len(current_outs)} output(s), the legacy one "
                            f"{len(legacy_outs)}")
    return [_compare.Comparison(np.asarray(c), np.asarray(lg), tolerance)
            for lg, c in zip(legacy_outs, current_outs)]
