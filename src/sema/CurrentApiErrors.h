// The diagnostics of the current nki API's 0.3+ rules and of its accepted Python
// subset (NKI_CURRENT_API.md §2.3, §9), beside the legacy catalog.
#pragma once
#include <string_view>

#include "sema/Diagnostic.h"

namespace nkic::sema {

Diagnostic err_hwdge_dtype_mismatch(std::string_view src, std::string_view dst);
Diagnostic err_memset_value_dtype(std::string_view value, std::string_view dtype, std::string_view why);
Diagnostic err_output_not_in_shared_hbm(std::string_view tensor, std::string_view memory);
Diagnostic err_unsupported_python_construct(std::string_view what, std::string_view hint);

}  // namespace nkic::sema
