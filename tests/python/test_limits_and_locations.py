"""Mutable parameters spelled nt.tensor[nt.mutable]; locations of the type-hint and
decorator-argument diagnostics; size and work limits of tracing and simulation.

Offending lines carry `# ERR:<name>` markers (nki_test_util.Markers)."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import nkic
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


def test_documented_decorator_arguments_are_accepted(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # nki.benchmark writes its save_neff_name there
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
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.neff"]


def test_misspelled_simulate_kernel_option_suggests_it():
    with pytest.raises(nki.NKIError) as info:
        nki.simulate_kernel(nki.jit(k_mutable_with_shape), f32((128, 64)), check_race=True)  # ERR:sim_option
    e = info.value
    assert e.code == "err_unsupported_args"
    assert e.message == ("unsupported arguments to 'k_mutable_with_shape': unexpected keyword argument "
                         "'check_race'; did you mean 'check_races'?")
    assert M.same_file(e.file) and e.line == M.line("sim_option")


# ---------------------------------------------------------------- size and work limits

def k_huge_hbm(x):
    out = nl.ndarray((2**20, 2**20), dtype=nl.float32, buffer=nl.shared_hbm)  # ERR:huge_hbm
    nl.store(out[0:128, 0:64], value=nl.load(x))
    return out


def k_rows_out(x, rows):
    out = nl.ndarray((rows, 2**12), dtype=x.dtype, buffer=nl.shared_hbm)  # ERR:rows_out
    nl.store(out[0:128, 0:64], value=nl.load(x))
    return out


def k_long_affine(x, n):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(n):
        nl.store(out, value=nl.load(x))  # ERR:long_affine
    return out


def k_strided_to_the_int64_limit(x):
    """range(0, 2**63 - 1, 513): its trip count is exact at the end of int64, and every trip
    past the first is masked off."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    i_f = nl.arange(x.shape[1])[None, :]
    for t in nl.affine_range(0, 2**63 - 1, 513):
        i_p = t * 128 + nl.arange(128)[:, None]
        tile = nl.load(x[i_p, i_f], mask=i_p < x.shape[0])  # ERR:int64_limit
        nl.store(out[i_p, i_f], value=tile, mask=i_p < x.shape[0])
    return out


def k_program_copy(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.exp(nl.load(x)))  # ERR:program_copy
    return out


def k_static_huge(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    for i in nl.static_range(10**9):  # ERR:static_huge
        nl.store(out, value=nl.load(x))
    return out


def k_static_nested(x, n):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    for i in nl.static_range(n):
        for j in nl.static_range(n):
            nl.store(out, value=nl.load(x))  # ERR:static_nested
    return out


HBM_CAPACITY = {"trn1": "32.0 GiB", "inf2": "32.0 GiB", "trn2": "96.0 GiB", "trn3": "144.0 GiB", "inf1": "8.0 GiB"}


@pytest.mark.parametrize("target", sorted(HBM_CAPACITY))
def test_hbm_tensor_larger_than_the_chip(target):
    e = trace_error(nki.jit(k_huge_hbm, platform_target=target), f32((128, 64)))
    check_diag(e, M, "err_tensor_exceeds_hbm_capacity",
               f"HBM tensor 'out' of shape [1048576, 1048576] needs 4.0 TiB, more than the {HBM_CAPACITY[target]} "
               f"of HBM of a '{target}' chip", [("huge_hbm", "nl.ndarray")], api="nl.ndarray")
    assert isinstance(e, ValueError)


def test_hbm_capacity_is_the_targets():
    # 64 GiB fits a trn3 chip (144 GiB) but not a trn1 (32 GiB).
    rows = 2**22
    e = trace_error(nki.jit(k_rows_out, platform_target="trn1"), f32((128, 64)), rows)
    check_diag(e, M, "err_tensor_exceeds_hbm_capacity", "needs 64.0 GiB, more than the 32.0 GiB",
               [("rows_out", "nl.ndarray")])
    nki.jit(k_rows_out, platform_target="trn3").trace(None, (f32((128, 64)), rows), {})


def test_output_larger_than_host_memory_is_refused_before_allocating(monkeypatch):
    monkeypatch.setenv("NKIC_SIM_MEMORY_LIMIT", str(2**29))
    with pytest.raises(nki.NKIError) as info:
        simulate(k_rows_out, f32((128, 64)), 2**16)  # a 1 GiB output
    check_diag(info.value, M, "err_simulation_out_of_memory",
               "simulating this kernel needs 1.0 GiB of host memory for its tensors ('out' alone 1.0 GiB), "
               "more than the 512.0 MiB available", [("rows_out", "nl.ndarray")])
    assert isinstance(info.value, RuntimeError)
    monkeypatch.delenv("NKIC_SIM_MEMORY_LIMIT")
    assert simulate(k_rows_out, f32((128, 64)), 2**16).shape == (2**16, 2**12)


def test_output_larger_than_the_machine_without_a_memory_limit():
    # 64 GiB (within trn3's HBM) is more than this machine has: no numpy MemoryError.
    with pytest.raises(nki.NKIError) as info:
        simulate(nki.jit(k_rows_out, platform_target="trn3"), f32((128, 64)), 2**22)
    check_diag(info.value, M, "err_simulation_out_of_memory", "needs 64.0 GiB of host memory",
               [("rows_out", "nl.ndarray")])


def test_arrays_the_host_refuses_after_the_budget_passed():
    # The budget reads the host's available memory; an address-space limit (or memory
    # taken meanwhile) can still refuse the arrays: the same diagnostic, not a MemoryError.
    # Under the sanitizers (scripts/test_asan.sh) ASan's allocator refuses them instead: an
    # address-space limit would stop ASan itself, which reserves its shadow memory up front.
    asan = "libasan" in os.environ.get("LD_PRELOAD", "")
    env = dict(os.environ)
    if asan:
        env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":allocator_may_return_null=1:max_allocation_size_mb=256"
    child = textwrap.dedent(f"""
        import resource, sys
        sys.path.insert(0, {os.path.dirname(__file__)!r})
        import numpy as np
        import test_limits_and_locations as t
        from neuronxcc import nki
        x = np.ones((128, 64), np.float32)
        t.simulate(t.k_rows_out, x, 128)  # warm up: imports and first allocations
        with open("/proc/self/status") as f:
            vm = next(int(l.split()[1]) * 1024 for l in f if l.startswith("VmSize:"))
        if not {asan}:
            resource.setrlimit(resource.RLIMIT_AS, (vm + 2**28, resource.RLIM_INFINITY))
        try:
            t.simulate(t.k_rows_out, x, 2**16)  # a 1 GiB output
        except nki.NKIError as e:
            print(e.code, e.line, e.message, sep="\\n")
        """)
    r = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=120, env=env)
    code, line, message = r.stdout.splitlines()[-3:]
    assert code == "err_simulation_out_of_memory", r.stdout + r.stderr
    assert int(line) == M.line("rows_out")
    assert message.startswith("simulating this kernel needs 1.0 GiB of host memory for its tensors ('out' alone "
                              "1.0 GiB), and the host could not allocate it ("), message
    assert message.endswith(" available now)"), message


def test_long_affine_range_is_refused_before_simulating():
    with pytest.raises(nki.NKIError) as info:
        simulate(k_long_affine, f32((128, 64)), 10**9)
    e = check_diag(info.value, M, "err_simulation_time_limit_exceeded",
                   ["simulating this kernel would take about ", " element operations over 1 program instance(s)), "
                    "more than the limit of 10 minutes"], [("long_affine", "nl.store"), ("long_affine", "nl.load")])
    assert "time_limit=<seconds>" in e.hint and "NKIC_SIM_TIME_LIMIT" in e.hint


def test_a_loop_to_the_int64_limit_is_refused_before_simulating_and_predicted_at_once():
    # 17979214137393239 trips of two [128, 64] instructions: (8192 + 256) element operations each.
    x = f32((300, 64))
    with pytest.raises(nki.NKIError) as info:
        simulate(k_strided_to_the_int64_limit, x)
    check_diag(info.value, M, "err_simulation_time_limit_exceeded",
               "simulating this kernel would take about 8789872 days (3e+20 element operations over 1 program "
               "instance(s)), more than the limit of 10 minutes", [("int64_limit", "nl.load")])
    # Only the first trip has a row under 300: the cost model walks that one.
    r = nkic.profile(nki.jit(k_strided_to_the_int64_limit), x, target="trn1")
    assert r.engines["dma"].instructions == 2
    assert r.latency_us == pytest.approx(nkic.profile(nki.jit(k_one_masked_trip), x, target="trn1").latency_us)


def k_tiles_to_the_int64_limit(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    i_p, i_f = nl.arange(128)[:, None], nl.arange(64)[None, :]
    for t in nl.affine_range(2**63 - 1):
        nl.store(out[t * 128 + i_p, i_f], value=nl.load(x[t * 128 + i_p, i_f]))  # ERR:int64_tiles
    return out


def test_an_index_past_the_int64_limit_is_out_of_bounds_not_wrapped_around():
    # (2**63 - 2) * 128 + 127 does not fit int64; wrapped, it looked like a row of x.
    e = trace_error(k_tiles_to_the_int64_limit, f32((512, 64)))
    check_diag(e, M, "err_tensor_access_out_of_bound",
               "Out-of-bound access for tensor `x` on dimension 0: index range [0, 9223372036854775807] exceed "
               "dimension size of 512", [("int64_tiles", "nl.load")])


def k_one_masked_trip(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    i_f = nl.arange(x.shape[1])[None, :]
    i_p = nl.arange(128)[:, None]
    nl.store(out[i_p, i_f], value=nl.load(x[i_p, i_f], mask=i_p < x.shape[0]), mask=i_p < x.shape[0])
    return out


def test_large_grid_is_refused_before_simulating():
    with pytest.raises(nki.NKIError) as info:
        nki.simulate_kernel(nki.jit(k_program_copy)[10**6, 10], f32((128, 512)))
    check_diag(info.value, M, "err_simulation_time_limit_exceeded", "over 10000000 program instance(s)",
               [("program_copy", "nl.exp"), ("program_copy", "nl.store"), ("program_copy", "nl.load")])


def test_time_limit_keyword_and_environment(monkeypatch):
    x = f32((128, 64))
    np.testing.assert_array_equal(simulate(k_long_affine, x, 1000, time_limit=1), x)
    with pytest.raises(nki.NKIError) as info:
        simulate(k_long_affine, x, 10**6, time_limit=1)
    assert info.value.code == "err_simulation_time_limit_exceeded"
    assert info.value.message.endswith("more than the limit of 1 s")
    monkeypatch.setenv("NKIC_SIM_TIME_LIMIT", "1")
    with pytest.raises(nki.NKIError) as info:
        simulate(k_long_affine, x, 10**6)
    assert info.value.code == "err_simulation_time_limit_exceeded"
    # The keyword wins over the environment; 0 is no limit.
    np.testing.assert_array_equal(simulate(k_long_affine, x, 10**5, time_limit=0), x)
    monkeypatch.setenv("NKIC_SIM_TIME_LIMIT", "soon")
    with pytest.raises(nki.NKIError) as info:
        nki.simulate_kernel(nki.jit(k_long_affine), x, 2)  # ERR:bad_env
    assert info.value.code == "err_unsupported_args"
    assert info.value.message == ("unsupported arguments to 'NKIC_SIM_TIME_LIMIT': expects a non-negative number, "
                                  "got 'soon'")
    assert M.same_file(info.value.file) and info.value.line == M.line("bad_env")


def test_traced_kernel_checks_its_budget_unless_the_caller_did():
    # The traced kernel's simulate() checks the budget itself; simulate_kernel checks it
    # before allocating the outputs and says so (budget_checked), so the kernel is walked once.
    x = f32((128, 64))
    traced = nki.jit(k_long_affine).trace(None, (x, 2), {})
    out = np.empty_like(x)
    ptrs = ([x.__array_interface__["data"][0]], [out.__array_interface__["data"][0]])
    with pytest.raises(nki.NKIError) as info:
        traced.ir.simulate(*ptrs, time_limit=1e-12)
    assert info.value.code == "err_simulation_time_limit_exceeded"
    traced.ir.simulate(*ptrs, time_limit=1e-12, budget_checked=True)
    np.testing.assert_array_equal(out, x)


@pytest.mark.parametrize("bad", [-1, "10", True])
def test_time_limit_must_be_seconds(bad):
    with pytest.raises(nki.NKIError) as info:
        nki.simulate_kernel(nki.jit(k_long_affine), f32((128, 64)), 2, time_limit=bad)  # ERR:bad_limit
    assert info.value.code == "err_unsupported_args"
    assert info.value.message == ("unsupported arguments to 'nki.simulate_kernel': time_limit must be a non-negative "
                                  f"number of seconds, got {bad!r}")
    assert info.value.line == M.line("bad_limit")


def test_huge_static_range_is_refused_before_unrolling():
    e = trace_error(k_static_huge, f32((128, 64)))
    check_diag(e, M, "err_trace_limit_exceeded",
               "tracing would unroll a static_range of 1000000000 iterations, more than the limit of 262144",
               [("static_huge", "for")])
    assert "NKIC_TRACE_LIMIT" in e.hint and "nl.affine_range" in e.hint


def test_trace_instruction_limit_and_its_override(monkeypatch):
    monkeypatch.setenv("NKIC_TRACE_LIMIT", "1000")
    e = trace_error(k_static_nested, f32((128, 64)), 40)  # 1600 loads and stores
    check_diag(e, M, "err_trace_limit_exceeded",
               "tracing would emit 1001 instructions or more, more than the limit of 1000",
               [("static_nested", "nl.store"), ("static_nested", "nl.load")])
    x = f32((128, 64))
    np.testing.assert_array_equal(simulate(k_static_nested, x, 20), x)  # 800 instructions
    monkeypatch.setenv("NKIC_TRACE_LIMIT", "-3")
    e = trace_error(k_static_nested, x, 2)
    assert e.code == "err_unsupported_args"
    assert e.message == "unsupported arguments to 'NKIC_TRACE_LIMIT': expects a positive integer, got '-3'"


def k_declares_without_end(a):
    outs = [nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm) for _ in range(2**63 - 1)]  # ERR:declares
    return outs[0]


def test_declarations_are_bounded_as_instructions_are(monkeypatch):
    monkeypatch.setenv("NKIC_TRACE_LIMIT", "1000")
    e = trace_error(k_declares_without_end, f32((128, 64)))
    check_diag(e, M, "err_trace_limit_exceeded",
               "tracing would declare 1001 tensors or more, more than the limit of 1000", [("declares", "nl.ndarray")],
               notes=[("declares", "[nl.ndarray", "<listcomp>")])


def test_flash_attention_at_8192_is_under_the_default_limits():
    """The work estimate of a large public-style kernel (flash attention forward, seqlen 8192, causal)
    stays far below the default limit: it simulates with no override."""
    import sys
    import os
    samples = "/tmp/corpus/nki-samples/src"
    if not os.path.isdir(samples):
        pytest.skip("the nki-samples checkout is not available")
    sys.path.insert(0, samples)
    try:
        from nki_samples.reference.attention import flash_fwd, FlashConfig
    finally:
        sys.path.remove(samples)
    rng = np.random.default_rng(0)
    q = rng.uniform(-1, 1, (1, 1, 128, 8192)).astype(np.float32)
    k = rng.uniform(-1, 1, (1, 1, 128, 4096)).astype(np.float32)
    v = rng.uniform(-1, 1, (1, 1, 4096, 128)).astype(np.float32)
    config = FlashConfig(seq_tile_size=2048, training=False, should_transpose_v=False)
    kernel = nki.baremetal(flash_fwd)[1, 1]
    with pytest.raises(nki.NKIError) as info:  # the estimate, read off a tiny limit
        nki.simulate_kernel(kernel, q, k, v, None, use_causal_mask=True, mixed_precision=True, config=config,
                            time_limit=1e-9)
    assert info.value.code == "err_simulation_time_limit_exceeded"
    seconds = info.value.message.split("take about ")[1].split(" ")[0]
    assert float(seconds) < 60, info.value.message
    out = nki.simulate_kernel(kernel, q, k, v, None, use_causal_mask=True, mixed_precision=True, config=config)
    assert out.shape == (1, 1, 8192, 128) and np.isfinite(out).all()
