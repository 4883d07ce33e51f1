"""Index materialisation and selection:
  * nisa.iota of 1-D and 2-D affine expressions of nl.arange (int32 and fp32);
  * nl.where(x > 0, x, alpha * x) (leaky relu) and nl.where with a scalar y;
  * nisa.affine_select(pred=(i_f <= i_p + offset), tile, on_false) for a
    lower-triangular (causal) mask, including a per-tile diagonal offset;
  * nl.broadcast_to of a [1, d] row to [128, d], and nl.full / nisa.memset.
All of these only move, compare or select values (iota's int32 values are exact in
fp32 below 2^24), so every comparison with numpy is exact.
"""
import numpy as np
import pytest

from neuronxcc import nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def iota_kernel(n_rows, n_cols):
    col = nl.ndarray((128, 1), dtype=nl.int32, buffer=nl.shared_hbm)
    grid_i = nl.ndarray((n_rows, n_cols), dtype=nl.int32, buffer=nl.shared_hbm)
    grid_f = nl.ndarray((n_rows, n_cols), dtype=nl.float32, buffer=nl.shared_hbm)
    i_p = nl.arange(n_rows)[:, None]
    i_f = nl.arange(n_cols)[None, :]
    nl.store(col, value=nisa.iota(5 + 2 * nl.arange(128)[:, None], dtype=nl.int32))
    nl.store(grid_i, value=nisa.iota(i_p * n_cols + i_f, dtype=nl.int32))
    nl.store(grid_f, value=nisa.iota(3 * i_f - i_p + 7, dtype=nl.float32))
    return col, grid_i, grid_f


@nki.jit
def leaky_relu_kernel(x, alpha):
    n, d = x.shape
    out = nl.ndarray((n, d), dtype=x.dtype, buffer=nl.shared_hbm)
    clipped = nl.ndarray((n, d), dtype=x.dtype, buffer=nl.shared_hbm)
    i_f = nl.arange(d)[None, :]
    for t in nl.affine_range(n // 128):
        i_p = t * 128 + nl.arange(128)[:, None]
        tile = nl.load(x[i_p, i_f])
        pos = nl.greater(tile, 0.0)
        y = nl.where(pos, tile, nl.multiply(tile, alpha))
        nl.store(out[i_p, i_f], value=y)
        # where with a scalar y: values above 1 replaced by 1
        nl.store(clipped[i_p, i_f], value=nl.where(tile <= 1.0, tile, 1.0))
    return out, clipped


@nki.jit
def causal_select_kernel(x, on_false):
    """Row tile t keeps column j of row i (global row r = 128 t + i) iff j <= r."""
    n, d = x.shape
    out = nl.ndarray((n, d), dtype=x.dtype, buffer=nl.shared_hbm)
    i_f = nl.arange(d)[None, :]
    for t in nl.affine_range(n // 128):
        i_p = nl.arange(128)[:, None]
        tile = nl.load(x[t * 128 + i_p, i_f])
        kept = nisa.affine_select(pred=(i_f <= t * 128 + i_p), on_true_tile=tile, on_false_value=on_false)
        nl.store(out[t * 128 + i_p, i_f], value=kept)
    return out


@nki.jit
def broadcast_fill_kernel(row, value):
    _, d = row.shape
    bcast = nl.ndarray((128, d), dtype=row.dtype, buffer=nl.shared_hbm)
    filled = nl.ndarray((128, d), dtype=nl.float32, buffer=nl.shared_hbm)
    memset = nl.ndarray((64, d), dtype=nl.bfloat16, buffer=nl.shared_hbm)
    r = nl.load(row)
    nl.store(bcast, value=nl.broadcast_to(r, shape=(128, d)))
    nl.store(filled, value=nl.full((128, d), value, dtype=nl.float32))
    nl.store(memset, value=nisa.memset((64, d), value, dtype=nl.bfloat16))
    return bcast, filled, memset


def test_iota():
    col, grid_i, grid_f = nki.simulate_kernel(iota_kernel, 96, 40)
    assert col.dtype == np.int32 and grid_i.dtype == np.int32 and grid_f.dtype == np.float32
    assert np.array_equal(col[:, 0], 5 + 2 * np.arange(128))
    p = np.arange(96)[:, None]
    f = np.arange(40)[None, :]
    assert np.array_equal(grid_i, p * 40 + f)
    assert np.array_equal(grid_f, (3 * f - p + 7).astype(np.float32))


@pytest.mark.parametrize("dtype", [np.float32, nl.bfloat16], ids=["fp32", "bf16"])
def test_leaky_relu_where(dtype):
    rng = np.random.default_rng(0)
    x = (2 * rng.standard_normal((256, 200))).astype(np.float32).astype(dtype)
    out, clipped = nki.simulate_kernel(leaky_relu_kernel, x, 0.125)
    x32 = x.astype(np.float32)
    # alpha = 1/8: x * alpha is exact (power of two), so the result is exact.
    assert np.array_equal(out, np.where(x32 > 0, x32, x32 * 0.125).astype(dtype))
    assert np.array_equal(clipped, np.where(x32 <= 1.0, x32, 1.0).astype(dtype))


@pytest.mark.parametrize("on_false", [0.0, nl.fp32.min], ids=["zero", "fp32.min"])
def test_causal_affine_select(on_false):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((256, 320)).astype(np.float32)
    out = nki.simulate_kernel(causal_select_kernel, x, on_false)
    r = np.arange(256)[:, None]
    j = np.arange(320)[None, :]
    assert np.array_equal(out, np.where(j <= r, x, np.float32(on_false)))


def test_broadcast_full_memset():
    rng = np.random.default_rng(2)
    row = rng.standard_normal((1, 384)).astype(np.float32)
    bcast, filled, memset = nki.simulate_kernel(broadcast_fill_kernel, row, 2.5)
    assert np.array_equal(bcast, np.repeat(row, 128, axis=0))
    assert np.array_equal(filled, np.full((128, 384), 2.5, np.float32))
    assert memset.dtype == nl.bfloat16 and np.array_equal(memset.astype(np.float32), np.full((64, 384), 2.5))
