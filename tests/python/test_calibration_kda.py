"""bench/calibration_kda.py reads a kda-for-trainium checkout into calibration cases: one figure per
NKIBench baseline and per passing variant (the median of its measured rows), each operator one
family. Checked on a checkout of two ledgers written here."""
import json
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
from calibration_kda import KDA, KDA_HEAD, KDA_PREFIX, KDA_TIME_BASE, KDA_TUNE_FAMILIES, kda_cases  # noqa: E402
from calibration_cases import ACCEL_PREFIX, NKIBENCH_ARGS, nkibench_op  # noqa: E402

HEADER = "timestamp,op,candidate,parent,passed,latency_ms,speedup,notes\n"


def checkout(tmp_path):
    baselines = {
        "silu[case=2]": {"baseline_latency_ms": 1.0, "case_id": "2", "kernel": "silu_M4096_N7168_0.py", "op": "silu"},
        "mamba[case=2]": {"baseline_latency_ms": 1.25, "case_id": "2", "kernel": "mamba_M7168_C256_S16_0.py",
                          "op": "mamba"},
    }
    (tmp_path / "baselines.json").write_text(json.dumps(baselines, indent=2, sort_keys=True))
    for op, rows in {
        "silu": [
            "t,silu,runs/silu_v1.py,base,true,0.3009,3.4,first",
            "t,silu,runs/silu_v1.py,base,true,0.3005,3.4,\"control, same kernel\"",
            "t,silu,runs/silu_v1.py,base,true,0.3100,3.3,again",
            "t,silu,runs/silu_bad.py,base,false,0.1,9,fails the gate",
            "t,silu,runs/silu_probe.py,base,true,N/A,N/A,no latency",
            "t,silu,(closed direction),base,,,,record only",
            "t,silu,NKIBench:silu_M4096_N7168_0.py,base,true,1.0,1.0,baseline in place",
        ],
        "mamba": ["t,mamba,runs/mamba_v2.py,runs/mamba_v1.py,true,0.7822,1.6,promoted"],
    }.items():
        (tmp_path / "workspaces" / op).mkdir(parents=True)
        (tmp_path / "workspaces" / op / "benchmark.csv").write_text(HEADER + "\n".join(rows) + "\n")
    return tmp_path


def test_a_checkout_gives_each_baseline_and_each_passing_variant_once(tmp_path):
    cases, rankings = kda_cases(str(checkout(tmp_path)))
    by_id = {c["id"]: c for c in cases}
    assert sorted(by_id) == ["K-mamba", "K-mamba-mamba_v2", "K-silu", "K-silu-silu_v1"]
    assert rankings == [("kda mamba variants", ["K-mamba", "K-mamba-mamba_v2"]),
                        ("kda silu variants", ["K-silu", "K-silu-silu_v1"])]
    v1 = by_id["K-silu-silu_v1"]
    assert v1["us"] == pytest.approx(300.9)  # the median of 300.9, 300.5 and 310.0
    assert v1["source"] == (KDA, "workspaces/silu/benchmark.csv", KDA_HEAD, "2,3,4")
    assert v1["path"] == KDA_PREFIX + "workspaces/silu/runs/silu_v1.py"
    assert v1["note"] == "p50, median of 3 row(s)"
    base = by_id["K-silu"]
    assert base["us"] == 1000.0 and base["path"] == ACCEL_PREFIX + "NKIBench/kernels/silu_M4096_N7168_0.py"
    assert base["source"][1] == "baselines.json" and base["source"][3] == 8  # its key's line
    assert all(c["target"] == "trn2" and c["kind"] == "measured" for c in cases)
    assert all(c["time_base"] == KDA_TIME_BASE for c in cases)  # the backend's time, not one NeuronCore's
    assert by_id["K-mamba-mamba_v2"]["args"] is NKIBENCH_ARGS["mamba_M7168_C256_S16"]


def test_no_checkout_gives_no_cases(tmp_path):
    assert kda_cases(str(tmp_path / "absent")) == ([], [])


def test_the_tune_split_is_whole_operators_of_nkibench():
    ops = {nkibench_op(name) for name in NKIBENCH_ARGS}
    assert KDA_TUNE_FAMILIES == {f"kda {op}" for op in ("matmul", "rmsnorm_matmul", "matmul_add_rmsnorm",
                                                          "transpose_matmul")}
    assert {f[len("kda "):] for f in KDA_TUNE_FAMILIES} <= ops
