// The err_* builders of the nki 0.7/0.8 device scalars (NkiScalar, nisa.scalar_*) and of
// the 64-bit integer dtypes they bring (NKI_07_08_API.md §2, §9.3); ErrorCatalogScalars.cpp.
#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

#include "sema/Diagnostic.h"

namespace nkic::sema {

// A scalar operand `what` of `api` whose dtype is not int32/int64.
Diagnostic err_scalar_dtype(std::string_view api, std::string_view what, std::string_view dtype,
                            std::string_view hint);
// A scalar's memory operand that is not one element.
Diagnostic err_scalar_shape(std::string_view api, std::string_view what, const std::vector<int64_t>& shape);
// An int32 and an int64 scalar in one operation (or a store of one width into the other).
Diagnostic err_scalar_width_mismatch(std::string_view api, std::string_view why);
// An int64 scalar where only 32-bit ones are taken (divide, comparisons, loop bounds, ...).
Diagnostic err_scalar_int64_unsupported(std::string_view api, std::string_view what, std::string_view hint);
// A compute instruction touching an int64/uint64 tensor.
Diagnostic err_wide_dtype_compute(std::string_view instruction, std::string_view tensor, std::string_view dtype);
// An NkiScalar as a Python `if`/`while` condition (err_dynamic_control_flow_not_supported).
Diagnostic err_scalar_condition();
// A Python operator (`//`, `%`, `/`) or conversion (int()) the scalar does not have
// (err_instruction_unsupported_op).
Diagnostic err_scalar_python_operator(std::string_view op);
}  // namespace nkic::sema
