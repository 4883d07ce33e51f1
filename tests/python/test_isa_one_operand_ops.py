"""abs, rsqrt and reciprocal in the op slots of the ISA tensor ops (2.23+, NKI_API.md
§3.2): they read the data and ignore the slot's operand (as public kernels write
`nisa.tensor_scalar_reduce(data=x, op0=nl.abs, operand0=0.0, ...)`); any other
one-operand op in a two-operand slot is err_instruction_unsupported_op."""
import numpy as np
import pytest

from neuronxcc import nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

from nki_test_util import Markers, check_diag, trace_error

M = Markers(__file__)
X = np.random.default_rng(0).uniform(-4, 4, (128, 64)).astype(np.float32)
X[X == 0] = 1.0


@nki.jit
def slots(x):
    out = nl.ndarray((6, 128, 64), dtype=x.dtype, buffer=nl.shared_hbm)
    amax = nl.ndarray((128, 1), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    red = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    nl.store(out[0], nisa.tensor_scalar(t, nl.abs, 0.0))
    nl.store(out[1], nisa.tensor_scalar(t, np.multiply, 2.0, op1=nl.abs, operand1=5.0))
    nl.store(out[2], nisa.tensor_scalar(nisa.tensor_scalar(t, nl.abs, 0.0), nl.rsqrt, 1.0, reverse0=True))
    nl.store(out[3], nisa.tensor_tensor(t, t, op=nl.reciprocal))
    nl.store(out[4], nisa.tensor_scalar_reduce(data=t, op0=nl.abs, operand0=0.0, reduce_op=nl.max, reduce_res=red))
    nl.store(out[5], nisa.scalar_tensor_tensor(data=t, op0=nl.abs, operand0=3.0, op1=np.add, operand1=t))
    nl.store(amax, red)
    return out, amax


def test_one_operand_ops_read_the_data():
    out, amax = slots(X)
    np.testing.assert_array_equal(out[0], np.abs(X))
    np.testing.assert_array_equal(out[1], np.abs(2 * X))
    np.testing.assert_allclose(out[2], 1 / np.sqrt(np.abs(X)), rtol=1e-6)
    np.testing.assert_allclose(out[3], 1 / X, rtol=1e-6)
    np.testing.assert_array_equal(out[4], np.abs(X))
    np.testing.assert_array_equal(amax[:, 0], np.abs(X).max(axis=1))
    np.testing.assert_array_equal(out[5], np.abs(X) + X)


def k_exp_in_slot(x):
    t = nl.load(x)
    y = nisa.tensor_tensor(t, t, op=nl.exp)  # ERR:exp_slot


def test_other_one_operand_ops_are_rejected():
    e = trace_error(k_exp_in_slot, X)
    check_diag(e, M, "err_instruction_unsupported_op", "unsupported operator 'exp'", [("exp_slot", "nisa.")],
               api="nisa.tensor_tensor")
