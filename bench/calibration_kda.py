"""trn2 figures of NKIBench kernels and their variants, read from a checkout of
Jerry2423/kda-for-trainium: its baselines.json (NKIBench's baseline kernels) and each operator's
benchmark ledger (workspaces/<op>/benchmark.csv: one row per measurement of a variant kept in
workspaces/<op>/runs/). Its README (lines 167-168) and RESULTS.md (line 5) say where: a trn2,
one NeuronCore (`--disable-dge --logical-nc-config=1`), the p50 of on-device runs.

A variant measured more than once (a screen, then the full run, then a control in a later
round) gets the median of its rows. Rows of kernels that failed the correctness gate, or whose
latency is blank (a compile failure, a note), are left out. Each operator's baseline and variants
are one family: the same computation on the same inputs, so the predicted order is the one a
tuner would follow.

Its reported times are not one NeuronCore-v3's: its README (lines 166-172) reports ratios, not
absolute latency, as the comparable quantity, and its ledger runs faster than one NeuronCore-v3
can. rmsnorm_matmul's bf16 probe (benchmark.csv line 9) multiplies 4096 x 1024 by 1024 x 2048 in
0.146 ms, 118 TFLOPS against the 79 BF16 TFLOPS a NeuronCore-v3 has (Trainium2 architecture guide),
and SiLU's streaming variants move 235 MB in 0.29-0.31 ms, 2.1x the 368 GB/s of one NeuronCore-v3's
16 DMA queues. So its figures are compared on its own time base (KDA_TIME_BASE): predicted times
a scale fitted on the tune families (the four operators that are one fp32 GEMM and the
preparation of its operands, whose time is the Tensor Engine's at a published rate, PE 96-100 %
active in the ledger's counters), the error reported on the other ten operators."""
import csv
import json
import os
import statistics

from calibration_cases import ACCEL_PREFIX, NKIBENCH_ARGS, case, nkibench_op

KDA = "Jerry2423/kda-for-trainium"
KDA_HEAD = "90770f2aaa14af45141fdb16d3cf9891f3255507"
KDA_PREFIX = "kda:"  # a case path in a kda-for-trainium checkout (legacy API kernels `kernel`)
KDA_TIME_BASE = "kda-for-trainium's trn2 backend"
KDA_TUNE_FAMILIES = frozenset(f"kda {op}" for op in ("matmul", "rmsnorm_matmul", "matmul_add_rmsnorm",
                                                      "transpose_matmul"))


def _ledger(path):
    """{variant file: [(csv line, ms), ...]} of the rows that measured a passing variant."""
    rows = {}
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        for row in reader:
            cand, ms = row["candidate"], row["latency_ms"]
            if not (cand.startswith("runs/") and cand.endswith(".py")) or row["passed"] != "true":
                continue
            try:
                value = float(ms)
            except ValueError:
                continue
            rows.setdefault(cand, []).append((reader.line_num, value))
    return rows


def _baseline_lines(path):
    """{baselines.json key: its line}, for the source of each baseline figure."""
    with open(path) as f:
        return {line.strip().split('"')[1]: n for n, line in enumerate(f, 1) if line.startswith('  "')}


def kda_cases(root):
    """(cases, rankings) of a kda-for-trainium checkout at `root`; ([], []) when it is absent."""
    base_path = os.path.join(root, "baselines.json")
    if not os.path.isfile(base_path):
        return [], []
    with open(base_path) as f:
        baselines = json.load(f)
    lines = _baseline_lines(base_path)
    cases, rankings = [], []
    for key, b in sorted(baselines.items()):
        name = b["kernel"][:-len("_0.py")]
        op, args = nkibench_op(name), NKIBENCH_ARGS[name]
        family = f"kda {op}"
        ids = [f"K-{op}"]
        cases.append(case(ids[0], family, ACCEL_PREFIX + f"NKIBench/kernels/{b['kernel']}", "kernel", args, "trn2",
                          b["baseline_latency_ms"] * 1000, "measured", (KDA, "baselines.json", KDA_HEAD, lines[key]),
                          note="p50, NKIBench baseline", time_base=KDA_TIME_BASE))
        ledger = f"workspaces/{op}/benchmark.csv"
        for cand, meas in sorted(_ledger(os.path.join(root, ledger)).items()):
            ids.append(f"K-{op}-{os.path.splitext(os.path.basename(cand))[0]}")
            cases.append(case(ids[-1], family, KDA_PREFIX + f"workspaces/{op}/{cand}", "kernel", args, "trn2",
                              statistics.median(ms for _, ms in meas) * 1000, "measured",
                              (KDA, ledger, KDA_HEAD, ",".join(str(n) for n, _ in meas)),
                              note=f"p50, median of {len(meas)} row(s)" if len(meas) > 1 else "p50",
                              time_base=KDA_TIME_BASE))
        rankings.append((f"{family} variants", ids))
    return cases, rankings
