"""nki.collectives of a kernel launched at LNC=2 (kernel[2]) across the ranks of
nki.multi_rank_simulate: the replica group names logical ranks, and each physical core takes part
on its own, core c of a rank meeting core c of the other ranks of its list with its own SBUF and
private-HBM tensors; shared-HBM tensors are one allocation of the rank. Numbers against numpy,
and the shared-HBM rule a diagnostic at the call."""
import numpy as np
import pytest

import nki
import nki.collectives as ncc
import nki.isa as nisa
import nki.language as nl
import nki.lnc as lnc
from nki.collectives import ReplicaGroup
from nki_test_util import Markers, check_diag, trace_error

M = Markers(__file__)
RNG = np.random.default_rng(23)
ROWS, COLS = 4, 8


@pytest.fixture(autouse=True)
def _trn2(monkeypatch):
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn2")
    monkeypatch.delenv("NKI_LNC1_SHARED_HBM", raising=False)


def world(n):
    return ReplicaGroup([list(range(n))])


@nki.jit
def per_core(x, group, kind):
    """Core c runs ncc.<kind> on x[c], copied into its private HBM; out[c] is what it received."""
    c = nl.program_id(0)
    src = nl.ndarray(x.shape[1:], x.dtype, buffer=nl.private_hbm)
    nisa.dma_copy(dst=src, src=x[c])
    n = len(group.replica_groups[0]) if kind != "collective_permute" else 1
    rows = {"all_gather": ROWS * n, "reduce_scatter": ROWS // n}.get(kind, ROWS)
    dst = nl.ndarray((rows, COLS), x.dtype, buffer=nl.private_hbm)
    if kind == "collective_permute":
        ncc.collective_permute(srcs=[src], dsts=[dst], source_target_pairs=group.replica_groups)
    elif kind == "all_gather" or kind == "all_to_all":
        getattr(ncc, kind)(srcs=[src], dsts=[dst], replica_group=group, collective_dim=0)
    elif kind == "reduce_scatter":
        ncc.reduce_scatter(srcs=[src], dsts=[dst], replica_group=group, collective_dim=0, op=nl.add)
    else:
        ncc.all_reduce(srcs=[src], dsts=[dst], replica_group=group, op=nl.maximum)
    out = nl.ndarray((2, rows, COLS), x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out[c], src=dst)
    return out


def run(kernel, xs, *static):
    return nki.multi_rank_simulate(kernel[2], world_size=len(xs), per_rank_inputs=[((x, *static), {}) for x in xs])


def core_inputs(n):
    return [RNG.normal(size=(2, ROWS, COLS)).astype(np.float32) for _ in range(n)]


@pytest.mark.parametrize("n", [2, 4])
def test_each_core_all_reduces_with_the_same_core_of_the_other_ranks(n):
    xs = core_inputs(n)
    for got in run(per_core, xs, world(n), "all_reduce"):
        np.testing.assert_array_equal(got, np.max(np.stack(xs), axis=0))


def test_each_core_all_gathers_its_own_rows():
    xs = core_inputs(4)
    for got in run(per_core, xs, world(4), "all_gather"):
        for c in range(2):
            np.testing.assert_array_equal(got[c], np.concatenate([x[c] for x in xs]))


def test_each_core_reduce_scatters_within_each_list():
    xs = core_inputs(4)
    lists = [[0, 2], [1, 3]]
    outs = run(per_core, xs, ReplicaGroup(lists), "reduce_scatter")
    for members in lists:
        for at, r in enumerate(members):
            for c in range(2):
                total = xs[members[0]][c] + xs[members[1]][c]
                np.testing.assert_array_equal(outs[r][c], np.split(total, 2)[at])


def test_each_core_exchanges_blocks_all_to_all():
    xs = core_inputs(2)
    outs = run(per_core, xs, world(2), "all_to_all")
    for j in range(2):
        for c in range(2):
            want = np.concatenate([np.split(xs[i][c], 2)[j] for i in range(2)])
            np.testing.assert_array_equal(outs[j][c], want)


def test_each_core_permutes_to_the_same_core_of_its_target():
    xs = core_inputs(3)
    outs = run(per_core, xs, ReplicaGroup([[0, 1], [1, 2], [2, 0]]), "collective_permute")
    for r in range(3):
        np.testing.assert_array_equal(outs[r], xs[(r - 1) % 3])


@nki.jit
def sbuf_gather(x, group):
    """Core c all-gathers its SBUF tile x[c] along the free dim (collective_dim=1)."""
    c = nl.program_id(0)
    n = len(group.replica_groups[0])
    t = nl.ndarray((ROWS, COLS), x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x[c])
    g = nl.ndarray((ROWS, n * COLS), x.dtype, buffer=nl.sbuf)
    ncc.all_gather(srcs=[t], dsts=[g], replica_group=group, collective_dim=1)
    out = nl.ndarray((2, ROWS, n * COLS), x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out[c], src=g)
    return out


def test_each_core_gathers_its_sbuf_tile_along_the_free_dim():
    xs = core_inputs(4)
    for got in run(sbuf_gather, xs, world(4)):
        for c in range(2):
            np.testing.assert_array_equal(got[c], np.concatenate([x[c] for x in xs], axis=1))


@nki.jit
def shared_all_reduce(x, group):
    """Both cores issue the all-reduce of the shared input into one shared result; core c also
    all-gathers the shared input into its private HBM and returns its rows of it."""
    c = nl.program_id(0)
    n = len(group.replica_groups[0])
    res = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
    ncc.all_reduce(srcs=[x], dsts=[res], replica_group=group, op=nl.add)
    mine = nl.ndarray((n * 2, ROWS, COLS), x.dtype, buffer=nl.private_hbm)
    ncc.all_gather(srcs=[x], dsts=[mine], replica_group=group, collective_dim=0)
    gathered = nl.ndarray((2, n * 2, ROWS, COLS), x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=gathered[c], src=mine)
    return res, gathered


def test_shared_hbm_srcs_reach_a_shared_result_and_each_cores_private_copy():
    xs = core_inputs(4)
    want = sum(xs[1:], xs[0])  # in fp32, in the list's rank order
    for res, gathered in run(shared_all_reduce, xs, world(4)):
        np.testing.assert_array_equal(res, want)
        for c in range(2):
            np.testing.assert_array_equal(gathered[c], np.concatenate(xs))


@nki.jit
def swapped_then_reduced(x, group):
    """The cores swap their tiles with nki.lnc.sendrecv, then each all-reduces what it received."""
    c = nl.program_id(0)
    mine = nl.ndarray((ROWS, COLS), x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=mine, src=x[c])
    got = nl.ndarray((ROWS, COLS), x.dtype, buffer=nl.sbuf)
    lnc.sendrecv(src=mine, dst=got, send_to_rank=1 - c, recv_from_rank=1 - c)
    total = nl.ndarray((ROWS, COLS), x.dtype, buffer=nl.sbuf)
    ncc.all_reduce(srcs=[got], dsts=[total], replica_group=group, op=nl.add)
    out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out[c], src=total)
    return out


def test_a_collective_after_the_cores_exchange_reduces_what_each_received():
    xs = core_inputs(2)
    for got in run(swapped_then_reduced, xs, world(2)):
        for c in range(2):
            np.testing.assert_array_equal(got[c], xs[0][1 - c] + xs[1][1 - c])


@nki.jit
def logical_rank(x):
    """out[c] = x[c] * (rank + 1), the rank read from ncc.rank_id's register on core c."""
    c = nl.program_id(0)
    reg = ncc.rank_id()
    r = nl.ndarray((1, 1), nl.int32, buffer=nl.sbuf)
    nisa.register_store(r, reg)
    rf = nl.ndarray((1, 1), nl.float32, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=rf, data=r, op0=nl.add, operand0=1.0)
    t = nl.ndarray((1, COLS), x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x[c])
    nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=rf)
    out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out[c], src=t)
    return out


def test_rank_id_is_the_logical_rank_on_both_cores():
    x = RNG.normal(size=(2, 1, COLS)).astype(np.float32)
    for r, got in enumerate(run(logical_rank, [x] * 3)):
        np.testing.assert_array_equal(got, x * (r + 1))


def private_copy(t):
    p = nl.ndarray(t.shape, t.dtype, buffer=nl.private_hbm)
    nisa.dma_copy(dst=p, src=t)
    return p


@nki.jit
def variable(x, fill, meta, group, split):
    """Core c's ncc.all_to_all_v of x[c] by meta[c] into a copy of `fill`, plain or as prepare + trigger."""
    c = nl.program_id(0)
    args = dict(srcs=[private_copy(x[c])], dsts=[private_copy(fill)], replica_group=group,
                metadata_tensor=private_copy(meta[c]))
    if split:
        ncc.all_to_all_v_trigger(ncc.all_to_all_v_prepare(**args))
    else:
        ncc.all_to_all_v(**args)
    out = nl.ndarray((2, *fill.shape), fill.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out[c], src=args["dsts"][0])
    return out


@pytest.mark.parametrize("split", [False, True], ids=["plain", "prepare_trigger"])
def test_each_core_moves_the_counts_its_own_metadata_names(split):
    # Each core prepares its own metadata: the cores' prepare + trigger pairs run side by side.
    n, width = 2, 6
    rng = np.random.default_rng(5)
    counts = rng.integers(1, width // 2 + 1, size=(2, n, n))  # counts[c, i, j]: core c of rank i to rank j
    xs = [rng.normal(size=(2, n * width)).astype(np.float32) for _ in range(n)]
    metas = [np.stack([np.stack([counts[c, i], np.arange(n) * width, np.zeros(n)]) for c in range(2)]).astype(np.uint32)
             for i in range(n)]
    fill = np.full(n * width, -1.0, np.float32)
    outs = nki.multi_rank_simulate(variable[2], world_size=n, per_rank_inputs=[
        ((xs[r], fill, metas[r], world(n), split), {}) for r in range(n)])
    for j, out in enumerate(outs):
        for c in range(2):
            want = fill.copy()
            for i in range(n):
                want[i * width:i * width + counts[c, i, j]] = xs[i][c][j * width:j * width + counts[c, i, j]]
            np.testing.assert_array_equal(out[c], want)


@nki.jit
def private_into_shared(x, group):
    src = nl.ndarray(x.shape, x.dtype, buffer=nl.private_hbm)
    nisa.dma_copy(dst=src, src=x)
    res = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
    ncc.all_reduce(srcs=[src], dsts=[res], replica_group=group, op=nl.add)  # ERR:private_into_shared
    return res


@nki.jit
def ring_into_shared(x, group):
    src = nl.ndarray(x.shape, x.dtype, buffer=nl.private_hbm)
    nisa.dma_copy(dst=src, src=x)
    res = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
    ncc.collective_permute_implicit(srcs_by_channel=[[src]], dsts_by_channel=[[res]],  # ERR:ring_into_shared
                                    replica_group=group)
    return res


@nki.jit
def in_place_in_shared(x, group, viewed):
    a = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=a, src=x)
    flat = (ROWS * COLS,)
    srcs, dsts = ([a.reshape(flat)], [a.reshape(flat)]) if viewed else ([a], [a])
    ncc.all_reduce(srcs=srcs, dsts=dsts, replica_group=group, op=nl.add)  # ERR:in_place
    return a


@pytest.mark.parametrize("viewed", [False, True], ids=["tensor", "views"])
def test_a_shared_hbm_dst_is_another_tensor_than_the_srcs_at_lnc2(viewed):
    # Both cores' all-reduces would add into the one allocation: twice the sum.
    e = trace_error(in_place_in_shared, np.zeros((ROWS, COLS), np.float32), world(2), viewed, grid=(2,))
    check_diag(e, M, "err_unsupported_args", "at LNC=2 both cores run the collective, the second reading what "
               "the first wrote, so a dst in shared HBM is another tensor than the srcs; `a` is both",
               [("in_place", "ncc.")], api="ncc.all_reduce")


@nki.jit
def counts_into_shared(x, group):
    """all_to_all_v writes the receive counts into a metadata tensor in shared HBM."""
    meta = nl.ndarray((3, 2), nl.uint32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=meta, src=x[0:3, 0:2])
    dst = nl.ndarray((1, COLS), x.dtype, buffer=nl.private_hbm)
    ncc.all_to_all_v(srcs=[private_copy(x[0:1, :])], dsts=[dst], replica_group=group,  # ERR:counts_into_shared
                     metadata_tensor=meta)
    return meta


@pytest.mark.parametrize("kernel, marker, api", [
    (private_into_shared, "private_into_shared", "ncc.all_reduce"),
    (ring_into_shared, "ring_into_shared", "ncc.collective_permute_implicit")], ids=["all_reduce", "ring"])
def test_a_shared_hbm_dst_takes_shared_hbm_srcs_at_lnc2(kernel, marker, api):
    e = trace_error(kernel, np.zeros((ROWS, COLS), np.float32), world(2), grid=(2,))
    check_diag(e, M, "err_unsupported_args", "at LNC=2 each physical core runs the collective on its own data, so "
               "a dst in shared HBM (one allocation for both cores) takes srcs in shared HBM; `src` is in "
               "private_hbm, `res` is in shared_hbm", [(marker, "ncc.")], api=api)


def test_receive_counts_written_to_shared_hbm_take_shared_hbm_srcs_at_lnc2():
    e = trace_error(counts_into_shared, np.zeros((ROWS, COLS), np.uint32), world(2), grid=(2,))
    check_diag(e, M, "err_unsupported_args", "at LNC=2 each physical core runs the collective on its own data, so "
               "a dst in shared HBM (one allocation for both cores) takes srcs in shared HBM; `p` is in "
               "private_hbm, `meta` is in shared_hbm", [("counts_into_shared", "ncc.")], api="ncc.all_to_all_v")
