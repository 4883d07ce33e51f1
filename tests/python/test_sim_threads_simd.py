"""The simulator's thread count and vector unit change no result: kernels whose SPMD
programs or loop iterations it splits over threads, kernels it must not split
(iterations writing one element, a loop-carried accumulation), and kernels on its
vector kernels (exp, conversions, transposes, selects, folds, matmuls with and
without exact products) run in processes with NKIC_THREADS=1, 2 and 3 and with
NKIC_SIMD=baseline, avx2 and the machine's own; their outputs agree bit for bit,
and with numpy where numpy computes the same thing."""
import hashlib
import os
import subprocess
import sys

import numpy as np
import pytest

from neuronxcc import nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def spmd_add(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    i, j = nl.program_id(0), nl.program_id(1)
    t = nl.load(a[i * 128:(i + 1) * 128, j * 256:(j + 1) * 256])
    u = nl.load(b[i * 128:(i + 1) * 128, j * 256:(j + 1) * 256])
    nl.store(out[i * 128:(i + 1) * 128, j * 256:(j + 1) * 256], value=nl.add(t, u))
    return out


@nki.jit
def softmax(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    for r in nl.affine_range(x.shape[0] // 128):
        t = nl.load(x[r * 128:(r + 1) * 128, :])
        e = nl.exp(nl.subtract(t, nl.max(t, axis=1, keepdims=True)))
        nl.store(out[r * 128:(r + 1) * 128, :], value=nl.divide(e, nl.sum(e, axis=1, keepdims=True)))
    return out


@nki.jit
def matmul(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    for m in nl.affine_range(M // 128):
        for n in nl.affine_range(N // 512):
            acc = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // 128):
                lt = nl.load(lhsT[k * 128:(k + 1) * 128, m * 128:(m + 1) * 128])
                rt = nl.load(rhs[k * 128:(k + 1) * 128, n * 512:(n + 1) * 512])
                acc += nisa.nc_matmul(lt, rt)
            nl.store(out[m * 128:(m + 1) * 128, n * 512:(n + 1) * 512], value=nl.copy(acc, dtype=nl.float32))
    return out


@nki.jit
def scale_rows(x, w):
    """A tile loaded before the loop, read by every iteration."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    wt = nl.load(w)
    for r in nl.affine_range(x.shape[0] // 128):
        t = nl.multiply(nl.load(x[r * 128:(r + 1) * 128, :]), wt)
        nl.store(out[r * 128:(r + 1) * 128, :], value=t)
    return out


@nki.jit
def last_row(x):
    """An on-chip tile declared before the loop, written by every iteration and
    read after it: the last iteration's value."""
    out = nl.ndarray((1, x.shape[1]), dtype=x.dtype, buffer=nl.shared_hbm)
    keep = nl.ndarray((1, x.shape[1]), dtype=x.dtype, buffer=nl.sbuf)
    for r in nl.affine_range(x.shape[0] // 128):
        t = nl.exp(nl.load(x[r * 128:(r + 1) * 128, :]))
        keep[...] = t[127:128, :]
    nl.store(out, value=keep)
    return out


@nki.jit
def same_element(x):
    """Every iteration writes the same output rows: the last one must win."""
    out = nl.ndarray((128, x.shape[1]), dtype=x.dtype, buffer=nl.shared_hbm)
    for r in nl.affine_range(x.shape[0] // 128):
        nl.store(out, value=nl.exp(nl.load(x[r * 128:(r + 1) * 128, :])))
    return out


@nki.jit
def running_sum(x):
    """A loop-carried accumulator declared outside the loop."""
    out = nl.ndarray((128, x.shape[1]), dtype=x.dtype, buffer=nl.shared_hbm)
    acc = nl.zeros((128, x.shape[1]), dtype=nl.float32, buffer=nl.sbuf)
    for r in nl.sequential_range(x.shape[0] // 128):
        acc[...] = nl.add(acc, nl.load(x[r * 128:(r + 1) * 128, :]))
    nl.store(out, value=acc)
    return out


@nki.jit
def round_trip(x):
    """Tiles stored to an output of 16 MiB (large HBM writes bypass the cache), then
    read back from it after every program's store."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    back = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    for r in nl.affine_range(x.shape[0] // 128):
        nl.store(out[r * 128:(r + 1) * 128, :], value=nl.load(x[r * 128:(r + 1) * 128, :]))
    for r in nl.affine_range(x.shape[0] // 128):
        nl.store(back[r * 128:(r + 1) * 128, :], value=nl.negative(nl.load(out[r * 128:(r + 1) * 128, :])))
    return out, back


@nki.jit
def vector_paths(x, b):
    """exp with a per-partition bias into bf16, its fold, a transpose, a select."""
    out = nl.ndarray((4, 128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(x)
    s = nl.ndarray((128, 1), dtype=nl.float32)
    e = nisa.activation_reduce(op=nl.exp, data=t, reduce_op=np.add, reduce_res=s, bias=nl.load(b), dtype=nl.bfloat16)
    nl.store(out[0], value=nl.copy(e, dtype=nl.float32))
    nl.store(out[1], value=nisa.nc_transpose(t))
    iq, ik = nl.mgrid[0:128, 0:128]
    nl.store(out[2], value=nisa.affine_select(pred=(iq - ik >= 0), on_true_tile=t, on_false_value=-9984.0,
                                              dtype=nl.float32))
    nl.store(out[3], value=nl.multiply(nl.sigmoid(t), s))
    return out


def _inputs():
    rng = np.random.default_rng(7)
    f = lambda *s: rng.standard_normal(s).astype(np.float32)  # noqa: E731
    return {
        "spmd_add": (spmd_add[4, 4], f(512, 1024), f(512, 1024)),
        "spmd_add_16mib": (spmd_add[16, 8], f(2048, 2048), f(2048, 2048)),
        "round_trip_16mib": (round_trip, f(2048, 2048)),
        "softmax": (softmax, f(1024, 512)),
        "matmul_bf16": (matmul, f(256, 512).astype(nl.bfloat16), f(256, 1024).astype(nl.bfloat16)),
        "matmul_fp32": (matmul, f(256, 512), f(256, 1024)),
        "scale_rows": (scale_rows, f(1024, 512), f(128, 512)),
        "last_row": (last_row, f(1024, 512)),
        "same_element": (same_element, f(1024, 512)),
        "running_sum": (running_sum, f(1024, 512)),
        "vector_paths": (vector_paths, f(128, 128), f(128, 1)),
    }


def _run_all():
    """name -> sha256 of each output's bytes."""
    digests = {}
    for name, (kernel, *args) in _inputs().items():
        out = nki.simulate_kernel(kernel, *args)
        outs = out if isinstance(out, tuple) else (out,)
        digests[name] = [hashlib.sha256(np.ascontiguousarray(o).tobytes()).hexdigest() for o in outs]
    return digests


RUNS = {"threads 1": {"NKIC_THREADS": "1"}, "threads 2": {"NKIC_THREADS": "2"}, "threads 3": {"NKIC_THREADS": "3"},
        "avx2": {"NKIC_SIMD": "avx2"}, "baseline": {"NKIC_SIMD": "baseline"}}


@pytest.fixture(scope="module")
def runs():
    here = os.path.abspath(__file__)
    out = {}
    for name, settings in RUNS.items():
        env = dict(os.environ, **settings)
        res = subprocess.run([sys.executable, here], env=env, capture_output=True, text=True, check=True)
        out[name] = eval(res.stdout.strip().splitlines()[-1])  # a dict literal printed by _run_all
    return out


@pytest.mark.parametrize("name", list(_inputs()))
def test_thread_count_and_vector_unit_change_no_bit(runs, name):
    digests = [runs[r][name] for r in RUNS]
    assert all(d == digests[0] for d in digests), dict(zip(RUNS, digests))


def test_results_are_the_kernels_math():
    k = _inputs()
    a, b = k["spmd_add"][1:]
    assert np.array_equal(nki.simulate_kernel(spmd_add[4, 4], a, b), a + b)
    a, b = k["spmd_add_16mib"][1:]
    assert np.array_equal(nki.simulate_kernel(spmd_add[16, 8], a, b), a + b)
    x = k["round_trip_16mib"][1]
    out, back = nki.simulate_kernel(round_trip, x)
    assert np.array_equal(out, x) and np.array_equal(back, -x)
    x = k["same_element"][1]
    assert np.allclose(nki.simulate_kernel(same_element, x), np.exp(x[-128:]), rtol=1e-6, atol=0)
    x, w = k["scale_rows"][1:]
    assert np.array_equal(nki.simulate_kernel(scale_rows, x, w), x * np.tile(w, (8, 1)))
    x = k["last_row"][1]
    assert np.allclose(nki.simulate_kernel(last_row, x), np.exp(x[-1:]), rtol=1e-6, atol=0)
    lb, rb = k["matmul_bf16"][1:]
    ref = lb.astype(np.float32).T @ rb.astype(np.float32)
    assert np.allclose(nki.simulate_kernel(matmul, lb, rb), ref, rtol=1e-4, atol=1e-3)
    x = k["running_sum"][1]
    assert np.allclose(nki.simulate_kernel(running_sum, x), x.reshape(8, 128, -1).sum(axis=0), rtol=1e-5, atol=1e-5)
    x, b = k["vector_paths"][1:]
    got = nki.simulate_kernel(vector_paths, x, b)
    e = np.exp(x + b)
    assert np.allclose(got[0], e, rtol=1e-2)  # rounded to bf16
    assert np.array_equal(got[1], x.T)
    assert np.array_equal(got[2], np.where(np.tril(np.ones((128, 128))) > 0, x, np.float32(-9984.0)))
    s = got[0].astype(np.float64).sum(axis=1, keepdims=True)  # the fold reads the bf16 dst
    assert np.allclose(got[3], 1 / (1 + np.exp(-x)) * s, rtol=1e-4)


def _matmul_in_order(lhsT, rhs):
    """The PE array's sums: per 128-row K tile, fp32 products added in increasing k
    from +0, then the tile's sum added to the PSUM value."""
    a, b = lhsT.astype(np.float32), rhs.astype(np.float32)
    psum = np.zeros((a.shape[1], b.shape[1]), np.float32)
    for k0 in range(0, a.shape[0], 128):
        s = np.zeros_like(psum)
        for k in range(k0, k0 + 128):
            s = s + np.outer(a[k], b[k]).astype(np.float32)
        psum = psum + s
    return psum


@pytest.mark.parametrize("scale", [1.0, 1e-20, 1e18])
def test_bf16_matmul_adds_fp32_products_in_order(scale):
    # 1e-20: products below fp32's normal range; 1e18: products past its largest value.
    rng = np.random.default_rng(3)
    lhsT = (rng.standard_normal((256, 128)) * scale).astype(np.float32).astype(nl.bfloat16)
    rhs = (rng.standard_normal((256, 512)) * scale).astype(np.float32).astype(nl.bfloat16)
    out = nki.simulate_kernel(matmul, lhsT, rhs)
    assert out.tobytes() == _matmul_in_order(lhsT, rhs).tobytes()


def test_fp32_matmul_rounds_each_product_before_adding():
    # fp32 operands: the products are not exact, so no multiply-add may fuse them.
    rng = np.random.default_rng(4)
    lhsT = rng.standard_normal((256, 128)).astype(np.float32)
    rhs = rng.standard_normal((256, 512)).astype(np.float32)
    out = nki.simulate_kernel(matmul, lhsT, rhs)
    assert out.tobytes() == _matmul_in_order(lhsT, rhs).tobytes()


def test_inputs_are_not_written():
    x = np.random.default_rng(1).standard_normal((1024, 512)).astype(np.float32)
    x.flags.writeable = False
    before = x.tobytes()
    nki.simulate_kernel(softmax, x)
    assert x.tobytes() == before


if __name__ == "__main__":
    print(repr(_run_all()))
