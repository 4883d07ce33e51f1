"""AWS's NKI kernel library's collectives run unchanged through nki.multi_rank_simulate against
numpy: the SBUF-to-SBUF all-gathers (one tile, and tiled over rows, also at LNC=2), every rank
receiving the ranks' inputs concatenated along the free dim; the fine-grained all-gather and all-gather-matmul
on ring permutes (ncc.collective_permute_implicit), through SBUF and through HBM, at LNC=1 (one
channel) and at LNC=2 (2 and 4 channels); and attention_block_tkg with KV-cache data
parallelism (KVDP=2: its Q heads gathered, the batch picked by ncc.rank_id, the outputs gathered
back)."""
import importlib

import numpy as np
import pytest

import nki
import nki.language as nl
from nki.collectives import ReplicaGroup
from nki_library_util import SRC, _library, kernel, module_past_torch, rand  # noqa: F401  (_library: autouse)

pytestmark = pytest.mark.skipif(SRC is None, reason="no nki-library checkout")


@pytest.mark.parametrize("name, rows, tp, dtype", [("allgather_sb2sb", 128, 4, np.float32),
                                                   ("allgather_sb2sb", 128, 2, nl.bfloat16),
                                                   ("allgather_sb2sb_tiled", 512, 4, np.float32)])
def test_sbuf_to_sbuf_all_gather(name, rows, tp, dtype):
    gather = kernel("experimental.collectives.sb2sb_allgather", name)
    xs = [np.random.default_rng(r).normal(size=(rows, 32)).astype(dtype) for r in range(tp)]
    group = ReplicaGroup([list(range(tp))])
    outs = nki.multi_rank_simulate(gather, world_size=tp, per_rank_inputs=[((x, group, tp), {}) for x in xs])
    want = np.concatenate([np.asarray(x, np.float32) for x in xs], axis=1)
    assert len(outs) == tp
    for out in outs:
        np.testing.assert_array_equal(np.asarray(out, np.float32), want)


def test_tiled_sbuf_to_sbuf_all_gather_at_lnc2():
    # Under kernel[2] each core gathers its own half of the rows (by nl.program_id) from the same
    # core of the other ranks.
    tp, rows = 4, 512
    gather = kernel("experimental.collectives.sb2sb_allgather", "allgather_sb2sb_tiled")
    xs = [np.random.default_rng(r).normal(size=(rows, 32)).astype(np.float32) for r in range(tp)]
    group = ReplicaGroup([list(range(tp))])
    outs = nki.multi_rank_simulate(gather[2], world_size=tp, per_rank_inputs=[((x, group, tp), {}) for x in xs])
    for out in outs:
        np.testing.assert_array_equal(out, np.concatenate(xs, axis=1))


@pytest.mark.parametrize("force_hbm_cc", [False, True], ids=["sbuf_ring", "hbm_ring"])
@pytest.mark.parametrize("dtype", [np.float32, nl.bfloat16], ids=["fp32", "bf16"])
def test_fine_grained_all_gather_over_a_ring(force_hbm_cc, dtype):
    # Rank r's rows travel the ring of ncc.collective_permute_implicit; each step's rows land at the
    # slot ncc.collective_permute_implicit_current_processing_rank_id names.
    tp, rows, cols = 4, 8, 16
    gather = kernel("experimental.collectives.fg_allgather", "fine_grained_allgather")
    xs = [np.random.default_rng(r).normal(size=(rows, cols)).astype(dtype) for r in range(tp)]
    outs = nki.multi_rank_simulate(gather, world_size=tp, per_rank_inputs=[((x, tp, 1, force_hbm_cc), {}) for x in xs])
    want = np.concatenate([np.asarray(x, np.float32) for x in xs])
    for out in outs:
        np.testing.assert_array_equal(np.asarray(out, np.float32).reshape(tp * rows, cols), want)


@pytest.mark.parametrize("force_hbm_cc", [False, True], ids=["sbuf_ring", "hbm_ring"])
def test_all_gather_compute_matmul_over_a_ring(force_hbm_cc):
    # The gathered lhs times each rank's own column shard of rhs, the matmuls overlapping the ring steps.
    tp, rows, k, n = 4, 8, 64, 32
    fgcc = kernel("experimental.collectives.fgcc", "allgather_compute_matmul")
    lhs = [rand(rows, k, seed=r) - 0.5 for r in range(tp)]
    rhs = [rand(k, n, seed=10 + r) - 0.5 for r in range(tp)]
    outs = nki.multi_rank_simulate(fgcc, world_size=tp,
                                   per_rank_inputs=[((a, b, tp, 1, force_hbm_cc), {}) for a, b in zip(lhs, rhs)])
    gathered = np.concatenate(lhs)
    for r, out in enumerate(outs):
        np.testing.assert_allclose(out.reshape(tp * rows, n), gathered @ rhs[r], rtol=1e-5, atol=1e-5)


# At LNC=2 (kernel[2]) the library splits each rank's rows over its two cores and over CHANNEL_N ring
# channels: 2 for 4 ranks, 4 for 64 ranks (one list: every device of the node). Each core of a rank
# permutes its own rows to the same core of the next rank.
LNC2_RINGS = [(4, False), (4, True), (64, False), (64, True)]
LNC2_IDS = ["4ranks_2channels_sbuf", "4ranks_2channels_hbm", "64ranks_4channels_sbuf", "64ranks_4channels_hbm"]


@pytest.mark.parametrize("tp, force_hbm_cc", LNC2_RINGS, ids=LNC2_IDS)
def test_fine_grained_all_gather_at_lnc2(tp, force_hbm_cc):
    rows, cols = 8, 16
    gather = kernel("experimental.collectives.fg_allgather", "fine_grained_allgather")
    xs = [np.random.default_rng(r).normal(size=(rows, cols)).astype(np.float32) for r in range(tp)]
    outs = nki.multi_rank_simulate(gather[2], world_size=tp,
                                   per_rank_inputs=[((x, tp, 1, force_hbm_cc), {}) for x in xs])
    want = np.concatenate(xs)
    for out in outs:
        np.testing.assert_array_equal(np.asarray(out).reshape(tp * rows, cols), want)


@pytest.mark.parametrize("tp, force_hbm_cc", LNC2_RINGS, ids=LNC2_IDS)
def test_all_gather_compute_matmul_at_lnc2(tp, force_hbm_cc):
    rows, k, n = 8, 64, 32
    fgcc = kernel("experimental.collectives.fgcc", "allgather_compute_matmul")
    lhs = [rand(rows, k, seed=r) - 0.5 for r in range(tp)]
    rhs = [rand(k, n, seed=1000 + r) - 0.5 for r in range(tp)]
    outs = nki.multi_rank_simulate(fgcc[2], world_size=tp,
                                   per_rank_inputs=[((a, b, tp, 1, force_hbm_cc), {}) for a, b in zip(lhs, rhs)])
    gathered = np.concatenate(lhs)
    for r, out in enumerate(outs):
        np.testing.assert_allclose(out.reshape(tp * rows, n), gathered @ rhs[r], rtol=1e-5, atol=1e-5)


def test_attention_block_tkg_with_kv_data_parallelism_over_two_ranks():
    # Rank r holds q head r (its w_q shard) and the KV cache of batch r; both hold the token of each batch.
    batch, hidden, d, s_ctx, cached = 2, 256, 64, 256, 200
    types = importlib.import_module("nkilib.core.utils.common_types")
    block = module_past_torch("experimental.transformer.attention_block_tkg").attention_block_tkg
    x = rand(batch, 1, hidden) - 0.5
    w_kv = (rand(hidden, 2 * d, seed=1) - 0.5) * 0.2
    w_q = [(rand(hidden, d, seed=2 + r) - 0.5) * 0.2 for r in range(2)]
    caches = [(rand(1, s_ctx, d, seed=4 + r) - 0.5, rand(1, s_ctx, d, seed=6 + r) - 0.5) for r in range(2)]
    mask = np.zeros((s_ctx, 1, 2, 1), np.float32)
    mask[:cached] = mask[-1] = 1  # the cached tokens and the active one in the last slot
    none = types.QuantizationType.NONE
    group = ReplicaGroup([[0, 1]])

    def rank_inputs(r):
        args = (x, None, False, None, None, np.concatenate([w_q[r], w_kv], axis=1), None, none, None, None,
                False, 0.0, None, None, None, None, True, False, 0.0, None, None, False, None, caches[r][0],
                caches[r][1], mask, None, False, None, None, None, none, None, None, False, False)
        return args, {"KVDP": 2, "KVDP_replica_group": group}

    outs = nki.multi_rank_simulate(block, world_size=2, per_rank_inputs=[rank_inputs(0), rank_inputs(1)])

    def attention(head, b):
        q, k, v = x[b, 0] @ w_q[head], x[b, 0] @ w_kv[:, :d], x[b, 0] @ w_kv[:, d:]
        keys = np.concatenate([caches[b][0][0, :cached], k[None]])
        values = np.concatenate([caches[b][1][0, :cached], v[None]])
        scores = keys @ (q / np.sqrt(d))
        p = np.exp(scores - scores.max())
        return p / p.sum() @ values

    for r in range(2):  # rank r ends with its head's output for every batch
        np.testing.assert_allclose(outs[r][0], np.stack([attention(r, b) for b in range(batch)], axis=1),
                                   rtol=1e-5, atol=1e-6)
