"""The accepted Python subset of the current nki API (NKI_CURRENT_API.md §2.2, §2.3, §9.2)
in a kernel and in the helpers it calls: what the compiler rejects is a diagnostic at the
user's line, and what it accepts (string keys held in variables, nested loops reusing `_`,
NKIObject classes, legacy annotations) traces."""
import enum
import warnings

import numpy as np
import pytest

import neuronxcc.nki.language as legacy_nl
from neuronxcc.nki.isa import activation as legacy_activation
import neuronxcc.nki.typing as legacy_nt
import nki
import nki.isa as nisa
import nki.language as nl
from nki_test_util import Markers, check_diag, trace_error

M = Markers(__file__)
X = np.ones((4, 8), np.float32)
CONSTRUCT = "err_unsupported_python_construct"


def copied(a, scale=1.0):
    """`a * scale` through SBUF: what the accepted kernels below return."""
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=scale)
    nisa.dma_copy(dst=out, src=t)
    return out


class Scale(nl.NKIObject):
    factor: float = 1.0


class Mode(enum.Enum):
    DOUBLE = 2.0


@nki.jit
def accepted(a: legacy_nt.tensor):
    key = "double"
    table = {key: Mode.DOUBLE, "unit": 1.0}
    names = {name: len(name) for name in ("ab", "cde")}
    names = dict(zip(names, names.values()), extra=0)
    names[key] = 4  # a store under a string key
    total = 0
    for _ in range(2):
        for _ in range(3):
            total += 1
    s = Scale(factor=table[key].value * names["ab"] / 4)
    return copied(a, s.factor * total / 6)


def test_accepted_constructs_trace_and_run():
    np.testing.assert_array_equal(nki.simulate(accepted)(X), X)


@nki.jit
def stores_by_index(a):
    t = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    rows = [t, t]
    rows[1] = t  # a list takes integer keys
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out[0], src=rows[1][0])  # a tensor indexed by an integer
    nisa.dma_copy(dst=out[1:], src=t[1:])
    return out


def test_integer_keys_of_lists_and_tensors_stay_accepted():
    np.testing.assert_array_equal(nki.simulate(stores_by_index)(X), X)


@nki.jit
def key_in_a_variable(a):
    i = 3
    table = {i: a}  # ERR:var_key
    return a


@nki.jit
def key_of_a_comprehension(a):
    table = {i: a for i in range(2)}  # ERR:comp_key
    return a


@nki.jit
def key_of_a_store(a):
    table = {}
    for i in range(2):
        table[i] = a  # ERR:store_key
    return a


class Tables(nl.NKIObject):
    by_name: dict = None


@nki.jit
def key_of_an_attribute_store(a):
    tables = Tables(by_name={})
    tables.by_name[2] = a  # ERR:attr_store_key
    return a


@nki.jit
def key_of_a_dict_call(a):
    table = dict(zip((1, 2), (a, a)))  # ERR:call_key
    return a


def helper_comparing(x, y):
    return x is y  # ERR:helper_is


@nki.jit
def calls_helper(a):
    helper_comparing(1, 2)  # ERR:helper_call
    return a


@nki.jit
def writes_its_loop_variable(a):
    for i in range(4):
        i = i + 1  # ERR:induction
    return a


@nki.jit
def uses_legacy_language(a):
    t = legacy_nl.ndarray((4, 8), nl.float32, buffer=nl.sbuf)  # ERR:legacy
    return a


@nki.jit
def uses_a_legacy_instruction(a):
    x = nl.ndarray((4, 8), nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=x, src=a)
    y = legacy_activation(nl.exp, x)  # ERR:legacy_isa
    return a


class Plain:
    def __init__(self):
        self.factor = 1.0


class Mixed(nl.NKIObject, Plain):
    pass


@nki.jit
def makes_a_plain_object(a):
    p = Plain()  # ERR:plain
    return a


@nki.jit
def makes_a_mixed_object(a):
    p = Mixed()  # ERR:mixed
    return a


@nki.jit
def defines_a_plain_subclass(a):
    class Local(Plain):  # ERR:local_class
        pass
    return a


# Rejected by the parser frontend of nki 0.6 and before only (NKIC_NKI_VERSION=0.6).
PARSER_FRONTEND_CASES = [
    (key_in_a_variable, "var_key", "{", "a non-string dict key (3) is not supported in an NKI kernel", ()),
    (key_of_a_comprehension, "comp_key", "{", "a non-string dict key (0) is not supported in an NKI kernel", ()),
    (key_of_a_dict_call, "call_key", "dict(", "a non-string dict key (1) is not supported in an NKI kernel", ()),
    (key_of_a_store, "store_key", "table[", "a non-string dict key (0) is not supported in an NKI kernel", ()),
    (key_of_an_attribute_store, "attr_store_key", "tables.", "a non-string dict key (2) is not supported in an NKI kernel",
     ()),
    (calls_helper, "helper_is", "x is", "'is' / 'is not' between values is not supported in an NKI kernel",
     (("helper_call", "helper_comparing", "helper_comparing"),)),
    (makes_a_plain_object, "plain", "Plain(",
     "an instance of class 'Plain', which does not derive from nl.NKIObject is not supported", ()),
    (makes_a_mixed_object, "mixed", "Mixed(",
     "an instance of class 'Mixed', which does not derive from nl.NKIObject is not supported", ()),
    (defines_a_plain_subclass, "local_class", "Plain",
     "a class 'Local' deriving from 'Plain' is not supported in an NKI kernel", ()),
]
# Rejected by every frontend.
CASES = [
    (writes_its_loop_variable, "induction", "i =",
     "a write to the loop variable 'i' inside its loop is not supported in an NKI kernel", ()),
    (uses_legacy_language, "legacy", "legacy_nl",
     "the legacy neuronxcc.nki API ('legacy_nl') inside a kernel is not supported in an NKI kernel", ()),
    (uses_a_legacy_instruction, "legacy_isa", "legacy_activation",
     "the legacy neuronxcc.nki API ('legacy_activation') inside a kernel is not supported in an NKI kernel", ()),
]


@pytest.mark.parametrize("kernel,marker,token,message,notes", CASES, ids=[c[1] for c in CASES])
def test_rejected_construct(kernel, marker, token, message, notes):
    e = check_diag(trace_error(kernel, X), M, CONSTRUCT, message, [(marker, token)], notes=notes)
    assert e.api == "" and "(in '" not in str(e), str(e)  # Python is at fault, not an NKI API


@pytest.fixture
def parser_frontend(monkeypatch):
    """The rules of nki 0.6's parser frontend."""
    monkeypatch.setenv("NKIC_NKI_VERSION", "0.6")


@pytest.mark.parametrize("kernel,marker,token,message,notes", PARSER_FRONTEND_CASES,
                         ids=[c[1] for c in PARSER_FRONTEND_CASES])
def test_rejected_by_the_parser_frontend(parser_frontend, kernel, marker, token, message, notes):
    e = check_diag(trace_error(kernel, X), M, CONSTRUCT, message, [(marker, token)], notes=notes)
    assert e.api == "" and "(in '" not in str(e), str(e)


@pytest.mark.parametrize("kernel,marker,token,message,notes", PARSER_FRONTEND_CASES,
                         ids=[c[1] for c in PARSER_FRONTEND_CASES])
def test_the_tracer_frontend_runs_them_as_python(kernel, marker, token, message, notes):
    """nki 0.7+: classes are plain Python; `is` and non-string keys warn at their line
    (tests/python/test_nki_tracing_07.py checks the warnings' text)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        kernel.trace(None, (X,), {})
    line, _ = M.loc(marker, token)
    ours = [w for w in caught if "[warn_parser_frontend_construct]" in str(w.message)]
    if "class" in message:
        assert not ours, [str(w.message) for w in ours]
    else:
        assert {(w.filename, w.lineno) for w in ours} == {(M.path, line)}, [str(w.message) for w in caught]


def test_a_legacy_kernel_keeps_its_python():
    """The checks are the current API's: a neuronxcc.nki kernel may still use `is` in a helper."""
    import neuronxcc.nki as legacy_nki

    @legacy_nki.jit
    def legacy_kernel(a):
        out = legacy_nl.ndarray(a.shape, a.dtype, buffer=legacy_nl.shared_hbm)
        legacy_nl.store(out, legacy_nl.load(a))
        helper_comparing(1, 2)
        return out
    np.testing.assert_array_equal(legacy_nki.simulate_kernel(legacy_kernel, X), X)
