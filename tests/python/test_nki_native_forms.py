"""The current API's plain calls of nisa.dma_copy, nisa.tensor_tensor and nl.ndarray run in
the core, every other form through the API's Python function: both trace the same
instructions, store alike under NKI_PRECISE_FP=0, return the same NkiInstruction handles
and report the same diagnostics at the user's line."""
import numpy as np
import pytest

import nki
import nki.isa as nisa
import nki.language as nl
from nki_test_util import Markers, check_diag, trace_error

M = Markers(__file__)
XF = np.arange(16 * 8, dtype=np.float32).reshape(16, 8)


@pytest.fixture(autouse=True)
def _default_target(monkeypatch):
    monkeypatch.delenv("NEURON_PLATFORM_TARGET_OVERRIDE", raising=False)


def body_text(kernel, *args):
    """The IR of `kernel` without its header line (the kernels differ by name only)."""
    return kernel.trace(None, args, {}).ir.text(locations=False).split("\n", 1)[1]


@nki.jit
def k_plain(a):
    out = nl.ndarray((16, 8), dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.ndarray((16, 8), dtype=nl.bfloat16, buffer=nl.sbuf)
    y = nl.ndarray((16, 8), nl.float32)
    nisa.dma_copy(dst=x, src=a)
    nisa.tensor_tensor(dst=y, data1=x, data2=x, op=nl.multiply)
    nisa.tensor_tensor(y, y, x, nl.add)
    nisa.dma_copy(out, y)
    return out


@nki.jit
def k_python_forms(a):  # the same calls in forms only the Python functions take
    out = nl.ndarray([16, 8], dtype=np.float32, buffer=nl.shared_hbm)
    x = nl.ndarray([16, 8], dtype="bfloat16", buffer=nl.sbuf, name="")
    y = nl.ndarray((np.int64(16), 8), nl.float32, nl.sbuf)
    nisa.dma_copy(dst=x, src=a, oob_mode=nisa.oob_mode.error, dge_mode=nisa.dge_mode.unknown)
    nisa.tensor_tensor(dst=y, data1=x, data2=x, op=np.multiply, engine=nisa.engine.unknown)
    nisa.tensor_tensor(y, y, x, "add")
    nisa.dma_copy(out, y, priority=None)
    return out


def test_the_plain_and_the_python_forms_trace_the_same_instructions():
    assert body_text(k_python_forms, XF) == body_text(k_plain, XF)
    want = (XF.astype(nl.bfloat16).astype(np.float32) ** 2) + XF.astype(nl.bfloat16).astype(np.float32)
    for k in (k_plain, k_python_forms):
        np.testing.assert_array_equal(nki.simulate(k)(XF), want)


def test_narrow_floats_are_stored_alike_on_both_paths(monkeypatch):
    # NKI_PRECISE_FP=0: the official simulator's fp32 storage of on-chip narrow floats.
    monkeypatch.setenv("NKI_PRECISE_FP", "0")
    plain, python = body_text(k_plain, XF), body_text(k_python_forms, XF)
    assert plain == python
    assert "bfloat16" not in plain.split("\n")[1], plain
    np.testing.assert_array_equal(nki.simulate(k_plain)(XF), XF * XF + XF)


@nki.jit
def k_handles(a):
    out = nl.ndarray((16, 8), dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.ndarray((16, 8), dtype=nl.float32, buffer=nl.sbuf)
    first = nisa.dma_copy(dst=x, src=a, name="load")
    second = nisa.tensor_tensor(dst=x, data1=x, data2=x, op=nl.add)
    assert isinstance(first, nisa.NkiInstruction) and isinstance(second, nisa.NkiInstruction)
    second.depends_on(first)
    nisa.dma_copy(dst=out, src=x, name="store")
    return out


def test_native_calls_return_instruction_handles_and_take_labels():
    np.testing.assert_array_equal(nki.simulate(k_handles)(XF), XF + XF)
    scheduled = k_handles.with_schedule([("store", "load")])
    np.testing.assert_array_equal(nki.simulate(scheduled)(XF), XF + XF)


@nki.jit
def k_bad_shape(a):
    x = nl.ndarray((16, 8.5), dtype=nl.float32, buffer=nl.sbuf)  # ERR:bad_shape
    return x


@nki.jit
def k_psum_source(a):
    x = nl.ndarray((16, 8), dtype=nl.float32, buffer=nl.psum)
    y = nl.ndarray((16, 8), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=y, src=x)  # ERR:psum_src
    return y


@nki.jit
def k_typo(a):
    x = nl.ndarray((16, 8), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=x, data1=x, data2=x, opp=nl.add)  # ERR:typo
    return x


def test_diagnostics_of_native_calls_name_the_users_line():
    check_diag(trace_error(k_bad_shape, XF), M, "err_invalid_shape", "8.5 is not an integer",
               [("bad_shape", "nl.ndarray")])
    check_diag(trace_error(k_psum_source, XF), M, "err_unsupported_memory", ["'src'", "psum"],
               [("psum_src", "nisa.dma_copy")])
    e = trace_error(k_typo, XF)
    check_diag(e, M, "err_unsupported_args", "unexpected keyword argument 'opp'; did you mean 'op'?",
               [("typo", "nisa.tensor_tensor")])
