"""The ring permutes of nki.collectives (NKI_CURRENT_API.md §8.2): collective_permute_implicit and
its _reduce form send each rank's data to its successor in its replica-group list, channel by
channel, and collective_permute_implicit_current_processing_rank_id names whose data a ring step
holds; numbers against numpy, every rule a diagnostic at the user's line."""
import numpy as np
import pytest

import nki
import nki.collectives as ncc
import nki.isa as nisa
import nki.language as nl
from nki.collectives import ReplicaGroup, rg_partition_op
from nki_test_util import Markers, check_diag, trace_error

M = Markers(__file__)
RNG = np.random.default_rng(5)


@pytest.fixture(autouse=True)
def _trn2(monkeypatch):
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn2")


def copy_to(a, buffer, dtype=None):
    t = nl.ndarray(a.shape, dtype or a.dtype, buffer=buffer)
    nisa.dma_copy(dst=t, src=a)
    return t


def returned(t):
    return copy_to(t, nl.shared_hbm)


def predecessor(groups, r):
    """The rank before r in its list, the last before the first."""
    g = next(g for g in groups if r in g)
    return g[(g.index(r) - 1) % len(g)]


@nki.jit
def ring(a, group, buffer):
    """a moved one step along the ring, over one channel per row block of a."""
    src = copy_to(a, buffer)
    res = nl.ndarray(a.shape, a.dtype, buffer=buffer)
    ncc.collective_permute_implicit(srcs_by_channel=[[src]], dsts_by_channel=[[res]], replica_group=group)  # ERR:ring
    return returned(res)


@pytest.mark.parametrize("buffer", [nl.private_hbm, nl.shared_hbm, nl.sbuf], ids=["private", "shared", "sbuf"])
@pytest.mark.parametrize("groups", [[[0, 1, 2, 3]], [[2, 0, 3, 1]], [[0, 2], [1, 3]]],
                         ids=["world", "listed", "two_lists"])
def test_each_rank_receives_its_predecessors_data(buffer, groups):
    xs = [RNG.normal(size=(4, 8)).astype(np.float32) for _ in range(4)]
    group = ReplicaGroup(groups)
    got = nki.multi_rank_simulate(ring, world_size=4, per_rank_inputs=[((x, group, buffer), {}) for x in xs])
    for r in range(4):
        np.testing.assert_array_equal(got[r], xs[predecessor(groups, r)])


def test_a_ring_of_one_rank_keeps_its_data():
    a = RNG.normal(size=(2, 8)).astype(np.float32)
    np.testing.assert_array_equal(nki.simulate(ring)(a, ReplicaGroup([[0]]), nl.private_hbm), a)


@nki.jit
def two_channels(a, b, group):
    sa, sb = copy_to(a, nl.private_hbm), copy_to(b, nl.private_hbm)
    ra, rb = nl.ndarray(a.shape, a.dtype, buffer=nl.private_hbm), nl.ndarray(b.shape, b.dtype, buffer=nl.private_hbm)
    ncc.collective_permute_implicit(srcs_by_channel=[[sa], [sb]], dsts_by_channel=[[ra], [rb]], replica_group=group,
                                    channel_ids=[0, 1])
    return returned(ra), returned(rb)


def test_each_channel_moves_its_own_tensors():
    xs = [(RNG.normal(size=(2, 8)).astype(np.float32), RNG.normal(size=(4, 2)).astype(nl.bfloat16)) for _ in range(3)]
    got = nki.multi_rank_simulate(two_channels, world_size=3,
                                  per_rank_inputs=[((a, b, ReplicaGroup([[0, 1, 2]])), {}) for a, b in xs])
    for r in range(3):
        np.testing.assert_array_equal(got[r][0], xs[(r - 1) % 3][0])
        np.testing.assert_array_equal(got[r][1], xs[(r - 1) % 3][1])


@nki.jit
def sbuf_channels(a, group):
    """The two row halves of one SBUF tile, each its own channel: channels are not coalesced, so SBUF is fine."""
    t = copy_to(a, nl.sbuf)
    r = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    h = a.shape[1] // 2
    ncc.collective_permute_implicit([[t[:, :h]], [t[:, h:]]], [[r[:, :h]], [r[:, h:]]], group, channel_ids=[0, 1])
    return returned(r)


def test_channels_in_sbuf_are_not_coalesced():
    xs = [RNG.normal(size=(4, 8)).astype(np.float32) for _ in range(2)]
    got = nki.multi_rank_simulate(sbuf_channels, world_size=2,
                                  per_rank_inputs=[((x, ReplicaGroup([[0, 1]])), {}) for x in xs])
    np.testing.assert_array_equal(got[0], xs[1])
    np.testing.assert_array_equal(got[1], xs[0])


@nki.jit
def ring_reduce(a, b, group, op, dtype):
    ra = nl.ndarray(a.shape, dtype, buffer=nl.private_hbm)
    ncc.collective_permute_implicit_reduce(srcs0_by_channel=[[copy_to(a, nl.private_hbm)]],
                                           srcs1_by_channel=[[copy_to(b, nl.private_hbm)]], dsts_by_channel=[[ra]],
                                           replica_group=group, op=op)
    return returned(ra)


@pytest.mark.parametrize("op, ref", [(nl.add, np.add), (nl.maximum, np.maximum), (nl.minimum, np.minimum)],
                         ids=["add", "maximum", "minimum"])
def test_the_reduce_sends_op_of_its_two_sources(op, ref):
    xs = [(RNG.normal(size=(4, 8)).astype(np.float32), RNG.normal(size=(4, 8)).astype(np.float32)) for _ in range(4)]
    group = ReplicaGroup.from_partition_op(4, rg_partition_op.mod, 2)  # [[0, 2], [1, 3]]
    got = nki.multi_rank_simulate(ring_reduce, world_size=4,
                                  per_rank_inputs=[((a, b, group, op, nl.float32), {}) for a, b in xs])
    for r in range(4):
        a, b = xs[predecessor([[0, 2], [1, 3]], r)]
        np.testing.assert_array_equal(got[r], ref(a, b))


def test_the_reduce_adds_in_fp32_and_rounds_once_to_bf16():
    # 1 + 2^-9 is no bf16, so bf16 operands could not carry it; the sum of these two fp32 sources rounds once.
    a = np.full((1, 4), 1.0, np.float32)
    b = np.full((1, 4), 2.0 ** -8 + 2.0 ** -10, np.float32)
    a16, b16 = a.astype(nl.bfloat16), b.astype(nl.bfloat16)
    got = nki.multi_rank_simulate(ring_reduce, world_size=2,
                                  per_rank_inputs=[((a16, b16, ReplicaGroup([[0, 1]]), nl.add, nl.bfloat16), {})] * 2)
    want = (a16.astype(np.float32) + b16.astype(np.float32)).astype(nl.bfloat16)
    for g in got:
        np.testing.assert_array_equal(g.astype(np.float32), want.astype(np.float32))


@nki.jit
def ring_all_gather(a, group, n):
    """Every rank's rows at the slot of its rank: n - 1 ring steps, each step's rows placed at the
    slot ncc.collective_permute_implicit_current_processing_rank_id names."""
    rows = a.shape[0]
    out = nl.ndarray((n, rows, a.shape[1]), a.dtype, buffer=nl.shared_hbm)
    bufs = [copy_to(a, nl.private_hbm), nl.ndarray(a.shape, a.dtype, buffer=nl.private_hbm)]
    for step in range(n):
        if step > 0:
            ncc.collective_permute_implicit(srcs_by_channel=[[bufs[(step - 1) % 2]]],
                                            dsts_by_channel=[[bufs[step % 2]]], replica_group=group)
        whose = ncc.collective_permute_implicit_current_processing_rank_id(iteration_id=step, replica_group=group)
        t = copy_to(bufs[step % 2], nl.sbuf)
        nisa.dma_copy(dst=out.ap(pattern=[[a.shape[1], rows], [1, a.shape[1]]], offset=0, scalar_offset=whose,
                                 indirect_dim=0), src=t)
    return out


@pytest.mark.parametrize("groups", [[[0, 1, 2, 3]], [[3, 1, 0, 2]]], ids=["in_order", "listed"])
def test_the_processing_rank_id_names_whose_data_each_step_holds(groups):
    xs = [np.full((2, 4), r, np.float32) for r in range(4)]
    group = ReplicaGroup(groups)
    got = nki.multi_rank_simulate(ring_all_gather, world_size=4, per_rank_inputs=[((x, group, 4), {}) for x in xs])
    for g in got:
        np.testing.assert_array_equal(g, np.stack(xs))


@nki.jit
def processing_rank(x, group, iteration, channel):
    reg = ncc.collective_permute_implicit_current_processing_rank_id(iteration, group, channel_id=channel)
    t = nl.ndarray((1, 1), nl.int32, buffer=nl.sbuf)
    nisa.register_store(t, reg)
    return returned(t)


@pytest.mark.filterwarnings("ignore:.*register_store is deprecated")  # the register is what 0.7 returns
@pytest.mark.parametrize("iteration", [0, 1, 3, 4, 5])
def test_the_processing_rank_id_steps_back_along_the_list_and_wraps(iteration):
    groups = [[1, 3, 2], [0, 4, 5]]
    x = np.zeros((1, 1), np.float32)
    got = nki.multi_rank_simulate(processing_rank, world_size=6,
                                  per_rank_inputs=[((x, ReplicaGroup(groups), iteration, 1), {})] * 6)
    for r in range(6):
        g = next(g for g in groups if r in g)
        assert int(got[r][0, 0]) == g[(g.index(r) - iteration) % 3]


def test_a_ring_permute_returns_its_instruction_and_the_rank_id_a_register():
    seen = []

    @nki.jit
    def k(a, group):
        res = nl.ndarray(a.shape, a.dtype, buffer=nl.private_hbm)
        seen.append(ncc.collective_permute_implicit([[copy_to(a, nl.private_hbm)]], [[res]], group))
        seen.append(ncc.collective_permute_implicit_current_processing_rank_id(0, group))
        return returned(res)

    nki.multi_rank_simulate(k, world_size=2, per_rank_inputs=[((np.ones((1, 2), np.float32), ReplicaGroup([[0, 1]])),
                                                                {})] * 2)
    assert isinstance(seen[0], nisa.NkiInstruction)
    assert isinstance(seen[1], nisa.VirtualRegister)


# --- rules: each a diagnostic at the call --------------------------------------------------------


@nki.jit
def ring_rule(a, group, case):
    src = copy_to(a, nl.private_hbm)
    res = nl.ndarray(a.shape, a.dtype, buffer=nl.private_hbm)
    if case == "channel_count":
        ncc.collective_permute_implicit([[src], [src]], [[res]], group, channel_ids=[0, 1])  # ERR:channel_count
    elif case == "reduce_channel_count":
        ncc.collective_permute_implicit_reduce([[src]], [], [[res]], group, nl.add)  # ERR:reduce_channel_count
    elif case == "ids":
        ncc.collective_permute_implicit([[src], [src]], [[res], [res]], group, channel_ids=[0, 2])  # ERR:ids
    elif case == "id_count":
        ncc.collective_permute_implicit([[src], [src]], [[res], [res]], group)  # ERR:id_count
    elif case == "over_lists":
        ncc.collective_permute_implicit([[src]] * 3, [[res]] * 3, group, channel_ids=[0, 1, 2])  # ERR:over_lists
    elif case == "five":
        ncc.collective_permute_implicit([[src]] * 5, [[res]] * 5, group, channel_ids=[0, 1, 2, 3, 4])  # ERR:five
    elif case == "coalesced":
        ncc.collective_permute_implicit([[src, src]], [[res, res]], group)  # ERR:coalesced
    elif case == "dtype":
        half = nl.ndarray(a.shape, nl.bfloat16, buffer=nl.private_hbm)
        ncc.collective_permute_implicit([[src]], [[half]], group)  # ERR:dtype
    elif case == "shape":
        wide = nl.ndarray((a.shape[0], 2 * a.shape[1]), a.dtype, buffer=nl.private_hbm)
        ncc.collective_permute_implicit_reduce([[src]], [[wide]], [[res]], group, nl.add)  # ERR:shape
    elif case == "op":
        ncc.collective_permute_implicit_reduce([[src]], [[src]], [[res]], group, nl.multiply)  # ERR:op
    elif case == "mixed":
        ncc.collective_permute_implicit([[copy_to(a, nl.sbuf)]], [[res]], group)  # ERR:mixed
    elif case == "psum":
        p = nl.ndarray(a.shape, a.dtype, buffer=nl.psum)
        ncc.collective_permute_implicit([[p]], [[res]], group)  # ERR:psum
    elif case == "priority":
        ncc.collective_permute_implicit([[src]], [[res]], group, priority=7)  # ERR:priority
    elif case == "group":
        ncc.collective_permute_implicit([[src]], [[res]], ReplicaGroup([[0, 1], [2]]))  # ERR:group
    elif case == "not_lists":
        ncc.collective_permute_implicit([src], [[res]], group)  # ERR:not_lists
    elif case == "ids_type":
        ncc.collective_permute_implicit([[src]], [[res]], group, channel_ids=0)  # ERR:ids_type
    elif case == "iteration":
        ncc.collective_permute_implicit_current_processing_rank_id(-1, group)  # ERR:iteration
    elif case == "channel_id":
        ncc.collective_permute_implicit_current_processing_rank_id(0, group, channel_id=2)  # ERR:channel_id
    return returned(res)


PERMUTE, REDUCE = "ncc.collective_permute_implicit", "ncc.collective_permute_implicit_reduce"
RANK_ID = "ncc.collective_permute_implicit_current_processing_rank_id"
TWO_LISTS = ReplicaGroup([[0, 1], [2, 3]])
RULES = [
    ("channel_count", TWO_LISTS, "err_unsupported_args", PERMUTE,
     "srcs_by_channel and dsts_by_channel hold one list per channel, at least 1; got 2 and 1"),
    ("reduce_channel_count", TWO_LISTS, "err_unsupported_args", REDUCE,
     "srcs0_by_channel, srcs1_by_channel and dsts_by_channel hold one list per channel, at least 1; got 1, 0 and 1"),
    ("ids", TWO_LISTS, "err_unsupported_args", PERMUTE,
     "channel_ids number the channels consecutively from 0: [0, 1] for 2 channel(s); got [0, 2]"),
    ("id_count", TWO_LISTS, "err_unsupported_args", PERMUTE,
     "channel_ids number the channels consecutively from 0: [0, 1] for 2 channel(s); got [0]"),
    ("over_lists", TWO_LISTS, "err_unsupported_args", PERMUTE,
     "at most 4 channels when the replica group is one list (every device of the node), else at most 2; got 3 "
     "channels over 2 list(s)"),
    ("five", ReplicaGroup([[0, 1, 2, 3]]), "err_unsupported_args", PERMUTE,
     "at most 4 channels when the replica group is one list (every device of the node), else at most 2; got 5 "
     "channels over 1 list(s)"),
    ("coalesced", TWO_LISTS, "err_unsupported_args", PERMUTE,
     "each channel's list holds exactly one tensor (coalesced collectives are not supported); srcs_by_channel[0] "
     "holds 2"),
    ("dtype", TWO_LISTS, "err_unsupported_args", PERMUTE,
     "srcs_by_channel[0][0] and dsts_by_channel[0][0] have one dtype and shape; got float32[2, 8] and bfloat16[2, 8]"),
    ("shape", TWO_LISTS, "err_unsupported_args", REDUCE,
     "srcs1_by_channel[0][0] and dsts_by_channel[0][0] have one dtype and shape; got float32[2, 16] and "
     "float32[2, 8]"),
    ("op", TWO_LISTS, "err_unsupported_args", REDUCE,
     "op is multiply; collectives reduce with nl.add, nl.maximum or nl.minimum"),
    ("mixed", TWO_LISTS, "err_unsupported_args", PERMUTE,
     "the tensors are all in HBM or all in SBUF, not a mix: `t` is in sbuf, `res` is in private_hbm"),
    ("psum", TWO_LISTS, "err_unsupported_memory", PERMUTE,
     "Expected operand 'srcs' of 'collective_permute_implicit' to be in address space 'hbm or sbuf', but got a tile "
     "in 'psum' instead."),
    ("priority", TWO_LISTS, "err_unsupported_args", PERMUTE, "priority is 0 (highest) to 3 (lowest); got 7"),
    ("group", TWO_LISTS, "err_unsupported_args", PERMUTE,
     "the replica group's lists have one size (the shapes follow from it); [[0, 1], [2]] mixes sizes"),
    ("not_lists", TWO_LISTS, "err_unexpected_type_of_operand", PERMUTE, "expected a list of tensors"),
    ("ids_type", TWO_LISTS, "err_unexpected_type_of_operand", PERMUTE, "expected a list of channel ids"),
    ("iteration", TWO_LISTS, "err_unsupported_args", RANK_ID, "iteration_id is the ring step, 0 or more; got -1"),
    ("channel_id", TWO_LISTS, "err_unsupported_args", RANK_ID,
     "channel_id is 0 to 1 for a replica group of 2 list(s) (4 channels over one list, else 2); got 2"),
]


@pytest.mark.parametrize("case, group, code, api, message", RULES, ids=[r[0] for r in RULES])
def test_a_ring_permute_rule_is_a_diagnostic_at_the_call(case, group, code, api, message):
    e = trace_error(ring_rule, np.zeros((2, 8), np.float32), group, case)
    check_diag(e, M, code, message, [(case, "ncc.")], api=api)


@nki.jit
def four_channels(a, group):
    """Row block c of a over channel c: a group of one list (the world) has 4 channels."""
    srcs = [copy_to(a[c:c + 1, :], nl.private_hbm) for c in range(4)]
    dsts = [nl.ndarray((1, a.shape[1]), a.dtype, buffer=nl.private_hbm) for _ in range(4)]
    ncc.collective_permute_implicit([[s] for s in srcs], [[d] for d in dsts], group, channel_ids=[0, 1, 2, 3])
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    for c in range(4):
        nisa.dma_copy(dst=out[c:c + 1, :], src=dsts[c])
    return out


def test_a_group_of_one_list_has_four_channels():
    xs = [RNG.normal(size=(4, 8)).astype(np.float32) for _ in range(3)]
    got = nki.multi_rank_simulate(four_channels, world_size=3,
                                  per_rank_inputs=[((x, ReplicaGroup([[2, 1, 0]])), {}) for x in xs])
    for r in range(3):
        np.testing.assert_array_equal(got[r], xs[predecessor([[2, 1, 0]], r)])


@pytest.mark.parametrize("buffer", [nl.private_hbm, nl.shared_hbm, nl.sbuf], ids=["private", "shared", "sbuf"])
def test_ring_permutes_run_at_lnc2(buffer):
    # Both cores of a rank issue the permute; each meets the same core of its neighbours.
    xs = [RNG.normal(size=(2, 8)).astype(np.float32) for _ in range(4)]
    got = nki.multi_rank_simulate(ring[2], world_size=4, per_rank_inputs=[((x, ReplicaGroup([[0, 1, 2, 3]]), buffer), {})
                                                                          for x in xs])
    for r in range(4):
        np.testing.assert_array_equal(got[r], xs[(r - 1) % 4])


def test_ring_permutes_need_neuroncore_v3(monkeypatch):
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn1")
    e = trace_error(ring, np.zeros((2, 8), np.float32), ReplicaGroup([[0, 1]]), nl.private_hbm)
    check_diag(e, M, "err_min_arch_support_for_inst", "'ncc.collective_permute_implicit' is available on "
               "NeuronCore-v3 and newer only; target 'trn1' is NeuronCore-v2", [("ring", "ncc.")])
