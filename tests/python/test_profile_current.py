"""The cost model on kernels of the current API (`import nki`, NKI 0.3+): nkic.profile and
`nkic profile` predict them as they do legacy kernels, on the target asked for."""
import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

import nkic
import nki
import nki.isa as nisa
import nki.language as nl

ROOT = Path(__file__).resolve().parents[2]


@nki.jit
def add_kernel(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in range(a.shape[0] // 128):
        x = nl.ndarray((128, a.shape[1]), dtype=a.dtype, buffer=nl.sbuf)
        y = nl.ndarray((128, a.shape[1]), dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=x, src=a[i * 128:(i + 1) * 128, :])
        nisa.dma_copy(dst=y, src=b[i * 128:(i + 1) * 128, :])
        nisa.tensor_tensor(dst=x, data1=x, data2=y, op=nl.add)
        nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, :], src=x)
    return out


def make_inputs():
    return np.ones((512, 512), np.float32), np.ones((512, 512), np.float32)


def reference(a, b):
    return a + b


KERNEL = f"{Path(__file__).resolve()}::add_kernel"


def test_nkic_profile_predicts_a_current_kernel_on_the_target_asked_for(monkeypatch):
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn3")  # the explicit target wins
    a = np.ones((512, 512), np.float32)
    r1, r2 = (nkic.profile(add_kernel, a, a, target=t) for t in ("trn1", "trn2"))
    assert (r1.target, r2.target) == ("trn1", "trn2")
    assert r1.engines["dma"].instructions == 12 and r1.engines["dve"].instructions == 4
    assert r1.latency_us > r2.latency_us
    # Without target=, the current API's own rule: NEURON_PLATFORM_TARGET_OVERRIDE.
    assert nkic.profile(add_kernel, a, a).target == "trn3"
    np.testing.assert_array_equal(nki.simulate(add_kernel)(a, a), a + a)


def test_cli_profile_of_a_current_kernel_honours_target():
    r = subprocess.run([str(ROOT / "bin" / "nkic"), "profile", KERNEL, "--target", "trn1", "--json"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["target"] == "trn1" and report["engines"]["dma"]["instructions"] == 12
    check = subprocess.run([str(ROOT / "bin" / "nkic"), "check", KERNEL, "--target", "trn1,trn3",
                            "--json"], capture_output=True, text=True, timeout=120)
    assert check.returncode == 0, check.stderr
    assert [t["target"] for t in json.loads(check.stdout)["targets"]] == ["trn1", "trn3"]


def test_a_sweep_of_a_current_kernel_runs_it_as_one_on_each_target():
    rows = nkic.sweep(KERNEL, grid={}, targets=["trn1", "trn2"], workers=1)
    assert [(r["target"], r["status"]) for r in rows] == [("trn1", "ok"), ("trn2", "ok")]
    assert rows[0]["predicted_latency_us"] > rows[1]["predicted_latency_us"] > 0
