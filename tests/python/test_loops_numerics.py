"""Loop kernels simulated against numpy (seed 003 / NKI_API.md §1.5, §2.5):

* the tiled matmul with K accumulated in PSUM inside nl.affine_range, both as
  `acc += nisa.nc_matmul(...)` and `acc[...] += nl.matmul(..., transpose_x=True)`,
  on fp32 and bf16 inputs (the associative accumulation affine_range allows);
* a prefix sum with nl.sequential_range: a running sum carried in an SBUF tile
  from one iteration to the next (a genuine loop-carried dependency);
* the same prefix sum over a Python range(), both ways (sequential by default,
  unrolled with trace_time_unroll_builtin_range): identical results;
* nested affine loops over 2-D tiles (exact and ragged), and an affine loop
  of independent sequential prefix sums.

Small-integer inputs make every matmul partial sum exact in fp32, so outputs are
compared bit for bit; random inputs against the bound (K+1) 2^-24 sum|a*b|
(+ 2^-8 |ref| for a bf16 output). Prefix sums are compared bit for bit with
np.cumsum in float32 (both add left to right, one rounding per step)."""
import numpy as np
import pytest

import nkic
import nkic._kernel
from neuronxcc import nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

TILE_K, TILE_M, TILE_N = 128, 128, 512


@pytest.fixture
def restore_options():
    saved = dict(nkic._kernel._options)
    yield
    nkic._kernel._options.clear()
    nkic._kernel._options.update(saved)


def for_lines(text):
    return [l.strip() for l in text.splitlines() if l.strip().startswith("for ")]


# ---------------------------------------------------------------- matmul, K accumulated in PSUM

@nki.jit
def matmul_nc_kernel(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for m in nl.affine_range(M // TILE_M):
        for n in nl.affine_range(N // TILE_N):
            acc = nl.zeros((TILE_M, TILE_N), nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // TILE_K):
                lt = nl.load(lhsT[k * TILE_K:(k + 1) * TILE_K, m * TILE_M:(m + 1) * TILE_M])
                rt = nl.load(rhs[k * TILE_K:(k + 1) * TILE_K, n * TILE_N:(n + 1) * TILE_N])
                acc += nisa.nc_matmul(lt, rt)
            res = nl.copy(acc, dtype=result.dtype)
            nl.store(result[m * TILE_M:(m + 1) * TILE_M, n * TILE_N:(n + 1) * TILE_N], value=res)
    return result


@nki.jit
def matmul_nl_kernel(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for m in nl.affine_range(M // TILE_M):
        for n in nl.affine_range(N // TILE_N):
            acc = nl.zeros((TILE_M, TILE_N), nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // TILE_K):
                lt = nl.ndarray((TILE_K, TILE_M), dtype=lhsT.dtype, buffer=nl.sbuf)
                rt = nl.ndarray((TILE_K, TILE_N), dtype=rhs.dtype, buffer=nl.sbuf)
                lt[...] = nl.load(lhsT[k * TILE_K:(k + 1) * TILE_K, m * TILE_M:(m + 1) * TILE_M])
                rt[...] = nl.load(rhs[k * TILE_K:(k + 1) * TILE_K, n * TILE_N:(n + 1) * TILE_N])
                acc[...] += nl.matmul(lt, rt, transpose_x=True)
            res = nl.copy(acc, dtype=result.dtype)
            nl.store(result[m * TILE_M:(m + 1) * TILE_M, n * TILE_N:(n + 1) * TILE_N], value=res)
    return result


MATMULS = [pytest.param(matmul_nc_kernel, id="nc_matmul"), pytest.param(matmul_nl_kernel, id="nl.matmul")]
DTYPES = [pytest.param(np.float32, id="fp32"), pytest.param(nl.bfloat16, id="bf16")]
SHAPES = [pytest.param(512, 256, 1024, id="K512-M256-N1024"), pytest.param(128, 128, 512, id="K128-one-k"),
          pytest.param(384, 128, 512, id="K384")]


def matmul_inputs(K, M, N, dtype, integers, seed=0):
    rng = np.random.default_rng(seed)
    if integers:
        a = rng.integers(-4, 5, size=(K, M)).astype(np.float32)
        b = rng.integers(-4, 5, size=(K, N)).astype(np.float32)
    else:
        a = rng.standard_normal((K, M)).astype(np.float32)
        b = rng.standard_normal((K, N)).astype(np.float32)
    return a.astype(dtype), b.astype(dtype)


def reference64(lhsT, rhs):
    return lhsT.astype(np.float64).T @ rhs.astype(np.float64)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("K,M,N", SHAPES)
@pytest.mark.parametrize("kernel", MATMULS)
def test_matmul_psum_accumulation_integers_exact(kernel, K, M, N, dtype):
    lhsT, rhs = matmul_inputs(K, M, N, dtype, integers=True)
    out = nki.simulate_kernel(kernel, lhsT, rhs)
    ref = reference64(lhsT, rhs).astype(np.float32).astype(dtype)
    assert out.dtype == ref.dtype and out.shape == (M, N)
    assert np.array_equal(out.view(np.uint8), ref.view(np.uint8))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kernel", MATMULS)
def test_matmul_psum_accumulation_random(kernel, dtype):
    K, M, N = 512, 256, 1024
    lhsT, rhs = matmul_inputs(K, M, N, dtype, integers=False, seed=1)
    out = nki.simulate_kernel(kernel, lhsT, rhs)
    ref = reference64(lhsT, rhs)
    bound = (K + 1) * 2.0 ** -24 * (np.abs(lhsT.astype(np.float64)).T @ np.abs(rhs.astype(np.float64)))
    if out.dtype != np.float32:
        bound = bound + 2.0 ** -8 * np.abs(ref)
    err = np.abs(out.astype(np.float64) - ref)
    assert np.all(err <= bound + 1e-30), f"max excess {np.max(err - bound)}"


@pytest.mark.parametrize("kernel", MATMULS)
def test_matmul_psum_restarts_for_every_output_tile(kernel):
    # All ones: every element is exactly K; a PSUM sum leaking across (m, n)
    # tiles or a k iteration counted twice would show.
    K, M, N = 384, 256, 1024
    out = nki.simulate_kernel(kernel, np.ones((K, M), np.float32), np.ones((K, N), np.float32))
    assert np.array_equal(out, np.full((M, N), K, np.float32))


@pytest.mark.parametrize("kernel", MATMULS)
def test_matmul_ir_accumulates_inside_one_k_axis(kernel):
    lhsT, rhs = matmul_inputs(512, 256, 1024, np.float32, integers=True)
    ir = kernel.trace(None, (lhsT, rhs), {}).ir
    text = ir.text(False)
    assert for_lines(text) == ["for m in affine_range(0, 2, 1)", "for n in affine_range(0, 2, 1)",
                               "for k in affine_range(0, 4, 1)"]
    lines = text.splitlines()
    k_at = next(i for i, l in enumerate(lines) if l.strip().startswith("for k in"))
    k_indent = len(lines[k_at]) - len(lines[k_at].lstrip())
    acc_lines = [i for i, l in enumerate(lines) if " += " in l]
    assert len(acc_lines) == 1  # the body is traced once
    assert acc_lines[0] > k_at
    assert len(lines[acc_lines[0]]) - len(lines[acc_lines[0]].lstrip()) > k_indent
    assert "matmul" in lines[acc_lines[0]]


# ---------------------------------------------------------------- prefix sums

@nki.jit
def prefix_sum_columns_kernel(x, it=nl.sequential_range):
    """out[:, j] = x[:, 0] + ... + x[:, j], one column per iteration."""
    P, N = x.shape
    out = nl.ndarray((P, N), dtype=x.dtype, buffer=nl.shared_hbm)
    running = nl.zeros((P, 1), dtype=nl.float32, buffer=nl.sbuf)
    for j in it(N):
        t = nl.load(x[0:P, j:j + 1])
        running[...] = nl.add(running, t)
        nl.store(out[0:P, j:j + 1], value=running)
    return out


@nki.jit
def prefix_sum_tiles_kernel(x):
    """Block prefix sum: out tile j = x tile 0 + ... + x tile j (128 x 512 tiles)."""
    P, N = x.shape
    out = nl.ndarray((P, N), dtype=x.dtype, buffer=nl.shared_hbm)
    running = nl.zeros((P, TILE_N), dtype=nl.float32, buffer=nl.sbuf)
    for j in nl.sequential_range(N // TILE_N):
        t = nl.load(x[0:P, j * TILE_N:(j + 1) * TILE_N])
        running[...] = nl.add(running, t)
        nl.store(out[0:P, j * TILE_N:(j + 1) * TILE_N], value=running)
    return out


def prefix_columns_reference(x):
    return np.cumsum(x.astype(np.float32), axis=1, dtype=np.float32).astype(x.dtype)


def prefix_tiles_reference(x):
    P, N = x.shape
    tiles = x.astype(np.float32).reshape(P, N // TILE_N, TILE_N)
    return np.cumsum(tiles, axis=1, dtype=np.float32).reshape(P, N).astype(x.dtype)


def randn(shape, seed, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32).astype(dtype)


def test_prefix_sum_sequential_range_columns():
    x = randn((128, 64), seed=10)
    out = nki.simulate_kernel(prefix_sum_columns_kernel, x)
    assert np.array_equal(out, prefix_columns_reference(x))


def test_prefix_sum_sequential_range_bf16():
    x = randn((128, 48), seed=11, dtype=nl.bfloat16)
    out = nki.simulate_kernel(prefix_sum_columns_kernel, x)
    assert out.dtype == nl.bfloat16
    # The running sum is fp32; each stored column is rounded once to bf16.
    assert np.array_equal(out.view(np.uint16), prefix_columns_reference(x).view(np.uint16))


def test_prefix_sum_sequential_range_tiles():
    x = randn((128, 4 * TILE_N), seed=12)
    out = nki.simulate_kernel(prefix_sum_tiles_kernel, x)
    assert np.array_equal(out, prefix_tiles_reference(x))


def test_prefix_sum_is_one_sequential_axis():
    x = randn((128, 64), seed=10)
    ir = prefix_sum_columns_kernel.trace(None, (x,), {}).ir
    text = ir.text(False)
    assert for_lines(text) == ["for j in sequential_range(0, 64, 1)"]
    # The body is traced once: one load and one store, inside the axis.
    assert text.count("load[dma](x[i0, j])") == 1 and text.count("= store[dma](") == 1
    unrolled = prefix_sum_columns_kernel.trace(None, (x,), {"it": nl.static_range}).ir
    assert unrolled.num_instructions() - 1 == 64 * (ir.num_instructions() - 1)


def test_prefix_sum_static_range_equals_sequential_range():
    x = randn((128, 16), seed=13)
    seq = nki.simulate_kernel(prefix_sum_columns_kernel, x)
    unrolled = nki.simulate_kernel(prefix_sum_columns_kernel, x, it=nl.static_range)
    assert np.array_equal(seq, unrolled)
    assert np.array_equal(seq, prefix_columns_reference(x))


# ---------------------------------------------------------------- Python range, both ways

def prefix_sum_builtin(x):
    P, N = x.shape
    out = nl.ndarray((P, N), dtype=x.dtype, buffer=nl.shared_hbm)
    running = nl.zeros((P, 1), dtype=nl.float32, buffer=nl.sbuf)
    for j in range(N):
        t = nl.load(x[0:P, j:j + 1])
        running[...] = nl.add(running, t)
        nl.store(out[0:P, j:j + 1], value=running)
    return out


def test_python_range_both_ways_give_identical_results(restore_options):
    x = randn((128, 32), seed=14)
    ref = prefix_columns_reference(x)

    default_kernel = nki.jit(prefix_sum_builtin)
    deferred = default_kernel.trace(None, (x,), {}).ir
    assert for_lines(deferred.text(False)) == ["for j in sequential_range(0, 32, 1)"]
    sequential = nki.simulate_kernel(default_kernel, x)

    unrolled_kernel = nki.jit(prefix_sum_builtin, trace_time_unroll_builtin_range=True)
    ir = unrolled_kernel.trace(None, (x,), {}).ir
    assert for_lines(ir.text(False)) == []
    assert ir.num_instructions() - 1 == 32 * (deferred.num_instructions() - 1)  # the memset, then 32 bodies
    unrolled = nki.simulate_kernel(unrolled_kernel, x)

    nkic.set_option("trace_time_unroll_builtin_range", True)
    globally_unrolled = nki.simulate_kernel(nki.jit(prefix_sum_builtin), x)

    assert np.array_equal(sequential, ref)
    assert np.array_equal(unrolled, sequential)
    assert np.array_equal(globally_unrolled, sequential)


# ---------------------------------------------------------------- nested affine loops over 2-D tiles

@nki.jit
def fma_tiles_kernel(a, b):
    """out = a * b + a, over 128 x 512 tiles with nested affine loops."""
    M, N = a.shape
    out = nl.ndarray((M, N), dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(M // 128):
        for j in nl.affine_range(N // 512):
            x = nl.load(a[i * 128:(i + 1) * 128, j * 512:(j + 1) * 512])
            y = nl.load(b[i * 128:(i + 1) * 128, j * 512:(j + 1) * 512])
            p = nl.multiply(x, y)
            s = nl.add(p, x)
            nl.store(out[i * 128:(i + 1) * 128, j * 512:(j + 1) * 512], value=s)
    return out


@nki.jit
def scale_ragged_tiles_kernel(a):
    """out = 3 * a over 128 x 256 tiles; the last row and column tiles are masked."""
    n, m = a.shape
    out = nl.ndarray((n, m), dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range((n + 127) // 128):
        for j in nl.affine_range((m + 255) // 256):
            i_p = i * 128 + nl.arange(128)[:, None]
            i_f = j * 256 + nl.arange(256)[None, :]
            t = nl.load(a[i_p, i_f], mask=(i_p < n) & (i_f < m))
            u = nl.multiply(t, 3.0, mask=(i_p < n) & (i_f < m))
            nl.store(out[i_p, i_f], value=u, mask=(i_p < n) & (i_f < m))
    return out


def test_nested_affine_loops_fp32_exact():
    a, b = randn((384, 1536), seed=20), randn((384, 1536), seed=21)
    out = nki.simulate_kernel(fma_tiles_kernel, a, b)
    assert np.array_equal(out, a * b + a)
    text = fma_tiles_kernel.trace(None, (a, b), {}).ir.text(False)
    assert for_lines(text) == ["for i in affine_range(0, 3, 1)", "for j in affine_range(0, 3, 1)"]


def test_nested_affine_loops_bf16_rounds_each_op():
    a, b = randn((256, 1024), seed=22, dtype=nl.bfloat16), randn((256, 1024), seed=23, dtype=nl.bfloat16)
    out = nki.simulate_kernel(fma_tiles_kernel, a, b)
    # Each op computes in fp32 and rounds its bf16 output once.
    p = (a.astype(np.float32) * b.astype(np.float32)).astype(nl.bfloat16)
    ref = (p.astype(np.float32) + a.astype(np.float32)).astype(nl.bfloat16)
    assert np.array_equal(out.view(np.uint16), ref.view(np.uint16))


@pytest.mark.parametrize("n,m", [(300, 700), (128, 256), (100, 50), (257, 513)])
def test_nested_affine_loops_ragged_2d(n, m):
    a = randn((n, m), seed=24)
    out = nki.simulate_kernel(scale_ragged_tiles_kernel, a, check_uninitialized=True)
    assert np.array_equal(out, a * np.float32(3.0))


@nki.jit
def row_tile_prefix_kernel(x):
    """Independent row tiles (affine), each a sequential prefix sum over columns."""
    M, N = x.shape
    out = nl.ndarray((M, N), dtype=x.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(M // 128):
        running = nl.zeros((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        for j in nl.sequential_range(N):
            t = nl.load(x[i * 128:(i + 1) * 128, j:j + 1])
            running[...] = nl.add(running, t)
            nl.store(out[i * 128:(i + 1) * 128, j:j + 1], value=running)
    return out


def test_affine_loop_of_sequential_prefix_sums():
    x = randn((384, 24), seed=25)
    out = nki.simulate_kernel(row_tile_prefix_kernel, x)
    assert np.array_equal(out, prefix_columns_reference(x))
    text = row_tile_prefix_kernel.trace(None, (x,), {}).ir.text(False)
    assert for_lines(text) == ["for i in affine_range(0, 3, 1)", "for j in sequential_range(0, 24, 1)"]


@nki.jit
def reverse_tiles_kernel(a):
    """A negative-step affine loop: out tile i = a tile (T-1-i)."""
    M, N = a.shape
    T = M // 128
    out = nl.ndarray((M, N), dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(T - 1, -1, -1):
        t = nl.load(a[(T - 1 - i) * 128:(T - i) * 128, 0:N])
        nl.store(out[i * 128:(i + 1) * 128, 0:N], value=t)
    return out


def test_negative_step_affine_loop():
    a = randn((512, 64), seed=26)
    out = nki.simulate_kernel(reverse_tiles_kernel, a, check_races=True)
    assert np.array_equal(out, a.reshape(4, 128, 64)[::-1].reshape(512, 64))
    text = reverse_tiles_kernel.trace(None, (a,), {}).ir.text(False)
    assert for_lines(text) == ["for i in affine_range(3, -1, -1)"]
