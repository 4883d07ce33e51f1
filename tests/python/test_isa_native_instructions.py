"""tensor_copy_predicated, dropout and nc_stream_shuffle are one instruction each, built
and checked in C++: the same numbers as the compositions of nl instructions they
replace (dropout: the draws of nl.rand under the same seed), one line of IR each, and
their rules (scalar src, reverse_pred, free-element splits, PSUM inputs, the shuffle
mask) as diagnostics at the user's line."""
import numpy as np
import pytest

from neuronxcc import nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

from nki_test_util import Markers, check_diag, simulate, trace_error, trace_ir

M = Markers(__file__)
RNG = np.random.default_rng(7)
X = RNG.random((128, 64), np.float32)
PRED = (RNG.random((128, 64)) > 0.5).astype(np.uint8)


def instructions(ir, name):
    return [l for l in ir.splitlines() if f"= {name}[" in l]


def copy_predicated(x, p):
    out = nl.ndarray((3, 128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
    t, pred = nl.load(x), nl.load(p)
    d = nl.full((128, 64), 2.5, dtype=nl.float32)
    nisa.tensor_copy_predicated(src=t, dst=d, predicate=pred)
    nl.store(out[0], value=d)
    r = nl.full((128, 64), -1.0, dtype=nl.float32)
    nisa.tensor_copy_predicated(src=t, dst=r, predicate=pred, reverse_pred=True)
    nl.store(out[1], value=r)
    s = nl.full((128, 64), 4.0, dtype=nl.float32)
    nisa.tensor_copy_predicated(src=-3.0, dst=s, predicate=pred)
    nl.store(out[2], value=s)
    return out


def test_copy_predicated_is_one_instruction_per_call():
    ir = trace_ir(copy_predicated, X, PRED)
    lines = instructions(ir, "tensor_copy_predicated")
    assert len(lines) == 3 and all("[dve]" in l for l in lines), ir
    assert not instructions(ir, "select") and len(instructions(ir, "memset")) == 3, ir
    assert "reverse_pred" in lines[1] and "reverse_pred" not in lines[0]


def test_copy_predicated_writes_where_the_predicate_holds():
    got = simulate(copy_predicated, X, PRED)
    keep = PRED != 0
    np.testing.assert_array_equal(got[0], np.where(keep, X, 2.5))
    np.testing.assert_array_equal(got[1], np.where(keep, -1.0, X))
    np.testing.assert_array_equal(got[2], np.where(keep, -3.0, 4.0))


def copy_predicated_int(p):
    out = nl.ndarray((128, 64), dtype=nl.int32, buffer=nl.shared_hbm)
    d = nl.full((128, 64), 7, dtype=nl.int32)
    i = nl.arange(64)[None, :]
    nisa.tensor_copy_predicated(src=-2.7, dst=d, predicate=nl.load(p), mask=(i < 40))
    nl.store(out, value=d)
    return out


def test_copy_predicated_scalar_lands_as_memset_stores_it():
    # An int32 dst truncates the number toward zero; outside the mask dst is unchanged.
    got = simulate(copy_predicated_int, PRED)
    cols = np.arange(64)[None, :] < 40
    np.testing.assert_array_equal(got, np.where((PRED != 0) & cols, -2, 7))


def copy_predicated_split(x, p):
    out = nl.ndarray((128, 2, 32), dtype=nl.float32, buffer=nl.shared_hbm)
    d = nl.zeros((128, 2, 32), dtype=nl.float32)
    nisa.tensor_copy_predicated(src=nl.load(x), dst=d, predicate=nl.load(p))
    nl.store(out, value=d)
    return out


def test_copy_predicated_reads_free_elements_flat():
    got = simulate(copy_predicated_split, X, PRED)
    np.testing.assert_array_equal(got, np.where(PRED != 0, X, 0.0).reshape(128, 2, 32))


def copy_predicated_two_psum(x):
    t = nl.load(x)
    src = nl.ndarray(t.shape, dtype=nl.float32, buffer=nl.psum)
    src[...] = t
    pred = nl.ndarray(t.shape, dtype=nl.float32, buffer=nl.psum)
    pred[...] = t
    d = nl.zeros((128, 64), dtype=nl.float32)
    nisa.tensor_copy_predicated(src=src, dst=d, predicate=pred)  # ERR:two_psum
    return d


def copy_predicated_none(x):
    d = nl.zeros((128, 64), dtype=nl.float32)
    nisa.tensor_copy_predicated(src=None, dst=d, predicate=nl.load(x))  # ERR:none_src
    return d


def test_copy_predicated_rules_are_diagnostics():
    e = trace_error(copy_predicated_two_psum, X)
    check_diag(e, M, "err_unsupported_memory", "Expected operand 'src' of 'tensor_copy_predicated' to be in address "
               "space 'sbuf', but got a tile in 'psum' instead.", [("two_psum", "nisa.")],
               api="nisa.tensor_copy_predicated")
    assert e.message == ("Expected operand 'src' of 'tensor_copy_predicated' to be in address space 'sbuf', but got "
                         "a tile in 'psum' instead.")
    e = trace_error(copy_predicated_none, X)
    check_diag(e, M, "err_operand_cannot_be_none", "operand 'src' cannot be None", [("none_src", "nisa.")],
               api="nisa.tensor_copy_predicated")
    assert e.message == "operand 'src' cannot be None"


def dropout_native(x, r):
    out = nl.ndarray((4, 128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(x)
    nl.random_seed(11)
    nl.store(out[0], value=nl.dropout(t, 0.3))
    nl.store(out[1], value=nisa.dropout(t, nl.load(r)))
    i = nl.arange(64)[None, :]
    m = nl.zeros((128, 64), dtype=nl.float32)
    m[...] = nl.dropout(t, 0.5, mask=(i < 20))
    nl.store(out[2], value=m)
    nl.store(out[3], value=nl.dropout(t, 0.75, dtype=nl.bfloat16))
    return out


def dropout_composed(x, r):
    """The same calls written as nl.rand, greater_equal and where (the former lowering)."""
    out = nl.ndarray((4, 128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(x)
    nl.random_seed(11)
    for k, rate in ((0, 0.3), (1, nl.load(r))):
        keep = nl.greater_equal(nl.rand((128, 64), dtype=nl.float32), rate, dtype=nl.uint8)
        nl.store(out[k], value=nl.where(keep, t, 0.0))
    i = nl.arange(64)[None, :]
    keep = nl.greater_equal(nl.rand((128, 64), dtype=nl.float32), 0.5, dtype=nl.uint8, mask=(i < 20))
    m = nl.zeros((128, 64), dtype=nl.float32)
    m[...] = nl.where(keep, t, 0.0, mask=(i < 20))
    nl.store(out[2], value=m)
    keep = nl.greater_equal(nl.rand((128, 64), dtype=nl.float32), 0.75, dtype=nl.uint8)
    nl.store(out[3], value=nl.where(keep, t, 0.0, dtype=nl.bfloat16))
    return out


def test_dropout_takes_the_draws_of_nl_rand():
    r = RNG.random((128, 1), np.float32)
    got, want = simulate(dropout_native, X, r), simulate(dropout_composed, X, r)
    np.testing.assert_array_equal(got, want)
    assert 0 < np.count_nonzero(got[0] == 0) < got[0].size
    assert np.all(got[2][:, 20:] == 0)


def test_dropout_is_one_instruction():
    ir = trace_ir(dropout_native, X, RNG.random((128, 1), np.float32))
    lines = instructions(ir, "dropout")
    assert len(lines) == 4 and all("[dve]" in l for l in lines), ir
    assert not instructions(ir, "rand") and not instructions(ir, "select"), ir


def dropout_bad_prob(x):
    return nl.dropout(nl.load(x), "half")  # ERR:bad_prob


def test_dropout_prob_is_a_number_or_a_tile():
    e = trace_error(dropout_bad_prob, X)
    check_diag(e, M, "err_unexpected_type_of_operand", "unexpected type of operand 'prob': got 'str'",
               [("bad_prob", "nl.")], api="nl.dropout")
    assert e.message == "unexpected type of operand 'prob': got 'str'"


def shuffle(x):
    out = nl.ndarray((96, 64), dtype=nl.bfloat16, buffer=nl.shared_hbm)
    d = nl.full((96, 2, 32), -1.0, dtype=nl.bfloat16)
    nisa.nc_stream_shuffle(src=nl.load(x[0:40]), dst=d, shuffle_mask=[(i * 7) % 32 if i % 5 else 255
                                                                      for i in range(32)])
    nl.store(out, value=d.reshape((96, 64)))
    return out


def test_stream_shuffle_is_one_instruction_over_partitions_of_both():
    ir = trace_ir(shuffle, X)
    lines = instructions(ir, "nc_stream_shuffle")
    assert len(lines) == 1 and "[dve]" in lines[0] and "widths=[96, 40]" in lines[0], ir
    got = simulate(shuffle, X)
    want = np.full((96, 64), -1.0, np.float32)
    mask = [(i * 7) % 32 if i % 5 else 255 for i in range(32)]
    for q in (0, 32, 64):
        for i, s in enumerate(mask):
            if s != 255 and q + s < 40:
                want[q + i] = X[q + s].astype(nl.bfloat16).astype(np.float32)
    np.testing.assert_array_equal(got.astype(np.float32), want)


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_stream_shuffle_moves_rows_exactly(dtype):
    data = (RNG.random((64, 64)) * 2**30).astype(dtype)

    @nki.jit
    def reverse(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        t = nl.load(x)
        nisa.nc_stream_shuffle(src=t, dst=t, shuffle_mask=list(range(31, -1, -1)))
        nl.store(out, value=t)
        return out

    np.testing.assert_array_equal(simulate(reverse, data), np.concatenate([data[31::-1], data[63:31:-1]]))
