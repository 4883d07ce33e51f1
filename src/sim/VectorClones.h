// A hot loop built twice, for AVX2 and for the baseline x86-64 vector unit, and
// picked at first call by simd_level() (sim/SimdLevel.h). Both builds compute the
// same bits: IEEE operations only, and "avx2" alone does not enable FMA contraction.
//   NKIC_VECTOR_BODY void f_body(int64_t n, float* x) { ... }
//   NKIC_VECTOR_BUILDS(f_body, void, f, (int64_t n, float* x), (n, x))
// defines f(n, x). The body is inlined into each build, so each gets its own vectors.
#pragma once

#include "sim/SimdLevel.h"

#define NKIC_VECTOR_BODY static inline __attribute__((always_inline))

#define NKIC_VECTOR_BUILDS(body, ret, name, params, args)                                        \
  __attribute__((target("avx2"))) static ret name##_avx2 params { return body args; }           \
  static ret name##_baseline params { return body args; }                                       \
  ret name params {                                                                             \
    static ret(*const build) params =                                                           \
        ::nkic::sim::simd_level() >= ::nkic::sim::SimdLevel::avx2 ? name##_avx2 : name##_baseline; \
    return build args;                                                                          \
  }
