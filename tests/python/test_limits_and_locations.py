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


# ---------------------------------------------------------------- type-hint and decorator locations

def k_string_hint(x,
                  cache: "nt.tensor"):  # ERR:string_hint
    out = nl.ndarray(cache.shape, dtype=cache.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.load(cache))
    return out


def test_string_type_hint_names_the_annotation():
    e = trace_error(k_string_hint, 1, f32((128, 64)))
    assert isinstance(e, AssertionError)  # the legacy compiler's exception class
    check_diag(e, M, "err_string_type_hint", "Unexpected str in typehint", [("string_hint", '"nt.tensor"')])
    assert e.message == "Unexpected str in typehint"
    assert "parameter 'cache'" in e.hint and "from __future__ import annotations" in e.hint


def _decorate(case):
    if case == "jit":
        @nki.jit(platform_targt="trn1")  # ERR:jit
        def k(a):
            return a
    elif case == "trace":
        @nki.trace(show_compiler_traceback=True)  # ERR:trace
        def k(a):
            return a
    elif case == "baremetal":
        @nki.baremetal(save_neff="k.neff")  # ERR:baremetal
        def k(a):
            return a
    elif case == "benchmark":
        @nki.benchmark(warmpu=5, iters=10)  # ERR:benchmark
        def k(a):
            return a
    elif case == "profile":
        @nki.profile(working_dir="/tmp")  # ERR:profile
        def k(a):
            return a
    elif case == "mode":
        @nki.jit(mode="simulaton")  # ERR:mode
        def k(a):
            return a
    elif case == "functional":
        nki.jit(k_string_hint, experimental_flag="enable-mutable-parameter")  # ERR:functional


DECORATOR_CASES = {
    "jit": ("nki.jit", "unexpected keyword argument 'platform_targt'; did you mean 'platform_target'?"),
    "trace": ("nki.trace", "unexpected keyword argument 'show_compiler_traceback'; did you mean 'show_compiler_tb'?"),
    "baremetal": ("nki.baremetal", "unexpected keyword argument 'save_neff'; did you mean 'save_neff_name'?"),
    "benchmark": ("nki.benchmark", "unexpected keyword argument 'warmpu'; did you mean 'warmup'?"),
    "profile": ("nki.profile", "unexpected keyword argument 'working_dir'; did you mean 'working_directory'?"),
    "mode": ("nki.jit", "mode 'simulaton' is not one of auto, jax, torchxla, baremetal, benchmark, simulation, "
                        "trace, profile; did you mean 'simulation'?"),
    "functional": ("nki.jit",
                   "unexpected keyword argument 'experimental_flag'; did you mean 'experimental_flags'?"),
}


@pytest.mark.parametrize("case", sorted(DECORATOR_CASES))
def test_misspelled_decorator_argument_is_an_error_at_the_decorator(case):
    api, why = DECORATOR_CASES[case]
    with pytest.raises(nki.NKIError) as info:
        _decorate(case)
    e = info.value
    assert e.code == "err_unsupported_args" and isinstance(e, TypeError)
    assert e.message == f"unsupported arguments to '{api}': {why}"
    assert M.same_file(e.file) and e.line == M.line(case), (e.file, e.line)


def test_unknown_argument_without_a_close_match_has_no_suggestion():
    with pytest.raises(nki.NKIError) as info:
        nki.jit(zzz=1)  # ERR:no_match
    assert info.value.message == "unsupported arguments to 'nki.jit': unexpected keyword argument 'zzz'"
    assert info.value.line == M.line("no_match")


def test_documented_decorator_arguments_are_accepted():
    a = f32((128, 64))
    kernels = [nki.jit(k_mutable_with_shape, platform_target="trn1", additional_compile_opt="-O1", kernel_return=True,
                       experimental_flags="enable-mutable-parameter", show_compiler_tb=True, debug_kernel=True,
                       enable_out_of_bound_check=False),
               nki.baremetal(save_neff_name="k.neff", save_trace_name="k.ntff", artifacts_dir="/tmp/x")(
                   k_mutable_with_shape),
               nki.benchmark(warmup=1, iters=2, save_neff_name="k.neff")(k_mutable_with_shape),
               nki.profile(working_directory="/tmp", save_neff_name="k.neff", save_trace_name="p.ntff",
                           overwrite=True, profile_nth=1, num_execs=2)(k_mutable_with_shape)]
    for k in kernels:
        before = a.copy()
        k(a)
        np.testing.assert_allclose(a, before * 3.0, rtol=1e-6)


def test_misspelled_simulate_kernel_option_suggests_it():
    with pytest.raises(nki.NKIError) as info:
        nki.simulate_kernel(nki.jit(k_mutable_with_shape), f32((128, 64)), check_race=True)  # ERR:sim_option
    e = info.value
    assert e.code == "err_unsupported_args"
    assert e.message == ("unsupported arguments to 'k_mutable_with_shape': unexpected keyword argument "
                         "'check_race'; did you mean 'check_races'?")
    assert M.same_file(e.file) and e.line == M.line("sim_option")
