// The collectives across ranks (Isa.h exec Ranks, NKI_07_08_API.md §8) of one rank: each
// reads its srcs, meets the other members of its replica-group list at the rendezvous
// (sim/Rendezvous.h) and writes its dsts from what they brought. Reductions run in fp32 in
// the list's rank order and round once to the destination format, as dma_compute does.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "ir/IR.h"
#include "sim/Rendezvous.h"
#include "sim/Simulator.h"
#include "sim/TensorMem.h"

namespace nkic::sim {

class RanksExec {
 public:
  // Without opts.ranks the run is a world of one rank (nki.simulate).
  RanksExec(std::vector<TensorMem>& mem, const SimOptions& opts)
      : mem_(mem), rank_(opts.ranks ? opts.rank : 0), ranks_(opts.ranks) {
    if (!ranks_) ranks_ = &solo_.emplace(1);
  }
  void run(const ir::Instruction& in, const int64_t* loops, const int64_t* pids);

 private:
  // The caller's replica-group list, in list order (cc_permute: every rank of the world).
  std::vector<int64_t> members(const ir::Instruction& in) const;
  std::vector<double> read(const ir::Instruction& in, const ir::Access& a, int64_t width, const int64_t* loops,
                           const int64_t* pids);
  // Writes values to positions first, first + 1, ... of the walk of `a`.
  void write(const ir::Instruction& in, const ir::Access& a, const std::vector<double>& values,
             const int64_t* loops, const int64_t* pids, int64_t first = 0);
  // all_to_all_v / all_gather_v: the chunks the metadata names, each at its slot of dst.
  void run_variable(const ir::Instruction& in, const int64_t* loops, const int64_t* pids);
  // What dst `k` of the caller receives (nullopt: nothing, a permute no rank sends to it).
  std::optional<std::vector<double>> received(const ir::Instruction& in, size_t k, int64_t width,
                                              const std::vector<int64_t>& members,
                                              const std::vector<RankData>& all) const;

  std::vector<TensorMem>& mem_;
  int rank_;
  Rendezvous* ranks_;
  std::optional<Rendezvous> solo_;
  // By metadata tensor: what the last cc_prepare of it read. The prepares' one slot is per
  // physical core, and under kernel[2] the cores' prepares run side by side, each core naming
  // its own metadata (or both the one shared tensor, read alike).
  std::map<int, std::vector<double>> prepared_;
};

}  // namespace nkic::sim
