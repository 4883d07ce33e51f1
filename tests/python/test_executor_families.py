"""One kernel per simulator executor family of the instruction table (Move, Elementwise,
Reduce, Matmul, Row, Mx, Side, Collective, Shuffle, Ranks, Scalar), each checked against numpy. This file
is the part of the sanitizer slice that `.ci/run` runs under AddressSanitizer: a test here
fails when the table gains an executor family that no kernel of this file reaches."""
import numpy as np
import pytest

import _nkic
import nki
import nki.collectives as ncc
import nki.isa as nisa
import nki.language as nl
import neuronxcc.nki as legacy
import neuronxcc.nki.language as lnl

from mx_reference import quantize_ref, scale_rows, unpack
from nki_current_util import loaded, quantize_e4m3fn, sbuf, stored

RNG = np.random.default_rng(11)
X = RNG.uniform(-2, 2, (128, 64)).astype(np.float32)
Y = RNG.uniform(-2, 2, (128, 64)).astype(np.float32)


@pytest.fixture(autouse=True)
def _default_target(monkeypatch):
    monkeypatch.delenv("NEURON_PLATFORM_TARGET_OVERRIDE", raising=False)


@nki.jit
def move(a):
    t = loaded(a)
    c = sbuf(a.shape, nl.bfloat16)
    nisa.tensor_copy(dst=c, src=t)
    return stored(c, nl.float32)


@nki.jit
def elementwise(a, b):
    x, y = loaded(a), loaded(b)
    s, f, i = sbuf(a.shape), sbuf(a.shape), sbuf((a.shape[0], 1), nl.int32)
    nisa.tensor_tensor(dst=s, data1=x, data2=y, op=nl.multiply)
    nisa.memset(dst=f, value=0.5)
    nisa.iota(i, [[0, 1]], offset=3, channel_multiplier=2)
    return stored(s), stored(f), stored(i)


@nki.jit
def reduce(a):
    s = sbuf((a.shape[0], 1))
    nisa.tensor_reduce(dst=s, op=nl.maximum, data=loaded(a), axis=(1,))
    return stored(s)


@nki.jit
def matmul(a, b):
    acc = nl.ndarray((a.shape[1], b.shape[1]), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(acc, loaded(a), loaded(b))
    out = sbuf(acc.shape)
    nisa.tensor_copy(dst=out, src=acc)
    return stored(out)


@nki.jit
def row(a):
    m = sbuf((a.shape[0], 8))
    nisa.max8(dst=m, src=loaded(a))
    return stored(m)


@nki.jit
def side(a):
    d = sbuf(a.shape)
    nisa.dropout(dst=d, data=loaded(a), prob=0.0)
    return stored(d)


@legacy.jit
def collective(x):
    out = lnl.ndarray(x.shape, dtype=x.dtype, buffer=lnl.shared_hbm)
    pid = lnl.program_id(0)
    lnl.store(out[pid], value=lnl.all_reduce(lnl.load(x[pid]), op=np.add, program_axes=[0]))
    return out


@nki.jit
def shuffle(a):
    t = loaded(a)
    nisa.nc_stream_shuffle(dst=t, src=t, shuffle_mask=list(range(31, -1, -1)))
    return stored(t)


@nki.jit
def ranks(a):
    """Each rank's `a` summed over two ranks (nki.multi_rank_simulate runs them on threads)."""
    src = nl.ndarray(a.shape, a.dtype, buffer=nl.private_hbm)
    nisa.dma_copy(dst=src, src=a)
    res = nl.ndarray(a.shape, a.dtype, buffer=nl.private_hbm)
    ncc.all_reduce(srcs=[src], dsts=[res], replica_group=ncc.ReplicaGroup([[0, 1]]), op=nl.add)
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=res)
    return out


@nki.jit
def scalar(n, w):
    """int32 wrap-around and exact int64, from SBUF and HBM."""
    t = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=n)
    s = nisa.scalar_load(t)
    out = nl.ndarray((1, 2), dtype=nl.int32, buffer=nl.shared_hbm)
    nisa.scalar_store(out[0:1, 0:1], s * s)
    nisa.scalar_store(out[0:1, 1:2], nisa.scalar_alu(-s, 4, op=nl.divide))
    wide = nl.ndarray((1, 1), dtype=nl.int64, buffer=nl.shared_hbm)
    nisa.scalar_store(wide, nisa.scalar_load(w) * 3 + 1)
    return out, wide


def _bf16(x):
    return x.astype(nl.bfloat16).astype(np.float32)


MXSRC = (RNG.standard_normal((32, 64)) * 3).astype(nl.bfloat16)
GROUPS = RNG.integers(-8, 8, (2, 128, 16)).astype(np.float32)

# executor family -> (kernel, grid, inputs, the expected outputs as a function of the outputs)
CASES = {
    "Move": (move, None, (X,), lambda out: np.testing.assert_array_equal(out, _bf16(X))),
    "Elementwise": (elementwise, None, (X, Y), lambda out: (
        np.testing.assert_array_equal(out[0], X * Y),
        np.testing.assert_array_equal(out[1], np.full_like(X, 0.5)),
        np.testing.assert_array_equal(out[2][:, 0], 3 + 2 * np.arange(128)))),
    "Reduce": (reduce, None, (X,), lambda out: np.testing.assert_array_equal(out[:, 0], X.max(axis=1))),
    "Matmul": (matmul, None, (X[:, :32], Y), lambda out: np.testing.assert_allclose(
        out, X[:, :32].T @ Y, rtol=1e-5, atol=1e-5)),
    "Row": (row, None, (X,), lambda out: np.testing.assert_array_equal(out, -np.sort(-X, axis=1)[:, :8])),
    "Mx": (quantize_e4m3fn, None, (MXSRC,), lambda out: _check_mx(*out)),
    "Side": (side, None, (X,), lambda out: np.testing.assert_array_equal(out, X)),
    "Collective": (collective, 2, (GROUPS,), lambda out: np.testing.assert_array_equal(
        out, np.broadcast_to(GROUPS.sum(0), GROUPS.shape))),
    "Shuffle": (shuffle, None, (X,), lambda out: np.testing.assert_array_equal(
        out, np.concatenate([X[32 * q:32 * q + 32][::-1] for q in range(4)]))),
    "Scalar": (scalar, None, (np.array([[65537]], np.int32), np.array([[2**40 + 7]], np.int64)), lambda out: (
        np.testing.assert_array_equal(out[0], [[(65537 * 65537 + 2**31) % 2**32 - 2**31, -16384]]),
        np.testing.assert_array_equal(out[1], [[3 * (2**40 + 7) + 1]]))),
    # inputs: one per rank
    "Ranks": (ranks, None, (X, Y), lambda outs: [np.testing.assert_array_equal(o, X + Y) for o in outs]),
}


def _check_mx(data, scale):
    codes, scales = quantize_ref("float8_e4m3fn_x4", MXSRC.astype(np.float32))
    np.testing.assert_array_equal(unpack("float8_e4m3fn_x4", data), codes)
    rows = scale_rows(scales)
    for r in range(MXSRC.shape[0]):
        np.testing.assert_array_equal(scale[r], rows.get(r, np.zeros(16)), err_msg=f"scale row {r}")


def _executors(kernel, grid, inputs):
    """The executor families of the instructions `kernel` traces to."""
    table = {row["name"]: row["exec"] for row in _nkic.instruction_table()}
    ir = kernel.trace(grid, inputs, {}).ir
    return {table[name] for name, _engine in ir.instruction_engines()}


def test_every_executor_family_of_the_table_has_a_kernel_here():
    assert {row["exec"] for row in _nkic.instruction_table()} == set(CASES)


@pytest.mark.parametrize("family", sorted(CASES))
def test_executor_family_runs_against_numpy(family, monkeypatch):
    if family == "Mx":  # nisa.quantize_mx is NeuronCore-v4's: trn3, not the default target
        monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn3")
    kernel, grid, inputs, check = CASES[family]
    if family == "Ranks":
        assert family in _executors(kernel, grid, inputs[:1])
        return check(nki.multi_rank_simulate(kernel, world_size=2, per_rank_inputs=[((x,), {}) for x in inputs]))
    assert family in _executors(kernel, grid, inputs)
    check(legacy.simulate_kernel(kernel[grid], *inputs) if grid else nki.simulate(kernel)(*inputs))
