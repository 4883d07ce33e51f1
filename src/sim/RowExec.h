// Row instructions: the Vector Engine instructions that walk each partition
// along its free elements in order, carrying state from one element to the next
// (tensor_tensor_scan, bn_stats, bn_aggr, max8, nc_find_index8,
// nc_match_replace8, tensor_scalar_cumulative, topk, nonzero_with_count). Each runs as one native loop per partition, in fp32, and
// rounds once into its results.
#pragma once
#include <cstdint>
#include <vector>

#include "ir/IR.h"
#include "sim/PointWalk.h"
#include "sim/Simulator.h"
#include "sim/TensorMem.h"

namespace nkic::sim {

class RowExec {
 public:
  RowExec(std::vector<TensorMem>& mem, const SimOptions& opts) : mem_(mem), opts_(opts) {}
  void run(const ir::Instruction& in, const int64_t* loops, const int64_t* pids);

 private:
  struct Rows;
  void scan(Rows& r);
  void bn_stats(Rows& r);
  void bn_aggr(Rows& r);
  void top8(Rows& r);
  void sequence_bounds(Rows& r);
  void cumulative(Rows& r);
  void topk(Rows& r);
  void nonzero_with_count(Rows& r);

  std::vector<TensorMem>& mem_;
  SimOptions opts_;
};

}  // namespace nkic::sim
