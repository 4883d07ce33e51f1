"""`nkic run`'s comparison and the simulator's notices: the max rel error names the index of
the worst relative error (not the worst absolute one), a kernel file's TOLERANCE may be
dict(rtol=, atol=) (numpy's allclose rule) and a bad one is a usage error, and a simulation
asked for by name (nki.simulate_kernel, nkic.simulate_kernel, nki.simulate) prints no "no Neuron
hardware" notice."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_cli_machine import COPY, ROOT, kernel_file, nkic_cmd  # noqa: E402

# make_inputs() gives x[i, j] = 64 * i + j: element (0, 1) is 1 and (127, 63) is 8191.
TWO_ERRORS = """
def reference(x):
    y = x.copy()
    y[0, 1] += 0.5      # abs 0.5, rel 0.5 / 1.5
    y[127, 63] += 1.0   # abs 1, rel 1 / 8192
    return y
"""


def test_max_rel_error_names_the_worst_relative_index(tmp_path):
    path = kernel_file(tmp_path, COPY, TWO_ERRORS)
    r = nkic_cmd("run", path)
    assert r.returncode == 1
    assert ("output 0 (float32[128, 64]): max abs error 1 at index (127, 63) (got 8191, expected 8192), "
            "max rel error 0.333 at index (0, 1) (got 1, expected 1.5); tolerance 0.0819 MISMATCH") in r.stdout
    [out] = json.loads(nkic_cmd("run", path, "--json").stdout)["outputs"]
    assert out["worst_index"] == [127, 63] and out["worst_rel_index"] == [0, 1]
    assert out["max_abs_error"] == 1.0 and out["max_rel_error"] == pytest.approx(1 / 3)


def test_one_worst_element_is_named_once(tmp_path):
    path = kernel_file(tmp_path, COPY, "def reference(x):\n    y = x.copy()\n    y[5, 7] += 0.5\n    return y\n")
    r = nkic_cmd("run", path)
    assert r.returncode == 1
    assert ("max abs error 0.5, max rel error 0.00153 at index (5, 7) (got 327, expected 327.5); tolerance 0.0819 "
            "MISMATCH") in r.stdout


@pytest.mark.parametrize("tolerance,rtol,atol,status,verdict", [
    ("dict(rtol=1e-3, atol=1e-6)", 1e-3, 1e-6, 0, "ok"),
    ("dict(rtol=1e-4)", 1e-4, 0.0, 1, "MISMATCH"),
    ("dict(atol=1)", 0.0, 1.0, 0, "ok"),
])
def test_tolerance_dict_is_allclose(tmp_path, tolerance, rtol, atol, status, verdict):
    # The one error is 1 against 8192: rel 1.22e-4.
    path = kernel_file(tmp_path, COPY, "def reference(x):\n    y = x.copy()\n    y[127, 63] += 1.0\n    return y\n"
                       f"\nTOLERANCE = {tolerance}\n")
    r = nkic_cmd("run", path)
    assert r.returncode == status, r.stdout + r.stderr
    assert (f"output 0 (float32[128, 64]): max abs error 1, max rel error 0.000122 at index (127, 63) (got 8191, "
            f"expected 8192); tolerance atol {atol:.3g} + rtol {rtol:.3g} * |expected| {verdict}") in r.stdout
    doc = json.loads(nkic_cmd("run", path, "--json").stdout)
    assert doc["outputs"][0]["tolerance"] == {"rtol": rtol, "atol": atol}
    assert doc["outputs"][0]["ok"] is (verdict == "ok")


@pytest.mark.parametrize("tolerance,message", [
    ("dict(rtol=1e-3, atoll=1e-6)", "TOLERANCE = dict(rtol=..., atol=...) takes rtol and atol, got ['atoll', 'rtol']"),
    ("dict(rtol='tight')", "TOLERANCE's rtol and atol are numbers, got {'rtol': 'tight'}"),
    ("'1e-3'", "TOLERANCE is a number or dict(rtol=..., atol=...), got str '1e-3'"),
])
def test_bad_tolerance_is_a_usage_error(tmp_path, tolerance, message):
    path = kernel_file(tmp_path, COPY, f"def reference(x):\n    return x\n\nTOLERANCE = {tolerance}\n")
    r = nkic_cmd("run", path)
    assert r.returncode == 3
    assert r.stderr == f"nkic: error: {message}\n"


NOTICE = "no Neuron hardware here"
SCRIPT = COPY + """
import nkic
x = make_inputs()[0]
CALL
print("ok")
"""


@pytest.mark.parametrize("call,notice", [
    ("nki.simulate_kernel(copy, x)", False),
    ("nkic.simulate_kernel(copy, x)", False),
    ("nki.simulate_kernel(nki.baremetal(copy), x)", False),
    ("copy(x)", True),  # a plain call of an @nki.jit kernel runs on the simulator for want of hardware
])
def test_asking_for_the_simulator_prints_no_hardware_notice(tmp_path, call, notice):
    path = tmp_path / "sim.py"
    path.write_text(SCRIPT.replace("CALL", call))
    r = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120,
                       env={"PYTHONPATH": f"{ROOT / 'python'}:{ROOT / 'build' / 'python'}"})
    assert r.returncode == 0 and r.stdout == "ok\n", r.stderr
    assert (NOTICE in r.stderr) is notice, r.stderr


def test_nki_simulate_prints_no_notice(tmp_path):
    path = tmp_path / "sim_current.py"
    path.write_text("""\
import numpy as np
import nki
import nki.language as nl
import nki.isa as nisa

@nki.jit
def copy(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=x)
    return out

assert np.array_equal(nki.simulate(copy)(np.ones((4, 4), np.float32)), np.ones((4, 4), np.float32))
""")
    r = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120,
                       env={"PYTHONPATH": f"{ROOT / 'python'}:{ROOT / 'build' / 'python'}"})
    assert r.returncode == 0 and r.stderr == "", r.stderr
