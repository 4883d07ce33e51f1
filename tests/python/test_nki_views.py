"""The view methods and attributes of NkiTensor in nki 0.5+ (NKI_CURRENT_API.md §3.1,
§4.3): each view's pattern, the numbers a kernel reading through it simulates to, and
every rule a view method checks, as a diagnostic at the user's line."""
import numpy as np
import pytest

import nki
import nki.isa as nisa
import nki.language as nl
from nki_test_util import Markers, check_diag, trace_error

M = Markers(__file__)
X = np.arange(4 * 64, dtype=np.float32).reshape(4, 64)


def copy_out(view):
    """Writes `view` (an SBUF view) to a fresh shared-HBM output through a tile of its shape
    (a DMA: it reads a view starting at any partition)."""
    u = nl.ndarray(view.shape, dtype=view.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=u, src=view)
    out = nl.ndarray(view.shape, dtype=view.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=u)
    return out


def on_chip(x):
    t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    return t


VIEWS = [
    # (name, view of the (4, 64) SBUF tile, numpy on the same array, pattern, offset)
    ("slice", lambda t: t.slice(1, 8, 40, 2), lambda a: a[:, 8:40:2], [[64, 4], [2, 16]], 8),
    ("slice partitions", lambda t: t.slice(0, 1, 3), lambda a: a[1:3], [[64, 2], [1, 64]], 64),
    ("select", lambda t: t.reshape_dim(1, (4, 16)).select(1, 2), lambda a: a.reshape(4, 4, 16)[:, 2],
     [[64, 4], [1, 16]], 32),
    ("permute", lambda t: t.reshape_dim(1, (8, 8)).permute((0, 2, 1)),
     lambda a: a.reshape(4, 8, 8).transpose(0, 2, 1), [[64, 4], [1, 8], [8, 8]], 0),
    ("broadcast", lambda t: t.slice(1, 5, 6).expand_dim(2).broadcast(2, 3).squeeze_dim(1),
     lambda a: np.broadcast_to(a[:, 5:6], (4, 3)), [[64, 4], [0, 3]], 5),
    ("flatten_dims", lambda t: t.reshape_dim(1, (2, -1, 4)).flatten_dims(1, 2),
     lambda a: a.reshape(4, 16, 4), [[64, 4], [4, 16], [1, 4]], 0),
    ("rearrange", lambda t: t.rearrange(("b", ("h", "w")), ("b", "w", "h"), {"h": 4}),
     lambda a: a.reshape(4, 4, 16).transpose(0, 2, 1), [[64, 4], [1, 16], [16, 4]], 0),
    ("reshape split", lambda t: t.slice(1, 8, 40).reshape((4, 2, 16)), lambda a: a[:, 8:40].reshape(4, 2, 16),
     [[64, 4], [16, 2], [1, 16]], 8),
    ("reshape merge", lambda t: t.reshape_dim(1, (8, 8)).slice(1, 2, 6).reshape((4, 2, 16)),
     lambda a: a.reshape(4, 8, 8)[:, 2:6].reshape(4, 2, 16), [[64, 4], [16, 2], [1, 16]], 16),
    ("rearrange merge", lambda t: t.reshape_dim(1, (4, 16)).rearrange(("b", "h", "w"), ("b", ("h", "w"))),
     lambda a: a, [[64, 4], [1, 64]], 0),
]


@pytest.mark.parametrize("name, view, ref, pattern, offset", VIEWS, ids=[v[0] for v in VIEWS])
def test_a_view_reads_what_numpy_reads(name, view, ref, pattern, offset):
    seen = {}

    @nki.jit
    def kernel(x):
        v = view(on_chip(x))
        seen.update(shape=v.shape, contiguous=v.is_contiguous(), indirect=v.is_indirect(), offset=v.offset,
                    strides=v.strides, size=v.size, name=v.name)
        if pattern is not None:
            seen["pattern"] = v.get_pattern()
        return copy_out(v)

    out = nki.simulate(kernel)(X)
    expected = ref(X)
    np.testing.assert_array_equal(out, expected)
    assert seen["shape"] == expected.shape and seen["size"] == expected.size
    assert seen["offset"] == offset and seen["name"] == "t" and not seen["indirect"]
    if pattern is not None:
        assert seen["pattern"] == pattern and seen["strides"] == tuple(p[0] for p in pattern)


def test_contiguity_ignores_the_partition_step_on_chip_only():
    seen = []

    @nki.jit
    def kernel(x):
        t = on_chip(x)
        seen.extend([t.is_contiguous(), t.slice(1, 0, 32).is_contiguous(), t.slice(1, 0, 32, 2).is_contiguous(),
                     x.is_contiguous(), x.slice(1, 0, 32).is_contiguous(), x.slice(0, 1, 2).is_contiguous()])
        return copy_out(t)

    nki.simulate(kernel)(X)
    assert seen == [True, True, False, True, False, True]


def test_views_of_hbm_tensors_and_reinterpret_cast():
    @nki.jit
    def kernel(x):
        t = nl.ndarray((4, 16), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x.reshape_dim(1, (4, 16)).select(1, 3))
        bits = nl.ndarray((4, 64), dtype=nl.uint8, buffer=nl.sbuf)
        nisa.tensor_copy(dst=bits, src=t.reinterpret_cast(nl.uint8))
        out = nl.ndarray((4, 64), dtype=nl.uint8, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=bits)
        return out

    np.testing.assert_array_equal(nki.simulate(kernel)(X), X[:, 48:64].copy().view(np.uint8))


def test_run_time_select_and_vector_select_gather_rows_of_hbm():
    table = np.arange(8 * 16, dtype=np.float32).reshape(8, 16)
    rows = np.array([[5], [0], [7]], dtype=np.int32)
    row = np.array([[6]], dtype=np.int32)

    @nki.jit
    def kernel(tab, idx, one):
        ix = on_chip(idx)
        r = on_chip(one)
        g = nl.ndarray((3, 16), dtype=tab.dtype, buffer=nl.sbuf)
        v = tab.vector_select(0, ix)
        assert v.is_indirect()
        nisa.dma_copy(dst=g, src=v)
        both = nl.ndarray((4, 16), dtype=tab.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=both[0:3, :], src=g)
        nisa.dma_copy(dst=both[3], src=tab.select(0, r))
        return both

    out = nki.simulate(kernel)(table, rows, row)
    np.testing.assert_array_equal(out, np.concatenate([table[[5, 0, 7]], table[6:7]]))


def test_view_reinterprets_a_partial_view_in_the_current_api():
    @nki.jit
    def kernel(x):
        t = on_chip(x)
        v = t.slice(1, 8, 24).view(nl.uint8)
        assert v.shape == (4, 64) and v.get_pattern() == [[256, 4], [1, 64]] and v.offset == 32
        return copy_out(v)

    np.testing.assert_array_equal(nki.simulate(kernel)(X), X[:, 8:24].copy().view(np.uint8))


@nki.jit
def strided_view(x):
    t = on_chip(x)
    return copy_out(t.slice(1, 0, 32, 2).view(nl.uint8))  # ERR:view


@nki.jit
def bad_slice(x):
    t = on_chip(x)
    return copy_out(t.slice(1, 8, 80))  # ERR:slice


@nki.jit
def bad_select(x):
    t = on_chip(x)
    return copy_out(t.select(1, 64))  # ERR:select


@nki.jit
def partition_select(x):
    t = on_chip(x)
    return copy_out(t.select(0, 1))  # ERR:select0


@nki.jit
def partition_permute(x):
    t = on_chip(x).reshape_dim(1, (8, 8))
    return copy_out(t.permute((1, 0, 2)))  # ERR:permute0


@nki.jit
def repeated_permute(x):
    t = on_chip(x).reshape_dim(1, (8, 8))
    return copy_out(t.permute((0, 1, 1)))  # ERR:permute


@nki.jit
def wide_broadcast(x):
    t = on_chip(x)
    return copy_out(t.broadcast(1, 4))  # ERR:broadcast


@nki.jit
def wide_squeeze(x):
    t = on_chip(x)
    return copy_out(t.squeeze_dim(1))  # ERR:squeeze


@nki.jit
def uneven_split(x):
    t = on_chip(x)
    return copy_out(t.reshape_dim(1, (3, -1)))  # ERR:split


@nki.jit
def strided_flatten(x):
    t = on_chip(x).reshape_dim(1, (8, 8)).slice(2, 0, 4)
    return copy_out(t.flatten_dims(1, 2))  # ERR:flatten


@nki.jit
def strided_reshape(x):
    t = on_chip(x).reshape_dim(1, (8, 8)).slice(2, 0, 4)
    return copy_out(t.reshape((4, 32)))  # ERR:reshape


@nki.jit
def partition_reshape(x):
    t = on_chip(x).slice(1, 0, 32)
    return copy_out(t.reshape((8, 16)))  # ERR:reshape0


@nki.jit
def partition_flatten(x):
    t = on_chip(x).reshape_dim(1, (8, 8))
    return copy_out(t.flatten_dims(0, 1))  # ERR:flatten0


@nki.jit
def renamed_rearrange(x):
    t = on_chip(x)
    return copy_out(t.rearrange(("b", ("h", "w")), ("b", "w", "q"), {"h": 4}))  # ERR:rearrange


@nki.jit
def partition_stride(x):
    t = on_chip(x)
    return copy_out(t.slice(0, 0, 4, 2))  # ERR:pstride


@nki.jit
def reindexed_indirect(x, idx):
    v = x.vector_select(0, on_chip(idx))
    t = nl.ndarray((2, 64), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=v.slice(1, 0, 8))  # ERR:indirect
    return copy_out(t)


@nki.jit
def out_of_range_dim(x):
    t = on_chip(x)
    return copy_out(t.expand_dim(5))  # ERR:dim


@nki.jit
def list_of_dims(x):
    t = on_chip(x).reshape_dim(1, (8, 8))
    return copy_out(t.permute("021"))  # ERR:dims_type


RULES = [
    (bad_slice, "slice", "needs 0 <= start < end <= 64 (the size of dim 1) and step >= 1, got start=8, end=80"),
    (bad_select, "select", "index 64 is out of range for dim 1 of size 64"),
    (partition_select, "select0", "dim 0 of an on-chip view is its partition dim; it cannot be selected"),
    (partition_permute, "permute0", "on chip, dims[0] must be 0 (the partition dim stays first)"),
    (repeated_permute, "permute", "dims must list each of the view's 3 dims once, got [0, 1, 1]"),
    (wide_broadcast, "broadcast", "stretches a dim of size 1; dim 1 has size 64"),
    (wide_squeeze, "squeeze", "removes a dim of size 1; dim 1 has size 64"),
    (uneven_split, "split", "dim 1 of size 64 does not split into [3, -1]"),
    (strided_flatten, "flatten", "dims 1..2 are not contiguous in memory (dim 1 steps 8 elements, not 4)"),
    (strided_reshape, "reshape", "cannot reshape a view of shape [4, 8, 4] as [4, 32]: its dims 1..2 are not "
     "contiguous in memory (dim 1 steps 8 elements, not 4)"),
    (partition_reshape, "reshape0", "dim 0 of an on-chip view is its partition dim; reshaping [4, 32] as [8, 16] "
     "changes its size"),
    (partition_flatten, "flatten0", "dim 0 of an on-chip view is its partition dim; it cannot be changed"),
    (renamed_rearrange, "rearrange", "dst_pattern must name every axis of src_pattern once"),
    (out_of_range_dim, "dim", "dim 5 is out of range for a view of 3 dims"),
    (list_of_dims, "dims_type", "dims is a list or tuple of ints, got 'str'"),
    (strided_view, "view", "reinterprets a view whose last dim is contiguous; it steps 2 elements"),
]


@pytest.mark.parametrize("kernel, marker, message", RULES, ids=[r[1] for r in RULES])
def test_a_view_method_rule_is_a_diagnostic_at_the_call(kernel, marker, message):
    api = {"select0": "select", "permute0": "permute", "flatten0": "flatten_dims", "flatten": "flatten_dims",
           "split": "reshape_dim", "reshape0": "reshape", "squeeze": "squeeze_dim", "dim": "expand_dim", "dims_type": "permute"}
    name = api.get(marker, marker)
    e = trace_error(kernel, X)
    check_diag(e, M, "err_unsupported_args", [f"'tensor.{name}'", message], [(marker, "t.")])


def test_the_partition_step_rule_is_the_one_of_ap():
    e = trace_error(partition_stride, X)
    check_diag(e, M, "err_unsupported_index", "reads whole partitions: the first pair's step is 64", [("pstride", "t.")])


def test_an_indirect_view_cannot_be_reindexed():
    e = trace_error(reindexed_indirect, X, np.zeros((2, 1), np.int32))
    check_diag(e, M, "err_unsupported_args", "the view is indirect", [("indirect", "v.")])


def test_an_instruction_writes_an_ap_view_of_its_operands_element_count():
    # The same partitions and elements per partition: the elements pair in row-major order.
    @nki.jit
    def kernel(x):
        t = on_chip(x)
        d = nl.ndarray((4, 64), dtype=x.dtype, buffer=nl.sbuf)
        nisa.memset(dst=d, value=-1.0)
        nisa.scalar_tensor_tensor(dst=d.ap([[64, 4], [16, 4], [1, 4]]), data=t.slice(1, 0, 16), op0=nl.multiply,
                                  operand0=2.0, op1=nl.add, operand1=t.slice(1, 16, 32))
        return copy_out(d)

    want = np.full((4, 64), -1.0, np.float32)
    for q in range(4):
        want[:, 16 * q:16 * q + 4] = 2 * X[:, 4 * q:4 * q + 4] + X[:, 16 + 4 * q:20 + 4 * q]
    np.testing.assert_array_equal(nki.simulate(kernel)(X), want)
