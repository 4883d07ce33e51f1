// Manual placement (nl.ndarray(..., address=)) of the current nki API: two placed
// tensors may share bytes of a partition only when their uses do not overlap in
// the program. The official simulator checks no placement at all.
#pragma once
#include <cstdint>

#include "codegen/KernelBuilder.h"

namespace nkic::codegen {

// Raises err_address_overlap at the later tensor's allocation, with a note at the other's.
void check_placement_overlap(KernelBuilder& b);

// nl.ndarray(..., address=(partition, free byte offset)): the tensor fits its buffer on the
// target, and a PSUM tensor starts on a bank boundary; recorded for the overlap check.
void check_address(KernelBuilder& b, const types::TensorVal& t, int64_t partition, int64_t free_offset);

}  // namespace nkic::codegen
