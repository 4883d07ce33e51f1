// NKI's dtype promotion for binary operations (NKI_API.md §1.6), including the
// weakly-typed Python scalars (bool -> uint8, int -> int32, float -> float32).
#pragma once
#include "ir/DType.h"
#include "types/Values.h"

namespace nkic::types {

ir::DType promote(ir::DType a, ir::DType b);
ir::DType scalar_dtype(const Other& o);

}  // namespace nkic::types
