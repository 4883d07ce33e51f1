"""NKI 0.7's tile grids (NKI_07_08_API.md §4): nl.tiles, nl.blocks, nl.alloc_tiles and
nl.alloc_blocks, their attributes, selection and regrouping, `.data` as the operand of
instructions (checked against numpy), one allocation in the SBUF/PSUM capacity check, one
DMA per block in the cost model, and every rule as a diagnostic at the user's line."""
import warnings

import numpy as np
import pytest

import nki
import nki.isa as nisa
import nki.language as nl
import nkic
from nki_test_util import Markers, check_diag, trace_error

M = Markers(__file__)
RNG = np.random.default_rng(7)


def test_tiles_of_300_by_700_clamp_the_last_row_and_column():
    seen = {}

    @nki.jit
    def exp_by_tiles(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        g = nl.tiles(x, tile_shape=(128, 256))
        o = nl.tiles(out, tile_shape=(128, 256))
        seen["grid"] = (type(g), g.shape, g.tile_shape, g.block_shape, g.element_shape, g.index_step_elements,
                        g.is_remainder, g.is_data_representable, g.dtype, g.buffer)
        seen["last"] = (g[2, 2].element_shape, g[2, 2].is_remainder, g[2, 2].shape, g[0, 0].is_remainder)
        for i in range(g.shape[0]):
            for j in range(g.shape[1]):
                sel = g[i, j]
                t = nl.ndarray(sel.element_shape, x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=sel.data)
                nisa.activation(dst=t, op=nl.exp, data=t)
                nisa.dma_copy(dst=o[i, j].data, src=t)
        return out

    x = RNG.random((300, 700), dtype=np.float32)
    np.testing.assert_allclose(nki.simulate(exp_by_tiles)(x), np.exp(x), rtol=1e-6)
    assert seen["grid"] == (nl.NkiTileGrid, (3, 3), (128, 256), None, (300, 700), (128, 256), True, True,
                            nl.float32, nl.hbm)  # a kernel input is an nl.hbm tensor
    assert seen["last"] == ((44, 188), True, (), False)


def test_a_block_of_four_tiles_moves_in_one_dma_and_its_tiles_compute():
    seen = {}

    @nki.jit
    def blocks_kernel(x):
        out = nl.ndarray((128, 2048), dtype=x.dtype, buffer=nl.shared_hbm)
        bx = nl.blocks(x, tile_shape=(128, 512), block_shape=(1, 4))
        buf = nl.alloc_blocks(tile_shape=(128, 512), block_shape=(1, 4), element_shape=(128, 2048),
                              buffer=nl.sbuf, dtype=x.dtype)
        nisa.dma_copy(dst=buf.data, src=bx[0, 0].data)
        inner = nl.tiles(buf)
        seen["grids"] = (type(bx), type(bx[0, 0]), bx.shape, bx.block_shape, bx.index_step_elements, type(inner),
                         inner.shape, buf.buffer, buf.data.shape)
        nisa.activation(dst=inner[0, 2].data, op=nl.exp, data=inner[0, 2].data)
        nisa.dma_copy(dst=out, src=buf.data)
        return out

    x = RNG.random((128, 2048), dtype=np.float32)
    expect = x.copy()
    expect[:, 1024:1536] = np.exp(expect[:, 1024:1536])
    np.testing.assert_allclose(nki.simulate(blocks_kernel)(x), expect, rtol=1e-6)
    assert seen["grids"] == (nl.NkiBlockGrid, nl.NkiBlockGrid, (1, 1), (1, 4), (128, 2048), nl.NkiTileGrid, (1, 4),
                             nl.sbuf, (128, 2048))
    # One DMA in (the block), one out; the cost model charges the block as one transfer.
    assert nkic.profile(blocks_kernel, x).engines["dma"].instructions == 2


def dma_in(tile_count, per_tile):
    """A (128, 2048) fp32 row moved into SBUF as tiles of (128, 512) (2 KiB per partition):
    one DMA of the block of `tile_count`, or one DMA per tile."""

    @nki.jit
    def kernel(x):
        buf = nl.alloc_tiles(tile_shape=(128, 512), element_shape=(128, 2048), buffer=nl.sbuf, dtype=x.dtype)
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        if per_tile:
            gx = nl.tiles(x, tile_shape=(128, 512))
            for j in range(tile_count):
                nisa.dma_copy(dst=buf[0, j].data, src=gx[0, j].data)
        else:
            bx = nl.blocks(x, tile_shape=(128, 512), block_shape=(1, tile_count))
            nisa.dma_copy(dst=buf.data, src=bx[0, 0].data)
        nisa.dma_copy(dst=out, src=buf.data)
        return out

    return kernel


def test_the_cost_model_charges_one_dma_per_block_not_per_tile():
    x = RNG.random((128, 2048), dtype=np.float32)
    block, tiles = dma_in(4, False), dma_in(4, True)
    pb, pt = nkic.profile(block, x), nkic.profile(tiles, x)
    assert pb.engines["dma"].instructions == 2 and pt.engines["dma"].instructions == 5
    assert pb.latency_us < pt.latency_us
    np.testing.assert_array_equal(nki.simulate(block)(x), x)
    np.testing.assert_array_equal(nki.simulate(tiles)(x), x)


def test_rows_columns_negative_indices_and_regrouping_read_what_numpy_slices():
    seen = {}

    @nki.jit
    def kernel(x):
        g = nl.tiles(x, tile_shape=(128, 256))
        row, col = g[-1, :], g[:, 1]
        blocks = nl.blocks(g, block_shape=(2, 2))
        corner = nl.tiles(blocks[1, 1])
        retiled = nl.tiles(g[0:2, 1:], tile_shape=(64, 100))
        seen["shapes"] = (row.shape, row.element_shape, col.shape, col.element_shape, blocks.shape,
                          blocks.index_step_elements, corner.shape, corner.element_shape, retiled.shape,
                          retiled[-1, -1].element_shape, g[1:, -2:].shape, g[np.int32(-1), 0].element_shape)
        outs = []
        for sel in (row[1], col[-1], corner[0, 0], retiled[3, 4], blocks[0, 0]):
            o = nl.ndarray(sel.element_shape, x.dtype, buffer=nl.shared_hbm)
            nisa.dma_copy(dst=o, src=sel.data)
            outs.append(o)
        return tuple(outs)

    x = RNG.random((300, 700), dtype=np.float32)
    got = nki.simulate(kernel)(x)
    assert seen["shapes"] == ((3,), (44, 700), (3,), (300, 256), (2, 2), (256, 512), (1, 1), (44, 188), (4, 5),
                              (64, 44), (2, 2), (44, 256))
    expect = (x[256:, 256:512], x[256:300, 256:512], x[256:, 512:], x[192:256, 656:700], x[0:256, 0:512])
    for g, e in zip(got, expect):
        np.testing.assert_array_equal(g, e)


def test_leading_dims_are_untiled_slabs():
    seen = {}

    @nki.jit
    def kernel(x):
        g = nl.tiles(x, tile_shape=(128, 64))
        slab = g[1]
        seen["shapes"] = (g.shape, g.index_step_elements, slab.shape, slab.element_shape, slab[0, 1].data.shape)
        t = nl.ndarray((128, 64), x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=slab[0, 1].data)
        out = nl.ndarray((128, 64), x.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=t)
        return out

    x = RNG.random((3, 128, 128), dtype=np.float32)
    np.testing.assert_array_equal(nki.simulate(kernel)(x), x[1, :, 64:])
    assert seen["shapes"] == ((3, 1, 2), (1, 128, 64), (1, 2), (1, 128, 128), (128, 64))


def test_grid_data_is_dst_and_src_of_compute_and_matmul_into_psum_tiles():
    @nki.jit
    def kernel(a, b):
        # a: (128, 256) stationary (K=128, M=256 as two tiles of 128), b: (128, 512) moving.
        sa = nl.alloc_tiles(tile_shape=(128, 128), element_shape=(128, 256), buffer=nl.sbuf, dtype=a.dtype)
        sb = nl.alloc_tiles(tile_shape=(128, 512), element_shape=(128, 512), buffer=nl.sbuf, dtype=b.dtype)
        nisa.dma_copy(dst=sa[0, :].data, src=a)
        nisa.dma_copy(dst=sb.data, src=b)
        acc = nl.alloc_tiles(tile_shape=(128, 512), element_shape=(256, 512), buffer=nl.psum, dtype=nl.float32)
        res = nl.alloc_tiles(tile_shape=(128, 512), element_shape=(256, 512), buffer=nl.sbuf, dtype=nl.float32)
        for m in range(2):
            nisa.nc_matmul(dst=acc[m, 0].data, stationary=nl.tiles(sa)[0, m].data, moving=sb[0, 0].data)
            nisa.activation(dst=res[m, 0].data, op=nl.copy, data=acc[m, 0].data, scale=0.5)
            nisa.tensor_tensor(dst=res[m, 0].data, data1=res[m, 0].data, data2=res[m, 0].data, op=nl.add)
        out = nl.ndarray((256, 512), nl.float32, buffer=nl.shared_hbm)
        o = nl.tiles(out, tile_shape=(128, 512))
        for m in range(2):
            nisa.dma_copy(dst=o[m, 0].data, src=res[m, 0].data)
        return out

    a = RNG.integers(-2, 3, (128, 256)).astype(np.float32)
    b = RNG.integers(-2, 3, (128, 512)).astype(np.float32)
    np.testing.assert_array_equal(nki.simulate(kernel)(a, b), a.T @ b)


def test_a_tensor_is_its_own_data():
    @nki.jit
    def kernel(x):
        t = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t.data, src=x.data)
        out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out.data, src=t.data)
        return out

    x = RNG.random((128, 64), dtype=np.float32)
    np.testing.assert_array_equal(nki.simulate(kernel)(x), x)


def test_tiles_of_an_on_chip_tensor_are_views_of_its_own_layout():
    @nki.jit
    def kernel(x):
        t = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x)
        g = nl.tiles(t, tile_shape=(64, 256))
        nisa.activation(dst=g[1, 1].data, op=nl.exp, data=g[1, 1].data)
        out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=t)
        return out

    x = RNG.random((128, 512), dtype=np.float32)
    expect = x.copy()
    expect[64:, 256:] = np.exp(x[64:, 256:])
    np.testing.assert_allclose(nki.simulate(kernel)(x), expect, rtol=1e-6)


def test_an_allocation_is_placed_by_address_as_a_tensor_is():
    @nki.jit
    def placed(x):
        buf = nl.alloc_tiles(tile_shape=(128, 512), element_shape=(128, 1024), buffer=nl.sbuf, dtype=x.dtype,
                             address=(0, 4096))
        nisa.dma_copy(dst=buf[0, 1].data, src=x)
        out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=buf[0, 1].data)
        return out

    x = RNG.random((128, 512), dtype=np.float32)
    np.testing.assert_array_equal(nki.simulate(placed)(x), x)

    @nki.jit
    def too_far(x):
        buf = nl.alloc_tiles(tile_shape=(128, 512), element_shape=(128, 1024), buffer=nl.sbuf,  # ERR:address
                             dtype=x.dtype, address=(0, 210000))
        nisa.dma_copy(dst=buf[0, 0].data, src=x)
        return x

    check_diag(trace_error(too_far, x), M, "err_address_out_of_range",
               "address= of 'buf' does not fit: bytes 210000..214095 of a 212984-byte partition on trn2",
               [("address", "nl.")])


def test_an_on_chip_multi_row_selection_is_not_representable():
    seen = {}

    @nki.jit
    def kernel(x):
        buf = nl.alloc_tiles(tile_shape=(128, 256), element_shape=(300, 700), buffer=nl.sbuf, dtype=x.dtype)
        seen["flags"] = (buf.is_data_representable, buf[1, :].is_data_representable, buf[:, 1].is_data_representable)
        return buf.data  # ERR:rows

    check_diag(trace_error(kernel, np.zeros((300, 700), np.float32)), M, "err_grid_data_not_representable",
               "the grid selection is not one access pattern, so it has no .data: it spans tile rows 0 to 2 of the "
               "partition dim, and on chip those rows lie side by side along the free dim of the same partitions",
               [("rows", "buf")])
    assert seen["flags"] == (False, True, False)


def test_a_grid_allocation_enters_the_psum_capacity_check():
    @nki.jit
    def kernel(x):
        acc = nl.alloc_tiles(tile_shape=(128, 512), element_shape=(128, 512 * 5), buffer=nl.psum,  # ERR:psum_acc
                             dtype=nl.float32)
        more = nl.alloc_tiles(tile_shape=(128, 512), element_shape=(256, 512 * 2), buffer=nl.psum,  # ERR:psum_more
                              dtype=nl.float32)
        nisa.memset(dst=acc[0, :].data, value=0.0)
        nisa.memset(dst=more[0, :].data, value=0.0)  # ERR:psum_set
        t = nl.ndarray((128, 512), nl.float32, buffer=nl.sbuf)
        nisa.tensor_copy(dst=t, src=acc[0, 0].data)
        return x

    e = trace_error(kernel, np.zeros((128, 512), np.float32))
    # 5 banks, and 4 full-size slots of the (256, 1024) grid: 9 of the 8 banks.
    check_diag(e, M, "err_psum_over_capacity",
               "PSUM needs 9 banks of 2048 bytes per partition live at once here, more than the 8 target 'trn2' has; "
               "live: 'acc' (line %d, 10240 bytes), 'more' (line %d, 8192 bytes)"
               % (M.line("psum_acc"), M.line("psum_more")),
               [("psum_set", "nisa.")], notes=[("psum_acc", "nl.", "acc"), ("psum_more", "nl.", "more")])


def test_one_grid_allocation_larger_than_its_buffer_is_refused_as_a_tensor_is():
    @nki.jit
    def kernel(x):
        nl.alloc_tiles(tile_shape=(128, 512), element_shape=(128, 512 * 9), buffer=nl.psum,  # ERR:psum_big
                       dtype=nl.float32)
        return x

    check_diag(trace_error(kernel, np.zeros((128, 512), np.float32)), M, "err_stack_overflow_psum",
               "Size of free dimensions 18432 bytes per partition on PSUM buffer exceeds the 16384 bytes per "
               "partition of trn2", [("psum_big", "nl.")])


def test_grid_allocations_over_sbuf_warn_of_the_spill():
    @nki.jit
    def kernel(x):
        a = nl.alloc_tiles(tile_shape=(128, 512), element_shape=(128, 512 * 64), buffer=nl.sbuf,  # ERR:sbuf_a
                           dtype=x.dtype)
        b = nl.alloc_blocks(tile_shape=(128, 512), block_shape=(1, 2), element_shape=(128, 512 * 64),  # ERR:sbuf_b
                            buffer=nl.sbuf, dtype=x.dtype)
        nisa.memset(dst=a[0, :].data, value=0.0)
        nisa.memset(dst=b[0, :].data, value=0.0)  # ERR:sbuf_set
        nisa.tensor_tensor(dst=a[0, :].data, data1=a[0, :].data, data2=b[0, :].data, op=nl.add)
        return x

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        nki.jit(kernel).trace(None, (np.zeros((128, 512), np.float32),), {})
    [w] = [w for w in caught if str(w.message).startswith("[warn_sbuf_spill]")]
    assert str(w.message) == (
        "[warn_sbuf_spill] SBUF holds 262144 bytes per partition live here, more than the 212984 target 'trn2' has: "
        "the compiler spills 49160 bytes per partition to HBM and reloads them; live: 'a' (line %d, 131072 bytes), "
        "'b' (line %d, 131072 bytes)" % (M.line("sbuf_a"), M.line("sbuf_b"))), str(w.message)
    assert M.same_file(w.filename) and w.lineno == M.line("sbuf_set")


def test_grids_are_made_by_the_factories_only():
    @nki.jit
    def kernel(x):
        return nl.NkiTileGrid()  # ERR:construct

    check_diag(trace_error(kernel, np.zeros((128, 512), np.float32)), M, "err_unsupported_args",
               "'NkiTileGrid': is made by nl.tiles, nl.blocks, nl.alloc_tiles or nl.alloc_blocks, not constructed",
               [("construct", "nl.")])
    assert issubclass(nl.NkiTileGrid, nl.NkiGrid) and issubclass(nl.NkiBlockGrid, nl.NkiGrid)


X = np.zeros((300, 700), np.float32)


@nki.jit
def list_shape(x):
    nl.tiles(x, tile_shape=[128, 256])  # ERR:list_shape
    return x


@nki.jit
def np_int(x):
    nl.tiles(x, tile_shape=(np.int64(128), 256))  # ERR:np_int
    return x


@nki.jit
def bool_dim(x):
    nl.alloc_tiles(tile_shape=(128, 256), element_shape=(True, 256), buffer=nl.sbuf, dtype=nl.float32)  # ERR:bool_dim
    return x


@nki.jit
def one_dim(x):
    nl.tiles(x, tile_shape=(128,))  # ERR:one_dim
    return x


@nki.jit
def high_rank(x):
    nl.tiles(x, tile_shape=(1, 128, 256))  # ERR:high_rank
    return x


@nki.jit
def zero(x):
    nl.tiles(x, tile_shape=(0, 256))  # ERR:zero
    return x


@nki.jit
def no_tile(x):
    nl.tiles(x)  # ERR:no_tile
    return x


@nki.jit
def block_rank(x):
    nl.blocks(x, tile_shape=(128, 256), block_shape=(2,))  # ERR:block_rank
    return x


@nki.jit
def partitions(x):
    nl.alloc_tiles(tile_shape=(256, 256), element_shape=(256, 256), buffer=nl.sbuf, dtype=nl.float32)  # ERR:partitions
    return x


@nki.jit
def elements(x):
    nl.alloc_tiles(tile_shape=(128, 256), element_shape=(64,), buffer=nl.sbuf, dtype=nl.float32)  # ERR:elements
    return x


@nki.jit
def on_chip_rank(x):
    t = nl.ndarray((128, 4, 64), nl.float32, buffer=nl.sbuf)
    nl.tiles(t, tile_shape=(4, 64))  # ERR:on_chip_rank
    return x


@nki.jit
def buffer_str(x):
    nl.alloc_tiles(tile_shape=(128, 256), element_shape=(128, 256), buffer="sbuf", dtype=nl.float32)  # ERR:buffer_str
    return x


@nki.jit
def buffer_hbm(x):
    nl.alloc_blocks(tile_shape=(128, 256), block_shape=(1, 2), element_shape=(128, 256),  # ERR:buffer_hbm
                    buffer=nl.shared_hbm, dtype=nl.float32)
    return x


@nki.jit
def source(x):
    nl.blocks(x.shape, tile_shape=(128, 256), block_shape=(1, 2))  # ERR:source
    return x


@nki.jit
def out_of_range(x):
    g = nl.tiles(x, tile_shape=(128, 256))
    return g[3, 0]  # ERR:out_of_range


@nki.jit
def negative(x):
    g = nl.tiles(x, tile_shape=(128, 256))
    return g[:, -4]  # ERR:negative


@nki.jit
def too_many(x):
    g = nl.tiles(x, tile_shape=(128, 256))
    return g[0, 0][0]  # ERR:too_many


@nki.jit
def step(x):
    g = nl.tiles(x, tile_shape=(128, 256))
    return g[::2]  # ERR:step


@nki.jit
def empty(x):
    g = nl.tiles(x, tile_shape=(128, 256))
    return g[2:1]  # ERR:empty


@nki.jit
def key(x):
    g = nl.tiles(x, tile_shape=(128, 256))
    return g[0.5]  # ERR:key


@nki.jit
def leading(x):
    g = nl.alloc_tiles(tile_shape=(128, 256), element_shape=(2, 128, 256), buffer=nl.sbuf, dtype=nl.float32)
    return g.data  # ERR:leading


@nki.jit
def adjacent(x):
    g = nl.alloc_tiles(tile_shape=(128, 4, 64), element_shape=(128, 4, 128), buffer=nl.sbuf, dtype=nl.float32)
    return g[0, 0, :].data  # ERR:adjacent


@nki.jit
def operand(x):
    t = nl.ndarray((128, 256), nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=t, op=nl.exp, data=nl.tiles(x, tile_shape=(128, 256))[0, 0])  # ERR:operand
    return x


ERRORS = [
    # (kernel, where the diagnostic points, code, exception class, message)
    (list_shape, "nl.", "err_grid_shape_not_ints", TypeError,
     "'nl.tiles' takes tile_shape as a tuple of Python ints, got 'list'"),
    (np_int, "nl.", "err_grid_shape_not_ints", TypeError,
     "'nl.tiles' takes tile_shape as a tuple of Python ints, got a tuple holding 'int64'"),
    (bool_dim, "nl.", "err_grid_shape_not_ints", TypeError,
     "'nl.alloc_tiles' takes element_shape as a tuple of Python ints, got a tuple holding 'bool'"),
    (one_dim, "nl.", "err_grid_shape_invalid", ValueError,
     "'nl.tiles': tile_shape (128,) has fewer than 2 dims: a tile has a partition dim and free dims"),
    (high_rank, "nl.", "err_grid_shape_invalid", ValueError,
     "'nl.tiles': tile_shape (1, 128, 256) has 3 dims, more than the 2 dims of the source"),
    (zero, "nl.", "err_grid_shape_invalid", ValueError, "'nl.tiles': tile_shape entries are positive, got (0, 256)"),
    (no_tile, "nl.", "err_grid_shape_invalid", ValueError,
     "'nl.tiles': a tensor source needs tile_shape= (only a grid source has its own)"),
    (block_rank, "nl.", "err_grid_shape_invalid", ValueError,
     "'nl.blocks': block_shape (2,) has 1 dim; it counts tiles along each of the 2 dims of tile_shape"),
    (partitions, "nl.", "err_grid_shape_invalid", ValueError,
     "'nl.alloc_tiles': tile_shape (256, 256) spans 256 partitions; sbuf has 128"),
    (elements, "nl.", "err_grid_shape_invalid", ValueError,
     "'nl.alloc_tiles': tile_shape (128, 256) has 2 dims, more than the 1 dim of the source"),
    (on_chip_rank, "nl.", "err_grid_shape_invalid", ValueError,
     "'nl.tiles': tile_shape (4, 64) covers 2 of the 3 dims of an on-chip source; on chip a tile covers every dim "
     "(dim 0 is the partition dim)"),
    (buffer_str, "nl.", "err_grid_buffer_not_memory_region", TypeError,
     "'nl.alloc_tiles' takes buffer= as an nl buffer (nl.sbuf, nl.psum), got 'str' 'sbuf'"),
    (buffer_hbm, "nl.", "err_grid_buffer_unsupported", ValueError,
     "'nl.alloc_blocks' allocates on chip (nl.sbuf or nl.psum), not in 'shared_hbm'"),
    (source, "nl.", "err_grid_source", TypeError,
     "'nl.blocks' takes a tensor, an NkiTileGrid or an NkiBlockGrid as its source, got 'tuple'"),
    (out_of_range, "g", "err_grid_index", IndexError, "index 3 is out of range for grid dim 0 of size 3"),
    (negative, "g", "err_grid_index", IndexError, "index -4 is out of range for grid dim 1 of size 3"),
    (too_many, "g", "err_grid_index", IndexError, "too many indices: the grid has 0 dims, got 1"),
    (step, "g", "err_grid_index", IndexError,
     "slice step 2 on grid dim 0: a grid selection takes consecutive coordinates (step 1)"),
    (empty, "g", "err_grid_index", IndexError, "slice 2:1 selects no coordinate of grid dim 0 (size 3)"),
    (key, "g", "err_grid_index", IndexError, "a grid is indexed with ints and slices, got 'float'"),
    (leading, "g", "err_grid_data_not_representable", ValueError,
     "dim 0 of the allocation is a leading (untiled) dim that is still selected"),
    (adjacent, "g", "err_grid_data_not_representable", ValueError,
     "its tiles along dim 2 are not adjacent in the allocation (tiles are packed along the free dim in row-major "
     "grid order)"),
    (operand, "nisa.", "err_unexpected_type_of_operand", TypeError, "got 'NkiTileGrid', expected a tile"),
]


@pytest.mark.parametrize("kernel, token, code, kind, message", ERRORS, ids=[e[0].__name__ for e in ERRORS])
def test_every_grid_rule_is_a_diagnostic_at_the_users_line(kernel, token, code, kind, message):
    e = trace_error(kernel, X)
    assert isinstance(e, kind), type(e).__mro__
    check_diag(e, M, code, message, [(kernel.__name__, token)])


GARBAGE = [None, "x", 1.5, 2**64, (), (1,), (2**64, 1), (2**62, 2**62), (-1, 2), np.int32(3), [1, 2], (1, 2, 3, 4, 5)]
SLOTS = ["tile_shape", "block_shape", "element_shape", "buffer", "dtype", "address", "name", "source", "key"]


@pytest.mark.parametrize("slot", SLOTS)
@pytest.mark.parametrize("value", GARBAGE, ids=[repr(v)[:20] for v in GARBAGE])
def test_no_argument_makes_a_grid_call_fail_outside_a_diagnostic(slot, value):
    @nki.jit
    def kernel(x):
        a = dict(tile_shape=(64, 64), block_shape=(1, 2), element_shape=(128, 512), buffer=nl.sbuf,
                 dtype=nl.float32, address=None, name="")
        a[slot] = value
        if slot == "source":
            nl.tiles(value, tile_shape=(64, 64))  # ERR:garbage_source
        elif slot == "key":
            nl.tiles(x, tile_shape=(64, 64))[value]  # ERR:garbage_key
        else:
            nl.alloc_blocks(**a)  # ERR:garbage_alloc
            nl.blocks(x, tile_shape=a["tile_shape"], block_shape=a["block_shape"])  # ERR:garbage_blocks
        return x

    try:
        kernel.trace(None, (np.zeros((128, 512), np.float32),), {})
    except nkic.NKIError as e:
        assert e.code.startswith("err_") and e.code != "err_internal", str(e)
        assert M.same_file(e.file) and e.line in {M.line(m) for m in ("garbage_source", "garbage_key",
                                                                      "garbage_alloc", "garbage_blocks")}, str(e)
