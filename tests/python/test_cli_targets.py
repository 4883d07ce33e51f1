"""One default target for every command and API (NEURON_PLATFORM_TARGET_OVERRIDE, else trn2),
named truthfully in every output; `check` and `--target all` cover the targets the kernel's
API supports (current nki: trn2, trn3; legacy neuronxcc.nki: trn1, inf2, trn2), inf1 only when
named."""
import json
import textwrap

import numpy as np
import pytest

import nki
import nki.isa as nisa
import nki.language as nl
import nkic
from nkic import cli

LEGACY = """\
import numpy as np
from neuronxcc import nki
import neuronxcc.nki.language as nl

@nki.jit
def accumulate(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    acc = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.psum)
    nl.store(out, value=nl.add(nl.load(x), acc))
    return out

def make_inputs():
    return (np.ones((128, 512), np.float32),)

def reference(x):
    return x
"""
CURRENT = """\
import numpy as np
import nki
import nki.language as nl
import nki.isa as nisa

@nki.jit
def version(x):
    out = nl.ndarray((1, 1), nl.int32, buffer=nl.shared_hbm)
    t = nl.ndarray((1, 1), nl.int32, buffer=nl.sbuf)
    nisa.memset(dst=t, value=int(nisa.get_nc_version()))
    nisa.dma_copy(dst=out, src=t)
    return out

def make_inputs():
    return (np.zeros((1, 1), np.float32),)
"""


@pytest.fixture(autouse=True)
def no_override(monkeypatch):
    monkeypatch.delenv("NEURON_PLATFORM_TARGET_OVERRIDE", raising=False)


@pytest.fixture
def files(tmp_path):
    paths = {}
    for name, text in (("legacy", LEGACY), ("current", CURRENT)):
        paths[name] = tmp_path / f"{name}.py"
        paths[name].write_text(textwrap.dedent(text))
    return {k: str(v) for k, v in paths.items()}


def run_json(capsys, *argv):
    status = cli.main(list(argv))
    return status, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("api, covered", [("legacy", ["trn1", "inf2", "trn2"]), ("current", ["trn2", "trn3"])])
@pytest.mark.parametrize("spec", [None, "all"])
def test_check_covers_the_targets_of_the_kernels_api(capsys, files, api, covered, spec):
    # An ordinary 128-partition PSUM accumulator passes: inf1 (64 PSUM partitions) is not among them.
    status, report = run_json(capsys, "check", files[api], "--json", *(["--target", spec] if spec else []))
    assert status == 0 and report["ok"]
    assert [t["target"] for t in report["targets"]] == covered
    assert all(t["ok"] for t in report["targets"])


def test_inf1_is_checked_when_named(capsys, files):
    status, report = run_json(capsys, "check", files["legacy"], "--target", "inf1,trn2", "--json")
    assert status == 2 and not report["ok"]
    by = {t["target"]: t for t in report["targets"]}
    assert by["trn2"]["ok"] and not by["inf1"]["ok"]
    [d] = by["inf1"]["diagnostics"]
    assert d["code"] == "err_num_partition_exceed_arch_limit" and d["line"] == 8


@pytest.mark.parametrize("command", ["run", "trace", "profile"])
@pytest.mark.parametrize("api", ["legacy", "current"])
def test_one_default_target_named_in_json(capsys, files, command, api):
    status, report = run_json(capsys, command, files[api], "--json")
    assert status == 0 and report["target"] == "trn2"


@pytest.mark.parametrize("command", ["run", "trace", "profile"])
def test_the_override_is_the_default_and_is_what_runs(capsys, files, monkeypatch, command):
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "gen4")
    status, report = run_json(capsys, command, files["current"], "--json")
    assert status == 0 and report["target"] == "trn3"


def test_run_simulates_the_target_it_reports(capsys, files, monkeypatch, tmp_path):
    # The kernel writes the NeuronCore version it is traced for: 3 on trn2, 4 on trn3.
    for override, target, version in ((None, "trn2", 3), ("trn3", "trn3", 4)):
        if override:
            monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", override)
        path = tmp_path / f"v_{target}.py"
        path.write_text(CURRENT + f"\ndef reference(x):\n    return np.full((1, 1), {version}, np.int32)\n")
        status, report = run_json(capsys, "run", str(path), "--json")
        assert status == 0 and report["target"] == target and report["outputs"][0]["ok"], report


def test_text_outputs_name_the_target(capsys, files):
    assert cli.main(["check", files["current"]]) == 0
    assert capsys.readouterr().out.splitlines() == ["trn2: ok", "trn3: ok"]
    assert cli.main(["profile", files["current"]]) == 0
    assert capsys.readouterr().out.startswith("version on trn2:")
    assert cli.main(["run", files["legacy"], "--target", "trn1"]) == 0
    assert capsys.readouterr().out.startswith("legacy.py::accumulate on trn1: traced ")


def test_python_api_default_target(monkeypatch):
    @nki.jit
    def version(x):
        out = nl.ndarray((1, 1), nl.int32, buffer=nl.shared_hbm)
        t = nl.ndarray((1, 1), nl.int32, buffer=nl.sbuf)
        nisa.memset(dst=t, value=int(nisa.get_nc_version()))
        nisa.dma_copy(dst=out, src=t)
        return out

    x = np.zeros((1, 1), np.float32)
    assert version.target == "trn2" and nki.simulate(version)(x)[0, 0] == 3
    assert nkic.profile(version, x).target == "trn2"
    assert nl.tile_size.sbuf_fmax_bytes == 212984
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn3")
    assert version.target == "trn3" and nki.simulate(version)(x)[0, 0] == 4
    assert nkic.profile(version, x).target == "trn3"
    assert nl.tile_size.sbuf_fmax_bytes == 245752


def test_legacy_platform_target_wins_over_the_override(monkeypatch):
    from neuronxcc import nki as legacy

    def kernel(x):
        return x

    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn3")
    assert legacy.jit(kernel).target == "trn3"
    assert legacy.jit(kernel, platform_target="trn1").target == "trn1"


def test_sweep_all_is_the_apis_targets(files):
    rows = nkic.sweep(files["current"], {}, targets=["all"])
    assert sorted(r["target"] for r in rows) == ["trn2", "trn3"]
    rows = nkic.sweep(files["legacy"], {}, targets=["all"])
    assert sorted(r["target"] for r in rows) == ["inf2", "trn1", "trn2"]
    assert [r["target"] for r in nkic.sweep(files["legacy"], {})] == ["trn2"]
