// glibc's expf (sysdeps/ieee754/flt-32/e_expf.c), which the simulator's scalar
// exp calls, computes in double: x * 32/ln2 = k + r, 2^(k/32) from a table of
// 32 entries, a cubic in r, one rounding to float. On a CPU with FMA glibc runs
// its FMA build of that code; the AVX2 and AVX-512 kernels below perform the same
// operations with the same constants, four or eight lanes at a time, so they give
// the same bits.
// Lanes outside the fast path (|x| >= 88, inf, NaN) take the scalar call, and a
// self-check against the C library at first use keeps the scalar path if the
// library computes anything else.
#include "sim/VecExp.h"

#include <immintrin.h>

#include <cmath>
#include <cstring>

#include "sim/SimdLevel.h"

namespace nkic::sim {

namespace {

// 2^(i/32) with i << 47 subtracted from its bits (glibc's __exp2f_data.tab).
constexpr uint64_t kTable[32] = {
    0x3ff0000000000000, 0x3fefd9b0d3158574, 0x3fefb5586cf9890f, 0x3fef9301d0125b51,
    0x3fef72b83c7d517b, 0x3fef54873168b9aa, 0x3fef387a6e756238, 0x3fef1e9df51fdee1,
    0x3fef06fe0a31b715, 0x3feef1a7373aa9cb, 0x3feedea64c123422, 0x3feece086061892d,
    0x3feebfdad5362a27, 0x3feeb42b569d4f82, 0x3feeab07dd485429, 0x3feea47eb03a5585,
    0x3feea09e667f3bcd, 0x3fee9f75e8ec5f74, 0x3feea11473eb0187, 0x3feea589994cce13,
    0x3feeace5422aa0db, 0x3feeb737b0cdc5e5, 0x3feec49182a3f090, 0x3feed503b23e255d,
    0x3feee89f995ad3ad, 0x3feeff76f2fb5e47, 0x3fef199bdd85529c, 0x3fef3720dcef9069,
    0x3fef5818dcfba487, 0x3fef7c97337b9b5f, 0x3fefa4afa2a490da, 0x3fefd0765b6e4540,
};
constexpr double kInvLn2N = 0x1.71547652b82fep+5;  // 32 / ln 2
constexpr double kShift = 0x1.8p+52;               // rounds to an integer in the low bits
constexpr double kC0 = 0x1.c6af84b912394p-20, kC1 = 0x1.ebfce50fac4f3p-13, kC2 = 0x1.62e42ff0c52d6p-6;

__attribute__((target("avx2,fma"))) __m128 exp4(__m128 x) {
  const __m256d xd = _mm256_cvtps_pd(x);
  const __m256d z = _mm256_fmadd_pd(_mm256_set1_pd(kInvLn2N), xd, _mm256_set1_pd(kShift));
  const __m256i ki = _mm256_castpd_si256(z);
  const __m256d kd = _mm256_sub_pd(z, _mm256_set1_pd(kShift));
  const __m256d r = _mm256_fmsub_pd(_mm256_set1_pd(kInvLn2N), xd, kd);
  __m256i t = _mm256_i64gather_epi64(reinterpret_cast<const long long*>(kTable),
                                     _mm256_and_si256(ki, _mm256_set1_epi64x(31)), 8);
  t = _mm256_add_epi64(t, _mm256_slli_epi64(ki, 47));
  const __m256d p = _mm256_fmadd_pd(_mm256_set1_pd(kC0), r, _mm256_set1_pd(kC1));
  const __m256d r2 = _mm256_mul_pd(r, r);
  __m256d y = _mm256_fmadd_pd(_mm256_set1_pd(kC2), r, _mm256_set1_pd(1.0));
  y = _mm256_fmadd_pd(p, r2, y);
  return _mm256_cvtpd_ps(_mm256_mul_pd(y, _mm256_castsi256_pd(t)));
}

__attribute__((target("avx2,fma"))) void exp_avx2(const float* a, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 x = _mm256_loadu_ps(a + i);
    _mm256_storeu_ps(out + i, _mm256_set_m128(exp4(_mm256_extractf128_ps(x, 1)), exp4(_mm256_castps256_ps128(x))));
    // glibc's fast path needs the top 12 bits of |x| below those of 88.0f.
    const __m256i top = _mm256_and_si256(_mm256_srli_epi32(_mm256_castps_si256(x), 20), _mm256_set1_epi32(0x7ff));
    for (int m = _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(top, _mm256_set1_epi32(0x42a)))); m;
         m &= m - 1)
      out[i + __builtin_ctz(m)] = std::exp(a[i + __builtin_ctz(m)]);
  }
  for (; i < n; ++i) out[i] = std::exp(a[i]);
}

// The same operations eight lanes at a time; the table lookup is two-register
// permutes (the 32 entries fill four registers) instead of a gather.
__attribute__((target("avx512f"))) __m256 exp8(__m256 x) {
  const __m512d xd = _mm512_cvtps_pd(x);
  const __m512d z = _mm512_fmadd_pd(_mm512_set1_pd(kInvLn2N), xd, _mm512_set1_pd(kShift));
  const __m512i ki = _mm512_castpd_si512(z);
  const __m512d kd = _mm512_sub_pd(z, _mm512_set1_pd(kShift));
  const __m512d r = _mm512_fmsub_pd(_mm512_set1_pd(kInvLn2N), xd, kd);
  const __m512i idx = _mm512_and_si512(ki, _mm512_set1_epi64(31));
  const double* table = reinterpret_cast<const double*>(kTable);
  const __m512d lo = _mm512_permutex2var_pd(_mm512_loadu_pd(table), idx, _mm512_loadu_pd(table + 8));
  const __m512d hi = _mm512_permutex2var_pd(_mm512_loadu_pd(table + 16), idx, _mm512_loadu_pd(table + 24));
  __m512i t = _mm512_castpd_si512(_mm512_mask_blend_pd(_mm512_test_epi64_mask(idx, _mm512_set1_epi64(16)), lo, hi));
  t = _mm512_add_epi64(t, _mm512_slli_epi64(ki, 47));
  const __m512d p = _mm512_fmadd_pd(_mm512_set1_pd(kC0), r, _mm512_set1_pd(kC1));
  const __m512d r2 = _mm512_mul_pd(r, r);
  __m512d y = _mm512_fmadd_pd(_mm512_set1_pd(kC2), r, _mm512_set1_pd(1.0));
  y = _mm512_fmadd_pd(p, r2, y);
  return _mm512_cvtpd_ps(_mm512_mul_pd(y, _mm512_castsi512_pd(t)));
}

__attribute__((target("avx512f"))) void exp_avx512(const float* a, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 x = _mm512_loadu_ps(a + i);
    const __m256 x0 = _mm512_castps512_ps256(x);
    const __m256 x1 = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(x), 1));
    _mm256_storeu_ps(out + i, exp8(x0));
    _mm256_storeu_ps(out + i + 8, exp8(x1));
    const __m512i top = _mm512_and_si512(_mm512_srli_epi32(_mm512_castps_si512(x), 20), _mm512_set1_epi32(0x7ff));
    for (unsigned m = _mm512_cmpgt_epi32_mask(top, _mm512_set1_epi32(0x42a)); m; m &= m - 1)
      out[i + __builtin_ctz(m)] = std::exp(a[i + __builtin_ctz(m)]);
  }
  for (; i < n; ++i) out[i] = std::exp(a[i]);
}

using ExpKernel = void (*)(const float*, float*, int64_t);

// A kernel agrees with the C library on a sweep of the fast path's range.
bool matches_libm(ExpKernel kernel) {
  constexpr int kN = 1 << 14;
  static float x[kN], mine[kN];
  for (int i = 0; i < kN; ++i) x[i] = -88.0f + 176.0f * static_cast<float>(i) / kN + 1e-3f * static_cast<float>(i % 7);
  kernel(x, mine, kN);
  for (int i = 0; i < kN; ++i) {
    const float ref = std::exp(x[i]);
    if (std::memcmp(&ref, &mine[i], 4) != 0) return false;
  }
  return true;
}

ExpKernel vector_kernel() {
  if (simd_level() == SimdLevel::avx512 && matches_libm(exp_avx512)) return exp_avx512;
  if (simd_level() >= SimdLevel::avx2 && matches_libm(exp_avx2)) return exp_avx2;
  return nullptr;
}

}  // namespace

void exp_floats(const float* a, float* out, int64_t n) {
  static const ExpKernel kernel = vector_kernel();
  if (kernel) return kernel(a, out, n);
  for (int64_t i = 0; i < n; ++i) out[i] = std::exp(a[i]);
}

}  // namespace nkic::sim
