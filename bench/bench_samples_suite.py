"""nki-samples' unit suite in simulation mode: the wall time, split into nkic and the tests.

Runs `pytest --simulation-only` over CHECKOUT/test/unit in this process with nkic on the
path and measures, per test, the time inside nkic's tracer (`TraceKernel.trace`) and
simulator (`simulate_traced`); the rest of a test's time is its own: building inputs and
its numpy reference. Prints the total, the split and the slowest cases. The numpy side
runs on OpenBLAS with the CPU's kernels (bench/_blas.py), as a pip user's numpy would.
Nothing is asserted about time; the exit status is pytest's.

Run: PYTHONPATH=python:build/python /usr/bin/python3 bench/bench_samples_suite.py \\
       [CHECKOUT (default /tmp/corpus/nki-samples)] [--top N] [-k EXPR]
"""
import argparse
import collections
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _blas  # noqa: E402

_blas.use_cpu_kernels()  # before numpy loads OpenBLAS

import pytest  # noqa: E402

from nkic import _kernel  # noqa: E402


class _Timer:
    """A pytest plugin that charges time spent in nkic's tracer and simulator to the test
    running it."""

    def __init__(self):
        self.nkic = collections.defaultdict(lambda: {"trace": 0.0, "simulate": 0.0})
        self.total = {}
        self.outcome = {}
        self._test = None

    def wrap(self, owner, attr, part):
        inner = getattr(owner, attr)

        def timed(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                if self._test is not None:
                    self.nkic[self._test][part] += time.perf_counter() - t0

        setattr(owner, attr, timed)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        self._test = item.nodeid
        t0 = time.perf_counter()
        yield
        self.total[item.nodeid] = time.perf_counter() - t0
        self._test = None

    def pytest_runtest_logreport(self, report):
        if report.when == "call" or report.outcome != "passed":
            self.outcome.setdefault(report.nodeid, report.outcome)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("checkout", nargs="?", default="/tmp/corpus/nki-samples")
    p.add_argument("--top", type=int, default=5, help="list this many slowest cases")
    p.add_argument("-k", default=None, help="pytest -k expression")
    args = p.parse_args(argv)
    unit = os.path.join(args.checkout, "test", "unit")
    if not os.path.isdir(unit):
        sys.exit(f"no nki-samples unit tests at {unit}")
    sys.path.insert(0, os.path.join(args.checkout, "src"))
    print(_blas.describe())

    timer = _Timer()
    timer.wrap(_kernel.TraceKernel, "trace", "trace")
    timer.wrap(_kernel, "simulate_traced", "simulate")
    pytest_args = ["-q", "-p", "no:cacheprovider", "--simulation-only", unit] + (["-k", args.k] if args.k else [])
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory() as scratch:  # the tests write files where they run
        os.chdir(scratch)
        t0 = time.perf_counter()
        status = pytest.main(pytest_args, plugins=[timer])
        wall = time.perf_counter() - t0
        os.chdir(cwd)

    trace = sum(t["trace"] for t in timer.nkic.values())
    sim = sum(t["simulate"] for t in timer.nkic.values())
    counts = collections.Counter(timer.outcome.values())
    print(f"\nsuite: {len(timer.total)} cases ({', '.join(f'{n} {o}' for o, n in sorted(counts.items()))}) "
          f"in {wall:.1f} s: nkic trace {trace:.1f} s, nkic simulate {sim:.1f} s, "
          f"the tests' own work {wall - trace - sim:.1f} s")
    print(f"slowest {args.top}:")
    for nodeid, total in sorted(timer.total.items(), key=lambda kv: -kv[1])[:args.top]:
        t = timer.nkic[nodeid]
        print(f"  {total:6.1f} s  trace {t['trace']:5.2f}  simulate {t['simulate']:5.2f}  "
              f"test {total - t['trace'] - t['simulate']:6.1f}  {nodeid.split('::', 1)[-1]}")
    return int(status)


if __name__ == "__main__":
    sys.exit(main())
