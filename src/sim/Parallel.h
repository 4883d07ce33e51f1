// When the simulator may run parts of a kernel on several threads with the
// results of one: SPMD programs, or the iterations of an affine loop, split
// into contiguous chunks, each chunk on its own executor. A region (the kernel
// body, or a loop's body) qualifies when every instruction in it is a tile
// instruction without indirect accesses, and each tensor the chunks share is
// either only read in the region or only written, at elements that differ
// between any two programs (iterations). Each chunk gets fresh private copies
// of the tensors the region allocates.
#pragma once
#include <cstdint>
#include <vector>

#include "ir/IR.h"
#include "sim/TensorMem.h"

namespace nkic::sim {

class ParallelRegion {
 public:
  // The kernel body, split over programs: private tensors are those each
  // instance starts fresh (`per_instance`).
  static ParallelRegion programs(const ir::Kernel& k, const std::vector<int>& per_instance);
  // Loop `l`'s iterations: private tensors are the on-chip ones its body declares.
  static ParallelRegion loop(const ir::Kernel& k, const ir::Loop& l);

  // Whether the region is worth splitting and every shared write is disjoint
  // across the split variable, with the enclosing loops and programs at
  // `loop` / `pid` (the values fixed while the region runs).
  bool splits(const std::vector<TensorMem>& mem, const int64_t* loop, const int64_t* pid) const;

  // Tensors each chunk allocates for itself (closed under views).
  const std::vector<bool>& is_private() const { return private_; }
  // Shared tensors the region touches (their pending fills happen before it runs).
  const std::vector<int>& shared() const { return shared_; }

 private:
  struct Write {
    const ir::Instruction* in;
    const ir::Access* dst;
  };
  ParallelRegion(const ir::Kernel& k, const ir::Block& body, const ir::Loop* split);
  void scan(const ir::Block& b);
  void scan(const ir::Instruction& in);
  // Private tensors: no write constraints, no pending fill done beforehand.
  void drop_private();
  int root(int t) const;
  // Writes to root `r` are disjoint across different values of `x` (stepping by
  // `step`) with the other vars in their ranges.
  bool disjoint(int r, ir::Var x, int64_t step, const int64_t* loop, const int64_t* pid) const;

  const ir::Kernel& k_;
  const ir::Loop* split_;  // null: split over programs
  bool eligible_ = true;
  double points_ = 0;       // work estimate: points executed per run of the region
  double trips_ = 1;        // while scanning: product of the enclosing trip counts
  std::vector<bool> private_;
  std::vector<int> shared_;
  std::vector<bool> read_;  // by root
  std::vector<std::vector<Write>> writes_;  // by root
  std::vector<const ir::Loop*> inner_;      // loops nested in the region, by axis
};

}  // namespace nkic::sim
