"""Transposes written with index patterns and with nl.transpose.

1. transpose2d_kernel (tutorial "transpose2d" idea): each partition holds an
   sz_f1 x sz_f2 matrix flattened along its free dim; a 3-D index grid
   (i_p0, i_f1, i_f2) reads in_tile[i_p0, i_f1*sz_f2 + i_f2] and writes
   out_tile[i_p0, i_f2*sz_f1 + i_f1], i.e. a free-dim transpose per partition.
2. tile_transpose_kernel: partition <-> free transpose of 128 x 128 blocks of an
   HBM matrix with nl.transpose (blocks swap places too: out block (j, i) is
   in block (i, j) transposed).
3. store_swapped_kernel: a [P, F] tile stored through swapped arange indices,
   out[i_f, i_p] = tile[i_p, i_f] (a transposing DMA access pattern).
4. load_transpose_kernel: nl.load_transpose2d.

Every variant only moves data, so the result must equal numpy's transpose
exactly (bit for bit) in fp32 and bf16.
"""
import numpy as np
import pytest

from neuronxcc import nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa  # noqa: F401


@nki.jit
def transpose2d_kernel(in_tensor, shape2D):
    sz_p, sz_f = in_tensor.shape
    sz_f1, sz_f2 = shape2D
    assert sz_f1 * sz_f2 == sz_f
    out = nl.ndarray((sz_p, sz_f), dtype=in_tensor.dtype, buffer=nl.shared_hbm)

    i_p0 = nl.arange(sz_p)[:, None, None]
    i_f1 = nl.arange(sz_f1)[None, :, None]
    i_f2 = nl.arange(sz_f2)[None, None, :]

    in_tile = nl.load(in_tensor)
    out_tile = nl.ndarray((sz_p, sz_f2 * sz_f1), dtype=in_tensor.dtype)
    out_tile[i_p0, i_f2 * sz_f1 + i_f1] = nl.copy(in_tile[i_p0, i_f1 * sz_f2 + i_f2])
    nl.store(out, value=out_tile)
    return out


@nki.jit
def tile_transpose_kernel(in_tensor):
    n_rows, n_cols = in_tensor.shape
    out = nl.ndarray((n_cols, n_rows), dtype=in_tensor.dtype, buffer=nl.shared_hbm)
    TILE = nl.tile_size.pmax
    i_p = nl.arange(TILE)[:, None]
    i_f = nl.arange(TILE)[None, :]
    for bi in nl.affine_range(n_rows // TILE):
        for bj in nl.affine_range(n_cols // TILE):
            blk = nl.load(in_tensor[bi * TILE + i_p, bj * TILE + i_f])
            blk_t = nl.transpose(blk)
            # The transpose lands in PSUM; copy it back to SBUF before the store.
            blk_t_sb = nl.copy(blk_t, dtype=in_tensor.dtype)
            nl.store(out[bj * TILE + i_p, bi * TILE + i_f], value=blk_t_sb)
    return out


@nki.jit
def store_swapped_kernel(in_tensor):
    sz_p, sz_f = in_tensor.shape
    out = nl.ndarray((sz_f, sz_p), dtype=in_tensor.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(sz_p)[:, None]
    i_f = nl.arange(sz_f)[None, :]
    tile = nl.load(in_tensor[i_p, i_f])
    nl.store(out[i_f, i_p], value=tile)
    return out


@nki.jit
def load_transpose_kernel(in_tensor):
    sz_f, sz_p = in_tensor.shape
    out = nl.ndarray((sz_p, sz_f), dtype=in_tensor.dtype, buffer=nl.shared_hbm)
    tile = nl.load_transpose2d(in_tensor)
    nl.store(out, value=tile)
    return out


def transpose2d_reference(x, shape2D):
    p = x.shape[0]
    f1, f2 = shape2D
    return x.reshape(p, f1, f2).transpose(0, 2, 1).reshape(p, f1 * f2)


def make_input(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape).astype(np.float32).astype(dtype)


def assert_bitwise(out, ref):
    assert out.dtype == ref.dtype and out.shape == ref.shape
    assert np.array_equal(out.view(np.uint8), ref.view(np.uint8))


DTYPES = [pytest.param(np.float32, id="fp32"), pytest.param(nl.bfloat16, id="bf16")]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("sz_p,shape2D", [(128, (64, 32)), (96, (8, 5)), (128, (1, 16))])
def test_transpose2d_free_dim(sz_p, shape2D, dtype):
    x = make_input((sz_p, shape2D[0] * shape2D[1]), dtype)
    out = nki.simulate_kernel(transpose2d_kernel, x, shape2D)
    assert_bitwise(out, transpose2d_reference(x, shape2D))


@pytest.mark.parametrize("dtype", DTYPES)
def test_tile_transpose_blocks(dtype):
    x = make_input((256, 384), dtype, seed=1)
    out = nki.simulate_kernel(tile_transpose_kernel, x)
    assert_bitwise(out, np.ascontiguousarray(x.T))


@pytest.mark.parametrize("dtype", DTYPES)
def test_store_with_swapped_indices(dtype):
    x = make_input((128, 96), dtype, seed=2)
    out = nki.simulate_kernel(store_swapped_kernel, x)
    assert_bitwise(out, np.ascontiguousarray(x.T))


@pytest.mark.parametrize("dtype", DTYPES)
def test_load_transpose2d(dtype):
    x = make_input((64, 128), dtype, seed=3)
    out = nki.simulate_kernel(load_transpose_kernel, x)
    assert_bitwise(out, np.ascontiguousarray(x.T))
