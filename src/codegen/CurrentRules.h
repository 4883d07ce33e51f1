// The 0.3+ legality rules of the current nki API that its thin Python signatures
// hand down (NKI_CURRENT_API.md §9.1): checked here, at the user's line.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "codegen/KernelBuilder.h"
#include "types/Values.h"

namespace nkic::codegen {

// nisa.dma_copy: never a PSUM source; the hardware DGE copies bytes (equal dtypes, v3+);
// a priority= is a level 0-3 of NeuronCore-v4 and newer.
void check_dma_copy(KernelBuilder& b, const types::TensorVal& dst, const types::TensorVal& src, bool hwdge,
                    std::optional<int64_t> priority);
// nisa.dma_transpose: the hardware DGE is NeuronCore-v3's and newer; priority= as dma_copy's.
void check_dma_transpose(KernelBuilder& b, bool hwdge, std::optional<int64_t> priority);
// nisa.memset: the value is typed like dst (an integer for integer dtypes; packed x4 dtypes take 0 only).
void check_memset_value(KernelBuilder& b, const types::TensorVal& dst, double value, bool is_integer);
// nl.ndarray(..., address=(partition, free byte offset)): the tensor fits its buffer on the
// target, and a PSUM tensor starts on a bank boundary.
void check_address(KernelBuilder& b, const types::TensorVal& t, int64_t partition, int64_t free_offset);
// A kernel's returned tensors live in shared HBM.
void check_outputs_shared_hbm(KernelBuilder& b, const std::vector<types::TensorVal>& outputs);
// kernel[lnc]: 1 up to the target's physical cores per logical NeuronCore, and equal to the
// runtime's NEURON_LOGICAL_NC_CONFIG (`runtime`, the variable's text) when that is set.
void check_lnc(KernelBuilder& b, int64_t lnc, const std::string& runtime);

}  // namespace nkic::codegen
