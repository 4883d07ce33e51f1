// exp over fp32 arrays, vectorised, with exactly the C library's expf results.
#pragma once
#include <cstdint>

namespace nkic::sim {

// out[i] = std::exp(a[i]) for i < n, bit for bit; `out` must not overlap `a`.
void exp_floats(const float* a, float* out, int64_t n);

}  // namespace nkic::sim
