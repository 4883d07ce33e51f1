// The instructions with effects outside tile memory: the random state
// (Rand, RandomSeed) and printing (Print, nl.device_print). Rare, so they run
// point by point instead of through the planned tile kernels.
#pragma once
#include <cstdint>
#include <ostream>
#include <vector>

#include "ir/IR.h"
#include "sim/TensorMem.h"

namespace nkic::sim {

class SideEffects {
 public:
  SideEffects(std::vector<TensorMem>& mem, std::ostream& out) : mem_(mem), out_(out) {}
  void run(const ir::Instruction& in, const int64_t* loops, const int64_t* pids);

 private:
  double next_uniform();  // [0, 1), deterministic for a seed
  std::vector<TensorMem>& mem_;
  std::ostream& out_;
  uint64_t state_ = 0x9E3779B97F4A7C15ull;
};

}  // namespace nkic::sim
