"""A tensor lives only in the trace that makes it: one kept from an earlier trace
(in a global, a closure, a default argument) and used in another is
err_local_variable_used_out_of_scope at the user's line, in both APIs, whatever
the two kernels' tensor counts (its index would otherwise name a tensor of the
new kernel)."""
import numpy as np
import pytest

import nki as nki_current
import nki.isa as nisa_c
import nki.language as nl_c
from neuronxcc import nki
import neuronxcc.nki.language as nl
from nki_test_util import Markers, check_diag

M = Markers(__file__)
A = np.arange(4 * 8, dtype=np.float32).reshape(4, 8)

kept = {}


@nki_current.jit
def current_maker(a):
    out = nl_c.ndarray(a.shape, a.dtype, buffer=nl_c.shared_hbm)
    t = nl_c.ndarray(a.shape, a.dtype, buffer=nl_c.sbuf)
    nisa_c.dma_copy(dst=t, src=a)
    kept["current"] = t
    nisa_c.dma_copy(dst=out, src=t)
    return out


@nki_current.jit
def current_user(a):
    out = nl_c.ndarray(a.shape, a.dtype, buffer=nl_c.shared_hbm)
    nisa_c.dma_copy(dst=out, src=kept["current"])  # ERR:current_user
    return out


@nki_current.jit
def current_user_many(a):
    # Enough tensors that the kept one's index names one of this kernel's.
    tiles = [nl_c.ndarray(a.shape, a.dtype, buffer=nl_c.sbuf) for _ in range(4)]
    for t in tiles:
        nisa_c.dma_copy(dst=t, src=a)
    out = nl_c.ndarray(a.shape, a.dtype, buffer=nl_c.shared_hbm)
    nisa_c.tensor_tensor(dst=tiles[0], data1=tiles[1], data2=kept["current"], op=nl_c.add)  # ERR:current_many
    nisa_c.dma_copy(dst=out, src=tiles[0])
    return out


@nki.jit
def legacy_maker(a):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    kept["legacy"] = t
    nl.store(out, t)
    return out


@nki.jit
def legacy_user(a):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    nl.store(out, kept["legacy"] + 1.0)  # ERR:legacy_user
    return out


def trace_raises(kernel_call):
    with pytest.raises(Exception) as info:
        kernel_call()
    return info.value


def message(made_in, kernel):
    return (f"this tensor was made by an earlier trace (of kernel '{made_in}') and is used while tracing "
            f"'{kernel}': a tensor lives only in the trace that makes it")


@pytest.mark.parametrize("user, marker, token", [(current_user, "current_user", "nisa_c.dma_copy"),
                                                 (current_user_many, "current_many", "nisa_c.tensor_tensor")])
def test_current_api_tensor_kept_from_another_trace(user, marker, token):
    np.testing.assert_array_equal(nki_current.simulate(current_maker)(A), A)
    e = trace_raises(lambda: nki_current.simulate(user)(A))
    check_diag(e, M, "err_local_variable_used_out_of_scope", message("current_maker", user.__name__),
               [(marker, token)])
    assert "pass it to the kernel as an argument, or make it in this kernel" in str(e)


def test_legacy_tensor_kept_from_another_trace():
    np.testing.assert_array_equal(nki.simulate_kernel(legacy_maker, A), A)
    e = trace_raises(lambda: nki.simulate_kernel(legacy_user, A))
    check_diag(e, M, "err_local_variable_used_out_of_scope", message("legacy_maker", "legacy_user"),
               [("legacy_user", "kept"), ("legacy_user", "nl.store")])


def test_a_kernel_traced_again_does_not_take_its_earlier_tensors():
    np.testing.assert_array_equal(nki.simulate_kernel(legacy_maker, A), A)
    first = kept["legacy"]

    @nki.jit
    def again(a):
        out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
        nl.store(out, first)  # ERR:again
        return out

    e = trace_raises(lambda: nki.simulate_kernel(again, A))
    check_diag(e, M, "err_local_variable_used_out_of_scope", message("legacy_maker", "again"),
               [("again", "nl.store"), ("again", "first")])
