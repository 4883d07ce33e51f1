"""The microscaling (MX) kernels of AWS's NKI library run unchanged under `import nki` on
NeuronCore-v4 (trn3, named: the default target is trn2), at small shapes, against numpy references of
the OCP formats (tests/python/mx_reference.py): the offline-quantized operands are
packed words passed as the library's x4 dtypes (words.view("float8_e4m3fn_x4")), their
block scales uint8 arrays."""
import importlib

import numpy as np
import pytest

import nki.language as nl
from mx_reference import FORMATS, dequant, quantize_ref, scale_rows, unpack
from nki_library_util import SRC, _library, kernel, rmsnorm  # noqa: F401  (_library: the autouse fixture)
from test_nki_current_library_moe import blockwise_routing, silu

pytestmark = pytest.mark.skipif(SRC is None, reason="no nki-library checkout")

E4M3FN_X4 = "float8_e4m3fn_x4"


@pytest.fixture(autouse=True)
def _trn3(_library, monkeypatch):  # noqa: F811  (after _library, which clears the override)
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn3")


def shuffle_4h(x):
    """The library's is_h_dim_4h_transposed layout: [..., H//512, 128, 4] -> [..., 4, H//512, 128]."""
    *outer, h = x.shape
    return x.reshape(*outer, h // 512, 128, 4).swapaxes(-1, -2).swapaxes(-2, -3).reshape(*outer, h)


def quantize_rows(x, name=E4M3FN_X4):
    """quantize_mx of each row of x [T, H] in blocks of 32 consecutive values, dequantized."""
    t, h = x.shape
    src = x.astype(np.float32).reshape(t, h // 4, 4).transpose(1, 0, 2).reshape(h // 4, 4 * t)
    codes, scales = quantize_ref(name, src)
    return dequant(name, codes, scales).reshape(h // 4, t, 4).transpose(1, 0, 2).reshape(t, h)


def offline_weights(h, cols, seed, name=E4M3FN_X4):
    """Random finite lane codes of a [H, cols] weight packed along H (four rows to a word),
    with one uint8 scale per 32 rows: (words [H//4, cols] as the x4 dtype, scales [H//32,
    cols], the dequantized weight [H, cols])."""
    rng = np.random.default_rng(seed)
    values = FORMATS[name][0]
    codes = rng.choice(np.flatnonzero(np.isfinite(values)), size=(h, cols))
    scales = rng.integers(118, 128, size=(h // 32, cols)).astype(np.uint8)
    words = sum(codes.reshape(h // 4, 4, cols)[:, j].astype(np.uint32) << (8 * j) for j in range(4)).astype(np.uint32)
    weight = values[codes] * np.repeat(2.0 ** (scales.astype(np.float64) - 127), 32, axis=0)
    return words.view(name), scales, weight


# QKV projection for token generation, MX path (qkv_tkg with QuantizationType.MX).


@pytest.mark.parametrize("norm", [False, True])
def test_qkv_tkg_mx(norm):
    import nki
    types = importlib.import_module("nkilib.core.utils.common_types")
    b, s, h, i = 1, 4, 512, 256
    rng = np.random.default_rng(1)
    hidden = rng.standard_normal((b, s, h)).astype(nl.bfloat16)
    gamma = (rng.random((1, h)) + 0.5).astype(nl.bfloat16)
    words, scales, weight = offline_weights(h, i, seed=2)
    out = nki.jit(kernel("core.qkv.qkv_tkg", "qkv_tkg"))(
        shuffle_4h(hidden), words, norm_w=shuffle_4h(gamma) if norm else None, qkv_w_scale=scales,
        norm_type=types.NormType.RMS_NORM if norm else types.NormType.NO_NORM,
        quantization_type=types.QuantizationType.MX, is_h_dim_4h_transposed=True)
    x = hidden.reshape(b * s, h).astype(np.float32)
    if norm:
        x = rmsnorm(x, gamma.astype(np.float32)).astype(nl.bfloat16)
    want = quantize_rows(x) @ weight
    assert out.shape == (b, s, i) and out.dtype == np.dtype(nl.bfloat16)
    tol = 2e-2 if norm else 8e-3  # bf16 output; with RMSNorm a bf16 rounding may move a quantized code
    np.testing.assert_allclose(out.reshape(b * s, i).astype(np.float64), want, rtol=tol, atol=tol * np.abs(want).max())


# The swizzled bf16 load and MXFP8 quantization of experimental/mxfp_subkernels.


@pytest.mark.parametrize("k", [512, 1024])
def test_mxfp_load_swizzles_and_quantizes(k):
    load = kernel("experimental.mxfp_subkernels.mxfp_load_utils", "mxfp_load_performance_wrapper")
    x = (np.random.default_rng(k).standard_normal((128, k)) * 4).astype(nl.bfloat16)
    x[3, 32:64] = 0  # a block of zeros takes scale 0
    data, scale = load(x)
    assert data.shape == scale.shape == (128, k // 4) and data.dtype == np.uint32 and scale.dtype == np.uint8
    for kb in range(k // 512):
        # The block's quantize_mx source: partition c, free 4m + j holds x[m, 512 kb + 4c + j]
        # (each row's 32 consecutive values are one scale block).
        src = x[:, 512 * kb:512 * (kb + 1)].astype(np.float32).reshape(128, 128, 4).transpose(1, 0, 2).reshape(128, 512)
        codes, scales = quantize_ref(E4M3FN_X4, src)
        cols = slice(128 * kb, 128 * (kb + 1))
        np.testing.assert_array_equal(unpack(E4M3FN_X4, data[:, cols]), codes)
        for row, want in scale_rows(scales).items():
            np.testing.assert_array_equal(scale[row, cols], want, err_msg=f"scale row {row}")


# Blockwise MoE matmul sharded on the intermediate dim, MX weights, on two cores.


def mx_words(rng, name, lead, cols):
    """Random finite lane codes packed four to a word, [*lead, cols] (lead[1]: 128 partitions),
    one uint8 scale per 8 partitions: (words as the x4 dtype, scales [lead[0], lead[1]//8,
    *lead[2:], cols], the dequantized lanes [*lead, cols, 4])."""
    values, bits, emax = FORMATS[name]
    codes = rng.choice(np.flatnonzero(np.isfinite(values)), size=(*lead, cols, 4))
    # Scales that keep every weight below about 2: the products stay in exp's range.
    scales = rng.integers(118 - emax, 128 - emax, size=(lead[0], lead[1] // 8, *lead[2:], cols)).astype(np.uint8)
    words = sum(codes[..., j].astype(np.uint32) << (bits * j) for j in range(4))
    lanes = values[codes] * np.repeat(2.0 ** (scales.astype(np.float64) - 127), 8, axis=1)[..., None]
    return words.astype(np.uint16 if bits == 4 else np.uint32).view(name), scales, lanes


def bf16(x):
    return x.astype(nl.bfloat16).astype(np.float64)


def quantized_blocks(x, tiles):
    """x [n, tiles*512] through quantize_mx (e4m3) in the library's swizzled layout: element
    t*512 + 128q + p sits on partition p, lane q, so a block is 8 partitions x 4 lanes."""
    n = x.shape[0]
    rows = x.reshape(n, tiles, 4, 128).transpose(0, 1, 3, 2).reshape(-1, 4)
    codes, scales = quantize_ref(E4M3FN_X4, rows)
    return dequant(E4M3FN_X4, codes, scales).reshape(n, tiles, 128, 4).transpose(0, 1, 3, 2).reshape(n, -1)


@pytest.mark.parametrize("shard, weights", [("intermediate", "float4_e2m1fn_x4"), ("intermediate", E4M3FN_X4),
                                            ("block", "float4_e2m1fn_x4")])
def test_blockwise_moe_matmul_mx_on_two_cores(shard, weights):
    types = importlib.import_module("nkilib.core.utils.common_types")
    experts, block, h, i, tokens = 2, 256, 512, 1024, 127
    nh, ni = h // 512, i // 512
    # Sharded on blocks the kernel takes top-k > 1 only (is_tensor_update_accumulating), and
    # the library's own tests clamp there.
    top_k, clamp = (1, None) if shard == "intermediate" else (2, (7.0, -7.0, 7.0))
    mask, slots, block_to_expert = blockwise_routing(tokens, top_k, experts, block)
    rng = np.random.default_rng(3)
    # Hidden states that the kernel's quantize_mx keeps exactly (its blocks: 8 partitions x 4
    # lanes of the [token, 4, H//512, 128] layout).
    hidden = quantized_blocks(rng.standard_normal((tokens + 1, h)), nh).astype(nl.bfloat16)
    hidden[tokens] = 0
    affinity = (rng.random((tokens + 1, experts)) * np.vstack([mask, np.zeros((1, experts))])).astype(nl.bfloat16)
    # gate/up word [e, p, g, t, i], lane q: hidden row 128 (q*nh + t) + p; down word [e, p, t, h],
    # lane q: intermediate row 512 t + 128 q + p.
    gu_words, gu_scales, gu = mx_words(rng, weights, (experts, 128, 2, nh), i)
    w_gu = gu.transpose(0, 2, 5, 3, 1, 4).reshape(experts, 2, h, i)
    dn_words, dn_scales, dn = mx_words(rng, weights, (experts, 128, ni), h)
    w_dn = dn.transpose(0, 2, 4, 1, 3).reshape(experts, i, h)
    gu_bias = (rng.random((experts, 128, 2, ni, 4)) - 0.5).astype(nl.bfloat16)
    b_gu = gu_bias.astype(np.float64).transpose(0, 2, 3, 4, 1).reshape(experts, 2, i)
    dn_bias = (rng.random((experts, h)) - 0.5).astype(nl.bfloat16)
    args = (hidden, affinity.reshape(-1, 1), gu_words, dn_words, slots, block_to_expert.reshape(-1, 1))
    common = dict(gate_and_up_proj_bias=gu_bias, down_proj_bias=dn_bias, gate_up_proj_scale=gu_scales,
                  down_proj_scale=dn_scales, block_size=block, compute_dtype=nl.bfloat16,
                  is_tensor_update_accumulating=top_k > 1,
                  expert_affinities_scaling_mode=types.ExpertAffinityScaleMode.POST_SCALE)
    if shard == "intermediate":
        out = kernel("core.moe.moe_cte.bwmm_shard_on_I_mx", "blockwise_mm_shard_intermediate_mx")[2](*args, **common)
    else:
        out = kernel("core.moe.moe_cte.bwmm_shard_on_block_mx", "bwmm_shard_on_block_mx")[2](
            *args, gate_clamp_upper_limit=clamp[0], up_clamp_lower_limit=clamp[1], up_clamp_upper_limit=clamp[2],
            **common)
        assert out.shape == (2, tokens + 1, h)
        np.testing.assert_array_equal(out[1], 0)  # reduce_outputs sums the cores' halves into out[0]
        out = out[0]
    want = np.zeros((tokens + 1, h))
    x64, a64 = hidden.astype(np.float64), affinity.astype(np.float64)
    for b, e in enumerate(block_to_expert):
        ids = slots[b * block:(b + 1) * block]
        ids = ids[ids < tokens]
        x = x64[ids]
        # The kernel's bf16 steps: PSUM, + bias, silu, the product.
        gate, up = (bf16(bf16(x @ w_gu[e, g]) + b_gu[e, g]) for g in (0, 1))
        if clamp:
            gate, up = np.minimum(gate, clamp[0]), np.clip(up, clamp[1], clamp[2])
        inter = quantized_blocks(bf16(bf16(silu(gate)) * up), ni)
        want[ids] += (inter @ w_dn[e] + dn_bias[e].astype(np.float64)) * a64[ids, e][:, None]
    # bf16 PSUM, partial sums and output: about 3 significant digits of the peak.
    np.testing.assert_allclose(out[:tokens].astype(np.float64), want[:tokens], rtol=0,
                               atol=2e-2 * np.abs(want).max())
