// bfloat16, float8_e4m3 and float8_e5m2 as real numpy dtypes (NKI_API.md §2.4):
// Debian's numpy has no ml_dtypes, so the extension provides them itself.
#pragma once
#include <pybind11/pybind11.h>

namespace nkic::py_bind {

// Registers the three dtypes with numpy (once per process) and sets
// m.bfloat16, m.float8_e4m3 and m.float8_e5m2 to their scalar types.
void register_numpy_dtypes(pybind11::module_& m);

}  // namespace nkic::py_bind
