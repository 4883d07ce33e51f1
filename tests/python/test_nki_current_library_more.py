"""More of AWS's NKI kernel library run unchanged under `import nki` against numpy: the
kernels that call other @nki.jit kernels (moe_cte, attention_block_tkg), the context-encoding
MLP, and the subkernels and MoE matmuls written for two cores (kernel[2])."""
import importlib

import numpy as np
import pytest

from nki_library_util import SRC, _library, kernel, module_past_torch, rand, rmsnorm  # noqa: F401  (_library: autouse)
from test_nki_current_library_moe import blockwise_inputs, blockwise_reference, blockwise_routing, silu

pytestmark = pytest.mark.skipif(SRC is None, reason="no nki-library checkout")


def blockwise_options():
    cte = importlib.import_module("nkilib.core.moe.moe_cte.moe_cte_utils")
    types = importlib.import_module("nkilib.core.utils.common_types")
    return dict(skip_dma=cte.SkipMode(False, False), compute_dtype=np.float32, is_tensor_update_accumulating=False,
                expert_affinities_scaling_mode=types.ExpertAffinityScaleMode.POST_SCALE)


def check_blockwise(out, hidden, affinity, gate_up, down, slots, block_to_expert, block):
    out = out[0] if isinstance(out, tuple) else out
    want = blockwise_reference(hidden, affinity, gate_up, down, slots, block_to_expert, block)
    np.testing.assert_allclose(out[:-1], want[:-1], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("implementation, inter", [("shard_on_block", 128), ("shard_on_i", 256)])
def test_moe_cte_calls_its_jit_blockwise_matmul(implementation, inter):
    moe_cte = importlib.import_module("nkilib.core.moe.moe_cte.moe_cte")
    types = importlib.import_module("nkilib.core.utils.common_types")
    block = 256
    hidden, affinity, gate_up, down, slots, block_to_expert = blockwise_inputs(block, inter)
    spec = moe_cte.MoECTESpec(implementation=getattr(moe_cte.MoECTEImplementation, implementation))
    out = moe_cte.moe_cte[2](hidden, affinity.reshape(-1, 1), gate_up, down, slots, block_to_expert.reshape(-1, 1),
                             block, spec, activation_function=types.ActFnType.SiLU, **blockwise_options())
    check_blockwise(out, hidden, affinity, gate_up, down, slots, block_to_expert, block)


def test_moe_cte_calls_its_jit_hybrid_blockwise_matmul(monkeypatch):
    # shard_on_i_hybrid: one block in a sequential_range, the rest in an nl.dynamic_range (nki 0.6's) bounded by
    # the sum of `conditions`, both with sendrecv and core_barrier on the two cores.
    monkeypatch.setenv("NKIC_NKI_VERSION", "0.6")
    moe_cte = importlib.import_module("nkilib.core.moe.moe_cte.moe_cte")
    types = importlib.import_module("nkilib.core.utils.common_types")
    block = 256
    hidden, affinity, gate_up, down, slots, block_to_expert = blockwise_inputs(block, 256)
    conditions = np.zeros((len(block_to_expert) + 1, 1), np.int32)
    conditions[:-1] = 1
    spec = moe_cte.MoECTESpec(implementation=moe_cte.MoECTEImplementation.shard_on_i_hybrid,
                              shard_on_I=moe_cte.ShardOnIConfig(num_static_block=1))
    out = moe_cte.moe_cte[2](hidden, affinity.reshape(-1, 1), gate_up, down, slots, block_to_expert.reshape(-1, 1),
                             block, spec, conditions=conditions, activation_function=types.ActFnType.SiLU,
                             **blockwise_options())
    check_blockwise(out, hidden, affinity, gate_up, down, slots, block_to_expert, block)


def test_bwmm_shard_on_hidden_on_two_cores():
    block = 128
    hidden, affinity, gate_up, down, slots, block_to_expert = blockwise_inputs(block, 128)
    mm = kernel("experimental.moe.forward.bwmm_shard_on_H", "blockwise_mm_baseline_shard_hidden")
    out = mm[2](hidden, affinity.reshape(-1, 1), gate_up, down, block, slots, block_to_expert.reshape(-1, 1),
                **blockwise_options())
    check_blockwise(out, hidden, affinity, gate_up, down, slots, block_to_expert, block)


# attention_block_tkg: QKV (the jit qkv kernel), optional RMSNorm and RoPE, attention over a flat KV
# cache whose last slot is the active token, then optionally the output projection (the jit
# output_projection_tkg) and the cache update.
HIDDEN, D_HEAD, Q_HEADS, S_CTX, CACHED = 256, 64, 2, 256, 200


def attention_block_inputs():
    x = rand(1, 1, HIDDEN) - 0.5
    gamma = rand(1, HIDDEN, seed=1)
    w_qkv = (rand(HIDDEN, D_HEAD * (Q_HEADS + 2), seed=2) - 0.5) * 0.2
    k_cache, v_cache = rand(1, S_CTX, D_HEAD, seed=3) - 0.5, rand(1, S_CTX, D_HEAD, seed=4) - 0.5
    w_out = (rand(Q_HEADS * D_HEAD, HIDDEN, seed=5) - 0.5) * 0.2
    cos, sin = rand(D_HEAD // 2, 1, 1, seed=6), rand(D_HEAD // 2, 1, 1, seed=7)
    return x, gamma, w_qkv, k_cache, v_cache, w_out, cos, sin


def attention_block_reference(x, gamma, w_qkv, k_cache, v_cache, w_out, cos, sin, norm, rope, project):
    """(out, k, v): out [heads, d] or, projected, [1, H]; k and v the active token's [d]."""
    x = rmsnorm(x[0], gamma) if norm else x[0]
    qkv = x @ w_qkv
    q = qkv[0, :Q_HEADS * D_HEAD].reshape(Q_HEADS, D_HEAD)
    k, v = qkv[0, Q_HEADS * D_HEAD:(Q_HEADS + 1) * D_HEAD], qkv[0, (Q_HEADS + 1) * D_HEAD:]
    if rope:  # contiguous halves
        def rotate(t):
            a, b = t[..., :D_HEAD // 2], t[..., D_HEAD // 2:]
            return np.concatenate([a * cos[:, 0, 0] - b * sin[:, 0, 0], b * cos[:, 0, 0] + a * sin[:, 0, 0]], axis=-1)
        q, k = rotate(q), rotate(k)
    keys = np.concatenate([k_cache[0, :CACHED], k[None]])
    values = np.concatenate([v_cache[0, :CACHED], v[None]])
    scores = q / np.sqrt(D_HEAD) @ keys.T
    p = np.exp(scores - scores.max(axis=1, keepdims=True))
    out = p / p.sum(axis=1, keepdims=True) @ values
    return (out.reshape(1, -1) @ w_out if project else out), k, v


def run_attention_block(lnc, inputs, norm=False, rope=False, project=False, update_at=None):
    types = importlib.import_module("nkilib.core.utils.common_types")
    block = module_past_torch("experimental.transformer.attention_block_tkg").attention_block_tkg
    x, gamma, w_qkv, k_cache, v_cache, w_out, cos, sin = inputs
    mask = np.zeros((S_CTX, 1, Q_HEADS, 1), np.float32)
    mask[:CACHED] = mask[-1] = 1
    none = types.QuantizationType.NONE
    update = None if update_at is None else np.full((1, 1), update_at, np.uint32)
    run = block[lnc] if lnc > 1 else block
    return run(x, None, norm, 1e-6 if norm else None, gamma if norm else None, w_qkv, None, none, None, None,
               False, 0.0, None, None, cos if rope else None, sin if rope else None, True, False, 0.0, None, None,
               False, None, k_cache, v_cache, mask, None, update_at is not None, update,
               w_out if project else None, None, none, None, None, False, False)


@pytest.mark.parametrize("lnc, norm, rope, project", [(1, False, False, False), (1, False, True, False),
                                                      (2, True, True, True)])
def test_attention_block_tkg(lnc, norm, rope, project):
    inputs = attention_block_inputs()
    out, k_out, v_out = run_attention_block(lnc, inputs, norm, rope, project)
    want, k, v = attention_block_reference(*inputs, norm, rope, project)
    np.testing.assert_allclose(out.reshape(want.shape) if project else out[0, :, :, 0], want, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(k_out[:, 0, 0], k, rtol=1e-5, atol=1e-6)  # the new token's K and V
    np.testing.assert_allclose(v_out[0, 0, 0], v, rtol=1e-5, atol=1e-6)


def test_attention_block_tkg_bfloat16_updates_the_cache():
    import nki.language as nl
    inputs = [a.astype(nl.bfloat16) for a in attention_block_inputs()]  # the cache update transposes bf16 only
    f32 = [a.astype(np.float32) for a in inputs]  # before the kernel writes the caches in place
    out, k_cache, v_cache = run_attention_block(2, inputs, norm=True, rope=True, project=True, update_at=150)
    want, k, v = attention_block_reference(*f32, True, True, True)  # attention reads the cache before the update
    scale = np.abs(want).max()
    np.testing.assert_allclose(out.astype(np.float32).reshape(want.shape), want, atol=1e-2 * scale)
    np.testing.assert_allclose(k_cache[0, 150].astype(np.float32), k, atol=2e-2 * np.abs(k).max())
    np.testing.assert_allclose(v_cache[0, 150].astype(np.float32), v, atol=2e-2 * np.abs(v).max())
    rest = np.arange(S_CTX) != 150  # the other slots keep their values
    np.testing.assert_array_equal(k_cache[0, rest].astype(np.float32), f32[3][0, rest])


@pytest.mark.parametrize("lnc, tokens, norm", [(1, 256, False), (2, 512, True)])
def test_mlp_cte_silu_gate(lnc, tokens, norm):
    import nki
    parameters = importlib.import_module("nkilib.core.mlp.mlp_parameters")
    cte = importlib.import_module("nkilib.core.mlp.mlp_cte.mlp_cte")
    types = importlib.import_module("nkilib.core.utils.common_types")

    def run(hidden, gate, up, down, gamma, out):
        options = dict(normalization_weights_tensor=gamma, normalization_type=types.NormType.RMS_NORM) if norm else {}
        cte.mlp_cte(parameters.MLPParameters(hidden, gate, up, down, output_dtype=hidden.dtype, **options), out, None)
        return out

    hidden, gate, up = rand(1, tokens, 256) - 0.5, rand(256, 512, seed=1) - 0.5, rand(256, 512, seed=2) - 0.5
    down, gamma = rand(512, 256, seed=3) - 0.5, rand(1, 256, seed=4)
    mlp = nki.jit(run)
    out = (mlp[lnc] if lnc > 1 else mlp)(hidden, gate, up, down, gamma, np.zeros((1, tokens, 256), np.float32))
    x = rmsnorm(hidden, gamma) if norm else hidden
    want = silu(x @ gate) * (x @ up) @ down
    # fp32 inputs run in bf16 (the kernel's compute dtype): about 3 significant digits.
    np.testing.assert_allclose(out, want, atol=1e-2 * np.abs(want).max())


@pytest.mark.parametrize("tokens, columns, chunk", [(256, 16, None), (256, 20, 128)])
def test_find_nonzero_indices_on_two_cores(tokens, columns, chunk):
    x = (np.random.default_rng(3).random((tokens, columns)) > 0.7).astype(np.float32)
    find = kernel("core.subkernels.find_nonzero_indices", "find_nonzero_indices")
    indices, counts = find[2](x, chunk_size=chunk)
    for c in range(columns):
        nz = np.flatnonzero(x[:, c])
        np.testing.assert_array_equal(indices[c], list(nz) + [-1] * (tokens - len(nz)))
        assert counts[c] == len(nz)


def test_find_nonzero_indices_of_a_runtime_column_range():
    x = (np.random.default_rng(3).random((256, 32)) > 0.7).astype(np.float32)
    find = kernel("core.subkernels.find_nonzero_indices", "find_nonzero_indices")
    indices, counts = find[2](x, col_start_id=np.array([4], np.int32), n_cols=8)
    for c in range(8):
        nz = np.flatnonzero(x[:, 4 + c])
        np.testing.assert_array_equal(indices[c], list(nz) + [-1] * (256 - len(nz)))
        assert counts[c] == len(nz)


@pytest.mark.parametrize("with_start", [False, True])
def test_indexed_flatten_on_two_cores(with_start):
    rows, length, f_len, output_len = 4, 512, 16, 1024
    x = np.random.default_rng(0).integers(0, 1000, (rows, length)).astype(np.int32)
    offsets = np.array([0, 40, 2000, 96], np.int32)  # row 1 runs past the end, rows 2 and 3 start past it
    start = None
    if with_start:  # the offsets are read from position 2 on
        offsets, start = np.concatenate([[5, 5], offsets]).astype(np.int32), np.array([2], np.int32)
    flatten = kernel("core.subkernels.indexed_flatten", "indexed_flatten")
    out = flatten[2](x, f_len, output_len, offsets, row_offsets_start=start)
    want = np.full((output_len // f_len, f_len), -1, np.int32)
    for r, offset in enumerate(offsets[-rows:]):
        for p in range(length // f_len):
            if offset + p < output_len // f_len:
                want[offset + p] = x[r, p * f_len:(p + 1) * f_len]
    np.testing.assert_array_equal(out.reshape(want.shape), want)


def test_blockwise_moe_backward_on_two_cores():
    import nki.language as nl
    tokens, hidden_size, experts, block, inter = 127, 256, 2, 256, 128
    hidden, affinity, gate_up, down, slots, block_to_expert = blockwise_inputs(block, inter, experts, tokens,
                                                                               hidden_size)
    x = hidden - 0.5
    x[tokens] = 0  # the padding token
    d_out = rand(tokens + 1, hidden_size, seed=5) - 0.5
    d_out[tokens] = 0
    # The forward pass per block: its checkpoints (gate and up projections transposed, the
    # unscaled down projection) and, by hand, every gradient of out = affinity * MLP(x).
    blocks = len(block_to_expert)
    gate_up_ckpt = np.zeros((blocks, 2, inter, block), np.float32)
    down_ckpt = np.zeros((blocks, block, hidden_size), np.float32)
    dx, d_affinity = np.zeros_like(x), np.zeros_like(affinity)
    d_gate_up, d_down = np.zeros_like(gate_up), np.zeros_like(down)
    for b, e in enumerate(block_to_expert):
        ids = slots[b * block:(b + 1) * block]
        xb = x[ids]
        g, u = xb @ gate_up[e, :, 0], xb @ gate_up[e, :, 1]
        gate_up_ckpt[b, 0], gate_up_ckpt[b, 1] = g.T, u.T
        sig = 1 / (1 + np.exp(-g))
        h = g * sig * u
        down_ckpt[b] = y = h @ down[e]
        np.add.at(d_affinity, (ids, e), (d_out[ids] * y).sum(axis=1))
        dy = d_out[ids] * affinity[ids, e][:, None]
        d_down[e] += h.T @ dy
        dh = dy @ down[e].T
        dg, du = dh * u * sig * (1 + g * (1 - sig)), dh * g * sig
        d_gate_up[e, :, 0] += xb.T @ dg
        d_gate_up[e, :, 1] += xb.T @ du
        np.add.at(dx, ids, dg @ gate_up[e, :, 0].T + du @ gate_up[e, :, 1].T)
    bwd = kernel("experimental.moe.bwd.blockwise_mm_backward", "blockwise_mm_bwd")
    got = bwd[2](x, affinity.reshape(-1, 1), gate_up, down, gate_up_ckpt, down_ckpt, slots,
                 block_to_expert.reshape(-1, 1), d_out, block, compute_dtype=nl.float32,
                 is_tensor_update_accumulating=False)
    for have, want in zip(got, [dx, d_affinity.reshape(-1, 1), d_gate_up, d_down]):
        np.testing.assert_allclose(have[:-1] if want is dx else have, want[:-1] if want is dx else want,
                                   rtol=1e-5, atol=1e-6)
