"""nisa.select_reduce and nisa.range_select are one Vector Engine instruction each
(`select`, `range_select`) carrying the reduce accumulator stage: the numbers
against numpy (the fold in fp32, in order along each partition), the one traced
instruction, the current API's destination-passing forms, and the builders' rules."""
import functools

import numpy as np
import pytest

from neuronxcc import nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa
import nki as cnki
import nki.isa as cnisa
import nki.language as cnl

from nki_test_util import Markers, check_diag, ir_ops, simulate, trace_error, trace_ir

M = Markers(__file__)
RNG = np.random.default_rng(21)
X = (RNG.standard_normal((128, 96)) * 100).astype(np.float32)
PR = RNG.integers(0, 2, (128, 96)).astype(np.uint8)
# A float predicate: -0.0 is zero, NaN is true.
PRF = RNG.choice(np.array([0.0, -0.0, 1.0, np.nan], np.float32), (128, 96))
LO = RNG.integers(0, 40, (128, 1)).astype(np.float32)
HI = LO + RNG.integers(0, 60, (128, 1)).astype(np.float32)


def fold(op, rows):
    """The register's fold: fp32, sequential along each partition (fp32.min terms of a
    sum overflow to -inf, as on the engine)."""
    with np.errstate(over="ignore"):
        return np.array([functools.reduce(lambda a, b: np.float32(op(a, b)), r.astype(np.float32)) for r in rows],
                        np.float32)


def to_bf16(x):
    """x rounded to bfloat16 (nearest, ties to even), back in fp32."""
    bits = x.astype(np.float32).view(np.uint32)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000).astype(np.uint32).view(np.float32)


def instructions(ir):
    return [l.strip() for l in ir.splitlines() if " = " in l and not l.strip().startswith("tensor ")]


def selects(x, pr, prf, lo):
    o = nl.ndarray((3, 128, 96), dtype=nl.float32, buffer=nl.shared_hbm)
    r = nl.ndarray((3, 128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    tx, tp, tf, tl = nl.load(x), nl.load(pr), nl.load(prf), nl.load(lo)
    acc = nl.ndarray((128, 1), dtype=nl.float32)
    d = nl.ndarray((128, 96), dtype=nl.bfloat16)
    nisa.select_reduce(dst=d, predicate=tp, on_true=tx, on_false=tl, reduce_res=acc,
                       reduce_cmd=nisa.reduce_cmd.reset_reduce, reduce_op=np.add)
    nl.store(o[0], value=d)
    nl.store(r[0], value=acc)
    d2 = nl.ndarray((128, 96), dtype=nl.float32)
    nisa.select_reduce(dst=d2, predicate=tf, on_true=tx, on_false=3.5, reverse_pred=True, reduce_res=acc,
                       reduce_cmd=nisa.reduce_cmd.reduce, reduce_op=np.add)
    nl.store(o[1], value=d2)
    nl.store(r[1], value=acc)
    # dst splits the free elements differently; the mask keeps partitions [0, 100).
    d3 = nl.ndarray((128, 2, 48), dtype=nl.float32)
    res = nisa.memset((128, 1), 7.0, dtype=nl.float32)
    nisa.select_reduce(dst=d3, predicate=tp, on_true=tx, on_false=-1.0, reduce_res=res,
                       reduce_cmd=nisa.reduce_cmd.reset_reduce, reduce_op=np.min, mask=nl.arange(128)[:, None] < 100)
    nl.store(o[2], value=d3.reshape((128, 96)))
    nl.store(r[2], value=res)
    return o, r


def test_select_reduce_against_numpy():
    o, r = simulate(selects, X, PR, PRF, LO)
    sel0 = to_bf16(np.where(PR != 0, X, LO))
    np.testing.assert_array_equal(o[0], sel0)
    np.testing.assert_array_equal(r[0][:, 0], fold(np.add, sel0))
    sel1 = np.where(PRF == 0, X, np.float32(3.5))  # reverse_pred: where the predicate is zero
    np.testing.assert_array_equal(o[1], sel1)
    # reduce: the register folds the instruction's own fold in.
    np.testing.assert_array_equal(r[1][:, 0], r[0][:, 0] + fold(np.add, sel1))
    sel2 = np.where(PR != 0, X, np.float32(-1.0))
    np.testing.assert_array_equal(o[2][:100], sel2[:100])
    np.testing.assert_array_equal(r[2][:100, 0], sel2[:100].min(1))
    np.testing.assert_array_equal(r[2][100:, 0], 7.0)  # partitions the mask leaves out: untouched


def ranges(x, lo, hi):
    o = nl.ndarray((3, 128, 96), dtype=nl.float32, buffer=nl.shared_hbm)
    r = nl.ndarray((3, 128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    tx, tl, th = nl.load(x), nl.load(lo), nl.load(hi)
    acc = nl.ndarray((128, 1), dtype=nl.float32)
    t0 = nisa.range_select(on_true_tile=tx, comp_op0=nl.greater, comp_op1=nl.less_equal, bound0=tl, bound1=th,
                           range_start=7, reduce_cmd=nisa.reduce_cmd.reset_reduce, reduce_res=acc, reduce_op=np.add)
    nl.store(o[0], value=t0)
    nl.store(r[0], value=acc)
    # Several free dims walk flat; a number bound; bf16 out; the register folds on.
    t1 = nisa.range_select(on_true_tile=tx.reshape((128, 4, 24)), comp_op0=nl.greater_equal, comp_op1=nl.less,
                           bound0=tl, bound1=50.0, on_false_value=0.0, dtype=nl.bfloat16,
                           reduce_cmd=nisa.reduce_cmd.reduce, reduce_res=acc)
    nl.store(o[1], value=t1.reshape((128, 96)))
    nl.store(r[1], value=acc)
    t2 = nisa.range_select(on_true_tile=tx, comp_op0=nl.not_equal, comp_op1=nl.greater_equal, bound0=tl, bound1=th,
                           range_start=-20, reduce_cmd=nisa.reduce_cmd.reset, reduce_res=acc)
    nl.store(o[2], value=t2)
    nl.store(r[2], value=acc)
    return o, r


def test_range_select_against_numpy():
    o, r = simulate(ranges, X, LO, HI)
    i = np.arange(96, dtype=np.float32)[None, :]
    sel0 = np.where((i + 7 > LO) & (i + 7 <= HI), X, nl.fp32.min)
    np.testing.assert_array_equal(o[0], sel0)
    np.testing.assert_array_equal(r[0][:, 0], fold(np.add, sel0))
    sel1 = to_bf16(np.where((i >= LO) & (i < 50), X, 0.0))
    np.testing.assert_array_equal(o[1], sel1)
    np.testing.assert_array_equal(r[1][:, 0], np.maximum(r[0][:, 0], sel1.max(1)))
    np.testing.assert_array_equal(o[2], np.where((i - 20 != LO) & (i - 20 >= HI), X, nl.fp32.min))
    np.testing.assert_array_equal(r[2][:, 0], 0.0)  # reset zeroes the register


def one_each(x, pr, lo, hi):
    o = nl.ndarray((2, 128, 96), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.ndarray((128, 1), dtype=nl.float32)
    tx = nl.load(x)
    d = nl.ndarray((128, 96), dtype=nl.float32)
    nisa.select_reduce(dst=d, predicate=nl.load(pr), on_true=tx, on_false=-5.0, reverse_pred=True,
                       reduce_res=acc, reduce_cmd=nisa.reduce_cmd.reset_reduce)
    nl.store(o[0], value=d)
    t = nisa.range_select(on_true_tile=tx, comp_op0=nl.greater_equal, comp_op1=nl.less, bound0=nl.load(lo),
                          bound1=nl.load(hi), range_start=2, reduce_cmd=nisa.reduce_cmd.reduce, reduce_res=acc)
    nl.store(o[1], value=t)
    return o


def test_each_call_traces_as_one_vector_engine_instruction():
    ir = trace_ir(one_each, X, PR, LO, HI)
    assert ir_ops(ir) == ["load", "load", "select", "store", "load", "load", "range_select", "store"], ir
    [sel] = [l for l in instructions(ir) if "select[dve]" in l and "range" not in l]
    assert sel == ("d[i0, i1], reduce_accumulator[i0, 0], acc[i0, 0] = select[dve](pr_tile[i0, i1], tx[i0, i1], -5; "
                   "reverse_pred; reset_reduce maximum) iter=[128, 96]"), sel
    [rs] = [l for l in instructions(ir) if "range_select[dve]" in l]
    assert rs == ("t[i0, i1], reduce_accumulator[i0, 0], acc[i0, 0] = range_select[dve](tx[i0, i1], "
                  "-3.40282347e+38, i1 + 2; greater_equal lo_tile[i0, 0]; less hi_tile[i0, 0]; reduce maximum) "
                  "iter=[128, 96]"), rs


@cnki.jit
def current_selects(x, pr, lo, hi):
    o = cnl.ndarray((2, 128, 96), dtype=cnl.float32, buffer=cnl.shared_hbm)
    r = cnl.ndarray((128, 1), dtype=cnl.float32, buffer=cnl.shared_hbm)
    tx = cnl.ndarray((128, 96), dtype=cnl.float32, buffer=cnl.sbuf)
    tp = cnl.ndarray((128, 96), dtype=cnl.uint8, buffer=cnl.sbuf)
    tl = cnl.ndarray((128, 1), dtype=cnl.float32, buffer=cnl.sbuf)
    th = cnl.ndarray((128, 1), dtype=cnl.float32, buffer=cnl.sbuf)
    for dst, src in ((tx, x), (tp, pr), (tl, lo), (th, hi)):
        cnisa.dma_copy(dst=dst, src=src)
    acc = cnl.ndarray((128, 1), dtype=cnl.float32, buffer=cnl.sbuf)
    d = cnl.ndarray((128, 96), dtype=cnl.float32, buffer=cnl.sbuf)
    cnisa.select_reduce(dst=d, predicate=tp, on_true=tx, on_false=tl, reduce_res=acc,
                        reduce_cmd=cnisa.reduce_cmd.reset_reduce)
    cnisa.dma_copy(dst=o[0], src=d)
    t = cnl.ndarray((128, 96), dtype=cnl.float32, buffer=cnl.sbuf)
    cnisa.range_select(dst=t, on_true_tile=tx, comp_op0=cnl.greater_equal, comp_op1=cnl.less, bound0=tl,
                       bound1=th, reduce_cmd=cnisa.reduce_cmd.reduce, reduce_res=acc)
    cnisa.dma_copy(dst=o[1], src=t)
    cnisa.dma_copy(dst=r, src=acc)
    return o, r


def test_current_api_writes_its_destinations():
    o, r = current_selects(X, PR, LO, HI)
    i = np.arange(96, dtype=np.float32)[None, :]
    sel0 = np.where(PR != 0, X, LO)
    sel1 = np.where((i >= LO) & (i < HI), X, nl.fp32.min)
    np.testing.assert_array_equal(o[0], sel0)
    np.testing.assert_array_equal(o[1], sel1)
    np.testing.assert_array_equal(r[:, 0], np.maximum(sel0.max(1), sel1.max(1)))


def k_not_a_comparison(x, lo):
    out = nl.ndarray((128, 96), dtype=nl.float32, buffer=nl.shared_hbm)
    b = nl.load(lo)
    nl.store(out, value=nisa.range_select(on_true_tile=nl.load(x), comp_op0=nl.greater_equal,  # ERR:not_cmp
                                          comp_op1=nl.add, bound0=b, bound1=b))
    return out


def k_wide_bound(x, lo):
    out = nl.ndarray((128, 96), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(x)
    nl.store(out, value=nisa.range_select(on_true_tile=t, comp_op0=nl.greater_equal,  # ERR:wide_bound
                                          comp_op1=nl.less, bound0=nl.load(lo), bound1=t))
    return out


def k_fill_not_a_number(x, lo):
    out = nl.ndarray((128, 96), dtype=nl.float32, buffer=nl.shared_hbm)
    b = nl.load(lo)
    nl.store(out, value=nisa.range_select(on_true_tile=nl.load(x), comp_op0=nl.greater_equal,  # ERR:fill
                                          comp_op1=nl.less, bound0=b, bound1=b, on_false_value=b))
    return out


def select_folding(reduce_op):
    def k(x, lo):
        out = nl.ndarray((128, 96), dtype=nl.float32, buffer=nl.shared_hbm)
        d = nl.ndarray((128, 96), dtype=nl.float32)
        t = nl.load(x)
        nisa.select_reduce(dst=d, predicate=t, on_true=t, on_false=0.0,  # ERR:fold
                           reduce_cmd=nisa.reduce_cmd.reset_reduce, reduce_op=reduce_op)
        nl.store(out, value=d)
        return out
    return k


def k_predicate_in_hbm(x, lo):
    out = nl.ndarray((128, 96), dtype=nl.float32, buffer=nl.shared_hbm)
    d = nl.ndarray((128, 96), dtype=nl.float32)
    nisa.select_reduce(dst=d, predicate=x, on_true=nl.load(x), on_false=0.0)  # ERR:pred_hbm
    nl.store(out, value=d)
    return out


def k_on_true_wrong_size(x, lo):
    out = nl.ndarray((128, 96), dtype=nl.float32, buffer=nl.shared_hbm)
    d = nl.ndarray((128, 96), dtype=nl.float32)
    t = nl.load(x)
    nisa.select_reduce(dst=d, predicate=t, on_true=t[:, 0:48], on_false=0.0)  # ERR:on_true_size
    nl.store(out, value=d)
    return out


@pytest.mark.parametrize("kernel,code,message,marker,api", [
    (k_not_a_comparison, "err_instruction_unsupported_op", "add as comp_op1", "not_cmp", "nisa.range_select"),
    (k_wide_bound, "err_tile_shape_mismatch", "t[128, 96]", "wide_bound", "nisa.range_select"),
    (k_fill_not_a_number, "err_unexpected_type_of_operand", "on_false_value", "fill", "nisa.range_select"),
    (select_folding(None), "err_operand_cannot_be_none", "reduce_op", "fold", "nisa.select_reduce"),
    (select_folding(np.bitwise_and), "err_instruction_unsupported_op", "bitwise_and", "fold", "nisa.select_reduce"),
    (k_predicate_in_hbm, "err_unsupported_memory", "predicate", "pred_hbm", "nisa.select_reduce"),
    (k_on_true_wrong_size, "err_param_shape_incompatible_with_numpy", "[128, 48]", "on_true_size",
     "nisa.select_reduce"),
])
def test_builder_rules(kernel, code, message, marker, api):
    e = trace_error(kernel, X, LO)
    token = "range_select" if api == "nisa.range_select" else "select_reduce"
    check_diag(e, M, code, message, [(marker, token, -5)], api=api)
