"""Scalar operands the 0.6 stub types `float | NkiTensor` given as per-partition [P, 1]
tiles (NKI_CURRENT_API.md §6.5-6.6): exponential's reduce_init, tensor_scalar_reduce's
reduce_init (with its reduce_cmd chain and reduce_res_negate) and activate2's
relu_param, simulated against numpy, each misuse a diagnostic at the user's line."""
import numpy as np
import pytest

import nki
import nki.isa as nisa
import nki.language as nl
from nki_current_util import loaded, sbuf, stored
from nki_test_util import Markers, check_diag, trace_error, trace_ir

M = Markers(__file__)
RNG = np.random.default_rng(11)
A = RNG.uniform(-1, 1, (128, 48)).astype(np.float32)
INIT = RNG.uniform(-4, 4, (128, 1)).astype(np.float32)
CMD = nisa.reduce_cmd


@pytest.fixture(autouse=True)
def _trn3(monkeypatch):
    # NeuronCore-v4 instructions: trn3, which the default target (trn2) is not.
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn3")


@nki.jit
def exp_from_tile(a, init):
    x, i = loaded(a), loaded(init)
    y, s = sbuf(a.shape), sbuf((a.shape[0], 1))
    nisa.exponential(dst=y, src=x, reduce_res=s, reduce_cmd=CMD.load_reduce, reduce_init=i)
    return stored(s)


def test_exponential_load_reduce_starts_each_partition_from_its_reduce_init():
    s = nki.simulate(exp_from_tile)(A, INIT)
    np.testing.assert_allclose(s[:, 0], INIT[:, 0] + np.exp(A).sum(axis=1), rtol=1e-5)


@nki.jit
def tsr_chain(a, init):
    x, i = loaded(a), loaded(init)
    y = sbuf(a.shape)
    first, second, third, fourth = (sbuf((a.shape[0], 1)) for _ in range(4))
    nisa.tensor_scalar_reduce(dst=y, data=x, op0=nl.multiply, operand0=2.0, reduce_op=nl.add, reduce_res=first)
    nisa.tensor_scalar_reduce(dst=y, data=x, op0=nl.add, operand0=1.0, reduce_op=nl.add, reduce_res=None,
                              reduce_cmd=CMD.load_reduce, reduce_init=i)
    nisa.tensor_scalar_reduce(dst=y, data=x, op0=nl.add, operand0=1.0, reduce_op=nl.add, reduce_res=second,
                              reduce_cmd=CMD.reduce, reduce_res_negate=True)
    nisa.tensor_scalar_reduce(dst=y, data=x, op0=nl.subtract, operand0=i, reduce_op=nl.maximum, reduce_res=third,
                              reduce_cmd=CMD.load_reduce, reduce_init=0.5)
    nisa.tensor_scalar_reduce(dst=y, data=x, op0=nl.multiply, operand0=i, reduce_op=nl.minimum, reduce_res=fourth)
    return stored(first), stored(second), stored(third), stored(fourth), stored(y)


def test_tensor_scalar_reduce_follows_reduce_cmd_reduce_init_and_reduce_res_negate():
    first, second, third, fourth, y = nki.simulate(tsr_chain)(A, INIT)
    np.testing.assert_allclose(first[:, 0], (2 * A).sum(axis=1), rtol=1e-5)
    # load_reduce from the tile, then reduce folds on; only reduce_res is negated.
    np.testing.assert_allclose(second[:, 0], -(INIT[:, 0] + 2 * (A + 1).sum(axis=1)), rtol=1e-5)
    np.testing.assert_allclose(third[:, 0], np.maximum(0.5, (A - INIT).max(axis=1)), rtol=1e-6)
    np.testing.assert_allclose(fourth[:, 0], (A * INIT).min(axis=1), rtol=1e-6)
    np.testing.assert_allclose(y, A * INIT, rtol=1e-6)
    ir = trace_ir(tsr_chain, A, INIT)
    assert "load_reduce add from" in ir and " negate" in ir


@nki.jit
def tsr_abs_max(a):
    x = loaded(a)
    y, m = sbuf(a.shape), sbuf((a.shape[0], 1))
    nisa.tensor_scalar_reduce(dst=y, data=x, op0=nl.abs, operand0=0.0, reduce_op=nl.maximum, reduce_res=m)
    return stored(m)


def test_tensor_scalar_reduce_takes_a_unary_op0():
    """The kernel library's abs-max: a unary op0 with operand0 0."""
    np.testing.assert_array_equal(nki.simulate(tsr_abs_max)(A)[:, 0], np.abs(A).max(axis=1))


@nki.jit
def act2_relu_tile(a, p):
    x, rp = loaded(a), loaded(p)
    y, z = sbuf(a.shape), sbuf(a.shape)
    nisa.activate2(dst=y, op=nl.tanh, data=x, imm0=2.0, imm1=0.5, op0=nl.multiply, op1=nl.add, relu_param=rp)
    nisa.activate2(dst=z, op=nl.tanh, data=x, imm0=2.0, imm1=0.5, op0=nl.multiply, op1=nl.add)
    return stored(y), stored(z)


def test_activate2_takes_relu_param_as_a_tile():
    y, z = nki.simulate(act2_relu_tile)(A, INIT)
    np.testing.assert_array_equal(y, z)  # no activation nkic has reads the parameter
    np.testing.assert_allclose(y, np.tanh(A * 2 + 0.5), rtol=1e-6, atol=1e-7)


# ---------------------------------------------------------------- diagnostics

@nki.jit
def exp_init_full_tile(a):
    x = loaded(a)
    nisa.exponential(dst=x, src=x, reduce_cmd=CMD.load_reduce, reduce_init=x)  # ERR:exp_full
    return a


@nki.jit
def exp_init_bf16(a):
    x = loaded(a)
    i = sbuf((a.shape[0], 1), nl.bfloat16)
    nisa.memset(dst=i, value=1.0)
    nisa.exponential(dst=x, src=x, reduce_cmd=CMD.load_reduce, reduce_init=i)  # ERR:exp_bf16
    return a


@nki.jit
def exp_init_tile_unused(a):
    x = loaded(a)
    i = sbuf((a.shape[0], 1))
    nisa.memset(dst=i, value=1.0)
    nisa.exponential(dst=x, src=x, reduce_cmd=CMD.reset_reduce, reduce_init=i)  # ERR:exp_unused
    return a


@nki.jit
def tsr_load_without_init(a):
    x = loaded(a)
    nisa.tensor_scalar_reduce(dst=x, data=x, op0=nl.add, operand0=1.0, reduce_op=nl.add,  # ERR:tsr_load
                              reduce_cmd=CMD.load_reduce)
    return a


@nki.jit
def tsr_init_unused(a):
    x = loaded(a)
    nisa.tensor_scalar_reduce(dst=x, data=x, op0=nl.add, operand0=1.0, reduce_op=nl.add,  # ERR:tsr_unused
                              reduce_init=2.0)
    return a


@nki.jit
def tsr_idle(a):
    x = loaded(a)
    nisa.tensor_scalar_reduce(dst=x, data=x, op0=nl.add, operand0=1.0, reduce_op=nl.add,  # ERR:tsr_idle
                              reduce_cmd=CMD.idle)
    return a


@nki.jit
def tsr_divide_fold(a):
    x = loaded(a)
    nisa.tensor_scalar_reduce(dst=x, data=x, op0=nl.add, operand0=1.0, reduce_op=nl.divide)  # ERR:tsr_fold
    return a


@nki.jit
def tsr_bitvec(a):
    x = loaded(a)
    nisa.tensor_scalar_reduce(dst=x, data=x, op0=nl.bitwise_and, operand0=1, reduce_op=nl.add)  # ERR:tsr_op0
    return a


@nki.jit
def act2_relu_full_tile(a):
    x = loaded(a)
    nisa.activate2(dst=x, op=nl.exp, data=x, imm0=1.0, imm1=1.0, op0=nl.bypass, op1=nl.bypass,  # ERR:act2_relu
                   relu_param=x)
    return a


CASES = [
    (exp_init_full_tile, "exp_full", "err_elements_per_partition_mismatch", "reduce_init"),
    (exp_init_bf16, "exp_bf16", "err_supported_operand_dtype",
     "reduce_init of 'nisa.exponential' is a float32 tile, got 'bfloat16'"),
    (exp_init_tile_unused, "exp_unused", "err_unsupported_args",
     "reduce_init is read only with reduce_cmd.load_reduce; leave it 0.0"),
    (tsr_load_without_init, "tsr_load", "err_unsupported_args",
     "unsupported arguments to 'nisa.tensor_scalar_reduce': reduce_cmd.load_reduce starts from reduce_init: give it"),
    (tsr_init_unused, "tsr_unused", "err_unsupported_args",
     "reduce_init is read only with reduce_cmd.load_reduce; leave it None"),
    (tsr_idle, "tsr_idle", "err_unsupported_args", "reduce_cmd none is not one of reset_reduce, reduce, load_reduce"),
    (tsr_divide_fold, "tsr_fold", "err_unsupported_args", "reduce_op divide is not one of add, multiply, maximum, minimum"),
    (tsr_bitvec, "tsr_op0", "err_instruction_unsupported_op", "bitwise_and as op0 (not a bitvec operator)"),
    (act2_relu_full_tile, "act2_relu", "err_tile_shape_mismatch",
     "number of elements per partition mismatch in parameters (t.1[128, 48], t.1[128, 48]) of 'activate2'"),
]


@pytest.mark.parametrize("kernel,marker,code,message", CASES, ids=[c[1] for c in CASES])
def test_misuse(kernel, marker, code, message):
    check_diag(trace_error(kernel, A), M, code, message, [(marker, "nisa.")])
