"""An exception raised by the kernel's own Python code while it is traced (a failing assert,
a misspelt nl.* or plain name, a missing attribute, numpy on a tile) is reported at the user's line in
the user's terms: on the command line as a diagnostic (exit 2, valid JSON and SARIF) for every
subcommand, from Python as the user's own exception. No output carries nkic's paths or
pybind11's frame text."""
import json
import os
import subprocess
import sys
import traceback
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": f"{ROOT / 'python'}{os.pathsep}{ROOT / 'build' / 'python'}", "NO_COLOR": "1"}

HEADERS = {
    "legacy": "from neuronxcc import nki\nimport neuronxcc.nki.language as nl\n",
    "current": "import nki\nimport nki.language as nl\nimport nki.isa as nisa\n",
}
# The kernel copies its input through SBUF; MISTAKE is line LINE of every file.
BODIES = {
    "legacy": ("    t = nl.load(a)\n", "    nl.store(out, value=t)\n"),
    "current": ("    t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)\n    nisa.dma_copy(dst=t, src=a)\n",
                "    nisa.dma_copy(dst=out, src=t)\n"),
}
MISTAKES = {
    "assert": 'assert a.shape[0] == 64, "rows must be 64"',
    "typo": "u = nl.multipy(t, t)",
    "name": "u = multipy(t, t)",
    "attribute": "u = t.shapez",
    "numpy": "u = np.exp(t)",
}
LINE = 12
MODULES = {"legacy": "neuronxcc.nki.language", "current": "nki.language"}


def kernel_source(api, mistake):
    load, store = BODIES[api]
    head = f"import numpy as np\n{HEADERS[api]}\n\n@nki.jit\ndef k(a):\n"
    head += "    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)\n" + load
    head = head.rstrip("\n").split("\n")
    # Pad with comments so that the mistake lands on LINE whatever the API's preamble.
    lines = head[:3] + ["#"] * (LINE - 1 - len(head)) + head[3:]
    lines += ["    " + MISTAKES[mistake], store.rstrip("\n"), "    return out", "", "",
              "def make_inputs():", "    return (np.ones((128, 64), np.float32),)", "", "",
              "def reference(a):", "    return a"]
    text = "\n".join(lines) + "\n"
    assert text.splitlines()[LINE - 1].strip() == MISTAKES[mistake]
    return text


def expected(api, mistake):
    """(code, message, col) of the diagnostic at LINE."""
    raised = "the kernel's Python code raised "
    return {
        "assert": ("err_exception_in_kernel", raised + "AssertionError: rows must be 64", 12),
        "typo": ("err_exception_in_kernel", raised + f"AttributeError: module '{MODULES[api]}' has no attribute "
                 "'multipy'. Did you mean: 'multiply'?", 9),
        "name": ("err_exception_in_kernel", raised + "NameError: name 'multipy' is not defined", 9),
        "attribute": ("err_exception_in_kernel", raised + "AttributeError: 'NkiTensor' object has no attribute "
                      "'shapez'. Did you mean: 'shape'?", 9),
        "numpy": ("err_unexpected_type_of_operand", "unexpected type of operand 'x': got a traced tile or index "
                  "passed to 'exp', which computes on host values; use the nl.* / nisa.* API (operand 'NkiTensor' "
                  "does not support ufuncs (__array_ufunc__=None))", 9),
    }[mistake]


HINTS = {
    "legacy": "nkic runs the kernel's Python once to trace it; fix the line shown (the neuronxcc.nki APIs are in "
              "docs/language.md)",
    "current": "nkic runs the kernel's Python once to trace it; fix the line shown (the nki APIs are in "
               "docs/current_api.md)",
}


def nkic(*argv, cwd):
    p = subprocess.run([sys.executable, "-m", "nkic", *argv], capture_output=True, text=True, env=ENV, cwd=cwd,
                       timeout=300)
    return p.returncode, p.stdout, p.stderr


def assert_no_internals(*texts):
    for text in texts:
        for leak in (str(ROOT / "python"), "_rewrite.py", "_kernel.py", "At:\n", "Traceback", "pybind11"):
            assert leak not in text, f"{leak!r} in output:\n{text}"


CASES = [(api, m) for api in HEADERS for m in MISTAKES]


@pytest.fixture
def kernel_file(tmp_path, request):
    api, mistake = request.param
    path = tmp_path / f"{api}_{mistake}.py"
    path.write_text(kernel_source(api, mistake))
    return api, mistake, path


@pytest.mark.parametrize("kernel_file", CASES, indirect=True, ids=[f"{a}-{m}" for a, m in CASES])
def test_check_json_and_sarif_locate_the_users_line(kernel_file):
    api, mistake, path = kernel_file
    code, message, col = expected(api, mistake)
    status, stdout, stderr = nkic("check", path.name, "--target", "trn1,trn2", "--json", cwd=path.parent)
    assert status == 2
    report = json.loads(stdout)
    assert report["ok"] is False and [t["target"] for t in report["targets"]] == ["trn1", "trn2"]
    for t in report["targets"]:
        (d,) = t["diagnostics"]
        assert (d["code"], d["message"], d["file"], d["line"], d["col"]) == (code, message, str(path), LINE, col)
        if code == "err_exception_in_kernel":
            assert d["hint"] == HINTS[api] and d["api"] is None
        else:  # numpy's function, not the NKI call before it
            assert d["api"] == "numpy.exp"
    assert_no_internals(stdout, stderr)

    status, stdout, stderr = nkic("check", path.name, "--target", "trn2", "--sarif", cwd=path.parent)
    assert status == 2
    (result,) = json.loads(stdout)["runs"][0]["results"]
    assert result["ruleId"] == code and result["level"] == "error"
    assert result["message"]["text"].startswith(message)
    region = result["locations"][0]["physicalLocation"]
    assert region["artifactLocation"]["uri"] == path.name
    assert (region["region"]["startLine"], region["region"]["startColumn"]) == (LINE, col)
    assert_no_internals(stdout, stderr)


@pytest.mark.parametrize("kernel_file", CASES, indirect=True, ids=[f"{a}-{m}" for a, m in CASES])
def test_run_json_reports_the_diagnostic(kernel_file):
    api, mistake, path = kernel_file
    code, message, col = expected(api, mistake)
    status, stdout, stderr = nkic("run", path.name, "--json", cwd=path.parent)
    assert status == 2
    report = json.loads(stdout)
    assert report["status"] == "diagnostic" and report["ok"] is False
    (d,) = report["diagnostics"]
    assert (d["code"], d["message"], d["line"], d["col"]) == (code, message, LINE, col)
    assert_no_internals(stdout, stderr)


@pytest.mark.parametrize("command", ["trace", "run", "profile", "check"])
@pytest.mark.parametrize("kernel_file", [("current", "assert"), ("legacy", "typo")], indirect=True,
                         ids=["current-assert", "legacy-typo"])
def test_every_subcommand_prints_the_diagnostic_with_its_excerpt(kernel_file, command):
    api, mistake, path = kernel_file
    code, message, col = expected(api, mistake)
    argv = [command, path.name] + (["--target", "trn2", "-v"] if command == "check" else [])
    status, stdout, stderr = nkic(*argv, cwd=path.parent)
    assert status == 2
    text = stdout + stderr
    assert f"{path}:{LINE}:{col}: error: [{code}] {message}" in text
    assert "    " + MISTAKES[mistake] in text and f"hint: {HINTS[api]}" in text
    assert_no_internals(stdout, stderr)


def test_sweep_row_is_the_diagnostic(tmp_path):
    path = tmp_path / "swept.py"
    path.write_text(kernel_source("legacy", "assert").replace("def k(a):", "def k(a, rows=128):").replace(
        "a.shape[0] == 64", "rows == 64"))
    out = tmp_path / "rows.json"
    status, stdout, stderr = nkic("sweep", path.name, "--param", "rows=64,128", "--target", "trn2", "--json",
                                  str(out), "--workers", "1", "-q", cwd=tmp_path)
    assert status == 0
    rows = {r["params"]["rows"]: r for r in json.loads(out.read_text())["rows"]}
    assert rows[64]["status"] == "ok"
    bad = rows[128]
    assert (bad["status"], bad["error_code"], bad["line"]) == ("diagnostic", "err_exception_in_kernel", LINE)
    assert bad["message"] == "the kernel's Python code raised AssertionError: rows must be 64"
    assert_no_internals(stdout, stderr, out.read_text())


def test_migrate_reports_the_legacy_kernels_exception(tmp_path):
    path = tmp_path / "legacy.py"
    path.write_text(kernel_source("legacy", "attribute"))
    status, stdout, stderr = nkic("migrate", path.name, "--json", cwd=tmp_path)
    assert status == 2
    (d,) = json.loads(stdout)["diagnostics"]
    code, message, col = expected("legacy", "attribute")
    assert (d["code"], d["message"], d["line"], d["col"]) == (code, message, LINE, col)
    assert_no_internals(stdout, stderr)


@pytest.mark.parametrize("api", list(HEADERS))
def test_from_python_the_users_exception_propagates_without_nkic_frames(tmp_path, api, monkeypatch):
    path = tmp_path / f"py_{api}.py"
    path.write_text(kernel_source(api, "assert"))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("NKI_SIMULATOR", "1")
    mod = __import__(path.stem)
    with pytest.raises(AssertionError) as info:
        mod.k(np.ones((128, 64), np.float32))
    assert type(info.value) is AssertionError and str(info.value) == "rows must be 64"
    frames = traceback.extract_tb(info.value.__traceback__)
    assert (frames[-1].filename, frames[-1].lineno) == (str(path), LINE)
    # Below the call into the kernel nothing of nkic remains: the raise is the user's frame.
    first_user = next(i for i, f in enumerate(frames) if f.filename == str(path))
    assert first_user == len(frames) - 1


def test_an_exception_in_a_helper_notes_the_call_site(tmp_path):
    path = tmp_path / "helper.py"
    path.write_text(kernel_source("legacy", "assert").replace(
        '    assert a.shape[0] == 64, "rows must be 64"', "    check_rows(a)").replace(
        "@nki.jit", 'def check_rows(a):\n    assert a.shape[0] == 64, "rows must be 64"\n\n\n@nki.jit'))
    lines = path.read_text().splitlines()
    assert_line = lines.index('    assert a.shape[0] == 64, "rows must be 64"') + 1
    call_line = lines.index("    check_rows(a)") + 1
    status, stdout, stderr = nkic("check", path.name, "--target", "trn2", "--json", cwd=tmp_path)
    assert status == 2
    (d,) = json.loads(stdout)["targets"][0]["diagnostics"]
    assert (d["code"], d["line"], d["col"]) == ("err_exception_in_kernel", assert_line, 12)
    assert d["notes"] == [{"message": "called 'check_rows' from here", "file": str(path), "line": call_line, "col": 5}]
    assert_no_internals(stdout, stderr)


def test_an_exception_out_of_nkic_itself_is_err_internal_at_the_kernel(tmp_path, monkeypatch, capsys):
    # No kernel triggers a defect of nkic on purpose: make one in nkic's parameter check.
    from nkic import _typehints, cli

    # The replacement's code is nkic's file, as a defect's frame would be.
    space = {}
    exec(compile("def broken(*args):\n    raise RuntimeError(\"an invariant of nkic's own\")\n",
                 _typehints.__file__, "exec"), space)
    monkeypatch.setattr(_typehints, "check_param_hints", space["broken"])
    path = tmp_path / "fine.py"
    path.write_text(kernel_source("legacy", "assert").replace('assert a.shape[0] == 64, "rows must be 64"', "pass"))
    def_line = path.read_text().splitlines().index("@nki.jit") + 1  # where the kernel is defined
    assert cli.main(["check", str(path), "--target", "trn2", "--json"]) == 2
    (d,) = json.loads(capsys.readouterr().out)["targets"][0]["diagnostics"]
    assert (d["code"], d["file"], d["line"]) == ("err_internal", str(path), def_line)
    assert d["message"] == "internal error in nkic while handling this line (an unexpected exception in nkic's " \
                           "Python front end)"
    assert d["hint"] == "this is a defect of nkic, not of the kernel: please report it with the kernel"
    # -v adds nkic's traceback, for the report.
    assert cli.main(["trace", str(path), "-v"]) == 2
    err = capsys.readouterr().err
    assert "[err_internal]" in err and "RuntimeError: an invariant of nkic's own" in err


@pytest.mark.parametrize("command,schema", [("trace", "nkic.trace/1"), ("profile", "nkic.profile/1")])
def test_trace_and_profile_json_carry_the_diagnostic(tmp_path, command, schema):
    path = tmp_path / "typo.py"
    path.write_text(kernel_source("current", "typo"))
    status, stdout, stderr = nkic(command, path.name, "--json", cwd=tmp_path)
    assert status == 2
    report = json.loads(stdout)
    assert report["schema"] == schema and report["ok"] is False
    (d,) = report["diagnostics"]
    code, message, col = expected("current", "typo")
    assert (d["code"], d["message"], d["file"], d["line"], d["col"]) == (code, message, str(path), LINE, col)
    assert_no_internals(stdout, stderr)
