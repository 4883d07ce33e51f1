"""Misuses of the nki 0.7/0.8 device scalars and control flow, each a diagnostic with its
code, message, hint and the user's line (NKI_07_08_API.md §2.2-2.3, §3, §9.3), and the 0.8
register deprecations (§5.2), warned at the user's line."""
import numpy as np
import pytest

import nki
import nki.isa as nisa
import nki.language as nl
import nkic
from nki_test_util import Markers, check_diag, trace_error
from test_nki_scalars import load, store_all

M = Markers(__file__)


# Rejections ---------------------------------------------------------------------------

def h32():
    return nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)


def h64():
    t = nl.ndarray((1, 1), dtype=nl.int64, buffer=nl.sbuf)
    return nisa.scalar_load(t)


@nki.jit
def load_unsigned(a):
    nisa.scalar_load(nl.ndarray((1, 1), dtype=nl.uint32, buffer=nl.sbuf))  # ERR:unsigned
    return a


@nki.jit
def load_float(a):
    nisa.scalar_load(nl.ndarray((1, 1), dtype=nl.float32, buffer=nl.sbuf))  # ERR:float
    return a


@nki.jit
def load_wide_tile(a):
    nisa.scalar_load(nl.ndarray((2, 3), dtype=nl.int32, buffer=nl.sbuf))  # ERR:shape
    return a


@nki.jit
def store_width(a):
    nisa.scalar_store(h32(), h64())  # ERR:store_width
    return a


@nki.jit
def store_int(a):
    nisa.scalar_store(h32(), 5)  # ERR:store_int
    return a


@nki.jit
def mixed_widths(a):
    s = nisa.scalar_load(h32()) + h64()  # ERR:mixed
    return a


@nki.jit
def int64_divide(a):
    nisa.scalar_alu(h64(), 3, op=nl.divide)  # ERR:div64
    return a


@nki.jit
def int64_compare(a):
    s = h64() < 3  # ERR:cmp64
    return a


@nki.jit
def int64_bound(a):
    nl.fori_loop(0, h64(), lambda i: None)  # ERR:bound64
    return a


@nki.jit
def int64_cond(a):
    nl.if_else(h64(), lambda: None)  # ERR:cond64
    return a


@nki.jit
def int64_on_chip_offset(a):
    sb = nl.ndarray((1, 8), dtype=nl.float32, buffer=nl.sbuf)
    v = sb.ap([[8, 1], [1, 1]], offset=0, scalar_offset=h64(), indirect_dim=1)  # ERR:offset64
    return a


@nki.jit
def python_if(a):
    s = nisa.scalar_load(h32())
    if s > 0:  # ERR:if
        pass
    return a


@nki.jit
def python_while(a):
    s = nisa.scalar_load(h32())
    while s:  # ERR:while
        s = s - 1
    return a


@nki.jit
def floor_division(a):
    s = nisa.scalar_load(h32()) // 2  # ERR:floordiv
    return a


@nki.jit
def unroll_scalar_bound(a):
    nl.fori_loop(0, nisa.scalar_load(h32()), lambda i: None, unroll=True)  # ERR:unroll
    return a


@nki.jit
def compute_on_int64(a):
    t = nl.ndarray((1, 1), dtype=nl.int64, buffer=nl.sbuf)
    nisa.tensor_copy(dst=t, src=t)  # ERR:compute64
    return a


@nki.jit
def tensor_operand(a):
    nisa.scalar_alu(h32(), 1, op=nl.add)  # ERR:tensor_operand
    return a


@nki.jit
def float_cond(a):
    nl.if_else(0.5, lambda: None)  # ERR:float_cond
    return a


@nki.jit
def bitwise_op(a):
    nisa.scalar_alu(nisa.scalar_load(h32()), 1, op=nl.bitwise_and)  # ERR:bitwise
    return a


@nki.jit
def then_not_callable(a):
    nl.if_else(1, "then")  # ERR:then_fn
    return a


@nki.jit
def while_returns_int(a):
    nl.while_loop(nisa.scalar_load(h32()), lambda c: 0)  # ERR:while_int
    return a


@nki.jit
def while_returns_int64(a):
    nl.while_loop(nisa.scalar_load(h32()), lambda c: h64())  # ERR:while_64
    return a


@nki.jit
def while_int64_init(a):
    nl.while_loop(h64(), lambda c: c)  # ERR:while_init64
    return a


@nki.jit
def float_operand(a):
    s = nisa.scalar_load(h32()) + 1.5  # ERR:float_operand
    return a


@nki.jit
def load_psum(a):
    nisa.scalar_load(nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.psum))  # ERR:psum
    return a


@nki.jit
def python_int(a):
    x = [0, 1][nisa.scalar_load(h32())]  # ERR:int
    return a


@nki.jit
def converting_dma(a):
    t = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=nl.ndarray((1, 1), dtype=nl.int64, buffer=nl.sbuf))  # ERR:convert64
    return a


@nki.jit
def constant_divide_by_zero(a):
    nisa.scalar_alu(7, 0, op=nl.divide)  # ERR:const_div0
    return a


REJECTIONS = [
    (load_unsigned, "unsigned", "err_scalar_dtype", "'nisa.scalar_load' src is 'uint32': a scalar is nl.int32 or "
     "nl.int64", "use the signed dtype of the same width, nl.int32"),
    (load_float, "float", "err_scalar_dtype", "src is 'float32': a scalar is nl.int32 or nl.int64",
     "a scalar comes from an int32 or int64 tensor"),
    (load_wide_tile, "shape", "err_scalar_shape", "'nisa.scalar_load' src holds one scalar: a (1, 1) tensor, got "
     "shape [2, 3]", ""),
    (store_width, "store_width", "err_scalar_width_mismatch", "'nisa.scalar_store' stores an int64 scalar into an "
     "int32 tensor", "same width"),
    (store_int, "store_int", "err_unexpected_type_of_operand", "'value': got an int, expected an NkiScalar",
     "nisa.memset(dst, value)"),
    (mixed_widths, "mixed", "err_scalar_width_mismatch", "mixes an int32 and an int64 scalar", "same width"),
    (int64_divide, "div64", "err_scalar_int64_unsupported", "'nisa.scalar_alu' op divide takes 32-bit scalars only",
     "int64 scalars add, subtract and multiply only"),
    (int64_compare, "cmp64", "err_scalar_int64_unsupported", "op less takes 32-bit scalars only", ""),
    (int64_bound, "bound64", "err_scalar_int64_unsupported", "'nl.fori_loop' upper takes 32-bit scalars only",
     "no 64-bit form"),
    (int64_cond, "cond64", "err_scalar_int64_unsupported", "'nl.if_else' cond takes 32-bit scalars only", ""),
    (int64_on_chip_offset, "offset64", "err_scalar_int64_unsupported",
     "scalar_offset= on the on-chip tensor 'sb' takes 32-bit scalars only", "int64 offset addresses HBM only"),
    (python_if, "if", "err_dynamic_control_flow_not_supported", "the condition is an NkiScalar",
     "nl.if_else(cond, then_fn, else_fn)"),
    (python_while, "while", "err_dynamic_control_flow_not_supported", "the condition is an NkiScalar",
     "nl.while_loop(init, body_fun)"),
    (floor_division, "floordiv", "err_instruction_unsupported_op", "unsupported operator '//' on an NkiScalar",
     "call nisa.scalar_alu(a, b, op=nl.divide) (toward zero)"),
    (unroll_scalar_bound, "unroll", "err_unsupported_args", "unroll=True unrolls the loop when compiled: its bounds "
     "are ints known when traced, got a NkiScalar", ""),
    (compute_on_int64, "compute64", "err_wide_dtype_compute", "'tensor_copy' cannot read or write 't' of dtype "
     "'int64': no compute engine handles 64-bit integers", "nisa.scalar_load"),
    (tensor_operand, "tensor_operand", "err_unexpected_type_of_operand", "got a tensor, expected an NkiScalar or an "
     "int", ""),
    (float_cond, "float_cond", "err_unexpected_type_of_operand", "'nl.if_else cond': got 'float', expected a "
     "Python bool or int", ""),
    (then_not_callable, "then_fn", "err_unexpected_type_of_operand", "'nl.if_else then_fn': got 'str', expected a "
     "function", ""),
    (while_returns_int, "while_int", "err_unexpected_type_of_operand", "'nl.while_loop body_fun result': got 'int', "
     "expected an NkiScalar (the next condition)", ""),
    (while_returns_int64, "while_64", "err_scalar_int64_unsupported", "'nl.while_loop' body_fun's result takes "
     "32-bit scalars only", ""),
    (while_int64_init, "while_init64", "err_scalar_int64_unsupported", "'nl.while_loop' init takes 32-bit scalars "
     "only", ""),
    (float_operand, "float_operand", "err_unexpected_type_of_operand", "'data2': got 'float', expected an NkiScalar "
     "or an int", ""),
    (load_psum, "psum", "err_unsupported_memory", "Expected operand 'src' of 'scalar_load' to be in address space "
     "'sbuf or hbm', but got a tile in 'psum' instead.", ""),
    (python_int, "int", "err_instruction_unsupported_op", "unsupported operator 'int()' on an NkiScalar",
     "use it as a loop bound"),
    (converting_dma, "convert64", "err_wide_dtype_compute", "of dtype 'int64': no compute engine handles 64-bit",
     "nisa.dma_copy between tensors of the same dtype"),
    (constant_divide_by_zero, "const_div0", "err_unsupported_args", "unsupported arguments to 'nisa.scalar_alu': "
     "divide by 0", ""),
    (bitwise_op, "bitwise", "err_instruction_unsupported_op", "unsupported operator 'bitwise_and'",
     "a scalar's ALU has add"),
]


# Where each diagnostic points: the call, or the expression an operator or a condition is.
TOKENS = {"mixed": "nisa.scalar_load(h32()) +", "cmp64": "h64() <", "offset64": "sb.ap", "if": "s > 0",
          "while": "s:", "floordiv": "nisa.scalar_load(h32()) //", "float_operand": "nisa.scalar_load(h32()) +",
          "int": "[0, 1]"}


@pytest.mark.parametrize("kernel, marker, code, message, hint", REJECTIONS, ids=[r[1] for r in REJECTIONS])
def test_scalar_misuse_is_a_diagnostic_at_the_users_line(kernel, marker, code, message, hint):
    e = trace_error(kernel, np.zeros((1, 1), np.float32))
    token = TOKENS.get(marker, M.lines[M.line(marker) - 1].split("# ERR:")[0].strip()[:5])
    check_diag(e, M, code, message, [(marker, token)])
    assert hint in (e.hint or ""), (hint, e.hint)
    if marker in ("if", "while", "floordiv"):
        assert "(in '" not in str(e)  # Python's own protocol, no NKI API in flight


@nki.jit
def divide_by_zero(a_in):
    a = load(a_in)
    return store_all([nisa.scalar_alu(a, a - a, op=nl.divide)], nl.int32)  # ERR:div0


def test_a_scalar_division_by_zero_is_a_simulation_error_at_its_line():
    with pytest.raises(nkic.NKIError) as info:
        nki.simulate(divide_by_zero)(np.array([[3]], np.int32))
    e = info.value
    assert e.code == "err_scalar_division_by_zero" and "divide by a scalar holding 0" in e.message
    assert M.same_file(e.file) and e.line == M.line("div0")


# Deprecations -------------------------------------------------------------------------

@nki.jit
def registers(a):
    r = nisa.register_alloc()  # ERR:alloc
    nisa.register_move(r, 3)  # ERR:move
    t = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.register_store(t, r)  # ERR:store
    nisa.register_load(r, t)  # ERR:load
    return a


def test_register_apis_are_deprecated_at_the_users_line():
    with pytest.warns(DeprecationWarning) as record:
        registers.trace(None, (np.zeros((1, 1), np.float32),), {})
    hits = [(w.lineno, str(w.message)) for w in record if M.same_file(w.filename)]
    assert [line for line, _ in hits] == [M.line(m) for m in ("alloc", "move", "store", "load")]
    for (_, text), api in zip(hits, ("register_alloc", "register_move", "register_store", "register_load")):
        assert text == (f"[warn_deprecated_in_nki_version] nisa.{api} is deprecated since nki 0.8: use "
                        "nisa.scalar_load, nisa.scalar_store and NkiScalar arithmetic")


def test_registers_are_not_deprecated_in_nki_0_7(monkeypatch):
    monkeypatch.setenv("NKIC_NKI_VERSION", "0.7")
    import warnings
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        registers.trace(None, (np.zeros((1, 1), np.float32),), {})
    assert not [w for w in record if "deprecated" in str(w.message)]


@nki.jit
def construct_register(a):
    nisa.VirtualRegister(h32())  # ERR:construct
    return a


def test_constructing_a_virtual_register_is_deprecated():
    with pytest.warns(DeprecationWarning, match="nisa.VirtualRegister is deprecated since nki 0.8") as record:
        construct_register.trace(None, (np.zeros((1, 1), np.float32),), {})
    assert any(M.same_file(w.filename) and w.lineno == M.line("construct") for w in record)


# Versions ------------------------------------------------------------------------------

@nki.jit
def if_else_in_0_7(a):
    nl.if_else(1, lambda: None)  # ERR:if_else_07
    return a


@nki.jit
def scalar_alu_in_0_7(a):
    nisa.scalar_alu(nisa.scalar_load(h32()), 1, op=nl.add)  # ERR:alu_07
    return a


@nki.jit
def unroll_in_0_7(a):
    nl.fori_loop(0, 2, lambda i: None, unroll=True)  # ERR:unroll_07
    return a


@nki.jit
def scalar_load_in_0_6(a):
    nisa.scalar_load(h32())  # ERR:load_06
    return a


VERSIONED = [
    ("0.7", if_else_in_0_7, "if_else_07", "nl.if_else is not in nki 0.7 (NKIC_NKI_VERSION=0.7): it came in nki 0.8"),
    ("0.7", scalar_alu_in_0_7, "alu_07", "nisa.scalar_alu is not in nki 0.7 (NKIC_NKI_VERSION=0.7): it came in "
     "nki 0.8"),
    ("0.7", unroll_in_0_7, "unroll_07", "nl.fori_loop(unroll=True) is not in nki 0.7 (NKIC_NKI_VERSION=0.7): it "
     "came in nki 0.8"),
    ("0.6", scalar_load_in_0_6, "load_06", "nisa.scalar_load is not in nki 0.6 (NKIC_NKI_VERSION=0.6): it came "
     "in nki 0.7"),
]


@pytest.mark.parametrize("version, kernel, marker, message", VERSIONED, ids=[v[2] for v in VERSIONED])
def test_scalar_apis_are_in_the_versions_that_have_them(version, kernel, marker, message, monkeypatch):
    monkeypatch.setenv("NKIC_NKI_VERSION", version)
    e = trace_error(kernel, np.zeros((1, 1), np.float32))
    check_diag(e, M, "err_not_in_nki_version", message, [(marker, "n")])


@nki.jit
def register_index(a):
    """Before nki 0.7 a fori_loop index is a register."""
    kinds = []
    nl.fori_loop(0, 2, lambda i: kinds.append(type(i).__name__))
    assert kinds == ["VirtualRegister" if nki.__version__ < "0.7" else "NkiScalar"], kinds
    return a


@pytest.mark.parametrize("version", ["0.6", "0.8"])
def test_a_fori_loop_index_is_a_register_before_nki_0_7(version, monkeypatch):
    monkeypatch.setenv("NKIC_NKI_VERSION", version)
    register_index.trace(None, (np.zeros((1, 1), np.float32),), {})


def test_the_legacy_api_has_no_64_bit_dtype():
    from neuronxcc import nki as legacy
    import neuronxcc.nki.language as lnl

    @legacy.jit
    def wide_tile(x):
        t = lnl.ndarray((1, 1), dtype=np.int64, buffer=lnl.sbuf)  # ERR:legacy_int64
        return x

    e = trace_error(wide_tile, np.zeros((1, 1), np.float32))
    check_diag(e, M, "err_unsupported_dtype", "unsupported dtype 'int64'", [("legacy_int64", "lnl.")])
