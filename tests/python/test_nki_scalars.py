"""Device scalars and control flow of nki 0.7/0.8 (NKI_07_08_API.md §2, §3):
NkiScalar arithmetic (int32 wrap-around, exact int64), nisa.scalar_load/scalar_store/
scalar_alu, scalars as loop bounds, if_else and while_loop conditions, .ap(scalar_offset=)
and select indices, each simulated against Python's own integers. Their misuses and the
register deprecations: test_nki_scalar_errors.py."""
import numpy as np
import pytest

import nki
import nki.isa as nisa
import nki.language as nl
import nkic

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
def running_total(n_in, lo_in):
    """State carried through SBUF across the trips of a scalar-bounded loop: a tile and a sum."""
    acc = nl.zeros((128, 64), nl.float32, buffer=nl.sbuf)
    total = nl.ndarray((1, 1), nl.int32, buffer=nl.sbuf)
    nisa.memset(dst=total, value=0)

    def body(i):
        nisa.tensor_scalar(dst=acc, data=acc, op0=nl.add, operand0=1.0)
        nisa.scalar_store(total, nisa.scalar_load(total) + i)

    nl.fori_loop(load(lo_in), load(n_in), body)
    out = nl.ndarray((128, 64), nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=acc)
    t = nl.ndarray((1, 1), nl.int32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=t, src=total)
    return out, t


def test_a_long_scalar_bounded_loop_carries_state_through_sbuf_in_order():
    out, total = nki.simulate(running_total)(np.array([[2000]], np.int32), np.array([[7]], np.int32))
    assert (out == 1993).all() and total.tolist() == [[sum(range(7, 2000))]]


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


def test_numpy_int64_numbers_stay_weak_scalars_of_tile_arithmetic():
    """int64 is a scalar's width: a numpy int64 number in tile arithmetic takes the tile's dtype."""
    from neuronxcc import nki as legacy
    import neuronxcc.nki.language as lnl

    @legacy.jit
    def legacy_add(x):
        out = lnl.ndarray(x.shape, dtype=x.dtype, buffer=lnl.shared_hbm)
        lnl.store(out, value=lnl.load(x) + np.int64(2))
        return out

    @nki.jit
    def current_add(x):
        t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x)
        nisa.tensor_scalar(dst=t, data=t, op0=nl.add, operand0=np.int64(2))
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=t)
        return out

    out = legacy_add(np.ones((4, 4), np.float32))
    assert out.dtype == np.float32 and (out == 3).all()
    out = nki.simulate(current_add)(np.ones((4, 4), np.int32))
    assert out.dtype == np.int32 and (out == 3).all()
