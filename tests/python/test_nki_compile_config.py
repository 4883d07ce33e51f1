"""nki.compiler (NKI_07_08_API.md §6): CompileConfig and SpecializationConfig with the
compiler's validation texts (a TypeError or ValueError diagnostic at the user's line), and what
nkic honours: NKI allocation without fallback makes SBUF overflow an error, a prefetch ring
takes SBUF, TRIVIAL scheduling keeps program order in the cost model, and the profile names the
allocation and schedule it assumed."""
import json
import pickle
import subprocess
import warnings
from pathlib import Path

import numpy as np
import pytest

import nki
import nki.isa as nisa
import nki.language as nl
import nkic
from nki.compiler import (AddressRotation, Allocation, AllocationMode, CompileConfig, OptLevel, SchedulingHeuristic,
                          SpecializationConfig)
from nki_test_util import Markers, check_diag

M = Markers(__file__)
ROOT = Path(__file__).resolve().parents[2]
X = np.ones((128, 8), np.float32)
LINEAR = Allocation.LINEAR


@pytest.fixture(autouse=True)
def _trn2(monkeypatch):
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn2")
    monkeypatch.delenv("NKI_PREFETCH_RING_SIZE", raising=False)


def raised(make):
    with pytest.raises(nkic.NKIError) as info:
        make()
    return info.value


def test_an_invalid_config_is_reported_at_the_decoration():
    def decorate():
        @nki.jit(compile_config=CompileConfig(scheduling=True))  # ERR:decorator
        def kernel(a):
            return a
    e = check_diag(raised(decorate), M, "err_scheduling_needs_linear_allocation",
                   "scheduling=True needs an allocation; set allocation=Allocation.LINEAR as well.",
                   [("decorator", "CompileConfig(")])
    assert isinstance(e, ValueError)


VALUE_ERRORS = [
    (lambda: CompileConfig(scheduling=True, allocation=Allocation.COLORING),  # ERR:coloring
     "coloring", "err_scheduling_needs_linear_allocation",
     "scheduling=True needs allocation=Allocation.LINEAR, got allocation=Allocation.COLORING"),
    (lambda: CompileConfig(experimental_scheduling_heuristic=SchedulingHeuristic.TRIVIAL),  # ERR:heuristic
     "heuristic", "err_option_needs_nki_scheduling",
     "experimental_scheduling_heuristic acts only when NKI schedules; set scheduling=True as well."),
    (lambda: CompileConfig(allocation=LINEAR, scheduling=False,  # ERR:not_scheduling
                           experimental_scheduling_heuristic=SchedulingHeuristic.ASAP),
     "not_scheduling", "err_option_needs_nki_scheduling",
     "experimental_scheduling_heuristic acts only when NKI schedules; set scheduling=True as well."),
]

NEEDS_LINEAR = [("opt_level", OptLevel.O0), ("experimental_allocation_mode", AllocationMode.RING),
                ("prefetch_auto", True), ("split_reused_buffers", False), ("tensor_copy_elim", True),
                ("dma_copy_elim", True), ("element_widening", True), ("register_load_reuse", True),
                ("remove_unused_instructions", True), ("remove_overwritten_writes", True)]


@pytest.mark.parametrize("make,marker,code,message", VALUE_ERRORS, ids=[c[1] for c in VALUE_ERRORS])
def test_value_errors(make, marker, code, message):
    e = check_diag(raised(make), M, code, message, [(marker, "CompileConfig(")])
    assert isinstance(e, ValueError) and e.message == message


@pytest.mark.parametrize("option,value", NEEDS_LINEAR, ids=[o for o, _ in NEEDS_LINEAR])
def test_an_option_of_nki_allocation_with_coloring(option, value):
    e = raised(lambda: CompileConfig(allocation=Allocation.COLORING, **{option: value}))  # ERR:needs_linear
    check_diag(e, M, "err_option_needs_nki_allocation",
               f"{option} acts only when NKI allocates; it cannot be set with allocation=Allocation.COLORING.",
               [("needs_linear", "CompileConfig(")])
    assert isinstance(e, ValueError)
    CompileConfig(allocation=LINEAR, **{option: value})  # accepted with NKI allocation
    CompileConfig(**{option: value})  # and with the allocation left to its default


TYPE_ERRORS = [
    ("allocation", "LINEAR", "allocation must be an nki.compiler.Allocation or None"),
    ("allocation", AllocationMode.RING, "allocation must be an nki.compiler.Allocation or None"),
    ("experimental_allocation_mode", "RING",
     "experimental_allocation_mode must be an nki.compiler.AllocationMode or None"),
    ("experimental_scheduling_heuristic", 0,
     "experimental_scheduling_heuristic must be an nki.compiler.SchedulingHeuristic or None"),
    ("opt_level", 1, "opt_level must be an nki.compiler.OptLevel or None"),
    ("address_rotation", None, "address_rotation must be an nki.compiler.AddressRotation"),
    ("address_rotation", "AUTO", "address_rotation must be an nki.compiler.AddressRotation"),
    ("prefetch_auto", 1, "prefetch_auto must be a bool"),
]


@pytest.mark.parametrize("field,value,message", TYPE_ERRORS, ids=[f"{f}-{v!r}" for f, v, _ in TYPE_ERRORS])
def test_type_errors(field, value, message):
    e = raised(lambda: CompileConfig(**{field: value}))  # ERR:type
    check_diag(e, M, "err_compile_config_type", message, [("type", "CompileConfig(")])
    assert isinstance(e, TypeError) and e.message == message


JIT_ERRORS = [
    (lambda: nki.jit(compile_config={"allocation": LINEAR}),  # ERR:jit_config
     "jit_config", "nki.", "err_compile_config_type", "compile_config must be an nki.compiler.CompileConfig or None"),
    (lambda: nki.jit(specialization_config=True),  # ERR:jit_spec
     "jit_spec", "nki.", "err_compile_config_type",
     "specialization_config must be an nki.compiler.SpecializationConfig or None"),
    (lambda: SpecializationConfig(allow_nested_config_override="yes"),  # ERR:spec_type
     "spec_type", "Spec", "err_compile_config_type", "allow_nested_config_override must be a bool"),
    (lambda: CompileConfig(prefech_auto=True),  # ERR:misspelt
     "misspelt", "Compile", "err_unsupported_args",
     "unsupported arguments to 'nki.compiler.CompileConfig': unexpected keyword argument 'prefech_auto'; did you mean "
     "'prefetch_auto'?"),
    (lambda: CompileConfig(LINEAR),  # ERR:positional
     "positional", "Compile", "err_unsupported_args",
     "unsupported arguments to 'nki.compiler.CompileConfig': takes keyword arguments only, got 1 positional"),
    (lambda: SpecializationConfig(allow_override=True),  # ERR:spec_name
     "spec_name", "Spec", "err_unsupported_args", "unexpected keyword argument 'allow_override'"),
]


@pytest.mark.parametrize("make,marker,token,code,message", JIT_ERRORS, ids=[c[1] for c in JIT_ERRORS])
def test_jit_and_constructor_arguments(make, marker, token, code, message):
    e = check_diag(raised(make), M, code, message, [(marker, token)])
    assert isinstance(e, TypeError)


def test_a_valid_config_reads_back_what_was_given():
    c = CompileConfig(allocation=LINEAR, scheduling=True, opt_level=OptLevel.O2,
                      experimental_allocation_mode=AllocationMode.MAX_REUSE,
                      experimental_scheduling_heuristic=SchedulingHeuristic.DMA_PREFETCH, prefetch_auto=True,
                      split_reused_buffers=True, tensor_copy_elim=True, dma_copy_elim=True, element_widening=True,
                      engine_balancing=True, register_load_reuse=True, remove_unused_instructions=True,
                      remove_overwritten_writes=True, sbuf_allocation_fallback=True,
                      address_rotation=AddressRotation.DISABLE, non_ssa_legalization=True, dead_code_elim=True,
                      barrier_check=True, nki_alloc_fallback=False)
    assert c.allocation is LINEAR and c.opt_level is OptLevel.O2 and c.nki_alloc_fallback is False
    assert c.experimental_allocation_mode is AllocationMode.MAX_REUSE and c.barrier_check is True
    assert CompileConfig().allocation is None  # left to its default
    assert repr(CompileConfig(allocation=LINEAR, prefetch_auto=True)) == \
        "CompileConfig(allocation=Allocation.LINEAR, prefetch_auto=True)"
    assert repr(SchedulingHeuristic.TRIVIAL) == "SchedulingHeuristic.TRIVIAL"
    assert [m.name for m in AddressRotation] == ["AUTO", "ENABLE", "DISABLE"]
    assert SpecializationConfig().allow_nested_config_override is False
    assert repr(pickle.loads(pickle.dumps(c))) == repr(c)
    with pytest.raises(AttributeError):
        c.prefech_auto  # noqa: B018


def two_tiles(rows_a, rows_b):
    """Two SBUF tiles of `rows_a` and `rows_b` fp32 elements per partition, live together."""

    @nki.jit
    def kernel(a):
        out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
        t = nl.ndarray((128, rows_a), nl.float32, buffer=nl.sbuf)  # ERR:big_tile
        u = nl.ndarray((128, rows_b), nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=t[:, 0:8], src=a)
        nisa.dma_copy(dst=u[:, 0:8], src=t[:, 0:8])  # ERR:peak
        nisa.dma_copy(dst=out, src=u[:, 0:8])
        return out
    return kernel


def sbuf_warnings(kernel, config):
    kernel = nki.jit(kernel.func, compile_config=config)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        np.testing.assert_array_equal(nki.simulate(kernel)(X), X)
    return [str(w.message) for w in caught if "sbuf" in str(w.message)]


OVER = two_tiles(40000, 30000)  # 280000 bytes per partition; trn2 has 212984


def test_nki_allocation_without_fallback_cannot_spill():
    kernel = nki.jit(OVER.func, compile_config=CompileConfig(allocation=LINEAR, nki_alloc_fallback=False))
    e = raised(lambda: nki.simulate(kernel)(X))
    tile = M.line("big_tile")
    assert e.code == "err_sbuf_over_capacity" and isinstance(e, ValueError)
    assert e.message == ("NKI allocation (allocation=Allocation.LINEAR, nki_alloc_fallback=False) needs 280000 bytes "
                         "per partition of SBUF live here, more than the 212984 target 'trn2' has; live, largest "
                         f"first: 't' (line {tile}, 160000 bytes), 'u' (line {tile + 1}, 120000 bytes)")
    assert M.same_file(e.file) and (e.line, e.col) == M.loc("peak", "nisa.")
    assert [(n[1], n[3]) for n in e.notes] == [(tile, "'t' is declared here"), (tile + 1, "'u' is declared here")]


@pytest.mark.parametrize("config", [None, CompileConfig(allocation=LINEAR), CompileConfig(nki_alloc_fallback=False)],
                         ids=["default", "fallback", "coloring"])
def test_the_compiler_spills_otherwise(config):
    assert [m.split(":")[0] for m in sbuf_warnings(OVER, config)] == ["[warn_sbuf_spill] SBUF holds 280000 bytes per "
                                                                      "partition live here, more than the 212984 "
                                                                      "target 'trn2' has"]


NEAR = two_tiles(26000, 26000)  # 208000 bytes per partition: fits 212984, not 212984 - 16384


def test_prefetch_auto_takes_its_ring_out_of_sbuf():
    assert sbuf_warnings(NEAR, None) == []
    [w] = sbuf_warnings(NEAR, CompileConfig(allocation=LINEAR, prefetch_auto=True))
    assert w.startswith("[warn_sbuf_spill] SBUF holds 208000 bytes per partition live here, more than the 196600 "
                        "target 'trn2' leaves after its 16384-byte prefetch ring: the compiler spills 11400 bytes"), w
    # The cost model plans the tiles' buffers in what the ring leaves.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prefetching = nkic.profile(nki.jit(NEAR.func, compile_config=CompileConfig(allocation=LINEAR,
                                                                                   prefetch_auto=True)), X)
    assert nkic.profile(NEAR, X).sbuf_capacity_bytes == 212984 and prefetching.sbuf_capacity_bytes == 196600
    assert "a prefetch ring takes 16384 bytes per partition of SBUF: the tiles' buffers fit in the rest" in \
        prefetching.notes


@pytest.mark.parametrize("ring,spills", [("4096", False), ("8192", True)])
def test_the_prefetch_ring_size_variable_takes_sbuf(monkeypatch, ring, spills):
    monkeypatch.setenv("NKI_PREFETCH_RING_SIZE", ring)
    got = sbuf_warnings(NEAR, None)
    assert bool(got) == spills, got
    if spills:
        assert f"after its {ring}-byte prefetch ring" in got[0]


def test_prefetch_auto_and_the_ring_size_variable_are_exclusive(monkeypatch):
    monkeypatch.setenv("NKI_PREFETCH_RING_SIZE", "4096")
    kernel = nki.jit(NEAR.func, compile_config=CompileConfig(prefetch_auto=True))
    check_diag(raised(lambda: nki.simulate(kernel)(X)), M, "err_prefetch_ring_conflict",  # ERR:ring_conflict
               "prefetch_auto=True and NKI_PREFETCH_RING_SIZE=4096 are mutually exclusive: prefetch_auto sizes the "
               "prefetch ring itself", [("ring_conflict", "nki.")])


def test_a_ring_size_that_is_no_number(monkeypatch):
    monkeypatch.setenv("NKI_PREFETCH_RING_SIZE", "16k")
    check_diag(raised(lambda: nki.simulate(NEAR)(X)), M, "err_invalid_environment_value",  # ERR:ring_value
               "NKI_PREFETCH_RING_SIZE=16k is not a number of SBUF bytes per partition", [("ring_value", "nki.")])


def exp_chain(a):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    for _ in range(4):
        t = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a)
        nisa.activation(dst=t, data=t, op=nl.exp)
        u = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
        nisa.tensor_copy(dst=u, src=t)
        nisa.dma_copy(dst=out, src=u)
    return out


def scheduled(heuristic):
    return CompileConfig(allocation=LINEAR, scheduling=True, experimental_scheduling_heuristic=heuristic)


def test_the_profile_names_the_allocation_and_schedule_it_assumed():
    default = nkic.profile(nki.jit(exp_chain), X)
    assert (default.allocation, default.scheduling) == ("COLORING", "the compiler's list schedule")
    assert "allocation COLORING, scheduling the compiler's list schedule" in default.summary()
    ring = nkic.profile(nki.jit(exp_chain, compile_config=CompileConfig(
        allocation=LINEAR, experimental_allocation_mode=AllocationMode.RING)), X)
    assert ring.allocation == "LINEAR (RING)"
    assert ("allocation LINEAR (RING) is costed with the model's own buffer plan (one buffer per tile, more where "
            "they fit); the address reuse of the RING and FAST modes is not modelled beyond it") in ring.notes
    critical = nkic.profile(nki.jit(exp_chain, compile_config=scheduled(SchedulingHeuristic.CRITICAL_PATH)), X)
    assert critical.scheduling == "CRITICAL_PATH"
    assert "scheduling=True with CRITICAL_PATH is not modelled: costed with the list schedule (ASAP)" in critical.notes
    assert critical.latency_us == default.latency_us


def exp_tiles(a):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    for i in range(4):
        t = nl.ndarray((128, 2048), a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a[:, i * 2048:(i + 1) * 2048])
        nisa.activation(dst=t, data=t, op=nl.exp)
        nisa.dma_copy(dst=out[:, i * 2048:(i + 1) * 2048], src=t)
    return out


def test_max_reuse_allocation_waits_for_the_memory_it_reuses():
    """RING gives each tile fresh memory, so the four loads overlap; MAX_REUSE puts every tile at
    the lowest free address, so each load waits for the store that last read it."""
    a = np.ones((128, 8192), np.float32)
    mode = lambda m: nki.jit(exp_tiles, compile_config=CompileConfig(  # noqa: E731
        allocation=LINEAR, experimental_allocation_mode=m))
    default, ring = nkic.profile(nki.jit(exp_tiles), a), nkic.profile(mode(AllocationMode.RING), a)
    reuse = nkic.profile(mode(AllocationMode.MAX_REUSE), a)
    assert ring.latency_us == default.latency_us < reuse.latency_us
    assert reuse.allocation == "LINEAR (MAX_REUSE)"
    assert ("allocation LINEAR (MAX_REUSE): a loop tile keeps one buffer and every other tile takes the lowest free "
            "address, so a write waits for the last reader of the memory it reuses") in reuse.notes
    np.testing.assert_allclose(nki.simulate(mode(AllocationMode.MAX_REUSE))(a), np.exp(a), rtol=1e-6)


def test_trivial_scheduling_keeps_program_order():
    """Under the list schedule an engine fills the gap left waiting for a DMA with the next
    iteration's work; in program order it cannot, so the kernel takes longer."""
    asap = nkic.profile(nki.jit(exp_chain, compile_config=scheduled(SchedulingHeuristic.ASAP)), X)
    trivial = nkic.profile(nki.jit(exp_chain, compile_config=scheduled(SchedulingHeuristic.TRIVIAL)), X)
    assert trivial.scheduling == "TRIVIAL" and asap.scheduling == "ASAP"
    assert trivial.latency_us > asap.latency_us
    assert asap.latency_us == nkic.profile(nki.jit(exp_chain), X).latency_us


def engines_of_copies(config):
    traced = nki.jit(exp_chain, compile_config=config).trace(None, (X,), {})
    return {line.split("=", 1)[1].split("(")[0].strip() for line in traced.ir.text().splitlines()
            if "tensor_copy" in line}


def test_an_unpinned_tensor_copy_runs_on_its_default_engine_at_every_level():
    """opt_level O0 runs it on its default engine; the compiler's choice at O1/O2 is not modelled."""
    levels = [engines_of_copies(CompileConfig(allocation=LINEAR, opt_level=level)) for level in OptLevel]
    assert levels == [{"tensor_copy[dve]"}] * 3 == [engines_of_copies(None)] * 3
    notes = nkic.profile(nki.jit(exp_chain, compile_config=CompileConfig(allocation=LINEAR)), X).notes
    assert ("an un-pinned tensor_copy runs on its default engine, as at opt_level O0: the compiler's engine choice "
            "at O1 and O2 is not modelled") in notes


def test_the_cli_profile_names_them(tmp_path):
    src = tmp_path / "configured.py"
    src.write_text(
        "import numpy as np\nimport nki\nimport nki.language as nl\nimport nki.isa as nisa\n"
        "from nki.compiler import CompileConfig, Allocation, SchedulingHeuristic\n\n"
        "@nki.jit(compile_config=CompileConfig(allocation=Allocation.LINEAR, scheduling=True,\n"
        "         experimental_scheduling_heuristic=SchedulingHeuristic.TRIVIAL))\n"
        "def kernel(a):\n"
        "    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)\n"
        "    nisa.dma_copy(dst=out, src=a)\n"
        "    return out\n")
    run = lambda *extra: subprocess.run([str(ROOT / "bin" / "nkic"), "profile", f"{src}::kernel", "--arg",  # noqa: E731
                                         "a=f32[128,8]", *extra], capture_output=True, text=True, timeout=120)
    r = run("--json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert (d["allocation"], d["scheduling"]) == ("LINEAR", "TRIVIAL")
    r = run()
    assert "allocation LINEAR, scheduling TRIVIAL" in r.stdout, r.stdout
