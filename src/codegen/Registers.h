// Registers of the current nki API (NKI_CURRENT_API.md §5.4): a VirtualRegister
// is a runtime 32-bit scalar; nkic keeps it in a [1, 1] int32 SBUF tile, which
// loop bounds, do-while conditions and .ap(scalar_offset=) already read at run time.
#pragma once
#include <string_view>

#include "codegen/KernelBuilder.h"
#include "types/Values.h"

namespace nkic::codegen {

// register_load / register_store: the memory side is one element in SBUF or HBM.
void check_register_operand(KernelBuilder& b, const types::TensorVal& t, std::string_view api, std::string_view what);

}  // namespace nkic::codegen
