// Where the ranks of nki.multi_rank_simulate meet (NKI_07_08_API.md §7.2): every rank runs
// the same IR on a thread of its own, and a collective instruction (Isa.h exec Ranks) is a
// rendezvous of the ranks of the caller's replica-group list. The k-th collective a rank
// reaches meets the k-th of every other member of its list: they must be the same
// instruction, or the run stops with err_collective_mismatch at both ranks' lines. When
// every rank still running waits for a member that finished or waits elsewhere, nothing
// can move any more: err_collective_deadlock.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "ir/IR.h"

namespace nkic::sim {

// What one rank hands over at a collective: the elements of each of its srcs, in walk order.
using RankData = std::vector<std::vector<double>>;

class Rendezvous {
 public:
  explicit Rendezvous(int world_size) : ranks_(static_cast<size_t>(world_size)) {}
  int world_size() const { return static_cast<int>(ranks_.size()); }

  // Rank `rank` reaches collective `in` as a member of `members` (its replica-group list, in
  // list order) with `data`; returns every member's data in list order once all have come.
  // Raises err_collective_mismatch or err_collective_deadlock (ir::NkiError); throws
  // Aborted when another rank failed meanwhile.
  std::vector<RankData> meet(int rank, const ir::Instruction& in, const std::vector<int64_t>& members, RankData data);
  // The rank's kernel ended; raises err_collective_deadlock when that leaves the others stuck.
  void finish(int rank);
  // Another rank failed: every wait ends with Aborted.
  void abort();
  struct Aborted {};

 private:
  enum class State { running, waiting, finished };
  struct Rank {
    State state = State::running;
    // The collectives it reached, in order (the last is the one it waits at when waiting).
    std::vector<const ir::Instruction*> reached;
    std::vector<int64_t> members;  // of the last one's replica-group list
  };
  struct Meeting {
    std::vector<RankData> data;  // by member position
    size_t arrived = 0, collected = 0;
  };
  // Raises err_collective_deadlock when no rank runs and one waits (the caller holds the lock).
  void check_progress();

  std::mutex mu_;
  std::condition_variable cv_;
  bool aborted_ = false;
  std::vector<Rank> ranks_;
  // By (collective number, the members): the meetings under way.
  std::map<std::pair<size_t, std::vector<int64_t>>, Meeting> meetings_;
};

}  // namespace nkic::sim
