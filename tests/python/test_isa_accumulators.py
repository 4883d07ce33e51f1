"""The engines' reduce accumulator (reduce_cmd) as a stage of the instruction
that feeds it: nisa.activation(reduce_res=...) / activation_reduce is one
activation on the Scalar Engine and tensor_scalar_reduce one tensor_scalar on
the Vector Engine, each writing the accumulator register (and reduce_res) as
extra destinations; the profile counts the fused instruction once."""
import numpy as np
import pytest

import nkic
from neuronxcc import nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa

from nki_test_util import Markers, check_diag, ir_ops, simulate, trace_error, trace_ir

M = Markers(__file__)
RNG = np.random.default_rng(7)
X = RNG.standard_normal((128, 64)).astype(np.float32)
B = RNG.standard_normal((128, 1)).astype(np.float32)


def instructions(ir):
    return [l.strip() for l in ir.splitlines() if " = " in l and not l.strip().startswith("tensor ")]


def act_sum(x, b):
    out = nl.ndarray((128, 65), dtype=nl.float32, buffer=nl.shared_hbm)
    s = nl.ndarray((128, 1), dtype=nl.float32)
    e = nisa.activation_reduce(op=nl.exp, data=nl.load(x), reduce_op=np.add, reduce_res=s, bias=nl.load(b), scale=0.5)
    nl.store(out[:, 0:64], value=e)
    nl.store(out[:, 64:65], value=s)
    return out


def test_activation_reduce_is_one_scalar_engine_instruction():
    ir = trace_ir(act_sum, X, B)
    assert ir_ops(ir) == ["load", "load", "activation", "store", "store"]
    act = [l for l in instructions(ir) if "activation[act]" in l]
    assert act == ["e[i0, i1], reduce_accumulator[i0, 0], s[i0, 0] = activation[act](x_tile[i0, i1]; "
                   "multiply 0.5; add b_tile[i0, 0]; exp; reset_reduce add) iter=[128, 64]"], act
    got = simulate(act_sum, X, B)
    e = np.exp(X * np.float32(0.5) + B)
    np.testing.assert_allclose(got[:, :64], e, rtol=1e-6)
    np.testing.assert_allclose(got[:, 64], e.astype(np.float64).sum(1), rtol=1e-5, atol=1e-4)


def act_chain(x):
    """The register across instructions: a reset, a max fold restarted, then folded on."""
    out = nl.ndarray((128, 2), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(x)
    zero = nl.ndarray((128, 1), dtype=nl.float32)
    res = nl.ndarray((128, 1), dtype=nl.float32)
    nisa.activation(op=nl.copy, data=t, reduce_res=zero, reduce_cmd=nisa.reduce_cmd.reset)
    nisa.activation(op=nl.exp, data=t[:, 0:32], reduce_op=np.max, reduce_cmd=nisa.reduce_cmd.reset_reduce)
    nisa.activation(op=nl.exp, data=t[:, 32:64], reduce_op=np.max, reduce_res=res, reduce_cmd=nisa.reduce_cmd.reduce)
    nl.store(out[:, 0:1], value=zero)
    nl.store(out[:, 1:2], value=res)
    return out


def test_activation_accumulator_carries_across_instructions():
    k = nki.jit(act_chain, platform_target="trn2")
    lines = [l for l in instructions(trace_ir(k, X)) if "activation[act]" in l]
    assert [l.split("(", 1)[1].split(")")[0].rsplit("; ", 1)[1] for l in lines] == \
        ["reset", "reset_reduce maximum", "reduce maximum"]
    got = simulate(k, X)
    assert not got[:, 0].any()
    np.testing.assert_allclose(got[:, 1], np.exp(X).max(1), rtol=1e-6)


def ts_sum(x):
    out = nl.ndarray((128, 65), dtype=nl.float32, buffer=nl.shared_hbm)
    s = nl.ndarray((128, 1), dtype=nl.float32)
    y = nisa.tensor_scalar_reduce(data=nl.load(x), op0=np.multiply, operand0=2.0, reduce_op=np.add, reduce_res=s)
    nl.store(out[:, 0:64], value=y)
    nl.store(out[:, 64:65], value=s)
    return out


def test_tensor_scalar_reduce_is_one_vector_engine_instruction():
    ir = trace_ir(ts_sum, X)
    lines = [l for l in instructions(ir) if "tensor_scalar" in l]
    assert len(lines) == 1 and "tensor_scalar[dve](" in lines[0], lines
    assert lines[0].endswith("; multiply 2; reset_reduce add) iter=[128, 64]"), lines
    assert ir_ops(ir).count("tensor_reduce") == 0
    got = simulate(ts_sum, X)
    np.testing.assert_array_equal(got[:, :64], X * 2)
    np.testing.assert_allclose(got[:, 64], (X * 2).astype(np.float64).sum(1), rtol=1e-5, atol=1e-4)


def bf16_pair(reduce):
    def kernel(x):
        out = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.shared_hbm)
        t = nl.load(x)
        s = nl.ndarray((128, 1), dtype=nl.float32)
        if reduce:
            a = nisa.activation_reduce(op=nl.exp, data=t, reduce_op=np.add, reduce_res=s)
            y = nisa.tensor_scalar_reduce(data=a, op0=np.add, operand0=1.0, reduce_op=np.max, reduce_res=s)
        else:
            y = nisa.tensor_scalar(nisa.activation(op=nl.exp, data=t), np.add, 1.0)
        nl.store(out, value=y)
        return out
    return nki.jit(kernel, platform_target="trn2")


def test_profile_counts_the_fused_instruction_once_at_its_streaming_cost():
    x = RNG.random((128, 512)).astype(nl.bfloat16)
    fused, plain = (nkic.profile(bf16_pair(r), x, target="trn2") for r in (True, False))
    assert fused.instructions == plain.instructions == 4
    for engine in ("act", "dve"):
        assert fused.engines[engine].instructions == 1
        assert fused.engines[engine].busy_us == plain.engines[engine].busy_us


def k_res_wide(x):
    out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
    res = nl.ndarray((128, 4), dtype=nl.float32)
    nl.store(out, value=nisa.activation_reduce(op=nl.exp, data=nl.load(x), reduce_op=np.add,  # ERR:wide
                                               reduce_res=res))
    return out


def k_res_partitions(x):
    out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
    res = nl.ndarray((64, 1), dtype=nl.float32)
    nl.store(out, value=nisa.tensor_scalar_reduce(data=nl.load(x), op0=np.add, operand0=1.0,  # ERR:parts
                                                  reduce_op=np.add, reduce_res=res))
    return out


def k_res_hbm(x):
    out = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    nisa.activation_reduce(op=nl.exp, data=nl.load(x), reduce_op=np.add, reduce_res=out)  # ERR:hbm
    return out


def k_bitvec_fold(x):
    out = nl.ndarray((128, 64), dtype=nl.int32, buffer=nl.shared_hbm)
    res = nl.ndarray((128, 1), dtype=nl.int32)
    nl.store(out, value=nisa.tensor_scalar_reduce(data=nl.load(x), op0=np.add, operand0=1,  # ERR:bitvec
                                                  reduce_op=np.bitwise_or, reduce_res=res))
    return out


def k_mixed_pair(x):
    out = nl.ndarray((128, 64), dtype=nl.int32, buffer=nl.shared_hbm)
    nl.store(out, value=nisa.tensor_scalar(nl.load(x), np.add, 1, op1=np.bitwise_and, operand1=3))  # ERR:mixed
    return out


XI = np.arange(128 * 64, dtype=np.int32).reshape(128, 64)


@pytest.mark.parametrize("fn,x,marker,token,code,message", [
    (k_res_wide, X, "wide", "nisa", "err_elements_per_partition_mismatch",
     "'reduce_res' of 'activation_reduce' has 4 elements per partition, but must have exactly 1"),
    (k_res_partitions, X, "parts", "nisa", "err_num_partition_mismatch", "reduce_res[64, 1]"),
    (k_res_hbm, X, "hbm", "nisa", "err_unsupported_memory", "reduce_res"),
    (k_bitvec_fold, XI, "bitvec", "nisa", "err_instruction_unsupported_op", "bitwise_or"),
    (k_mixed_pair, XI, "mixed", "nisa", "err_instruction_unsupported_op", "add with bitwise_and"),
])
def test_accumulator_errors(fn, x, marker, token, code, message):
    e = trace_error(fn, x)
    check_diag(e, M, code, message, [(marker, token)])
