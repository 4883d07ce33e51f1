"""The affine_range race check (simulate_kernel(..., check_races=True), and `nkic run`,
which checks by default). nl.affine_range asserts that iterations are independent; the
compiler does not verify it (seed 003 §4.1), so nkic's simulator can: a kernel
that wrongly uses affine_range for a loop-carried dependency, or whose
iterations write the same output element, gets err_unexpected_output_dependencies
(NKI_API.md §1.5, §7.1) naming the loop and the tensor, located at the loop.
Associative PSUM accumulation (`acc += nisa.nc_matmul(...)`) is the sanctioned
exception, sequential_range is never checked, and no kernel of the test suite
that uses affine_range correctly is flagged.

This file doubles as a kernel file for `nkic run FILE::KERNEL` (make_inputs and
reference below serve both prefix-sum kernels)."""
import importlib.util
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

import nkic
from neuronxcc import nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

THIS_FILE = os.path.realpath(__file__)
ROOT = Path(THIS_FILE).parents[2]
NKIC = str(ROOT / "bin" / "nkic")
with open(THIS_FILE) as _f:
    SOURCE = _f.read().splitlines()

CODE = "err_unexpected_output_dependencies"


def marker_line(name):
    tag = f"# L:{name}"
    hits = [i for i, l in enumerate(SOURCE, 1) if l.rstrip().endswith(tag)]
    assert len(hits) == 1, f"marker {tag!r} found {len(hits)} times"
    return hits[0]


def randn(shape, seed, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32).astype(dtype)


def race(kernel, *args, **kwargs):
    """The race diagnostic simulate_kernel(check_races=True) raises."""
    with pytest.raises(nkic.NKIError) as info:
        nki.simulate_kernel(kernel, *args, check_races=True, **kwargs)
    e = info.value
    assert e.code == CODE, (e.code, e.message)
    assert os.path.realpath(e.file) == THIS_FILE, e.file
    return e


def no_race(kernel, *args, **kwargs):
    """Runs with and without the check: no report, the same results."""
    checked = nki.simulate_kernel(kernel, *args, check_races=True, **kwargs)
    plain = nki.simulate_kernel(kernel, *args, **kwargs)
    checked = checked if isinstance(checked, tuple) else (checked,)
    plain = plain if isinstance(plain, tuple) else (plain,)
    for c, p in zip(checked, plain):
        assert np.array_equal(c, p, equal_nan=np.issubdtype(c.dtype, np.floating) and c.dtype.itemsize >= 4)
    return checked[0] if len(checked) == 1 else checked


# ---------------------------------------------------------------- prefix sums (also for `nkic run`)

@nki.jit
def prefix_sum_affine_kernel(x):
    """WRONG: the running sum is carried from one iteration to the next."""
    P, N = x.shape
    out = nl.ndarray((P, N), dtype=x.dtype, buffer=nl.shared_hbm)
    running = nl.zeros((P, 1), dtype=nl.float32, buffer=nl.sbuf)
    for j in nl.affine_range(N):  # L:prefix_affine
        t = nl.load(x[0:P, j:j + 1])
        running[...] = nl.add(running, t)
        nl.store(out[0:P, j:j + 1], value=running)
    return out


@nki.jit
def prefix_sum_sequential_kernel(x):
    P, N = x.shape
    out = nl.ndarray((P, N), dtype=x.dtype, buffer=nl.shared_hbm)
    running = nl.zeros((P, 1), dtype=nl.float32, buffer=nl.sbuf)
    for j in nl.sequential_range(N):
        t = nl.load(x[0:P, j:j + 1])
        running[...] = nl.add(running, t)
        nl.store(out[0:P, j:j + 1], value=running)
    return out


@nki.jit
def prefix_sum_builtin_kernel(x):
    P, N = x.shape
    out = nl.ndarray((P, N), dtype=x.dtype, buffer=nl.shared_hbm)
    running = nl.zeros((P, 1), dtype=nl.float32, buffer=nl.sbuf)
    for j in range(N):
        t = nl.load(x[0:P, j:j + 1])
        running[...] = nl.add(running, t)
        nl.store(out[0:P, j:j + 1], value=running)
    return out


def make_inputs():
    return (randn((128, 16), seed=0),)


def reference(x):
    return np.cumsum(x, axis=1, dtype=np.float32)


def test_affine_prefix_sum_is_flagged():
    (x,) = make_inputs()
    e = race(prefix_sum_affine_kernel, x)
    assert e.line == marker_line("prefix_affine")
    assert "affine loop `j`" in e.message
    assert "tensor `running`" in e.message
    assert "iteration 1 of affine loop `j` reads tensor `running` written by iteration 0" in e.message
    assert "sequential_range" in e.message
    assert isinstance(e, RuntimeError)
    assert f":{e.line}:" in str(e) and CODE in str(e)


def test_affine_prefix_sum_is_only_checked_on_request():
    # The check is opt-in; the simulator itself runs iterations in order.
    (x,) = make_inputs()
    out = nki.simulate_kernel(prefix_sum_affine_kernel, x)
    assert np.array_equal(out, reference(x))


@pytest.mark.parametrize("kernel", [prefix_sum_sequential_kernel, prefix_sum_builtin_kernel],
                         ids=["sequential_range", "builtin-range"])
def test_sequential_prefix_sum_is_not_flagged(kernel):
    (x,) = make_inputs()
    assert np.array_equal(no_race(kernel, x), reference(x))


# ---------------------------------------------------------------- other wrong kernels

@nki.jit
def same_output_kernel(a):
    """WRONG: every iteration stores into the same output tile."""
    out = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):  # L:same_output
        t = nl.load(a[0:128, i * 512:(i + 1) * 512])
        nl.store(out[0:128, 0:512], value=t)
    return out


def test_two_iterations_writing_one_output_element_are_flagged():
    e = race(same_output_kernel, randn((128, 2048), seed=1))
    assert e.line == marker_line("same_output")
    assert "iterations 0 and 1 of affine loop `i` both write tensor `out`" in e.message


@nki.jit
def overlapping_output_kernel(a):
    """WRONG: tiles i and i+1 overlap by one column (stride 511, width 512)."""
    out = nl.ndarray((128, 2048), dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(3):  # L:overlap
        t = nl.load(a[0:128, i * 512:(i + 1) * 512])
        nl.store(out[0:128, i * 511:i * 511 + 512], value=t)
    return out


def test_one_overlapping_element_column_is_flagged():
    e = race(overlapping_output_kernel, randn((128, 2048), seed=2))
    assert e.line == marker_line("overlap")
    assert "affine loop `i`" in e.message and "tensor `out`" in e.message


@nki.jit
def last_tile_kernel(a):
    """WRONG: an SBUF tile made before the loop is overwritten by every iteration
    and read after it: which iteration's value survives depends on their order."""
    out = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
    last = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.sbuf)
    for i in nl.affine_range(4):  # L:last_tile
        last[...] = nl.load(a[0:128, i * 512:(i + 1) * 512])
    nl.store(out, value=last)
    return out


def test_reading_a_tile_several_iterations_overwrote_is_flagged():
    e = race(last_tile_kernel, randn((128, 2048), seed=3))
    assert e.line == marker_line("last_tile")
    assert "tensor `last`" in e.message and "affine loop `i`" in e.message


@nki.jit
def last_tile_sequential_kernel(a):
    out = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
    last = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.sbuf)
    for i in nl.sequential_range(4):
        last[...] = nl.load(a[0:128, i * 512:(i + 1) * 512])
    nl.store(out, value=last)
    return out


def test_the_same_pattern_in_sequential_range_is_not_flagged():
    a = randn((128, 2048), seed=3)
    assert np.array_equal(no_race(last_tile_sequential_kernel, a), a[:, 1536:2048])


@nki.jit
def partial_sum_read_kernel(lhsT, rhs):
    """WRONG: a plain read of the PSUM sum inside the k loop sees the
    contributions of other iterations (only `+=` itself commutes)."""
    K, M = lhsT.shape
    _, N = rhs.shape
    out = nl.ndarray((M, N * (K // 128)), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.zeros((M, N), nl.float32, buffer=nl.psum)
    for k in nl.affine_range(K // 128):  # L:partial_sum
        lt = nl.load(lhsT[k * 128:(k + 1) * 128, 0:M])
        rt = nl.load(rhs[k * 128:(k + 1) * 128, 0:N])
        acc += nisa.nc_matmul(lt, rt)
        snapshot = nl.copy(acc, dtype=nl.float32)
        nl.store(out[0:M, k * N:(k + 1) * N], value=snapshot)
    return out


def test_reading_a_partial_psum_sum_inside_the_loop_is_flagged():
    e = race(partial_sum_read_kernel, randn((384, 128), seed=4), randn((384, 512), seed=5))
    assert e.line == marker_line("partial_sum")
    assert "affine loop `k`" in e.message and "tensor `acc`" in e.message


@nki.jit
def outer_carried_kernel(x):
    """WRONG: the outer affine loop carries `running` (the inner loop is sequential)."""
    P, N = x.shape
    out = nl.ndarray((P, N), dtype=x.dtype, buffer=nl.shared_hbm)
    running = nl.zeros((P, 1), dtype=nl.float32, buffer=nl.sbuf)
    for i in nl.affine_range(N // 8):  # L:outer_carried
        for j in nl.sequential_range(8):
            t = nl.load(x[0:P, i * 8 + j:i * 8 + j + 1])
            running[...] = nl.add(running, t)
            nl.store(out[0:P, i * 8 + j:i * 8 + j + 1], value=running)
    return out


def test_dependency_carried_by_the_outer_affine_loop_is_flagged():
    e = race(outer_carried_kernel, randn((128, 32), seed=6))
    assert e.line == marker_line("outer_carried")
    assert "affine loop `i`" in e.message and "tensor `running`" in e.message


@nki.jit
def inner_carried_kernel(x):
    """WRONG: the inner affine loop carries `running` (fresh per outer iteration)."""
    M, N = x.shape
    out = nl.ndarray((M, N), dtype=x.dtype, buffer=nl.shared_hbm)
    for i in nl.sequential_range(M // 128):
        running = nl.zeros((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        for j in nl.affine_range(N):  # L:inner_carried
            t = nl.load(x[i * 128:(i + 1) * 128, j:j + 1])
            running[...] = nl.add(running, t)
            nl.store(out[i * 128:(i + 1) * 128, j:j + 1], value=running)
    return out


def test_dependency_carried_by_the_inner_affine_loop_is_flagged():
    e = race(inner_carried_kernel, randn((256, 8), seed=7))
    assert e.line == marker_line("inner_carried")
    assert "affine loop `j`" in e.message and "tensor `running`" in e.message


@nki.jit
def hbm_carried_kernel(x):
    """WRONG: iteration j reads the output column iteration j-1 stored."""
    P, N = x.shape
    out = nl.ndarray((P, N), dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(out[0:P, 0:1], value=nl.load(x[0:P, 0:1]))
    for j in nl.affine_range(1, N):  # L:hbm_carried
        prev = nl.load(out[0:P, j - 1:j])
        cur = nl.load(x[0:P, j:j + 1])
        nl.store(out[0:P, j:j + 1], value=nl.add(prev, cur))
    return out


def test_dependency_through_hbm_is_flagged():
    e = race(hbm_carried_kernel, randn((128, 8), seed=15))
    assert e.line == marker_line("hbm_carried")
    assert "iteration 2 of affine loop `j` reads tensor `out` written by iteration 1" in e.message


@nki.jit
def outer_overwrite_kernel(a):
    """WRONG: the inner loop's tiles are disjoint, but every outer iteration
    stores the same tiles again."""
    out = nl.ndarray((128, 1024), dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(2):  # L:outer_overwrite
        for j in nl.affine_range(2):
            t = nl.load(a[i * 128:(i + 1) * 128, j * 512:(j + 1) * 512])
            nl.store(out[0:128, j * 512:(j + 1) * 512], value=t)
    return out


def test_outer_iterations_writing_the_same_tiles_are_flagged():
    e = race(outer_overwrite_kernel, randn((256, 1024), seed=16))
    assert e.line == marker_line("outer_overwrite")
    assert "iterations 0 and 1 of affine loop `i` both write tensor `out`" in e.message


# ---------------------------------------------------------------- correct patterns

@nki.jit
def matmul_psum_kernel(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for m in nl.affine_range(M // 128):
        for n in nl.affine_range(N // 512):
            acc = nl.zeros((128, 512), nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // 128):
                lt = nl.load(lhsT[k * 128:(k + 1) * 128, m * 128:(m + 1) * 128])
                rt = nl.load(rhs[k * 128:(k + 1) * 128, n * 512:(n + 1) * 512])
                acc += nisa.nc_matmul(lt, rt)
            res = nl.copy(acc, dtype=result.dtype)
            nl.store(result[m * 128:(m + 1) * 128, n * 512:(n + 1) * 512], value=res)
    return result


@nki.jit
def matmul_nl_psum_kernel(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    acc = nl.zeros((M, N), nl.float32, buffer=nl.psum)  # defined outside the loop
    for k in nl.affine_range(K // 128):
        lt = nl.load(lhsT[k * 128:(k + 1) * 128, 0:M])
        rt = nl.load(rhs[k * 128:(k + 1) * 128, 0:N])
        acc[...] += nl.matmul(lt, rt, transpose_x=True)
    nl.store(result, value=nl.copy(acc, dtype=result.dtype))
    return result


@pytest.mark.parametrize("dtype", [np.float32, nl.bfloat16], ids=["fp32", "bf16"])
def test_psum_accumulation_in_affine_range_is_not_flagged(dtype):
    rng = np.random.default_rng(8)
    lhsT = rng.integers(-4, 5, size=(512, 256)).astype(np.float32).astype(dtype)
    rhs = rng.integers(-4, 5, size=(512, 1024)).astype(np.float32).astype(dtype)
    ref = (lhsT.astype(np.float64).T @ rhs.astype(np.float64)).astype(np.float32).astype(dtype)
    out = no_race(matmul_psum_kernel, lhsT, rhs)
    assert np.array_equal(out.view(np.uint8), ref.view(np.uint8))
    out = no_race(matmul_nl_psum_kernel, lhsT[:, :128], rhs[:, :512])
    ref = (lhsT[:, :128].astype(np.float64).T @ rhs[:, :512].astype(np.float64)).astype(np.float32).astype(dtype)
    assert np.array_equal(out.view(np.uint8), ref.view(np.uint8))


@nki.jit
def row_tile_prefix_kernel(x):
    """Correct: a tile made in the affine body is reused by every iteration; the
    sequential inner loop carries it."""
    M, N = x.shape
    out = nl.ndarray((M, N), dtype=x.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(M // 128):
        running = nl.zeros((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        for j in nl.sequential_range(N):
            t = nl.load(x[i * 128:(i + 1) * 128, j:j + 1])
            running[...] = nl.add(running, t)
            nl.store(out[i * 128:(i + 1) * 128, j:j + 1], value=running)
    return out


@nki.jit
def body_tile_reuse_kernel(a):
    """Correct: each iteration writes and reads its own body tiles, and one
    distinct output tile."""
    M, N = a.shape
    out = nl.ndarray((M, N), dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(M // 128):
        for j in nl.affine_range(N // 512):
            t = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.sbuf)
            t[...] = nl.load(a[i * 128:(i + 1) * 128, j * 512:(j + 1) * 512])
            u = nl.exp(t)
            v = nl.multiply(u, t)
            nl.store(out[i * 128:(i + 1) * 128, j * 512:(j + 1) * 512], value=v)
    return out


@nki.jit
def strided_disjoint_kernel(a):
    """Correct: iterations i write the interleaved columns i, i+4, i+8, ..."""
    out = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):
        i_p = nl.arange(128)[:, None]
        i_f = 4 * nl.arange(16)[None, :] + i
        t = nl.load(a[i_p, i_f])
        nl.store(out[i_p, i_f], value=t)
    return out


def test_correct_affine_patterns_are_not_flagged():
    x = randn((384, 16), seed=9)
    assert np.array_equal(no_race(row_tile_prefix_kernel, x), np.cumsum(x, axis=1, dtype=np.float32))
    a = randn((256, 1024), seed=10)
    assert np.allclose(no_race(body_tile_reuse_kernel, a), np.exp(a) * a, rtol=1e-5, atol=1e-6)
    a = randn((128, 64), seed=11)
    assert np.array_equal(no_race(strided_disjoint_kernel, a), a)


# ---------------------------------------------------------------- the test suite's affine kernels

def _load(relpath):
    path = ROOT / relpath
    name = "loops_races_" + path.stem
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _matmul(mod, K, M, N, **kw):
    return mod.make_inputs(K, M, N, np.float32, integers=False, seed=0), kw


SUITE = [
    # (file, kernel, inputs(mod) -> (args, kwargs), grid)
    ("tests/kernels/test_matmul_tiled.py", "matmul_tiled_kernel", lambda m: _matmul(m, 512, 256, 1024), None),
    ("tests/kernels/test_matmul_blocked.py", "matmul_blocked_kernel",
     lambda m: _matmul(m, 512, 512, 2048, TILES_M=2, TILES_N=2, TILES_K=2), None),
    ("tests/kernels/test_matmul_blocked.py", "matmul_multi_psum_kernel", lambda m: _matmul(m, 384, 128, 2048), None),
    ("tests/kernels/test_matmul_hoisted.py", "matmul_hoisted_kernel", lambda m: _matmul(m, 512, 256, 1024), None),
    ("tests/kernels/test_matmul_hoisted.py", "matmul_hoisted_per_k_kernel", lambda m: _matmul(m, 512, 256, 1024),
     None),
    ("tests/kernels/test_masked_add.py", "masked_add_kernel", lambda m: (m.make_inputs(1000, 512, np.float32), {}),
     None),
    ("examples/masked_add.py", "masked_add_kernel", lambda m: (m.make_inputs(), {}), None),
    ("tests/kernels/test_softmax_ragged.py", "softmax_manual_kernel",
     lambda m: ((m.make_input(1000, 512, np.float32),), {}), None),
    ("tests/kernels/test_softmax_ragged.py", "softmax_builtin_kernel",
     lambda m: ((m.make_input(257, 128, np.float32),), {}), None),
    ("tests/kernels/test_layernorm_ragged.py", "layernorm_meanvar_kernel",
     lambda m: (m.make_inputs(300, 256, np.float32), {}), None),
    ("tests/kernels/test_layernorm_ragged.py", "layernorm_manual_kernel",
     lambda m: (m.make_inputs(300, 256, np.float32), {}), None),
    ("tests/kernels/test_rmsnorm_ragged.py", "rmsnorm_manual_kernel", lambda m: (m.make_inputs(300, 256, np.float32), {}),
     None),
    ("tests/kernels/test_rmsnorm_ragged.py", "rmsnorm_builtin_kernel",
     lambda m: (m.make_inputs(300, 256, np.float32), {}), None),
    ("tests/kernels/test_rmsnorm_ragged.py", "rmsnorm_isa_kernel", lambda m: (m.make_inputs(300, 256, np.float32), {}),
     None),
    ("tests/kernels/test_transpose2d.py", "tile_transpose_kernel",
     lambda m: ((m.make_input((256, 384), np.float32, seed=1),), {}), None),
    ("tests/kernels/test_spmd_add_grid.py", "add_rows_jit", lambda m: (m.make_inputs((512, 1536), np.float32), {}), 4),
    ("tests/kernels/test_attention_fwd.py", "attention_fwd_kernel",
     lambda m: (m.make_inputs(256, 64, np.float32), {"causal": True}), None),
    ("tests/kernels/test_attention_fwd.py", "attention_fwd_kernel",
     lambda m: (m.make_inputs(256, 64, np.float32), {"causal": False}), None),
    ("tests/python/test_language_basics.py", "masked_scale_2d_kernel", lambda m: ((randn((300, 700), seed=13),), {}),
     None),
    ("tests/python/test_language_basics.py", "copy_ds_kernel", lambda m: ((randn((128, 2048), seed=14),), {}), None),
]

_MODULES = {}


@pytest.mark.parametrize("case", SUITE, ids=[f"{Path(c[0]).stem}::{c[1]}-{i}" for i, c in enumerate(SUITE)])
def test_suite_kernels_using_affine_range_are_not_flagged(case):
    relpath, name, inputs, grid = case
    mod = _MODULES.get(relpath) or _MODULES.setdefault(relpath, _load(relpath))
    kernel = getattr(mod, name)
    if not isinstance(kernel, nkic.TraceKernel):
        kernel = nki.jit(kernel)
    args, kwargs = inputs(mod)
    launch = kernel[grid] if grid else kernel
    text = kernel.trace(grid, tuple(args), kwargs).ir.text(False)
    assert "affine_range" in text  # representative: it has an affine loop axis
    no_race(launch, *args, **kwargs)


# ---------------------------------------------------------------- a software pipeline

@nki.jit
def pipeline_precise_affine_kernel(x):
    """WRONG: iteration i loads tile i+1 into its slot of `staged`, then stores tile i, which
    iteration i-1 loaded. precise_schedule= is in no NKI document: the loop is an affine_range."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    staged = nl.ndarray((128, 256), dtype=x.dtype, buffer=nl.sbuf)
    staged[:, 0:64] = nl.load(x[:, 0:64])
    for i in nl.affine_range(3, precise_schedule=True):  # L:precise_affine
        staged[:, (i + 1) * 64:(i + 2) * 64] = nl.load(x[:, (i + 1) * 64:(i + 2) * 64])
        nl.store(out[:, i * 64:(i + 1) * 64], value=staged[:, i * 64:(i + 1) * 64])
    nl.store(out[:, 192:256], value=staged[:, 192:256])
    return out


@nki.jit
def pipeline_sequential_kernel(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    staged = nl.ndarray((128, 256), dtype=x.dtype, buffer=nl.sbuf)
    staged[:, 0:64] = nl.load(x[:, 0:64])
    for i in nl.sequential_range(3):
        staged[:, (i + 1) * 64:(i + 2) * 64] = nl.load(x[:, (i + 1) * 64:(i + 2) * 64])
        nl.store(out[:, i * 64:(i + 1) * 64], value=staged[:, i * 64:(i + 1) * 64])
    nl.store(out[:, 192:256], value=staged[:, 192:256])
    return out


def test_a_software_pipeline_needs_sequential_range_whatever_the_affine_directive():
    x = randn((128, 256), seed=5)
    e = race(pipeline_precise_affine_kernel, x)
    assert e.line == marker_line("precise_affine")
    assert "iteration 1 of affine loop `i` reads tensor `staged` written by iteration 0" in e.message
    assert np.array_equal(no_race(pipeline_sequential_kernel, x), x)


# ---------------------------------------------------------------- the command line

def nkic_cli(*args):
    env = dict(os.environ)
    env.pop("NKIC_FRONTEND_DEBUG", None)
    return subprocess.run([NKIC, *args], cwd=ROOT, capture_output=True, text=True, timeout=60, env=env)


def test_cli_run_check_races_flags_the_wrong_kernel():
    r = nkic_cli("run", f"{THIS_FILE}::prefix_sum_affine_kernel")  # nkic run checks races by default
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert CODE in r.stderr
    assert "affine loop `j`" in r.stderr and "tensor `running`" in r.stderr
    assert f"test_loops_races.py:{marker_line('prefix_affine')}:" in r.stderr
    assert "Traceback" not in r.stderr


def test_cli_run_check_races_passes_the_right_kernels():
    r = nkic_cli("run", f"{THIS_FILE}::prefix_sum_sequential_kernel", "--check-races")
    assert r.returncode == 0, (r.stdout, r.stderr)
    assert "ok" in r.stdout and "MISMATCH" not in r.stdout
    r = nkic_cli("run", "examples/masked_add.py", "--check-races")
    assert r.returncode == 0, (r.stdout, r.stderr)
    assert "ok" in r.stdout and CODE not in r.stderr


def test_cli_run_without_checks_does_not_check():
    r = nkic_cli("run", f"{THIS_FILE}::prefix_sum_affine_kernel", "--no-checks")
    assert r.returncode == 0, (r.stdout, r.stderr)
    assert CODE not in r.stderr
