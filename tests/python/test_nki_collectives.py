"""nki.collectives across ranks (NKI_07_08_API.md §7.2, §8): each call one instruction, the ranks
of nki.multi_rank_simulate meeting at it, numbers against numpy; every rule, the rendezvous'
deadlock and mismatch diagnostics and the uniform-arguments check at the user's line."""
import numpy as np
import pytest

import nki
import nkic
import nki.collectives as ncc
import nki.isa as nisa
import nki.language as nl
import nki.lnc as lnc
from nki.collectives import ReplicaGroup, rg_partition_op
from nki_test_util import Markers, check_diag, trace_error

M = Markers(__file__)
RNG = np.random.default_rng(11)


@pytest.fixture(autouse=True)
def _trn2(monkeypatch):
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn2")
    monkeypatch.delenv("NKI_LNC1_SHARED_HBM", raising=False)


def world(n):
    return ReplicaGroup([list(range(n))])


def private_copy(a):
    """`a` copied into private HBM, where collectives at LNC=1 read."""
    p = nl.ndarray(a.shape, a.dtype, buffer=nl.private_hbm)
    nisa.dma_copy(dst=p, src=a)
    return p


def returned(t):
    out = nl.ndarray(t.shape, t.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=t)
    return out


@nki.jit
def all_reduce_kernel(a, group, op):
    res = nl.ndarray(a.shape, a.dtype, buffer=nl.private_hbm)
    ncc.all_reduce(srcs=[private_copy(a)], dsts=[res], replica_group=group, op=op)  # ERR:reduce_call
    return returned(res)


def run(kernel, inputs, *static):
    return nki.multi_rank_simulate(kernel, world_size=len(inputs), per_rank_inputs=[((x, *static), {}) for x in inputs])


@pytest.mark.parametrize("n", [2, 4, 8])
@pytest.mark.parametrize("op, ref", [(nl.add, np.sum), (nl.maximum, np.max), (nl.minimum, np.min)],
                         ids=["add", "maximum", "minimum"])
def test_all_reduce_over_the_world(n, op, ref):
    xs = [RNG.normal(size=(4, 8)).astype(np.float32) for _ in range(n)]
    got = run(all_reduce_kernel, xs, world(n), op)
    want = ref(np.stack(xs).astype(np.float32), axis=0)
    assert len(got) == n
    for r in range(n):
        np.testing.assert_allclose(got[r], want, rtol=1e-6)


@pytest.mark.parametrize("op, lists", [(rg_partition_op.div, [[0, 1, 2, 3], [4, 5, 6, 7]]),
                                       (rg_partition_op.mod, [[0, 4], [1, 5], [2, 6], [3, 7]]),
                                       (rg_partition_op.bitwise_and, [list(range(8))])], ids=["div", "mod", "and"])
def test_all_reduce_within_each_list_of_a_partition_op_group(op, lists):
    group = ReplicaGroup.from_partition_op(8, op, 0 if op is rg_partition_op.bitwise_and else 4)
    assert group == ReplicaGroup(lists)
    xs = [np.full((2, 4), 10.0 ** r, np.float32) for r in range(8)]
    got = run(all_reduce_kernel, xs, group, nl.add)
    for members in lists:
        for r in members:
            np.testing.assert_array_equal(got[r], np.full((2, 4), sum(10.0 ** m for m in members), np.float32))


def test_all_reduce_sums_in_fp32_and_rounds_once_to_bf16():
    # 1 + 2^-9 + 2^-9: in fp32 1 + 2^-8, a bf16 tie between 1 and 1 + 2^-7 that rounds to even (1);
    # with 1 + 2^-8 + 2^-8 the fp32 sum 1 + 2^-7 is exact in bf16. Rounding after each add would give 1 both times.
    xs = [np.array([[1.0, 1.0]], np.float32), np.array([[2.0 ** -9, 2.0 ** -8]], np.float32),
          np.array([[2.0 ** -9, 2.0 ** -8]], np.float32)]
    bf16 = [x.astype(nl.bfloat16) for x in xs]
    got = run(all_reduce_kernel, bf16, world(3), nl.add)
    np.testing.assert_array_equal(np.asarray(got[0], np.float32), [[1.0, 1.0 + 2.0 ** -7]])


@nki.jit
def all_gather_hbm(a, group):
    res = nl.ndarray((a.shape[0] * len(group.replica_groups[0]), a.shape[1]), a.dtype, buffer=nl.private_hbm)
    ncc.all_gather(srcs=[private_copy(a)], dsts=[res], replica_group=group, collective_dim=0)
    return returned(res)


@nki.jit
def all_gather_sbuf(a, group):
    """The kernel library's SBUF-to-SBUF form: gathered along the free dim (collective_dim=1)."""
    n = len(group.replica_groups[0])
    t = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    g = nl.ndarray((a.shape[0], a.shape[1] * n), a.dtype, buffer=nl.sbuf)
    ncc.all_gather(srcs=[t], dsts=[g], replica_group=group, collective_dim=1)
    return returned(g)


def test_all_gather_concatenates_the_list_in_list_order():
    xs = [RNG.normal(size=(3, 5)).astype(np.float32) for _ in range(4)]
    group = ReplicaGroup.from_partition_op(4, rg_partition_op.mod, 2)  # [[0, 2], [1, 3]]
    got = run(all_gather_hbm, xs, group)
    for r in range(4):
        np.testing.assert_array_equal(got[r], np.concatenate([xs[r % 2], xs[r % 2 + 2]]))
    got = run(all_gather_sbuf, xs, group)
    for r in range(4):
        np.testing.assert_array_equal(got[r], np.concatenate([xs[r % 2], xs[r % 2 + 2]], axis=1))


@nki.jit
def reduce_scatter_kernel(a, group):
    n = len(group.replica_groups[0])
    res = nl.ndarray((a.shape[0] // n, a.shape[1]), a.dtype, buffer=nl.private_hbm)
    ncc.reduce_scatter(srcs=[private_copy(a)], dsts=[res], replica_group=group, collective_dim=0, op=nl.add)
    return returned(res)


@nki.jit
def all_to_all_kernel(a, group):
    res = nl.ndarray(a.shape, a.dtype, buffer=nl.private_hbm)
    ncc.all_to_all(srcs=[private_copy(a)], dsts=[res], replica_group=group, collective_dim=0)
    return returned(res)


@pytest.mark.parametrize("n", [2, 4, 8])
def test_reduce_scatter_and_all_to_all(n):
    xs = [RNG.integers(-8, 8, size=(2 * n, 3)).astype(np.float32) for _ in range(n)]
    total = np.sum(xs, axis=0)
    got = run(reduce_scatter_kernel, xs, world(n))
    for r in range(n):
        np.testing.assert_array_equal(got[r], total[2 * r:2 * r + 2])
    got = run(all_to_all_kernel, xs, world(n))
    for r in range(n):
        np.testing.assert_array_equal(got[r], np.concatenate([xs[m][2 * r:2 * r + 2] for m in range(n)]))


@nki.jit
def coalesced_all_reduce(a, b, group):
    ra = nl.ndarray(a.shape, a.dtype, buffer=nl.private_hbm)
    rb = nl.ndarray(b.shape, b.dtype, buffer=nl.private_hbm)
    ncc.all_reduce(srcs=[private_copy(a), private_copy(b)], dsts=[ra, rb], replica_group=group, op=nl.maximum)
    return returned(ra), returned(rb)


def test_a_coalesced_all_reduce_reduces_each_pair():
    xs = [(RNG.normal(size=(2, 3)).astype(np.float32), RNG.normal(size=(5,)).astype(np.float32)) for _ in range(2)]
    got = nki.multi_rank_simulate(coalesced_all_reduce, world_size=2,
                                  per_rank_inputs={r: ((a, b, world(2)), {}) for r, (a, b) in enumerate(xs)})
    for ra, rb in got:
        np.testing.assert_array_equal(ra, np.maximum(xs[0][0], xs[1][0]))
        np.testing.assert_array_equal(rb, np.maximum(xs[0][1], xs[1][1]))


@nki.jit
def ring_permute(a, n):
    res = nl.ndarray(a.shape, a.dtype, buffer=nl.private_hbm)
    nisa.dma_copy(dst=res, src=a)
    ncc.collective_permute(srcs=[private_copy(a)], dsts=[res], source_target_pairs=[[r, r + 1] for r in range(n - 1)])
    return returned(res)


def test_collective_permute_sends_along_its_pairs():
    xs = [np.full((2, 2), r, np.float32) for r in range(3)]
    got = run(ring_permute, xs, 3)
    np.testing.assert_array_equal(np.stack(got), np.stack([xs[0], xs[0], xs[1]]))  # rank 0 keeps its own


@nki.jit
def rank_scaled(a):
    """out = a * (rank + 1), the rank read from ncc.rank_id's register."""
    reg = ncc.rank_id()
    r = nl.ndarray((1, 1), nl.int32, buffer=nl.sbuf)
    nisa.register_store(r, reg)
    rf = nl.ndarray((1, 1), nl.float32, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=rf, data=r, op0=nl.add, operand0=1.0)
    t = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=rf)
    return returned(t)


def test_rank_id_is_each_ranks_own():
    a = np.ones((1, 4), np.float32)
    got = run(rank_scaled, [a] * 4)
    for r in range(4):
        np.testing.assert_array_equal(got[r], a * (r + 1))
    np.testing.assert_array_equal(nki.simulate(rank_scaled)(a), a)  # nki.simulate runs rank 0


def test_a_collective_returns_its_instruction():
    seen = []

    @nki.jit
    def k(a, group):
        res = nl.ndarray(a.shape, a.dtype, buffer=nl.private_hbm)
        seen.append(ncc.all_reduce(srcs=[private_copy(a)], dsts=[res], replica_group=group, op=nl.add))
        return returned(res)

    run(k, [np.ones((1, 2), np.float32)] * 2, world(2))
    assert isinstance(seen[0], nisa.NkiInstruction)


def test_a_shared_hbm_destination_needs_nki_lnc1_shared_hbm(monkeypatch):
    @nki.jit
    def k(a, group):
        res = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
        ncc.all_reduce(srcs=[private_copy(a)], dsts=[res], replica_group=group, op=nl.add)  # ERR:shared_dst
        return res

    xs = [np.full((1, 2), r, np.float32) for r in range(2)]
    e = trace_error(k, xs[0], world(2))
    check_diag(e, M, "err_unsupported_args", "at LNC=1 dsts are in private HBM, or in shared HBM when "
               "NKI_LNC1_SHARED_HBM=1 is set; `res` is in shared_hbm", [("shared_dst", "ncc.")], api="ncc.all_reduce")
    monkeypatch.setenv("NKI_LNC1_SHARED_HBM", "1")
    for got in run(k, xs, world(2)):
        np.testing.assert_array_equal(got, np.ones((1, 2), np.float32))


# --- rules: each a diagnostic at the call --------------------------------------------------------


@nki.jit
def mixed_memories(a, group):
    t = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    res = nl.ndarray(a.shape, a.dtype, buffer=nl.private_hbm)
    ncc.all_reduce(srcs=[t], dsts=[res], replica_group=group, op=nl.add)  # ERR:mixed
    return returned(res)


@nki.jit
def coalesced_in_sbuf(a, group):
    t = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    u = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    ncc.all_reduce(srcs=[t, t], dsts=[u, u], replica_group=group, op=nl.add)  # ERR:coalesced
    return returned(u)


@nki.jit
def shared_srcs(a, group):
    res = nl.ndarray(a.shape, a.dtype, buffer=nl.private_hbm)
    ncc.all_reduce(srcs=[a], dsts=[res], replica_group=group, op=nl.add)  # ERR:shared_src
    return returned(res)


@nki.jit
def multiply_op(a, group):
    res = nl.ndarray(a.shape, a.dtype, buffer=nl.private_hbm)
    ncc.all_reduce(srcs=[private_copy(a)], dsts=[res], replica_group=group, op=nl.multiply)  # ERR:op
    return returned(res)


@nki.jit
def gather_wrong_shape(a, group):
    res = nl.ndarray(a.shape, a.dtype, buffer=nl.private_hbm)
    ncc.all_gather(srcs=[private_copy(a)], dsts=[res], replica_group=group, collective_dim=0)  # ERR:shape
    return returned(res)


@nki.jit
def gather_hbm_dim_1(a, group):
    res = nl.ndarray((a.shape[0], 2 * a.shape[1]), a.dtype, buffer=nl.private_hbm)
    ncc.all_gather(srcs=[private_copy(a)], dsts=[res], replica_group=group, collective_dim=1)  # ERR:dim
    return returned(res)


@nki.jit
def bad_priority(a, group):
    res = nl.ndarray(a.shape, a.dtype, buffer=nl.private_hbm)
    ncc.all_reduce(srcs=[private_copy(a)], dsts=[res], replica_group=group, op=nl.add, priority=4)  # ERR:priority
    return returned(res)


@nki.jit
def lists_of_two_sizes(a, group):
    res = nl.ndarray(a.shape, a.dtype, buffer=nl.private_hbm)
    ncc.all_reduce(srcs=[private_copy(a)], dsts=[res], replica_group=group, op=nl.add)  # ERR:sizes
    return returned(res)


@nki.jit
def permute_twice_to_one(a):
    res = nl.ndarray(a.shape, a.dtype, buffer=nl.private_hbm)
    ncc.collective_permute(srcs=[private_copy(a)], dsts=[res], source_target_pairs=[[0, 2], [1, 2]])  # ERR:pairs
    return returned(res)


RULES = [
    (mixed_memories, world(2), "mixed", "ncc.all_reduce",
     "the tensors are all in HBM or all in SBUF, not a mix: `t` is in sbuf, `res` is in private_hbm"),
    (coalesced_in_sbuf, world(2), "coalesced", "ncc.all_reduce",
     "several tensors in one collective (coalesced) are in HBM only; `t` is in sbuf"),
    (shared_srcs, world(2), "shared_src", "ncc.all_reduce",
     "at LNC=1 srcs are in private HBM (nl.private_hbm); `a` is in shared_hbm"),
    (multiply_op, world(2), "op", "ncc.all_reduce",
     "op is multiply; collectives reduce with nl.add, nl.maximum or nl.minimum"),
    (gather_wrong_shape, world(2), "shape", "ncc.all_gather",
     "srcs[0], dsts[0]: dst is [4, 8] for src [2, 8] over lists of 2 rank(s); got [2, 8]"),
    (gather_hbm_dim_1, world(2), "dim", "ncc.all_gather", "collective_dim is 0; got 1"),
    (bad_priority, world(2), "priority", "ncc.all_reduce", "priority is 0 (highest) to 3 (lowest); got 4"),
    (lists_of_two_sizes, ReplicaGroup([[0, 1], [2]]), "sizes", "ncc.all_reduce",
     "the replica group's lists have one size (the shapes follow from it); [[0, 1], [2]] mixes sizes"),
]


@pytest.mark.parametrize("kernel, group, marker, api, message", RULES, ids=[r[2] for r in RULES])
def test_a_collective_rule_is_a_diagnostic_at_the_call(kernel, group, marker, api, message):
    e = trace_error(kernel, np.zeros((2, 8), np.float32), group)
    check_diag(e, M, "err_unsupported_args", message, [(marker, "ncc.")], api=api)


def test_permute_pairs_rule():
    e = trace_error(permute_twice_to_one, np.zeros((2, 8), np.float32))
    check_diag(e, M, "err_unsupported_args", "a rank sends at most once and receives at most once; "
               "[[0, 2], [1, 2]] repeats one", [("pairs", "ncc.")], api="ncc.collective_permute")


# --- the ranks: world, rendezvous, one specialization --------------------------------------------


def test_nki_simulate_is_a_world_of_one_rank():
    a = np.ones((2, 8), np.float32)
    np.testing.assert_array_equal(nki.simulate(all_reduce_kernel)(a, world(1), nl.add), a)
    with pytest.raises(nki.NKIError) as e:
        nki.simulate(all_reduce_kernel)(a, world(2), nl.add)
    check_diag(e.value, M, "err_replica_group_world", "ncc.all_reduce names rank 1, but the world has 1 rank(s) "
               "(nki.simulate runs one rank; run the ranks with nki.multi_rank_simulate)",
               [("reduce_call", "ncc.")])


def test_a_rank_in_no_list_is_a_diagnostic():
    with pytest.raises(nki.NKIError) as e:
        run(all_reduce_kernel, [np.ones((2, 8), np.float32)] * 3, ReplicaGroup([[0, 1]]), nl.add)
    check_diag(e.value, M, "err_replica_group_world", "ncc.all_reduce: rank 2 is in none of the replica group's "
               "lists [[0, 1]]", [("reduce_call", "ncc.")])


@nki.jit
def rank_dependent_collectives(a, group):
    """Rank r runs r all_gathers, then one all_reduce: the ranks' sequences differ."""
    res = nl.ndarray(a.shape, a.dtype, buffer=nl.private_hbm)
    src = private_copy(a)
    gathered = nl.ndarray((2 * a.shape[0], a.shape[1]), a.dtype, buffer=nl.private_hbm)

    def body(i):
        ncc.all_gather(srcs=[src], dsts=[gathered], replica_group=group, collective_dim=0)  # ERR:gather_in_loop

    nl.fori_loop(0, ncc.rank_id(), body)
    ncc.all_reduce(srcs=[src], dsts=[res], replica_group=group, op=nl.add)  # ERR:reduce_after
    return returned(res)


@nki.jit
def rank_dependent_count(a, group):
    """Rank r runs r all_reduces: rank 1 waits for rank 0, which has finished."""
    res = nl.ndarray(a.shape, a.dtype, buffer=nl.private_hbm)
    src = private_copy(a)

    def body(i):
        ncc.all_reduce(srcs=[src], dsts=[res], replica_group=group, op=nl.add)  # ERR:waits

    nl.fori_loop(0, ncc.rank_id(), body)
    return returned(res)


def test_mismatched_collective_sequences_are_a_diagnostic_at_both_lines():
    with pytest.raises(nki.NKIError) as e:
        run(rank_dependent_collectives, [np.ones((2, 8), np.float32)] * 2, world(2))
    # Whichever rank arrives second reports, at its own line, with a note at the other's.
    gather, reduce = f"ncc.all_gather at line {M.line('gather_in_loop')}", f"ncc.all_reduce at line {M.line('reduce_after')}"
    if e.value.line == M.line("reduce_after"):
        message, at, note = f"rank 0's collective #1 is {reduce}, rank 1's is {gather}", "reduce_after", "gather_in_loop"
    else:
        message, at, note = f"rank 1's collective #1 is {gather}, rank 0's is {reduce}", "gather_in_loop", "reduce_after"
    d = e.value
    assert d.code == "err_collective_mismatch", str(d)
    assert message + ": every rank of a replica group issues the same collectives in the same order" in d.message
    assert M.same_file(d.file) and (d.line, d.col) == M.loc(at, "ncc.")
    assert [(n[1], n[2]) for n in d.notes] == [M.loc(note, "ncc.")] and "collective #1" in d.notes[0][3]


def test_a_rank_waiting_for_a_finished_rank_is_a_deadlock():
    with pytest.raises(nki.NKIError) as e:
        run(rank_dependent_count, [np.ones((2, 8), np.float32)] * 2, world(2))
    check_diag(e.value, M, "err_collective_deadlock",
               f"rank 1 waits at its collective #1, ncc.all_reduce at line {M.line('waits')}, for the ranks of its "
               "replica-group list [0, 1], but rank 0 finished after 0 collective(s)", [("waits", "ncc.")])


def test_the_ranks_share_one_specialization():
    a, b = np.zeros((2, 8), np.float32), np.zeros((4, 8), np.float32)
    inputs = [((a, world(2), nl.add), {}), ((b, world(2), nl.add), {})]
    with pytest.raises(nki.NKIError) as e:
        nki.multi_rank_simulate(all_reduce_kernel, world_size=2, per_rank_inputs=inputs)  # ERR:uniform
    check_diag(e.value, M, "err_multi_rank_arguments", "argument 'a' of rank 1 is a float32 tensor of shape [4, 8], "
               "rank 0's is a float32 tensor of shape [2, 8]", [("uniform", "nki.")])
    inputs = {0: ((a, world(2), nl.add), {}), 1: ((a, world(2), nl.maximum), {})}
    with pytest.raises(nki.NKIError) as e:
        nki.multi_rank_simulate(all_reduce_kernel, world_size=2, per_rank_inputs=inputs)  # ERR:static
    check_diag(e.value, M, "err_multi_rank_arguments", "argument 'op' of rank 1 is nl.maximum, rank 0's is nl.add", [("static", "nki.")])
    inputs = [((a, ReplicaGroup([[0, 1]]), nl.add), {}), ((a, ReplicaGroup([[1, 0]]), nl.add), {})]
    with pytest.raises(nki.NKIError) as e:
        nki.multi_rank_simulate(all_reduce_kernel, world_size=2, per_rank_inputs=inputs)  # ERR:group
    check_diag(e.value, M, "err_multi_rank_arguments", "argument 'group' of rank 1 is ReplicaGroup([[1, 0]]), rank "
               "0's is ReplicaGroup([[0, 1]])", [("group", "nki.")])


def test_every_rank_of_a_kernel_2_launch_runs_its_two_cores():
    @nki.jit
    def halves_swapped(a):
        n = a.shape[0] // 2
        c = nl.program_id(0)
        mine = nl.ndarray((n, a.shape[1]), a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=mine, src=a[c * n:(c + 1) * n, :])
        theirs = nl.ndarray((n, a.shape[1]), a.dtype, buffer=nl.sbuf)
        lnc.sendrecv(mine, theirs, 1 - c, 1 - c)
        out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out[c * n:(c + 1) * n, :], src=theirs)
        return out

    xs = [RNG.normal(size=(4, 3)).astype(np.float32) for _ in range(2)]
    outs = nki.multi_rank_simulate(halves_swapped[2], world_size=2, per_rank_inputs=[((x,), {}) for x in xs])
    for x, out in zip(xs, outs):
        np.testing.assert_array_equal(out, np.concatenate([x[2:], x[:2]]))


@pytest.mark.parametrize("inputs, message", [
    ({0: ((), {}), 2: ((), {})}, "per_rank_inputs maps exactly the ranks 0 .. 1; got the keys [0, 2]"),
    ([((), {})], "per_rank_inputs gives 1 rank(s) for world_size=2"),
    ([((), {}), "x"], "rank 1's inputs are an (args tuple, kwargs dict) pair; got str"),
    ("xy", "per_rank_inputs is a sequence or a mapping of rank -> (args, kwargs); got str"),
])
def test_per_rank_inputs_name_every_rank_once(inputs, message):
    with pytest.raises(nki.NKIError) as e:
        nki.multi_rank_simulate(all_reduce_kernel, world_size=2, per_rank_inputs=inputs)  # ERR:inputs
    check_diag(e.value, M, "err_unsupported_args", message, [("inputs", "nki.")])


def test_world_size_is_at_least_one():
    with pytest.raises(nki.NKIError) as e:
        nki.multi_rank_simulate(all_reduce_kernel, world_size=0, per_rank_inputs=[])  # ERR:world0
    check_diag(e.value, M, "err_unsupported_args", "world_size is at least 1; got 0", [("world0", "nki.")])


def test_there_is_no_neuron_device_to_execute_on():
    with pytest.raises(nki.NKIError) as e:
        nki.execute(all_reduce_kernel, np.ones((2, 8), np.float32))  # ERR:execute
    check_diag(e.value, M, "err_no_neuron_device", "nki.execute runs the kernel on a NeuronDevice, and there is "
               "none here", [("execute", "nki.")])
    assert "nki.simulate(kernel)(*args)" in e.value.hint
    with pytest.raises(nki.NKIError) as e:
        nki.multi_rank_execute(all_reduce_kernel, world_size=2, per_rank_inputs=[])  # ERR:multi_execute
    check_diag(e.value, M, "err_no_neuron_device", "nki.multi_rank_execute runs the kernel", [("multi_execute", "nki.")])
    assert "nki.multi_rank_simulate" in e.value.hint



@nki.jit
def collective_rule(a, group, case):
    src = private_copy(a)
    res = nl.ndarray(a.shape, a.dtype, buffer=nl.private_hbm)
    if case == "psum":
        p = nl.ndarray(a.shape, a.dtype, buffer=nl.psum)
        ncc.all_reduce(srcs=[p], dsts=[res], replica_group=group, op=nl.add)  # ERR:psum
    elif case == "lengths":
        ncc.all_reduce(srcs=[src, src], dsts=[res], replica_group=group, op=nl.add)  # ERR:lengths
    elif case == "dtype":
        half = nl.ndarray(a.shape, nl.bfloat16, buffer=nl.private_hbm)
        ncc.all_reduce(srcs=[src], dsts=[half], replica_group=group, op=nl.add)  # ERR:dtype
    elif case == "scatter":
        ncc.reduce_scatter(srcs=[src], dsts=[res], replica_group=group, collective_dim=0, op=nl.add)  # ERR:scatter
    elif case == "a2a":
        ncc.all_to_all(srcs=[src], dsts=[res], replica_group=group, collective_dim=0)  # ERR:a2a
    elif case == "dsts_mixed":
        shared = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
        ncc.all_reduce(srcs=[src, src], dsts=[res, shared], replica_group=group, op=nl.add)  # ERR:dsts_mixed
    elif case == "pair":
        ncc.collective_permute(srcs=[src], dsts=[res], source_target_pairs=[[0, 1, 2]])  # ERR:pair
    elif case == "group_type":
        ncc.all_reduce(srcs=[src], dsts=[res], replica_group=[[0, 1]], op=nl.add)  # ERR:group_type
    elif case == "not_a_list":
        ncc.all_reduce(srcs=src, dsts=[res], replica_group=group, op=nl.add)  # ERR:not_a_list
    return returned(res)


MORE_RULES = [
    ("psum", ReplicaGroup([[0, 1]]), "err_unsupported_memory",
     "Expected operand 'srcs' of 'all_reduce' to be in address space 'hbm or sbuf', but got a tile in 'psum' instead."),
    ("lengths", ReplicaGroup([[0, 1]]), "err_unsupported_args",
     "srcs and dsts are lists of one length, at least 1; got 2 and 1"),
    ("dtype", ReplicaGroup([[0, 1]]), "err_unsupported_args",
     "srcs[0] and dsts[0] have one dtype; got float32 and bfloat16"),
    ("scatter", ReplicaGroup([[0, 1, 2]]), "err_unsupported_args",
     "srcs[0], dsts[0]: src [2, 8] splits into 3 equal parts along dim 0"),
    ("a2a", ReplicaGroup([[0, 1, 2]]), "err_unsupported_args",
     "srcs[0], dsts[0]: src [2, 8] splits into 3 equal parts along dim 0"),
    ("dsts_mixed", ReplicaGroup([[0, 1]]), "err_unsupported_args",
     "dsts are all private or all shared HBM: `res` is in private_hbm, `shared` is in shared_hbm"),
    ("pair", ReplicaGroup([[0, 1]]), "err_unsupported_args",
     "source_target_pairs are (source, target) pairs of ranks; got [0, 1, 2]"),
    ("group_type", ReplicaGroup([[0, 1]]), "err_unexpected_type_of_operand", "expected an ncc.ReplicaGroup"),
    ("not_a_list", ReplicaGroup([[0, 1]]), "err_unexpected_type_of_operand", "expected a list of tensors"),
]


@pytest.mark.parametrize("case, group, code, message", MORE_RULES, ids=[r[0] for r in MORE_RULES])
def test_more_collective_rules(case, group, code, message):
    e = trace_error(collective_rule, np.zeros((2, 8), np.float32), group, case)
    check_diag(e, M, code, message, [(case, "ncc.")])


@pytest.mark.parametrize("lists, message", [
    ([[0, 1], [1, 2]], "the replica group's lists name each rank (0 or more) once; got [[0, 1], [1, 2]]"),
    ([[]], "the replica group lists no rank"),
])
def test_a_replica_group_names_each_rank_once(lists, message):
    e = trace_error(all_reduce_kernel, np.zeros((2, 8), np.float32), ReplicaGroup(lists), nl.add)
    check_diag(e, M, "err_unsupported_args", message, [("reduce_call", "ncc.")], api="ncc.all_reduce")


@pytest.mark.parametrize("args, code, message", [
    ((0, rg_partition_op.div, 2), "err_unsupported_args", "world_size is at least 1; got 0"),
    ((4, rg_partition_op.mod, 0), "err_unsupported_args", "the operand of rg_partition_op.mod is at least 1; got 0"),
    ((4, "div", 2), "err_unexpected_type_of_operand", "expected a member of ncc.rg_partition_op"),
])
def test_from_partition_op_rules(args, code, message):
    with pytest.raises(nki.NKIError) as e:
        ReplicaGroup.from_partition_op(*args)  # ERR:partition_op
    check_diag(e.value, M, code, message, [("partition_op", "ReplicaGroup.")])


def test_collectives_need_neuroncore_v3(monkeypatch):
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn1")
    e = trace_error(all_reduce_kernel, np.zeros((2, 8), np.float32), world(2), nl.add)
    check_diag(e, M, "err_min_arch_support_for_inst", "'ncc.all_reduce' is available on NeuronCore-v3 and newer only; "
               "target 'trn1' is NeuronCore-v2", [("reduce_call", "ncc.")])


# ncc.self_index_in_replica_group (NKI 0.8): the caller's position in its own list.

@nki.jit
def self_index(x, groups):
    s = ncc.self_index_in_replica_group(ReplicaGroup(groups))  # ERR:self_index
    t = nl.ndarray((1, 1), nl.int32, buffer=nl.sbuf)
    nisa.scalar_store(dst=t, value=s)
    out = nl.ndarray((1, 1), nl.int32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=t)
    return out


@pytest.mark.parametrize("groups,want", [
    (ReplicaGroup.from_partition_op(8, rg_partition_op.div, 4).replica_groups, [0, 1, 2, 3, 0, 1, 2, 3]),
    (ReplicaGroup.from_partition_op(8, rg_partition_op.mod, 4).replica_groups, [0, 0, 0, 0, 1, 1, 1, 1]),
    ([[6, 2, 0, 4], [1, 3, 5, 7]], [2, 0, 1, 1, 3, 2, 0, 3]),
], ids=["div", "mod", "listed"])
def test_self_index_in_replica_group_is_the_position_in_the_callers_list(groups, want):
    x = np.zeros((1, 1), np.float32)
    groups = tuple(tuple(g) for g in groups)  # a kernel takes tuples
    got = nki.multi_rank_simulate(self_index, world_size=8, per_rank_inputs=[((x, groups), {})] * 8)
    assert [int(r[0, 0]) for r in got] == want


def test_self_index_of_a_rank_in_no_list_is_an_error_at_its_line():
    x = np.zeros((1, 1), np.float32)
    with pytest.raises(nkic.NKIError) as info:
        nki.multi_rank_simulate(self_index, world_size=3, per_rank_inputs=[((x, ((0, 1),)), {})] * 3)
    check_diag(info.value, M, "err_replica_group_world",
               "ncc.self_index_in_replica_group: rank 2 is in none of the replica group's lists [[0, 1]]",
               [("self_index", "ncc.")])
