"""The NKI 0.7 model of a kernel (NKI_07_08_API.md §1): the body runs as Python (generators,
comprehensions, closures, any class, Python's `==`), `is` and non-string dict keys warn, the
signature rules stay, NKI_COMPILER_FRONTEND is ignored, a nested @nki.jit kernel is inlined and
must agree with the top-level compile config, and the LNC degree resolves as 0.7 does, with
neuronx-cc's --lnc checked (NCC_EVRF066). Each diagnostic at the user's line."""
import dataclasses
import warnings

import numpy as np
import pytest

import nki
import nki.isa as nisa
import nki.language as nl
import nkic
from nki.compiler import Allocation, CompileConfig, SpecializationConfig
from nki_test_util import Markers, check_diag, trace_error

M = Markers(__file__)
X = np.arange(4 * 8, dtype=np.float32).reshape(4, 8)


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch):
    for name in ("NEURON_PLATFORM_TARGET_OVERRIDE", "NEURON_LOGICAL_NC_CONFIG", "NEURON_CC_FLAGS",
                 "NKI_COMPILER_FRONTEND", "NKI_PREFETCH_RING_SIZE"):
        monkeypatch.delenv(name, raising=False)


def scaled(a, scale):
    """`a * scale` through SBUF."""
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=float(scale))
    nisa.dma_copy(dst=out, src=t)
    return out


def evens(n):
    for i in range(n):
        if i % 2 == 0:
            yield i


@nki.jit
def generators_and_closures(a):
    factor = 2
    times = lambda v: v * factor  # noqa: E731
    total = sum(evens(7)) + sum(times(i) for i in range(3)) + len([i for i in range(4) if i])
    return scaled(a, total)  # 12 + 6 + 3


def test_generators_comprehensions_and_closures_run_as_python():
    np.testing.assert_array_equal(nki.simulate(generators_and_closures)(X), X * 21)


class Tile:
    def __init__(self, scale):
        self.scale = scale

    def factor(self):
        return self.scale


class DoubledTile(Tile):
    def factor(self):
        return 2 * super().factor()


@nki.jit
def inherits(a):
    return scaled(a, DoubledTile(1.5).factor() + Tile(1).factor())


def test_any_class_and_inheritance():
    np.testing.assert_array_equal(nki.simulate(inherits)(X), X * 4)


@dataclasses.dataclass
class Point:
    x: int
    y: int


class Shape(nl.NKIObject):
    rows: int = 0


@dataclasses.dataclass
class DataShape(nl.NKIObject):
    rows: int = 0


@nki.jit
def equalities(a):
    # Python's ==: identity for a plain class and an NKIObject, field-wise for a dataclass.
    same = [Tile(1) == Tile(1), Point(1, 2) == Point(1, 2), Shape(rows=4) == Shape(rows=4),
            DataShape(rows=4) == DataShape(rows=4)]
    return scaled(a, sum(bit << i for i, bit in enumerate(same)))


def test_equality_is_pythons():
    np.testing.assert_array_equal(nki.simulate(equalities)(X), X * 0b1010)


def recorded(kernel, *args):
    """The warn_parser_frontend_construct warnings of a trace: (message, file, line)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = nki.simulate(kernel)(*args)
    return out, [(str(w.message), w.filename, w.lineno) for w in caught
                 if str(w.message).startswith("[warn_parser_frontend_construct]")]


@nki.jit
def identity_checks(a):
    t = Tile(3)
    u = t
    return scaled(a, 1 if u is t else 0)  # ERR:is


@nki.jit
def integer_keys(a):
    by_core = {0: 1.0, 1: 3.0}  # ERR:key
    return scaled(a, by_core[1])


@pytest.mark.parametrize("kernel,marker,what,scale", [
    (identity_checks, "is", "'is' / 'is not' between values", 1),
    (integer_keys, "key", "a non-string dict key (0)", 3),
], ids=["is", "key"])
def test_is_and_non_string_keys_warn_and_keep_their_python_meaning(kernel, marker, what, scale):
    out, got = recorded(kernel, X)
    np.testing.assert_array_equal(out, X * scale)
    assert got == [(f"[warn_parser_frontend_construct] {what} was rejected by the parser frontend of nki 0.6 and "
                    "before; since 0.7 the kernel runs as Python and it has Python's meaning",
                    M.path, M.line(marker))]


@nki.jit
def keyword_only(a, *, scale=1.0):  # ERR:kwonly
    return scaled(a, scale)


def test_the_signature_rules_stay():
    check_diag(trace_error(keyword_only, X), M, "err_unsupported_python_construct",
               "a keyword-only parameter (after '*') is not supported in an NKI kernel", [("kwonly", "scale")])
    with pytest.raises(nkic.NKIError) as info:
        nki.simulate(generators_and_closures)([X])  # ERR:list_arg
    check_diag(info.value, M, "err_removed_in_nki_version",
               "a list argument to a kernel was removed in nki 0.3 (nkic serves nki 0.8)", [("list_arg", "nki.")])


def test_the_parser_frontend_variable_is_ignored_with_a_warning(monkeypatch):
    monkeypatch.setenv("NKI_COMPILER_FRONTEND", "custom")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = nki.simulate(inherits)(X)  # ERR:frontend
    np.testing.assert_array_equal(out, X * 4)
    assert [(str(w.message), w.lineno) for w in caught] == [
        ("[warn_compiler_frontend_ignored] NKI_COMPILER_FRONTEND=custom is ignored: nkic traces every kernel as "
         "Python, as the tracer frontend of nki 0.7+ does (=custom, the parser frontend, is deprecated since Neuron "
         "2.33)", M.line("frontend"))]


@nki.jit(compile_config=CompileConfig(allocation=Allocation.LINEAR))
def linear_copy(a):
    return scaled(a, 2)


@nki.jit(compile_config=CompileConfig())
def default_copy(a):
    return scaled(a, 3)


@nki.jit
def calls_linear(a):
    return linear_copy(a)  # ERR:nested


@nki.jit(compile_config=CompileConfig(allocation=Allocation.LINEAR))
def linear_calls_coloring(a):
    return coloring_copy(a)  # ERR:nested_coloring


@nki.jit(compile_config=CompileConfig(allocation=Allocation.COLORING))
def coloring_copy(a):
    return scaled(a, 5)


@nki.jit(specialization_config=SpecializationConfig(allow_nested_config_override=True))
def allows_linear(a):
    return linear_copy(a)  # ERR:allowed


@nki.jit(compile_config=CompileConfig(allocation=Allocation.LINEAR))
def agrees(a):
    return linear_copy(a)


@nki.jit
def calls_default(a):
    return default_copy(a)


@nki.jit(compile_config=CompileConfig(allocation=Allocation.LINEAR))
def linear_calls_plain(a):
    return generators_and_closures(a)


CLASH = ("Kernel 'linear_copy' is called from inside another kernel but sets compile config that differs from the "
         "outer kernel's: allocation=Allocation.LINEAR where the outer kernel has allocation=Allocation.COLORING")


@pytest.mark.parametrize("kernel,marker,token,message", [
    (calls_linear, "nested", "linear", CLASH),
    (linear_calls_coloring, "nested_coloring", "coloring",
     "Kernel 'coloring_copy' is called from inside another kernel but sets compile config that differs from the "
     "outer kernel's: allocation=Allocation.COLORING where the outer kernel has allocation=Allocation.LINEAR"),
], ids=["inner_linear", "inner_coloring"])
def test_a_nested_kernel_with_another_compile_config_is_an_error(kernel, marker, token, message):
    e = check_diag(trace_error(kernel, X), M, "err_nested_kernel_config_mismatch", message, [(marker, token)])
    assert isinstance(e, nisa.NkiValidationError) and isinstance(e, ValueError) and e.message == message


def test_the_top_level_kernel_may_allow_the_override():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = nki.simulate(allows_linear)(X)
    np.testing.assert_array_equal(out, X * 2)  # inlined
    assert [(str(w.message), w.lineno) for w in caught] == [
        (f"[warn_nested_kernel_config_override] {CLASH}; the top-level kernel allows it "
         "(allow_nested_config_override=True), so it is inlined under the outer kernel's config", M.line("allowed"))]


@pytest.mark.parametrize("kernel,scale", [(agrees, 2), (calls_default, 3), (linear_calls_plain, 21)],
                         ids=["same", "defaults", "none"])
def test_nested_kernels_that_agree_are_inlined(kernel, scale):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(nki.simulate(kernel)(X), X * scale)


@nki.jit
def per_core(a):
    """Core c scales its half of the rows by c + 1 (one core: all rows by 1)."""
    cores = nl.num_programs(0)
    n = a.shape[0] // cores
    c = nl.program_id(0)
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((n, a.shape[1]), a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a[c * n:(c + 1) * n, :])
    nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=float(c + 1))
    nisa.dma_copy(dst=out[c * n:(c + 1) * n, :], src=t)
    return out


TWO_CORES = np.concatenate([X[:2], 2 * X[2:]])


@pytest.mark.parametrize("configured,launch,expected", [
    (None, None, X), ("2", None, TWO_CORES), ("1", None, X), (None, 2, TWO_CORES), ("2", 2, TWO_CORES),
], ids=["default", "env", "env1", "bracket", "both"])
def test_the_lnc_degree_is_the_bracket_then_the_environment_then_1(monkeypatch, configured, launch, expected):
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn2")
    if configured:
        monkeypatch.setenv("NEURON_LOGICAL_NC_CONFIG", configured)
    np.testing.assert_array_equal(nki.simulate(per_core if launch is None else per_core[launch])(X), expected)


@pytest.mark.parametrize("configured,flags,launch,kernel_lnc,compiler_lnc", [
    (None, "--lnc=2", None, 1, 2), ("2", "--lnc=1", None, 2, 1), (None, "-O1 --lnc 1", 2, 2, 1),
], ids=["default", "env", "bracket"])
def test_a_kernel_lnc_unlike_the_compilers_is_evrf066(monkeypatch, configured, flags, launch, kernel_lnc,
                                                      compiler_lnc):
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn2")
    monkeypatch.setenv("NEURON_CC_FLAGS", flags)
    if configured:
        monkeypatch.setenv("NEURON_LOGICAL_NC_CONFIG", configured)
    with pytest.raises(nkic.NKIError) as info:
        nki.simulate(per_core if launch is None else per_core[launch])(X)  # ERR:evrf066
    check_diag(info.value, M, "err_lnc_compiler_mismatch",
               f"NKI kernel 'per_core' is configured with LNC={kernel_lnc}, but neuronx-cc is using "
               f"LNC={compiler_lnc}.", [("evrf066", "nki.")])
    assert "NCC_EVRF066" in info.value.hint


@pytest.mark.parametrize("configured,flags,launch,expected", [
    (None, "--lnc=1", None, X), ("2", "--lnc=2 -O2", None, TWO_CORES), (None, "--lnc 2", 2, TWO_CORES),
    ("2", "-O1", None, TWO_CORES),
], ids=["default", "env", "bracket", "no_lnc_flag"])
def test_a_kernel_lnc_like_the_compilers_runs(monkeypatch, configured, flags, launch, expected):
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn2")
    monkeypatch.setenv("NEURON_CC_FLAGS", flags)
    if configured:
        monkeypatch.setenv("NEURON_LOGICAL_NC_CONFIG", configured)
    np.testing.assert_array_equal(nki.simulate(per_core if launch is None else per_core[launch])(X), expected)


def test_an_lnc_degree_from_the_environment_the_target_lacks(monkeypatch):
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn2")
    monkeypatch.setenv("NEURON_LOGICAL_NC_CONFIG", "4")
    with pytest.raises(nkic.NKIError) as info:
        nki.simulate(per_core)(X)  # ERR:env_cores
    check_diag(info.value, M, "err_multi_cores_spmd_not_supported",
               "NEURON_LOGICAL_NC_CONFIG=4 launches the kernel over 4 cores, which target 'trn2' does not have: a "
               "logical NeuronCore there spans 1 to 2 physical core(s)", [("env_cores", "nki.")])


def test_an_lnc_bracket_past_64_bits_is_a_diagnostic():
    with pytest.raises(nkic.NKIError) as info:
        nki.simulate(per_core[2**63])(X)  # ERR:huge_lnc
    check_diag(info.value, M, "err_unsupported_args",
               "kernel[lnc] 9223372036854775808 does not fit in a signed 64-bit integer", [("huge_lnc", "nki.")])


@pytest.mark.parametrize("variable,value,expected", [
    ("NEURON_LOGICAL_NC_CONFIG", "two", "an LNC degree (1 or 2)"),
    ("NEURON_CC_FLAGS", "--lnc=x", "flags whose --lnc is 1 or 2"),
], ids=["lnc_config", "cc_flags"])
def test_an_lnc_setting_that_is_no_number(monkeypatch, variable, value, expected):
    monkeypatch.setenv(variable, value)
    with pytest.raises(nkic.NKIError) as info:
        nki.simulate(per_core)(X)  # ERR:env_value
    check_diag(info.value, M, "err_invalid_environment_value", f"{variable}={value} is not {expected}",
               [("env_value", "nki.")])
