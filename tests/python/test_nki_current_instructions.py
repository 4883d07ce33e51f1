"""The current API's accumulator, selection and random instructions (NKI_CURRENT_API.md
§6.5-6.7): nisa.exponential, activate2, tensor_scalar_cumulative, topk,
nonzero_with_count and the XORWOW family (rng, rand2, set_rng_seed, rand_set_state,
rand_get_state), each run on the simulator against numpy; their legality rules and
NeuronCore gating are in test_nki_current_instruction_errors.py."""
import numpy as np
import pytest

import nki
import nki.isa as nisa
import nki.language as nl
from nki_current_util import loaded, sbuf, stored
from nki_test_util import Markers, trace_ir

M = Markers(__file__)
RNG = np.random.default_rng(7)


@pytest.fixture(autouse=True)
def _trn3(monkeypatch):
    # NeuronCore-v4 instructions: trn3, which the default target (trn2) is not.
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn3")


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


@nki.jit
def act2_accumulate(a):
    x = loaded(a)
    y, r = sbuf(a.shape), sbuf((a.shape[0], 1))
    nisa.activate2(dst=y, op=nl.copy, data=x, imm0=1.0, imm1=0.0, op0=nl.add, op1=nl.bypass,
                   reduce_cmd=nisa.reduce_cmd.reset_reduce)
    nisa.activate2(dst=y, op=nl.copy, data=x, imm0=0.0, imm1=0.0, op0=nl.bypass, op1=nl.bypass,
                   reduce_cmd=nisa.reduce_cmd.reset)
    nisa.activate2(dst=y, op=nl.square, data=x, imm0=0.0, imm1=0.0, op0=nl.bypass, op1=nl.bypass,
                   reduce_op=nl.minimum, reduce_res=r, reduce_cmd=nisa.reduce_cmd.reduce)
    return stored(r)


def test_activate2_reset_zeroes_the_accumulator_and_reduce_folds_on():
    a = RNG.uniform(0.5, 2, (32, 16)).astype(np.float32)
    r = nki.simulate(act2_accumulate)(a)
    # After reset the register holds 0, below every square: the minimum stays 0.
    np.testing.assert_array_equal(r[:, 0], np.minimum(0.0, (a * a).min(axis=1)))


def test_activate2_tile_immediates_and_reversed_stages():
    a = RNG.uniform(-1, 1, (64, 20)).astype(np.float32)
    s = RNG.uniform(0.5, 1.5, (64, 1)).astype(np.float32)
    b = RNG.uniform(-1, 1, (64, 1)).astype(np.float32)
    y, z = nki.simulate(act2_tiles)(a, s, b)
    np.testing.assert_allclose(y, np.exp(b - a * s), rtol=1e-6)
    np.testing.assert_array_equal(z, s - a)


@nki.jit
def act2_prelu(a, slope):
    x, sl = loaded(a), loaded(slope)
    y, z, w = sbuf(a.shape), sbuf(a.shape), sbuf(a.shape)
    nisa.activate2(dst=y, op=nl.prelu, data=x, imm0=2.0, imm1=0.5, op0=nl.multiply, op1=nl.subtract,
                   relu_param=sl)
    nisa.activate2(dst=z, op=nl.prelu, data=x, imm0=0.0, imm1=0.0, op0=nl.bypass, op1=nl.bypass, relu_param=0.25)
    nisa.activation(dst=w, op=nl.prelu, data=x)
    return stored(y), stored(z), stored(w)


def test_prelu_scales_negative_inputs_by_relu_param():
    a = RNG.uniform(-1, 1, (128, 40)).astype(np.float32)
    slope = RNG.uniform(0.05, 0.5, (128, 1)).astype(np.float32)
    y, z, w = nki.simulate(act2_prelu)(a, slope)
    v = a * np.float32(2.0) - np.float32(0.5)
    np.testing.assert_allclose(y, np.where(v < 0, v * slope, v), rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(z, np.where(a < 0, a * np.float32(0.25), a))
    # activation has no relu_param: prelu takes activate2's default slope 0, so it is relu.
    np.testing.assert_array_equal(w, np.maximum(a, 0))


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


def test_topk_takes_equal_values_lower_position_first():
    a = np.zeros((16, 2), np.float32)
    a[:, 0] = [3, 1, 3, 2, 5, 0, 3, 1, 0, 0, 0, 0, 0, 0, 0, 0]   # snake positions 0..15
    a[:, 1] = 3                                                  # positions 16..31
    vals, idx = nki.simulate(topk_kernel)(a, 20, 4)
    # The 4 largest of [3 1 3 2 5 0 3 1 0 ... 0 3 3 3 3]: 5 and the first three 3s, ascending.
    np.testing.assert_array_equal(vals[0], [3, 3, 3, 5])
    np.testing.assert_array_equal(idx[0], [0, 2, 6, 4])


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


@nki.jit
def nonzero_3d(a):
    # The free dims are walked as one row (the kernel library passes [P, tiles, 128] and [P, 1, n + 1]).
    x = loaded(a)
    d = sbuf((a.shape[0], 1, a.shape[1] * a.shape[2] + 1), nl.int32)
    nisa.nonzero_with_count(dst=d, src=x)
    return stored(d)


def test_nonzero_with_count_of_3d_tiles_walks_their_free_elements_as_one_row():
    a = (RNG.uniform(0, 1, (128, 2, 8)) > 0.6).astype(np.float32)
    d = nki.simulate(nonzero_3d)(a)
    for p in range(0, 128, 16):
        where = np.flatnonzero(a[p])
        np.testing.assert_array_equal(d[p, 0], list(where) + [-1] * (16 - len(where)) + [len(where)])


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
    vstate, c, d = sbuf((16, 24), nl.uint32), sbuf((16, 4), nl.uint32), sbuf((16, 4), nl.uint32)
    nisa.rand_set_state(src_seeds=w)
    nisa.rand_get_state(dst=before)
    nisa.rng(dst=a, engine=nisa.engine.gpsimd)
    nisa.rand_set_state(src_seeds=before)
    nisa.rng(dst=b, engine=nisa.engine.gpsimd)
    # The Vector engine's generators are their own: GpSimd's draws left them as they were.
    nisa.rand_get_state(dst=vstate, engine=nisa.engine.vector)
    nisa.rng(dst=c)
    nisa.rand_set_state(src_seeds=vstate, engine=nisa.engine.vector)
    nisa.rng(dst=d, engine=nisa.engine.vector)
    return stored(before), stored(a), stored(b), stored(vstate), stored(c), stored(d)


def test_rand_state_is_xorwow_per_partition():
    words = RNG.integers(1, 2**32, (16, 6), dtype=np.uint64).astype(np.uint32)
    before, a, b, vstate, c, d = nki.simulate(state_round_trip)(words)
    np.testing.assert_array_equal(before, words)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(c, d)
    for p in range(16):
        np.testing.assert_array_equal(a[p], xorwow(words[p], 10))
        np.testing.assert_array_equal(c[p], xorwow(vstate[p], 4))   # words 0-5 of the Vector state


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


def test_rng_and_cumulative_run_on_neuroncore_v2(monkeypatch):
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn1")
    wide, _, _ = nki.simulate(rng_bits)(np.array([[5]], np.uint32))
    assert wide.dtype == np.uint32 and len(np.unique(wide)) > 1000
    a = RNG.uniform(-3, 3, (32, 24)).astype(np.float32)
    c1 = nki.simulate(cumulative)(a, a[:, :1].copy())[0]
    np.testing.assert_array_equal(c1[0], scan(a[0] * np.float32(2), np.add, 0.0))


@nki.jit
def select_max(a, cmd):
    x = loaded(a)
    on = sbuf(a.shape)
    res = sbuf((a.shape[0], 1))
    nisa.memset(dst=on, value=1.0)
    nisa.select_reduce(dst=x, predicate=on, on_true=x, on_false=0.0, reduce_res=res, reduce_cmd=cmd,
                       reduce_op=nl.maximum)
    return stored(res)


def test_select_reduce_load_reduce_starts_afresh_as_it_has_no_reduce_init():
    a = -RNG.uniform(1, 3, (16, 24)).astype(np.float32)  # all negative: a fold from 0 would give 0
    for cmd in (nisa.reduce_cmd.load_reduce, nisa.reduce_cmd.reset_reduce):
        got = nki.simulate(select_max)(a, cmd)
        np.testing.assert_array_equal(got[:, 0], a.max(axis=1))


# nisa.tensor_partition_reduce
@nki.jit
def partition_reduces(a):
    x = loaded(a)
    total, mean, top = sbuf((1, a.shape[1])), sbuf((1, a.shape[1])), sbuf((1, a.shape[1]))
    nisa.tensor_partition_reduce(dst=total, op=nl.add, data=x)
    nisa.tensor_partition_reduce(dst=mean, op=nl.average, data=x)
    nisa.tensor_partition_reduce(dst=top, op=nl.maximum, data=x)
    return stored(total), stored(mean), stored(top)


def test_tensor_partition_reduce_adds_averages_and_maximises_over_the_partitions():
    a = RNG.uniform(-1, 1, (96, 40)).astype(np.float32)
    total, mean, top = nki.simulate(partition_reduces)(a)
    np.testing.assert_allclose(total[0], a.sum(axis=0), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(mean[0], a.mean(axis=0), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(top[0], a.max(axis=0))
    assert "tensor_reduce[pool](t.1[i0, i1], 0.0104166667; add)" in trace_ir(partition_reduces, a)
