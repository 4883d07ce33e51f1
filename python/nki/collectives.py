"""nki.collectives (ncc; NKI_07_08_API.md §8): each call is one instruction that exchanges data
with the other ranks of the caller's replica-group list (codegen/Collectives.h). nki.simulate
runs one rank; nki.multi_rank_simulate runs several, which meet at every collective."""
import enum
import os

from nkic._core import core
from nkic._ops import op_name
from . import language as nl
from ._api import api as _api
from ._registers import VirtualRegister, _tile
from ._scalars import NkiScalar


class rg_partition_op(enum.Enum):
    """How ReplicaGroup.from_partition_op groups ranks: by rank // operand, rank % operand or
    rank & operand."""
    div = "div"
    mod = "mod"
    bitwise_and = "bitwise_and"


class ReplicaGroup(nl.NKIObject):
    """The rank lists that exchange data in a collective: non-overlapping, every rank of the
    world in one list."""
    replica_groups = ()

    @classmethod
    def from_partition_op(cls, world_size, op, operand):
        """Ranks 0 .. world_size-1 with equal op(rank, operand) form one list."""
        api = "ReplicaGroup.from_partition_op"
        if not isinstance(op, rg_partition_op):
            core.raise_unexpected_operand(f"{api} op", f"{op!r}; expected a member of ncc.rg_partition_op")
        return cls(core.replica_groups_from_partition_op(core.int_arg(world_size, "world_size", api), op.value,
                                                         core.int_arg(operand, "operand", api)))

    def __repr__(self):
        return f"ReplicaGroup({[list(g) for g in self.replica_groups]!r})"

    def __eq__(self, other):
        return isinstance(other, ReplicaGroup) and _lists(self.replica_groups) == _lists(other.replica_groups)

    def __hash__(self):
        return hash(str(_lists(self.replica_groups)))


def _lists(groups):
    return [list(g) for g in groups] if isinstance(groups, (tuple, list)) else groups


def _groups(replica_group, api):
    """The replica group's lists as ints."""
    if not isinstance(replica_group, ReplicaGroup):
        core.raise_unexpected_operand(f"{api} replica_group", f"'{type(replica_group).__name__}', expected an "
                                      "ncc.ReplicaGroup")
    groups = replica_group.replica_groups
    if not isinstance(groups, (tuple, list)) or not all(isinstance(g, (tuple, list)) for g in groups):
        core.raise_unexpected_operand(f"{api} replica_group", f"{replica_group!r}; its replica_groups are lists "
                                      "of ranks")
    return [[core.int_arg(r, "replica_group", api) for r in g] for g in groups]


def _tensors(value, what, api):
    if not isinstance(value, (tuple, list)):
        core.raise_unexpected_operand(f"{api} {what}", f"'{type(value).__name__}', expected a list of tensors")
    return list(value)


def _collective(kind, srcs, dsts, groups, op, collective_dim, priority, metadata=None, recv_counts_known=False,
                has_rdispls=False, prepare=False):
    api = "ncc." + kind
    core.collective(kind, _tensors(srcs, "srcs", api), _tensors(dsts, "dsts", api), groups,
                    None if op is None else op_name(op, "op"), core.int_arg(collective_dim, "collective_dim", api),
                    None if priority is None else core.int_arg(priority, "priority", api),
                    os.environ.get("NKI_LNC1_SHARED_HBM") == "1", metadata, bool(recv_counts_known),
                    bool(has_rdispls), prepare)


@_api("ncc.all_reduce")
def all_reduce(srcs, dsts, replica_group, op, priority=None, name=None):
    """dsts[i] = op over the ranks of the caller's list of their srcs[i] (nl.add, nl.maximum or
    nl.minimum), in fp32, rounded once to the dtype of dsts[i]."""
    _collective("all_reduce", srcs, dsts, _groups(replica_group, "ncc.all_reduce"), op, 0, priority)


@_api("ncc.all_gather")
def all_gather(srcs, dsts, replica_group, collective_dim, priority=None, name=None):
    """dsts[i] = the srcs[i] of the caller's list, concatenated along collective_dim in list order."""
    _collective("all_gather", srcs, dsts, _groups(replica_group, "ncc.all_gather"), None, collective_dim, priority)


@_api("ncc.reduce_scatter")
def reduce_scatter(srcs, dsts, replica_group, collective_dim, op, priority=None, name=None):
    """dsts[i] = the caller's part (by its position in its list) of op over the list of srcs[i]."""
    _collective("reduce_scatter", srcs, dsts, _groups(replica_group, "ncc.reduce_scatter"), op, collective_dim,
                priority)


@_api("ncc.all_to_all")
def all_to_all(srcs, dsts, replica_group, collective_dim, priority=None, name=None):
    """Part j of the srcs[i] of the list's i-th rank becomes part i of the dsts[i] of its j-th."""
    _collective("all_to_all", srcs, dsts, _groups(replica_group, "ncc.all_to_all"), None, collective_dim, priority)


@_api("ncc.collective_permute")
def collective_permute(srcs, dsts, source_target_pairs, priority=None, name=None):
    """Each pair's source rank sends its srcs to the target rank's dsts; a rank no pair targets
    keeps its dsts."""
    api = "ncc.collective_permute"
    if not isinstance(source_target_pairs, (tuple, list)) or \
            not all(isinstance(p, (tuple, list)) for p in source_target_pairs):
        core.raise_unexpected_operand(f"{api} source_target_pairs", f"{source_target_pairs!r}; expected a list of "
                                      "(source, target) pairs")
    pairs = [[core.int_arg(r, "source_target_pairs", api) for r in p] for p in source_target_pairs]
    _collective("collective_permute", srcs, dsts, pairs, None, 0, priority)


@_api("ncc.rank_id")
def rank_id(name=None):
    """The caller's rank, as a VirtualRegister."""
    reg = VirtualRegister._of(_tile())  # nkic's register, not the user's construction: no deprecation
    core.rank_id(reg.tile)
    return reg


@_api("ncc.self_index_in_replica_group")
def self_index_in_replica_group(replica_group, name=None):
    """The caller's position in its own list of replica_group (global rank 6 in [[0..3], [4..7]]
    is 2), as an int32 NkiScalar (NKI 0.8). A rank in no list is an error where it runs."""
    tile = _tile()
    core.self_index_in_replica_group(tile, _groups(replica_group, "ncc.self_index_in_replica_group"))
    return NkiScalar(tile)


@_api("ncc.all_to_all_v")
def all_to_all_v(srcs, dsts, replica_group, metadata_tensor, recv_counts_known=False, has_rdispls=False,
                 priority=None, name=None):
    """Rank i of the list sends srcs[0][send_displs[j]:][:send_counts[j]] to its j-th rank, which
    puts it at slot i of dsts[0] (i * dsts[0].size / ranks; recv_displs[i] with has_rdispls) and,
    unless recv_counts_known, writes recv_counts[i]: metadata rows send_counts, send_displs,
    recv_counts, recv_displs, one uint32 column per rank of the list, read at run time."""
    _collective("all_to_all_v", srcs, dsts, _groups(replica_group, "ncc.all_to_all_v"), None, 0, priority,
                metadata_tensor, recv_counts_known, has_rdispls)


@_api("ncc.all_gather_v")
def all_gather_v(srcs, dsts, replica_group, metadata_tensor, recv_counts_known=False, has_rdispls=False,
                 priority=None, name=None):
    """Each rank of the list sends srcs[0][displ:displ + count] (the metadata's first column of
    rows 0 and 1) to every rank, at slot s * dsts[0].size / ranks for the list's s-th rank."""
    _collective("all_gather_v", srcs, dsts, _groups(replica_group, "ncc.all_gather_v"), None, 0, priority,
                metadata_tensor, recv_counts_known, has_rdispls)


@_api("ncc.all_to_all_v_prepare")
def all_to_all_v_prepare(srcs, dsts, replica_group, metadata_tensor, recv_counts_known=False, has_rdispls=False,
                         priority=None, name=None):
    """The metadata set-up of an all_to_all_v (reads metadata_tensor only); its trigger moves the data."""
    _collective("all_to_all_v", srcs, dsts, _groups(replica_group, "ncc.all_to_all_v_prepare"), None, 0, priority,
                metadata_tensor, recv_counts_known, has_rdispls, prepare=True)


@_api("ncc.all_gather_v_prepare")
def all_gather_v_prepare(srcs, dsts, replica_group, metadata_tensor, recv_counts_known=False, has_rdispls=False,
                         priority=None, name=None):
    """The metadata set-up of an all_gather_v (reads metadata_tensor only); its trigger moves the data."""
    _collective("all_gather_v", srcs, dsts, _groups(replica_group, "ncc.all_gather_v_prepare"), None, 0, priority,
                metadata_tensor, recv_counts_known, has_rdispls, prepare=True)


@_api("ncc.all_to_all_v_trigger")
def all_to_all_v_trigger(prepare_instr, name=None):
    """Moves the data of the all_to_all_v_prepare that returned prepare_instr, with its arguments."""
    core.collective_trigger("all_to_all_v", prepare_instr)


@_api("ncc.all_gather_v_trigger")
def all_gather_v_trigger(prepare_instr, name=None):
    """Moves the data of the all_gather_v_prepare that returned prepare_instr, with its arguments."""
    core.collective_trigger("all_gather_v", prepare_instr)


def _channels(value, what, api):
    """A list of tensor lists, one per channel."""
    return [_tensors(v, f"{what}[{i}]", api) for i, v in enumerate(_tensors(value, what, api))]


def _ring_permute(srcs, srcs1, dsts, replica_group, op, channel_ids, priority, api):
    if not isinstance(channel_ids, (tuple, list)):
        core.raise_unexpected_operand(f"{api} channel_ids", f"{channel_ids!r}; expected a list of channel ids")
    core.collective_permute_implicit(
        _channels(srcs, "srcs_by_channel" if op is None else "srcs0_by_channel", api),
        None if op is None else _channels(srcs1, "srcs1_by_channel", api), _channels(dsts, "dsts_by_channel", api),
        _groups(replica_group, api), None if op is None else op_name(op, "op"),
        [core.int_arg(c, "channel_ids", api) for c in channel_ids],
        None if priority is None else core.int_arg(priority, "priority", api))


@_api("ncc.collective_permute_implicit")
def collective_permute_implicit(srcs_by_channel, dsts_by_channel, replica_group, channel_ids=(0,), priority=None,
                                name=None):
    """On each channel every rank of a list sends its srcs_by_channel[c][0] to its successor in the
    list (the last to the first) and receives its predecessor's into dsts_by_channel[c][0]."""
    _ring_permute(srcs_by_channel, None, dsts_by_channel, replica_group, None, channel_ids, priority,
                  "ncc.collective_permute_implicit")


@_api("ncc.collective_permute_implicit_reduce")
def collective_permute_implicit_reduce(srcs0_by_channel, srcs1_by_channel, dsts_by_channel, replica_group, op,
                                       channel_ids=(0,), priority=None, name=None):
    """collective_permute_implicit of op(srcs0_by_channel[c][0], srcs1_by_channel[c][0]) (nl.add,
    nl.maximum or nl.minimum), computed in fp32 and rounded once to the dtype of dsts_by_channel[c][0]."""
    _ring_permute(srcs0_by_channel, srcs1_by_channel, dsts_by_channel, replica_group, op, channel_ids, priority,
                  "ncc.collective_permute_implicit_reduce")


@_api("ncc.collective_permute_implicit_current_processing_rank_id")
def collective_permute_implicit_current_processing_rank_id(iteration_id, replica_group, channel_id=0, name=None):
    """The rank whose data the ring permutes have brought at step iteration_id: the caller's own at
    0, at step k the rank k places before it in its list; a VirtualRegister, as ncc.rank_id's."""
    api = "ncc.collective_permute_implicit_current_processing_rank_id"
    reg = VirtualRegister._of(_tile())
    core.current_processing_rank_id(reg.tile, core.int_arg(iteration_id, "iteration_id", api), _groups(replica_group, api),
                                    core.int_arg(channel_id, "channel_id", api))
    return reg
