"""AWS's NKI kernel library (aws-neuron/nki-library) run unchanged under `import nki`
at small shapes, against numpy references written here. The library is read from a
checkout (NKIC_NKI_LIBRARY, default /tmp/corpus/nki-library) and skipped without one.
docs/current_api.md lists the library kernels that do not run yet and why. The MoE
kernels are in test_nki_current_library_moe.py."""
import importlib

import numpy as np
import pytest

from nki_library_util import SRC, _library, kernel, rand, rmsnorm  # noqa: F401  (_library: the autouse fixture)

pytestmark = pytest.mark.skipif(SRC is None, reason="no nki-library checkout")


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


@pytest.mark.parametrize("batch,seqlen", [(1, 128), (2, 512)])
def test_attention_cte_causal(batch, seqlen):
    # From 256 keys on, the kernel transposes its probabilities with a 3-D nisa.dma_transpose.
    q, k, v = rand(batch, seqlen, 128), rand(batch, 128, seqlen, seed=1), rand(batch, seqlen, 128, seed=2)
    out = kernel("core.attention.attention_cte", "attention_cte")(q, k, v)  # q [B, S, d], k [B, d, S]
    for b in range(batch):
        scores = np.where(np.tril(np.ones((seqlen, seqlen))) > 0, q[b] @ k[b], -np.inf)
        p = np.exp(scores - scores.max(axis=1, keepdims=True))
        # The kernel multiplies bf16 probabilities into V (flash-attention practice).
        np.testing.assert_allclose(out[b], (p / p.sum(axis=1, keepdims=True)) @ v[b], atol=6e-3)


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
def test_dynamic_elementwise_add_runs_its_runtime_tile_count(monkeypatch, tiles):
    # A register-bounded nl.dynamic_range (the library of 0.3; removed in 0.7, so served as 0.6);
    # the row offset is an SBUF counter advanced in the loop.
    monkeypatch.setenv("NKIC_NKI_VERSION", "0.6")
    import nki.language as nl
    add = kernel("experimental.dynamic_shapes.dynamic_elementwise_add", "dynamic_elementwise_add")
    a, b = rand(512, 1024).astype(nl.bfloat16), rand(512, 1024, seed=1).astype(nl.bfloat16)
    with pytest.warns(DeprecationWarning, match="dynamic_range"):
        out = add(a, b, np.array([[tiles]], np.int32))
    rows = tiles * 128
    np.testing.assert_array_equal(out[:rows], (a.astype(np.float32) + b.astype(np.float32)).astype(nl.bfloat16)[:rows])


@pytest.mark.parametrize("lnc", [1, 2])
def test_topk_reduce_sums_each_tokens_scattered_rows(lnc):
    """The reduction after an all_to_all_v (no collective itself): rows scattered over a padded
    buffer, each tagged with its token as an int32 packed into the last two bf16 columns."""
    import nki.language as nl
    tokens, k, hidden = 16, 4, 256
    rows = tokens * k + 8  # padding rows carry token -1
    rng = np.random.default_rng(0)
    values = rng.uniform(-1, 1, (rows, hidden)).astype(nl.bfloat16)
    token = np.full(rows, -1, np.int32)
    token[rng.permutation(rows)[:tokens * k]] = np.repeat(np.arange(tokens), k)
    packed = token.view(np.uint16).reshape(rows, 2).view(nl.bfloat16)
    reduce = kernel("experimental.collectives.topk_reduce", "topk_reduce")
    out = (reduce if lnc == 1 else reduce[lnc])(np.concatenate([values, packed], axis=1), tokens, k)
    want = np.stack([values[token == t].astype(np.float32).sum(axis=0) for t in range(tokens)])
    # The kernel accumulates in bf16 (dma_compute into its bf16 tile).
    np.testing.assert_allclose(out.astype(np.float32), want, atol=0.03)
