"""Tracer benchmark: cost of tracing a static_range-unrolled kernel.

1. Per-instruction cost: a kernel whose `nl.static_range(N)` body does
   load, load, add, multiply, store (5 instructions per iteration) is traced
   and timed, then the *same bytecode* is executed as plain Python with every
   nl.* call swapped for a trivial function that builds a small tuple (the
   "shadow"). Printed: trace time, us per emitted instruction, and the ratio
   trace time / plain-Python time.
2. Trace + simulate: the same kernel through nki.simulate_kernel, against a
   plain-Python loop making the same five calls per iteration to trivial
   functions (best of --repeat each, one run): the figure
   ../shared/bench/trace_speed.py reports.
3. Unroll scaling: static_range of 1k, 10k, 100k iterations with a
   one-instruction body; total time and the ratio per 10x step (~10 when
   trace cost is linear). Two bodies: a store that creates no new tensor, and
   a load that creates one new tensor per iteration. A step whose projected
   time exceeds --budget seconds is skipped (and reported) rather than run.
   A third body is a current-API (`import nki`) loop of 1k, 10k, 100k trips whose
   inner two-trip loop is traced on speculation and abandoned at a list's append,
   so every outer iteration rolls a speculation back; linear means a rollback costs
   what the discarded body traced, not the size of the kernel so far.

Timings are wall-clock (time.perf_counter), best of --repeat runs. Nothing is
asserted about time; ratios are measured in the same run.

Run: bench/run_all.sh, or
  PYTHONPATH=python:build/python /usr/bin/python3 bench/bench_tracer.py [--quick]
"""
import argparse
import gc
import sys
import time
import types

import numpy as np

from neuronxcc import nki
import neuronxcc.nki.language as nl
import nki as nki_current
import nki.isa as nisa_current
import nki.language as nl_current


# --------------------------------------------------------------------------
# Kernels. The loop count comes from the input shape so one function (and so
# one cached rewrite) serves every N.

@nki.jit
def body_kernel(a, b):
    n, f = a.shape
    out = nl.ndarray((n, f), dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.static_range(n):
        x = nl.load(a[i:i + 1, 0:f])
        y = nl.load(b[i:i + 1, 0:f])
        z = nl.add(x, y)
        w = nl.multiply(z, x)
        nl.store(out[i:i + 1, 0:f], value=w)
    return out


@nki.jit
def store_kernel(a):
    n, f = a.shape
    out = nl.ndarray((n, 1), dtype=a.dtype, buffer=nl.shared_hbm)
    tile = nl.load(a[0:1, 0:1])
    for i in nl.static_range(n):
        nl.store(out[i:i + 1, 0:1], value=tile[0:1, 0:1])
    return out


@nki.jit
def load_kernel(a):
    n, f = a.shape
    out = nl.ndarray((1, 1), dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a[0:1, 0:1])
    for i in nl.static_range(n):
        t = nl.load(a[i:i + 1, 0:1])
    nl.store(out[0:1, 0:1], value=t)
    return out


@nki_current.jit
def abandoned_kernel(a):
    n, f = a.shape
    out = nl_current.ndarray((n, 1), dtype=a.dtype, buffer=nl_current.shared_hbm)
    tiles = []
    for i in range(n):
        for j in range(2):
            t = nl_current.ndarray((1, 1), dtype=a.dtype, buffer=nl_current.sbuf)
            nisa_current.dma_copy(dst=t, src=a[i:i + 1, 0:1])
            tiles.append(t)
    nisa_current.dma_copy(dst=out[0:1, 0:1], src=tiles[-1])
    return out


# --------------------------------------------------------------------------
# The plain-Python shadow: same code object, `nl` swapped for trivial stand-ins.

class _ShadowTensor:
    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype):
        self.shape = tuple(shape)
        self.dtype = dtype

    def __getitem__(self, key):
        return ("view", self, key)


def _shadow_nl():
    ns = types.SimpleNamespace()
    ns.shared_hbm = "shared_hbm"
    ns.sbuf = "sbuf"
    ns.static_range = range
    ns.ndarray = lambda shape, dtype, buffer=None, name="": _ShadowTensor(shape, dtype)
    ns.load = lambda src, mask=None, dtype=None: ("load", src, mask, dtype)
    ns.add = lambda x, y, dtype=None, mask=None: ("add", x, y, dtype, mask)
    ns.multiply = lambda x, y, dtype=None, mask=None: ("multiply", x, y, dtype, mask)
    ns.store = lambda dst, value, mask=None: ("store", dst, value, mask)
    return ns


def shadow_of(kernel):
    """kernel's original (un-rewritten) function running against the shadow nl."""
    func = kernel.func
    g = dict(func.__globals__)
    g["nl"] = _shadow_nl()
    return types.FunctionType(func.__code__, g, func.__name__, func.__defaults__, func.__closure__)


# --------------------------------------------------------------------------

def best_of(fn, repeat):
    best, result = float("inf"), None
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t0)
    return best, result


def trace(kernel, *arrays):
    return kernel.trace(None, arrays, {})


def bench_body(n, f, repeat):
    a = np.ones((n, f), np.float32)
    b = np.ones((n, f), np.float32)
    trace(body_kernel, a[:4], b[:4])  # warm up: AST rewrite + compile are cached per code object
    t_trace, traced = best_of(lambda: trace(body_kernel, a, b), repeat)
    ninst = traced.ir.num_instructions()

    shadow = shadow_of(body_kernel)
    sa, sb = _ShadowTensor(a.shape, a.dtype), _ShadowTensor(b.shape, b.dtype)
    shadow(sa, sb)
    # The shadow is ~1000x cheaper: run it several times per sample for a stable number.
    inner = max(1, int(20000 // n))
    t_plain, _ = best_of(lambda: [shadow(sa, sb) for _ in range(inner)], repeat)
    t_plain /= inner

    print(f"tracer: {n} iterations, {ninst} instructions, {t_trace * 1e3:.1f} ms, "
          f"{t_trace / ninst * 1e6:.1f} us/instruction, {t_trace / t_plain:.1f}x plain Python")
    print(f"  plain Python shadow of the same body: {t_plain * 1e3:.3f} ms "
          f"({t_plain / ninst * 1e6:.3f} us per shadow op)")


def _calls_shadow(a, b, ops):
    """The body as plain Python calls: what the kernel's loop costs without nkic."""
    out = []
    for i in range(a.shape[0]):
        x = ops[0]((a, i))
        y = ops[0]((b, i))
        z = ops[1](x, y)
        w = ops[2](z, z)
        out.append(ops[3](w))
    return out


def bench_simulate(n, f, repeat):
    a = np.ones((n, f), np.float32)
    b = np.ones((n, f), np.float32)
    nki.simulate_kernel(body_kernel, a, b)  # warm up
    t_kernel, _ = best_of(lambda: nki.simulate_kernel(body_kernel, a, b), repeat)
    ops = (lambda v: ("load", v), lambda x, y: ("add", x, y), lambda x, y: ("mul", x, y), lambda w: ("store", w))
    t_plain, _ = best_of(lambda: _calls_shadow(a, b, ops), repeat)
    print(f"trace+simulate: {n} iterations, {5 * n} instructions, {t_kernel * 1e3:.1f} ms "
          f"({t_kernel / (5 * n) * 1e6:.2f} us each), {t_kernel / t_plain:.1f}x the plain-Python calls "
          f"({t_plain * 1e3:.2f} ms)")


def bench_scaling(label, kernel, sizes, repeat, budget):
    print(f"unroll scaling [{label}]:")
    kernel_warm = np.ones((4, 1), np.float32)
    trace(kernel, kernel_warm)
    prev = None        # (n, seconds)
    step_ratio = 10.0  # assume linear until measured
    for n in sizes:
        if prev is not None:
            projected = prev[1] * step_ratio ** (np.log10(n / prev[0]))
            if projected > budget:
                print(f"  {n:>7} iterations: skipped, projected {projected:.0f} s "
                      f"(> --budget {budget:.0f} s) from the previous step ratio {step_ratio:.1f}")
                continue
        a = np.ones((n, 1), np.float32)
        reps = repeat if (prev is None or prev[1] * step_ratio < 2.0) else 1
        t, traced = best_of(lambda: trace(kernel, a), reps)
        ninst = traced.ir.num_instructions()
        line = (f"  {n:>7} iterations, {ninst:>7} instructions, {t * 1e3:9.1f} ms, "
                f"{t / ninst * 1e6:6.1f} us/instruction")
        if prev is not None:
            step_ratio = (t / prev[1]) ** (1.0 / np.log10(n / prev[0]))
            line += f", x{step_ratio:.1f} per 10x (linear ~10)"
        print(line, flush=True)
        del traced
        prev = (n, t)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--n", type=int, default=1000, help="static_range iterations for the body benchmark")
    p.add_argument("--width", type=int, default=8, help="free size of each tile in the body benchmark")
    p.add_argument("--quick", action="store_true", help="scaling at 1k/10k only")
    p.add_argument("--repeat", type=int, default=3, help="best of this many runs")
    p.add_argument("--budget", type=float, default=20.0,
                   help="skip a scaling step projected to take longer than this (seconds)")
    args = p.parse_args(argv)

    bench_body(args.n, args.width, args.repeat)
    bench_simulate(args.n, args.width, args.repeat)
    sizes = [1000, 10000] if args.quick else [1000, 10000, 100000]
    bench_scaling("store, no new tensor per iteration", store_kernel, sizes, args.repeat, args.budget)
    bench_scaling("load, one new tensor per iteration", load_kernel, sizes, args.repeat, args.budget)
    bench_scaling("current API, an abandoned speculation per iteration", abandoned_kernel, sizes, args.repeat,
                  args.budget)


if __name__ == "__main__":
    sys.exit(main())
