"""The MoE kernels of AWS's NKI library run unchanged under `import nki` against numpy:
token generation (moe_tkg) on both non-MX paths, the blockwise MoE matmuls on two cores
(kernel[2], with sendrecv and core_barrier) and the MoE block (moe_block_tkg[2])."""
import importlib

import numpy as np
import pytest

from nki_library_util import SRC, _library, kernel, rand, rmsnorm  # noqa: F401  (_library: the autouse fixture)

pytestmark = pytest.mark.skipif(SRC is None, reason="no nki-library checkout")


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
    # The masking loads expert_index only when it is in shared HBM, where kernel[2] puts the
    # inputs (under one core they are nl.hbm, and the kernel would compute on HBM directly).
    out = nki.jit(kernel("core.moe.moe_tkg.moe_tkg", "moe_tkg"))[2](
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


def blockwise_inputs(block, inter, experts=2, tokens=127, hidden_size=512):
    mask, slots, block_to_expert = blockwise_routing(tokens, 1, experts, block)
    hidden = rand(tokens + 1, hidden_size, seed=1)
    hidden[tokens] = 0  # the padding token
    affinity = rand(tokens + 1, experts, seed=2)
    affinity[:tokens] *= mask
    affinity[tokens] = 0
    gate_up = rand(experts, hidden_size, 2, inter, seed=3, scale=0.2) - 0.1
    down = rand(experts, inter, hidden_size, seed=4, scale=0.2) - 0.1
    return hidden, affinity, gate_up, down, slots, block_to_expert


@pytest.mark.parametrize("shard, block, inter, experts", [("intermediate", 256, 256, 2), ("block", 256, 128, 2),
                                                           ("block", 128, 128, 4)])
def test_blockwise_moe_matmul_on_two_cores(shard, block, inter, experts):
    cte = importlib.import_module("nkilib.core.moe.moe_cte.moe_cte_utils")
    types = importlib.import_module("nkilib.core.utils.common_types")
    tokens = 127
    hidden, affinity, gate_up, down, slots, block_to_expert = blockwise_inputs(block, inter, experts, tokens)
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


@pytest.mark.parametrize("static_blocks", [0, 1])
def test_blockwise_moe_matmul_hybrid_loops_on_two_cores(static_blocks, monkeypatch):
    # shard_on_I's hybrid path: the first blocks in an nl.sequential_range, the rest in an nl.dynamic_range
    # bounded by the sum of `conditions` (a register), with sendrecv and core_barrier in both loops.
    # nl.dynamic_range is nki 0.6's (removed in 0.7).
    monkeypatch.setenv("NKIC_NKI_VERSION", "0.6")
    cte = importlib.import_module("nkilib.core.moe.moe_cte.moe_cte_utils")
    types = importlib.import_module("nkilib.core.utils.common_types")
    tokens, block = 127, 256
    hidden, affinity, gate_up, down, slots, block_to_expert = blockwise_inputs(block, 256, 2, tokens)
    conditions = np.zeros((len(block_to_expert) + 1, 1), np.int32)  # every block holds tokens; the last entry 0
    conditions[:-1] = 1
    mm = kernel("core.moe.moe_cte.bwmm_shard_on_I", "blockwise_mm_baseline_shard_intermediate_hybrid")
    out = mm[2](conditions, hidden, affinity.reshape(-1, 1), gate_up, down, block, slots,
                block_to_expert.reshape(-1, 1), num_static_block=static_blocks, skip_dma=cte.SkipMode(False, False),
                compute_dtype=np.float32, is_tensor_update_accumulating=False,
                expert_affinities_scaling_mode=types.ExpertAffinityScaleMode.POST_SCALE,
                activation_function=types.ActFnType.SiLU)
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
