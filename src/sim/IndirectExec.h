// Loads, stores and copies with indirect (runtime) indices: each point's
// element is located through the index tile's value, so they run point by
// point. An accumulating store (nl.atomic_rmw, dma_copy dst_rmw_op=np.add)
// adds, in program order, so repeated indices accumulate.
#pragma once
#include <cstdint>
#include <vector>

#include "ir/IR.h"
#include "sim/TensorMem.h"

namespace nkic::sim {

class IndirectExec {
 public:
  explicit IndirectExec(std::vector<TensorMem>& mem) : mem_(mem) {}
  static bool handles(const ir::Instruction& in);
  void run(const ir::Instruction& in, const int64_t* loops, const int64_t* pids);

 private:
  std::vector<TensorMem>& mem_;
};

}  // namespace nkic::sim
