// What simulating a kernel would cost the host, estimated from its IR before any
// memory is allocated, and the check that refuses a simulation the host cannot
// hold or that would run for longer than the caller allows.
#pragma once
#include <cstdint>

#include "ir/IR.h"
#include "sim/Simulator.h"

namespace nkic::sim {

struct SimCost {
  double bytes = 0;                           // every tensor's storage (the caller's arrays included)
  const ir::TensorDecl* largest = nullptr;    // the tensor with the most bytes
  double largest_bytes = 0;
  double work = 0;                            // element operations, over all loops and program instances
  const ir::Instruction* heaviest = nullptr;  // the instruction doing the most of it
};
SimCost estimate_cost(const ir::Kernel& k, const SimOptions& opts);

// Element operations the simulator runs per second (elementwise; a matmul point
// counts kMatmulPointCost of them), measured on the bench kernels, rounded up so
// the estimate errs towards running.
inline constexpr double kWorkPerSecond = 4e8;
inline constexpr double kMatmulPointCost = 1.0 / 16;
// Fixed work per executed instruction (dispatch, address setup), in element operations.
inline constexpr double kInstructionOverhead = 256;

// The host's available memory in bytes (MemAvailable), or 0 when unknown.
double available_host_memory();

// Throws the diagnostic err_simulation_out_of_memory when the tensors need more than
// opts.memory_limit_bytes (0: the host's available memory), and
// err_simulation_time_limit_exceeded when the estimated run time is above
// opts.time_limit_seconds (0: no limit).
void check_budget(const ir::Kernel& k, const SimOptions& opts);
// err_simulation_out_of_memory for a kernel whose tensors passed check_budget but that
// the host then failed to allocate (memory taken meanwhile, or refused by overcommit).
[[noreturn]] void fail_out_of_memory(const ir::Kernel& k, const SimOptions& opts);

}  // namespace nkic::sim
