"""Device scalars and control flow of nki 0.7/0.8 (NKI_07_08_API.md §2, §3, §5.2):
NkiScalar arithmetic (int32 wrap-around, exact int64), nisa.scalar_load/scalar_store/
scalar_alu, scalars as loop bounds, if_else conditions and .ap(scalar_offset=), the
register deprecations, each simulated against Python's own integers and each misuse a
diagnostic at the user's line."""
import numpy as np
import pytest

import nki
import nki.isa as nisa
import nki.language as nl
import nkic
from nki_test_util import Markers, check_diag, trace_error

M = Markers(__file__)
I32_MIN, I32_MAX = -2**31, 2**31 - 1
N = 8
DATA = np.arange(1, N + 1, dtype=np.float32).reshape(1, N)


def wrap32(v):
    return (v + 2**31) % 2**32 - 2**31


def wrap64(v):
    return (v + 2**63) % 2**64 - 2**63


def trunc_div(a, b):
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def trunc_mod(a, b):
    return a - b * trunc_div(a, b)


def load(src, dtype=nl.int32):
    """A scalar read from an HBM argument through SBUF."""
    t = nl.ndarray((1, 1), dtype=dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=src)
    return nisa.scalar_load(t)


def store_all(values, dtype):
    """The scalars `values`, one per column of a (1, len) HBM output."""
    out = nl.ndarray((1, len(values)), dtype=dtype, buffer=nl.shared_hbm)
    for k, v in enumerate(values):
        nisa.scalar_store(out[0:1, k:k + 1], v)
    return out


# The int32 operations, each as its operator (or scalar_alu) and Python's exact meaning.
INT32_OPS = [
    (lambda a, b: a + b, lambda a, b: wrap32(a + b)),
    (lambda a, b: a - b, lambda a, b: wrap32(a - b)),
    (lambda a, b: a * b, lambda a, b: wrap32(a * b)),
    (lambda a, b: -a, lambda a, b: wrap32(-a)),
    (lambda a, b: nisa.scalar_alu(a, b, op=nl.divide), lambda a, b: wrap32(trunc_div(a, b))),
    (lambda a, b: nisa.scalar_alu(a, b, op=nl.fmod), trunc_mod),
    (lambda a, b: nisa.scalar_alu(a, b, op=nl.maximum), max),
    (lambda a, b: nisa.scalar_alu(a, b, op=nl.minimum), min),
    (lambda a, b: a < b, lambda a, b: int(a < b)),
    (lambda a, b: a <= b, lambda a, b: int(a <= b)),
    (lambda a, b: a > b, lambda a, b: int(a > b)),
    (lambda a, b: a >= b, lambda a, b: int(a >= b)),
    (lambda a, b: a == b, lambda a, b: int(a == b)),
    (lambda a, b: a != b, lambda a, b: int(a != b)),
    (lambda a, b: a + 5, lambda a, b: wrap32(a + 5)),
    (lambda a, b: 7 - a, lambda a, b: wrap32(7 - a)),
    (lambda a, b: a * -3, lambda a, b: wrap32(a * -3)),
    (lambda a, b: a + (2**32 + 5), lambda a, b: wrap32(a + 5)),  # an int keeps its low 32 bits
    (lambda a, b: (a < b) * 10 + (a == b), lambda a, b: 10 * int(a < b) + int(a == b)),  # comparisons compute on
]


@nki.jit
def int32_ops(a_in, b_in):
    a, b = load(a_in), load(b_in)
    return store_all([op(a, b) for op, _ in INT32_OPS], nl.int32)


@pytest.mark.parametrize("a, b", [(65536, 65536), (I32_MAX, 1), (-17, 4), (17, -4), (I32_MIN, -1), (7, 7),
                                  (-5, 9)])
def test_int32_scalar_arithmetic_matches_python_wrapped_to_32_bits(a, b):
    out = nki.simulate(int32_ops)(np.array([[a]], np.int32), np.array([[b]], np.int32))
    assert out.dtype == np.int32
    assert out[0].tolist() == [ref(a, b) for _, ref in INT32_OPS]


def test_the_documented_wrap_around_cases():
    out = nki.simulate(int32_ops)(np.array([[65536]], np.int32), np.array([[65536]], np.int32))
    assert out[0, 2] == 0  # 65536 * 65536
    out = nki.simulate(int32_ops)(np.array([[I32_MAX]], np.int32), np.array([[1]], np.int32))
    assert out[0, 0] == I32_MIN  # INT32_MAX + 1
    out = nki.simulate(int32_ops)(np.array([[-17]], np.int32), np.array([[4]], np.int32))
    assert out[0, 4:6].tolist() == [-4, -1]  # divide truncates toward zero, fmod takes data1's sign


INT64_OPS = [
    (lambda a, b: a + b, lambda a, b: wrap64(a + b)),
    (lambda a, b: a - b, lambda a, b: wrap64(a - b)),
    (lambda a, b: a * b, lambda a, b: wrap64(a * b)),
    (lambda a, b: -a, lambda a, b: wrap64(-a)),
    (lambda a, b: a * 3 + 2**40, lambda a, b: wrap64(a * 3 + 2**40)),
]


@nki.jit
def int64_ops(vals):
    a = nisa.scalar_load(vals[0:1, 0:1])  # an int64 scalar straight from HBM
    b = nisa.scalar_load(vals[0:1, 1:2])
    return store_all([op(a, b) for op, _ in INT64_OPS], nl.int64)


@pytest.mark.parametrize("a, b", [(2**40 + 3, 3 * 2**33), (2**62, 4), (-(2**63), 1), (2**53 + 1, 2**53 + 3)])
def test_int64_scalar_arithmetic_is_exact(a, b):
    out = nki.simulate(int64_ops)(np.array([[a, b]], np.int64))
    assert out.dtype == np.int64
    assert out[0].tolist() == [ref(a, b) for _, ref in INT64_OPS]


@nki.jit
def python_loop(n_in):
    """Scalar arithmetic in a Python loop (unrolled: a scalar is run-time state) and with numpy ints."""
    acc = load(n_in)
    for k in range(3):
        acc = acc * 2 + k
    return store_all([acc, np.int32(3) * acc, acc - np.int64(1)], nl.int32)


def test_scalar_arithmetic_in_python_loops_and_with_numpy_integers():
    out = nki.simulate(python_loop)(np.array([[5]], np.int32))
    acc = ((5 * 2 + 0) * 2 + 1) * 2 + 2
    assert out.tolist() == [[acc, 3 * acc, acc - 1]]


RECORDED = []


@nki.jit
def trace_time_alu(x):
    RECORDED.extend([nisa.scalar_alu(3, 4, op=nl.add), nisa.scalar_alu(-17, 4, op=nl.divide),
                     nisa.scalar_alu(-17, 4, op=nl.fmod), nisa.scalar_alu(3, 4, op=nl.less),
                     nisa.scalar_alu(5, 4, op=nl.equal), nisa.scalar_alu(2, 9, op=nl.maximum)])
    out = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=x)
    return out


def test_scalar_alu_of_two_ints_is_computed_when_traced_and_emits_nothing():
    RECORDED.clear()
    text = trace_time_alu.trace(None, (np.zeros((1, 1), np.int32),), {}).ir.text(False)
    assert RECORDED == [7, -4, -1, True, False, 9]
    assert [type(v) for v in RECORDED[3:5]] == [bool, bool]
    assert "scalar_alu" not in text


@nki.jit
def one_instruction_per_op(n_in):
    n = load(n_in)
    m = n * 2 + 1
    return store_all([m], nl.int32)


def test_each_scalar_operation_is_one_sequencer_instruction():
    text = one_instruction_per_op.trace(None, (np.zeros((1, 1), np.int32),), {}).ir.text(False)
    assert text.count("scalar_load[dve](") == 1
    assert text.count("scalar_alu[dve](") == 2
    assert "; multiply 2)" in text and "; add 1)" in text
    assert text.count("scalar_store[dve](") == 1
    out = nki.simulate(one_instruction_per_op)(np.array([[20]], np.int32))
    assert out.tolist() == [[41]]


def chain(n_in, ops):
    s = load(n_in)
    for _ in range(ops):
        s = s + 1
    return store_all([s], nl.int32)


@nki.jit
def one_op(n_in):
    return chain(n_in, 1)


@nki.jit
def many_ops(n_in):
    return chain(n_in, 101)


def test_scalar_instructions_are_costed_as_one_sequencer_alu_cycle_each():
    n = np.zeros((1, 1), np.int32)
    assert nki.simulate(many_ops)(n).tolist() == [[101]]
    one, many = (nkic.profile(k, n, target="trn2").latency_us for k in (one_op, many_ops))
    # 100 dependent instructions of one cycle each: well under a microsecond at any engine clock,
    # far below 100 Vector-Engine instructions (each at least its ~64-cycle MIN_II).
    assert 0 < many - one < 0.2, (one, many)


def test_a_scalar_has_its_dtype():
    seen = []

    @nki.jit
    def dtypes(a32, a64):
        seen.extend([load(a32).dtype, nisa.scalar_load(a64).dtype, (load(a32) < 1).dtype])
        return store_all([load(a32)], nl.int32)

    dtypes.trace(None, (np.zeros((1, 1), np.int32), np.zeros((1, 1), np.int64)), {})
    assert seen == [nl.int32, nl.int64, nl.int32]


# Loops --------------------------------------------------------------------------------

def copy_row(data, output, i):
    """output[0, i] = data[0, i] at a run-time column i."""
    temp = nl.ndarray((1, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=temp, src=data.ap([[1, 1], [1, 1]], scalar_offset=i, indirect_dim=1))
    nisa.dma_copy(dst=output.ap([[1, 1], [1, 1]], scalar_offset=i, indirect_dim=1), src=temp)


def zeroed_output():
    output = nl.ndarray((1, N), dtype=nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=output, src=nl.zeros((1, N), dtype=nl.float32, buffer=nl.sbuf))
    return output


@nki.jit
def scalar_bounds(data, lo_in, hi_in, step):
    output = zeroed_output()
    lo, hi = load(lo_in), load(hi_in)
    nl.fori_loop(lo, hi * 2 - hi, lambda i: copy_row(data, output, i), step=step)
    return output


@pytest.mark.parametrize("lo, hi, step", [(0, N, 1), (2, 7, 1), (1, N, 3), (5, 5, 1), (6, 2, 2), (3, 4, 2)])
def test_fori_loop_with_scalar_bounds_runs_range(lo, hi, step):
    out = nki.simulate(scalar_bounds)(DATA, np.array([[lo]], np.int32), np.array([[hi]], np.int32), step)
    keep = np.isin(np.arange(N), list(range(lo, hi, step)))
    np.testing.assert_array_equal(out[0], np.where(keep, DATA[0], 0))


@nki.jit
def scalar_upper(data, hi_in):
    output = zeroed_output()
    hi = load(hi_in)

    def body(i):
        assert isinstance(i, nisa.NkiScalar)
        copy_row(data, output, i)

    nl.fori_loop(1, hi, body)
    return output


def test_fori_loop_with_an_int_lower_and_a_scalar_upper_bound():
    out = nki.simulate(scalar_upper)(DATA, np.array([[5]], np.int32))
    np.testing.assert_array_equal(out[0], np.where((np.arange(N) >= 1) & (np.arange(N) < 5), DATA[0], 0))


@nki.jit
def register_lower(data, lo_in):
    output = zeroed_output()
    r = nisa.register_alloc()
    t = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=lo_in)
    nisa.register_load(r, t)

    def body(i):
        assert isinstance(i, nisa.VirtualRegister)
        copy_row(data, output, i)

    nl.fori_loop(r, N, body)
    return output


def test_fori_loop_with_a_register_lower_bound_gives_the_body_a_register():
    with pytest.warns(DeprecationWarning):
        out = nki.simulate(register_lower)(DATA, np.array([[3]], np.int32))
    np.testing.assert_array_equal(out[0], np.where(np.arange(N) >= 3, DATA[0], 0))


@nki.jit
def unrolled(data):
    output = zeroed_output()

    def body(i):
        assert isinstance(i, nisa.NkiScalar)
        copy_row(data, output, i)

    nl.fori_loop(1, N, body, step=2, unroll=True)
    return output


def test_unrolled_fori_loop_runs_like_fori_loop_and_is_marked():
    out = nki.simulate(unrolled)(DATA)
    np.testing.assert_array_equal(out[0], np.where(np.arange(N) % 2 == 1, DATA[0], 0))
    text = unrolled.trace(None, (DATA,), {}).ir.text(False)
    assert text.count("for ") == 1 and "unroll" in text
    assert text.count("load[dma](data") == 1  # the body once, not per trip


# if_else and while_loop ---------------------------------------------------------------

def fill(out, value):
    t = nl.ndarray((1, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.memset(dst=t, value=value)
    nisa.dma_copy(dst=out, src=t)


@nki.jit
def device_branch(flag_in):
    out = nl.ndarray((1, 2), dtype=nl.float32, buffer=nl.shared_hbm)
    flag = load(flag_in)
    nl.if_else(flag > 0, lambda: fill(out[0:1, 0:1], 1.0), lambda: fill(out[0:1, 0:1], 2.0))
    nl.if_else(flag, lambda: fill(out[0:1, 1:2], 3.0), lambda: fill(out[0:1, 1:2], 4.0))
    return out


@pytest.mark.parametrize("flag, expected", [(5, [1.0, 3.0]), (0, [2.0, 4.0]), (-3, [2.0, 3.0])])
def test_if_else_on_a_scalar_runs_the_chosen_branch(flag, expected):
    out = nki.simulate(device_branch)(np.array([[flag]], np.int32))
    assert out[0].tolist() == expected


def test_a_device_if_else_traces_both_branches_as_marked_loops():
    text = device_branch.trace(None, (np.array([[1]], np.int32),), {}).ir.text(False)
    assert text.count("if_else=then") == 2 and text.count("if_else=else") == 2
    assert "; not_equal 0)" in text and "; equal 0)" in text  # each branch's 0/1 trip count


@nki.jit
def traced_branch(x, choose):
    out = nl.ndarray((1, 1), dtype=nl.float32, buffer=nl.shared_hbm)

    def then_fn():
        fill(out, 1.0)

    def else_fn():
        fill(out, 2.0)
        nisa.memset(dst=nl.ndarray((1, 1), dtype=nl.float32, buffer=nl.sbuf), value=7.0)

    nl.if_else(choose, then_fn, else_fn)
    return out


@pytest.mark.parametrize("choose, expected, memsets", [(True, 1.0, 1), (0, 2.0, 2)])
def test_if_else_on_a_python_value_traces_one_branch(choose, expected, memsets):
    x = np.zeros((1, 1), np.float32)
    assert nki.simulate(traced_branch)(x, choose).tolist() == [[expected]]
    text = traced_branch.trace(None, (x, choose), {}).ir.text(False)
    assert text.count("memset[") == memsets and "for " not in text


@nki.jit
def scalar_while(data, count_in):
    val = nl.ndarray((1, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=val, src=data)
    acc = nl.zeros((1, 1), dtype=nl.float32, buffer=nl.sbuf)

    def body(c):
        assert isinstance(c, nisa.NkiScalar)
        nisa.tensor_tensor(dst=acc, data1=acc, data2=val, op=nl.add)
        return c - 1

    nl.while_loop(load(count_in), body)
    out = nl.ndarray((1, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=acc)
    return out


@pytest.mark.parametrize("count", [0, 1, 4])
def test_while_loop_on_a_scalar_is_tested_before_each_trip(count):
    out = nki.simulate(scalar_while)(np.array([[2.5]], np.float32), np.array([[count]], np.int32))
    assert out.tolist() == [[2.5 * count]]


# Scalar offsets -----------------------------------------------------------------------

@nki.jit
def hbm_row(table, which):
    """table[which] with an int64 scalar offset straight from HBM."""
    w = nisa.scalar_load(which)
    t = nl.ndarray((1, 8), dtype=table.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=table.ap([[8, 1], [1, 8]], offset=0, scalar_offset=w * 1, indirect_dim=0))
    out = nl.ndarray((1, 8), dtype=table.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=t)
    return out


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_scalar_offset_on_hbm_takes_int32_and_int64_scalars(dtype):
    table = np.arange(32, dtype=np.float32).reshape(4, 8)
    for row in (0, 3):
        np.testing.assert_array_equal(nki.simulate(hbm_row)(table, np.array([[row]], dtype)), table[row:row + 1])


@nki.jit
def sbuf_column(data, col_in):
    sb = nl.ndarray((1, N), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=sb, src=data)
    one = nl.ndarray((1, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=one, src=sb.ap([[N, 1], [1, 1]], offset=0, scalar_offset=load(col_in) + 1, indirect_dim=1))
    out = nl.ndarray((1, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=one)
    return out


def test_scalar_offset_on_sbuf_takes_an_int32_scalar():
    assert nki.simulate(sbuf_column)(DATA, np.array([[4]], np.int32)).tolist() == [[DATA[0, 5]]]


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
        assert text == (f"[warn_register_api_deprecated] nisa.{api} is deprecated since nki 0.8 and will be "
                        "removed: use nisa.scalar_load, nisa.scalar_store and NkiScalar arithmetic")


@nki.jit
def construct_register(a):
    nisa.VirtualRegister(h32())  # ERR:construct
    return a


def test_constructing_a_virtual_register_is_deprecated():
    with pytest.warns(DeprecationWarning, match="nisa.VirtualRegister is deprecated since nki 0.8") as record:
        construct_register.trace(None, (np.zeros((1, 1), np.float32),), {})
    assert any(M.same_file(w.filename) and w.lineno == M.line("construct") for w in record)


@nki.jit
def select_row(table, which):
    """table.select(0, s): a row of a (4, 1, 8) table picked by a scalar."""
    t = nl.ndarray((1, 8), dtype=table.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=table.select(0, load(which)))
    out = nl.ndarray((1, 8), dtype=table.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=t)
    return out


def test_select_takes_a_scalar_index():
    table = np.arange(32, dtype=np.float32).reshape(4, 1, 8)
    np.testing.assert_array_equal(nki.simulate(select_row)(table, np.array([[2]], np.int32)), table[2])
