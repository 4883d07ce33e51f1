r"""docs/errors.md lists every diagnostic code nkic can raise.

The codes are what `grep -rhoE '"(err|warn)_[a-z0-9_]+"' src python` finds: the
error catalog (src/sema/ErrorCatalog.cpp) and the simulator's run-time checks
(src/sim). Every such code must have its own section in docs/errors.md
(`### \`code\``) with

- for an `err_*` code: a ```python example whose first line is `# raises: <code>`
  (tests/python/test_docs.py runs it and checks the code) and a fix, a block
  of the same section that runs cleanly;
- for a `warn_*` code: an example that records the warning (run here);

unless it is in CANNOT_BE_TRIGGERED below, whose section must say so and give
no failing example. Conversely, every `# raises: err_*` in docs/errors.md must
be a code nkic has.
"""
import re
import runpy
import sys
import warnings
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_docs import ROOT, expected_raise, isolated, python_blocks  # noqa: E402,F401

ERRORS_MD = ROOT / "docs" / "errors.md"

_CODE = re.compile(r'"((?:err|warn)_[a-z0-9_]+)"')
_SECTION = re.compile(r"^###\s+`((?:err|warn)_[a-z0-9_]+)`\s*$")

# Strings the grep matches that are not diagnostic codes.
NOT_CODES = {
    # python/bindings/trace_api.cpp calls Python's warnings.warn_explicit by name.
    "warn_explicit",
}

# Codes no kernel can raise, each with the reason; keep this list minimal.
CANNOT_BE_TRIGGERED = {
    # A defect of nkic itself (a C++ invariant broke): reported at the user's line
    # instead of as raw C++ text. No correct kernel triggers it on purpose.
    "err_internal",
}


# Codes only the command line reports (from Python the kernel's own exception propagates):
# their section's example runs the command line and checks the code itself.
COMMAND_LINE_ONLY = {"err_exception_in_kernel"}


def grep_codes():
    """The codes `grep -rhoE '"(err|warn)_[a-z0-9_]+"' src python` prints."""
    codes = set()
    for top in ("src", "python"):
        for path in (ROOT / top).rglob("*"):
            if not path.is_file():
                continue
            data = path.read_bytes()
            if b"\0" in data:  # grep -o prints no matches of binary files
                continue
            codes.update(_CODE.findall(data.decode("utf-8", errors="replace")))
    return codes


def sections():
    """{code: [(first line, code of the block)]} for every `### \\`code\\`` section;
    a section ends at the next `##` / `###` heading."""
    lines = ERRORS_MD.read_text().splitlines()
    headings = [n for n, l in enumerate(lines, 1) if l.startswith(("## ", "### "))] + [len(lines) + 1]
    spans = {}
    for n, line in enumerate(lines, 1):
        m = _SECTION.match(line)
        if m:
            assert m.group(1) not in spans, f"docs/errors.md has two sections for {m.group(1)}"
            spans[m.group(1)] = (n, min(h for h in headings if h > n))
    blocks = python_blocks(ERRORS_MD)
    return {code: [(line, body) for _, line, body in blocks if start < line < end]
            for code, (start, end) in spans.items()}


CODES = grep_codes() - NOT_CODES
SECTIONS = sections()


def test_grep_finds_the_catalog():
    # A sanity check on the grep itself: the catalog and the simulator's codes.
    assert {"err_tensor_access_out_of_bound", "err_read_uninitialized_memory",
            "err_unexpected_output_dependencies", "warn_block_dimension_is_deprecated"} <= CODES
    assert len(CODES) > 50


def test_allow_lists_are_minimal():
    assert NOT_CODES <= grep_codes(), "NOT_CODES names a string the grep no longer finds"
    assert CANNOT_BE_TRIGGERED <= CODES, "CANNOT_BE_TRIGGERED names a code nkic no longer has"
    assert COMMAND_LINE_ONLY <= CODES, "COMMAND_LINE_ONLY names a code nkic no longer has"


def test_every_code_has_a_section():
    missing = sorted(CODES - set(SECTIONS))
    assert not missing, f"docs/errors.md has no `### \\`code\\`` section for {missing}"
    unknown = sorted(set(SECTIONS) - CODES)
    assert not unknown, f"docs/errors.md documents codes nkic does not have: {unknown}"


def test_every_code_is_in_the_table_of_contents():
    text = ERRORS_MD.read_text()
    contents = text[text.index("## Contents"):text.index("\n## ", text.index("## Contents") + 1)]
    missing = sorted(c for c in CODES if f"(#{c})" not in contents)
    assert not missing, f"the contents of docs/errors.md do not link {missing}"


@pytest.mark.parametrize("code", sorted(c for c in CODES if c.startswith("err_")))
def test_error_code_has_failing_example_and_fix(code):
    blocks = SECTIONS.get(code, [])
    raising = [line for line, body in blocks if expected_raise(body) == code]
    fixes = [line for line, body in blocks if expected_raise(body) is None]
    if code in CANNOT_BE_TRIGGERED:
        assert not raising and not fixes, f"{code} cannot be triggered: its section gives no example"
        return
    if code in COMMAND_LINE_ONLY:
        checking = [line for line, body in blocks if f'["code"] == "{code}"' in body]
        assert checking and len(fixes) >= 2, f"docs/errors.md: the {code} section needs an example that checks " \
                                             f"the command line's {code} and a fix"
        return
    assert raising, f"docs/errors.md: the {code} section has no `# raises: {code}` example"
    assert fixes, f"docs/errors.md: the {code} section has no fix (a block that runs cleanly)"
    others = [(line, expected_raise(body)) for line, body in blocks
              if expected_raise(body) not in (None, code)]
    assert not others, f"docs/errors.md: the {code} section has examples raising other codes: {others}"


def test_every_raised_code_exists():
    for _, line, body in python_blocks(ERRORS_MD):
        what = expected_raise(body)
        if what and what.startswith("err_"):
            assert what in CODES, f"docs/errors.md:{line}: `# raises: {what}` is not a code nkic has"


@pytest.mark.parametrize("code", sorted(c for c in CODES if c.startswith("warn_")))
def test_warning_code_example_warns(code, tmp_path, monkeypatch, isolated):
    blocks = [body for _, body in SECTIONS.get(code, []) if expected_raise(body) is None]
    assert blocks, f"docs/errors.md: the {code} section has no example"
    # The core issues its warnings through warnings.warn_explicit; record them even
    # when the example catches them itself.
    issued = []
    original = warnings.warn_explicit

    def recording(message, *args, **kwargs):
        issued.append(str(message))
        return original(message, *args, **kwargs)

    monkeypatch.setattr(warnings, "warn_explicit", recording)
    script = tmp_path / "warning_example.py"
    script.write_text(blocks[0])
    runpy.run_path(str(script), run_name="__main__")
    assert any(m.startswith(f"[{code}]") for m in issued), (
        f"the first example of the {code} section does not issue {code}: {issued}")
