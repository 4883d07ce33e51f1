"""Rules of the current API's reference that nkic enforces at the user's line, each with its
legal twin: activation's bias vector and its scalar bias from NeuronCore-v3 (NKI_CURRENT_API.md
§6.5); and nc_matmul's fp32 pairing (§6.4), which public kernels contradict."""
import numpy as np
import pytest

import nki
import nki.isa as nisa
import nki.language as nl
from nki_current_util import loaded, sbuf, stored
from nki_test_util import Markers, check_diag, trace_error

M = Markers(__file__)
X = np.random.default_rng(2).uniform(-1, 1, (128, 64)).astype(np.float32)


@pytest.fixture
def target(monkeypatch):
    def set_target(name):
        monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", name)
    return set_target


def product(moving_dtype):
    @nki.jit
    def k(a):
        s = loaded(a)
        m = sbuf(a.shape, moving_dtype)
        nisa.tensor_copy(dst=m, src=s)
        p = nl.ndarray((a.shape[1], a.shape[1]), nl.float32, buffer=nl.psum)
        nisa.nc_matmul(dst=p, stationary=s, moving=m)
        o = sbuf(p.shape)
        nisa.tensor_copy(dst=o, src=p)
        return stored(o)

    return k


def test_an_fp32_operand_multiplies_a_bf16_one_as_the_kernel_library_does(target):
    # The reference pairs fp32 with fp32 only; nki-library's rmsnorm_quant, which builds and runs,
    # multiplies a bf16 ones vector by fp32 values: nkic accepts it and computes in fp32.
    target("trn2")
    u = X.view(np.uint32).astype(np.uint64)
    m = ((u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000).astype(np.uint32).view(np.float32)  # X to bf16, to nearest even
    np.testing.assert_allclose(nki.simulate(product(nl.bfloat16))(X), X.T @ m, rtol=1e-4, atol=1e-4)


def test_two_fp32_operands_multiply(target):
    target("trn2")
    np.testing.assert_allclose(nki.simulate(product(nl.float32))(X), X.T @ X, rtol=1e-4, atol=1e-4)


def with_bias(shape=None, number=None):
    @nki.jit
    def k(a):
        t = loaded(a)
        if number is not None:
            nisa.activation(dst=t, op=nl.exp, data=t, bias=number)  # ERR:scalar
        else:
            b = sbuf(shape)
            nisa.memset(dst=b, value=0.5)
            nisa.activation(dst=t, op=nl.exp, data=t, bias=b)  # ERR:bias
        return stored(t)

    return k


def test_a_bias_is_a_vector_over_the_partitions(target):
    target("trn2")
    e = trace_error(with_bias(shape=(128, 64)), X)
    check_diag(e, M, "err_activation_bias_vector",
               "the bias of activation is a (128, 1) vector, one value per partition of data; got a tile of shape "
               "[128, 64]", [("bias", "nisa.")])


def test_a_bias_vector_adds_before_the_function(target):
    target("trn2")
    np.testing.assert_allclose(nki.simulate(with_bias(shape=(128, 1)))(X), np.exp(X + 0.5), rtol=1e-5)


def test_a_number_as_bias_needs_neuroncore_v3(target):
    target("trn1")
    e = trace_error(with_bias(number=0.5), X)
    assert e.code == "err_min_arch_support_for_inst"
    assert "nisa.activation(bias=<a number>)" in e.message
    target("trn2")
    np.testing.assert_allclose(nki.simulate(with_bias(number=0.5))(X), np.exp(X + 0.5), rtol=1e-5)
