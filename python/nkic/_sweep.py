"""Sweeps: one kernel over the cartesian product of its keyword arguments and targets. Each
configuration is one task (traced, costed, simulated and compared in a worker process: a
local process pool, or a dask.distributed cluster, _sweep_dask.py), and one row of results.
Legality and latency come from the tracer and the cost model; nothing here knows a limit."""
import concurrent.futures as cf
import inspect
import itertools
import json
import multiprocessing
import os
import signal
import sys
import time
import warnings

from ._core import core
from . import _compare, _kernel, _kernel_file, _profile, _targets, _user_exceptions


class SweepUsageError(_kernel_file.CliError, ValueError):
    """A sweep that cannot start: a parameter the kernel does not take, no values, bad syntax."""


# What a row carries; a field a configuration never reached stays None.
ROW_FIELDS = ("params", "target", "status", "error_code", "message", "file", "line", "max_abs_err", "match",
              "predicted_latency_us", "engines", "mfu_percent", "instructions", "trace_s", "simulate_s", "worker",
              "attempts", "rank")
ATTEMPTS = 2  # a task that fails or loses its worker runs once more, then its row says "failed"


def parse_value(text):
    """'512' -> 512, '0.5' -> 0.5, 'True' -> True, 'None' -> None, anything else the string."""
    words = {"true": True, "false": False, "none": None}
    if text.strip().lower() in words:
        return words[text.strip().lower()]
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def parse_param(spec):
    """'TILE_N=256,512' -> ('TILE_N', [256, 512])."""
    name, eq, values = spec.partition("=")
    name = name.strip()
    if not eq or not name.isidentifier() or not values.strip():
        raise SweepUsageError(f"cannot parse --param {spec!r}; expected NAME=V1,V2,..., e.g. TILE_N=256,512")
    return name, [parse_value(v.strip()) for v in values.split(",")]


class FileSource:
    """A kernel file (FILE::KERNEL) with its make_inputs(), reference(), TOLERANCE and GRID; what a
    task names, so that a worker on another machine reads the same path itself."""

    def __init__(self, path, kernel_name=None):
        self.path, self.kernel_name = os.path.abspath(path), kernel_name

    def key(self):
        return ("file", self.path, self.kernel_name, os.path.getmtime(self.path))

    def load(self):
        mod = _kernel_file.load_module(self.path)
        kernel = _kernel_file.find_kernel(mod, self.kernel_name, self.path)
        make = getattr(mod, "make_inputs", None)
        if make is None:
            raise _kernel_file.CliError(f"{self.path} defines no make_inputs(): a sweep needs the kernel's arguments")
        inputs = tuple(_kernel_file.user_call("make_inputs()", make))
        return _Loaded(kernel, inputs, getattr(mod, "reference", None), getattr(mod, "TOLERANCE", None),
                       getattr(mod, "GRID", None))


class ObjectSource:
    """A kernel, its inputs and reference given from Python, pickled by value (cloudpickle) so
    that a kernel defined in a script or a notebook reaches the workers too."""

    def __init__(self, kernel, inputs, reference, tolerance, grid):
        try:
            import cloudpickle
        except ImportError:
            raise SweepUsageError("a sweep of a kernel object needs cloudpickle (Debian: python3-cloudpickle, "
                                  "which python3-distributed installs)") from None
        self.payload = cloudpickle.dumps((kernel, tuple(inputs), reference, tolerance, grid))

    def key(self):
        return ("object", hash(self.payload))

    def load(self):
        import pickle
        return _Loaded(*pickle.loads(self.payload))


class _Loaded:
    def __init__(self, kernel, inputs, reference, tolerance, grid):
        self.kernel, self.inputs, self.reference, self.tolerance, self.grid = kernel, inputs, reference, tolerance, grid


_cache = {}  # per worker process: a source is loaded (its file run, make_inputs() called) once


def _load(source):
    key = source.key()
    if key not in _cache:
        _cache[key] = source.load()
    return _cache[key]


def _worker_address():
    if "distributed" in sys.modules:  # imported in a dask worker, not in the local pool
        from distributed import get_worker
        try:
            return get_worker().address
        except ValueError:
            pass
    return f"local:{os.getpid()}"


def new_row(params, target):
    return {**dict.fromkeys(ROW_FIELDS), "params": dict(params), "target": target}


def run_task(task):
    """One configuration, in the worker: trace, cost, simulate, compare. A diagnostic or a
    mismatch is the row's verdict; any other exception fails the task (and it is retried)."""
    source, params, target, checks = task
    loaded = _load(source)
    row = new_row(params, target)
    row["worker"] = _worker_address()
    kernel = loaded.kernel if isinstance(loaded.kernel, _kernel.TraceKernel) else _kernel.TraceKernel(loaded.kernel)
    kernel = kernel.retarget(target)  # a current-API kernel stays one
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a tracer warning is the same in every configuration
            traced = kernel.trace(loaded.grid, loaded.inputs, params)
        row["trace_s"] = time.perf_counter() - t0
        row["instructions"] = traced.ir.num_instructions()
        predicted = _profile.predict_traced(traced, target)
        row["predicted_latency_us"] = predicted.latency_us
        row["engines"] = {name: e.percent for name, e in predicted.engines.items()}
        row["mfu_percent"] = 100.0 * predicted.mfu
        t1 = time.perf_counter()
        bound = inspect.signature(kernel.func).bind(*loaded.inputs, **params).arguments
        outputs = _kernel.simulate_traced(traced, traced.arrays(bound), checks, checks)
        row["simulate_s"] = time.perf_counter() - t1
    except Exception as e:  # a diagnostic, or an exception of the kernel's own code at its line
        d = e if isinstance(e, core.NKIError) else _user_exceptions.diagnostic(e, kernel)
        row.update(status="diagnostic", error_code=d.code, message=d.message, file=d.file, line=d.line)
        return row
    if loaded.reference is None:
        row.update(status="ok", message="no reference(): nothing to compare")
        return row
    expected = _kernel_file.user_call("reference()", loaded.reference, *loaded.inputs,
                                      **_accepted(loaded.reference, params))
    try:
        comparisons = _compare.compare_outputs(outputs, expected, loaded.tolerance)
    except _compare.OutputsMismatch as e:
        row.update(status="mismatch", match=False, message=str(e))
        return row
    row["max_abs_err"] = _compare._finite(max(c.max_abs_error for c in comparisons))
    row["match"] = all(c.ok for c in comparisons)
    row["status"] = "ok" if row["match"] else "mismatch"
    if not row["match"]:
        row["message"] = "; ".join(f"output {i}: {c.summary()}" for i, c in enumerate(comparisons) if not c.ok)
    return row


def _accepted(fn, params):
    """The parameters reference() takes (all of them with **kwargs, none when it takes only the inputs)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return params
    if any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values()):
        return params
    return {k: v for k, v in params.items() if k in sig.parameters}


def configurations(grid, targets):
    """[(params, target)]: the cartesian product of the grid, each on every target."""
    names = list(grid)
    return [(dict(zip(names, values)), t) for values in itertools.product(*(grid[n] for n in names)) for t in targets]


def config_key(params, target):
    return json.dumps([params, target], sort_keys=True)


def check_grid(kernel, grid):
    """Every swept name is a parameter of the kernel, and has values."""
    sig = inspect.signature(kernel.func)
    takes_any = any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values())
    for name, values in grid.items():
        if not takes_any and name not in sig.parameters:
            raise SweepUsageError(f"{kernel.__name__} has no parameter {name!r} (its parameters: "
                                  f"{', '.join(sig.parameters)})")
        if not isinstance(values, (list, tuple)) or not values:
            raise SweepUsageError(f"parameter {name!r}: give a non-empty list of values, got {values!r}")


class LocalPool:
    """A process pool on this machine (spawned workers: no state shared with the caller); a pool
    broken by a dying worker is replaced, and the tasks it lost fail (and are retried)."""

    def __init__(self, workers=None):
        self.workers = workers or len(os.sched_getaffinity(0))
        self.pool = self._new()

    def _new(self):
        return cf.ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("spawn"))

    def submit(self, task):
        try:
            return self.pool.submit(run_task, task)
        except cf.process.BrokenProcessPool:
            self.pool.shutdown(wait=False)
            self.pool = self._new()
            return self.pool.submit(run_task, task)

    @staticmethod
    def wait_first(futures):
        return cf.wait(futures, return_when=cf.FIRST_COMPLETED).done

    def cancel(self, futures):
        # Ctrl-C: the running configurations are stopped too, not waited for.
        processes = list(getattr(self.pool, "_processes", None) or {})
        self.pool.shutdown(wait=False, cancel_futures=True)
        for pid in processes:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass

    def close(self):
        self.pool.shutdown(wait=True)


def _failed_row(task, error):
    _, params, target, _ = task
    row = new_row(params, target)
    row.update(status="failed", message=f"{type(error).__name__}: {error}", attempts=ATTEMPTS)
    return row


def drive(executor, tasks, on_row):
    """Runs every task on `executor` (submit, wait_first, cancel) and returns one row per task,
    in order; `on_row(row)` is called as each row arrives. Ctrl-C cancels what is still queued."""
    rows = [None] * len(tasks)
    live = {executor.submit(t): (i, 1) for i, t in enumerate(tasks)}
    try:
        while live:
            for future in executor.wait_first(list(live)):
                i, attempt = live.pop(future)
                try:
                    row = future.result()
                except Exception as e:  # the task raised, or its worker died
                    if attempt < ATTEMPTS:
                        live[executor.submit(tasks[i])] = (i, attempt + 1)
                        continue
                    row = _failed_row(tasks[i], e)
                row["attempts"] = attempt
                rows[i] = row
                on_row(row)
    except KeyboardInterrupt:
        executor.cancel(list(live))
        raise
    return rows


def rank(rows):
    """Numbers the matching configurations by predicted latency (1 = fastest) and returns the rows
    best first: ranked ones, then mismatches, diagnostics and failures, each in sweep order."""
    order = {"ok": 0, "mismatch": 1, "diagnostic": 2, "failed": 3}
    for r in rows:
        r["rank"] = None
    ok = sorted((r for r in rows if r["status"] == "ok" and r["predicted_latency_us"] is not None),
                key=lambda r: r["predicted_latency_us"])
    for n, r in enumerate(ok, 1):
        r["rank"] = n
    return sorted(rows, key=lambda r: (order[r["status"]], r["rank"] or 0))


def _executor(scheduler, workers):
    if scheduler is None:
        return LocalPool(workers)
    from . import _sweep_dask
    return _sweep_dask.DaskExecutor(scheduler, workers)


def run(source, kernel, grid, targets, scheduler=None, workers=None, checks=True, resume=(), progress=None):
    """The rows of a sweep, in configuration order (each with its rank). `resume`: rows of an
    earlier sweep; their configurations are not run again unless they failed."""
    check_grid(kernel, grid)
    done = {config_key(r["params"], r["target"]): r for r in resume if r.get("status") != "failed"}
    configs = configurations(grid, targets)
    rows = [done.get(config_key(p, t)) for p, t in configs]
    todo = [i for i, r in enumerate(rows) if r is None]
    finished = [r for r in rows if r is not None]

    def on_row(row):
        finished.append(row)
        if progress is not None:
            progress(row, len(finished), len(configs))

    if todo:
        executor = _executor(scheduler, workers)
        try:
            new = drive(executor, [(source, configs[i][0], configs[i][1], checks) for i in todo], on_row)
        finally:
            executor.close()
        for i, row in zip(todo, new):
            rows[i] = row
    rank(rows)
    return rows


def sweep(kernel, grid, inputs=None, reference=None, targets=None, scheduler=None, tolerance=None, workers=None,
          checks=True, resume=(), progress=None):
    """Runs `kernel` (a kernel, kernel[grid], or "FILE::KERNEL" whose file gives make_inputs(),
    reference(), TOLERANCE and GRID) for every combination of the keyword values in `grid` on
    every one of `targets` (default: the kernel's target; ["all"]: those its API supports);
    returns one row (a dict, ROW_FIELDS) per configuration and target.
    `scheduler`: None (a local process pool of `workers` processes), "auto" (a dask
    LocalCluster) or a dask scheduler's address, "tcp://HOST:PORT". `progress(row, done, total)`
    is called as each row arrives."""
    if isinstance(kernel, str):
        path, _, name = kernel.partition("::")
        if inputs is not None or reference is not None:
            raise SweepUsageError("a FILE::KERNEL sweep takes its inputs and reference from the file")
        source = FileSource(path, name or None)
        k = _kernel_file.find_kernel(_kernel_file.load_module(source.path), source.kernel_name, path)
    else:
        launch = None
        if isinstance(kernel, _kernel.Launch):
            kernel, launch = kernel.kernel, kernel.grid
        k = kernel if isinstance(kernel, _kernel.TraceKernel) else _kernel.TraceKernel(kernel, mode="simulation")
        if inputs is None:
            raise SweepUsageError("give the kernel's arguments as inputs=(array, ...)")
        source = ObjectSource(k, inputs, reference, tolerance, launch)
    targets = _targets.covered(k, "all") if list(targets or ()) == ["all"] else list(targets or [k.target])
    return run(source, k, dict(grid), targets, scheduler, workers, checks, resume, progress)
