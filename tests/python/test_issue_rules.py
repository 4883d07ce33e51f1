"""Rules at the edge of what neuronx-cc accepts, each checked both ways: the
legal form runs and matches numpy, the illegal form reports its code, message
and the user's line.

* nisa.bn_stats with a mask on its free (reduce) dims: no diagnostic when the
  mask holds over the whole traced extent; a warning (the known issue) when it
  leaves elements out, and the statistics then cover the masked elements only.
* A predicate of an `if` on a loop variable guards the writes inside it, not the
  tile they write: the tile is read after the loop.
* nisa.nc_transpose on the Vector Engine: up to 32 x 32 a plain transpose,
  larger tiles (multiples of 32) transposed block by block.
* A PSUM tile receiving matmul results is float32 or int32 (seed 004); a
  Tensor-Engine transpose may land in bfloat16.
* `+=` into SBUF inside nl.affine_range is a loop-carried dependency; only PSUM
  accumulation is exempt (NKI_API.md §1.5)."""
import math
import warnings

import numpy as np
import pytest

from neuronxcc import nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

from nki_test_util import Markers, check_diag, trace_error

M = Markers(__file__)
RNG = np.random.default_rng(11)


def simulate_recording(kernel, *args, **kwargs):
    """The kernel's outputs and the warnings its trace issued."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = nki.simulate_kernel(kernel, *args, **kwargs)
    return out, [w for w in caught if str(w.message).startswith("[warn_")]


# ---- bn_stats masks ------------------------------------------------------------------------------

@nki.jit
def layernorm_bn(x, gamma, beta, eps=1e-5):
    """Rows in tiles of 128 (the last one ragged), statistics by bn_stats over
    chunks of bn_stats_fmax columns, the last chunk masked to the columns left."""
    rows, cols = x.shape
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    fmax = nl.tile_size.bn_stats_fmax
    chunks = math.ceil(cols / fmax)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(cols)[None, :]
    i_c = nl.arange(fmax)[None, :]
    i_s = nl.arange(6)[None, :]
    g = nl.load(gamma.reshape((1, cols))[nl.arange(1)[:, None], i_f]).broadcast_to((128, cols))
    b = nl.load(beta.reshape((1, cols))[nl.arange(1)[:, None], i_f]).broadcast_to((128, cols))
    for t in nl.affine_range(math.ceil(rows / 128)):
        tile = nl.load(x[t * 128 + i_p, i_f], mask=(t * 128 + i_p < rows))
        stats = nl.ndarray((128, 6 * chunks), dtype=nl.float32)
        for c in nl.affine_range(chunks):
            stats[i_p, c * 6 + i_s] = nisa.bn_stats(tile[i_p, c * fmax + i_c],  # ERR:bn_chunk
                                                    mask=(c * fmax + i_c < cols), dtype=nl.float32)
        mv = nisa.bn_aggr(stats)
        inv = nl.rsqrt(mv[i_p, 1] + eps)
        y = nisa.tensor_scalar(data=tile, op0=np.subtract, operand0=mv[i_p, 0], op1=np.multiply, operand1=inv)
        nl.store(out[t * 128 + i_p, i_f], value=y * g + b, mask=(t * 128 + i_p < rows))
    return out


def layernorm_ref(x, gamma, beta, eps=1e-5):
    x64 = x.astype(np.float64)
    mean = x64.mean(1, keepdims=True)
    return ((x64 - mean) / np.sqrt(x64.var(1, keepdims=True) + eps) * gamma + beta).astype(np.float32)


@pytest.mark.parametrize("rows,cols,warns", [(256, 1024, False), (300, 1000, True), (130, 700, True),
                                             (128, 512, False)])
def test_layernorm_by_bn_stats_chunks_matches_numpy(rows, cols, warns):
    x = RNG.normal(2.0, 3.0, (rows, cols)).astype(np.float32)
    gamma, beta = RNG.random(cols, np.float32), RNG.random(cols, np.float32)
    out, caught = simulate_recording(layernorm_bn, x, gamma, beta)
    np.testing.assert_allclose(out, layernorm_ref(x, gamma, beta), rtol=1e-4, atol=2e-5)
    # Over the traced extent the last chunk's mask cuts the columns only when cols % 512 != 0.
    assert [str(w.message).split("]")[0] for w in caught] == (["[warn_bn_stats_mask_on_reduce_dims"] if warns else [])
    if warns:
        w = caught[0]
        assert w.category is UserWarning
        assert str(w.message) == (
            "[warn_bn_stats_mask_on_reduce_dims] nisa.bn_stats's mask leaves out elements of the free (reduce) "
            "dims, a known issue of neuronx-cc (bn_stats mask cannot contain reduce-dim indices); the statistics "
            "cover the masked elements only")
        assert M.same_file(w.filename) and w.lineno == M.line("bn_chunk")


@nki.jit
def masked_stats(x):
    out = nl.ndarray((128, 6), dtype=nl.float32, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(x.shape[1])[None, :]
    nl.store(out, value=nisa.bn_stats(nl.load(x), mask=(i_f >= 3) & (i_f < 40) & (i_p < 128)))  # ERR:cut
    return out


def test_a_mask_cutting_the_reduce_dim_keeps_the_masked_elements_only():
    x = RNG.normal(0.0, 2.0, (128, 64)).astype(np.float32)
    out, caught = simulate_recording(masked_stats, x)
    assert len(caught) == 1 and w_line(caught[0]) == M.line("cut")
    # Even and odd count from the data tile's first element, masked out or not.
    for k, half in enumerate((x[:, 4:40:2], x[:, 3:40:2])):
        assert np.array_equal(out[:, 3 * k], np.full(128, half.shape[1], np.float32))
        np.testing.assert_allclose(out[:, 3 * k + 1], half.mean(1), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(out[:, 3 * k + 2], half.var(1) * half.shape[1], rtol=1e-4, atol=1e-5)


def w_line(w):
    assert M.same_file(w.filename), w.filename
    return w.lineno


@nki.jit
def partition_masked_stats(x):
    out = nl.ndarray((128, 2), dtype=nl.float32, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(64)[None, :]
    res = nl.zeros((128, 2), dtype=nl.float32)
    # Partitions only, and a free-dim bound every element meets: nothing is left out of a row.
    res[...] = nisa.bn_aggr(nisa.bn_stats(nl.load(x), mask=(i_p < 100) & (i_f < 64)))
    nl.store(out, value=res)
    return out


def test_masks_that_cut_no_reduce_element_are_silent():
    x = RNG.normal(1.0, 2.0, (128, 64)).astype(np.float32)
    out, caught = simulate_recording(partition_masked_stats, x)
    assert caught == []
    np.testing.assert_allclose(out[:100, 0], x[:100].mean(1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out[:100, 1], x[:100].var(1), rtol=1e-4, atol=1e-6)


# ---- a predicated branch on a loop variable ------------------------------------------------------

@nki.jit
def sum_exp_of_last_chunk(x):
    n = x.shape[1] // 64
    out = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    sum_vec = nl.zeros((128, 1), dtype=nl.float32)
    for j in nl.sequential_range(n - 1):
        t = nl.load(x[:, (j + 1) * 64:(j + 2) * 64])
        is_last = (j + 1) == (n - 1)
        if is_last:
            nisa.activation(op=nl.exp, data=t, reduce_op=nl.add, reduce_res=sum_vec)
    nl.store(out, value=sum_vec)  # read after the loop: the predicate guarded the write only
    return out


def test_a_tile_written_under_a_loop_predicate_is_read_after_the_loop():
    x = RNG.random((128, 256), np.float32)
    out = nki.simulate_kernel(sum_exp_of_last_chunk, x)
    np.testing.assert_allclose(out[:, 0], np.exp(x[:, 192:256].astype(np.float64)).sum(1), rtol=1e-5)


# ---- nc_transpose on the Vector Engine -----------------------------------------------------------

def vector_transpose(x):
    p, f = x.shape
    out = nl.ndarray((f, p), dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nisa.nc_transpose(nl.load(x), engine=nisa.vector_engine))  # ERR:vector_transpose
    return out


@pytest.mark.parametrize("target,shape", [("trn2", (128, 128)), ("trn1", (128, 64)), ("trn2", (64, 96)),
                                          ("trn2", (32, 16)), ("trn1", (32, 32))])
def test_vector_engine_transposes_the_whole_tile(target, shape):
    x = RNG.random(shape, np.float32)
    out = nki.simulate_kernel(nki.jit(vector_transpose, platform_target=target), x)
    assert np.array_equal(out, x.T)


@pytest.mark.parametrize("shape,dim", [((128, 40), 1), ((48, 64), 0), ((128, 16), 0)])
def test_vector_transpose_blocks_must_tile_the_data(shape, dim):
    e = trace_error(vector_transpose, RNG.random(shape, np.float32))
    check_diag(e, M, "err_size_of_dimension_exceed_arch_limit",
               f"size of dimension {dim} in 'data[{shape[0]}, {shape[1]}]' of 'nc_transpose' exceed architecture "
               "limitation of 32", [("vector_transpose", "nisa.nc_transpose")], api="nisa.nc_transpose")


# ---- PSUM dtype of matmul results ----------------------------------------------------------------

def psum_matmul(a, b, psum_dtype, how):
    out = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.ndarray((128, 128), dtype=psum_dtype, buffer=nl.psum)
    ta, tb = nl.load(a), nl.load(b)
    if how == "nc_matmul":
        acc[...] = nisa.nc_matmul(ta, tb)  # ERR:nc_matmul
    elif how == "nl.matmul":
        acc[...] = nl.matmul(ta, tb, transpose_x=True)  # ERR:nl.matmul
    elif how == "is_transpose":
        acc[...] = nisa.nc_matmul(ta, tb, is_transpose=True)  # ERR:is_transpose
    else:
        acc[...] = nisa.nc_transpose(ta, engine=nisa.tensor_engine)
    nl.store(out, value=nl.copy(acc, dtype=nl.float32))
    return out


@pytest.mark.parametrize("how,dtype", [("nc_matmul", nl.int8), ("nc_matmul", nl.bfloat16),
                                       ("nl.matmul", nl.float16), ("is_transpose", nl.int8),
                                       ("is_transpose", nl.float16)])
def test_matmul_results_need_an_accumulator_format(how, dtype):
    a, b = np.eye(128, dtype=np.float32), np.full((128, 128), 128.0, np.float32)
    e = trace_error(psum_matmul, a, b, dtype, how)
    name = np.dtype(dtype).name if dtype not in (nl.bfloat16,) else "bfloat16"
    expected = ("a PSUM tensor receiving a Tensor-Engine transpose must be float32, int32, bfloat16 or the data's "
                "dtype (float32)" if how == "is_transpose" else
                "a PSUM tensor must be float32 or int32 (the accumulator formats)")
    check_diag(e, M, "err_supported_operand_dtype", f"{expected}, got {name}", [(how, "acc[...]")])


def test_a_transpose_lands_in_psum_in_its_data_dtype_from_neuroncore_v3():
    """The PE array passes a transpose's data through: on trn2 the PSUM tile may be the data's
    dtype (nki-samples' allocated_fused_linear writes fp16 there); trn1 takes fp32, int32 or bf16."""
    a = RNG.integers(-8, 8, (128, 128)).astype(np.float16)
    eye = np.eye(128, dtype=np.float16)
    out = nki.simulate_kernel(nki.jit(psum_matmul, platform_target="trn2"), a, eye, nl.float16, "is_transpose")
    assert np.array_equal(out, a.T.astype(np.float32))
    e = trace_error(nki.jit(psum_matmul, platform_target="trn1"), a, eye, nl.float16, "is_transpose")
    check_diag(e, M, "err_supported_operand_dtype",
               "a PSUM tensor receiving a Tensor-Engine transpose must be float32, int32 or bfloat16 on trn1 (also "
               "the data's dtype from NeuronCore-v3), got float16", [("is_transpose", "acc[...]")])


@pytest.mark.parametrize("how,dtype", [("nc_matmul", nl.float32), ("nc_matmul", nl.int32),
                                       ("is_transpose", nl.bfloat16), ("tensor_engine", nl.bfloat16)])
def test_accumulator_formats_and_transposes_into_bf16_psum_run(how, dtype):
    a = RNG.integers(-8, 8, (128, 128)).astype(np.float32)
    eye = np.eye(128, dtype=np.float32)
    b = eye if how in ("is_transpose", "tensor_engine") else RNG.integers(-8, 8, (128, 128)).astype(np.float32)
    out = nki.simulate_kernel(nki.jit(psum_matmul), a, b, dtype, how)
    assert np.array_equal(out, a.T @ b)


# ---- accumulation in affine_range ----------------------------------------------------------------
# Associative reductions are not loop-carried dependencies (seed 003 §4.1), in SBUF as in PSUM.

def sum_columns(x, loop, buffer):
    out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.zeros((128, 64), dtype=nl.float32, buffer=buffer)
    for i in loop(x.shape[1] // 64):
        acc += nl.load(x[:, i * 64:(i + 1) * 64])
    nl.store(out, value=nl.copy(acc))
    return out


@pytest.mark.parametrize("loop,buffer", [(nl.sequential_range, nl.sbuf), (nl.affine_range, nl.sbuf),
                                         (nl.affine_range, nl.psum)])
def test_accumulation_across_iterations_is_not_a_race(loop, buffer):
    x = RNG.integers(0, 16, (128, 256)).astype(np.float32)
    out = nki.simulate_kernel(nki.jit(sum_columns), x, loop, buffer, check_races=True)
    assert np.array_equal(out, x.reshape(128, 4, 64).sum(1))
