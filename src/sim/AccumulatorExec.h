// The reduce accumulator stage of an elementwise instruction (ir::AccCmd): the
// engine's per-partition fp32 register, kept across instructions. After the
// instruction has written its dst, each partition folds the dst's values (as
// stored, in fp32, in row-major order over the points the predicate keeps),
// the register takes the fold (reset_reduce) or folds it in (reduce), and the
// register is copied into reduce_res. A partition no point reaches is untouched.
#pragma once
#include <cstdint>
#include <vector>

#include "ir/IR.h"
#include "sim/Simulator.h"
#include "sim/TensorMem.h"

namespace nkic::sim {

class AccumulatorExec {
 public:
  AccumulatorExec(std::vector<TensorMem>& mem, const SimOptions& opts) : mem_(mem), opts_(opts) {}
  void run(const ir::Instruction& in, const int64_t* loops, const int64_t* pids);

 private:
  // Per partition: the fold of the dst's kept values; seen_[p] when any was kept.
  void fold_dst(const ir::Instruction& in, const int64_t* loops, const int64_t* pids);

  std::vector<TensorMem>& mem_;
  SimOptions opts_;
  std::vector<float> fold_, values_;
  std::vector<uint8_t> seen_;
  // Under the uninitialized-value check, per partition: an uninitialized dst element it folded, or -1.
  std::vector<int64_t> unclean_;
};

}  // namespace nkic::sim
