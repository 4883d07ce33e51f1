"""Engine semantics the NKI reference examples rely on: partition reductions of
N-D tiles, the fp8 double-row matmul, in-place stream shuffles, the reduce
accumulator that lives across instructions (reduce_cmd), DMA transposes from HBM,
and kernels returning nl.hbm tensors."""
import numpy as np
import pytest

import nkic
from neuronxcc import nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

from nki_test_util import Markers, check_diag, trace_error

M = Markers(__file__)
RNG = np.random.default_rng(0)


@nki.jit
def partition_sum(a):
    out = nl.ndarray((1,) + a.shape[1:], dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, nisa.tensor_partition_reduce(np.add, nl.load(a)))
    return out


@nki.jit
def partition_max_blocks(a):
    out = nl.ndarray((a.shape[0], 1) + a.shape[2:], dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(a.shape[0]):
        nl.store(out[i], nisa.tensor_partition_reduce(np.max, nl.load(a[i])))
    return out


def test_partition_reduce_keeps_every_free_dim():
    a = RNG.random((128, 32, 4), dtype=np.float32)
    np.testing.assert_allclose(partition_sum(a), a.sum(axis=0, keepdims=True), rtol=1e-5)
    b = RNG.random((3, 128, 8, 8), dtype=np.float32)
    np.testing.assert_array_equal(partition_max_blocks(b), b.max(axis=1, keepdims=True))


def double_row(a, b):
    out = nl.ndarray((a.shape[2], b.shape[2]), dtype=nl.float32, buffer=nl.shared_hbm)
    nl.store(out, nisa.nc_matmul(nl.load(a), nl.load(b), perf_mode="double_row_gen3"))  # ERR:double_row
    return out


def test_double_row_matmul_contracts_partitions_and_pairs():
    a = RNG.standard_normal((128, 2, 16)).astype(nl.float8_e5m2)
    b = RNG.standard_normal((128, 2, 512)).astype(nl.float8_e5m2)
    got = nki.jit(double_row, platform_target="trn2")(a, b)
    want = np.einsum("kli,klj->ij", a.astype(np.float64), b.astype(np.float64))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)


def test_double_row_matmul_needs_neuroncore_v3_and_fp8():
    a = np.ones((128, 2, 16), nl.float8_e5m2)
    e = trace_error(nki.jit(double_row, platform_target="trn1"), a, a)
    check_diag(e, M, "err_min_arch_support_for_inst",
               "'nisa.nc_matmul(perf_mode='double_row_gen3')' is available on NeuronCore-v3 and newer only",
               [("double_row", "nisa.")])
    f = np.ones((128, 2, 16), nl.bfloat16)
    e = trace_error(nki.jit(double_row, platform_target="trn2"), f, f)
    check_diag(e, M, "err_supported_operand_dtype", "expected one of {float8_e4m3, float8_e5m2, float8_e4m3fn}",
               [("double_row", "nisa.")])


@nki.jit
def rotate_in_place(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    nisa.nc_stream_shuffle(src=t, dst=t, shuffle_mask=[(i - 1) % 32 for i in range(32)])
    nl.store(out, t)
    return out


def test_in_place_stream_shuffle_reads_before_it_writes():
    x = RNG.random((64, 16), dtype=np.float32)
    want = np.concatenate([np.roll(x[q:q + 32], 1, axis=0) for q in (0, 32)])
    np.testing.assert_array_equal(rotate_in_place(x), want)


@nki.jit(platform_target="trn2")
def chained_range_select(x, lo, hi):
    """Three range_selects over consecutive windows fold into one accumulator; only the
    last one names reduce_res."""
    res = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    t, b0, b1 = nl.load(x), nl.load(lo), nl.load(hi)
    acc = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    for w in nl.static_range(3):
        cmd = nisa.reduce_cmd.reset_reduce if w == 0 else nisa.reduce_cmd.reduce
        nisa.range_select(on_true_tile=t, comp_op0=np.greater_equal, comp_op1=np.less, bound0=b0, bound1=b1,
                          reduce_cmd=cmd, reduce_op=np.max, range_start=64 * w,
                          reduce_res=acc if w == 2 else None)
    nl.store(res, acc)
    return res


def test_reduce_accumulator_lives_across_instructions():
    x = RNG.random((128, 64), dtype=np.float32)
    lo = np.full((128, 1), 10, np.float32)
    hi = np.full((128, 1), 150, np.float32)
    got = chained_range_select(x, lo, hi)
    idx = np.arange(64)
    windows = [np.where((idx + 64 * w >= 10) & (idx + 64 * w < 150), x, nl.fp32.min).max(axis=1) for w in range(3)]
    np.testing.assert_array_equal(got[:, 0], np.max(windows, axis=0))


@nki.jit
def transpose_nd_from_hbm(x):
    perm = ((1, 0), (2, 1, 0), (3, 1, 2, 0))[len(x.shape) - 2]
    out = nl.ndarray(tuple(x.shape[d] for d in perm), dtype=x.dtype, buffer=nl.hbm)
    nl.store(out, nisa.dma_transpose(x))
    return out


@pytest.mark.parametrize("shape,perm", [((64, 128), (1, 0)), ((4, 6, 32), (2, 1, 0)), ((2, 3, 4, 16), (3, 1, 2, 0))])
def test_dma_transpose_from_hbm_and_an_hbm_return(shape, perm):
    # 2.26: a 3-D source is permuted (2, 1, 0), a 4-D one (3, 1, 2, 0).
    x = RNG.random(shape, dtype=np.float32)
    np.testing.assert_array_equal(transpose_nd_from_hbm(x), x.transpose(perm))
