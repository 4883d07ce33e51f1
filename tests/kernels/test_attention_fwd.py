"""Single-head attention forward with nl.* (plus nisa.affine_select for causal):
    O = softmax(Q K^T / sqrt(d)) V,   Q, K, V: [seqlen, d]

Layouts: Q, K, V arrive in natural [seqlen, d] layout. For each 128-row Q tile:
  1. q^T [d, 128] and k^T [d, seqlen] are made on chip with nl.transpose (d on
     the partition dim = the contraction dim of the PE array);
  2. S = nl.matmul(q^T, k^T, transpose_x=True) -> [128, seqlen] in PSUM (seqlen <= 512);
  3. causal variant: S = nisa.affine_select(pred=(i_f <= i_p + q0), S, nl.fp32.min)
     keeps key positions <= query position;
  4. row softmax in fp32 (max, exp with scale folded in, sum, reciprocal);
  5. O = P V accumulated in PSUM over 128-key tiles: each P tile is transposed
     (nl.transpose) so the keys are on the partition dim, then
     o_psum += nl.matmul(p^T, v_tile, transpose_x=True).
A second kernel uses nl.matmul(p_tile, v_tile) without transpose_x (nl.matmul
inserts the transpose itself) and nl.softmax.

Tolerances (fp32): S has d = 64 fp32 products per element; softmax adds exp /
reciprocal ulps and a seqlen-term sum; P V sums seqlen products of P in [0, 1]
and |v| <~ 4. Worst-case bounds give absolute errors of order 1e-5 on O (|O| <~ 1)
and relative errors of order 1e-5 on O with large magnitude; assert rtol = 1e-4,
atol = 1e-4 against float64 (~10x margin over the bounds). bf16 inputs: the
inputs are exact in fp32, compute is fp32, the output rounds once to bf16 (2^-8
relative): rtol = 2^-8 + 1e-4, atol = 1e-4.
"""
import math

import numpy as np
import pytest

from neuronxcc import nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa

P = 128


@nki.jit
def attention_fwd_kernel(q, k, v, causal=False):
    seqlen, d = q.shape
    assert k.shape == v.shape == (seqlen, d) and seqlen % P == 0 and seqlen <= 512 and d <= P
    KT = seqlen // P
    out = nl.ndarray((seqlen, d), dtype=q.dtype, buffer=nl.shared_hbm)
    scale = 1.0 / math.sqrt(d)

    i_p = nl.arange(P)[:, None]
    i_d = nl.arange(d)[None, :]
    i_s = nl.arange(seqlen)[None, :]

    # K^T [d, seqlen], built tile by tile with nl.transpose; V stays [seqlen, d] as
    # KT tiles of [128, d] folded into the free dim: v_all[:, t, :] = V[t*128 : t*128+128, :].
    kT = nl.ndarray((d, seqlen), dtype=nl.float32, buffer=nl.sbuf)
    v_all = nl.ndarray((P, KT, d), dtype=v.dtype, buffer=nl.sbuf)
    for t in nl.affine_range(KT):
        k_tile = nl.load(k[t * P + i_p, i_d])
        kT[:, nl.ds(t * P, P)] = nl.copy(nl.transpose(k_tile), dtype=nl.float32)
        v_all[:, t, :] = nl.load(v[t * P + i_p, i_d])

    for qt in nl.affine_range(seqlen // P):
        q_tile = nl.load(q[qt * P + i_p, i_d])
        qT = nl.copy(nl.transpose(q_tile), dtype=nl.float32)            # [d, 128]
        s_psum = nl.matmul(qT, kT, transpose_x=True)                     # [128, seqlen]
        # A tensor created inside an if/else is not visible after it (NKI scoping):
        # declare s here and fill it in place.
        s = nl.ndarray((P, seqlen), dtype=nl.float32, buffer=nl.sbuf)
        if causal:
            s[...] = nisa.affine_select(pred=(i_s <= qt * P + i_p), on_true_tile=s_psum,
                                        on_false_value=nl.fp32.min, dtype=nl.float32)
        else:
            s[...] = nl.copy(s_psum, dtype=nl.float32)
        row_max = nl.max(s, axis=[1], keepdims=True)
        # exp(scale * s - scale * max) on the scalar engine, bias = -scale * max
        neg_bias = nl.multiply(row_max, -scale)
        p = nisa.activation(op=nl.exp, data=s, bias=neg_bias, scale=scale)
        row_sum = nl.sum(p, axis=[1], keepdims=True)
        inv = nl.reciprocal(row_sum)

        o_psum = nl.zeros((P, d), nl.float32, buffer=nl.psum)
        for t in nl.affine_range(KT):
            pT = nl.copy(nl.transpose(p[:, nl.ds(t * P, P)]), dtype=nl.float32)   # [keys, queries]
            o_psum += nl.matmul(pT, v_all[:, t, :], transpose_x=True)
        o = nl.multiply(o_psum, inv, dtype=out.dtype)
        nl.store(out[qt * P + i_p, i_d], value=o)
    return out


@nki.jit
def attention_simple_kernel(q, k, v):
    """seqlen = 128: one Q tile, one K/V tile; nl.matmul without transpose_x and
    nl.softmax."""
    seqlen, d = q.shape
    assert seqlen == P
    out = nl.ndarray((seqlen, d), dtype=q.dtype, buffer=nl.shared_hbm)
    q_tile = nl.load(q)
    k_tile = nl.load(k)
    v_tile = nl.load(v)
    qT = nl.copy(nl.transpose(q_tile), dtype=nl.float32)       # [d, 128]
    kT = nl.copy(nl.transpose(k_tile), dtype=nl.float32)       # [d, 128]
    s = nl.multiply(nl.matmul(qT, kT, transpose_x=True), 1.0 / math.sqrt(d), dtype=nl.float32)
    p_tile = nl.softmax(s, axis=[1])
    o = nl.matmul(p_tile, v_tile)                               # p @ v, transpose inserted by nl.matmul
    nl.store(out, value=nl.copy(o, dtype=out.dtype))
    return out


def reference(q, k, v, causal=False):
    q64, k64, v64 = (a.astype(np.float64) for a in (q, k, v))
    s = q64 @ k64.T / math.sqrt(q.shape[1])
    if causal:
        s = np.where(np.tril(np.ones(s.shape, bool)), s, -np.inf)
    s = s - s.max(axis=1, keepdims=True)
    p = np.exp(s)
    p /= p.sum(axis=1, keepdims=True)
    return p @ v64


def make_inputs(seqlen, d, dtype, seed=0):
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal((seqlen, d)).astype(np.float32).astype(dtype) for _ in range(3))


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("seqlen,d", [(128, 64), (256, 64), (512, 32), (128, 128)])
def test_attention_fp32(seqlen, d, causal):
    q, k, v = make_inputs(seqlen, d, np.float32)
    out = nki.simulate_kernel(attention_fwd_kernel, q, k, v, causal=causal)
    assert out.shape == (seqlen, d) and out.dtype == np.float32
    np.testing.assert_allclose(out, reference(q, k, v, causal), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_attention_bf16(causal):
    q, k, v = make_inputs(256, 64, nl.bfloat16, seed=1)
    out = nki.simulate_kernel(attention_fwd_kernel, q, k, v, causal=causal)
    assert out.dtype == nl.bfloat16
    np.testing.assert_allclose(out.astype(np.float64), reference(q, k, v, causal), rtol=2.0 ** -8 + 1e-4, atol=1e-4)


def test_attention_causal_first_row_is_v0():
    # Query 0 may only attend to key 0: its output is exactly v[0] (p = [1, 0, ...],
    # exp(0) = 1, sum = 1, reciprocal 1, products with 0 are 0).
    q, k, v = make_inputs(256, 64, np.float32, seed=2)
    out = nki.simulate_kernel(attention_fwd_kernel, q, k, v, causal=True)
    assert np.array_equal(out[0], v[0])


def test_attention_simple_fp32():
    q, k, v = make_inputs(128, 64, np.float32, seed=3)
    out = nki.simulate_kernel(attention_simple_kernel, q, k, v)
    np.testing.assert_allclose(out, reference(q, k, v), rtol=1e-4, atol=1e-4)


def test_attention_simple_bf16():
    q, k, v = make_inputs(128, 64, nl.bfloat16, seed=4)
    out = nki.simulate_kernel(attention_simple_kernel, q, k, v)
    assert out.dtype == nl.bfloat16
    np.testing.assert_allclose(out.astype(np.float64), reference(q, k, v), rtol=2.0 ** -8 + 1e-4, atol=1e-4)
