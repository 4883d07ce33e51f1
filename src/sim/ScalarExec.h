// The sequencer's scalar instructions (Exec::Scalar): scalar_load, scalar_store and
// scalar_alu on one exact integer. int32 arithmetic wraps in two's complement as the
// register does; int64 is exact (wrapping at 64 bits).
#pragma once
#include <cstdint>
#include <vector>

#include "ir/IR.h"
#include "sim/TensorMem.h"

namespace nkic::sim {

void run_scalar(std::vector<TensorMem>& mem, const ir::Instruction& in, const int64_t* loops, const int64_t* pids);

}  // namespace nkic::sim
