"""Every ```python block in docs/*.md runs.

Each block is written to its own .py file (the tracer reads kernel source with
`inspect`, so kernels need a real file) and executed in-process with
runpy.run_path as `__main__`. A block whose first line is

    # raises: err_xxx          (a diagnostic code: the exception's .code)
    # raises: AssertionError   (an exception class name, matched on the MRO)

must raise that; every other block must run cleanly and let no SyntaxWarning or
UserWarning (shadowing, unroll size) escape. A diagnostic raised by a block must
point at the block's own file, never at a file of nkic. Blocks fenced with
another language tag (```text, ```console, ...) are not run.

Tests are named <doc>-<block index>-L<line of the block's first line>.
"""
import re
import runpy
import warnings
from pathlib import Path

import pytest

import nkic
from nkic import _kernel
from nkic._core import core

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"

_FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|~{3,})\s*(?P<info>[^`\s]*)")
_RAISES = re.compile(r"^#\s*raises:\s*(?P<what>[A-Za-z_][\w.]*)\s*$")


def python_blocks(path):
    """[(index, first line number, code)] of the ```python blocks of one file."""
    blocks, lines = [], path.read_text().splitlines()
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, info = len(m.group("indent")), m.group("fence"), m.group("info").lower()
        start, body = i + 1, []
        i += 1
        while i < len(lines):
            stripped = lines[i].strip()
            if stripped.startswith(fence[0] * len(fence)) and set(stripped) == {fence[0]}:
                break
            line = lines[i]
            body.append(line[indent:] if line[:indent].strip() == "" else line.lstrip())
            i += 1
        i += 1  # the closing fence
        if info == "python":
            blocks.append((len(blocks), start + 1, "\n".join(body) + "\n"))
    return blocks


def collect():
    cases = []
    for md in sorted(DOCS.glob("*.md")):
        for index, line, code in python_blocks(md):
            cases.append(pytest.param(md, index, line, code, id=f"{md.stem}-{index:02d}-L{line}"))
    return cases


CASES = collect()


def expected_raise(code):
    first = next((l for l in code.splitlines() if l.strip()), "")
    m = _RAISES.match(first.strip())
    return m.group("what") if m else None


def matches(exc, what):
    if what.startswith("err_"):
        return getattr(exc, "code", None) == what
    return any(c.__name__ == what for c in type(exc).__mro__)


@pytest.fixture
def isolated():
    """Global options and warning filters a block changes do not leak into the next
    block; yields the warnings the block let escape."""
    saved = dict(_kernel._options)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield caught
    _kernel._options.clear()
    _kernel._options.update(saved)
    if core.trace_active():  # a block must never leave a trace open
        core.trace_end()
        pytest.fail("the block left a kernel trace open")


def test_docs_have_examples():
    for name in ("tracing.md", "masks.md", "loops.md"):
        assert (DOCS / name).exists(), f"docs/{name} is missing"
        assert python_blocks(DOCS / name), f"docs/{name} has no ```python example"


@pytest.mark.parametrize("md,index,line,code", CASES)
def test_doc_example(md, index, line, code, tmp_path, isolated):
    script = tmp_path / f"{md.stem}_example_{index:02d}.py"
    script.write_text(code)
    what = expected_raise(code)
    where = f"{md.relative_to(ROOT)}:{line}"
    if what is None:
        runpy.run_path(str(script), run_name="__main__")
        escaped = [f"{w.category.__name__}: {w.message}" for w in isolated
                   if issubclass(w.category, (SyntaxWarning, UserWarning))]
        assert not escaped, f"{where}: the example warns: {escaped}"
        return
    with pytest.raises(Exception) as info:
        runpy.run_path(str(script), run_name="__main__")
    exc = info.value
    assert matches(exc, what), (
        f"{where}: expected {what}, got {type(exc).__name__} "
        f"(code {getattr(exc, 'code', None)!r}): {exc}")
    if isinstance(exc, nkic.NKIError) and getattr(exc, "file", None):
        assert Path(exc.file).resolve() == script.resolve(), (
            f"{where}: the diagnostic points at {exc.file}, not at the example's own file")
