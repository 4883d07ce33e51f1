// The microscaling instructions (MxScale, MxQuantize, MatmulMx): point by point
// over their [Q, 4, 8, 4, ...] spaces, since a lane of a packed element is not
// an element the tile kernels can address.
#pragma once
#include <cstdint>
#include <vector>

#include "ir/IR.h"
#include "sim/PointWalk.h"
#include "sim/Simulator.h"
#include "sim/TensorMem.h"

namespace nkic::sim {

class MxExec {
 public:
  MxExec(std::vector<TensorMem>& mem, const SimOptions& opts) : mem_(mem), opts_(opts) {}
  void run(const ir::Instruction& in, const int64_t* loops, const int64_t* pids);

 private:
  void scale(const ir::Instruction& in, const int64_t* loops, const int64_t* pids);
  void quantize(const ir::Instruction& in, const int64_t* loops, const int64_t* pids);
  void matmul(const ir::Instruction& in, const int64_t* loops, const int64_t* pids);
  // The element of access `a` at a point, checked for initialisation.
  int64_t read_at(const ir::Instruction& in, const ir::Access& a, const ValueOf& value_of);

  std::vector<TensorMem>& mem_;
  SimOptions opts_;
};

}  // namespace nkic::sim
