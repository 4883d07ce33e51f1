// The cross-partition moves (Exec::Shuffle): nc_stream_shuffle, whose Vector
// Engine stream hands each partition of a 32-partition quadrant the row of
// another partition of it.
#pragma once
#include <cstdint>
#include <vector>

#include "ir/IR.h"
#include "sim/TensorMem.h"

namespace nkic::sim {

// Every source row is read before any row is written, so src may be dst. Rows
// move exactly between equal dtypes and as a copy converts otherwise.
void run_shuffle(std::vector<TensorMem>& mem, const ir::Instruction& in, const int64_t* loops, const int64_t* pids);

}  // namespace nkic::sim
