"""Simulator benchmark: simulated kernel time as a ratio to numpy doing the same math.

Cases (all fp32):
  * tensor_add: the SPMD kernel of examples/tensor_add.py (one 128x512 tile per
    program) on 2048x8192 inputs with a grid of (16, 16)  -- 256 programs.
  * masked_add: the kernel of examples/masked_add.py (affine_range over row
    tiles, ragged last tile masked) at n=10000, m=2048    -- 79 row tiles.
  * tiny_ops: a static_range(1000) kernel of 1x8 tiles (load, load, add,
    multiply, store), to show the fixed per-instruction overhead of the
    simulator when the tiles are tiny; compared with the same numpy ops on 1x8
    slices.

For each: trace once (time printed), then simulate (nkic._kernel.simulate_traced)
and run the numpy reference, each best of --repeat with time.perf_counter; the
ratio sim/numpy is printed and the simulated result is checked against numpy.
Nothing is asserted about time.

Run: bench/run_all.sh, or
  PYTHONPATH=python:build/python /usr/bin/python3 bench/bench_sim.py
"""
import argparse
import gc
import importlib.util
import os
import sys
import time

import numpy as np

from neuronxcc import nki
import neuronxcc.nki.language as nl
from nkic._kernel import simulate_traced

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _example(name):
    """Import examples/<name>.py as a module (the kernels are used verbatim)."""
    path = os.path.join(ROOT, "examples", name + ".py")
    spec = importlib.util.spec_from_file_location("nkic_example_" + name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@nki.jit
def tiny_ops_kernel(a, b):
    n, f = a.shape
    out = nl.ndarray((n, f), dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.static_range(n):
        x = nl.load(a[i:i + 1, 0:f])
        y = nl.load(b[i:i + 1, 0:f])
        z = nl.add(x, y)
        w = nl.multiply(z, x)
        nl.store(out[i:i + 1, 0:f], value=w)
    return out


def tiny_ops_numpy(a, b):
    out = np.empty_like(a)
    for i in range(a.shape[0]):
        x = a[i:i + 1]
        z = x + b[i:i + 1]
        out[i:i + 1] = z * x
    return out


def best_of(fn, repeat):
    best, result = float("inf"), None
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t0)
    return best, result


def run_case(label, kernel, grid, arrays, reference, repeat, per_instruction=False):
    t_trace, traced = best_of(lambda: kernel.trace(grid, tuple(arrays), {}), 1)
    ninst = traced.ir.num_instructions()
    t_sim, out = best_of(lambda: simulate_traced(traced, list(arrays)), repeat)
    t_np, ref = best_of(lambda: reference(*arrays), repeat)
    ok = out.shape == ref.shape and out.dtype == ref.dtype and np.array_equal(out, ref)
    shape = "x".join(str(d) for d in arrays[0].shape)
    grid_s = f", grid {grid}" if grid is not None else ""
    mb = sum(a.nbytes for a in arrays) / 2**20 + ref.nbytes / 2**20
    print(f"sim {label}: {shape} {arrays[0].dtype}{grid_s}, {ninst} instructions, "
          f"trace {t_trace * 1e3:.1f} ms, sim {t_sim * 1e3:.1f} ms, numpy {t_np * 1e3:.1f} ms, "
          f"{t_sim / t_np:.2f}x numpy, {'correct' if ok else 'MISMATCH'}")
    extra = f"; {t_sim / ninst * 1e6:.2f} us per simulated instruction" if per_instruction else ""
    print(f"  sim {mb / t_sim / 1024:.2f} GiB/s vs numpy {mb / t_np / 1024:.2f} GiB/s "
          f"(inputs+output moved once){extra}")
    return ok


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--repeat", type=int, default=3, help="best of this many runs")
    p.add_argument("--quick", action="store_true", help="smaller sizes (1024x4096, n=2500)")
    args = p.parse_args(argv)
    rng = np.random.default_rng(0)
    ok = True

    tensor_add = _example("tensor_add").nki_tensor_add_kernel
    rows, cols = (1024, 4096) if args.quick else (2048, 8192)
    a = rng.standard_normal((rows, cols), dtype=np.float32)
    b = rng.standard_normal((rows, cols), dtype=np.float32)
    ok &= run_case("tensor_add", tensor_add, (rows // 128, cols // 512), (a, b), np.add, args.repeat)
    del a, b

    masked_add = _example("masked_add").masked_add_kernel
    n, m = (2500, 2048) if args.quick else (10000, 2048)
    a = rng.standard_normal((n, m), dtype=np.float32)
    b = rng.standard_normal((n, m), dtype=np.float32)
    ok &= run_case("masked_add", masked_add, None, (a, b), np.add, args.repeat)
    del a, b

    a = rng.standard_normal((1000, 8), dtype=np.float32)
    b = rng.standard_normal((1000, 8), dtype=np.float32)
    ok &= run_case("tiny_ops", tiny_ops_kernel, None, (a, b), tiny_ops_numpy, args.repeat, per_instruction=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
