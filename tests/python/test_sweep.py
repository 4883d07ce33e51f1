"""nkic sweep: a grid of keyword arguments, on the local process pool and on a real
dask.distributed cluster (dask-scheduler and dask-worker processes on 127.0.0.1)."""
import contextlib
import csv
import io
import json
import os
import signal
import subprocess
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

import nkic
from nkic import cli
from nkic._core import core

ROOT = Path(__file__).resolve().parents[2]
MATMUL = str(ROOT / "examples" / "matmul_sweep.py")
GRID = ["--param", "TILE_N=256,512,1024", "--param", "TILE_K=64,128"]
TOO_WIDE = "err_size_of_dimension_exceed_arch_limit"  # nc_matmul's moving free size above gemm_moving_fmax
RUN_FIELDS = ("params", "target", "status", "error_code", "message", "file", "line", "max_abs_err", "match",
              "predicted_latency_us", "engines", "mfu_percent", "instructions", "rank")


def nkic_cli(*args):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = cli.main(list(args))
    return status, out.getvalue(), err.getvalue()


def _worker_env():
    # The workers import nkic and _nkic from where this test does.
    paths = [str(Path(nkic.__file__).parents[1]), os.path.dirname(core.__file__)]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths + [os.environ.get("PYTHONPATH", "")])}


class Cluster:
    """A dask scheduler on a free port and `workers` single-thread workers, each its own process."""

    def __init__(self, tmp, workers=2):
        self.tmp, self.procs, self.workers = tmp, [], {}
        env = _worker_env()
        sched_file = tmp / "scheduler.json"
        self.scheduler = self._start(["dask-scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                                      "--scheduler-file", str(sched_file)], env, "scheduler")
        deadline = time.monotonic() + 60
        while not sched_file.exists():
            assert self.scheduler.poll() is None and time.monotonic() < deadline, self._log("scheduler")
            time.sleep(0.05)
        self.address = json.loads(sched_file.read_text())["address"]
        procs = [self._start(["dask-worker", self.address, "--nthreads", "1", "--no-nanny", "--no-dashboard",
                              "--host", "127.0.0.1", "--name", f"w{i}", "--local-directory", str(tmp / f"w{i}")],
                             env, f"w{i}") for i in range(workers)]
        import distributed
        with distributed.Client(self.address, timeout=60) as client:
            client.wait_for_workers(workers, timeout=60)
            by_name = {w["name"]: a for a, w in client.scheduler_info()["workers"].items()}
        self.workers = {by_name[f"w{i}"]: p for i, p in enumerate(procs)}  # address -> process

    def _start(self, argv, env, name):
        log = open(self.tmp / f"{name}.log", "w")
        p = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        self.procs.append(p)
        return p

    def _log(self, name):
        return (self.tmp / f"{name}.log").read_text()

    def close(self):
        for p in reversed(self.procs):  # workers first, the scheduler last
            if p.poll() is None:
                p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = Cluster(tmp_path_factory.mktemp("dask"))
    yield c
    c.close()


def _by_config(rows):
    return {(r["params"]["TILE_N"], r["params"]["TILE_K"], r["target"]): r for r in rows}


def _check_matmul_rows(rows, workers):
    assert len(rows) == 6
    for (n, k, target), r in _by_config(rows).items():
        assert target == "trn2" and r["attempts"] == 1
        assert r["worker"] in workers, r["worker"]
        if n == 1024:
            assert (r["status"], r["error_code"], r["line"]) == ("diagnostic", TOO_WIDE, 27)
            assert "exceed architecture limitation of 512" in r["message"]
            assert r["predicted_latency_us"] is None and r["rank"] is None
        else:
            assert (r["status"], r["match"], r["error_code"]) == ("ok", True, None)
            assert r["max_abs_err"] < 1e-3 and r["predicted_latency_us"] > 0 and r["simulate_s"] > 0
            assert set(r["engines"]) == {"pe", "act", "dve", "pool", "dma"} and r["engines"]["pe"] > 0
    ranked = sorted((r for r in rows if r["rank"]), key=lambda r: r["rank"])
    assert [r["rank"] for r in ranked] == [1, 2, 3, 4]
    assert [r["predicted_latency_us"] for r in ranked] == sorted(r["predicted_latency_us"] for r in ranked)


def test_cluster_sweep_matches_numpy_and_local_pool_gives_the_same_rows(cluster, tmp_path):
    status, text, _ = nkic_cli("sweep", MATMUL, *GRID, "--scheduler", cluster.address,
                               "--json", str(tmp_path / "dask.json"))
    assert status == 0
    rows = json.loads((tmp_path / "dask.json").read_text())["rows"]
    _check_matmul_rows(rows, set(cluster.workers))
    # The table: best first, the illegal configurations last with their code.
    lines = text.splitlines()
    assert lines[0].split()[:5] == ["rank", "TILE_N", "TILE_K", "target", "status"]
    assert lines[1].split()[:5] == ["1", "512", "128", "trn2", "ok"]
    assert sum(TOO_WIDE in line for line in lines) == 2

    status, _, _ = nkic_cli("sweep", MATMUL, *GRID, "--json", str(tmp_path / "local.json"))
    assert status == 0
    local = json.loads((tmp_path / "local.json").read_text())["rows"]
    assert all(r["worker"].startswith("local:") for r in local)
    same = lambda rs: [{f: r[f] for f in RUN_FIELDS} for r in rs]  # noqa: E731
    assert same(local) == same(rows)


SLOW = textwrap.dedent('''
    import numpy as np
    from neuronxcc import nki
    import neuronxcc.nki.language as nl

    @nki.jit
    def slow(x, SEED=0, REPS=1):
        """REPS rounds over the whole input: simulation time grows with REPS."""
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        for i in nl.affine_range(x.shape[0] // 128):
            t = nl.load(x[i * 128:(i + 1) * 128, :])
            for r in nl.sequential_range(REPS):
                t[...] = nl.multiply(t, 1.0)
            nl.store(out[i * 128:(i + 1) * 128, :], value=nl.add(t, SEED))
        return out

    def make_inputs():
        return (np.ones((1024, 2048), np.float32),)

    def reference(x, SEED=0, REPS=1):
        if SEED == 99:
            raise RuntimeError("no reference for this seed")
        return x + SEED
    ''')


@pytest.fixture
def slow_kernel(tmp_path):
    path = tmp_path / "slow.py"
    path.write_text(SLOW)
    return str(path)


def test_killing_a_worker_loses_no_configuration(tmp_path, slow_kernel):
    c = Cluster(tmp_path, workers=2)
    killed = []

    def kill_the_other(row, done, total):
        if not killed:  # the other worker is busy with its own first configuration
            victim = next(a for a in c.workers if a != row["worker"])
            os.kill(c.workers[victim].pid, signal.SIGKILL)
            killed.append(victim)

    try:
        rows = nkic.sweep(f"{slow_kernel}::slow", {"SEED": [0, 1, 2, 3, 4, 5], "REPS": [80]},
                          scheduler=c.address, progress=kill_the_other)
    finally:
        c.close()
    assert killed and c.workers[killed[0]].wait(timeout=60) == -signal.SIGKILL
    survivor = next(a for a in c.workers if a != killed[0])
    assert any(r["worker"] == survivor for r in rows)
    assert sorted(r["params"]["SEED"] for r in rows) == [0, 1, 2, 3, 4, 5]
    for r in rows:
        assert r["status"] in ("ok", "failed"), r
        if r["status"] == "ok":
            assert r["match"] and r["worker"] in c.workers
        else:
            assert r["attempts"] == 2 and r["message"]


def test_ctrl_c_cancels_the_clusters_tasks(cluster, slow_kernel):
    import distributed

    def interrupt(row, done, total):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        nkic.sweep(f"{slow_kernel}::slow", {"SEED": list(range(8)), "REPS": [80]}, scheduler=cluster.address,
                   progress=interrupt)
    with distributed.Client(cluster.address, timeout=60) as client:
        tasks = lambda: client.run_on_scheduler(lambda dask_scheduler: list(dask_scheduler.tasks))  # noqa: E731
        deadline = time.monotonic() + 60
        while tasks() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert tasks() == []


def test_a_failing_task_is_retried_once_and_reported(slow_kernel):
    rows = nkic.sweep(f"{slow_kernel}::slow", {"SEED": [1, 99]}, workers=2)
    ok, failed = sorted(rows, key=lambda r: r["params"]["SEED"])
    assert (ok["status"], ok["match"], ok["attempts"]) == ("ok", True, 1)
    assert (failed["status"], failed["attempts"]) == ("failed", 2)
    assert failed["message"] == "CliError: reference() raised RuntimeError: no reference for this seed"


def test_python_api_with_a_kernel_object(tmp_path):
    from neuronxcc import nki
    import neuronxcc.nki.language as nl

    @nki.jit
    def scale(x, FACTOR=1.0):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        nl.store(out, value=nl.multiply(nl.load(x), FACTOR))
        return out

    x = np.arange(128 * 64, dtype=np.float32).reshape(128, 64)
    rows = nkic.sweep(scale, grid={"FACTOR": [0.5, 2.0, "x"]}, inputs=(x,), reference=lambda x, FACTOR: x * 2.0,
                      targets=["trn1", "trn2"], workers=2)
    assert [(r["params"]["FACTOR"], r["target"]) for r in rows] == [
        (0.5, "trn1"), (0.5, "trn2"), (2.0, "trn1"), (2.0, "trn2"), ("x", "trn1"), ("x", "trn2")]
    assert [r["status"] for r in rows] == ["mismatch", "mismatch", "ok", "ok", "diagnostic", "diagnostic"]
    assert rows[0]["match"] is False and rows[0]["max_abs_err"] > 0
    assert rows[4]["error_code"] and rows[4]["line"] is not None
    with pytest.raises(ValueError, match="scale has no parameter 'FACTORS'"):
        nkic.sweep(scale, grid={"FACTORS": [1.0]}, inputs=(x,))


def test_resume_skips_what_the_file_holds(tmp_path):
    first = tmp_path / "first.json"
    assert nkic_cli("sweep", MATMUL, "--param", "TILE_N=256,1024", "--param", "TILE_K=128",
                    "--json", str(first))[0] == 0
    old = json.loads(first.read_text())["rows"]
    both = tmp_path / "both.json"
    status, _, _ = nkic_cli("sweep", MATMUL, "--param", "TILE_N=256,512,1024", "--param", "TILE_K=128",
                            "--resume", str(first), "--json", str(both), "--workers", "1")
    assert status == 0
    rows = _by_config(json.loads(both.read_text())["rows"])
    assert len(rows) == 3
    for r in old:  # carried over as they were: the same worker and timings
        kept = rows[(r["params"]["TILE_N"], 128, "trn2")]
        assert {k: v for k, v in kept.items() if k != "rank"} == {k: v for k, v in r.items() if k != "rank"}
    assert rows[(512, 128, "trn2")]["status"] == "ok"
    assert rows[(512, 128, "trn2")]["worker"] not in {r["worker"] for r in old}


def test_csv_json_and_plot_files(tmp_path):
    files = {k: tmp_path / f"sweep.{k}" for k in ("json", "csv", "png")}
    status, _, _ = nkic_cli("sweep", MATMUL, *GRID, "--target", "trn1,trn2", "-q", "--json", str(files["json"]),
                            "--csv", str(files["csv"]), "--plot", str(files["png"]))
    assert status == 0
    doc = json.loads(files["json"].read_text())
    assert doc["schema"] == "nkic.sweep/1" and doc["targets"] == ["trn1", "trn2"]
    assert doc["grid"] == {"TILE_N": [256, 512, 1024], "TILE_K": [64, 128]} and len(doc["rows"]) == 12
    with open(files["csv"], newline="") as f:
        table = list(csv.DictReader(f))
    assert len(table) == 12
    assert {"TILE_N", "TILE_K", "target", "status", "error_code", "predicted_latency_us", "pe_percent",
            "mfu_percent", "worker"} <= set(table[0])
    by = {(t["TILE_N"], t["TILE_K"], t["target"]): t for t in table}
    assert by[("1024", "64", "trn1")]["error_code"] == TOO_WIDE
    assert float(by[("512", "128", "trn2")]["predicted_latency_us"]) > 0
    assert float(by[("512", "128", "trn2")]["mfu_percent"]) > 0 and by[("1024", "64", "trn1")]["mfu_percent"] == ""
    import matplotlib.image
    image = matplotlib.image.imread(str(files["png"]))
    assert image.ndim == 3 and image.shape[1] > image.shape[0] > 100   # one panel per parameter, side by side


@pytest.mark.parametrize("args, message", [
    (["--param", "TILE_N"], "cannot parse --param 'TILE_N'; expected NAME=V1,V2,..., e.g. TILE_N=256,512"),
    (["--param", "TILE_X=1,2"], "matmul_sweep has no parameter 'TILE_X' (its parameters: lhsT, rhs, TILE_N, TILE_K)"),
    (["--param", "TILE_N=256", "--param", "TILE_N=512"],
     "--param TILE_N is given twice; list all its values in one --param"),
    ([], "give the values to sweep with --param NAME=V1,V2,... (e.g. --param TILE_N=256,512)"),
    (["--param", "TILE_N=256", "--resume", MATMUL], "cannot resume from "),
])
def test_usage_errors_exit_3(args, message):
    status, out, err = nkic_cli("sweep", MATMUL, *args)
    assert status == 3 and out == ""
    assert err.startswith(f"nkic: error: {message}")


def test_parameter_values_parse_as_python_values():
    from nkic import _sweep
    assert _sweep.parse_param("A=1, 2.5,True,false,None,tile,1e3") == ("A", [1, 2.5, True, False, None, "tile", 1000.0])


def test_exit_status_without_a_matching_configuration():
    status, text, _ = nkic_cli("sweep", MATMUL, "--param", "TILE_N=1024", "--workers", "1")
    assert status == 2 and TOO_WIDE in text
