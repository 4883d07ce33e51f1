"""Mutable parameters spelled nt.tensor[nt.mutable]; locations of the type-hint and
decorator-argument diagnostics; size and work limits of tracing and simulation.

Offending lines carry `# ERR:<name>` markers (nki_test_util.Markers)."""
import numpy as np
import pytest

from neuronxcc import nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.typing as nt

from nki_test_util import Markers, check_diag, f32, simulate, trace_error

M = Markers(__file__)


# ---------------------------------------------------------------- nt.mutable

@nki.jit(experimental_flags="enable-mutable-parameter")
def k_kv_cache_write(k_cache: nt.tensor[nt.mutable], v_cache: nt.tensor[nt.mutable], new_k, new_v, pos):
    """Decode-step cache update: rows [pos, pos + n) of each cache take the new keys/values."""
    n = new_k.shape[0]
    nl.store(k_cache[pos:pos + n, :], value=nl.load(new_k))
    nl.store(v_cache[pos:pos + n, :], value=nl.load(new_v))
    return k_cache, v_cache


def k_mutable_with_shape(cache: nt.tensor[nt.mutable, 128, 64]):
    nl.store(cache, value=nl.multiply(nl.load(cache), 3.0))
    return cache


def k_mutable_not_returned(cache: nt.tensor[nt.mutable], x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(cache, value=nl.load(x))  # ERR:mutable_write
    nl.store(out, value=nl.load(x))
    return out


def k_plain_tensor_hint_is_immutable(cache: nt.tensor[128, 64]):
    nl.store(cache, value=nl.load(cache))  # ERR:immutable_write
    return cache


def test_kv_cache_writer_updates_the_callers_arrays_in_place():
    k_cache, v_cache = f32((512, 64), seed=1), f32((512, 64), seed=2)
    new_k, new_v = f32((16, 64), seed=3), f32((16, 64), seed=4)
    want_k, want_v = k_cache.copy(), v_cache.copy()
    want_k[100:116], want_v[100:116] = new_k, new_v
    got_k, got_v = nki.simulate_kernel(k_kv_cache_write, k_cache, v_cache, new_k, new_v, 100)
    np.testing.assert_array_equal(got_k, want_k)
    np.testing.assert_array_equal(got_v, want_v)
    np.testing.assert_array_equal(k_cache, want_k)  # the caller's arrays, as with nt.mutable_tensor
    np.testing.assert_array_equal(v_cache, want_v)


def test_mutable_qualifier_with_a_shape():
    cache = f32((128, 64))
    original = cache.copy()
    simulate(k_mutable_with_shape, cache)
    np.testing.assert_allclose(cache, original * 3.0, rtol=1e-6)
    hint = nt.tensor[nt.mutable, 128, 64]
    assert hint.shape == (128, 64) and issubclass(hint, nt.tensor)


def test_mutable_qualifier_parameter_must_be_returned():
    e = trace_error(k_mutable_not_returned, f32((128, 64)), f32((128, 64), seed=1))
    check_diag(e, M, "err_mutable_parameter_not_returned",
               "Mutable kernel parameter not returned by `return` statement",
               [("mutable_write", "nl.store"), ("mutable_write", "cache")])


def test_shape_only_hint_stays_immutable():
    e = trace_error(k_plain_tensor_hint_is_immutable, f32((128, 64)))
    check_diag(e, M, "err_cannot_update_immutable_parameter", "Cannot update immutable parameter 'cache'",
               [("immutable_write", "nl.store"), ("immutable_write", "cache")])
