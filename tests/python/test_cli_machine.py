"""The nkic command for machines and CI: --json on trace / check / run validated against
the schemas of docs/cli.md, check --sarif, the exit codes (0 ok, 1 numeric mismatch,
2 kernel diagnostic, 3 usage error), -q / -v, colour only on a terminal without NO_COLOR,
run's default checks and its messages for NaN outputs and mismatched references."""
import json
import os
import pty
import subprocess
import textwrap
from pathlib import Path

import pytest

import nkic

ROOT = Path(__file__).resolve().parents[2]
NKIC = str(ROOT / "bin" / "nkic")
MASKED_ADD = str(ROOT / "examples" / "masked_add.py")
TRACE_ARGS = ["trace", MASKED_ADD + "::masked_add_kernel",
              "--arg", "a_input=f32[1000,512]", "--arg", "b_input=f32[1000,512]"]
HEAD = """\
import numpy as np
from neuronxcc import nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa
"""
COPY = HEAD + """
@nki.jit
def copy(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.load(x))
    return out

def make_inputs():
    return (np.arange(128 * 64, dtype=np.float32).reshape(128, 64),)
"""
# Columns 32..63 of t are never written (NaN in the simulator, a diagnostic with the check).
LEFT_HALF = HEAD + """
@nki.jit
def left_half(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 64), dtype=nl.float32)
    t[:, 0:32] = nl.load(x[:, 0:32])
    nl.store(out, value=t)
    return out

def make_inputs():
    return (np.ones((128, 64), np.float32),)

def reference(x):
    return x
"""
# A block-dimension tensor warns (DeprecationWarning) on every target; 256 partitions fail all.
BLOCKS = HEAD + """
@nki.jit
def exp_blocks(x):
    out = nl.ndarray((2, 128, 64), dtype=x.dtype, buffer=nl.shared_hbm)
    buf = nl.ndarray((2, nl.par_dim(128), 64), dtype=nl.float32)
    for b in nl.affine_range(2):
        buf[b] = nl.load(x[b])
        nl.store(out[b], value=nl.exp(buf[b]))
    return out

def make_inputs():
    return (np.ones((2, 128, 64), np.float32),)
"""
TOO_WIDE = HEAD + """
@nki.jit
def too_wide(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.exp(nl.load(x)))
    return out

def make_inputs():
    return (np.ones((256, 64), np.float32),)
"""


def nkic_cmd(*args, cwd=ROOT, env=None):
    e = {k: v for k, v in os.environ.items() if k not in ("NKIC_FRONTEND_DEBUG", "NO_COLOR")}
    e.update(env or {})
    return subprocess.run([NKIC, *args], cwd=cwd, capture_output=True, text=True, timeout=120, env=e)


def kernel_file(tmp_path, text, extra=""):
    path = tmp_path / "kern.py"
    path.write_text(text + textwrap.dedent(extra))
    return str(path)


def line_of(path, needle):
    return next(i for i, l in enumerate(Path(path).read_text().splitlines(), 1) if needle in l)


def assert_diagnostic_schema(d):
    assert set(d) == {"severity", "code", "message", "hint", "api", "file", "line", "col", "notes"}
    assert d["severity"] == "error" and d["code"].startswith("err_") and d["message"]
    assert isinstance(d["line"], int) and isinstance(d["col"], int)
    for n in d["notes"]:
        assert set(n) == {"message", "file", "line", "col"}


# --- version -------------------------------------------------------------------------

def test_version_is_the_package_version():
    r = nkic_cmd("--version")
    assert r.returncode == 0
    assert r.stdout.strip() == f"nkic {nkic.__version__}"
    assert nkic.__version__.count(".") == 2


# --- trace --json --------------------------------------------------------------------

def test_trace_json_schema():
    r = nkic_cmd(*TRACE_ARGS, "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["schema"] == "nkic.trace/1" and doc["ok"] is True and doc["diagnostics"] == []
    assert doc["version"] == nkic.__version__
    assert doc["kernel"] == "masked_add_kernel" and doc["target"] == "trn2" and doc["grid"] == []
    assert doc["inputs"] == [{"name": "a_input", "shape": [1000, 512], "dtype": "float32"},
                             {"name": "b_input", "shape": [1000, 512], "dtype": "float32"}]
    assert [o["shape"] for o in doc["outputs"]] == [[1000, 512]]
    body = doc["body"]
    assert all(set(s) == {"kind", "depth", "text", "loc"} | ({"opcode", "engine"} if s["kind"] == "instruction" else set())
               for s in body)
    assert [(s["opcode"], s["engine"]) for s in body if s["kind"] == "instruction"] == [
        ("load", "dma"), ("load", "dma"), ("tensor_tensor", "dve"), ("store", "dma")]
    loop = next(s for s in body if s["text"].startswith("for p in affine_range(0, 8, 1)"))
    inside = [s for s in body if s["depth"] > loop["depth"]]
    assert any("store[dma](" in s["text"] for s in inside)
    located = [s for s in body if s["loc"]]
    assert located and all(s["loc"]["file"] == MASKED_ADD for s in located)
    store = next(s for s in located if "store[dma](" in s["text"])
    assert store["loc"]["line"] == line_of(MASKED_ADD, "nl.store(out")
    assert "@ " not in store["text"]
    kinds = [s["kind"] for s in body]
    assert kinds[:3] == ["kernel", "tensor", "tensor"] and kinds.count("loop") == 1
    assert doc["instructions"] == kinds.count("instruction") == 4


def test_trace_json_diagnostic_exits_2(tmp_path):
    path = kernel_file(tmp_path, TOO_WIDE)
    r = nkic_cmd("trace", path, "--json")
    assert r.returncode == 2
    doc = json.loads(r.stdout)
    assert doc["ok"] is False
    [d] = doc["diagnostics"]
    assert_diagnostic_schema(d)
    assert d["code"] == "err_num_partition_exceed_arch_limit"
    assert d["file"] == path and d["line"] == line_of(path, "nl.exp(nl.load(x))")


# --- check --json / --sarif ------------------------------------------------------------

RANGE_SELECT = HEAD + """
@nki.jit
def quant(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    b = nl.load(x[:, 0:1])
    nl.store(out, value=nisa.range_select(on_true_tile=t, comp_op0=nl.greater_equal, comp_op1=nl.less,
                                          bound0=b, bound1=b, on_false_value=0.0))
    return out

def make_inputs():
    return (np.ones((128, 64), np.float32),)
"""


def test_check_json_all_targets(tmp_path):
    path = kernel_file(tmp_path, RANGE_SELECT)
    r = nkic_cmd("check", path, "--target", "all", "--json")
    doc = json.loads(r.stdout)
    assert doc["schema"] == "nkic.check/1" and doc["kernel"] == f"{path}::quant"
    # `all`: the targets the legacy API supports.
    assert [t["target"] for t in doc["targets"]] == ["trn1", "inf2", "trn2"]
    by = {t["target"]: t for t in doc["targets"]}
    # nisa.range_select is new in trn2 (gen3).
    assert by["trn2"]["ok"] and by["trn2"]["diagnostics"] == []
    for old in ("trn1", "inf2"):
        assert not by[old]["ok"]
        [d] = by[old]["diagnostics"]
        assert_diagnostic_schema(d)
        assert d["code"] == "err_min_arch_support_for_inst"
        assert d["file"] == path and d["line"] == line_of(path, "nisa.range_select(")
    assert doc["ok"] is False and r.returncode == 2


def test_check_json_ok_exits_0(tmp_path):
    r = nkic_cmd("check", kernel_file(tmp_path, COPY), "--target", "trn1,trn2", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["ok"] and [t["ok"] for t in doc["targets"]] == [True, True]


def test_check_sarif(tmp_path):
    path = kernel_file(tmp_path, RANGE_SELECT)
    r = nkic_cmd("check", path, "--target", "all", "--sarif", cwd=tmp_path)
    assert r.returncode == 2
    log = json.loads(r.stdout)
    assert log["version"] == "2.1.0" and log["$schema"].endswith("sarif-2.1.0.json")
    [run] = log["runs"]
    assert run["tool"]["driver"]["name"] == "nkic" and run["tool"]["driver"]["version"] == nkic.__version__
    assert [rule["id"] for rule in run["tool"]["driver"]["rules"]] == ["err_min_arch_support_for_inst"]
    # One result for the one diagnostic, listing the three targets that raise it.
    [res] = run["results"]
    assert res["ruleId"] == "err_min_arch_support_for_inst" and res["level"] == "error"
    assert res["properties"]["targets"] == ["trn1", "inf2"]
    loc = res["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"] == "kern.py"
    assert loc["region"]["startLine"] == line_of(path, "nisa.range_select(")


def test_check_prints_each_warning_once(tmp_path):
    path = kernel_file(tmp_path, BLOCKS)
    r = nkic_cmd("check", path, "--target", "all")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count(": ok") == 3  # trn1, inf2, trn2: the legacy API's targets
    assert r.stderr.count("warn_block_dimension_is_deprecated") == 1, r.stderr
    doc = json.loads(nkic_cmd("check", path, "--target", "all", "--json").stdout)
    [w] = doc["warnings"]
    assert w["code"] == "warn_block_dimension_is_deprecated" and w["category"] == "DeprecationWarning"
    assert w["file"] == path and w["line"] == line_of(path, "buf = nl.ndarray(")


def test_check_verbose_prints_the_full_diagnostic(tmp_path):
    path = kernel_file(tmp_path, TOO_WIDE)
    short = nkic_cmd("check", path, "--target", "trn2")
    full = nkic_cmd("check", path, "--target", "trn2", "-v")
    assert short.returncode == full.returncode == 2
    assert "trn2: FAIL err_num_partition_exceed_arch_limit" in short.stdout
    assert "nl.exp(nl.load(x))" not in short.stdout
    assert "nl.exp(nl.load(x))" in full.stdout  # the source line under the message


# --- run -------------------------------------------------------------------------------

def test_run_json_schema(tmp_path):
    path = kernel_file(tmp_path, COPY, "def reference(x):\n    return x\n")
    r = nkic_cmd("run", path, "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["schema"] == "nkic.run/1" and doc["ok"] and doc["status"] == "ok"
    assert doc["checks"] == {"uninitialized": True, "races": True}
    assert doc["instructions"] == 2 and doc["trace_ms"] >= 0 and doc["simulate_ms"] >= 0
    [o] = doc["outputs"]
    assert o == {"index": 0, "dtype": "float32", "shape": [128, 64], "expected_shape": [128, 64],
                 "max_abs_error": 0.0, "max_rel_error": 0.0, "worst_index": [0, 0], "worst_rel_index": [0, 0],
                 "tolerance": pytest.approx(1e-5 * (128 * 64 - 1)),
                 "nan_count": 0, "ok": True, "hint": None}


def test_run_mismatch_exits_1_with_worst_index(tmp_path):
    path = kernel_file(tmp_path, COPY, """
        def reference(x):
            y = x.copy()
            y[5, 7] += 0.5
            return y
        """)
    r = nkic_cmd("run", path)
    assert r.returncode == 1
    assert "MISMATCH" in r.stdout and "at index (5, 7)" in r.stdout
    doc = json.loads(nkic_cmd("run", path, "--json").stdout)
    assert doc["status"] == "mismatch" and doc["outputs"][0]["worst_index"] == [5, 7]
    assert doc["outputs"][0]["max_abs_error"] == 0.5


@pytest.mark.parametrize("ref,message", [
    ("x[:, :32]", "shape [128, 64], but the expected value has shape [128, 32]"),
    ("(x, x)", "the kernel returns 1 output(s), but reference() returns 2"),
    ("None", "reference() returned NoneType"),
])
def test_run_mismatched_reference_is_a_clear_message(tmp_path, ref, message):
    path = kernel_file(tmp_path, COPY, f"def reference(x):\n    return {ref}\n")
    r = nkic_cmd("run", path)
    assert r.returncode == 1, r.stdout + r.stderr
    assert message in r.stdout
    assert "Traceback" not in r.stdout + r.stderr


def test_run_checks_uninitialized_reads_by_default(tmp_path):
    path = kernel_file(tmp_path, LEFT_HALF)
    r = nkic_cmd("run", path)
    assert r.returncode == 2
    assert "err_read_uninitialized_memory" in r.stderr
    assert "Traceback" not in r.stderr


# A current-API kernel that writes an SBUF tile through .ap() views and reads it whole:
# the views share the tile's written flags, so the check passes; half a tile fails it.
AP_HALVES = """import numpy as np
import nki
import nki.isa as nisa
import nki.language as nl

@nki.jit
def halves(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 2, 32), dtype=nl.float32, buffer=nl.sbuf)
    for h in range(HALVES):
        nisa.dma_copy(dst=t.ap([[64, 128], [1, 32]], offset=32 * h), src=x[:, 32 * h:32 * h + 32])
    nisa.dma_copy(dst=out, src=t.reshape((128, 64)))
    return out

def make_inputs():
    return (np.arange(128 * 64, dtype=np.float32).reshape(128, 64),)

def reference(x):
    return x
"""


@pytest.mark.parametrize("halves, rc", [(2, 0), (1, 2)])
def test_run_uninitialized_check_sees_writes_through_views(tmp_path, halves, rc):
    path = kernel_file(tmp_path, AP_HALVES.replace("HALVES", str(halves)))
    r = nkic_cmd("run", path)
    assert r.returncode == rc, r.stdout + r.stderr
    if rc:
        assert "err_read_uninitialized_memory" in r.stderr and "element [0, 32] of tensor `t.2`" in r.stderr, r.stderr
        assert f"kern.py:{line_of(path, 'src=t.reshape')}:" in r.stderr, r.stderr


def test_run_no_checks_hints_at_nan(tmp_path):
    path = kernel_file(tmp_path, LEFT_HALF)
    r = nkic_cmd("run", path, "--no-checks")
    assert r.returncode == 1
    assert "4096 NaN" in r.stdout
    assert "hint:" in r.stdout and "--check-uninitialized" in r.stdout
    assert "(checks: none)" in r.stdout
    again = nkic_cmd("run", path, "--no-checks", "--check-uninitialized")
    assert again.returncode == 2 and "err_read_uninitialized_memory" in again.stderr


def test_run_quiet_prints_nothing_on_success(tmp_path):
    path = kernel_file(tmp_path, COPY, "def reference(x):\n    return x\n")
    r = nkic_cmd("run", path, "-q")
    assert r.returncode == 0 and r.stdout == ""


def test_run_error_in_reference_is_a_usage_error(tmp_path):
    path = kernel_file(tmp_path, COPY, "def reference(x):\n    return 1 / 0\n")
    r = nkic_cmd("run", path)
    assert r.returncode == 3
    assert "reference() raised ZeroDivisionError" in r.stderr and "Traceback" not in r.stderr
    assert "Traceback" in nkic_cmd("run", path, "-v").stderr


# --- usage errors and colour ------------------------------------------------------------

@pytest.mark.parametrize("args", [
    ["run", "no/such/file.py"],
    ["trace", MASKED_ADD + "::masked_add_kernel", "--arg", "a_input=f32(8,8)"],
    ["run", MASKED_ADD, "--no-such-option"],
    ["frobnicate"],
    ["check", MASKED_ADD, "-q", "-v"],
])
def test_usage_errors_exit_3(args):
    r = nkic_cmd(*args)
    assert r.returncode == 3, (r.returncode, r.stderr)
    assert "error" in r.stderr and "Traceback" not in r.stderr


def on_terminal(args, env):
    """Runs nkic with its stdout on a pseudo-terminal; returns what it printed there."""
    leader, follower = pty.openpty()
    e = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    e.update(env)
    proc = subprocess.run([NKIC, *args], cwd=ROOT, stdout=follower, stderr=subprocess.DEVNULL, env=e, timeout=120)
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 4096)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    os.close(leader)
    assert proc.returncode == 0
    return b"".join(chunks).decode()


def test_colour_only_on_a_terminal_without_no_color(tmp_path):
    path = kernel_file(tmp_path, COPY)
    args = ["check", path, "--target", "trn2"]
    assert "\x1b[32mok\x1b[0m" in on_terminal(args, {})
    assert "\x1b[" not in on_terminal(args, {"NO_COLOR": "1"})
    assert "\x1b[" not in nkic_cmd(*args).stdout
