// Manual placement (nl.ndarray(..., address=)) of the current nki API: two placed
// tensors may share bytes of a partition only when their uses do not overlap in
// the program. The official simulator checks no placement at all.
#pragma once
#include "codegen/KernelBuilder.h"

namespace nkic::codegen {

// Raises err_address_overlap at the later tensor's allocation, with a note at the other's.
void check_placement_overlap(KernelBuilder& b);

}  // namespace nkic::codegen
