"""The current API's documented instruction rules, both ways (NKI_CURRENT_API.md §6, §9;
NKI_07_08_API.md §9): the allowed form runs and matches numpy, the rejected form is a
diagnostic with its code, message and the user's line. docs/rules.md lists each rule with
the test that covers it."""
import warnings

import numpy as np
import pytest

import nki
import nki.isa as nisa
import nki.language as nl
from nki_current_util import hbm, loaded, sbuf, stored
from nki_test_util import Markers, check_diag, trace_error

M = Markers(__file__)


@pytest.fixture(autouse=True)
def _default_target(monkeypatch):
    monkeypatch.delenv("NEURON_PLATFORM_TARGET_OVERRIDE", raising=False)


def rand(*shape, seed=0):
    return np.random.default_rng(seed).random(shape, dtype=np.float32)


# dma_transpose: 2-, 3- and 4-D sources, permuted (1, 0), (2, 1, 0), (3, 1, 2, 0).

@nki.jit
def transpose_nd(a, axes):
    perm = ((1, 0), (2, 1, 0), (3, 1, 2, 0))[len(a.shape) - 2]
    t = sbuf(tuple(a.shape[d] for d in perm))
    nisa.dma_transpose(dst=t, src=a, axes=axes)
    return stored(t)


@pytest.mark.parametrize("shape,perm", [((16, 32), (1, 0)), ((4, 6, 32), (2, 1, 0)), ((2, 3, 4, 16), (3, 1, 2, 0))])
@pytest.mark.parametrize("given", [False, True])
def test_dma_transpose_permutes_a_source_of_two_to_four_dims(shape, perm, given):
    a = rand(*shape)
    np.testing.assert_array_equal(nki.simulate(transpose_nd)(a, perm if given else None), a.transpose(perm))


@nki.jit
def transpose_rank_mismatch(a):
    t = sbuf((64, 1, 128))
    nisa.dma_transpose(dst=t, src=a)  # ERR:rank
    return stored(t)


@nki.jit
def transpose_other_axes(a):
    t = sbuf((4, 6, 32))
    nisa.dma_transpose(dst=t, src=a, axes=(0, 2, 1))  # ERR:axes
    return stored(t)


@nki.jit
def transpose_casts(a):
    t = sbuf((64, 128), nl.bfloat16)
    nisa.dma_transpose(dst=t, src=a)  # ERR:cast
    return stored(t)


@nki.jit
def transpose_five_dims(a):
    t = sbuf((2, 2, 2, 2, 2))
    nisa.dma_transpose(dst=t, src=a)  # ERR:five
    return stored(t)


TRANSPOSE_ERRORS = [
    (transpose_rank_mismatch, rand(128, 64), "rank", "err_tile_shape_mismatch",
     "dst t[64, 1, 128] of 'dma_transpose' must be src permuted by (1, 0), of shape [64, 128] (the same rank as "
     "src)"),
    (transpose_other_axes, rand(4, 6, 32), "axes", "err_unsupported_args",
     "axes (0, 2, 1) is not the transpose of a 3-D src: the DMA engines transpose a 2-D, 3-D or 4-D src by (1, 0), "
     "(2, 1, 0) or (3, 1, 2, 0)"),
    (transpose_casts, rand(128, 64), "cast", "err_supported_operand_dtype",
     "'nisa.dma_transpose' moves bytes and cannot cast: src is 'float32', dst is 'bfloat16'"),
    (transpose_five_dims, rand(2, 2, 2, 2, 2), "five", "err_exceed_max_supported_dimension",
     "of 'dma_transpose' exceed max supported number of dimensions of 4"),
]


@pytest.mark.parametrize("kernel,arg,marker,code,message", TRANSPOSE_ERRORS, ids=[c[2] for c in TRANSPOSE_ERRORS])
def test_dma_transpose_rules(kernel, arg, marker, code, message):
    e = trace_error(kernel, arg)
    check_diag(e, M, code, message, [(marker, "nisa.")], api="nisa.dma_transpose")


# Kernel inputs are nl.hbm tensors (as NKI wraps its arguments); outputs are nl.shared_hbm.

@nki.jit
def input_buffer(a):
    assert a.buffer == nl.hbm and nl.is_hbm(a.buffer) and a.reshape((64, 256)).buffer == nl.hbm
    out = hbm(a.shape)
    assert out.buffer == nl.shared_hbm
    nisa.dma_copy(dst=out, src=a)
    return out


def test_a_kernel_input_is_in_nl_hbm():
    a = rand(128, 128)
    np.testing.assert_array_equal(nki.simulate(input_buffer)(a), a)


@nki.jit
def returns_sbuf(a):
    t = nl.ndarray(a.shape, nl.float32, buffer=nl.sbuf)  # ERR:ret_sbuf
    nisa.dma_copy(dst=t, src=a)
    return t


@nki.jit
def returns_psum(a):
    p = nl.ndarray((128, 64), nl.float32, buffer=nl.psum)  # ERR:ret_psum
    nisa.memset(dst=p, value=0.0)
    return p


@pytest.mark.parametrize("kernel,marker,token,name,memory", [(returns_sbuf, "ret_sbuf", "nl.", "t", "sbuf"),
                                                          (returns_psum, "ret_psum", "nl.", "p", "psum")])
def test_an_on_chip_tile_is_no_kernel_output(kernel, marker, token, name, memory):
    e = trace_error(kernel, rand(128, 64))
    check_diag(e, M, "err_output_not_in_shared_hbm",
               f"kernel output '{name}' is in '{memory}'; outputs must be in shared HBM", [(marker, token)])


# tensor_partition_reduce: add, mean, max, bitwise_or/and/xor (NKI 0.7), at most 4 free dims.

@nki.jit
def partition_reduce(a, op):
    x = loaded(a)
    r = sbuf((1,) + tuple(a.shape[1:]), a.dtype)
    nisa.tensor_partition_reduce(dst=r, op=op, data=x)
    return stored(r)


@pytest.mark.parametrize("op,ref", [(nl.add, np.sum), (nl.maximum, np.max), (nl.mean, np.mean)])
def test_partition_reduce_folds_the_partitions(op, ref):
    a = rand(32, 3, 2, 2, 4)  # four free dims
    np.testing.assert_allclose(nki.simulate(partition_reduce)(a, op), ref(a, axis=0, keepdims=True), rtol=1e-5)


@pytest.mark.parametrize("op,ref", [(nl.bitwise_or, np.bitwise_or), (nl.bitwise_and, np.bitwise_and),
                                    (nl.bitwise_xor, np.bitwise_xor)])
def test_partition_reduce_folds_the_bits(op, ref):
    a = np.random.default_rng(1).integers(0, 1 << 20, (16, 8)).astype(np.int32)
    np.testing.assert_array_equal(nki.simulate(partition_reduce)(a, op), ref.reduce(a, axis=0, keepdims=True))


@nki.jit
def partition_reduce_minimum(a):
    x, r = loaded(a), sbuf((1, a.shape[1]))
    nisa.tensor_partition_reduce(dst=r, op=nl.minimum, data=x)  # ERR:pr_min
    return stored(r)


@nki.jit
def partition_reduce_five_free_dims(a):
    x, r = loaded(a), sbuf((1,) + tuple(a.shape[1:]))
    nisa.tensor_partition_reduce(dst=r, op=nl.add, data=x)  # ERR:pr_rank
    return stored(r)


def test_partition_reduce_refuses_other_ops():
    e = trace_error(partition_reduce_minimum, rand(16, 8))
    check_diag(e, M, "err_instruction_unsupported_op",
               "unsupported operator 'minimum' for 'tensor_partition_reduce', which takes add, mean, max, bitwise_or, "
               "bitwise_and and bitwise_xor", [("pr_min", "nisa.")], api="nisa.tensor_partition_reduce")


def test_partition_reduce_takes_at_most_four_free_dims():
    e = trace_error(partition_reduce_five_free_dims, rand(16, 2, 2, 2, 2, 2))
    check_diag(e, M, "err_exceed_max_supported_dimension",
               "of 'tensor_partition_reduce' exceed max supported number of dimensions of 5",
               [("pr_rank", "nisa.")], api="nisa.tensor_partition_reduce")


# NKI 0.8's announced tightenings: warnings now.

@nki.jit
def gather(src, index, num_valid):
    s, ix = loaded(src), loaded(index)
    g = sbuf((16, 4, 16, 1))
    if num_valid is None:
        nisa.local_gather(dst=g, src_buffer=s, index=ix)  # ERR:gather_default
    else:
        nisa.local_gather(dst=g, src_buffer=s, index=ix, num_valid_indices=num_valid)
    return stored(g)


def user_warnings(code, call):
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        out = call()
    return out, [w for w in record if str(w.message).startswith(f"[{code}]")]


def test_local_gather_without_num_valid_indices_warns_with_the_future_default():
    src = rand(16, 64)
    index = np.random.default_rng(2).integers(0, 64, (16, 4)).astype(np.uint16)
    out, hits = user_warnings("warn_local_gather_num_valid_indices", lambda: nki.simulate(gather)(src, index, None))
    assert len(hits) == 1
    assert str(hits[0].message) == (
        "[warn_local_gather_num_valid_indices] nisa.local_gather without num_valid_indices: NKI 0.8 leaves the "
        "result undefined and will default it to dst_free_size / num_elem_per_idx = 64; nkic gathers every index "
        "of the core's partitions")
    assert M.same_file(hits[0].filename) and hits[0].lineno == M.line("gather_default")
    # Every index of the core: index v is index[v % 16, v // 16].
    want = src[:, index.flatten(order="F").astype(np.int64)].reshape(16, 4, 16, 1)
    np.testing.assert_array_equal(out, want)
    explicit, quiet = user_warnings("warn_local_gather_num_valid_indices", lambda: nki.simulate(gather)(src, index, 64))
    assert quiet == [] and np.array_equal(explicit, out)


@nki.jit
def bitvec_on(a, engine, scalar):
    x = loaded(a)
    y = sbuf(a.shape, a.dtype)
    if scalar:
        nisa.tensor_scalar(dst=y, data=x, op0=nl.bitwise_and, operand0=255, engine=engine)  # ERR:bitvec_ts
    else:
        nisa.tensor_tensor(dst=y, data1=x, data2=x, op=nl.bitwise_xor, engine=engine)  # ERR:bitvec_tt
    return stored(y)


@pytest.mark.parametrize("scalar,engine,name", [(True, nisa.engine.scalar, "Scalar"), (True, nisa.engine.gpsimd, "GpSimd"),
                                                 (False, nisa.engine.gpsimd, "GpSimd")])
def test_a_bitvec_op_off_the_vector_engine_warns(scalar, engine, name):
    a = np.arange(128 * 8, dtype=np.int32).reshape(128, 8) * 37
    out, hits = user_warnings("warn_bitvec_op_engine", lambda: nki.simulate(bitvec_on)(a, engine, scalar))
    api, op = ("nisa.tensor_scalar", "bitwise_and") if scalar else ("nisa.tensor_tensor", "bitwise_xor")
    assert [str(w.message) for w in hits] == [
        f"[warn_bitvec_op_engine] '{api}' with the bitvec operator '{op}' on the {name} engine: NKI 0.8 announces "
        "that this will be rejected (bitvec operators belong to the Vector Engine)"]
    assert hits[0].lineno == M.line("bitvec_ts" if scalar else "bitvec_tt")
    np.testing.assert_array_equal(out, a & 255 if scalar else a ^ a)


@pytest.mark.parametrize("scalar", [True, False])
@pytest.mark.parametrize("engine", [nisa.engine.vector, nisa.engine.unknown])
def test_a_bitvec_op_on_the_vector_engine_is_quiet(scalar, engine):
    a = np.arange(128 * 8, dtype=np.int32).reshape(128, 8)
    _, hits = user_warnings("warn_bitvec_op_engine", lambda: nki.simulate(bitvec_on)(a, engine, scalar))
    assert hits == []


# nl.no_reorder orders instructions; a runtime loop cannot run inside it (§5.5).

@nki.jit
def fori_in_no_reorder(a, inside):
    t = loaded(a)

    def body(i):
        nisa.tensor_scalar(dst=t, data=t, op0=nl.add, operand0=1.0)
    if inside:
        with nl.no_reorder():
            nl.fori_loop(0, 3, body)  # ERR:fori
    else:
        nl.fori_loop(0, 3, body)
    return stored(t)


def test_a_fori_loop_runs_outside_no_reorder():
    a = rand(128, 8)
    np.testing.assert_array_equal(nki.simulate(fori_in_no_reorder)(a, False), a + 3)


def test_a_fori_loop_inside_no_reorder_is_refused():
    e = trace_error(fori_in_no_reorder, rand(128, 8), True)
    check_diag(e, M, "err_unsupported_args",
               "unsupported arguments to 'nl.no_reorder': a runtime loop (nl.fori_loop, nl.while_loop, "
               "nl.dynamic_range) cannot run inside it", [("fori", "nl.")])


# sequence_bounds: one partition of float32/int32 ids into an SBUF dst of float32/int32 (GpSimd).

def bounds_reference(seq):
    n = len(seq)
    start, end = np.zeros(n), np.zeros(n)
    for i in range(n):
        if seq[i] == 0:
            start[i], end[i] = n, -1
            continue
        j = i
        while j > 0 and seq[j - 1] == seq[i]:
            j -= 1
        k = i
        while k < n - 1 and seq[k + 1] == seq[i]:
            k += 1
        start[i], end[i] = j, k + 1
    return np.stack([start, end])[None]


@nki.jit
def bounds(ids, dst_dtype, dst_buffer):
    t = loaded(ids)
    d = nl.ndarray((ids.shape[0], 2, ids.shape[1]), dst_dtype, buffer=dst_buffer)
    nisa.sequence_bounds(dst=d, segment_ids=t)  # ERR:bounds
    return stored(d)


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_sequence_bounds_matches_the_reference(dtype):
    ids = np.array([[3, 3, 0, 5, 5, 5, 0, 0, 2, 7, 7, 1]], dtype)
    got = nki.simulate(bounds)(ids, nl.int32 if dtype == np.int32 else nl.float32, nl.sbuf)
    np.testing.assert_array_equal(got, bounds_reference(ids[0]))


@pytest.mark.parametrize("ids,dst_dtype,buffer,code,message", [
    (np.ones((4, 8), np.int32), nl.int32, nl.sbuf, "err_unsupported_args",
     "unsupported arguments to 'nisa.sequence_bounds': segment_ids t[4, 8] has 4 partitions; its partition dimension "
     "must be 1"),
    (np.ones((1, 8), np.int32), nl.bfloat16, nl.sbuf, "err_supported_operand_dtype",
     "operand 'dst' of 'nisa.sequence_bounds' has dtype 'bfloat16', which is not supported; expected one of "
     "{float32, int32}"),
    (np.ones((1, 8), np.int32), nl.int32, nl.psum, "err_unsupported_memory",
     "Expected operand 'dst' of 'sequence_bounds' to be in address space 'sbuf', but got a tile in 'psum' instead."),
], ids=["partitions", "dtype", "psum"])
def test_sequence_bounds_rules(ids, dst_dtype, buffer, code, message):
    e = trace_error(bounds, ids, dst_dtype, buffer)
    check_diag(e, M, code, message, [("bounds", "nisa.")], api="nisa.sequence_bounds")


# NKI 0.6: a float becomes an integer rounded to nearest, ties to even, and saturated.

@nki.jit
def to_int(a, dtype, path):
    t = loaded(a)
    i = sbuf(a.shape, dtype)
    if path == "copy":
        nisa.tensor_copy(dst=i, src=t)
    elif path == "activation":
        nisa.activation(dst=i, op=nl.copy, data=t)
    else:
        nisa.dma_copy(dst=i, src=a)
    return stored(i)


def rne_saturated(x, dtype):
    info = np.iinfo(dtype)
    return np.clip(np.rint(x), info.min, info.max).astype(dtype)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32])
@pytest.mark.parametrize("path", ["copy", "activation", "dma"])
def test_a_float_to_int_conversion_rounds_to_nearest_even_and_saturates(dtype, path):
    values = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.49, -2.51, 127.5, 128.5, -128.5, 255.5, 256.0, -1.0, 3e9, -3e9]
    a = np.array([values] * 2, np.float32)
    got = nki.simulate(to_int)(a, dtype, path)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, rne_saturated(a, dtype))


# dma_compute: dst = the sum of 1 to 16 sources in fp32 (dst among them at most once), by one DMA.

@nki.jit
def dma_sum(a, n):
    if len(a.shape) == 3:  # the n planes of a summed into x
        x = sbuf(tuple(a.shape[1:]))
        nisa.dma_compute(dst=x, srcs=[a[i] for i in range(n)], reduce_op=nl.add)
    else:  # x += n times a
        x = loaded(a)
        nisa.dma_compute(dst=x, srcs=[a] * n + [x], reduce_op=nl.add)
    return stored(x)


@pytest.mark.parametrize("n", [2, 3, 16])
def test_dma_compute_sums_its_sources(n):
    a = rand(n, 128, 32)
    np.testing.assert_allclose(nki.simulate(dma_sum)(a, n), a.sum(axis=0), rtol=1e-6)


def test_dma_compute_adds_sources_onto_dst():
    a = rand(128, 32)
    np.testing.assert_allclose(nki.simulate(dma_sum)(a, 3), 4 * a, rtol=1e-6)


@nki.jit
def dma_sum_psum(a):
    x = loaded(a)
    p = nl.ndarray(a.shape, nl.float32, buffer=nl.psum)
    nisa.memset(dst=p, value=0.0)
    nisa.dma_compute(dst=x, srcs=[x, a, p], reduce_op=nl.add)  # ERR:dmac_psum
    return stored(x)


@nki.jit
def dma_sum_dst_twice(a):
    x = loaded(a)
    nisa.dma_compute(dst=x, srcs=[x, x], reduce_op=nl.add)  # ERR:dmac_twice
    return stored(x)


@pytest.mark.parametrize("kernel,marker,code,message", [
    (dma_sum_psum, "dmac_psum", "err_unsupported_memory", "Expected operand 'srcs' of 'dma_compute' to be in address "
     "space 'sbuf or hbm', but got a tile in 'psum' instead."),
    (dma_sum_dst_twice, "dmac_twice", "err_unsupported_args",
     "unsupported arguments to 'nisa.dma_compute': srcs names dst's own elements 2 times and nothing else; dst = "
     "the sum of srcs reads dst at most once, beside another source"),
], ids=["psum", "dst_twice"])
def test_dma_compute_rules(kernel, marker, code, message):
    check_diag(trace_error(kernel, rand(128, 32)), M, code, message, [(marker, "nisa.")], api="nisa.dma_compute")
