"""Run fuzz cases on a pool of fork servers (tests/fuzz/worker.py) and summarize them."""
import collections
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

WORKER = Path(__file__).resolve().parent / "worker.py"
FAILURES = {"signal", "bare_exception", "pybind_text", "cxx_text", "missing_location", "timeout", "memory",
            "exit"}


# Under scripts/test_asan.sh the interpreter runs with the ASan runtime preloaded. ASan
# reserves terabytes of shadow memory, so an address-space limit would break every
# allocation: ASan's own RSS limit replaces it, and cases get more time.
UNDER_ASAN = "libasan" in os.environ.get("LD_PRELOAD", "")


class _Server:
    """One fork server; restarted if it ever dies (it runs no case code itself)."""

    def __init__(self, mem_mb):
        self.workdir = tempfile.TemporaryDirectory(prefix="nkic-fuzz-")
        self.proc, self.mem_mb = None, mem_mb

    def _start(self):
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1", PYTHONDONTWRITEBYTECODE="1")
        if UNDER_ASAN and self.mem_mb:
            env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + f":hard_rss_limit_mb={self.mem_mb}"
        self.proc = subprocess.Popen([sys.executable, str(WORKER), self.workdir.name], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, env=env, text=True)

    def run(self, case, timeout, mem_mb):
        if self.proc is None or self.proc.poll() is not None:
            self._start()
        if UNDER_ASAN:
            timeout, mem_mb = timeout * 5, 0
        self.proc.stdin.write(json.dumps({"case": case, "timeout": timeout, "mem_mb": mem_mb}) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            status = self.proc.wait()
            self.proc = None
            return {"id": case["id"], "outcome": "exit", "detail": f"fork server died ({status})", "output": ""}
        return json.loads(line)

    def close(self):
        if self.proc is not None:
            self.proc.stdin.close()
            self.proc.wait()
        self.workdir.cleanup()


def run_cases(cases, jobs=2, timeout=20.0, mem_mb=4096, progress=None):
    """Results (dicts with outcome, detail, message, output and the case) in case order."""
    todo = queue.Queue()
    for case in cases:
        todo.put(case)
    results, lock = {}, threading.Lock()

    def drain():
        server = _Server(mem_mb)
        try:
            while True:
                try:
                    case = todo.get_nowait()
                except queue.Empty:
                    return
                result = server.run(case, timeout, mem_mb)
                result["case"] = case
                with lock:
                    results[case["id"]] = result
                    if progress:
                        progress(len(results), len(cases))
        finally:
            server.close()

    threads = [threading.Thread(target=drain) for _ in range(max(1, jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return [results[c["id"]] for c in cases]


def signature(result):
    """What identifies a failure pattern: its class and its detail (no line numbers)."""
    return f"{result['outcome']}: {result['detail']}"


def label(result):
    if result["outcome"] in ("diagnostic", "user_error"):
        return f"{result['outcome']}({result['detail']})"
    return result["outcome"]


def counts(results):
    """Outcome class -> count."""
    return collections.Counter(r["outcome"] for r in results)


def describe(result, source=False):
    case = result["case"]
    lines = [f"case {case['id']} (seed {case['seed']}) of {case['base']}"
             + (f" :: {case['test']}" if case.get("test") else ""),
             f"  outcome  {signature(result)}"]
    lines += [f"  mutation {m}" for m in case["mutations"]]
    if result.get("message"):
        lines.append(f"  message  {result['message'][:300]}")
    if result.get("output"):
        lines.append("  output   " + result["output"][-600:].replace("\n", "\n           "))
    if source:
        lines.append("  source:\n" + "\n".join("    " + l for l in case["source"].splitlines()))
    return "\n".join(lines)
