// DMA coalescing as the cost model sees it: neuronx-cc turns a loop nest of
// affine_range whose body moves data and does nothing else (a copy element by
// element, a row at a time) into one transfer per DMA instruction of the body, its
// descriptors the contiguous runs of all the iterations together, not one transfer
// per iteration (the DMA bandwidth guide: "one large DMA covering multiple logical
// sub-tiles is faster than many small DMAs to adjacent addresses"). Kernels of the
// current nki API keep the DMAs they write (as with Hoisting.h): nothing is coalesced.
// The IR and the simulator keep every instruction; only the schedule merges them.
#pragma once
#include <unordered_map>
#include <vector>

#include "ir/IR.h"

namespace nkic::perf {

// For every DMA instruction the compiler would coalesce: the loops its transfer spans,
// the outermost first (the whole nest below the outermost loop that moves only data).
std::unordered_map<const ir::Instruction*, std::vector<const ir::Loop*>> coalesced_dmas(const ir::Kernel& k);

}  // namespace nkic::perf
