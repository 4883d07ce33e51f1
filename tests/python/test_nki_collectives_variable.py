"""The variable-length collectives (NKI_CURRENT_API.md §8.2, NKI_07_08_API.md §8): all_to_all_v and
all_gather_v reading their metadata at run time across the ranks of nki.multi_rank_simulate,
their prepare / trigger split with its one-slot rule, and their rules at the user's line."""
import numpy as np
import pytest

import nki
import nki.collectives as ncc
import nki.isa as nisa
import nki.language as nl
from nki_test_util import Markers, check_diag, trace_error
from test_nki_collectives import returned, world

M = Markers(__file__)


@pytest.fixture(autouse=True)
def _trn2(monkeypatch):
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn2")



def hbm_copy(t):
    c = nl.ndarray(t.shape, t.dtype, buffer=nl.private_hbm)
    nisa.dma_copy(dst=c, src=t)
    return c


@nki.jit
def variable_kernel(x, fill, meta, group, kind, split):
    """ncc.<kind> (all_to_all_v or all_gather_v) of x into a copy of `fill`, plain or as prepare + trigger."""
    src, dst, m = hbm_copy(x), hbm_copy(fill), hbm_copy(meta)
    args = dict(srcs=[src], dsts=[dst], replica_group=group, metadata_tensor=m)
    if split:
        getattr(ncc, kind + "_trigger")(getattr(ncc, kind + "_prepare")(**args))
    else:
        getattr(ncc, kind)(**args)
    return returned(dst), returned(m)


@pytest.mark.parametrize("split", [False, True], ids=["plain", "prepare_trigger"])
def test_all_to_all_v_moves_the_counts_the_metadata_names(split):
    n, width = 4, 6
    rng = np.random.default_rng(4)
    counts = rng.integers(0, width // 2 + 1, size=(n, n))  # counts[i, j]: rank i to rank j
    xs = [rng.normal(size=(n * width,)).astype(np.float32) for _ in range(n)]
    metas = [np.stack([counts[i], np.arange(n) * width, np.zeros(n)]).astype(np.uint32) for i in range(n)]
    fill = np.full(n * width, -1.0, np.float32)
    outs = nki.multi_rank_simulate(variable_kernel, world_size=n, per_rank_inputs=[
        ((xs[r], fill, metas[r], world(n), "all_to_all_v", split), {}) for r in range(n)])
    for j, (dst, meta) in enumerate(outs):
        want = fill.copy()
        for i in range(n):
            want[i * width:i * width + counts[i, j]] = xs[i][j * width:j * width + counts[i, j]]
        np.testing.assert_array_equal(dst, want)
        np.testing.assert_array_equal(meta[2], counts[:, j])  # the receive counts it wrote


def test_all_gather_v_broadcasts_each_ranks_chunk():
    n = 2
    xs = [np.arange(5, dtype=np.float32) + 10 * r for r in range(n)]
    metas = [np.array([[r + 2, r + 2], [1, 1]], np.uint32) for r in range(n)]  # count r + 2 from element 1
    fill = np.zeros(8, np.float32)
    outs = nki.multi_rank_simulate(variable_kernel, world_size=n, per_rank_inputs=[
        ((xs[r], fill, metas[r], world(n), "all_gather_v", True), {}) for r in range(n)])
    for dst, _ in outs:
        np.testing.assert_array_equal(dst, [1, 2, 0, 0, 11, 12, 13, 0])


def test_a_count_beyond_the_slot_is_an_error_at_the_call():
    metas = [np.array([[9, 9], [0, 0], [0, 0]], np.uint32)] * 2
    x = np.zeros(16, np.float32)
    with pytest.raises(nki.NKIError) as e:
        nki.multi_rank_simulate(variable_kernel, world_size=2, per_rank_inputs=[
            ((x, x, metas[r], world(2), "all_to_all_v", False), {}) for r in range(2)])
    assert e.value.code == "err_tensor_access_out_of_bound"
    assert "sends 9 element(s) from 0 of its 16 to rank" in e.value.message and "(slots of 8)" in e.value.message


@nki.jit
def two_prepares(x, meta, group):
    src, dst, m = hbm_copy(x), hbm_copy(x), hbm_copy(meta)
    ncc.all_to_all_v_prepare(srcs=[src], dsts=[dst], replica_group=group, metadata_tensor=m)
    ncc.all_gather_v_prepare(srcs=[src], dsts=[dst], replica_group=group, metadata_tensor=m)  # ERR:second_prepare
    return returned(dst)


@nki.jit
def triggered_twice(x, meta, group):
    src, dst, m = hbm_copy(x), hbm_copy(x), hbm_copy(meta)
    p = ncc.all_to_all_v_prepare(srcs=[src], dsts=[dst], replica_group=group, metadata_tensor=m)
    ncc.all_to_all_v_trigger(p)
    ncc.all_to_all_v_trigger(p)  # ERR:twice
    return returned(dst)


@nki.jit
def never_triggered(x, meta, group):
    src, dst, m = hbm_copy(x), hbm_copy(x), hbm_copy(meta)
    ncc.all_to_all_v_prepare(srcs=[src], dsts=[dst], replica_group=group, metadata_tensor=m)  # ERR:untriggered
    return returned(dst)


@nki.jit
def trigger_of_a_copy(x, meta, group):
    src = hbm_copy(x)
    ncc.all_to_all_v_trigger(nisa.dma_copy(dst=src, src=x))  # ERR:not_prepare
    return returned(src)


@nki.jit
def wrong_trigger(x, meta, group):
    src, dst, m = hbm_copy(x), hbm_copy(x), hbm_copy(meta)
    p = ncc.all_to_all_v_prepare(srcs=[src], dsts=[dst], replica_group=group, metadata_tensor=m)
    ncc.all_gather_v_trigger(p)  # ERR:other_trigger
    return returned(dst)


@nki.jit
def float_metadata(x, meta, group):
    src, dst, m = hbm_copy(x), hbm_copy(x), hbm_copy(meta)
    ncc.all_to_all_v(srcs=[src], dsts=[dst], replica_group=group, metadata_tensor=m)  # ERR:meta
    return returned(dst)


PREPARE_RULES = [
    (two_prepares, np.uint32, "second_prepare", "ncc.all_gather_v_prepare",
     f"has no trigger yet: each prepare is followed by exactly one trigger, and an intervening prepare of any kind "
     f"is rejected"),
    (triggered_twice, np.uint32, "twice", "ncc.all_to_all_v_trigger",
     "is triggered already: each prepare is followed by exactly one trigger"),
    (never_triggered, np.uint32, "untriggered", "ncc.all_to_all_v_prepare",
     "this prepare has no trigger: each prepare is followed by exactly one trigger (ncc.*_v_trigger(prepare_instr))"),
    (trigger_of_a_copy, np.uint32, "not_prepare", "ncc.all_to_all_v_trigger",
     "prepare_instr is what an ncc.*_v_prepare call returned; got the instruction of nisa.dma_copy"),
    (wrong_trigger, np.uint32, "other_trigger", "ncc.all_gather_v_trigger",
     "prepare_instr is an ncc.all_to_all_v_prepare; trigger it with its own trigger"),
    (float_metadata, np.float32, "meta", "ncc.all_to_all_v",
     "metadata_tensor is uint32 [3, 2] in HBM or [1, 3, 2] in SBUF (rows by the list's ranks); got float32[3, 2] "
     "in private_hbm"),
]


@pytest.mark.parametrize("kernel, meta_dtype, marker, api, message", PREPARE_RULES, ids=[r[2] for r in PREPARE_RULES])
def test_the_prepare_slot_and_metadata_rules(kernel, meta_dtype, marker, api, message):
    e = trace_error(kernel, np.zeros(8, np.float32), np.zeros((3, 2), meta_dtype), world(2))
    check_diag(e, M, "err_unsupported_args", message, [(marker, "ncc.")], api=api)


@nki.jit
def variable_rule(x, meta, group, case):
    src, dst = hbm_copy(x), hbm_copy(x)
    m = hbm_copy(meta)
    if case == "rdispls":
        ncc.all_gather_v(srcs=[src], dsts=[dst], replica_group=group, metadata_tensor=m, has_rdispls=True)  # ERR:rdispls
    elif case == "two":
        ncc.all_to_all_v(srcs=[src, src], dsts=[dst, dst], replica_group=group, metadata_tensor=m)  # ERR:two
    elif case == "sbuf":
        t = nl.ndarray((1, x.shape[0]), x.dtype, buffer=nl.sbuf)
        ncc.all_to_all_v(srcs=[t], dsts=[dst], replica_group=group, metadata_tensor=m)  # ERR:sbuf
    elif case == "rows":
        ncc.all_to_all_v(srcs=[src], dsts=[dst], replica_group=group, metadata_tensor=m, has_rdispls=True)  # ERR:rows
    elif case == "slots":
        odd = nl.ndarray((x.shape[0] - 1,), x.dtype, buffer=nl.private_hbm)
        ncc.all_to_all_v(srcs=[odd], dsts=[odd], replica_group=group, metadata_tensor=m)  # ERR:slots
    return returned(dst)


VARIABLE_RULES = [
    ("rdispls", "err_unsupported_args", "ncc.all_gather_v",
     "all_gather_v has no receive displacements (has_rdispls=False)"),
    ("two", "err_unsupported_args", "ncc.all_to_all_v", "srcs and dsts hold one tensor each; got 2 and 2"),
    ("sbuf", "err_unsupported_memory", "ncc.all_to_all_v",
     "Expected operand 'srcs' of 'all_to_all_v' to be in address space 'hbm', but got a tile in 'sbuf' instead."),
    ("rows", "err_unsupported_args", "ncc.all_to_all_v", "metadata_tensor is uint32 [4, 2] in HBM or [1, 4, 2] in SBUF"),
    ("slots", "err_unsupported_args", "ncc.all_to_all_v",
     "dsts[0] holds one slot per rank of the list: its 7 elements do not split into 2"),
]


@pytest.mark.parametrize("case, code, api, message", VARIABLE_RULES, ids=[r[0] for r in VARIABLE_RULES])
def test_a_variable_collective_rule_is_a_diagnostic_at_the_call(case, code, api, message):
    e = trace_error(variable_rule, np.zeros(8, np.float32), np.zeros((3, 2), np.uint32), world(2), case)
    check_diag(e, M, code, message, [(case, "ncc.")], api=api)
