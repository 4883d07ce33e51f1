"""The dispatcher runs the plain forms of nl.load, nl.store and the elementwise
ops in the core and every other form through the API's Python function: both
must trace the same instructions and report the same diagnostics at the user's
line."""
import numpy as np
import pytest

import neuronxcc.nki.language as nl
from nki_test_util import Markers, check_diag, trace_error, trace_ir, simulate

M = Markers(__file__)
XF = np.arange(16 * 8, dtype=np.float32).reshape(16, 8)


def body_text(ir):
    """The IR without its kernel header (the kernels differ by name only)."""
    return ir.split("\n", 1)[1]


def k_plain(a):
    out = nl.ndarray((16, 8), dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.load(a[0:16, 0:8])
    y = nl.exp(x)
    z = nl.add(x, y)
    w = nl.multiply(z, 2.0)
    nl.store(out[0:16, 0:8], w)
    return out


def k_keywords(a):  # the same calls with their defaults and operands spelled out
    out = nl.ndarray((16, 8), dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.load(src=a[0:16, 0:8], mask=None, dtype=None)
    y = nl.exp(x=x, dtype=None)
    z = nl.add(x, y=y, mask=None)
    w = nl.multiply(z, 2.0, dtype=None, mask=None)
    nl.store(dst=out[0:16, 0:8], value=w, mask=None)
    return out


def k_extra_keywords(a):  # keywords the APIs accept and ignore
    out = nl.ndarray((16, 8), dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.load(a[0:16, 0:8], name="ignored")
    y = nl.exp(x, name="ignored")
    z = nl.add(x, y, name="ignored")
    w = nl.multiply(z, 2.0, name="ignored")
    nl.store(out[0:16, 0:8], value=w, name="ignored")
    return out


@pytest.mark.parametrize("fn", [k_keywords, k_extra_keywords])
def test_every_call_form_traces_the_plain_forms_instructions(fn):
    assert body_text(trace_ir(fn, XF)) == body_text(trace_ir(k_plain, XF))
    np.testing.assert_array_equal(simulate(fn, XF), simulate(k_plain, XF))


def k_dtype(a):
    out = nl.ndarray((16, 8), dtype=nl.bfloat16, buffer=nl.shared_hbm)
    x = nl.load(a[0:16, 0:8], dtype=nl.bfloat16)
    nl.store(out[0:16, 0:8], value=nl.add(x, x, dtype=nl.bfloat16))
    return out


def test_a_dtype_keyword_is_the_python_functions_to_apply():
    ir = trace_ir(k_dtype, XF)
    assert "tensor x: bfloat16[16, 8] sbuf local" in ir and "tensor add: bfloat16[16, 8] sbuf local" in ir, ir
    np.testing.assert_array_equal(simulate(k_dtype, XF).astype(np.float32), 2 * XF)


def k_mask(a):
    out = nl.ndarray((16, 8), dtype=nl.float32, buffer=nl.shared_hbm)
    i_p, i_f = nl.mgrid[0:16, 0:8]
    x = nl.load(a[i_p, i_f], mask=(i_p < 8))
    y = nl.add(x, x, mask=(i_p < 8))
    nl.store(out[i_p, i_f], value=y, mask=(i_p < 8))
    return out


def test_masks_pass_through_the_native_forms():
    ir = trace_ir(k_mask, XF)
    assert [line.strip().split(" = ")[1].split("[")[0] for line in ir.splitlines() if "mask=(i0 <= 7)" in line] == \
        ["load", "tensor_tensor", "store"], ir
    got = simulate(k_mask, XF)
    np.testing.assert_array_equal(got[:8], 2 * XF[:8])


def k_load_not_a_tensor(a):
    out = nl.ndarray((16, 8), dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.load(5)  # ERR:load_number
    nl.store(out, value=x)
    return out


def k_store_not_a_tensor(a):
    x = nl.load(a[0:16, 0:8])
    nl.store(3, x)  # ERR:store_number
    return x


def k_add_string(a):
    out = nl.ndarray((16, 8), dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.load(a[0:16, 0:8])
    nl.store(out, value=nl.add(x, "one"))  # ERR:add_string
    return out


def k_add_one_operand(a):
    out = nl.ndarray((16, 8), dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.load(a[0:16, 0:8])
    nl.store(out, value=nl.add(x))  # ERR:add_one_operand
    return out


@pytest.mark.parametrize("fn,marker,token,code,message,api", [
    (k_load_not_a_tensor, "load_number", "nl.load", "err_unexpected_type_of_operand", "'int', expected a tensor",
     "nl.load"),
    (k_store_not_a_tensor, "store_number", "nl.store", "err_unexpected_type_of_operand", "'int', expected a tensor",
     "nl.store"),
    (k_add_string, "add_string", "nl.add", "err_unexpected_type_of_operand", "str", "nl.add"),
    (k_add_one_operand, "add_one_operand", "nl.add", "err_unsupported_args", "missing a required argument: 'y'",
     "nl.add"),
])
def test_errors_of_each_form_point_at_the_call(fn, marker, token, code, message, api):
    e = trace_error(fn, XF)
    check_diag(e, M, code, message, [(marker, token)], api=api)
