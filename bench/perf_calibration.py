"""Compare nkic's predicted latencies with published hardware measurements.

The public kernels run unchanged from an nki-samples checkout (commit fc5c69f) through
nkic.profile: tracing and the cost model only, on zero inputs of the published shapes and
dtypes. Two instruction-level figures (D1, D2) use small kernels written here. Every figure,
with its shape, target, statistic and source (repository, path, commit, line), is a row of
CASES (bench/calibration_cases.py); what the figure is (percentile, caveats) is in its `note`.

Prints one line per case (against the figure as reported), whether each family of variants ranks
as published, the median, p90 and max of |ln(predicted / measured)| per target and per family over
the measured figures on each one's time base (a backend whose reported times are not one
NeuronCore's, calibration_kda.py, is compared at a scale fitted on its tune families, which are
reported apart from the rest; then every figure as reported), per family of variants at one shape the rank
correlation and the measured latency of the predicted-fastest variant over the measured fastest,
and how many test upper bounds the prediction stays under. Exits 0 (it is a report) unless a kernel fails to trace.

    PYTHONPATH=python:build/python /usr/bin/python3 bench/perf_calibration.py [CHECKOUT] [--autotune DIR] [--library DIR] [--sdk DIR] [--autocomp DIR] [--accelopt DIR] [--kda DIR] [--only ID,...] [-v]
"""
import argparse
import functools
import importlib
import importlib.util
import math
import os
import re
import sys
import tempfile
import time

import nkic
from calibration_cases import (ACCEL_HEAD, ACCEL_PREFIX, AUTO_HEAD, AUTO_PREFIX, CASES, FAR, LIB_HEAD, LIB_PREFIX,
                               ORDERS, Obj, RANKINGS, SDK_HEAD, SDK_PREFIX, TIE, TUNE_HEAD, TUNE_PREFIX, WHY_LIMIT,
                               Z)
from calibration_kda import KDA_HEAD, KDA_PREFIX, KDA_TUNE_FAMILIES, kda_cases
from calibration_stats import abs_log_error, spearman, summary, time_scale, tuner_loss
from neuronxcc import nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

# Families whose figures calibrated something (docs/performance.md, "How close it is"): only a
# backend's time base, never a figure of the model; their errors are reported apart.
TUNE_FAMILIES = KDA_TUNE_FAMILIES


@nki.jit
def dma_exp(a):
    """D2: one HBM->SBUF load of `a`, then work on it so the load is not dead."""
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    tile = nl.load(a)
    nl.store(out, value=nisa.activation(op=nl.exp, data=tile))
    return out


def activation_chain(length):
    """D1: `length` ScalarE identity activations, each reading the previous one's result."""
    @nki.jit
    def chain(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        t = nl.load(a)
        for _ in nl.static_range(length):
            t = nisa.activation(op=nl.copy, data=t, scale=1.0, bias=t)
        nl.store(out, value=t)
        return out
    return chain


def load_kernel(checkout, path, func, roots):
    """The kernel `func` of the public file `path` (relative to the nki-samples checkout, or
    to roots[prefix] for a path with a checkout's prefix), imported unchanged."""
    if path is None:
        return globals()[func]
    if path.startswith(AUTO_PREFIX):
        return trace_step(os.path.join(roots[AUTO_PREFIX], path[len(AUTO_PREFIX):]), int(func[len("step"):]))
    if path.startswith(LIB_PREFIX):
        src = os.path.join(roots[LIB_PREFIX], "src", "nkilib_src")
        if src not in sys.path:
            sys.path.insert(0, src)
        return getattr(importlib.import_module(path[len(LIB_PREFIX):]), func)
    prefix = next((p for p in (TUNE_PREFIX, SDK_PREFIX, ACCEL_PREFIX, KDA_PREFIX) if path.startswith(p)), None)
    if prefix:
        file = os.path.join(roots[prefix], path[len(prefix):])
        name = re.sub(r"\W", "_", os.path.splitext(path)[0])  # unique: variants of two kernels may share a file name
        if name not in sys.modules:
            spec = importlib.util.spec_from_file_location(name, file)
            sys.modules[name] = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(sys.modules[name])
        return getattr(sys.modules[name], func)
    src = os.path.join(checkout, "src")
    if src not in sys.path:
        sys.path.insert(0, src)
    module = os.path.splitext(os.path.relpath(os.path.join(checkout, path), src))[0].replace(os.sep, ".")
    return getattr(importlib.import_module(module), func)


@functools.lru_cache(maxsize=None)
def steps_dir():
    """Where the autocomp steps' kernels are written; removed when the script exits."""
    return tempfile.TemporaryDirectory(prefix="autocomp_")


def trace_step(trace, step):
    """The kernel `test` of step `step` of an autocomp optimisation trace (each step's code is a
    string in the file), written to a file of its own: the tracer reads kernel source."""
    with open(trace) as f:
        codes = re.findall(r"code='''(.*?)''',\nscore=", f.read(), re.S)
    path = os.path.join(steps_dir().name, f"step{step}.py")
    with open(path, "w") as f:
        f.write("import numpy as np\nfrom neuronxcc import nki\nimport neuronxcc.nki.language as nl\n"
                "import neuronxcc.nki.isa as nisa\n" + codes[step].replace("\\'", "'"))
    spec = importlib.util.spec_from_file_location(f"autocomp_step{step}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.test


def predict(c, kernel):
    """(predicted µs for what the case measures, the ProfileResult behind it)."""
    args = [a.make() if isinstance(a, (Z, Obj)) else a for a in c["args"]]
    if c["measure"] == "activation_interval":
        short, long_ = 1, 33
        r1 = nkic.profile(kernel(short), *args, target=c["target"])
        r2 = nkic.profile(kernel(long_), *args, target=c["target"])
        return (r2.latency_us - r1.latency_us) / (long_ - short), r2
    launch = kernel[c["grid"]] if c["grid"] else kernel
    r = nkic.profile(launch, *args, target=c["target"], **c["kwargs"])
    if c["measure"] == "load_duration":
        loads = [(s, e) for api, _, _, s, e, _, _ in r.critical_path if api == "nl.load"]
        return max(e for _, e in loads) - min(s for s, _ in loads), r
    return r.latency_us, r


def describe_error(e):
    where = f"{os.path.basename(e.file)}:{e.line}" if getattr(e, "file", None) else "?"
    return f"{e.code} at {where}: {e.message}" if isinstance(e, nkic.NKIError) else f"{type(e).__name__}: {e}"


def run_cases(checkout, cases, verbose, roots):
    results, failures = {}, []
    for c in cases:
        t0 = time.perf_counter()
        try:
            pred, prof = predict(c, load_kernel(checkout, c["path"], c["func"], roots))
        except Exception as e:  # a report: record the diagnostic, keep going
            failures.append((c, describe_error(e)))
            print(f"{c['id']:12s} {c['func']:44s} {c['target']:5s} FAILED: {describe_error(e)}")
            continue
        secs = time.perf_counter() - t0
        results[c["id"]] = (c, pred, prof)
        if c["kind"] == "order":
            print(f"{c['id']:12s} {c['func']:44s} {c['target']:5s} pred {pred:11.3f} us  (no published figure)"
                  f"  [{secs:.1f} s]")
        elif c["kind"] != "bound":
            ratio = pred / c["us"]
            flag = "  FAR" if abs(math.log(ratio)) > FAR else ""
            # Say when the schedule's live tiles over time would not fit (the buffer plan spills
            # only what one buffer per tile cannot hold).
            if prof.sbuf_peak_bytes > prof.sbuf_capacity_bytes:
                flag += f"  model SBUF peak x{prof.sbuf_peak_bytes / prof.sbuf_capacity_bytes:.1f} capacity"
            print(f"{c['id']:12s} {c['func']:44s} {c['target']:5s} pred {pred:11.3f} us  meas {c['us']:11.3f} us"
                  f"  ratio {ratio:6.3f}  ln {math.log(ratio):+6.2f}{flag}  [{c['note']}; {secs:.1f} s]")
            if abs(math.log(ratio)) > WHY_LIMIT:
                print(f"{'':12s} off by more than x4: {c['why'] or 'NO REASON RECORDED'}")
        if verbose:
            print(prof.summary(top=8))
    return results, failures


def print_bounds(results):
    """The measurement is at most the bound, so pred/bound > e^FAR means |ln(pred/measured)| > FAR."""
    print("\nUnit-test upper bounds (predicted <= bound?; not in the median; FAR: over the bound by more than"
          f" x{math.exp(FAR):.2f}, so certainly far off):")
    under = total = 0
    for c, pred, _ in (r for r in results.values() if r[0]["kind"] == "bound"):
        ok = pred <= c["us"]
        under, total = under + ok, total + 1
        far = "  FAR" if math.log(pred / c["us"]) > FAR else ""
        print(f"{c['id']:12s} {c['func']:44s} {c['target']:5s} pred {pred:11.3f} us  bound {c['us']:11.3f} us"
              f"  ratio {pred / c['us']:6.3f}  {'yes' if ok else 'NO'}{far}  [{c['note']}]")
    return under, total


def print_rankings(results, rankings):
    print("\nRankings (published order, slowest first; pairs within x%.2f are ties):" % TIE)
    for name, ids in rankings:
        have = [i for i in ids if i in results]
        if not have:
            continue
        if len(have) < 2:
            print(f"  {name}: not enough cases traced")
            continue
        meas = {i: results[i][0]["us"] for i in have}
        pred = {i: results[i][1] for i in have}
        pairs = [(a, b) for k, a in enumerate(have) for b in have[k + 1:]
                 if max(meas[a], meas[b]) > TIE * min(meas[a], meas[b])]
        agree = sum((meas[a] > meas[b]) == (pred[a] > pred[b]) for a, b in pairs)
        order = lambda vals: " > ".join(sorted(have, key=lambda i: -vals[i]))
        verdict = "same" if agree == len(pairs) else "DIFFERENT"
        print(f"  {name}: {verdict} ({agree}/{len(pairs)} pairs)\n"
              f"      published {order(meas)}\n      predicted {order(pred)}")


def print_orders(results):
    print("\nPublished orders without figures (slower > faster):")
    for name, (repo, path, commit, line), pairs in ORDERS:
        have = [(a, b) for a, b in pairs if a in results and b in results]
        agree = [(a, b) for a, b in have if results[a][1] > results[b][1]]
        wrong = ", ".join(f"{a} < {b}" for a, b in have if (a, b) not in agree)
        print(f"  {name}: {'same' if len(agree) == len(have) else 'DIFFERENT'} ({len(agree)}/{len(have)} pairs)"
              f"{'; predicted ' + wrong if wrong else ''}\n      {repo} {path}@{commit[:8]}:{line}")


def fit_time_bases(results):
    """{time base: scale}: a backend's reported time is `scale` times one NeuronCore's, the
    exp(median ln(measured / predicted)) over its tune families' figures (calibration_kda)."""
    pairs = {}
    for c, pred, _ in results.values():
        if c["kind"] == "measured" and c["time_base"] and c["family"] in TUNE_FAMILIES:
            pairs.setdefault(c["time_base"], []).append((pred, c["us"]))
    return {base: time_scale(*zip(*v)) for base, v in pairs.items()}


def on_time_base(c, pred, scales):
    """The prediction in the time of the figure's backend (itself for a NeuronCore's own time)."""
    return pred * scales.get(c["time_base"], 1.0)


def print_error_table(rows):
    """Per target, then per target and family: count, median, p90 and max of |ln| errors."""
    groups = {}
    for c, err in rows:
        groups.setdefault((c["target"], None), []).append((c["id"], err))
        groups.setdefault((c["target"], c["family"]), []).append((c["id"], err))
    groups[("all targets", None)] = [(c["id"], err) for c, err in rows]
    print(f"  {'target':11s} {'family':34s} {'n':>3s} {'median':>14s} {'p90':>14s} {'max':>8s}  far off")
    for (target, family), errs in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1] or "")):
        n, med, p90, worst = summary([e for _, e in errs])
        far = ", ".join(i for i, e in errs if e > FAR) or "none"
        print(f"  {target:11s} {family or '(all)':34s} {n:3d} {med:6.3f} (x{math.exp(med):5.2f}) "
              f"{p90:6.3f} (x{math.exp(p90):5.2f}) {worst:8.3f}  {far if family is None else ''}")


def print_errors(results, scales):
    """|ln(predicted / measured)| over the measured figures, on each figure's time base, for the
    tune families and the rest; then every figure as its backend reported it."""
    measured = [(c, pred) for c, pred, _ in results.values() if c["kind"] == "measured"]
    for base in sorted({c["time_base"] for c, _ in measured if c["time_base"]}):
        if base not in scales:
            print(f"\nTime base of {base}: none of its tune families ran; its figures are compared as reported")
            continue
        print(f"\nTime base of {base}: its reported times are x{scales[base]:.3f} one NeuronCore's (fitted on"
              f" {', '.join(sorted(f for f in TUNE_FAMILIES if any(c['family'] == f for c, _ in measured)))})")
    for split, keep in (("tune", lambda c: c["family"] in TUNE_FAMILIES),
                        ("rest", lambda c: c["family"] not in TUNE_FAMILIES)):
        rows = [(c, abs_log_error(on_time_base(c, pred, scales), c["us"])) for c, pred in measured if keep(c)]
        print(f"\n|ln(predicted / measured)| over the measured figures on their time base, {split} families:")
        if rows:
            print_error_table(rows)
        else:
            print("  none")
    print("\n|ln(predicted / measured)| over the measured figures as reported (one NeuronCore's time assumed):")
    print_error_table([(c, abs_log_error(pred, c["us"])) for c, pred in measured])


def print_families(results, rankings):
    """Per family of variants of one kernel at one shape (RANKINGS) with measured figures:
    Spearman's rank correlation of predicted and measured, and the measured latency of the
    variant predicted fastest over the measured fastest (what a tuner trusting the model loses);
    each marked tune or rest by the split of its figures (a time base's scale leaves both as they are)."""
    print("\nFamilies of variants (Spearman of predicted vs measured, values within x%.2f tying;"
          " predicted-fastest's measured latency over the measured fastest):" % TIE)
    for name, ids in rankings:
        have = [i for i in ids if i in results and results[i][0]["kind"] == "measured"]
        if len(have) < 2:
            continue
        pred = [results[i][1] for i in have]
        meas = [results[i][0]["us"] for i in have]
        rho = spearman(pred, meas, TIE)
        split = "tune" if results[have[0]][0]["family"] in TUNE_FAMILIES else "rest"
        print(f"  {name:42s} {split}  n {len(have):2d}  Spearman {'  n/a' if rho is None else f'{rho:+5.2f}'}"
              f"  predicted fastest x{tuner_loss(pred, meas):.3f} of the fastest")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("checkout", nargs="?", default="/tmp/corpus/nki-samples",
                    help="nki-samples checkout at commit fc5c69f")
    ap.add_argument("--autotune", default="/tmp/corpus/nki-autotune",
                    help=f"nki-autotune checkout at {TUNE_HEAD[:7]} (its cases are skipped when absent)")
    ap.add_argument("--library", default="/tmp/corpus/nki-library",
                    help=f"nki-library checkout at {LIB_HEAD[:7]} (its cases are skipped when absent)")
    ap.add_argument("--sdk", default="/tmp/corpus/sdk",
                    help=f"aws-neuron-sdk checkout at {SDK_HEAD[:7]} (its cases are skipped when absent)")
    ap.add_argument("--autocomp", default="/tmp/corpus/autocomp",
                    help=f"autocomp checkout at {AUTO_HEAD[:7]} (its cases are skipped when absent)")
    ap.add_argument("--accelopt", default="/tmp/corpus/accelopt",
                    help=f"AccelOpt checkout at {ACCEL_HEAD[:7]} or later (its cases are skipped when absent)")
    ap.add_argument("--kda", default="/tmp/corpus/kda",
                    help=f"kda-for-trainium checkout at {KDA_HEAD[:7]}: trn2 figures of NKIBench variants (needs --accelopt)")
    ap.add_argument("--only", help="comma-separated case ids")
    ap.add_argument("-v", "--verbose", action="store_true", help="print each case's profile summary")
    opts = ap.parse_args()
    if not os.path.isdir(os.path.join(opts.checkout, "src", "nki_samples")):
        sys.exit(f"{opts.checkout} is not an nki-samples checkout (git -C <mirror> worktree add -f DIR fc5c69f)")
    more_cases, more_rankings = kda_cases(opts.kda)
    rankings = RANKINGS + more_rankings
    cases = [c for c in CASES + more_cases if not opts.only or c["id"] in opts.only.split(",")]
    roots = {TUNE_PREFIX: opts.autotune, LIB_PREFIX: opts.library, SDK_PREFIX: opts.sdk, AUTO_PREFIX: opts.autocomp,
             ACCEL_PREFIX: opts.accelopt, KDA_PREFIX: opts.kda}
    for prefix, (root, marker) in {TUNE_PREFIX: (opts.autotune, "kernel_library"),
                                   LIB_PREFIX: (opts.library, "src/nkilib_src"),
                                   SDK_PREFIX: (opts.sdk, "nki/examples"),
                                   AUTO_PREFIX: (opts.autocomp, "examples/trn-advanced"),
                                   ACCEL_PREFIX: (opts.accelopt, "NKIBench/kernels"),
                                   KDA_PREFIX: (opts.kda, "workspaces")}.items():
        if not os.path.isdir(os.path.join(root, marker)):
            print(f"no {prefix.rstrip(':')} checkout at {root}: its cases are skipped")
            cases = [c for c in cases if not (c["path"] or "").startswith(prefix)]
    print(f"nkic {nkic.__version__} cost model vs published figures; kernels from {opts.checkout}")
    print("Cases (one line each):")
    results, failures = run_cases(opts.checkout, cases, opts.verbose, roots)
    under, total = print_bounds(results)
    print_rankings(results, rankings)
    print_orders(results)
    scales = fit_time_bases(results)
    print_errors(results, scales)
    print_families(results, rankings)
    print(f"\nUpper bounds the prediction stays under: {under}/{total}"
          + (f" ({100 * under / total:.0f} %)" if total else ""))
    off = [c for c, pred, _ in results.values() if c["kind"] in ("measured", "alternative")
           and abs_log_error(on_time_base(c, pred, scales), c["us"]) > WHY_LIMIT]
    bare = [c["id"] for c in off if not c["why"]]
    print(f"Predictions off by more than x4: {len(off)}; without a reason: {', '.join(bare) or 'none'}")
    print("\nSources (repository, path, commit, line):")
    for c in cases:
        repo, path, commit, line = c["source"]
        print(f"  {c['id']:12s} {repo} {path}@{commit[:8]}:{line}")
    if failures:
        print(f"\n{len(failures)} case(s) failed to trace:")
        for c, msg in failures:
            print(f"  {c['id']} {c['func']}: {msg}")
        sys.exit(1)


if __name__ == "__main__":
    main()
