// nki.collectives (NKI_07_08_API.md §8, NKI_CURRENT_API.md §8.2): each call is one
// instruction (Isa.h exec Ranks) that exchanges data with the other ranks of the caller's
// replica-group list when the simulator runs the ranks (sim/Rendezvous.h). One trace serves
// every rank, so a replica group's lists have one size, from which the shapes follow; which
// list a rank is in is known when it runs.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "codegen/KernelBuilder.h"
#include "ir/AluOp.h"
#include "types/Values.h"

namespace nkic::codegen {

enum class Collective {
  all_reduce, all_gather, reduce_scatter, all_to_all, permute, all_to_all_v, all_gather_v,
  permute_implicit, permute_implicit_reduce
};

struct CollectiveCall {
  Collective kind = Collective::all_reduce;
  std::vector<types::TensorVal> srcs, dsts;
  // The replica group's rank lists (collective_permute: its (source, target) pairs).
  std::vector<std::vector<int64_t>> groups;
  std::optional<ir::AluOp> op;  // all_reduce, reduce_scatter
  int64_t collective_dim = 0;
  std::optional<int64_t> priority;
  bool lnc1_shared_hbm = false;  // NKI_LNC1_SHARED_HBM=1
  // all_to_all_v, all_gather_v: the uint32 metadata tensor, read at run time, and its flags.
  std::optional<types::TensorVal> metadata;
  bool recv_counts_known = false, has_rdispls = false;
};

void collective(KernelBuilder& b, const CollectiveCall& call);

// ncc.collective_permute_implicit(_reduce) (NKI_CURRENT_API.md §8.2): on each channel, every rank of
// a list sends its srcs (with op: op(srcs, srcs1), in fp32) to its successor in the list (the last
// to the first) and receives its predecessor's into dsts. Each channel's list holds one tensor;
// channel_ids are 0, 1, ...: at most 4 channels when the replica group is one list (every device
// of the node), else at most 2.
struct RingPermuteCall {
  std::vector<std::vector<types::TensorVal>> srcs, srcs1, dsts;  // by channel; srcs1 with op only
  std::vector<std::vector<int64_t>> groups;
  std::vector<int64_t> channel_ids;
  std::optional<ir::AluOp> op;
  std::optional<int64_t> priority;
};
void collective_permute_implicit(KernelBuilder& b, const RingPermuteCall& call);
// ncc.collective_permute_implicit_current_processing_rank_id: the rank whose data the ring
// permutes of `groups` have brought at step `iteration` (the caller's own at 0, at step k the rank
// k places before it in its list), written into `reg` (a register's [1, 1] int32 tile).
void current_processing_rank_id(KernelBuilder& b, const types::TensorVal& reg, int64_t iteration,
                                const std::vector<std::vector<int64_t>>& groups, int64_t channel_id);
// ncc.all_to_all_v_prepare / all_gather_v_prepare: the metadata set-up (cc_prepare) of the trigger
// that must follow, with no other prepare in between (the prepares share one slot).
void collective_prepare(KernelBuilder& b, const CollectiveCall& call);
// ncc.*_v_trigger(prepare_instr): the data movement of the prepare whose first instruction is
// `prepare_id`, with every argument of it.
void collective_trigger(KernelBuilder& b, Collective kind, int64_t prepare_id);
// The kernel's end: a prepare without its trigger is an error at the prepare.
void check_prepares_triggered(KernelBuilder& b);
// ncc.rank_id: the caller's rank, written into `reg` (a register's [1, 1] int32 tile).
void rank_id(KernelBuilder& b, const types::TensorVal& reg);
// ncc.self_index_in_replica_group (NKI 0.8): the caller's position in its own list of `groups`
// (global rank 6 in [[0..3], [4..7]] is 2), written into `reg` (a scalar's [1, 1] int32 tile);
// a rank in no list fails where it runs.
void self_index_in_replica_group(KernelBuilder& b, const types::TensorVal& reg,
                                 const std::vector<std::vector<int64_t>>& groups);
// ReplicaGroup.from_partition_op(world_size, op, operand): ranks 0 .. world_size-1 grouped by
// the value of op(rank, operand) (op: "div", "mod" or "bitwise_and"), lists in order of their
// first rank.
std::vector<std::vector<int64_t>> replica_groups_from_partition_op(int64_t world_size, const std::string& op,
                                                                    int64_t operand);

// nki.multi_rank_simulate: `ranks[r]` describes rank r's arguments as (name, what it is: a
// tensor's dtype and shape, or a static value); every rank's must be rank 0's.
void check_uniform_arguments(const std::vector<std::vector<std::pair<std::string, std::string>>>& ranks);

}  // namespace nkic::codegen
