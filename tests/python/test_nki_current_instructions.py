"""The current API's accumulator, selection and random instructions (NKI_CURRENT_API.md
§6.5-6.7): nisa.exponential, activate2, tensor_scalar_cumulative, topk,
nonzero_with_count and the XORWOW family (rng, rand2, set_rng_seed, rand_set_state,
rand_get_state), each run on the simulator against numpy, with its legality rules
and its NeuronCore gating."""
import numpy as np
import pytest

import nki
import nki.isa as nisa
import nki.language as nl
from nki_test_util import Markers, check_diag, trace_error, trace_ir

M = Markers(__file__)
RNG = np.random.default_rng(7)


@pytest.fixture(autouse=True)
def _trn3(monkeypatch):
    monkeypatch.delenv("NEURON_PLATFORM_TARGET_OVERRIDE", raising=False)


def sbuf(shape, dtype=nl.float32):
    return nl.ndarray(shape, dtype, buffer=nl.sbuf)


def hbm(shape, dtype=nl.float32):
    return nl.ndarray(shape, dtype, buffer=nl.shared_hbm)


def loaded(a, dtype=None):
    t = sbuf(a.shape, dtype or a.dtype)
    nisa.dma_copy(dst=t, src=a)
    return t


def stored(t, dtype=None):
    o = hbm(t.shape, dtype or t.dtype)
    nisa.dma_copy(dst=o, src=t)
    return o


# nisa.exponential
@nki.jit
def exp_with_sum(a, m):
    x, mx = loaded(a), loaded(m)
    y, s = sbuf(a.shape), sbuf((a.shape[0], 1))
    nisa.exponential(dst=y, src=x, max_value=mx, reduce_res=s, reduce_cmd=nisa.reduce_cmd.reset_reduce)
    return stored(y), stored(s)


@nki.jit
def exp_chained(a):
    x = loaded(a)
    y, z, s = sbuf(a.shape), sbuf(a.shape, nl.float16), sbuf((a.shape[0], 1))
    nisa.exponential(dst=y, src=x, max_value=1.5, reduce_cmd=nisa.reduce_cmd.reset_reduce)
    nisa.exponential(dst=z, src=x, reduce_res=s, reduce_cmd=nisa.reduce_cmd.reduce)
    return stored(y), stored(z), stored(s)


@nki.jit
def exp_load_reduce(a):
    x = loaded(a)
    y, s = sbuf(a.shape), sbuf((a.shape[0], 1))
    nisa.exponential(dst=y, src=x, reduce_res=s, reduce_cmd=nisa.reduce_cmd.load_reduce, reduce_init=5.0)
    return stored(s)


def test_exponential_subtracts_the_max_and_sums():
    a = RNG.uniform(-2, 2, (128, 64)).astype(np.float32)
    m = a.max(axis=1, keepdims=True)
    y, s = nki.simulate(exp_with_sum)(a, m)
    ref = np.exp(a - m)
    np.testing.assert_allclose(y, ref, rtol=1e-6)
    np.testing.assert_allclose(s, ref.sum(axis=1, keepdims=True), rtol=1e-5)


def test_exponential_chains_through_the_accumulator():
    a = RNG.uniform(-2, 2, (64, 32)).astype(np.float32)
    y, z, s = nki.simulate(exp_chained)(a)
    np.testing.assert_allclose(y, np.exp(a - 1.5), rtol=1e-6)
    # The result is rounded once into dst's dtype; the fold reads the stored values.
    assert z.dtype == np.float16
    np.testing.assert_array_equal(z, np.exp(a).astype(np.float16))
    expect = np.exp(a - 1.5).sum(axis=1) + z.astype(np.float32).sum(axis=1)
    np.testing.assert_allclose(s[:, 0], expect, rtol=1e-5)


def test_exponential_load_reduce_starts_from_reduce_init():
    a = RNG.uniform(-1, 1, (32, 16)).astype(np.float32)
    (s,) = [nki.simulate(exp_load_reduce)(a)]
    np.testing.assert_allclose(s[:, 0], 5.0 + np.exp(a).sum(axis=1), rtol=1e-5)
    ir = trace_ir(exp_load_reduce, a)
    assert "exponential[dve]" in ir and "load_reduce add from 5" in ir


# nisa.activate2
@nki.jit
def act2_scale_bias(a):
    x = loaded(a)
    y, r = sbuf(a.shape), sbuf((a.shape[0], 1))
    nisa.activate2(dst=y, op=nl.tanh, data=x, imm0=2.0, imm1=0.5, op0=nl.multiply, op1=nl.add,
                   reduce_op=nl.maximum, reduce_res=r, reduce_cmd=nisa.reduce_cmd.reset_reduce)
    return stored(y), stored(r)


@nki.jit
def act2_tiles(a, s, b):
    x, st, bt = loaded(a), loaded(s), loaded(b)
    y, z = sbuf(a.shape), sbuf(a.shape)
    nisa.activate2(dst=y, op=nl.exp, data=x, imm0=st, imm1=bt, op0=nl.multiply, op1=nl.subtract, reverse1=True)
    nisa.activate2(dst=z, op=nl.copy, data=x, imm0=st, imm1=0.0, op0=nl.subtract, op1=nl.bypass, reverse0=True)
    return stored(y), stored(z)


def test_activate2_scale_bias_then_function_with_max_reduce():
    a = RNG.uniform(-1, 1, (128, 48)).astype(np.float32)
    y, r = nki.simulate(act2_scale_bias)(a)
    ref = np.tanh(a * np.float32(2.0) + np.float32(0.5))
    np.testing.assert_allclose(y, ref, rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(r[:, 0], y.max(axis=1))
    assert "activate2[act]" in trace_ir(act2_scale_bias, a)


def test_activate2_tile_immediates_and_reversed_stages():
    a = RNG.uniform(-1, 1, (64, 20)).astype(np.float32)
    s = RNG.uniform(0.5, 1.5, (64, 1)).astype(np.float32)
    b = RNG.uniform(-1, 1, (64, 1)).astype(np.float32)
    y, z = nki.simulate(act2_tiles)(a, s, b)
    np.testing.assert_allclose(y, np.exp(b - a * s), rtol=1e-6)
    np.testing.assert_array_equal(z, s - a)


# nisa.tensor_scalar_cumulative
@nki.jit
def cumulative(a, v):
    x, vt = loaded(a), loaded(v)
    c1, c2, c3, c4 = sbuf(a.shape), sbuf(a.shape), sbuf(a.shape), sbuf(a.shape)
    nisa.tensor_scalar_cumulative(dst=c1, src=x, op0=nl.multiply, op1=nl.add, imm0=2.0)
    nisa.tensor_scalar_cumulative(dst=c2, src=x, op0=nl.add, op1=nl.add, imm0=vt, reduce_cmd=nisa.reduce_cmd.reduce)
    nisa.tensor_scalar_cumulative(dst=c3, src=x, op0=nl.multiply, op1=nl.maximum, imm0=1.0, imm1=10.0,
                                  reduce_cmd=nisa.reduce_cmd.load_reduce)
    nisa.tensor_scalar_cumulative(dst=c4, src=x, op0=nl.subtract, op1=nl.subtract, imm0=vt)
    c5 = sbuf(a.shape)
    nisa.tensor_scalar_cumulative(dst=c5, src=x, op0=nl.add, op1=nl.minimum, imm0=vt, imm1=vt,
                                  reduce_cmd=nisa.reduce_cmd.load_reduce)
    return stored(c1), stored(c2), stored(c3), stored(c4), stored(c5)


def scan(values, op, start):
    out, reg = [], np.float32(start)
    for t in values:
        reg = np.float32(op(np.float32(t), reg))
        out.append(reg)
    return np.array(out, np.float32)


def test_tensor_scalar_cumulative_scans_and_carries_the_accumulator():
    a = RNG.uniform(-3, 3, (32, 24)).astype(np.float32)
    v = RNG.uniform(-1, 1, (32, 1)).astype(np.float32)
    c1, c2, c3, c4, c5 = nki.simulate(cumulative)(a, v)
    for p in range(32):
        r1 = scan(a[p] * np.float32(2), np.add, 0.0)
        np.testing.assert_array_equal(c1[p], r1)
        np.testing.assert_array_equal(c2[p], scan(a[p] + v[p, 0], np.add, r1[-1]))  # reduce: from c1's last
        np.testing.assert_array_equal(c3[p], scan(a[p], np.maximum, 10.0))
        # reg = op1(op0(x, imm0), reg), operands in the stub's order.
        np.testing.assert_array_equal(c4[p], scan(a[p] - v[p, 0], np.subtract, 0.0))
        np.testing.assert_array_equal(c5[p], scan(a[p] + v[p, 0], np.minimum, v[p, 0]))  # from a tile imm1
    ir = trace_ir(cumulative, a, v)
    assert "= tensor_scalar_cumulative[dve](t.1[i0, i1]; multiply 2; reset_reduce add) iter=[32, 24]" in ir, ir
    assert "; add; load_reduce minimum from t.3[i0, 0]) iter=[32, 24]" in ir, ir


@nki.jit
def cumulative_reverse0(a):
    x = loaded(a)
    nisa.tensor_scalar_cumulative(dst=x, src=x, op0=nl.add, op1=nl.add, imm0=1.0, reverse0=True)  # ERR:cum_rev
    return a


def test_tensor_scalar_cumulative_takes_no_reverse0():
    """§13 #14: the stub's pseudo-code reads reverse0, its signature has none; the signature wins."""
    check_diag(trace_error(cumulative_reverse0, X), M, "err_unsupported_args",
               "unsupported arguments to 'nisa.tensor_scalar_cumulative': unexpected keyword argument 'reverse0'",
               [("cum_rev", "nisa.")])


# nisa.topk
@nki.jit
def topk_kernel(a, n, k):
    src = loaded(a, nl.bfloat16)
    vals, idx = sbuf((a.shape[0], k), nl.bfloat16), sbuf((a.shape[0], k), nl.uint32)
    nisa.topk(val_dst=vals, idx_dst=idx, src=src, n=n)
    return stored(vals, nl.float32), stored(idx)


def test_topk_reads_each_core_s_16_partition_snake():
    n, k = 42, 8
    # Distinct values exact in bf16: a permutation of small integers per core.
    a = np.zeros((32, 3), np.float32)
    for g in range(2):
        perm = RNG.permutation(48).astype(np.float32) - 20
        a[16 * g:16 * (g + 1)] = perm.reshape(3, 16).T
    vals, idx = nki.simulate(topk_kernel)(a, n, k)
    assert idx.dtype == np.uint32
    for g in range(2):
        snake = a[16 * g:16 * (g + 1)].T.reshape(-1)[:n]   # element e at partition e % 16, column e // 16
        order = np.argsort(-snake, kind="stable")[:k][::-1]
        for p in range(16 * g, 16 * (g + 1)):
            np.testing.assert_array_equal(vals[p], snake[order])
            np.testing.assert_array_equal(idx[p], order.astype(np.uint32))
        assert list(vals[16 * g]) == sorted(vals[16 * g])


# nisa.nonzero_with_count
@nki.jit
def nonzero(a):
    x = loaded(a)
    d = sbuf((a.shape[0], a.shape[1] + 1), nl.int32)
    nisa.memset(dst=d, value=7)
    nisa.nonzero_with_count(dst=d, src=x, index_offset=16, padding_val=-1)
    return stored(d)


def test_nonzero_with_count_on_each_core_s_first_partition():
    a = (RNG.uniform(0, 1, (128, 8)) > 0.6).astype(np.float32)
    a[0] = [0, 1, 1, 0, 0, 1, 0, 0]   # the stub's example
    d = nki.simulate(nonzero)(a)
    np.testing.assert_array_equal(d[0], [17, 18, 21, -1, -1, -1, -1, -1, 3])
    for p in range(128):
        if p % 16:
            assert (d[p] == 7).all()
            continue
        where = np.flatnonzero(a[p])
        np.testing.assert_array_equal(d[p], list(where + 16) + [-1] * (8 - len(where)) + [len(where)])


# The XORWOW family.
def xorwow(state, count):
    """Marsaglia's xorwow over [x0..x4, d], as the instructions' generator."""
    s = [int(w) for w in state[:6]]
    out = []
    for _ in range(count):
        t, first = s[4], s[0]
        s[4], s[3], s[2], s[1] = s[3], s[2], s[1], first
        t ^= t >> 2
        t = (t ^ (t << 1)) & 0xFFFFFFFF
        t ^= first ^ ((first << 4) & 0xFFFFFFFF)
        s[0] = t
        s[5] = (s[5] + 362437) & 0xFFFFFFFF
        out.append((t + s[5]) & 0xFFFFFFFF)
    return np.array(out, np.uint32)


@nki.jit
def rng_bits(seed):
    st = loaded(seed)
    wide, narrow, signed = sbuf((128, 16), nl.uint32), sbuf((128, 16), nl.uint8), sbuf((128, 16), nl.int16)
    nisa.set_rng_seed(src_seeds=st)
    nisa.rng(dst=wide)
    nisa.set_rng_seed(src_seeds=st)
    nisa.rng(dst=narrow)
    nisa.set_rng_seed(src_seeds=st)
    nisa.rng(dst=signed, engine=nisa.engine.vector)
    return stored(wide), stored(narrow), stored(signed)


def test_rng_truncates_the_same_draws_to_the_dtype():
    seed = np.array([[1234]], np.uint32)
    wide, narrow, signed = nki.simulate(rng_bits)(seed)
    np.testing.assert_array_equal(narrow, (wide & 0xFF).astype(np.uint8))
    np.testing.assert_array_equal(signed, (wide & 0xFFFF).astype(np.uint16).view(np.int16))
    assert len({tuple(r) for r in wide}) == 128          # one generator per partition
    again, _, _ = nki.simulate(rng_bits)(seed)
    np.testing.assert_array_equal(wide, again)           # deterministic for a seed
    other, _, _ = nki.simulate(rng_bits)(np.array([[1235]], np.uint32))
    assert (other != wide).mean() > 0.99


@nki.jit
def state_round_trip(words):
    w = loaded(words)
    before, a, b = sbuf((16, 6), nl.uint32), sbuf((16, 10), nl.uint32), sbuf((16, 10), nl.uint32)
    vstate, c = sbuf((16, 24), nl.uint32), sbuf((16, 4), nl.uint32)
    nisa.rand_set_state(src_seeds=w)
    nisa.rand_get_state(dst=before)
    nisa.rng(dst=a, engine=nisa.engine.gpsimd)
    nisa.rand_set_state(src_seeds=before)
    nisa.rng(dst=b, engine=nisa.engine.gpsimd)
    nisa.rand_get_state(dst=vstate, engine=nisa.engine.vector)
    nisa.rand_set_state(src_seeds=vstate, engine=nisa.engine.vector)
    nisa.rng(dst=c)
    return stored(before), stored(a), stored(b)


def test_rand_state_is_xorwow_per_partition():
    words = RNG.integers(1, 2**32, (16, 6), dtype=np.uint64).astype(np.uint32)
    before, a, b = nki.simulate(state_round_trip)(words)
    np.testing.assert_array_equal(before, words)
    np.testing.assert_array_equal(a, b)
    for p in range(16):
        np.testing.assert_array_equal(a[p], xorwow(words[p], 10))


@nki.jit
def rand2_kernel(lo, hi):
    lt, ht = loaded(lo), loaded(hi)
    u, v, w = sbuf((128, 64)), sbuf((128, 64)), sbuf((128, 64), nl.int32)
    nisa.rand2(dst=u, min=-2.0, max=3.0)
    nisa.rand2(dst=v, min=lt, max=ht)
    nisa.rand2(dst=w, min=0.0, max=100.0)
    return stored(u), stored(v), stored(w)


def test_rand2_is_uniform_in_the_range_and_cast_to_dst():
    lo = RNG.uniform(-5, 0, (128, 1)).astype(np.float32)
    hi = lo + RNG.uniform(0.5, 2, (128, 1)).astype(np.float32)
    u, v, w = nki.simulate(rand2_kernel)(lo, hi)
    assert u.min() >= -2.0 and u.max() <= 3.0 and abs(u.mean() - 0.5) < 0.1
    assert ((v >= lo) & (v <= hi)).all()
    assert w.dtype == np.int32 and w.min() >= 0 and w.max() <= 100 and len(np.unique(w)) > 50
    u2, _, _ = nki.simulate(rand2_kernel)(lo, hi)
    np.testing.assert_array_equal(u, u2)


@nki.jit
def every_new_instruction(a):
    x, s = loaded(a), sbuf((128, 1))
    b, st = sbuf((128, 4), nl.bfloat16), sbuf((128, 6), nl.uint32)
    v, i, d = sbuf((128, 8), nl.bfloat16), sbuf((128, 8), nl.uint32), sbuf((128, 65), nl.int32)
    nisa.memset(dst=b, value=1.0)
    nisa.exponential(dst=x, src=x, reduce_res=s, reduce_cmd=nisa.reduce_cmd.reset_reduce)  # PROFILED
    nisa.activate2(dst=x, op=nl.exp, data=x, imm0=2.0, imm1=1.0, op0=nl.multiply, op1=nl.add)  # PROFILED
    nisa.tensor_scalar_cumulative(dst=x, src=x, op0=nl.multiply, op1=nl.add, imm0=0.5)  # PROFILED
    nisa.topk(val_dst=v, idx_dst=i, src=b, n=64)  # PROFILED
    nisa.nonzero_with_count(dst=d, src=x)  # PROFILED
    nisa.rng(dst=st, engine=nisa.engine.gpsimd)  # PROFILED
    nisa.rand_set_state(src_seeds=st)  # PROFILED
    nisa.rand_get_state(dst=st)  # PROFILED
    nisa.rand2(dst=x, min=0.0, max=1.0)  # PROFILED
    return stored(x)


def test_profile_costs_each_new_instruction_by_its_engine():
    import nkic
    result = nkic.profile(every_new_instruction, np.ones((128, 64), np.float32), target="trn3")
    busy = {line: b for f, line, b, _, n in result.lines if M.same_file(f) and n > 0}
    marked = [n for n, text in enumerate(M.lines, 1) if text.endswith("# PROFILED")]
    assert len(marked) == 9 and all(busy.get(n, 0) > 0 for n in marked), (marked, busy)
    assert result.engines["act"].instructions >= 1 and result.engines["pool"].instructions >= 5


# Legality and gating: each a diagnostic at the call's line.
X = np.ones((128, 64), np.float32)


@nki.jit
def exp_reduce_init_unused(a):
    x = loaded(a)
    nisa.exponential(dst=x, src=x, reduce_init=1.0)  # ERR:exp_init
    return a


@nki.jit
def exp_reduce_init_tile(a):
    x = loaded(a)
    nisa.exponential(dst=x, src=x, reduce_cmd=nisa.reduce_cmd.load_reduce, reduce_init=x)  # ERR:exp_init_tile
    return a


@nki.jit
def exp_into_uint32(a):
    x = loaded(a)
    y = sbuf(a.shape, nl.uint32)
    nisa.exponential(dst=y, src=x)  # ERR:exp_dtype
    return a


@nki.jit
def exp_max_value_shape(a):
    x, m = loaded(a), sbuf((128, 4))
    nisa.memset(dst=m, value=0.0)
    nisa.exponential(dst=x, src=x, max_value=m)  # ERR:exp_max
    return a


@nki.jit
def act2_bad_pair(a):
    x = loaded(a)
    nisa.activate2(dst=x, op=nl.exp, data=x, imm0=1.0, imm1=1.0, op0=nl.add, op1=nl.add)  # ERR:act2_pair
    return a


@nki.jit
def act2_reverse_bypass(a):
    x = loaded(a)
    nisa.activate2(dst=x, op=nl.exp, data=x, imm0=1.0, imm1=1.0, op0=nl.add, op1=nl.bypass,  # ERR:act2_rev
                   reverse1=True)
    return a


@nki.jit
def act2_reduce_multiply(a):
    x = loaded(a)
    nisa.activate2(dst=x, op=nl.exp, data=x, imm0=1.0, imm1=1.0, op0=nl.bypass, op1=nl.bypass,  # ERR:act2_red
                   reduce_op=nl.multiply, reduce_cmd=nisa.reduce_cmd.reset_reduce)
    return a


@nki.jit
def act2_mixed_imm_dtypes(a):
    x = loaded(a)
    s, b = sbuf((128, 1)), sbuf((128, 1), nl.bfloat16)
    nisa.memset(dst=s, value=1.0)
    nisa.memset(dst=b, value=1.0)
    nisa.activate2(dst=x, op=nl.exp, data=x, imm0=s, imm1=b, op0=nl.multiply, op1=nl.add)  # ERR:act2_imm
    return a


@nki.jit
def act2_load_reduce(a):
    x = loaded(a)
    nisa.activate2(dst=x, op=nl.exp, data=x, imm0=1.0, imm1=1.0, op0=nl.bypass, op1=nl.bypass,  # ERR:act2_load
                   reduce_cmd=nisa.reduce_cmd.load_reduce)
    return a


@nki.jit
def act2_relu_param_tile(a):
    x = loaded(a)
    nisa.activate2(dst=x, op=nl.exp, data=x, imm0=1.0, imm1=1.0, op0=nl.bypass, op1=nl.bypass,  # ERR:act2_relu
                   relu_param=x)
    return a


@nki.jit
def cum_divide(a):
    x = loaded(a)
    nisa.tensor_scalar_cumulative(dst=x, src=x, op0=nl.add, op1=nl.divide, imm0=1.0)  # ERR:cum_op1
    return a


@nki.jit
def cum_bitvec_op0(a):
    x = loaded(a)
    nisa.tensor_scalar_cumulative(dst=x, src=x, op0=nl.bitwise_and, op1=nl.add, imm0=1.0)  # ERR:cum_op0
    return a


@nki.jit
def cum_imm1_unused(a):
    x = loaded(a)
    nisa.tensor_scalar_cumulative(dst=x, src=x, op0=nl.add, op1=nl.add, imm0=1.0, imm1=2.0)  # ERR:cum_imm1
    return a


@nki.jit
def cum_load_without_imm1(a):
    x = loaded(a)
    nisa.tensor_scalar_cumulative(dst=x, src=x, op0=nl.add, op1=nl.add, imm0=1.0,  # ERR:cum_load
                                  reduce_cmd=nisa.reduce_cmd.load_reduce)
    return a


@nki.jit
def cum_idle(a):
    x = loaded(a)
    nisa.tensor_scalar_cumulative(dst=x, src=x, op0=nl.add, op1=nl.add, imm0=1.0,  # ERR:cum_idle
                                  reduce_cmd=nisa.reduce_cmd.idle)
    return a


@nki.jit
def cum_int32(a):
    x = sbuf(a.shape, nl.int32)
    nisa.memset(dst=x, value=0)
    nisa.tensor_scalar_cumulative(dst=x, src=x, op0=nl.add, op1=nl.add, imm0=1.0)  # ERR:cum_dtype
    return a


@nki.jit
def topk_small_n(a):
    s = sbuf((16, 4), nl.bfloat16)
    v, i = sbuf((16, 4), nl.bfloat16), sbuf((16, 4), nl.uint32)
    nisa.memset(dst=s, value=0.0)
    nisa.topk(val_dst=v, idx_dst=i, src=s, n=6)  # ERR:topk_n
    return a


@nki.jit
def topk_k_above_n(a):
    s = sbuf((16, 4), nl.bfloat16)
    v, i = sbuf((16, 12), nl.bfloat16), sbuf((16, 12), nl.uint32)
    nisa.memset(dst=s, value=0.0)
    nisa.topk(val_dst=v, idx_dst=i, src=s, n=10)  # ERR:topk_k
    return a


@nki.jit
def topk_partitions(a):
    s = sbuf((8, 4), nl.bfloat16)
    v, i = sbuf((8, 4), nl.bfloat16), sbuf((8, 4), nl.uint32)
    nisa.memset(dst=s, value=0.0)
    nisa.topk(val_dst=v, idx_dst=i, src=s, n=20)  # ERR:topk_p
    return a


@nki.jit
def topk_short_src(a):
    s = sbuf((16, 2), nl.bfloat16)
    v, i = sbuf((16, 4), nl.bfloat16), sbuf((16, 4), nl.uint32)
    nisa.memset(dst=s, value=0.0)
    nisa.topk(val_dst=v, idx_dst=i, src=s, n=40)  # ERR:topk_cols
    return a


@nki.jit
def topk_fp32_src(a):
    s = sbuf((16, 4))
    v, i = sbuf((16, 4), nl.bfloat16), sbuf((16, 4), nl.uint32)
    nisa.memset(dst=s, value=0.0)
    nisa.topk(val_dst=v, idx_dst=i, src=s, n=40)  # ERR:topk_dtype
    return a


@nki.jit
def nonzero_wrong_width(a):
    x = loaded(a)
    d = sbuf((128, 64), nl.int32)
    nisa.nonzero_with_count(dst=d, src=x)  # ERR:nz_width
    return a


@nki.jit
def nonzero_float_dst(a):
    x = loaded(a)
    d = sbuf((128, 65))
    nisa.nonzero_with_count(dst=d, src=x)  # ERR:nz_dtype
    return a


@nki.jit
def rng_float(a):
    x = loaded(a)
    nisa.rng(dst=x)  # ERR:rng_dtype
    return a


@nki.jit
def rng_scalar_engine(a):
    t = sbuf((128, 4), nl.uint32)
    nisa.rng(dst=t, engine=nisa.engine.scalar)  # ERR:rng_engine
    return a


@nki.jit
def rng_gpsimd_psum(a):
    t = nl.ndarray((128, 4), nl.int32, buffer=nl.psum)
    nisa.rng(dst=t, engine=nisa.engine.gpsimd)  # ERR:rng_psum
    return a


@nki.jit
def rand2_empty_range(a):
    x = loaded(a)
    nisa.rand2(dst=x, min=1.0, max=1.0)  # ERR:rand2_range
    return a


@nki.jit
def rand2_mixed_bounds(a):
    x = loaded(a)
    lo = sbuf((128, 1))
    nisa.memset(dst=lo, value=0.0)
    nisa.rand2(dst=x, min=lo, max=1.0)  # ERR:rand2_mixed
    return a


@nki.jit
def seed_shape(a):
    s = sbuf((1, 2), nl.uint32)
    nisa.memset(dst=s, value=0)
    nisa.set_rng_seed(src_seeds=s)  # ERR:seed_shape
    return a


@nki.jit
def state_words(a):
    s = sbuf((16, 24), nl.uint32)
    nisa.memset(dst=s, value=1)
    nisa.rand_set_state(src_seeds=s)  # ERR:state_words
    return a


@nki.jit
def state_vector(a):
    s = sbuf((16, 24), nl.uint32)
    nisa.rand_get_state(dst=s, engine=nisa.engine.vector)  # ERR:state_vector
    return a


CASES = [
    (exp_reduce_init_unused, "exp_init", "err_unsupported_args",
     "unsupported arguments to 'nisa.exponential': reduce_init is read only with reduce_cmd.load_reduce; leave it 0.0"),
    (exp_reduce_init_tile, "exp_init_tile", "err_unsupported_args", "nkic takes reduce_init as a number, not a tile"),
    (exp_into_uint32, "exp_dtype", "err_supported_operand_dtype",
     "operand 'dst' of 'nisa.exponential' has dtype 'uint32', which is not supported"),
    (exp_max_value_shape, "exp_max", "err_tile_shape_mismatch",
     ["number of elements per partition mismatch in parameters (t.1[128, 64], t.2[128, 4]) of 'exponential'"]),
    (act2_bad_pair, "act2_pair", "err_unsupported_args",
     "(op0, op1) = (add, add) is not one of (multiply, add), (multiply, subtract), (multiply, bypass), "
     "(add, bypass), (subtract, bypass), (bypass, bypass)"),
    (act2_reverse_bypass, "act2_rev", "err_unsupported_args", "reverse1 needs op1 (it is bypass)"),
    (act2_reduce_multiply, "act2_red", "err_unsupported_args", "reduce_op multiply is not one of add, maximum, minimum"),
    (act2_mixed_imm_dtypes, "act2_imm", "err_supported_operand_dtype",
     "the tiles imm0 ('float32') and imm1 ('bfloat16') of 'nisa.activate2' must have one dtype"),
    (act2_load_reduce, "act2_load", "err_unsupported_args", "the Scalar Engine's accumulator has no load_reduce"),
    (act2_relu_param_tile, "act2_relu", "err_unsupported_args", "nkic takes relu_param as a number, not a tile"),
    (cum_divide, "cum_op1", "err_unsupported_args",
     "op1 divide is not one of add, subtract, multiply, maximum, minimum"),
    (cum_bitvec_op0, "cum_op0", "err_instruction_unsupported_op", "unsupported operator 'bitwise_and'"),
    (cum_imm1_unused, "cum_imm1", "err_unsupported_args", "imm1 is read only with reduce_cmd.load_reduce; leave it None"),
    (cum_load_without_imm1, "cum_load", "err_unsupported_args", "reduce_cmd.load_reduce starts from imm1, which is None"),
    (cum_idle, "cum_idle", "err_unsupported_args", "reduce_cmd none is not one of reset_reduce, reduce, load_reduce"),
    (cum_int32, "cum_dtype", "err_supported_operand_dtype",
     "operand 'src' of 'nisa.tensor_scalar_cumulative' has dtype 'int32', which is not supported"),
    (topk_small_n, "topk_n", "err_unsupported_args", "n = 6 is outside [8, 65536)"),
    (topk_k_above_n, "topk_k", "err_unsupported_args", "K = 12 (val_dst's free size) is outside [1, min(n, 32767)]"),
    (topk_partitions, "topk_p", "err_unsupported_args", "src has 8 partitions, not a multiple of 16"),
    (topk_short_src, "topk_cols", "err_unsupported_args",
     "src's 2 columns of 16 partitions hold fewer than n = 40 values"),
    (topk_fp32_src, "topk_dtype", "err_supported_operand_dtype",
     "operand 'src' of 'nisa.topk' has dtype 'float32', which is not supported; expected one of {bfloat16}"),
    (nonzero_wrong_width, "nz_width", "err_tile_shape_mismatch", "nonzero_with_count"),
    (nonzero_float_dst, "nz_dtype", "err_supported_operand_dtype",
     "operand 'dst' of 'nisa.nonzero_with_count' has dtype 'float32'"),
    (rng_float, "rng_dtype", "err_supported_operand_dtype", "operand 'dst' of 'nisa.rng' has dtype 'float32'"),
    (rng_scalar_engine, "rng_engine", "err_unsupported_args",
     "unsupported arguments to 'nisa.rng': engine must be nisa.engine.vector or nisa.engine.gpsimd"),
    (rng_gpsimd_psum, "rng_psum", "err_unsupported_memory", "psum"),
    (rand2_empty_range, "rand2_range", "err_unsupported_args", "min (1.000000) is not below max (1.000000)"),
    (rand2_mixed_bounds, "rand2_mixed", "err_unsupported_args", "min and max are both numbers or both [P, 1] tiles"),
    (seed_shape, "seed_shape", "err_unsupported_args", "src_seeds is s[1, 2], not a [1, 1] tile"),
    (state_words, "state_words", "err_elements_per_partition_mismatch", "src_seeds"),
]


@pytest.mark.parametrize("kernel,marker,code,message", CASES, ids=[c[1] for c in CASES])
def test_rule(kernel, marker, code, message):
    check_diag(trace_error(kernel, X), M, code, message, [(marker, "nisa.")])


GATED = [
    (exp_into_uint32, "exp_dtype", "trn2", "'nisa.exponential' is available on NeuronCore-v4 and newer only"),
    (act2_bad_pair, "act2_pair", "trn2", "'nisa.activate2' is available on NeuronCore-v4 and newer only"),
    (rand2_empty_range, "rand2_range", "gen3", "'nisa.rand2' is available on NeuronCore-v4 and newer only"),
    (nonzero_wrong_width, "nz_width", "trn1", "'nisa.nonzero_with_count' is available on NeuronCore-v3 and newer"),
    (state_words, "state_words", "trn1", "'nisa.rand_set_state' is available on NeuronCore-v3 and newer only"),
    (state_vector, "state_vector", "trn2",
     "'nisa.rand_get_state(engine=vector)' is available on NeuronCore-v4 and newer only"),
    (rng_gpsimd_psum, "rng_psum", "trn1", "'nisa.rng(engine=gpsimd)' is available on NeuronCore-v3 and newer only"),
]


@pytest.mark.parametrize("kernel,marker,target,message", GATED, ids=[g[1] + "-" + g[2] for g in GATED])
def test_gating(monkeypatch, kernel, marker, target, message):
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", target)
    check_diag(trace_error(kernel, X), M, "err_min_arch_support_for_inst", message, [(marker, "nisa.")])


def test_rng_and_cumulative_run_on_neuroncore_v2(monkeypatch):
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn1")
    wide, _, _ = nki.simulate(rng_bits)(np.array([[5]], np.uint32))
    assert wide.dtype == np.uint32 and len(np.unique(wide)) > 1000
    a = RNG.uniform(-3, 3, (32, 24)).astype(np.float32)
    c1 = nki.simulate(cumulative)(a, a[:, :1].copy())[0]
    np.testing.assert_array_equal(c1[0], scan(a[0] * np.float32(2), np.add, 0.0))
