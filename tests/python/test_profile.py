"""Predicted performance through the public surface: nki.benchmark / nki.profile as
neuronx-cc documents them, nkic.profile(kernel[grid], *arrays, target=...), and
`nkic profile` with its summary, Perfetto JSON and HTML page (rendered in a real
headless Chromium)."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import nkic
from neuronxcc import nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa

sys.path.insert(0, os.path.dirname(__file__))
from nki_test_util import Markers, check_diag  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
NKIC = str(ROOT / "bin" / "nkic")
M = Markers(__file__)
TARGETS = ("trn1", "inf2", "trn2", "trn3")


def add_rows(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(a.shape[0] // 128):
        x = nl.load(a[i * 128:(i + 1) * 128, :])
        y = nl.load(b[i * 128:(i + 1) * 128, :])
        nl.store(out[i * 128:(i + 1) * 128, :], value=nl.add(x, y))  # ERR:store
    return out


def matmul(lhsT, rhs):
    out = nl.ndarray((lhsT.shape[1], rhs.shape[1]), dtype=nl.float32, buffer=nl.shared_hbm)
    for n in nl.affine_range(rhs.shape[1] // 512):
        acc = nl.zeros((128, 512), nl.float32, buffer=nl.psum)
        for k in nl.affine_range(lhsT.shape[0] // 128):
            s = nl.load(lhsT[k * 128:(k + 1) * 128, 0:128])
            m = nl.load(rhs[k * 128:(k + 1) * 128, n * 512:(n + 1) * 512])
            acc += nisa.nc_matmul(s, m)  # ERR:matmul
        nl.store(out[0:128, n * 512:(n + 1) * 512], value=nl.copy(acc, dtype=nl.float32))
    return out


def ones(*shape, dtype=np.float32):
    return np.ones(shape, dtype)


@pytest.mark.parametrize("target", TARGETS)
def test_benchmark_fills_the_latency_percentiles_on_every_target(target):
    kernel = nki.benchmark(warmup=5, iters=10, platform_target=target)(add_rows)
    a = np.arange(512 * 256, dtype=np.float32).reshape(512, 256)
    out = kernel(a, a)
    np.testing.assert_array_equal(out, a + a)  # the outputs are still computed
    lat = kernel.benchmark_result.nc_latency
    p50, p99 = lat.get_latency_percentile(50), lat.get_latency_percentile(99)
    assert p50 == p99 == kernel.benchmark_result.profile.latency_us
    assert 1 < p50 < 1000  # microseconds: 1 MiB moved by DMA


def test_benchmark_as_a_bare_decorator_and_nki_profile_writes_its_timeline(tmp_path):
    bare = nki.benchmark(add_rows)
    bare(ones(256, 128), ones(256, 128))
    assert bare.benchmark_result.nc_latency.get_latency_percentile(0) > 0
    prof = nki.profile(working_directory=str(tmp_path), save_trace_name="add.ntff", profile_nth=2)(add_rows)
    prof(ones(256, 128), ones(256, 128))
    trace = json.loads((tmp_path / "add.json").read_text())
    assert any(e["ph"] == "X" for e in trace["traceEvents"])
    assert prof.benchmark_result.nc_latency.get_latency_percentile(99) == pytest.approx(
        bare.benchmark_result.nc_latency.get_latency_percentile(99))


def test_a_percentile_outside_0_100_is_a_diagnostic():
    kernel = nki.benchmark(add_rows)
    kernel(ones(128, 64), ones(128, 64))
    with pytest.raises(nkic.NKIError) as e:
        kernel.benchmark_result.nc_latency.get_latency_percentile(101)
    assert e.value.code == "err_unsupported_args"
    assert "expects a percentile between 0 and 100, got 101" in e.value.message


def test_profile_reports_engines_lines_and_a_faster_generation():
    a = ones(1024, 512)
    res = {t: nkic.profile(nki.jit(add_rows), a, a, target=t) for t in ("trn1", "trn2", "trn3")}
    r = res["trn1"]
    assert r.target == "trn1" and r.kernel == "add_rows"
    assert set(r.engines) == {"pe", "act", "dve", "pool", "dma"}
    assert r.engines["dma"].instructions == 24 and r.engines["dve"].instructions == 8
    assert r.engines["pe"].busy_us == 0 and r.mfu == 0
    assert r.dma_bytes == 3 * 1024 * 512 * 4
    assert 0 < r.engines["dma"].percent <= 100
    # DMA-bound: each newer generation moves more bytes per ns per queue.
    assert res["trn1"].latency_us > res["trn2"].latency_us > res["trn3"].latency_us
    # The store line carries the store and the add it consumes.
    f, line, busy, crit, n = r.lines[0]
    assert (os.path.realpath(f), line) == (M.path, M.line("store")) and n == 16
    assert r.sbuf_peak_bytes >= 3 * 512 * 4 and r.sbuf_peak_bytes <= r.sbuf_capacity_bytes
    assert r.critical_path[0][0] == "nl.store"


def test_matmul_accumulates_in_psum_as_one_instruction_and_counts_for_mfu():
    lhsT, rhs = ones(512, 128), ones(512, 1024)
    ir = nki.jit(matmul).trace(None, (lhsT, rhs), {}).ir.text(False)
    assert "+= nc_matmul[pe]" in ir and ir.count("tensor_copy") == 1  # only the PSUM -> SBUF copy
    r = nkic.profile(matmul, lhsT, rhs, target="trn2")
    assert r.engines["pe"].instructions == 8
    assert 0 < r.mfu == r.hfu < 1
    # One or two accumulators live at once (the next n overlaps the last copy-out).
    assert r.psum_peak_bytes in (512 * 4, 2 * 512 * 4) and r.psum_capacity_bytes == 16384
    np.testing.assert_allclose(nki.simulate_kernel(nki.jit(matmul), lhsT, rhs), lhsT.T @ rhs)


def zeroed_psum(first_use):
    """A PSUM tile zeroed, then first used by an accumulating or an overwriting matmul, or read."""
    def kernel(lhsT, rhs):
        out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
        acc = nl.zeros((128, 512), nl.float32, buffer=nl.psum)
        s, t = nl.load(lhsT), nl.load(rhs)
        if first_use == "accumulate":
            acc += nisa.nc_matmul(s, t)
        elif first_use == "overwrite":
            acc[...] = nisa.nc_matmul(s, t)
        else:
            s = nl.add(s, nl.copy(acc[:, 0:128]))
            acc[...] = nisa.nc_matmul(s, t)
        nl.store(out, value=nl.copy(acc))
        return out
    return nki.jit(kernel)


@pytest.mark.parametrize("first_use,costed", [("accumulate", 5), ("overwrite", 5), ("read", 8)])
def test_a_psum_zeroing_that_a_matmul_uses_first_costs_nothing(first_use, costed):
    # Two loads, the matmul, the copy out and the store, plus the memset only where its zeros are
    # read (with that read's copy and add).
    lhsT, rhs = ones(128, 128), ones(128, 512)
    assert nkic.profile(zeroed_psum(first_use), lhsT, rhs, target="trn1").instructions == costed


def blocked_matmul(rng):
    def mm(lhsT, rhs):
        out = nl.ndarray((lhsT.shape[1], rhs.shape[1]), dtype=nl.float32, buffer=nl.shared_hbm)
        for m in rng(lhsT.shape[1] // 128):
            for n in rng(rhs.shape[1] // 512):
                acc = nl.zeros((128, 512), nl.float32, buffer=nl.psum)
                for k in rng(lhsT.shape[0] // 128):
                    s = nl.load(lhsT[k * 128:(k + 1) * 128, m * 128:(m + 1) * 128])
                    t = nl.load(rhs[k * 128:(k + 1) * 128, n * 512:(n + 1) * 512])
                    acc += nisa.nc_matmul(s, t)
                nl.store(out[m * 128:(m + 1) * 128, n * 512:(n + 1) * 512], value=nl.exp(acc))
        return out
    return nki.jit(mm)


@pytest.mark.parametrize("target", ("trn1", "trn2", "trn3"))
def test_loops_predict_as_their_unrolled_instruction_stream_without_scheduling_it(target):
    # 64 k-iterations: the first ones fill the DMA queues' idle gaps before the loop settles.
    a, b = np.zeros((8192, 512), np.float32), np.zeros((8192, 2048), np.float32)
    looped = nkic.profile(blocked_matmul(nl.affine_range), a, b, target=target)
    unrolled = nkic.profile(blocked_matmul(nl.static_range), a, b, target=target)
    # Per (m, n): 64 x (two loads, a matmul), the exp and the store; the PSUM zeroing folds
    # into the first matmul.
    assert looped.instructions == unrolled.instructions == 4 * 4 * (64 * 3 + 2)
    assert looped.latency_us == pytest.approx(unrolled.latency_us, rel=1e-9)
    for e in looped.engines:
        assert looped.engines[e].busy_us == pytest.approx(unrolled.engines[e].busy_us, rel=1e-9)
    assert looped.mfu == pytest.approx(unrolled.mfu, rel=1e-9)
    assert looped.instructions_scheduled < unrolled.instructions_scheduled / 2 == looped.instructions / 2


def four_tile_copy(trips):
    @nki.jit
    def copy(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        i_p, i_f = nl.arange(128)[:, None], nl.arange(64)[None, :]
        # Sequential: an affine loop of only transfers would be one coalesced transfer.
        for t in nl.sequential_range(trips):
            nl.store(out[(t % 4) * 128 + i_p, i_f], value=nl.load(x[(t % 4) * 128 + i_p, i_f]))
        return out
    return copy


def test_a_loop_whose_schedule_repeats_every_few_iterations_is_predicted_at_once():
    # On trn2 the loads run hundreds of buffers ahead of the stores and the queues settle into
    # a pattern longer than four iterations: a loop of 2**40 trips is still predicted from it,
    # at the per-trip cost of a 20000-trip loop.
    x = np.zeros((512, 64), np.float32)
    walked = nkic.profile(four_tile_copy(20000), x, target="trn2")
    huge = nkic.profile(four_tile_copy(2**40), x, target="trn2")
    assert huge.latency_us / 2**40 == pytest.approx(walked.latency_us / 20000, rel=0.03)
    assert huge.instructions_scheduled < 20000


@nki.jit
def copy_by_element(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    for i in nl.affine_range(a.shape[0]):
        for j in nl.affine_range(a.shape[1]):
            t[i, j] = nl.load(a[i, j])
    nl.store(out, value=t)
    return out


@nki.jit
def copy_by_column(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    for j in nl.affine_range(a.shape[1]):
        t[:, j] = nl.load(a[:, j])
    nl.store(out, value=t)
    return out


def copy_whole(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.load(a))
    return out


@pytest.mark.parametrize("target", ["trn1", "trn2"])
def test_a_copy_element_by_element_costs_the_descriptors_it_coalesces_into(target):
    # 8,192 one-element loads in loops that only move data are one transfer of 128 rows of 64
    # contiguous elements: the same descriptors as loading the tile at once. So are 64 strided
    # column loads.
    a = np.zeros((128, 64), np.float32)
    whole = nkic.profile(nki.jit(copy_whole), a, target=target)
    for kernel in (copy_by_element, copy_by_column):
        r = nkic.profile(kernel, a, target=target)
        assert r.latency_us == pytest.approx(whole.latency_us, rel=1e-12)
        assert r.engines["dma"].instructions == 2
        assert any("1 DMA instruction(s) in loops that only move data are costed as one transfer" in n
                   for n in r.notes)
    assert whole.latency_us < 4


def test_the_profile_names_the_transfers_whose_runs_are_overhead_bound():
    # 64 fp32 per partition is a run of 256 B, under the 512 B a run's overhead costs; 1024 fp32
    # (4 KiB) is not.
    small = nkic.profile(nki.jit(copy_whole), np.zeros((128, 64), np.float32), target="trn2")
    line = copy_whole.__code__.co_firstlineno + 2
    assert small.notes == [f"2 DMA instruction(s) (the first at test_profile.py:{line}) move contiguous runs of under "
                           "512 bytes on average, the DMA bandwidth guide's overhead-bound payloads: 100 % of the DMA "
                           "queue time, each run costing the queue time of 512 bytes more"]
    assert nkic.profile(nki.jit(copy_whole), np.zeros((128, 1024), np.float32), target="trn2").notes == []


@nki.jit
def scale_rows(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    x, row = nl.load(a), nl.load(b)
    nl.store(out, value=nl.multiply(x, row.broadcast_to(a.shape)))  # ERR:bcast
    return out


def test_a_partition_broadcast_is_tensor_engine_time_and_the_profile_says_so():
    # The [1, 512] fp32 row broadcast to 128 partitions is one ones-column matmul of 512 moving
    # columns at the fp32 rate: 512 x 4 cycles at 2.8 GHz on trn1, before the multiply reads it.
    r = nkic.profile(scale_rows, np.ones((128, 512), np.float32), np.ones((1, 512), np.float32), target="trn1")
    assert r.engines["pe"].busy_us == pytest.approx(512 * 4 / 2.8 / 1e3)
    assert r.engines["pe"].instructions == 1 and r.mfu == 0
    assert (f"1 partition broadcast(s) (broadcast_to of a one-partition tile, the first read at "
            f"test_profile.py:{M.line('bcast')}) are Tensor-Engine matmuls of a ones column with the row: "
            "0.7 us of Tensor-Engine time") in r.notes
    assert not any("partition broadcast" in n for n in nkic.profile(
        nki.jit(copy_whole), np.zeros((128, 1024), np.float32), target="trn1").notes)


def test_profile_of_a_launch_grid_runs_the_programs_one_after_another():
    a = ones(256, 128)
    one = nkic.profile(nki.jit(add_rows), a, a, target="trn2")
    four = nkic.profile(nki.jit(add_rows)[4], a, a, target="trn2")
    # Four times the work; a program's loads fill the idle gaps its predecessor's stores leave
    # on the DMA queues (waiting for their data), so the programs overlap.
    assert four.engines["dma"].busy_us == pytest.approx(4 * one.engines["dma"].busy_us)
    assert 2 * one.latency_us < four.latency_us < 4 * one.latency_us
    assert "SPMD programs run one after another on one NeuronCore" in four.notes


def test_profile_on_a_target_without_figures_is_a_diagnostic():
    with pytest.raises(nkic.NKIError) as e:
        nkic.profile(add_rows, ones(128, 64), ones(128, 64), target="inf1")
    assert e.value.code == "err_no_cost_figures"
    assert e.value.message == "no published engine and DMA figures for target 'inf1': nkic cannot predict its latency"


def test_profile_of_an_illegal_kernel_reports_its_diagnostic_at_the_user_line():
    with pytest.raises(nkic.NKIError) as e:
        nkic.profile(matmul, ones(256, 128), ones(256, 1024, dtype=np.int32), target="trn2")
    assert e.value.code.startswith("err_")
    assert os.path.realpath(e.value.file) == M.path


def nkic_cli(*args):
    return subprocess.run([NKIC, *args], cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_cli_profile_prints_the_summary_and_writes_json_and_html(tmp_path):
    trace, page = tmp_path / "t.json", tmp_path / "p.html"
    r = nkic_cli("profile", "examples/matmul_tiled.py", "--target", "trn1", "--trace-json", str(trace),
                 "--html", str(page))
    assert r.returncode == 0, r.stderr
    assert "matmul_kernel on trn1:" in r.stdout and "us predicted" in r.stdout
    assert "busiest lines:" in r.stdout and "matmul_tiled.py:" in r.stdout
    events = json.loads(trace.read_text())["traceEvents"]
    names = {e["args"]["name"] for e in events if e.get("name") == "thread_name"}
    assert {"pe", "act", "dve", "pool", "dma0", "dma15"} <= names
    slices = [e for e in events if e["ph"] == "X"]
    assert slices and all(e["dur"] > 0 for e in slices)
    assert all(e["args"]["source"].split(":")[0].endswith("matmul_tiled.py") for e in slices)
    assert {e["tid"] for e in slices} >= {0, 2, 4}  # pe, dve and a DMA queue
    assert "<canvas id=\"timeline\">" in page.read_text()
    # What decided the latency, in the summary and on the page.
    decided = next(line for line in r.stdout.splitlines() if line.startswith("  decided by: "))
    assert decided.startswith("  decided by: critical path ") and "DMA queues" in decided
    assert json.dumps(decided[len("  decided by: "):])[1:-1] in page.read_text()


def test_the_decision_splits_the_whole_critical_path():
    # The parts named add up to the critical path, each engine's share among them.
    r = nkic.profile(nki.jit(add_rows), ones(1024, 512), ones(1024, 512), target="trn2")
    head = r.decided_by.split(";")[0]
    assert head.startswith(f"critical path {r.latency_us:.3f} us: ")
    shares = [int(part.strip().split(" %")[0]) for part in head.split(": ", 1)[1].split(",")]
    assert 98 <= sum(shares) <= 102
    assert r.decided_by in r.summary()


def test_cli_profile_json_and_its_errors():
    r = nkic_cli("profile", "examples/tensor_add.py", "--target", "trn2", "--json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["schema"] == "nkic.profile/1" and report["ok"] and report["target"] == "trn2"
    assert report["latency_us"] > 0 and set(report["engines"]) == {"pe", "act", "dve", "pool", "dma"}
    assert report["lines"][0]["file"].endswith("tensor_add.py")
    assert report["decided_by"].startswith(f"critical path {report['latency_us']:.3f} us: ")
    bad = nkic_cli("profile", "examples/tensor_add.py", "--target", "inf1", "--json")
    assert bad.returncode == 2
    assert json.loads(bad.stdout)["diagnostics"][0]["code"] == "err_no_cost_figures"
    assert nkic_cli("profile", "examples/no_such_file.py").returncode == 3


def test_cli_profile_of_every_shipped_example_is_deterministic():
    for example in sorted((ROOT / "examples").glob("*.py")):
        first = nkic_cli("profile", str(example.relative_to(ROOT)), "--json")
        second = nkic_cli("profile", str(example.relative_to(ROOT)), "--json")
        assert first.returncode == 0, (example, first.stderr)
        assert first.stdout == second.stdout, example


def test_the_html_report_renders_in_headless_chromium(tmp_path):
    chromium = shutil.which("chromium")
    assert chromium, "the test command installs Debian's chromium (scripts/setup.sh all)"
    a = ones(1024, 512)
    page = tmp_path / "report.html"
    page.write_text(nkic.profile(nki.jit(add_rows), a, a, target="trn2").html())
    # The browser is no part of nkic: it runs without the sanitizer runtime scripts/test_asan.sh preloads.
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    r = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                        f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", page.as_uri()],
                       capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    dom = r.stdout
    assert "data-error" not in dom, dom[:2000]
    drawn = int(dom.split('data-drawn="')[1].split('"')[0])
    assert drawn > 0
    assert "add_rows on trn2:" in dom and "us predicted" in dom
    assert "test_profile.py:" in dom  # the per-line table names this file


def three_big_tiles(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    x = nl.load(a)
    y = nl.load(b)
    nl.store(out, value=nl.add(x, y))
    return out


def test_an_occupancy_past_the_capacity_is_noted():
    a = np.zeros((128, 30000), np.float32)
    r = nkic.profile(three_big_tiles, a, a, target="trn1")
    assert r.sbuf_peak_bytes == 3 * 30000 * 4 and r.sbuf_capacity_bytes == 180224
    # One buffer per tile is over the capacity at the add: the excess goes to HBM and back.
    line = three_big_tiles.__code__.co_firstlineno + 4
    assert r.notes == [f"one buffer per tile keeps 360000 bytes per partition of SBUF live at test_profile.py:{line}, "
                       "more than the 180224 the target has: the excess, up to what the instruction there "
                       "touches, is spilled to HBM and reloaded there, again whenever the program passes it reading other tiles"]
    assert r.dma_bytes == 3 * 128 * 30000 * 4 + 2 * 128 * (360000 - 180224)
    small = nkic.profile(three_big_tiles, a[:, :1000], a[:, :1000], target="trn1")
    assert small.notes == [] and small.sbuf_peak_bytes == 3 * 1000 * 4


def block_reader(reps, held=True):
    """Loads the blocks of a block-dim tile, then reads each `reps` times: in a loop over `reps`
    around the loop over the blocks (which holds every block), or right after its load."""
    def kernel(a):
        n, f = a.shape[0] // 128, a.shape[1]
        out = nl.ndarray((128, f), dtype=a.dtype, buffer=nl.shared_hbm)
        w = nl.ndarray((n, nl.par_dim(128), f), dtype=a.dtype, buffer=nl.sbuf)
        acc = nl.zeros((128, f), dtype=a.dtype, buffer=nl.sbuf)
        for b in nl.affine_range(n):
            w[b] = nl.load(a[b * 128:(b + 1) * 128, :])
            if not held:
                for r in nl.sequential_range(reps):
                    acc[...] = nl.add(acc, nl.multiply(w[b], 2.0))
        if held:
            for r in nl.sequential_range(reps):
                for b in nl.sequential_range(n):
                    t = nl.multiply(w[b], 2.0)
                    acc[...] = nl.add(acc, t)
        nl.store(out, value=acc)
        return out
    return kernel


def test_the_blocks_a_loop_reads_in_every_iteration_are_held_and_spilled():
    a = np.zeros((8 * 128, 8192), np.float32)  # eight blocks of 32 KiB per partition
    moved = 8 * 128 * 32768 + 128 * 32768  # the loads and the store
    # Read once, each block is a tile of its own, live from its load to its read.
    once = nkic.profile(block_reader(1), a, target="trn1")
    assert once.dma_bytes == moved and not [n for n in once.notes if "SBUF" in n]
    # Read in every iteration of the loop over `r`, all eight are live over it: 256 KiB, with
    # `acc` and `t` 320 KiB, past trn1's 176 KiB. The multiply, the first instruction at that
    # peak, reloads what it reads and writes (64 KiB, under the 140 KiB excess) whenever it
    # reads another block: 8 blocks x 2 passes, each a store and a reload.
    twice = nkic.profile(block_reader(2), a, target="trn1")
    line = block_reader.__code__.co_firstlineno + 16
    declared = block_reader.__code__.co_firstlineno + 6
    assert [n for n in twice.notes if "SBUF" in n] == [
        f"one buffer per tile keeps 327680 bytes per partition of SBUF live at test_profile.py:{line} (a loop holds 8 "
        f"blocks of 32768 bytes of 'w', declared at line {declared}, as it reads them in every iteration), more than "
        "the 180224 the target has: the excess, up to what the instruction there touches, is spilled to HBM and "
        "reloaded there, again whenever the program passes it reading other tiles"]
    assert twice.dma_bytes == moved + 16 * 2 * 128 * 65536
    assert nkic.profile(block_reader(3), a, target="trn1").dma_bytes == moved + 24 * 2 * 128 * 65536
    # Each block read again right after its load: one block at a time, however many there are.
    streamed = nkic.profile(block_reader(2, held=False), np.zeros((40 * 128, 8192), np.float32), target="trn1")
    assert streamed.dma_bytes == 40 * 128 * 32768 + 128 * 32768
    assert not [n for n in streamed.notes if "SBUF" in n]


def running_sum(a, n):
    out = nl.ndarray((128, 1), dtype=a.dtype, buffer=nl.shared_hbm)
    cnt = nl.load(n[0:1, 0:1])
    acc = nl.zeros((128, 1), dtype=nl.float32)
    for j in nl.sequential_range(cnt):
        acc[...] = acc + nl.load(a[:, j:j + 1])
    nl.store(out, value=acc)
    return out


def test_a_runtime_trip_count_is_costed_as_one_iteration_and_says_so():
    a = np.zeros((128, 16), np.float32)
    r = nkic.profile(running_sum, a, np.array([[5]], np.int32), target="trn2")
    line = running_sum.__code__.co_firstlineno + 2
    assert r.notes == ["a loop whose trip count is known only at run time is costed as one iteration",
                       f"3 DMA instruction(s) (the first at test_profile.py:{line}) move contiguous runs of under 512 "
                       "bytes on average, the DMA bandwidth guide's overhead-bound payloads: 100 % of the DMA queue "
                       "time, each run costing the queue time of 512 bytes more"]
    assert r.engines["dma"].instructions == 3  # the count, one iteration's load, the store


def test_the_critical_path_is_shared_out_to_source_lines_through_repeated_iterations():
    a, b = np.zeros((8192, 512), np.float32), np.zeros((8192, 2048), np.float32)
    r = nkic.profile(blocked_matmul(nl.affine_range), a, b, target="trn2")
    assert r.instructions_scheduled < r.instructions
    critical = sum(crit for _, _, _, crit, _ in r.lines)
    assert 0.9 * r.latency_us <= critical <= r.latency_us * (1 + 1e-9)
    assert any(step[0] == "steady-state iterations" and step[5] > 1 for step in r.critical_path)


def ping_pong(loop):
    """SiLU over 8 row tiles, each loaded into the half of a two-tile buffer that `i % 2` picks,
    one tile ahead of the activation that reads it."""
    def kernel(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        buf = nl.ndarray((2, nl.par_dim(128), 2048), dtype=a.dtype, buffer=nl.sbuf)
        buf[0] = nl.load(a[0:128, :])
        for i in loop(7):
            buf[(i + 1) % 2] = nl.load(a[(i + 1) * 128:(i + 2) * 128, :])  # ERR:prefetch
            nl.store(out[i * 128:(i + 1) * 128, :], value=nisa.activation(op=nl.silu, data=buf[i % 2]))
        nl.store(out[7 * 128:, :], value=nisa.activation(op=nl.silu, data=buf[1]))
        return out
    return nki.jit(kernel)


@pytest.mark.filterwarnings("ignore:.*warn_block_dimension_is_deprecated")
def test_a_buffer_picked_by_a_modulo_of_a_sequential_counter_serialises_its_users():
    # In the kept sequential loop, the prefetch into one half waits for the activation reading the
    # other and the activation for the prefetch: a load no longer runs alongside an activation
    # (the kernel stays DMA-bound; the stores fill part of the queues' wait).
    a = np.ones((8 * 128, 2048), np.float32)
    kept = nkic.profile(ping_pong(nl.sequential_range), a, target="trn2")
    unrolled = nkic.profile(ping_pong(nl.affine_range), a, target="trn2")
    note = (f"2 instruction(s) (the first at test_profile.py:{M.line('prefetch')}) pick an on-chip block by a "
            "floor division or modulo of a sequential_range counter")
    assert [n for n in kept.notes if "sequential_range counter" in n][0].startswith(note)
    assert not any("sequential_range counter" in n for n in unrolled.notes)
    one_activation = kept.engines["act"].busy_us / 8
    assert kept.latency_us > unrolled.latency_us + one_activation


def scalings(engine):
    """Four scalings of one [128, 2048] tile, independent of each other; `engine` names their
    engine (None: the compiler's choice)."""
    def kernel(a):
        outs = [nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm) for _ in range(4)]
        x = nl.load(a)
        for k, out in enumerate(outs):
            kw = {} if engine is None else {"engine": engine}
            nl.store(out, value=nisa.tensor_scalar(x, np.multiply, k + 2.0, **kw))  # ERR:scaling
        return tuple(outs)
    return nki.jit(kernel)


def test_an_unnamed_tensor_scalar_runs_on_the_engine_that_finishes_it_first():
    a = np.ones((128, 2048), np.float32)
    chosen = nkic.profile(scalings(None), a, target="trn2")
    named = nkic.profile(scalings(nisa.vector_engine), a, target="trn2")
    # On trn2 the Vector Engine streams 2 fp32 elements per cycle at 0.96 GHz, the Scalar Engine
    # 1 at 1.2 GHz: the first scaling goes to the Vector Engine, a later one to the Scalar Engine
    # when it finishes it before the Vector Engine could.
    assert chosen.engines["act"].instructions >= 1 and chosen.engines["dve"].instructions >= 1
    assert chosen.notes == [f"{chosen.engines['act'].instructions} tensor_scalar instruction(s) that name no engine "
                            f"(the first at test_profile.py:{M.line('scaling')}) run on the Scalar Engine where it "
                            "finishes them first, as the compiler chooses"]
    assert named.engines["dve"].instructions == 4 and named.engines["act"].instructions == 0 and named.notes == []
    assert chosen.latency_us <= named.latency_us
