"""Each API indexes on-chip tiles by its own rules, DMA copies pair the same partitions and
elements per partition in row-major order, and the Vector-Engine transpose is a full transpose
(docs/current_api.md "Tensors, indexing, access patterns", docs/language.md "Indexing")."""
import numpy as np
import pytest

import nki
import nki.isa as nisa
import nki.language as nl
from neuronxcc import nki as legacy
import neuronxcc.nki.isa as lisa
import neuronxcc.nki.language as lnl
from nki_current_util import hbm, loaded, sbuf, stored
from nki_test_util import Markers, check_diag, trace_error

M = Markers(__file__)
RNG = np.random.default_rng(7)
CUBE = RNG.normal(size=(4, 8, 16)).astype(np.float32)
X = RNG.normal(size=(128, 64)).astype(np.float32)


@pytest.fixture(autouse=True)
def _trn2(monkeypatch):
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn2")


# ---- item: an integer on the partition dim of an on-chip tile keeps it at size 1 (current API) ----

def shapes_of(shape, keys):
    @nki.jit
    def k(a):
        t = sbuf(shape)
        got = [tuple(t[key].shape) for key in keys]
        got += [tuple(a[0].shape), tuple(a[0, 0, 0].shape)]
        k.got = got
        return stored(loaded(a))

    return k


def test_the_documented_subscript_shapes_of_the_current_api():
    keys = [(0, 0, 10), (slice(None), 0), (slice(None), 0, 10), (0, Ellipsis, slice(None)),
            (slice(None), slice(None), slice(None, None, 2)), (1, slice(0, 2), slice(0, 2))]
    k = shapes_of((64, 64, 64), keys)
    a = np.zeros((4, 128, 32), np.float32)
    nki.simulate(k)(a)
    assert k.got == [(1, 1), (64, 64), (64, 1), (1, 64, 64), (64, 64, 32), (1, 2, 2), (128, 32), (1,)]


@nki.jit
def reduce_one_row(a):
    t = loaded(a)
    d = sbuf((1, 1))
    nisa.tensor_reduce(dst=d, op=nl.add, data=t[0, :, :], axis=(1, 2))
    return stored(d)


def test_a_row_picked_by_an_integer_reduces_over_its_free_dims():
    np.testing.assert_allclose(nki.simulate(reduce_one_row)(CUBE), CUBE[0].sum().reshape(1, 1), rtol=1e-5)


@nki.jit
def copy_row_one(a):
    t = loaded(a)
    o = hbm((1, 8, 16))
    nisa.dma_copy(dst=o, src=t[1, :, :])
    return o


def test_a_row_picked_by_an_integer_keeps_its_partition_dim():
    np.testing.assert_array_equal(nki.simulate(copy_row_one)(CUBE), CUBE[1:2])


@nki.jit
def scale_row_one(a):
    t = loaded(a)
    nisa.tensor_scalar(dst=t[1, :, :], data=t[1, :, :], op0=nl.multiply, operand0=2.0)  # ERR:row_one
    return stored(t)


def test_an_engine_reading_one_row_picked_by_an_integer_obeys_the_partition_start_rule():
    e = trace_error(scale_row_one, CUBE)
    check_diag(e, M, "err_invalid_partition_access",
               "Invalid access of 1 partitions starting at partition 1 of 't': an engine reads or writes 1 "
               "partitions from partition 0, 32, 64 or 96", [("row_one", "nisa.")], api="nisa.tensor_scalar")


# The legacy API (NKI_API.md §1.3): an integer drops the dim it indexes, a block dim included.
@legacy.jit
def legacy_block(a):
    out = lnl.ndarray((128, 64), dtype=a.dtype, buffer=lnl.shared_hbm)
    t = lnl.ndarray((2, lnl.par_dim(128), 64), dtype=a.dtype, buffer=lnl.sbuf)
    t[1] = lnl.load(a)
    legacy_block.shape = tuple(t[1].shape)
    lnl.store(out, value=lnl.exp(t[1]))
    return out


def test_the_legacy_api_drops_an_integer_indexed_block_dim():
    with pytest.warns(DeprecationWarning, match="warn_block_dimension_is_deprecated"):
        out = legacy.simulate_kernel(legacy_block, X)
    assert legacy_block.shape == (128, 64)
    np.testing.assert_allclose(out, np.exp(X), rtol=1e-6)


def test_the_legacy_api_drops_integer_indexed_hbm_dims():
    @legacy.jit
    def k(a):
        out = lnl.ndarray((8, 16), dtype=a.dtype, buffer=lnl.shared_hbm)
        k.shapes = (tuple(a[2].shape), tuple(a[2, 3].shape))
        lnl.store(out, value=lnl.load(a[2]))
        return out

    np.testing.assert_array_equal(legacy.simulate_kernel(k, CUBE), CUBE[2])
    assert k.shapes == ((8, 16), (16,))


# ---- DMA reshapes: the same partitions and elements per partition, paired row-major ----

@nki.jit
def reshaping_copies(a):
    t = loaded(a)
    split = sbuf((128, 4, 16))
    nisa.dma_copy(dst=split, src=t)
    flat = sbuf((128, 64))
    nisa.dma_copy(dst=flat, src=split)
    split2 = sbuf((128, 8, 8))
    nisa.tensor_copy(dst=split2, src=flat)
    flat2 = sbuf((128, 64))
    nisa.tensor_copy(dst=flat2, src=split2)
    o = hbm((128, 2, 32))
    nisa.dma_copy(dst=o, src=flat2)
    return o


def test_dma_copy_and_tensor_copy_reshape_within_partitions_both_ways():
    np.testing.assert_array_equal(nki.simulate(reshaping_copies)(X), X.reshape(128, 2, 32))


@legacy.jit
def legacy_reshaping_copies(a):
    split = lnl.ndarray((128, 4, 16), dtype=a.dtype, buffer=lnl.sbuf)
    lisa.dma_copy(dst=split, src=lnl.load(a))
    out = lnl.ndarray((128, 64), dtype=a.dtype, buffer=lnl.shared_hbm)
    lnl.store(out, value=split)
    return out


def test_legacy_dma_copy_and_store_reshape_within_partitions():
    np.testing.assert_array_equal(legacy.simulate_kernel(legacy_reshaping_copies, X), X)


@nki.jit
def copy_across_partitions(a):
    t = loaded(a)
    d = sbuf((64, 128))
    nisa.dma_copy(dst=d, src=t)  # ERR:partitions
    return stored(d)


@nki.jit
def copy_other_row_size(a):
    t = loaded(a)
    d = sbuf((128, 4, 8))
    nisa.dma_copy(dst=d, src=t)  # ERR:row_size
    return stored(d)


@pytest.mark.parametrize("kernel, marker, dst", [(copy_across_partitions, "partitions", "[64, 128]"),
                                                 (copy_other_row_size, "row_size", "[128, 4, 8]")])
def test_a_copy_between_other_partitions_or_row_sizes_is_refused(kernel, marker, dst):
    e = trace_error(kernel, X)
    check_diag(e, M, "err_store_dst_shape_smaller_than_other_shape",
               f"Illegal assignment destination shape in 'a = b': shape {dst} of parameter 'a' is smaller than "
               "other parameter shapes b[128, 64]", [(marker, "nisa.")], api="nisa.dma_copy")


@nki.jit
def engine_copy_other_row_size(a):
    t = loaded(a)
    d = sbuf((128, 4, 8))
    nisa.tensor_copy(dst=d, src=t)  # ERR:engine_row_size
    return stored(d)


def test_an_engine_copy_between_other_row_sizes_is_refused():
    e = trace_error(engine_copy_other_row_size, X)
    check_diag(e, M, "err_tile_shape_mismatch", "number of elements per partition mismatch in parameters "
               "(d[128, 4, 8], [128, 64]) of 'tensor_copy'", [("engine_row_size", "nisa.")], api="nisa.tensor_copy")


# ---- the Vector-Engine transpose: [128, 64] -> [64, 128], as the compiler and hardware have it ----

@nki.jit
def times_vector_transpose(a, b):
    x = loaded(a)  # [64, 128]
    y = loaded(b)  # [128, 64]
    yt = sbuf((64, 128))
    nisa.nc_transpose(dst=yt, data=y, engine=nisa.engine.vector)
    p = nl.ndarray((128, 128), nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=p, stationary=x, moving=yt)
    r = sbuf((128, 128))
    nisa.tensor_copy(dst=r, src=p)
    return stored(r)


@legacy.jit
def legacy_times_vector_transpose(a, b):
    out = lnl.ndarray((128, 128), dtype=lnl.float32, buffer=lnl.shared_hbm)
    yt = lisa.nc_transpose(lnl.load(b), engine=lisa.vector_engine)
    lnl.store(out, value=lisa.nc_matmul(lnl.load(a), yt))
    return out


def test_a_tile_times_the_vector_engine_transpose_of_another_in_both_apis():
    a = RNG.normal(size=(64, 128)).astype(np.float32)
    b = RNG.normal(size=(128, 64)).astype(np.float32)
    want = a.T @ b.T
    np.testing.assert_allclose(nki.simulate(times_vector_transpose)(a, b), want, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(legacy.simulate_kernel(legacy_times_vector_transpose, a, b), want, rtol=1e-4, atol=1e-4)


@nki.jit
def vector_transpose_in_place_shape(a):
    y = loaded(a)
    yt = sbuf((128, 64))
    nisa.nc_transpose(dst=yt, data=y, engine=nisa.engine.vector)  # ERR:blocks
    return stored(yt)


def test_a_dst_of_the_data_shape_is_not_the_transpose():
    e = trace_error(vector_transpose_in_place_shape, X)
    check_diag(e, M, "err_tile_shape_mismatch", ["yt[128, 64]", "[64, 128]"], [("blocks", "nisa.")],
               api="nisa.nc_transpose")


# ---- the current API takes no tensor inside [] (the legacy index tiles) ----

@nki.jit
def rows_by_index_tile(a, ids):
    ix = loaded(ids)
    rows = sbuf((32, 64))
    nisa.dma_copy(dst=rows, src=a[ix, :])  # ERR:index_tile
    return stored(rows)


def test_a_tensor_inside_brackets_is_not_an_index_in_the_current_api():
    e = trace_error(rows_by_index_tile, X, np.zeros((32, 1), np.int32))
    check_diag(e, M, "err_unsupported_index",
               "a tensor inside [] does not index `a` in the nki API: read at a runtime offset with "
               ".ap(scalar_offset=...) or .ap(vector_offset=...)", [("index_tile", "a[")])
