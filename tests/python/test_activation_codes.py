"""The official activation and direct-allocation codes (NKI_API.md §7.1): bias and
scale operands of nisa.activation, and what an allocated kernel may not do
(activations without a bias, on-chip tensors with an initial value)."""
import numpy as np
import pytest

from neuronxcc import nki
import neuronxcc.nki.compiler as ncc
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

from nki_test_util import Markers, check_diag, trace_error

M = Markers(__file__)
X = np.random.default_rng(0).random((128, 64), dtype=np.float32)


def k_bias_int8(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    e = nisa.activation(op=nl.exp, data=t, bias=nisa.memset((128, 1), 1, dtype=np.int8))  # ERR:bias_int8
    nl.store(out, e)
    return out


def k_scale_fp16(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    e = nisa.activation(op=nl.exp, data=t, scale=nisa.memset((128, 1), 1.2, dtype=np.float16))  # ERR:scale_fp16
    nl.store(out, e)
    return out


def k_scale_row(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    e = nisa.activation(op=nl.exp, data=t, scale=nisa.memset((1, 128), 1.2, dtype=np.float32))  # ERR:scale_row
    nl.store(out, e)
    return out


def k_allocated_no_bias(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 64), dtype=x.dtype, buffer=ncc.sbuf.mod_alloc(base_addr=0))
    t[...] = nl.load(x)
    e = nl.ndarray((128, 64), dtype=x.dtype, buffer=ncc.sbuf.mod_alloc(base_addr=1024))
    e[...] = nisa.activation(np.exp, data=t)  # ERR:allocated_no_bias
    nl.store(out, e)
    return out


def k_allocated_nl_exp(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 64), dtype=x.dtype, buffer=ncc.sbuf.mod_alloc(base_addr=0))
    t[...] = nl.load(x)
    e = nl.ndarray((128, 64), dtype=x.dtype, buffer=ncc.sbuf.mod_alloc(base_addr=1024))
    e[...] = nl.exp(t)  # ERR:allocated_nl_exp
    nl.store(out, e)
    return out


def k_allocated_full(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.full((128, 64), fill_value=1.0, dtype=x.dtype, buffer=ncc.sbuf.mod_alloc(base_addr=0))  # ERR:allocated_full
    nl.store(out, t)
    return out


CASES = {
    "bias_int8": (k_bias_int8, "err_activation_bias_invalid_type",
                  "Bias parameter of activation or activation_reduce must be a vector of type float32, float16, or "
                  "bfloat16, got int8", "nisa.activation"),
    "scale_fp16": (k_scale_fp16, "err_activation_scale_invalid_type",
                   "Scale parameter of activation or activation_reduce must be a scalar or vector of type float32, "
                   "got float16", "nisa.activation"),
    "scale_row": (k_scale_row, "err_activation_scale_scalar_or_vector",
                  "Scale parameter of activation must be either a scalar value or a 1D vector spanning the partition "
                  "dimension, got a tile of shape [1, 128]", "nisa.activation"),
    "allocated_no_bias": (k_allocated_no_bias, "err_bias_tensor_must_be_specified_in_allocation",
                          "Bias tensor of an activation op must be specified in allocated NKI kernels", "nisa.activation"),
    "allocated_nl_exp": (k_allocated_nl_exp, "err_bias_tensor_must_be_specified_in_allocation",
                         "Bias tensor of an activation op must be specified in allocated NKI kernels", "nl.exp"),
    "allocated_full": (k_allocated_full, "err_tensor_creation_on_scratchpad_with_init_value_not_supported",
                       "Creating SBUF/PSUM tensor with init value is not supported in allocated NKI kernels", "nl.full"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_code_message_and_location(case):
    fn, code, message, api = CASES[case]
    e = trace_error(fn, X)
    token = "nisa." if api.startswith("nisa") else api
    check_diag(e, M, code, message, [(case, token)], api=api)


@nki.jit
def legal_activations(x):
    out = nl.ndarray((2, 128, 64), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    nl.store(out[0], nisa.activation(op=nl.exp, data=t, bias=nisa.memset((128, 1), 0.5, dtype=nl.bfloat16),
                                      scale=nisa.memset((128, 1), 2.0, dtype=np.float32)))
    nl.store(out[1], nisa.activation(op=nl.exp, data=t, scale=1.5))
    return out


def test_legal_bias_and_scale_forms():
    got = legal_activations(X)
    np.testing.assert_allclose(got[0], np.exp(2 * X + 0.5), rtol=1e-5)
    np.testing.assert_allclose(got[1], np.exp(1.5 * X), rtol=1e-5)
