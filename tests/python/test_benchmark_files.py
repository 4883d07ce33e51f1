"""nki.benchmark as the tutorials call it: save_neff_name / save_trace_name write files (the
profile as JSON, the timeline as Perfetto JSON), and nt.tensor[[...], dtype] shape specs stand
for arrays, predicting latency without data. The nki-samples tutorials' benchmarking code runs
unchanged when a checkout of the public corpus is present."""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import nkic
from neuronxcc import nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.typing as nt

sys.path.insert(0, os.path.dirname(__file__))
from nki_test_util import Markers, check_diag  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TUTORIALS = Path("/tmp/corpus/nki-samples/src/nki_samples/tutorials")
M = Markers(__file__)


def scaled_rows(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(a.shape[0] // 128):
        x = nl.load(a[i * 128:(i + 1) * 128, :])
        y = nl.load(b[i * 128:(i + 1) * 128, :])
        nl.store(out[i * 128:(i + 1) * 128, :], value=nl.multiply(x, y))
    return out


def test_save_names_receive_the_profile_and_the_perfetto_timeline(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    kernel = nki.benchmark(scaled_rows, save_neff_name="file.neff", save_trace_name="profile.ntff")
    a = np.arange(512 * 64, dtype=np.float32).reshape(512, 64)
    np.testing.assert_array_equal(kernel(a, a), a * a)  # arrays still run on the simulator
    latency = kernel.benchmark_result.nc_latency.get_latency_percentile(99)
    neff = json.loads((tmp_path / "file.neff").read_text())
    assert neff["schema"] == "nkic.profile/1" and neff["kernel"] == "scaled_rows" and neff["target"] == "trn2"
    assert neff["latency_us"] == latency
    assert neff["engines"]["dma"]["instructions"] == 12  # 4 iterations: two loads and a store
    trace = json.loads((tmp_path / "profile.ntff").read_text())
    assert trace["otherData"] == {"kernel": "scaled_rows", "target": "trn2", "latency_us": round(latency, 3)}
    slices = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert len(slices) >= 12 and all(e["dur"] > 0 for e in slices)


def test_without_save_names_nothing_is_written(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    nki.benchmark(warmup=2, iters=3)(scaled_rows)(np.ones((128, 64), np.float32), np.ones((128, 64), np.float32))
    assert list(tmp_path.iterdir()) == []


def test_shape_specs_predict_the_latency_of_the_arrays_they_describe(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    kernel = nki.benchmark(warmup=5, iters=10)(nki.jit(scaled_rows))
    assert kernel(nt.tensor[[1024, 256], nl.bfloat16], nt.tensor[[1024, 256], nl.bfloat16]) is None
    predicted = kernel.benchmark_result.nc_latency.get_latency_percentile(50)
    zeros = np.zeros((1024, 256), nl.bfloat16)
    assert predicted == nkic.profile(scaled_rows, zeros, zeros, target="trn2").latency_us
    # The dtype counts: fp32 moves twice the bytes.
    kernel(nt.tensor[[1024, 256], nl.float32], nt.tensor[[1024, 256], nl.float32])
    assert kernel.benchmark_result.nc_latency.get_latency_percentile(50) > predicted
    # Specs and arrays mix, as keyword arguments too.
    kernel(zeros, b=nt.tensor[[1024, 256], nl.bfloat16])
    assert kernel.benchmark_result.nc_latency.get_latency_percentile(50) == predicted
    assert list(tmp_path.iterdir()) == []


def test_nki_profile_takes_shape_specs_too(tmp_path):
    prof = nki.profile(working_directory=str(tmp_path), save_trace_name="rows.ntff")(scaled_rows)
    assert prof(nt.tensor[[256, 64], nl.float32], nt.tensor[[256, 64], nl.float32]) is None
    assert json.loads((tmp_path / "rows.json").read_text())["otherData"]["kernel"] == "scaled_rows"


def test_a_save_name_that_cannot_be_written_is_a_diagnostic_at_the_call(tmp_path):
    kernel = nki.benchmark(scaled_rows, save_neff_name=str(tmp_path / "no_such_dir" / "file.neff"))
    a = np.ones((128, 64), np.float32)
    with pytest.raises(nkic.NKIError) as e:
        kernel(a, a)  # ERR:unwritable
    check_diag(e.value, M, "err_unsupported_args", [], [("unwritable", "kernel(")])
    assert e.value.message == (f"unsupported arguments to 'nki.benchmark': save_neff_name: cannot write "
                               f"'{tmp_path / 'no_such_dir' / 'file.neff'}' (No such file or directory)")


def test_a_spec_without_a_dtype_is_refused_at_the_call():
    kernel = nki.benchmark(scaled_rows)
    with pytest.raises(nkic.NKIError) as e:
        kernel(nt.tensor[128, 64], nt.tensor[[128, 64], nl.float32])  # ERR:nodtype
    check_diag(e.value, M, "err_unsupported_args", [], [("nodtype", "kernel(")])
    assert e.value.message == ("unsupported arguments to 'scaled_rows': the shape spec nt.tensor[128, 64] for 'a' "
                               "has no dtype; write nt.tensor[[128, 64], nl.float32] (or the dtype meant)")


@pytest.mark.parametrize("run", ["jit", "simulate_kernel"])
def test_a_spec_has_no_data_to_simulate(run, capsys):
    spec = nt.tensor[[128, 64], nl.bfloat16]
    with pytest.raises(nkic.NKIError) as e:
        if run == "jit":
            nki.jit(scaled_rows)(spec, spec)  # ERR:jit
        else:
            nki.simulate_kernel(scaled_rows, spec, spec)  # ERR:simulate_kernel
    marker, token = ("jit", "nki.jit(") if run == "jit" else ("simulate_kernel", "nki.simulate_kernel(")
    check_diag(e.value, M, "err_unsupported_args", [], [(marker, token)])
    assert e.value.message == ("unsupported arguments to 'scaled_rows': the shape spec nt.tensor[[128, 64], bfloat16] "
                               "holds no data to simulate; pass a numpy array (nki.benchmark and nki.profile take specs)")
    assert capsys.readouterr().err == ""  # refused before the simulator's notice


def _tutorial(tmp_path, rel):
    """A copy of one tutorial file in tmp_path (the checkout stays read-only)."""
    path = tmp_path / Path(rel).name
    path.write_text((TUTORIALS / rel).read_text())
    return path


def _run(path, *args):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "python"), str(ROOT / "build" / "python")]))
    return subprocess.run([sys.executable, str(path), *args], cwd=path.parent, env=env, capture_output=True,
                          text=True, timeout=600)


@pytest.mark.skipif(not TUTORIALS.is_dir(), reason="no nki-samples checkout at /tmp/corpus/nki-samples")
def test_the_layernorm_tutorials_perf_mode_runs_unchanged(tmp_path):
    path = _tutorial(tmp_path, "layernorm/layernorm_nki_kernel.py")
    r = _run(path, "--mode", "perf", "--nrows", "512", "--ncols", "1024")
    assert r.returncode == 0, r.stderr
    for version in ("v1", "v2"):
        neff = json.loads((tmp_path / f"{version}_512_1024.neff").read_text())
        assert neff["kernel"] == f"nki_layernorm_kernel_{version}" and neff["latency_us"] > 0
        trace = json.loads((tmp_path / f"{version}_512_1024.ntff").read_text())
        assert trace["otherData"]["latency_us"] == round(neff["latency_us"], 3)


@pytest.mark.skipif(not TUTORIALS.is_dir(), reason="no nki-samples checkout at /tmp/corpus/nki-samples")
def test_the_matmul_tutorials_main_benchmarks_shape_specs(tmp_path):
    path = _tutorial(tmp_path, "matrix_multiplication/matrix_multiplication_nki_kernels.py")
    r = _run(path)
    assert r.returncode == 0, r.stderr
    kernels = re.findall(r"^Benchmarking (\w+)$", r.stdout, re.M)
    latencies = [float(ms) for ms in re.findall(r"^Latency: ([0-9.]+) ms \(P99\)$", r.stdout, re.M)]
    assert kernels == ["nki_matmul_tiled", "nki_matmul_hoist_load", "nki_matmul_block_free_dimension",
                       "nki_matmul_fully_optimized"]
    assert len(latencies) == 4 and all(ms > 0 for ms in latencies)
    # What the tutorial teaches: the fully optimized kernel is the fastest of the four.
    assert min(latencies) == latencies[-1]
