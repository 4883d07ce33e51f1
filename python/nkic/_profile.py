"""Predicted performance: nkic.profile(kernel[grid], *arrays, target=...) and the
results nki.benchmark / nki.profile fill in. The numbers come from the C++ cost
model (src/perf); this module only names them."""
import json
import os

from ._cli_output import profile_json
from ._core import core
from . import _kernel

class EngineTime:
    """One engine's predicted work: busy time (µs), share of the kernel's time and instruction count.
    For `dma`, busy is summed over the DMA queues and percent is of all queues together; on a
    kernel[n] launch, busy is summed over the physical cores and percent is of all of them."""

    def __init__(self, name, busy_us, percent, instructions):
        self.name, self.busy_us, self.percent, self.instructions = name, busy_us, percent, instructions

    def __repr__(self):
        return f"EngineTime({self.name}: {self.busy_us:.3f} us, {self.percent:.1f} %, {self.instructions} instructions)"


class ProfileResult:
    """The cost model's prediction for one kernel on one target (times in µs)."""

    def __init__(self, prof):
        self._p = prof
        self.kernel, self.target = prof.kernel, prof.target
        self.latency_us = prof.latency_ns / 1e3
        self.engines = {}
        for name, busy, count in prof.engines:
            width = (prof.dma_queues if name == "dma" else 1) * prof.cores
            percent = 100.0 * busy / (prof.latency_ns * width) if prof.latency_ns > 0 else 0.0
            self.engines[name] = EngineTime(name, busy / 1e3, percent, count)
        self.mfu, self.hfu = prof.mfu, prof.hfu
        self.dma_bytes, self.dma_utilisation = prof.dma_bytes, prof.dma_utilisation
        self.sbuf_peak_bytes, self.psum_peak_bytes = prof.sbuf_peak_bytes, prof.psum_peak_bytes
        self.sbuf_capacity_bytes, self.psum_capacity_bytes = prof.sbuf_capacity_bytes, prof.psum_capacity_bytes
        self.instructions = prof.instructions  # executions costed
        self.instructions_scheduled = prof.instructions_scheduled  # of them, scheduled one by one
        self.notes = list(prof.notes)
        # What decided the latency: the critical path by engine, DMA and waiting, and the figures
        # behind its largest part.
        self.decided_by = prof.decided_by
        # What the prediction assumed of the compiler (the kernel's nki.compiler.CompileConfig).
        self.allocation, self.scheduling = prof.allocation, prof.scheduling

    @property
    def lines(self):
        """[(file, line, busy µs, critical-path µs, instructions)], the busiest first."""
        return [(loc[0] if loc else None, loc[1] if loc else None, busy / 1e3, crit / 1e3, n)
                for loc, busy, crit, n in self._p.lines]

    @property
    def critical_path(self):
        """[(api, isa instruction, engine track, start µs, end µs, repeat, (file, line, col))], latest first."""
        return [(api, isa, track, s / 1e3, e / 1e3, rep, loc) for api, isa, track, s, e, rep, loc in self._p.critical_path]

    @property
    def occupancy(self):
        """[(time µs, SBUF bytes per partition, PSUM bytes per partition)]."""
        return [(t / 1e3, s, p) for t, s, p in self._p.occupancy]

    def trace_json(self):
        """The engine timeline in the Chrome / Perfetto trace-event format."""
        return self._p.trace_json()

    def html(self):
        """One self-contained HTML page: timeline, occupancy, time per source line."""
        return self._p.html()

    def summary(self, top=5):
        """The terminal summary: latency, per-engine busy %, MFU, the busiest source lines."""
        rows = [f"{self.kernel} on {self.target}: {self.latency_us:.3f} us predicted"]
        rows.append("  " + "  ".join(f"{n} {e.percent:5.1f} %" for n, e in self.engines.items()))
        rows.append(f"  MFU {100 * self.mfu:.1f} %  HFU {100 * self.hfu:.1f} %  DMA {self.dma_bytes} bytes "
                    f"({100 * self.dma_utilisation:.1f} % of peak)  SBUF peak {self.sbuf_peak_bytes} B/partition  "
                    f"PSUM peak {self.psum_peak_bytes} B/partition")
        rows.append(f"  allocation {self.allocation}, scheduling {self.scheduling}")
        if self.decided_by:
            rows.append(f"  decided by: {self.decided_by}")
        if self.lines:
            rows.append("  busiest lines:")
            for f, line, busy, crit, n in self.lines[:top]:
                where = f"{os.path.basename(f)}:{line}" if f else "?"
                rows.append(f"    {where:28s} {busy:12.3f} us busy {crit:12.3f} us critical  {n} instructions")
        rows.extend(f"  note: {n}" for n in self.notes)
        return "\n".join(rows)

    def __repr__(self):
        return f"<ProfileResult {self.kernel} on {self.target}: {self.latency_us:.3f} us>"


def predict_traced(traced, target):
    """The cost model's ProfileResult for an already traced kernel."""
    return ProfileResult(core.profile(traced.ir, target))


def profile(kernel, *args, target=None, **kwargs):
    """Trace `kernel` (or `kernel[grid]`) on `args` and predict its latency on `target`
    (default: the kernel's platform_target, else the default target, docs/cli.md#targets).
    Nothing is simulated."""
    grid = None
    if isinstance(kernel, _kernel.Launch):
        kernel, grid = kernel.kernel, kernel.grid
    if not isinstance(kernel, _kernel.TraceKernel):
        kernel = _kernel.TraceKernel(kernel, mode="simulation")
    if target is not None:
        kernel = kernel.retarget(target)
    try:
        return predict_traced(kernel.trace(grid, args, kwargs), kernel.target)
    except core.NKIError as e:
        raise e.with_traceback(_kernel._user_traceback(e.__traceback__)) from None


class NcLatency:
    """benchmark_result.nc_latency: the predicted latency; the model is deterministic, so every
    percentile is the same number (µs)."""

    def __init__(self, latency_us):
        self._us = latency_us

    def get_latency_percentile(self, percentile):
        if isinstance(percentile, bool) or not isinstance(percentile, (int, float)) or not 0 <= percentile <= 100:
            core.raise_unsupported_args("get_latency_percentile",
                                        f"expects a percentile between 0 and 100, got {percentile!r}")
        return self._us


class BenchmarkResult:
    """kernel.benchmark_result after a call of an nki.benchmark / nki.profile kernel."""

    def __init__(self, result):
        self.nc_latency = NcLatency(result.latency_us)
        self.profile = result


def measure(kernel, traced):
    """nki.benchmark / nki.profile after a call: the BenchmarkResult of the prediction (the
    model is deterministic, so warmup and iters change nothing). nki.benchmark writes the
    engine timeline (Perfetto JSON) to save_trace_name and the profile (`nkic profile --json`'s
    object; not a NEFF: there is no compiler here) to save_neff_name; nki.profile writes the
    timeline as <working_directory>/<save_trace_name's stem>.json."""
    result = predict_traced(traced, kernel.target)
    files = []  # (option, path, text)
    if kernel.mode == "benchmark":
        summary = lambda: json.dumps(profile_json(result, kernel.__name__), indent=1)  # noqa: E731
        files = [("save_trace_name", kernel.options.get("save_trace_name"), result.trace_json),
                 ("save_neff_name", kernel.options.get("save_neff_name"), summary)]
    elif kernel.options.get("working_directory"):
        directory = kernel.options["working_directory"]
        stem = os.path.splitext(os.path.basename(kernel.options.get("save_trace_name") or kernel.__name__))[0]
        files = [("working_directory", os.path.join(directory, stem + ".json"), result.trace_json)]
    api = "nki.benchmark" if kernel.mode == "benchmark" else "nki.profile"
    for option, path, text in files:
        if not path:
            continue
        try:
            if option == "working_directory":
                os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text())
        except OSError as e:
            core.raise_unsupported_args(api, f"{option}: cannot write {str(path)!r} ({e.strerror})")
    return BenchmarkResult(result)
