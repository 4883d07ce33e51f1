// Runtime offsets that hold one value for a whole instruction (the current API's
// .ap(scalar_offset=) and run-time select of an on-chip view): read when the
// instruction runs, they turn its accesses static, and every executor then runs it
// as it runs any other. Offsets that vary by element stay with IndirectExec.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "ir/IR.h"
#include "sim/TensorMem.h"

namespace nkic::sim {

// `in` with each uniform runtime offset of a non-copy instruction added to its
// access (nullopt when there is none). An access that the offsets move outside its
// tensor raises err_tensor_access_out_of_bound, as the point-by-point copies do; an
// uninitialized offset is an error under the check (sim/Uninit.h).
std::optional<ir::Instruction> resolve_uniform_offsets(const std::vector<TensorMem>& mem, const ir::Instruction& in,
                                                       const int64_t* loops, const int64_t* pids);

}  // namespace nkic::sim
