"""AWS's NKI kernel library (aws-neuron/nki-library) run unchanged under `import nki`
at small shapes, against numpy references written here. The library is read from a
checkout (NKIC_NKI_LIBRARY, default /tmp/corpus/nki-library) and skipped without one.
docs/current_api.md lists the library kernels that do not run yet and why."""
import importlib
import os

import numpy as np
import pytest

LIBRARY = os.environ.get("NKIC_NKI_LIBRARY", "/tmp/corpus/nki-library")
SRC = os.path.join(LIBRARY, "src", "nkilib_src")
pytestmark = pytest.mark.skipif(not os.path.isdir(SRC), reason="no nki-library checkout")


@pytest.fixture(autouse=True)
def _library(monkeypatch):
    monkeypatch.setenv("NKI_SIMULATOR", "1")
    monkeypatch.delenv("NEURON_PLATFORM_TARGET_OVERRIDE", raising=False)
    monkeypatch.syspath_prepend(SRC)


def kernel(module, name):
    return getattr(importlib.import_module("nkilib." + module), name)


def rand(*shape, seed=0, scale=1.0):
    return (np.random.default_rng(seed).random(shape, dtype=np.float32) * scale).astype(np.float32)


def logsumexp(x):
    m = x.max(axis=1)
    return np.log(np.exp(x - m[:, None]).sum(axis=1)) + m


def test_cumsum():
    x = rand(128, 300)
    np.testing.assert_allclose(kernel("core.cumsum.cumsum", "cumsum")(x), np.cumsum(x, axis=-1), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_find_nonzero_indices_with_count(dtype):
    x = (np.random.default_rng(3).random((1, 96)) > 0.6).astype(dtype) * 5
    out = kernel("experimental.benchmark.find_nonzero_indices_with_count", "find_nonzero_indices_with_count")(x)
    nz = np.flatnonzero(x[0])
    np.testing.assert_array_equal(out[0], list(nz) + [-1] * (96 - len(nz)) + [len(nz)])


def test_cascaded_max():
    x = rand(1, 1024)
    values, indices = kernel("core.max.cascaded_max", "cascaded_max")(x)
    assert values[0, 0] == x.max() and indices[0, 0] == x.argmax()


def test_rope():
    x, cos, sin = rand(64, 1, 2, 128), rand(32, 1, 128, seed=1), rand(32, 1, 128, seed=2)
    out = kernel("core.embeddings.rope", "RoPE")(x, cos, sin)
    c, s = cos[:, :, None, :], sin[:, :, None, :]
    np.testing.assert_allclose(out, np.concatenate([x[:32] * c - x[32:] * s, x[32:] * c + x[:32] * s]), rtol=1e-6)


def test_rope_hf_writes_its_outputs():
    q, k = rand(1, 2, 128, 64), rand(1, 2, 128, 64, seed=1)
    cos, sin = rand(128, 64, seed=2), rand(128, 64, seed=3)
    q_out, k_out = np.zeros_like(q), np.zeros_like(k)
    kernel("core.embeddings.rope_hf", "rope_hf")(q, k, q_out, k_out, cos, sin)

    def rotate(t):
        return np.concatenate([-t[..., 32:], t[..., :32]], axis=-1)
    np.testing.assert_allclose(q_out, q * cos + rotate(q) * sin, rtol=1e-6)
    np.testing.assert_allclose(k_out, k * cos + rotate(k) * sin, rtol=1e-6)


def test_cross_entropy_forward_and_backward():
    import nki.language as nl
    logits = rand(128, 512, scale=4.0)
    targets = np.random.default_rng(1).integers(0, 512, 128).astype(np.int32)
    loss, lse = kernel("experimental.loss.cross_entropy", "cross_entropy_forward")(logits, targets, chunk_size=512,
                                                                                    dtype=nl.float32)
    want_lse = logsumexp(logits)
    np.testing.assert_allclose(lse, want_lse, rtol=1e-5)
    np.testing.assert_allclose(loss, want_lse - logits[np.arange(128), targets], rtol=1e-5, atol=1e-5)
    grad = kernel("experimental.loss.cross_entropy", "cross_entropy_backward")(
        logits.copy(), targets, want_lse.astype(np.float32), chunk_size=512, dtype=nl.float32)
    onehot = np.eye(512, dtype=np.float32)[targets]
    np.testing.assert_allclose(grad, (np.exp(logits - want_lse[:, None]) - onehot) / 128, rtol=1e-4, atol=1e-7)


def test_output_projection_cte():
    attention, weight = rand(1, 1, 128, 512), rand(128, 512, seed=1)
    out = kernel("core.output_projection.output_projection_cte.output_projection_cte",
                 "output_projection_cte")(attention, weight)
    np.testing.assert_allclose(out, np.einsum("bnds,ndh->bsh", attention, weight.reshape(1, 128, 512)), rtol=1e-5)


def test_output_projection_tkg():
    attention, weight = rand(128, 1, 1, 4), rand(128, 512, seed=1)
    out = kernel("core.output_projection.output_projection_tkg", "output_projection_tkg")(attention, weight)
    want = np.einsum("dbns,ndh->bsh", attention, weight.reshape(1, 128, 512)).reshape(4, 512)
    np.testing.assert_allclose(out, want, rtol=1e-5)


def test_depthwise_conv1d():
    image, filters = rand(1, 128, 1, 256), rand(128, 1, 1, 3, seed=1)
    out = kernel("experimental.conv.depthwise_conv1d", "depthwise_conv1d_implicit_gemm")(image, filters,
                                                                                        feature_group_count=128)
    want = sum(image[0, :, 0, k:k + 254] * filters[:, 0, 0, k:k + 1] for k in range(3))
    np.testing.assert_allclose(out[0, :, 0], want, rtol=1e-5)


def test_conv1d():
    x, filters = rand(1, 128, 256), rand(3, 128, 128, seed=1)
    out = kernel("experimental.conv.conv1d", "conv1d")(x, filters)
    want = sum(np.einsum("bcl,co->bol", x[:, :, k:k + 254], filters[k]) for k in range(3))
    np.testing.assert_allclose(out, want, rtol=1e-5)


def test_attention_cte_causal():
    q, k, v = rand(1, 128, 128), rand(1, 128, 128, seed=1), rand(1, 128, 128, seed=2)  # q [B, S, d], k [B, d, S]
    out = kernel("core.attention.attention_cte", "attention_cte")(q, k, v)
    scores = np.where(np.tril(np.ones((128, 128))) > 0, q[0] @ k[0], -np.inf)
    p = np.exp(scores - scores.max(axis=1, keepdims=True))
    # The kernel multiplies bf16 probabilities into V (flash-attention practice).
    np.testing.assert_allclose(out[0], (p / p.sum(axis=1, keepdims=True)) @ v[0], atol=5e-3)


def test_rmsnorm_quant_fp8_rows():
    module = importlib.import_module("nkilib.core.rmsnorm.rmsnorm_quant")
    hidden, gamma = rand(1, 4, 512), rand(512, seed=1)
    out = module.rmsnorm_quant_kernel(hidden, gamma, module.RmsNormQuantKernelArgs())
    # Each row: 512 float8_e4m3 values, then its fp32 dequantisation scale in 4 bytes.
    scale = out[..., 512:].view(np.uint8).copy().view(np.float32)
    normed = hidden / np.sqrt((hidden ** 2).mean(axis=-1, keepdims=True) + 1e-6) * gamma
    np.testing.assert_allclose(scale[..., 0], np.abs(normed).max(axis=-1) / 240, rtol=1e-2)
    error = np.abs(out[..., :512].astype(np.float32) * scale - normed)
    assert (error <= 0.07 * np.abs(normed) + 1e-3).all()


def test_rotational_topk():
    import nki.language as nl
    utils = importlib.import_module("nkilib.core.topk.rotational_topk_utils")
    topk = importlib.import_module("nkilib.core.topk.rotational_topk")
    x = rand(1, 4, 1024)
    config = utils.create_topk_config(inp_shape=x.shape, inp_dtype=nl.float32, k=8, sorted=True, num_programs=1)
    flat = x.reshape(config.BxS, config.vocab_size)
    config = topk.prepare_rotational_constants(utils.create_rotational_topk_config(inp_shape=flat.shape,
                                                                                  topk_config=config))
    values, indices = topk.rotational_topk(flat, config)
    order = np.argsort(-flat, axis=1)[:, :8]
    np.testing.assert_array_equal(indices.reshape(4, 8), order)
    np.testing.assert_array_equal(values.reshape(4, 8), np.take_along_axis(flat, order, axis=1))


def test_qkv_cte_as_a_jit_of_the_plain_function():
    import nki
    from nkic.language import bfloat16
    x, w = rand(1, 128, 256), rand(256, 384, seed=1)
    out = nki.jit(kernel("core.qkv.qkv_cte", "qkv_cte"))(x, w)

    def bf16(a):
        return a.astype(bfloat16).astype(np.float32)
    np.testing.assert_array_equal(out, bf16(bf16(x) @ bf16(w)))  # bf16 operands and result, fp32 accumulation


def test_attention_bwd():
    b, h, d, s = 1, 1, 128, 512
    q, k, v, dy = (rand(b, h, d, s, seed=i) - 0.5 for i in range(4))
    scale = 1 / np.sqrt(d)
    scores = q[0, 0].T @ k[0, 0] * scale
    lse = logsumexp(scores)
    p = np.exp(scores - lse[:, None])
    o = (p @ v[0, 0].T).T[None, None].astype(np.float32)
    lse_tiles = lse.reshape(s // 128, 128).T[None, None].astype(np.float32)  # [bs, nheads, 128, seq_q // 128]
    dq, dk, dv = kernel("core.attention.attention_bwd", "attention_bwd")(q, k, v, o, dy, lse_tiles,
                                                                          mixed_precision=True)
    d_out = dy[0, 0].T
    d_p = d_out @ v[0, 0]
    d_s = p * (d_p - (d_p * p).sum(axis=1, keepdims=True))
    np.testing.assert_allclose(dv[0, 0], (p.T @ d_out).T, atol=1e-6)
    np.testing.assert_allclose(dq[0, 0], (d_s @ k[0, 0].T * scale).T, atol=1e-6)
    np.testing.assert_allclose(dk[0, 0], (d_s.T @ q[0, 0].T * scale).T, atol=1e-6)


def rmsnorm(x, gamma):
    return x / np.sqrt((x ** 2).mean(axis=-1, keepdims=True) + 1e-6) * gamma


def hidden_major(normed, h1):
    """The token-generation norms' layout: [B, S, H] as [128, B*S, H // 128], row-major split of H."""
    return normed.reshape(-1, 128, h1).transpose(1, 0, 2)


def test_rmsnorm_tkg_writes_the_hidden_major_layout():
    import nki
    x, gamma = rand(1, 4, 256), rand(1, 256, seed=1)
    out = np.zeros((128, 4, 2), np.float32)
    nki.jit(kernel("core.subkernels.rmsnorm_tkg", "rmsnorm_tkg"))(x, gamma, out)  # passes dge_mode=3
    np.testing.assert_allclose(out, hidden_major(rmsnorm(x, gamma), 2), rtol=1e-5, atol=1e-6)


def test_layernorm_tkg_with_beta():
    import nki
    x, gamma, beta = rand(1, 4, 256), rand(1, 256, seed=1), rand(1, 256, seed=2)
    out = np.zeros((128, 4, 2), np.float32)
    nki.jit(kernel("core.subkernels.layernorm_tkg", "layernorm_tkg"))(x, gamma, out, beta)
    normed = (x - x.mean(axis=-1, keepdims=True)) / np.sqrt(x.var(axis=-1, keepdims=True) + 1e-6) * gamma + beta
    np.testing.assert_allclose(out, hidden_major(normed, 2), rtol=1e-5, atol=1e-5)


def test_qkv_tkg_with_fused_rmsnorm():
    import nki
    hidden, weight, gamma = rand(1, 4, 256), rand(256, 384, seed=1), rand(1, 256, seed=2)
    out = nki.jit(kernel("core.qkv.qkv_tkg", "qkv_tkg"))(hidden, weight, norm_w=gamma)
    np.testing.assert_allclose(out, rmsnorm(hidden, gamma) @ weight, rtol=1e-5)


def test_router_topk_softmax_after_topk():
    import nki
    types = importlib.import_module("nkilib.core.utils.common_types")
    tokens, experts, k = 4, 64, 4
    x, w, bias = rand(tokens, 256), rand(256, experts, seed=1), rand(1, experts, seed=2)  # x in HBM as [T, H]
    logits, affinities = np.zeros((tokens, experts), np.float32), np.zeros((tokens, experts), np.float32)
    index = np.zeros((tokens, k), np.uint32)
    nki.jit(kernel("core.router_topk.router_topk", "router_topk"))(
        x, w, bias, logits, affinities, index, types.RouterActFnType.SOFTMAX, k, 1, 0,  # [T, H] in HBM, layout 0
        router_pre_norm=False, use_indirect_dma_scatter=True)
    want = x @ w + bias
    np.testing.assert_allclose(logits, want, rtol=1e-5)
    order = np.argsort(-want, axis=1)[:, :k]
    np.testing.assert_array_equal(index, order)
    top = np.exp(np.take_along_axis(want, order, axis=1) - want.max(axis=1, keepdims=True))
    scattered = np.zeros_like(want)
    np.put_along_axis(scattered, order, top / top.sum(axis=1, keepdims=True), axis=1)
    np.testing.assert_allclose(affinities, scattered, rtol=1e-4)


def test_gen_mask_tkg_strided_prior_mask():
    import nki
    bs, heads, s_prior = 2, 2, 256
    positions = np.array([[100, 37]], np.int32)  # [1, bs * s_active], s_active = 1
    mask = nki.jit(kernel("core.attention.gen_mask_tkg", "gen_mask_tkg_hbm"))(positions, bs, heads, 1, s_prior)
    tiles = s_prior // 128
    # Strided MM1 layout: row t * 128 + p of the mask holds prior token p * tiles + t.
    token = (np.arange(128)[None, :] * tiles + np.arange(tiles)[:, None]).reshape(-1)
    want = (token[:, None] < positions[0][None, :]).astype(np.float32)  # [s_prior, bs]
    np.testing.assert_array_equal(mask, np.broadcast_to(want[:, :, None, None], (s_prior, bs, heads, 1)))


def test_attention_tkg_one_token_over_a_masked_cache():
    import nki
    import nki.isa as nisa
    import nki.language as nl
    attention = importlib.import_module("nkilib.core.attention.attention_tkg")
    config = importlib.import_module("nkilib.core.attention.attention_tkg_utils").AttnTKGConfig
    allocator = importlib.import_module("nkilib.core.utils.allocator")
    logging = importlib.import_module("nkilib.core.utils.logging")
    heads, d, s_prior = 2, 64, 256

    def attend(q, k_active, v_active, k_prior, v_prior, mask, out):
        # Without fused RoPE the kernel takes Q and the active K in SBUF (qk_in_sb).
        q_sb = nl.ndarray(q.shape, q.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=q_sb, src=q)
        k_sb = nl.ndarray(k_active.shape, k_active.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=k_sb, src=k_active)
        cfg = config(bs=1, q_head=heads, s_active=1, curr_sprior=s_prior, full_sprior=s_prior, d_head=d,
                     qk_in_sb=True)
        sbm = allocator.SbufManager(0, nl.tile_size.total_available_sbuf_size, logging.get_logger("test"),
                                    use_auto_alloc=True)
        sbm.open_scope(name="test")
        attention.attention_tkg(q_sb, k_sb, v_active, k_prior, v_prior, mask, out, cfg, sbm)
        sbm.close_scope()
        return out

    q, k_active = rand(d, heads, seed=0) - 0.5, rand(d, 1, seed=1) - 0.5  # [d, B*H*s_active], [d, B*s_active]
    v_active = rand(1, 1, 1, d, seed=2) - 0.5
    k_prior, v_prior = rand(1, 1, d, s_prior, seed=3) - 0.5, rand(1, 1, s_prior, d, seed=4) - 0.5
    # The active token takes the cache's last slot; the mask covers every slot: 200 cached tokens and it.
    mask = np.zeros((s_prior, 1, heads, 1), np.float32)
    mask[:200] = mask[-1] = 1
    out = nki.jit(attend)(q, k_active, v_active, k_prior, v_prior, mask, np.zeros((1, heads, d, 1), np.float32))
    keys = np.concatenate([k_prior[0, 0, :, :200], k_active], axis=1)
    values = np.concatenate([v_prior[0, 0, :200], v_active[0, 0]])
    scores = q.T @ keys
    p = np.exp(scores - scores.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out[0, :, :, 0], (p / p.sum(axis=1, keepdims=True)) @ values, rtol=1e-5, atol=1e-6)


def test_mlp_tkg_silu_gate():
    import nki
    parameters = importlib.import_module("nkilib.core.mlp.mlp_parameters")
    mlp = importlib.import_module("nkilib.core.mlp.mlp_tkg.mlp_tkg")
    allocator = importlib.import_module("nkilib.core.utils.allocator")
    logging = importlib.import_module("nkilib.core.utils.logging")

    def run(hidden, gate, up, down, out):
        # mlp_tkg's own fallback allocator is not imported in its module; give it a manual one.
        sbm = allocator.SbufManager(0, 200 * 1024, logging.get_logger("test"))
        sbm.open_scope(name="test")
        mlp.mlp_tkg(parameters.MLPParameters(hidden, gate, up, down, output_dtype=hidden.dtype), out, None, sbm=sbm)
        sbm.close_scope()
        return out

    hidden, gate, up = rand(1, 4, 256) - 0.5, rand(256, 512, seed=1) - 0.5, rand(256, 512, seed=2) - 0.5
    down = rand(512, 256, seed=3) - 0.5
    out = nki.jit(run)(hidden, gate, up, down, np.zeros((1, 4, 256), np.float32))
    g = hidden @ gate
    np.testing.assert_allclose(out, (g / (1 + np.exp(-g)) * (hidden @ up)) @ down, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("tiles", [0, 1, 3])
def test_dynamic_elementwise_add_runs_its_runtime_tile_count(tiles):
    # A register-bounded nl.dynamic_range; the row offset is an SBUF counter advanced in the loop.
    import nki.language as nl
    add = kernel("experimental.dynamic_shapes.dynamic_elementwise_add", "dynamic_elementwise_add")
    a, b = rand(512, 1024).astype(nl.bfloat16), rand(512, 1024, seed=1).astype(nl.bfloat16)
    with pytest.warns(DeprecationWarning, match="dynamic_range"):
        out = add(a, b, np.array([[tiles]], np.int32))
    rows = tiles * 128
    np.testing.assert_array_equal(out[:rows], (a.astype(np.float32) + b.astype(np.float32)).astype(nl.bfloat16)[:rows])


# MoE token generation (moe_tkg): both non-MX paths against a numpy MoE step.


def moe_reference(x, gate_up, down, experts, weight, act, gate_up_bias=None, down_bias=None, clamp=None):
    """One MoE token-generation step: token t sums, over the local experts in experts[t], weight(t, e) times
    act(clamp(x @ gate_e + b)) * clamp(x @ up_e + b) @ down_e + b. clamp = (gate_hi, up_lo, up_hi)."""
    out = np.zeros((x.shape[0], down.shape[-1]), np.float32)
    for t in range(x.shape[0]):
        for e in experts[t]:
            g, u = x[t] @ gate_up[e, :, 0], x[t] @ gate_up[e, :, 1]
            if gate_up_bias is not None:
                g, u = g + gate_up_bias[e, 0], u + gate_up_bias[e, 1]
            if clamp is not None:
                g, u = np.minimum(g, clamp[0]), np.clip(u, clamp[1], clamp[2])
            y = (act(g) * u) @ down[e]
            out[t] += weight(t, e) * (y if down_bias is None else y + down_bias[e])
    return out


def silu(g):
    return g / (1 + np.exp(-g))


def swish(g):  # ActFnType.Swish is nl.gelu_apprx_sigmoid: x * sigmoid(1.702 x)
    return g / (1 + np.exp(-1.702 * g))


def moe_inputs(tokens, hidden, intermediate, experts, seed=0):
    x = rand(tokens, hidden, seed=seed) - 0.5
    gate_up = rand(experts, hidden, 2, intermediate, seed=seed + 1) - 0.5  # [E_L, H, gate/up, I]
    down = rand(experts, intermediate, hidden, seed=seed + 2) - 0.5
    return x, gate_up, down


def top_k_routing(tokens, experts, k, seed=0):
    """Distinct top-k expert indices per token, and [T, E] affinities non-zero at them only."""
    rng = np.random.default_rng(seed)
    index = np.stack([rng.choice(experts, k, replace=False) for _ in range(tokens)]).astype(np.int32)
    affinities = np.zeros((tokens, experts), np.float32)
    np.put_along_axis(affinities, index, rng.random((tokens, k), dtype=np.float32), axis=1)
    return index, affinities


def bf16(a):
    import nki.language as nl
    return a.astype(nl.bfloat16)


@pytest.mark.parametrize("tokens", [4, 130])  # 130: two 128-token tiles
def test_moe_tkg_all_experts_post_scale(tokens):
    import nki
    types = importlib.import_module("nkilib.core.utils.common_types")
    x, gate_up, down = moe_inputs(tokens, 256, 128, 2)
    index, affinities = top_k_routing(tokens, 2, 2, seed=3)
    out = nki.jit(kernel("core.moe.moe_tkg.moe_tkg", "moe_tkg"))(
        x, gate_up, down, affinities, index, True, rank_id=np.zeros((1, 1), np.uint32),
        expert_affinities_scaling_mode=types.ExpertAffinityScaleMode.POST_SCALE)
    want = moe_reference(x, gate_up, down, [range(2)] * tokens, lambda t, e: affinities[t, e], silu)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)


def test_moe_tkg_all_experts_of_rank_one_masks_unselected_experts():
    import nki
    types = importlib.import_module("nkilib.core.utils.common_types")
    tokens, local = 4, 2  # 4 global experts over 2 ranks; rank 1 holds experts 2 and 3
    x, gate_up, down = moe_inputs(tokens, 256, 128, local)
    index, _ = top_k_routing(tokens, 4, 2, seed=3)
    affinities = rand(tokens, 4, seed=4)  # dense: the masking, not the router, zeroes the unselected experts
    out = nki.jit(kernel("core.moe.moe_tkg.moe_tkg", "moe_tkg"))(
        x, gate_up, down, affinities, index, True, rank_id=np.ones((1, 1), np.uint32), mask_unselected_experts=True,
        expert_affinities_scaling_mode=types.ExpertAffinityScaleMode.POST_SCALE)

    def weight(t, e):
        return affinities[t, local + e] if local + e in index[t] else 0.0
    want = moe_reference(x, gate_up, down, [range(local)] * tokens, weight, silu)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("inter", [128, 256])
def test_moe_tkg_all_experts_unscaled_with_bias_and_clamp(inter):
    # I = 128 loads its bias with a 4-D [1, 1, 1, 128] nisa.dma_transpose.
    import nki
    types = importlib.import_module("nkilib.core.utils.common_types")
    x, gate_up, down = moe_inputs(4, 256, inter, 2)
    gate_up_bias, down_bias = rand(2, 2, inter, seed=5) - 0.5, rand(2, 256, seed=6) - 0.5
    index, affinities = top_k_routing(4, 2, 2, seed=3)
    out = nki.jit(kernel("core.moe.moe_tkg.moe_tkg", "moe_tkg"))(
        x, gate_up, down, affinities, index, True, expert_gate_up_bias=gate_up_bias, expert_down_bias=down_bias,
        activation_fn=types.ActFnType.Swish, gate_clamp_upper_limit=1.0, up_clamp_lower_limit=-1.0,
        up_clamp_upper_limit=1.0)
    want = moe_reference(x, gate_up, down, [range(2)] * 4, lambda t, e: 1.0, swish, gate_up_bias, down_bias,
                         clamp=(1.0, -1.0, 1.0))
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("tokens, k", [(1, 4), (4, 2)])
def test_moe_tkg_selective_experts_post_scale(tokens, k):
    import nki
    types = importlib.import_module("nkilib.core.utils.common_types")
    x, gate_up, down = moe_inputs(tokens, 256, 128, 4)
    gate_up_bias, down_bias = rand(4, 2, 128, seed=5) - 0.5, rand(4, 256, seed=6) - 0.5
    index, affinities = top_k_routing(tokens, 4, k, seed=3)
    out = nki.jit(kernel("core.moe.moe_tkg.moe_tkg", "moe_tkg"))(
        x, gate_up, down, affinities, index, False, expert_gate_up_bias=gate_up_bias, expert_down_bias=down_bias,
        expert_affinities_scaling_mode=types.ExpertAffinityScaleMode.POST_SCALE, activation_fn=types.ActFnType.Swish,
        gate_clamp_upper_limit=1.0, up_clamp_lower_limit=-1.0, up_clamp_upper_limit=1.0)
    want = moe_reference(x, gate_up, down, index, lambda t, e: affinities[t, e], swish, gate_up_bias, down_bias,
                         clamp=(1.0, -1.0, 1.0))
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)


def test_moe_tkg_selective_experts_unscaled():
    import nki
    x, gate_up, down = moe_inputs(4, 256, 128, 4)
    index, affinities = top_k_routing(4, 4, 2, seed=3)
    out = nki.jit(kernel("core.moe.moe_tkg.moe_tkg", "moe_tkg"))(x, gate_up, down, affinities, index, False)
    want = moe_reference(x, gate_up, down, index, lambda t, e: 1.0, silu)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("all_experts", [True, False])
def test_moe_tkg_bfloat16(all_experts):
    import nki
    types = importlib.import_module("nkilib.core.utils.common_types")
    x, gate_up, down = (bf16(a) for a in moe_inputs(4, 256, 128, 4))
    index, affinities = top_k_routing(4, 4, 4 if all_experts else 2, seed=3)
    affinities = bf16(affinities)
    out = nki.jit(kernel("core.moe.moe_tkg.moe_tkg", "moe_tkg"))(
        x, gate_up, down, affinities, index, all_experts, rank_id=np.zeros((1, 1), np.uint32),
        expert_affinities_scaling_mode=types.ExpertAffinityScaleMode.POST_SCALE)
    assert out.dtype == x.dtype
    f32 = [a.astype(np.float32) for a in (x, gate_up, down, affinities)]
    experts = [range(4)] * 4 if all_experts else index
    want = moe_reference(*f32[:3], experts, lambda t, e: f32[3][t, e], silu)
    # bf16 activations into the down projection and a bf16 accumulator: about 3 significant digits.
    np.testing.assert_allclose(out.astype(np.float32), want, rtol=0, atol=1e-2 * np.abs(want).max())


# Blockwise MoE matmuls (moe_cte) on two cores: kernel[2] traced per core, sendrecv and core_barrier.
def blockwise_routing(tokens, k, experts, block, seed=0):
    """Top-k expert masks, the token of each block slot (tokens = padding) and each block's expert."""
    rng = np.random.default_rng(seed)
    blocks = -(-(tokens * k - (experts - 1)) // block) + experts - 1
    chosen = np.stack([rng.choice(experts, k, replace=False) for _ in range(tokens)])
    mask = np.zeros((tokens, experts))
    for j in range(k):
        mask[np.arange(tokens), chosen[:, j]] = 1
    per_expert = np.ceil(mask.sum(0) / block).astype(np.int32)
    per_expert[experts - 1] += blocks - per_expert.sum()
    block_to_expert = np.repeat(np.arange(experts), per_expert).astype(np.int32)
    pos = np.cumsum(mask, axis=0)
    pos[:, 1:] += (np.cumsum(per_expert) * block)[:-1]
    pos = np.where(mask > 0, pos, 0).astype(np.int64)
    slots = np.full(blocks * block + 1, tokens, np.int32)
    slots[pos] = np.arange(tokens)[:, None]
    return mask, slots[1:], block_to_expert


def blockwise_reference(hidden, affinity, gate_up, down, slots, block_to_expert, block):
    """Each block's tokens through its expert's SiLU MLP, scaled by their affinity (POST_SCALE), summed."""
    out = np.zeros_like(hidden)
    for b, e in enumerate(block_to_expert):
        ids = slots[b * block:(b + 1) * block]
        ids = ids[ids < hidden.shape[0] - 1]
        x = hidden[ids]
        h = silu(x @ gate_up[e, :, 0]) * (x @ gate_up[e, :, 1])
        np.add.at(out, ids, (h @ down[e]) * affinity[ids, e][:, None])
    return out


@pytest.mark.parametrize("shard, block, inter, experts", [("intermediate", 256, 256, 2), ("block", 256, 128, 2),
                                                           ("block", 128, 128, 4)])
def test_blockwise_moe_matmul_on_two_cores(shard, block, inter, experts):
    cte = importlib.import_module("nkilib.core.moe.moe_cte.moe_cte_utils")
    types = importlib.import_module("nkilib.core.utils.common_types")
    tokens, hidden_size = 127, 512
    mask, slots, block_to_expert = blockwise_routing(tokens, 1, experts, block)
    hidden = rand(tokens + 1, hidden_size, seed=1)
    hidden[tokens] = 0  # the padding token
    affinity = rand(tokens + 1, experts, seed=2)
    affinity[:tokens] *= mask
    affinity[tokens] = 0
    gate_up = rand(experts, hidden_size, 2, inter, seed=3, scale=0.2) - 0.1
    down = rand(experts, inter, hidden_size, seed=4, scale=0.2) - 0.1
    common = dict(skip_dma=cte.SkipMode(False, False), compute_dtype=np.float32, is_tensor_update_accumulating=False,
                  expert_affinities_scaling_mode=types.ExpertAffinityScaleMode.POST_SCALE,
                  activation_function=types.ActFnType.SiLU)
    args = (hidden, affinity.reshape(-1, 1), gate_up, down, block, slots, block_to_expert.reshape(-1, 1))
    if shard == "intermediate":
        mm = kernel("core.moe.moe_cte.bwmm_shard_on_I", "blockwise_mm_baseline_shard_intermediate")
        out = mm[2](*args, **common)
    else:
        mm = kernel("core.moe.moe_cte.bwmm_shard_on_block", "bwmm_shard_on_block")
        out = mm[2](*args, block_sharding_strategy=cte.BlockShardStrategy.PING_PONG, **common)
    out = out[0] if isinstance(out, tuple) else out
    want = blockwise_reference(hidden, affinity, gate_up, down, slots, block_to_expert, block)
    np.testing.assert_allclose(out[:tokens], want[:tokens], rtol=1e-5, atol=1e-5)


# The MoE block (moe_block_tkg) at [2]: RMSNorm, router top-k and the MoE step on two cores.


def block_inputs(tokens, hidden, inter, experts, local, seed=0):
    """[1, tokens, H] input, [1, H] gamma, [H, E] router and the E_L local experts' weights."""
    x = rand(1, tokens, hidden, seed=seed) - 0.5
    gamma, router = rand(1, hidden, seed=seed + 1), rand(hidden, experts, seed=seed + 2) - 0.5
    gate_up = rand(local, hidden, 2, inter, seed=seed + 3) - 0.5  # [E_L, H, gate/up, I]
    down = rand(local, inter, hidden, seed=seed + 4) - 0.5
    return x, gamma, router, gate_up, down


def block_routing(logits, k, pre_norm, norm_topk=False, sigmoid=False):
    """Each token's top-k experts and the [T, E] affinities, zero off them. pre_norm: the activation (softmax
    over E, or sigmoid) ranks the experts, its values optionally L1-normalised over the k; otherwise the
    logits rank them and a softmax over the k top logits weights them."""
    if not pre_norm:
        scores = logits
    elif sigmoid:
        scores = 1 / (1 + np.exp(-logits))
    else:
        scores = np.exp(logits - logits.max(axis=1, keepdims=True))
        scores /= scores.sum(axis=1, keepdims=True)
    order = np.argsort(-scores, axis=1)
    ranked = np.take_along_axis(scores, order, axis=1)
    assert (ranked[:, k - 1] - ranked[:, k] > 1e-3).all(), "a near tie at the k-th expert: the data needs a margin"
    top = ranked[:, :k]
    if not pre_norm:
        top = np.exp(top - top[:, :1])
    if not pre_norm or norm_topk:
        top = top / top.sum(axis=1, keepdims=True)
    affinities = np.zeros_like(logits)
    np.put_along_axis(affinities, order[:, :k], top, axis=1)
    return order[:, :k], affinities


def run_block(x, gamma, router, gate_up, down, k, pre_norm, all_experts, rank=0, **options):
    import nki.language as nl
    types = importlib.import_module("nkilib.core.utils.common_types")
    options.setdefault("router_act_fn", types.RouterActFnType.SOFTMAX)
    options.setdefault("expert_affinities_scaling_mode", types.ExpertAffinityScaleMode.POST_SCALE)
    if all_experts:
        options["rank_id"] = np.full((1, 1), rank, np.uint32)
    block = kernel("core.moe_block.moe_block_tkg", "moe_block_tkg")
    return block[2](x, gamma, router, gate_up, down, top_k=k, router_pre_norm=pre_norm, is_all_expert=all_experts,
                    router_mm_dtype=nl.float32 if x.dtype == np.float32 else nl.bfloat16, **options)


def block_reference(normed, router, gate_up, down, k, pre_norm, all_experts, rank=0, bias=0, scaled=True, **routing):
    """(out [T, H], router logits [T, E]) from the normed [T, H] tokens: the MoE step over the routed experts
    (selective) or every local expert e of the rank, global rank * E_L + e (all-expert), each weighted by its
    affinity (POST_SCALE, zero off the top-k) or by 1 (NO_SCALE)."""
    logits = normed @ router + bias
    index, affinities = block_routing(logits, k, pre_norm, **routing)
    local = gate_up.shape[0]
    experts = [range(local)] * len(normed) if all_experts else index
    first = rank * local if all_experts else 0

    def weight(t, e):
        return affinities[t, first + e] if scaled else 1.0
    return moe_reference(normed, gate_up, down, experts, weight, silu), logits


def check_block(out, logits, want, want_logits):
    # fp32 throughout (router_mm_dtype fp32); the residue is summation order: worst about 7e-5 on outputs up to 150.
    np.testing.assert_allclose(logits, want_logits, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("all_experts, pre_norm", [(False, True), (False, False), (True, True),
                                                   (True, False)])
@pytest.mark.parametrize("tokens", [1, 4])  # selective: 1 splits the hidden dimension over the cores, 4 the tokens
def test_moe_block_tkg_softmax_router(tokens, pre_norm, all_experts):
    x, gamma, router, gate_up, down = block_inputs(tokens, 256, 128, 8, 8)
    out, logits = run_block(x, gamma, router, gate_up, down, 2, pre_norm, all_experts)
    check_block(out, logits, *block_reference(rmsnorm(x[0], gamma), router, gate_up, down, 2, pre_norm, all_experts))


@pytest.mark.parametrize("all_experts", [False, True])
@pytest.mark.parametrize("tokens", [1, 4])
def test_moe_block_tkg_normalised_top_k_with_router_bias(tokens, all_experts):
    x, gamma, router, gate_up, down = block_inputs(tokens, 256, 128, 8, 8)
    bias = rand(1, 8, seed=9) - 0.5
    out, logits = run_block(x, gamma, router, gate_up, down, 2, True, all_experts, router_bias=bias,
                            norm_topk_prob=True)
    check_block(out, logits, *block_reference(rmsnorm(x[0], gamma), router, gate_up, down, 2, True, all_experts,
                                              bias=bias, norm_topk=True))


@pytest.mark.parametrize("all_experts", [False, True])
def test_moe_block_tkg_sigmoid_router(all_experts):
    types = importlib.import_module("nkilib.core.utils.common_types")
    x, gamma, router, gate_up, down = block_inputs(4, 256, 128, 8, 8)
    out, logits = run_block(x, gamma, router, gate_up, down, 2, True, all_experts,
                            router_act_fn=types.RouterActFnType.SIGMOID)
    check_block(out, logits, *block_reference(rmsnorm(x[0], gamma), router, gate_up, down, 2, True, all_experts,
                                              sigmoid=True))


@pytest.mark.parametrize("all_experts", [False, True])
def test_moe_block_tkg_unscaled(all_experts):
    # NO_SCALE: every routed expert (selective) or every local expert (all-expert) at weight 1.
    types = importlib.import_module("nkilib.core.utils.common_types")
    x, gamma, router, gate_up, down = block_inputs(4, 256, 128, 8, 8)
    out, logits = run_block(x, gamma, router, gate_up, down, 2, True, all_experts,
                            expert_affinities_scaling_mode=types.ExpertAffinityScaleMode.NO_SCALE)
    check_block(out, logits, *block_reference(rmsnorm(x[0], gamma), router, gate_up, down, 2, True, all_experts,
                                              scaled=False))


def test_moe_block_tkg_all_experts_of_rank_one():
    # 8 experts over 2 ranks: rank 1 holds experts 4..7 and adds only the tokens routed to them.
    x, gamma, router, gate_up, down = block_inputs(4, 256, 128, 8, 4)
    out, logits = run_block(x, gamma, router, gate_up, down, 2, True, True, rank=1)
    want, want_logits = block_reference(rmsnorm(x[0], gamma), router, gate_up, down, 2, True, True, rank=1)
    assert 0 < np.count_nonzero(np.abs(want).max(axis=1)) < 4  # some tokens are routed to rank 1, some not
    check_block(out, logits, want, want_logits)


@pytest.mark.parametrize("all_experts", [False, True])
def test_moe_block_tkg_bfloat16(all_experts):
    x, gamma, router, gate_up, down = (bf16(a) for a in block_inputs(4, 256, 128, 8, 8))
    out, logits = run_block(x, gamma, router, gate_up, down, 2, True, all_experts)
    assert out.dtype == logits.dtype == x.dtype
    f32 = [a.astype(np.float32) for a in (x, gamma, router, gate_up, down)]
    normed = bf16(rmsnorm(f32[0][0], f32[1])).astype(np.float32)  # the norm's output is bf16 (the input's dtype)
    want, want_logits = block_reference(normed, *f32[2:], 2, True, all_experts)
    # The logits are stored in bf16 (8-bit mantissa); the MoE step keeps bf16 activations and a bf16
    # accumulator, about 3 significant digits as in test_moe_tkg_bfloat16 (worst 7.5e-3 of the largest output).
    np.testing.assert_allclose(logits.astype(np.float32), want_logits, rtol=1e-2, atol=1e-2)
    np.testing.assert_allclose(out.astype(np.float32), want, rtol=0, atol=1e-2 * np.abs(want).max())
