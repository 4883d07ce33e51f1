// Loop-invariant code motion as the cost model sees it: neuronx-cc computes an
// instruction whose operands do not change across the iterations of its loop
// once, before the loop, instead of in every iteration (the fused-mamba
// tutorial's mamba_v2 recomputes delta*u for every state in the source; the
// measured Vector-Engine time shows one computation per channel tile). The IR
// and the simulator keep every instruction; only the schedule skips the copies.
// Kernels of the current nki API hoist nothing: its specialisation unrolls every
// compile-time loop, and its compiler keeps the instructions and the memory
// allocation the kernel specifies (NKI_CURRENT_API.md 2.1; the NKI overview in
// nki/get-started/about), so the loops nkic keeps symbolic are not loops to it.
#pragma once
#include <unordered_map>

#include "ir/IR.h"

namespace nkic::perf {

// For every instruction the compiler would hoist: the axis of the loop directly
// enclosing it, whose later iterations skip it.
std::unordered_map<const ir::Instruction*, int> loop_invariant(const ir::Kernel& k);

}  // namespace nkic::perf
