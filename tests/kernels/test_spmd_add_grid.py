"""SPMD tensor add, NKI-tutorial style: every program instance of the launch grid
owns one tile of the output and derives its tile offsets from nl.program_id.

Three launch shapes are covered:
  * a 2-D grid, one 128 x F tile per instance (F = cols / num_programs(1)),
  * a 1-D grid over row tiles with an inner nl.affine_range over 512-wide column
    chunks, tiles addressed with nl.ds(program_id * 128, 128),
  * the same 1-D kernel under @nki.jit(mode="simulation").

The add runs in fp32 and rounds once to the output dtype, so fp32 results equal
numpy bit for bit and bf16 results equal (a32 + b32).astype(bf16) bit for bit.
"""
import numpy as np
import pytest

from neuronxcc import nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa  # noqa: F401  (the import every NKI kernel file has)


@nki.jit
def add_grid2d_kernel(a_input, b_input):
    """Grid (rows/128, k): instance (i, j) adds rows [128 i, 128 i + 128) and
    columns [F j, F j + F) with F = cols / k."""
    n_rows, n_cols = a_input.shape
    out = nl.ndarray((n_rows, n_cols), dtype=a_input.dtype, buffer=nl.shared_hbm)
    tile_f = n_cols // nl.num_programs(1)

    i_p = nl.program_id(0) * nl.tile_size.pmax + nl.arange(nl.tile_size.pmax)[:, None]
    i_f = nl.program_id(1) * tile_f + nl.arange(tile_f)[None, :]

    a_tile = nl.load(a_input[i_p, i_f])
    b_tile = nl.load(b_input[i_p, i_f])
    c_tile = nl.add(a_tile, b_tile)
    nl.store(out[i_p, i_f], value=c_tile)
    return out


def add_rows_kernel(a_input, b_input):
    """Grid (rows/128,): instance i adds row tile i, 512 columns per loop step."""
    n_rows, n_cols = a_input.shape
    out = nl.ndarray((n_rows, n_cols), dtype=a_input.dtype, buffer=nl.shared_hbm)
    row0 = nl.program_id(0) * nl.tile_size.pmax
    chunk = 512
    for j in nl.affine_range(n_cols // chunk):
        a_tile = nl.load(a_input[nl.ds(row0, nl.tile_size.pmax), nl.ds(j * chunk, chunk)])
        b_tile = nl.load(b_input[nl.ds(row0, nl.tile_size.pmax), nl.ds(j * chunk, chunk)])
        nl.store(out[nl.ds(row0, nl.tile_size.pmax), nl.ds(j * chunk, chunk)], value=a_tile + b_tile)
    return out


add_rows_jit = nki.jit(add_rows_kernel)
add_rows_sim = nki.jit(mode="simulation")(add_rows_kernel)


def make_inputs(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape).astype(np.float32).astype(dtype)
    b = rng.standard_normal(shape).astype(np.float32).astype(dtype)
    return a, b


def reference(a, b):
    """numpy: fp32 add, one rounding to the input dtype."""
    return (a.astype(np.float32) + b.astype(np.float32)).astype(a.dtype)


def assert_bitwise(out, ref):
    assert isinstance(out, np.ndarray)
    assert out.dtype == ref.dtype and out.shape == ref.shape
    assert np.array_equal(out.view(np.uint8), ref.view(np.uint8))


@pytest.mark.parametrize("dtype", [np.float32, nl.bfloat16], ids=["fp32", "bf16"])
@pytest.mark.parametrize("grid,shape", [((4, 2), (512, 1024)), ((1, 4), (128, 2048)), ((3, 1), (384, 256))],
                         ids=["4x2", "1x4", "3x1"])
def test_add_grid2d(grid, shape, dtype):
    a, b = make_inputs(shape, dtype)
    out = nki.simulate_kernel(add_grid2d_kernel[grid], a, b)
    assert_bitwise(out, reference(a, b))


@pytest.mark.parametrize("dtype", [np.float32, nl.bfloat16], ids=["fp32", "bf16"])
def test_add_rows_grid1d_simulate_kernel(dtype):
    a, b = make_inputs((512, 1536), dtype, seed=1)
    out = nki.simulate_kernel(add_rows_jit[4], a, b)
    assert_bitwise(out, reference(a, b))


def test_add_rows_grid1d_jit_simulation_mode():
    a, b = make_inputs((256, 1024), np.float32, seed=2)
    out = add_rows_sim[2](a, b)
    assert_bitwise(out, reference(a, b))


def test_every_instance_writes_its_own_tile():
    # Inputs that encode the (row, col) position: a wrong tile offset for any
    # program id would land a value in the wrong place and change the result.
    rows, cols = 512, 1024
    a = (np.arange(rows, dtype=np.float32)[:, None] * 4096.0).repeat(cols, axis=1)
    b = np.tile(np.arange(cols, dtype=np.float32), (rows, 1))
    out = nki.simulate_kernel(add_grid2d_kernel[4, 2], a, b)
    assert_bitwise(out, a + b)


@nki.jit
def add_ragged_grid_kernel(a_input, b_input):
    """Grid (ceil(rows/128),): the last instance's tile sticks out of the tensor
    and is cut with a mask on program_id-based row indices."""
    n_rows, n_cols = a_input.shape
    out = nl.ndarray((n_rows, n_cols), dtype=a_input.dtype, buffer=nl.shared_hbm)
    i_p = nl.program_id(0) * 128 + nl.arange(128)[:, None]
    i_f = nl.arange(n_cols)[None, :]
    a_tile = nl.load(a_input[i_p, i_f], mask=(i_p < n_rows))
    b_tile = nl.load(b_input[i_p, i_f], mask=(i_p < n_rows))
    nl.store(out[i_p, i_f], value=nl.add(a_tile, b_tile, mask=(i_p < n_rows)), mask=(i_p < n_rows))
    return out


@pytest.mark.parametrize("dtype", [np.float32, nl.bfloat16], ids=["fp32", "bf16"])
@pytest.mark.parametrize("n_rows", [1000, 300, 5])
def test_add_ragged_rows_over_grid(n_rows, dtype):
    a, b = make_inputs((n_rows, 256), dtype, seed=3)
    grid = (n_rows + 127) // 128
    out = nki.simulate_kernel(add_ragged_grid_kernel[grid], a, b, check_uninitialized=True)
    assert_bitwise(out, reference(a, b))
