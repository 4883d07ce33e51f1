"""Simulator benchmark: simulated kernel time as a ratio to numpy doing the same math.

Cases (fp32 unless noted):
  * tensor_add: the SPMD kernel of examples/tensor_add.py (one 128x512 tile per
    program) on 2048x8192 inputs with a grid of (16, 16)  -- 256 programs.
  * masked_add: the kernel of examples/masked_add.py (affine_range over row
    tiles, ragged last tile masked) at n=10000, m=2048    -- 79 row tiles.
  * tiny_ops: a static_range(1000) kernel of 1x8 tiles (load, load, add,
    multiply, store), to show the fixed per-instruction overhead of the
    simulator when the tiles are tiny; compared with the same numpy ops on 1x8
    slices.
  * matmul_bf16: the tutorials' blocked matmul (affine_range over M tiles of 128,
    N tiles of 512 and K tiles of 128; load lhsT/rhs tiles, `res_psum +=
    nisa.nc_matmul(...)`, copy PSUM -> SBUF as fp32, store) on bf16 inputs,
    1024x1024x1024 (512^3 with --quick); compared with numpy's fp32 matmul of
    the decoded inputs, within the fp32 accumulation bound.
  * softmax: row softmax of 4096x8192 fp32 (1024x2048 with --quick), one
    affine_range over row tiles of 128 (load, max, subtract, exp, sum, divide,
    store on a [128, 8192] tile); compared with the same math in numpy.

For each: trace once (time printed), then simulate (nkic._kernel.simulate_traced)
and run the numpy reference, each once untimed and then best of --repeat with time.perf_counter; the
ratio sim/numpy is printed and the simulated result is checked against numpy
(bit for bit for the adds; within stated bounds for matmul and softmax).
Nothing is asserted about time. The first line names the BLAS numpy uses (the
matmul ratio depends on it) and the OPENBLAS_CORETYPE it runs with: unless set,
it is chosen from the CPU's flags (SkylakeX with avx512f, Haswell with avx2), as
OpenBLAS 0.3.21 misdetects recent CPUs and falls back to its slowest kernels. The
simulator uses no BLAS, so the setting reaches the numpy side only.

Run: bench/run_all.sh, or
  PYTHONPATH=python:build/python /usr/bin/python3 bench/bench_sim.py
"""
import argparse
import gc
import importlib.util
import os
import sys
import time


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _blas  # noqa: E402

_blas.use_cpu_kernels()  # before numpy loads OpenBLAS

import numpy as np  # noqa: E402

from neuronxcc import nki
import neuronxcc.nki.isa as nisa
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


@nki.jit
def matmul_bf16_kernel(lhsT, rhs):
    """result[M, N] (fp32) = lhsT[K, M].T @ rhs[K, N], as in the NKI matmul tutorial."""
    K, M = lhsT.shape
    K_, N = rhs.shape
    TILE_K = nl.tile_size.pmax                  # 128: contraction on the partition dim
    TILE_M = nl.tile_size.gemm_stationary_fmax  # 128
    TILE_N = nl.tile_size.gemm_moving_fmax      # 512
    assert K == K_ and K % TILE_K == 0 and M % TILE_M == 0 and N % TILE_N == 0
    result = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    for m in nl.affine_range(M // TILE_M):
        for n in nl.affine_range(N // TILE_N):
            res_psum = nl.zeros((TILE_M, TILE_N), nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // TILE_K):
                lhsT_tile = nl.load(lhsT[k * TILE_K:(k + 1) * TILE_K, m * TILE_M:(m + 1) * TILE_M])
                rhs_tile = nl.load(rhs[k * TILE_K:(k + 1) * TILE_K, n * TILE_N:(n + 1) * TILE_N])
                res_psum += nisa.nc_matmul(lhsT_tile, rhs_tile)
            res_sb = nl.copy(res_psum, dtype=result.dtype)
            nl.store(result[m * TILE_M:(m + 1) * TILE_M, n * TILE_N:(n + 1) * TILE_N], value=res_sb)
    return result


def matmul_numpy(lhsT32, rhs32):
    return lhsT32.T @ rhs32


def matmul_check(out, ref, lhsT32, rhs32):
    """|out - ref| <= 2 (K+1) 2^-24 (|lhsT|.T @ |rhs|): bf16 products are exact in
    fp32, so each side is only an fp32 sum of K products, in its own order, each
    within (K+1) 2^-24 sum|a*b| of the exact value."""
    K = lhsT32.shape[0]
    mag = np.abs(lhsT32).T @ np.abs(rhs32)
    err = np.abs(out.astype(np.float64) - ref)
    bound = 2 * (K + 1) * 2.0 ** -24 * mag.astype(np.float64)
    ok = out.shape == ref.shape and out.dtype == np.float32 and bool(np.all(err <= bound))
    return ok, f"max |err| / bound {np.max(err / np.maximum(bound, 1e-300)):.3f}"


@nki.jit
def softmax_kernel(x):
    """Row softmax: one [128, d] tile per iteration (d = 8192 fp32 is 32 KiB per partition)."""
    n, d = x.shape
    P = nl.tile_size.pmax
    assert n % P == 0
    out = nl.ndarray((n, d), dtype=x.dtype, buffer=nl.shared_hbm)
    for t in nl.affine_range(n // P):
        tile = nl.load(x[t * P:(t + 1) * P, 0:d])
        row_max = nl.max(tile, axis=[1], keepdims=True)
        shifted = nl.subtract(tile, row_max)
        e = nl.exp(shifted)
        row_sum = nl.sum(e, axis=[1], keepdims=True)
        y = nl.divide(e, row_sum)
        nl.store(out[t * P:(t + 1) * P, 0:d], value=y)
    return out


def softmax_numpy(x):
    # The kernel's math in fp32, in place where numpy allows it.
    e = x - x.max(axis=1, keepdims=True)
    np.exp(e, out=e)
    e /= e.sum(axis=1, keepdims=True)
    return e


def softmax_check(out, ref, x, rows=256):
    """Elementwise within 1e-6 relative once each row's normalisation is factored out.

    The exact value is exp(s) / sum(exp(s)) with s = x - max(x) rounded to fp32 (the
    kernel's subtract; computed here the same way) and the rest in float64. The
    simulator's fp32 row sum of d positive terms may be off by up to about d 2^-24
    relative (4.9e-4 at d = 8192; the order of the sum is the simulator's), which
    scales a whole row by one factor c. So: every out / exact is c (1 +- 1e-6),
    with c = sum of the row of out in float64, and |c - 1| <= (d + 2) 2^-24."""
    n, d = x.shape
    elem = row = vs_np = 0.0
    for r in range(0, n, rows):
        xs = x[r:r + rows]
        s = (xs - xs.max(axis=1, keepdims=True)).astype(np.float64)
        e = np.exp(s)
        exact = e / e.sum(axis=1, keepdims=True)
        o = out[r:r + rows].astype(np.float64)
        c = o.sum(axis=1, keepdims=True)
        elem = max(elem, float(np.max(np.abs(o / (c * exact) - 1))))
        row = max(row, float(np.max(np.abs(c - 1))))
        vs_np = max(vs_np, float(np.max(np.abs(o / ref[r:r + rows] - 1))))
    row_bound = (d + 2) * 2.0 ** -24
    ok = out.shape == ref.shape and out.dtype == ref.dtype and elem <= 1e-6 and row <= row_bound
    return ok, (f"elementwise rel err {elem:.1e} (<= 1e-6) once each row's sum is factored out, "
                f"row sums off by {row:.1e} (<= d*2^-24 = {row_bound:.1e}); raw rel err vs numpy {vs_np:.1e}")


def best_of(fn, repeat):
    best, result = float("inf"), None
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t0)
    return best, result


def run_case(label, kernel, grid, arrays, reference, repeat, per_instruction=False,
             np_arrays=None, check=None, flops=None, shape=None):
    """np_arrays: what the numpy reference gets (default: the kernel's arrays);
    check(out, ref) -> (ok, note) replaces the bit-for-bit comparison;
    flops: report GFLOP/s instead of GiB/s."""
    t_trace, traced = best_of(lambda: kernel.trace(grid, tuple(arrays), {}), 1)
    ninst = traced.ir.num_instructions()
    # One untimed run of each side first: the kernel's first huge-page faults of a process
    # (memory compaction, seen as system time) would otherwise land in the best of a few.
    simulate_traced(traced, list(arrays))
    t_sim, out = best_of(lambda: simulate_traced(traced, list(arrays)), repeat)
    np_arrays = arrays if np_arrays is None else np_arrays
    reference(*np_arrays)
    t_np, ref = best_of(lambda: reference(*np_arrays), repeat)
    if check is None:
        ok, note = out.shape == ref.shape and out.dtype == ref.dtype and np.array_equal(out, ref), None
    else:
        ok, note = check(out, ref)
    shape = shape or "x".join(str(d) for d in arrays[0].shape)
    grid_s = f", grid {grid}" if grid is not None else ""
    print(f"sim {label}: {shape} {arrays[0].dtype}{grid_s}, {ninst} instructions, "
          f"trace {t_trace * 1e3:.1f} ms, sim {t_sim * 1e3:.1f} ms, numpy {t_np * 1e3:.1f} ms, "
          f"ratio {t_sim / t_np:.2f} (sim / numpy), {'correct' if ok else 'MISMATCH'}")
    if flops is not None:
        print(f"  sim {flops / t_sim / 1e9:.1f} GFLOP/s vs numpy {flops / t_np / 1e9:.1f} GFLOP/s")
    else:
        mb = sum(a.nbytes for a in arrays) / 2**20 + ref.nbytes / 2**20
        extra = f"; {t_sim / ninst * 1e6:.2f} us per simulated instruction" if per_instruction else ""
        print(f"  sim {mb / t_sim / 1024:.2f} GiB/s vs numpy {mb / t_np / 1024:.2f} GiB/s "
              f"(inputs+output moved once){extra}")
    if note:
        print(f"  {note}")
    return ok


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--repeat", type=int, default=3, help="best of this many runs")
    p.add_argument("--quick", action="store_true",
                   help="smaller sizes (1024x4096, n=2500, matmul 512^3, softmax 1024x2048)")
    args = p.parse_args(argv)
    print(f"{_blas.describe()}, simulator threads: {os.environ.get('NKIC_THREADS', os.cpu_count())}")
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
    del a, b

    size = 512 if args.quick else 1024
    K = M = N = size
    lhsT = rng.standard_normal((K, M), dtype=np.float32).astype(nl.bfloat16)
    rhs = rng.standard_normal((K, N), dtype=np.float32).astype(nl.bfloat16)
    lhsT32, rhs32 = lhsT.astype(np.float32), rhs.astype(np.float32)  # decoded outside the timing
    ok &= run_case("matmul_bf16", matmul_bf16_kernel, None, (lhsT, rhs), matmul_numpy, args.repeat,
                   np_arrays=(lhsT32, rhs32), check=lambda out, ref: matmul_check(out, ref, lhsT32, rhs32),
                   flops=2.0 * M * N * K, shape=f"{M}x{N}x{K} (MxNxK)")
    del lhsT, rhs, lhsT32, rhs32

    rows, cols = (1024, 2048) if args.quick else (4096, 8192)
    x = rng.standard_normal((rows, cols), dtype=np.float32)
    ok &= run_case("softmax", softmax_kernel, None, (x,), softmax_numpy, args.repeat,
                   check=lambda out, ref: softmax_check(out, ref, x))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
