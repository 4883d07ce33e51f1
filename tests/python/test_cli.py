"""The nkic command line (bin/nkic): trace prints the IR with one loop axis per
affine_range, affine mask predicates and source locations; run simulates the
examples against their numpy reference; argument errors are usage errors (status 3)."""
import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NKIC = str(ROOT / "bin" / "nkic")
MASKED_ADD = "examples/masked_add.py"
TRACE_ARGS = ["trace", MASKED_ADD + "::masked_add_kernel",
              "--arg", "a_input=f32[1000,512]", "--arg", "b_input=f32[1000,512]"]


def nkic(*args):
    env = dict(os.environ)
    env.pop("NKIC_FRONTEND_DEBUG", None)
    return subprocess.run([NKIC, *args], cwd=ROOT, capture_output=True, text=True, timeout=60, env=env)


def source_line(path, needle):
    """1-based line number and 1-based column of the first line containing `needle`."""
    for no, line in enumerate((ROOT / path).read_text().splitlines(), 1):
        if needle in line:
            return no, line.index(needle) + 1
    raise AssertionError(f"{needle!r} not in {path}")


@pytest.fixture(scope="module")
def masked_add_trace():
    r = nkic(*TRACE_ARGS)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_trace_has_one_affine_loop_axis(masked_add_trace):
    loop_lines = [l for l in masked_add_trace.splitlines() if "affine_range" in l]
    assert len(loop_lines) == 1
    assert loop_lines[0].strip().startswith("for p in affine_range(0, 8, 1)")


def test_trace_mask_is_affine_predicate(masked_add_trace):
    lines = masked_add_trace.splitlines()
    body = [l for l in lines if "mask=" in l]
    # load a, load b, add, store: each once, each with the predicate.
    assert len(body) == 4
    for l in body:
        assert "mask=(i0 + 128*p <= 999)" in l
    assert sum("load[dma](" in l for l in body) == 2
    assert sum("store[dma](" in l for l in body) == 1


def test_trace_body_is_nested_in_the_loop(masked_add_trace):
    lines = masked_add_trace.splitlines()
    loop = next(i for i, l in enumerate(lines) if "for p in affine_range" in l)
    indent = len(lines[loop]) - len(lines[loop].lstrip())
    for l in lines[loop + 1:]:
        if l.strip():
            assert len(l) - len(l.lstrip()) > indent, l


@pytest.mark.parametrize("needle,what", [
    ("for p in nl.affine_range", "for p in affine_range"),
    ("a = nl.load(", "a[i0, i1] = load[dma]("),
    ("c = nl.add(", "tensor_tensor[dve]("),
    ("nl.store(out", "store[dma]("),
])
def test_trace_source_locations(masked_add_trace, needle, what):
    line, _ = source_line(MASKED_ADD, needle)
    instr = [l for l in masked_add_trace.splitlines() if what in l]
    assert instr, what
    m = re.search(r"@ (\S*examples/masked_add\.py):(\d+):(\d+)\s*$", instr[0])
    assert m, instr[0]
    assert int(m.group(2)) == line
    assert int(m.group(3)) >= 1


def test_trace_locations_point_at_user_file_only(masked_add_trace):
    locs = re.findall(r"@ (\S+):\d+:\d+", masked_add_trace)
    assert locs
    for f in locs:
        assert f.endswith("examples/masked_add.py"), f


def test_trace_is_deterministic(masked_add_trace):
    again = nkic(*TRACE_ARGS)
    assert again.returncode == 0
    assert again.stdout.encode() == masked_add_trace.encode()


def test_trace_no_locations():
    r = nkic(*TRACE_ARGS, "--no-locations")
    assert r.returncode == 0, r.stderr
    assert "masked_add.py:" not in r.stdout
    assert "for p in affine_range(0, 8, 1)" in r.stdout


@pytest.mark.parametrize("example", ["examples/tensor_add.py", "examples/masked_add.py"])
def test_run_examples(example):
    r = nkic("run", example)
    assert r.returncode == 0, r.stdout + r.stderr
    assert re.search(r"\bok\b", r.stdout), r.stdout
    assert "MISMATCH" not in r.stdout


@pytest.mark.parametrize("bad", [
    "a_input=f32(1000,512)",   # parentheses instead of brackets
    "a_input",                 # no '='
    "=f32[1000,512]",          # no name
    "a_input=q7[1000,512]",    # unknown dtype
])
def test_bad_arg_syntax_exits_3(bad):
    r = nkic("trace", MASKED_ADD + "::masked_add_kernel", "--arg", bad, "--arg", "b_input=f32[1000,512]")
    assert r.returncode == 3, (r.returncode, r.stdout, r.stderr)
    assert "--arg" in r.stderr or "dtype" in r.stderr
    assert bad in r.stderr
    assert "Traceback" not in r.stderr


def test_unknown_kernel_name_exits_3():
    r = nkic("trace", MASKED_ADD + "::no_such_kernel", "--arg", "a_input=f32[8,8]")
    assert r.returncode == 3
    assert "no_such_kernel" in r.stderr
