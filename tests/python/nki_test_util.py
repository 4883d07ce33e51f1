"""Shared helpers for the tracer acceptance suite (tests/python/test_trace_*.py).

Kernels live at module level in the test files. Offending lines carry a
`# ERR:<name>` marker comment; `Markers(__file__)` turns a marker plus a token
on that line into the (line, 1-based column) a diagnostic must report, the
same convention as test_errors_foundation.py."""
import os

import numpy as np

import nkic
from neuronxcc import nki

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
NKIC_DIRS = (os.path.join(ROOT, "python", "nkic") + os.sep, os.path.join(ROOT, "python", "neuronxcc") + os.sep)


def in_nkic(path):
    """Is `path` a file of nkic itself (its Python package or the neuronxcc shim)?"""
    return os.path.realpath(path).startswith(NKIC_DIRS)


class Markers:
    """The `# ERR:<name>` markers of one source file."""

    def __init__(self, path):
        self.path = os.path.realpath(path)
        with open(self.path) as f:
            self.lines = f.read().splitlines()

    def line(self, name):
        """1-based line number of the line carrying `# ERR:<name>`."""
        tag = f"# ERR:{name}"
        hits = [i for i, l in enumerate(self.lines, 1) if l.rstrip().endswith(tag)]
        assert len(hits) == 1, f"marker {tag!r} found {len(hits)} times in {self.path}"
        return hits[0]

    def loc(self, name, token, offset=0):
        """(line, 1-based col) of the first `token` on the line marked `name`."""
        line = self.line(name)
        text = self.lines[line - 1].split("# ERR:")[0]
        assert token in text, (token, text)
        return line, text.index(token) + 1 + offset

    def same_file(self, path):
        return path is not None and os.path.realpath(path) == self.path


def f32(shape=(128, 512), value=None, seed=0):
    if value is not None:
        return np.full(shape, value, np.float32)
    return np.random.default_rng(seed).uniform(0.5, 2.0, size=shape).astype(np.float32)


def trace_ir(fn, *args, grid=None, locations=False, **kwargs):
    """The IR text of `fn` (a plain function or a TraceKernel) traced for these arguments."""
    kernel = fn if isinstance(fn, nkic.TraceKernel) else nki.jit(fn)
    return kernel.trace(grid, args, kwargs).ir.text(locations=locations)


def simulate(fn, *args, grid=None, **kwargs):
    kernel = fn if isinstance(fn, nkic.TraceKernel) else nki.jit(fn)
    return nki.simulate_kernel(kernel[grid] if grid is not None else kernel, *args, **kwargs)


def trace_error(fn, *args, grid=None, exc=nkic.NKIError, **kwargs):
    """Trace `fn` and return the exception it must raise."""
    kernel = fn if isinstance(fn, nkic.TraceKernel) else nki.jit(fn)
    try:
        kernel.trace(grid, args, kwargs)
    except exc as e:
        return e
    raise AssertionError(f"tracing {getattr(fn, '__name__', fn)} raised no {exc.__name__}")


def check_diag(e, markers, code, message, locs, notes=(), api=None):
    """`e` is the diagnostic `code` whose message contains every string of
    `message`, reported at one of `locs` ((marker, token[, offset]) specs) of
    `markers`' file, with exactly the call-site `notes` ((marker, token[, offset],
    callee) innermost first) and, when given, naming the NKI `api` in flight."""
    assert isinstance(e, nkic.NKIError), type(e)
    assert e.code == code, (e.code, str(e))
    for m in ([message] if isinstance(message, str) else message):
        assert m in e.message, (m, e.message)
    assert markers.same_file(e.file), (e.file, markers.path)
    expected = {markers.loc(*spec) for spec in locs}
    assert (e.line, e.col) in expected, ((e.line, e.col), sorted(expected), str(e))
    assert len(e.notes) == len(notes), (e.notes, notes)
    for got, spec in zip(e.notes, notes):
        nfile, nline, ncol, nmsg = got
        *where, callee = spec
        assert markers.same_file(nfile), (nfile, markers.path)
        assert (nline, ncol) == markers.loc(*where), (got, markers.loc(*where))
        assert f"'{callee}'" in nmsg, (callee, nmsg)
        assert f":{nline}:{ncol}: note: {nmsg}" in str(e), str(e)
    text = str(e)
    assert e.message in text
    assert f":{e.line}:{e.col}:" in text, text
    if api is not None:
        assert e.api == api, (e.api, api)
        assert f"(in '{api}')" in text, text
    return e


# ISA instructions that carry a single ALU op: ir_op names them by the op.
_SINGLE_OP = ("tensor_tensor", "tensor_scalar", "activation")


def ir_op(rhs):
    """The operation of one IR instruction (the text right of ' = '): the ISA
    instruction's name (`load[dma](...)` -> "load"), its ALU op for a one-op
    tensor_tensor / tensor_scalar / activation (`tensor_scalar[dve](x; multiply 2)`
    -> "multiply"), "copy" for tensor_copy."""
    name = rhs.split("[", 1)[0]
    steps = rhs.split("(", 1)[1].split(")", 1)[0].split("; ")[1:] if "(" in rhs else []
    if name in _SINGLE_OP and len(steps) == 1:
        return steps[0].replace("reverse ", "").split(" ")[0]
    return "copy" if name == "tensor_copy" else name


def ir_ops(ir):
    """The operation (ir_op) of each instruction of an IR text."""
    ops = []
    for line in ir.splitlines():
        line = line.strip()
        if line.startswith(("kernel ", "tensor ")) or " = " not in line:
            continue
        ops.append(ir_op(line.split(" = ", 1)[1]))
    return ops
