// Bit-exact checks of the narrow float formats and the element load/store
// paths. The reference encoder here shares no code with Numerics.cpp: it
// decodes every pattern of a format with ldexp and picks the nearest value in
// double arithmetic, ties to the even encoding.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "sim/Convert.h"
#include "sim/Numerics.h"

namespace {

using nkic::ir::DType;
using namespace nkic::sim;

uint32_t bits_of(float f) { return std::bit_cast<uint32_t>(f); }
float from_bits(uint32_t b) { return std::bit_cast<float>(b); }
const float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

// One IEEE-like format (bias 2^(E-1)-1, inf and NaN in the all-ones exponent)
// plus the implementation's encoder and decoder for it.
struct Format {
  const char* name;
  int E, M;
  uint32_t (*encode)(float);
  float (*decode)(uint32_t);

  int bits() const { return 1 + E + M; }
  uint32_t sign_bit() const { return 1u << (E + M); }
  uint32_t inf_bits() const { return ((1u << E) - 1) << M; }
  bool is_nan(uint32_t b) const {
    return ((b >> M) & ((1u << E) - 1)) == (1u << E) - 1 && (b & ((1u << M) - 1)) != 0;
  }
};

const Format kBF16{"bf16", 8, 7, [](float v) -> uint32_t { return float_to_bf16(v); },
                   [](uint32_t b) { return bf16_to_float(static_cast<uint16_t>(b)); }};
const Format kFP16{"fp16", 5, 10, [](float v) -> uint32_t { return float_to_fp16(v); },
                   [](uint32_t b) { return fp16_to_float(static_cast<uint16_t>(b)); }};
const Format kE4M3{"e4m3", 4, 3, [](float v) -> uint32_t { return float_to_fp8_e4m3(v); },
                   [](uint32_t b) { return fp8_e4m3_to_float(static_cast<uint8_t>(b)); }};
const Format kE5M2{"e5m2", 5, 2, [](float v) -> uint32_t { return float_to_fp8_e5m2(v); },
                   [](uint32_t b) { return fp8_e5m2_to_float(static_cast<uint8_t>(b)); }};
const Format* const kFormats[] = {&kBF16, &kFP16, &kE4M3, &kE5M2};

double ref_decode(const Format& f, uint32_t b) {
  const int bias = (1 << (f.E - 1)) - 1;
  const uint32_t exp = (b >> f.M) & ((1u << f.E) - 1);
  const uint32_t man = b & ((1u << f.M) - 1);
  const double s = (b & f.sign_bit()) ? -1.0 : 1.0;
  if (exp == (1u << f.E) - 1) return man ? std::nan("") : s * INFINITY;
  if (exp == 0) return s * std::ldexp(man, 1 - bias - f.M);
  return s * std::ldexp((1u << f.M) + man, static_cast<int>(exp) - bias - f.M);
}

// Nearest-value search over the non-negative finite values of a format. The
// value one step past the largest finite number (what the next encoding would
// mean with an unbounded exponent) stands for infinity, so overflow follows the
// same tie rule as everything else.
class Reference {
 public:
  explicit Reference(const Format& f) : f_(f) {
    for (uint32_t b = 0; b < f.inf_bits(); ++b) values_.push_back(ref_decode(f, b));
    const int bias = (1 << (f.E - 1)) - 1;
    values_.push_back(std::ldexp(1.0, (1 << f.E) - 1 - bias));  // encodes as inf_bits()
  }

  // Exhaustive linear scan (used for the 8-bit formats).
  uint32_t encode_linear(float v) const {
    if (std::isnan(v)) return f_.inf_bits() | 1;
    const double a = std::fabs(static_cast<double>(v));
    uint32_t best = 0;
    for (uint32_t b = 1; b < values_.size(); ++b) {
      const double d = std::fabs(values_[b] - a), db = std::fabs(values_[best] - a);
      if (d < db || (d == db && (b & 1) == 0)) best = b;
    }
    return with_sign(v, std::isinf(a) ? f_.inf_bits() : best);
  }

  // Binary search between the two neighbours (used for the 16-bit formats).
  uint32_t encode_bisect(float v) const {
    if (std::isnan(v)) return f_.inf_bits() | 1;
    const double a = std::fabs(static_cast<double>(v));
    if (std::isinf(a)) return with_sign(v, f_.inf_bits());
    auto it = std::lower_bound(values_.begin(), values_.end(), a);
    if (it == values_.end()) return with_sign(v, f_.inf_bits());
    uint32_t hi = static_cast<uint32_t>(it - values_.begin());
    if (*it == a || hi == 0) return with_sign(v, hi);
    const uint32_t lo = hi - 1;
    const double dlo = a - values_[lo], dhi = values_[hi] - a;
    const uint32_t pick = dlo < dhi ? lo : dhi < dlo ? hi : (lo & 1) ? hi : lo;
    return with_sign(v, pick);
  }

  const std::vector<double>& values() const { return values_; }

 private:
  uint32_t with_sign(float v, uint32_t mag) const { return std::signbit(v) ? mag | f_.sign_bit() : mag; }
  const Format& f_;
  std::vector<double> values_;
};

// Encoder result and reference agree bit for bit (NaN only needs to stay NaN).
::testing::AssertionResult same_encoding(const Format& f, float v, uint32_t got, uint32_t want) {
  if (std::isnan(v) ? f.is_nan(got) : got == want) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << f.name << " input bits 0x" << std::hex << bits_of(v) << " ("
                                       << v << ") encoded 0x" << got << ", reference 0x" << want;
}

// ---------------------------------------------------------------- edge cases

struct Case {
  float in;
  uint32_t out;
};

void check_cases(const Format& f, std::initializer_list<Case> cases) {
  for (const Case& c : cases) EXPECT_TRUE(same_encoding(f, c.in, f.encode(c.in), c.out));
}

TEST(Numerics, Bf16EdgeCases) {
  check_cases(kBF16, {
      {1.0f, 0x3F80},
      {from_bits(0x3F808000), 0x3F80},  // tie between 0x3F80 and 0x3F81 -> even, down
      {from_bits(0x3F818000), 0x3F82},  // tie between 0x3F81 and 0x3F82 -> even, up
      {from_bits(0x3F808001), 0x3F81},  // just above the tie
      {from_bits(0x3F807FFF), 0x3F80},  // just below the tie
      {from_bits(0x7F7F0000), 0x7F7F},  // largest finite
      {from_bits(0x7F7F7FFF), 0x7F7F},  // just below the overflow threshold
      {from_bits(0x7F7F8000), 0x7F80},  // tie at the threshold -> inf
      {std::numeric_limits<float>::max(), 0x7F80},
      {-std::numeric_limits<float>::max(), 0xFF80},
      {from_bits(0x00010000), 0x0001},  // smallest subnormal
      {from_bits(0x00008000), 0x0000},  // half of it: tie -> even zero
      {from_bits(0x00008001), 0x0001},
      {from_bits(0x00018000), 0x0002},  // subnormal tie, rounds up to even
      {from_bits(0x007FFFFF), 0x0080},  // largest fp32 subnormal rounds into the smallest normal
      {from_bits(0x80008000), 0x8000},  // underflow keeps the sign
      {0.0f, 0x0000},
      {-0.0f, 0x8000},
      {kInf, 0x7F80},
      {-kInf, 0xFF80},
  });
  EXPECT_EQ(float_to_bf16(kNaN), 0x7FC0);
  EXPECT_EQ(float_to_bf16(-kNaN), 0xFFC0);
  EXPECT_EQ(float_to_bf16(from_bits(0x7F800001)), 0x7FC0);  // signalling NaN must not become inf
  EXPECT_EQ(bits_of(bf16_to_float(0x0001)), 0x00010000u);
  EXPECT_EQ(bf16_to_float(0x7F7F), from_bits(0x7F7F0000));
}

TEST(Numerics, Fp16EdgeCases) {
  check_cases(kFP16, {
      {1.0f, 0x3C00},
      {1.0f + 0x1p-11f, 0x3C00},         // tie -> even, down
      {1.0f + 3 * 0x1p-11f, 0x3C02},     // tie -> even, up
      {std::nextafter(1.0f + 0x1p-11f, 2.0f), 0x3C01},
      {65504.0f, 0x7BFF},                // largest finite
      {std::nextafter(65520.0f, 0.0f), 0x7BFF},
      {65520.0f, 0x7C00},                // tie at the threshold -> inf
      {-65520.0f, 0xFC00},
      {1e6f, 0x7C00},
      {0x1p-24f, 0x0001},                // smallest subnormal
      {0x1p-25f, 0x0000},                // tie -> even zero
      {std::nextafter(0x1p-25f, 1.0f), 0x0001},
      {3 * 0x1p-25f, 0x0002},            // subnormal tie, up to even
      {5 * 0x1p-25f, 0x0002},            // subnormal tie, down to even
      {1023 * 0x1p-24f, 0x03FF},         // largest subnormal
      {1023.5f * 0x1p-24f, 0x0400},      // rounds up into the smallest normal
      {0x1p-14f, 0x0400},
      {1e-10f, 0x0000},
      {-1e-10f, 0x8000},
      {from_bits(0x00000001), 0x0000},   // fp32 subnormal
      {-0.0f, 0x8000},
      {kInf, 0x7C00},
      {-kInf, 0xFC00},
  });
  EXPECT_EQ(float_to_fp16(kNaN), 0x7E00);
  EXPECT_TRUE(std::isnan(fp16_to_float(0x7C01)));
  EXPECT_EQ(fp16_to_float(0x0001), 0x1p-24f);
  EXPECT_EQ(fp16_to_float(0x7BFF), 65504.0f);
  EXPECT_EQ(bits_of(fp16_to_float(0x8000)), 0x80000000u);
}

TEST(Numerics, Fp8E4M3EdgeCases) {
  check_cases(kE4M3, {
      {1.0f, 0x38},
      {1.0625f, 0x38},             // tie between 1.0 and 1.125 -> even, down
      {1.1875f, 0x3A},             // tie between 1.125 and 1.25 -> even, up
      {240.0f, 0x77},              // largest finite
      {std::nextafter(248.0f, 0.0f), 0x77},
      {248.0f, 0x78},              // tie at the threshold -> inf
      {-248.0f, 0xF8},
      {1000.0f, 0x78},
      {0x1p-6f, 0x08},             // smallest normal
      {0x1p-9f, 0x01},             // smallest subnormal
      {0x1p-10f, 0x00},            // tie -> even zero
      {std::nextafter(0x1p-10f, 1.0f), 0x01},
      {3 * 0x1p-10f, 0x02},        // subnormal tie, up to even
      {7.5f * 0x1p-9f, 0x08},      // largest subnormal tie rounds into the smallest normal
      {-0x1p-11f, 0x80},
      {-0.0f, 0x80},
      {kInf, 0x78},
      {-kInf, 0xF8},
  });
  EXPECT_TRUE(kE4M3.is_nan(float_to_fp8_e4m3(kNaN)));
  EXPECT_EQ(fp8_e4m3_to_float(0x77), 240.0f);
  EXPECT_EQ(fp8_e4m3_to_float(0x01), 0x1p-9f);
  EXPECT_EQ(fp8_e4m3_to_float(0x78), kInf);
  EXPECT_TRUE(std::isnan(fp8_e4m3_to_float(0x7F)));
  EXPECT_EQ(bits_of(fp8_e4m3_to_float(0x80)), 0x80000000u);
}

TEST(Numerics, Fp8E5M2EdgeCases) {
  check_cases(kE5M2, {
      {1.0f, 0x3C},
      {1.125f, 0x3C},              // tie between 1.0 and 1.25 -> even, down
      {1.375f, 0x3E},              // tie between 1.25 and 1.5 -> even, up
      {57344.0f, 0x7B},            // largest finite
      {std::nextafter(61440.0f, 0.0f), 0x7B},
      {61440.0f, 0x7C},            // tie at the threshold -> inf
      {-61440.0f, 0xFC},
      {0x1p-16f, 0x01},            // smallest subnormal
      {0x1p-17f, 0x00},
      {std::nextafter(0x1p-17f, 1.0f), 0x01},
      {3 * 0x1p-17f, 0x02},
      {0x1p-14f, 0x04},            // smallest normal
      {-0.0f, 0x80},
      {kInf, 0x7C},
      {-kInf, 0xFC},
  });
  EXPECT_TRUE(kE5M2.is_nan(float_to_fp8_e5m2(-kNaN)));
  EXPECT_EQ(fp8_e5m2_to_float(0x7B), 57344.0f);
  EXPECT_EQ(fp8_e5m2_to_float(0x01), 0x1p-16f);
}

// ------------------------------------------------ exhaustive and randomised

TEST(Numerics, DecodeEveryPatternMatchesReference) {
  for (const Format* f : kFormats) {
    for (uint32_t b = 0; b < (1u << f->bits()); ++b) {
      const double want = ref_decode(*f, b);
      const float got = f->decode(b);
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got)) << f->name << " 0x" << std::hex << b;
      } else {
        ASSERT_EQ(static_cast<double>(got), want) << f->name << " 0x" << std::hex << b;
        ASSERT_EQ(std::signbit(got), (b & f->sign_bit()) != 0) << f->name << " 0x" << std::hex << b;
      }
    }
  }
}

TEST(Numerics, EveryPatternRoundTrips) {
  for (const Format* f : kFormats) {
    for (uint32_t b = 0; b < (1u << f->bits()); ++b) {
      const uint32_t again = f->encode(f->decode(b));
      if (f->is_nan(b)) {
        EXPECT_TRUE(f->is_nan(again)) << f->name << " 0x" << std::hex << b;
      } else {
        ASSERT_EQ(again, b) << f->name;
      }
    }
  }
}

// Every rounding boundary of the 16- and 8-bit formats: the exact midpoint
// between neighbours and the float32 values on either side of it.
TEST(Numerics, EveryMidpointRoundsToEven) {
  for (const Format* f : kFormats) {
    const Reference ref(*f);
    const std::vector<double>& v = ref.values();
    for (uint32_t lo = 0; lo + 1 < v.size(); ++lo) {
      const float mid = static_cast<float>((v[lo] + v[lo + 1]) / 2);
      ASSERT_EQ(static_cast<double>(mid), (v[lo] + v[lo + 1]) / 2) << "midpoint not exact in fp32";
      const uint32_t even = (lo & 1) ? lo + 1 : lo;
      for (float s : {1.0f, -1.0f}) {
        const uint32_t sign = s < 0 ? f->sign_bit() : 0;
        ASSERT_EQ(f->encode(s * mid), even | sign) << f->name << " tie above 0x" << std::hex << lo;
        ASSERT_EQ(f->encode(s * std::nextafter(mid, 0.0f)), lo | sign) << f->name;
        ASSERT_EQ(f->encode(s * std::nextafter(mid, kInf)), (lo + 1) | sign) << f->name;
      }
    }
  }
}

// Random float32 inputs: fully random bit patterns plus values concentrated
// on the format's exponent range, where the interesting rounding happens.
std::vector<float> random_inputs(const Format& f, int n, uint32_t seed) {
  std::mt19937 rng(seed);
  const int bias = (1 << (f.E - 1)) - 1;
  std::uniform_int_distribution<int> exp(1 - bias - f.M - 3, bias + 2);
  std::vector<float> out;
  for (int i = 0; i < n; ++i) {
    const uint32_t r = rng();
    if (i % 4 == 0) {
      out.push_back(from_bits(r));
    } else {
      const float mant = 1.0f + static_cast<float>(r & 0x7FFFFF) * 0x1p-23f;
      out.push_back(std::ldexp((r >> 31) ? -mant : mant, exp(rng)));
    }
  }
  return out;
}

TEST(Numerics, Fp8MatchesExhaustiveNearestSearch) {
  for (const Format* f : {&kE4M3, &kE5M2}) {
    const Reference ref(*f);
    for (float x : random_inputs(*f, 200000, 7)) {
      ASSERT_TRUE(same_encoding(*f, x, f->encode(x), ref.encode_linear(x)));
    }
  }
}

TEST(Numerics, SixteenBitFormatsMatchNearestSearch) {
  for (const Format* f : {&kBF16, &kFP16}) {
    const Reference ref(*f);
    for (float x : random_inputs(*f, 1000000, 11)) {
      ASSERT_TRUE(same_encoding(*f, x, f->encode(x), ref.encode_bisect(x)));
    }
  }
}

#ifdef __FLT16_MAX__
// The compiler's own _Float16 conversion is a third, independent opinion.
TEST(Numerics, Fp16MatchesCompilerFloat16) {
  std::mt19937 rng(3);
  for (int i = 0; i < 1000000; ++i) {
    const float x = from_bits(rng());
    const _Float16 h = static_cast<_Float16>(x);
    uint16_t want;
    std::memcpy(&want, &h, 2);
    ASSERT_TRUE(same_encoding(kFP16, x, float_to_fp16(x), want));
  }
}
#endif

// ------------------------------------------------------------------ tfloat32

TEST(Numerics, Tf32RoundsLow13Bits) {
  EXPECT_EQ(bits_of(round_tf32(1.0f)), 0x3F800000u);
  EXPECT_EQ(bits_of(round_tf32(from_bits(0x3F801000))), 0x3F800000u);  // tie -> even, down
  EXPECT_EQ(bits_of(round_tf32(from_bits(0x3F803000))), 0x3F804000u);  // tie -> even, up
  EXPECT_EQ(bits_of(round_tf32(from_bits(0x3F801001))), 0x3F802000u);
  EXPECT_EQ(bits_of(round_tf32(from_bits(0x3F800FFF))), 0x3F800000u);
  EXPECT_EQ(bits_of(round_tf32(from_bits(0xBF803000))), 0xBF804000u);
  EXPECT_EQ(bits_of(round_tf32(from_bits(0x7F7FE000))), 0x7F7FE000u);  // largest tf32 value
  EXPECT_EQ(round_tf32(std::numeric_limits<float>::max()), kInf);
  EXPECT_EQ(bits_of(round_tf32(from_bits(0x00001000))), 0u);           // subnormal tie -> zero
  EXPECT_EQ(bits_of(round_tf32(from_bits(0x00003000))), 0x00004000u);
  EXPECT_EQ(bits_of(round_tf32(-0.0f)), 0x80000000u);
  EXPECT_EQ(round_tf32(kInf), kInf);
  EXPECT_EQ(round_tf32(-kInf), -kInf);
  EXPECT_TRUE(std::isnan(round_tf32(kNaN)));
  EXPECT_TRUE(std::isnan(round_tf32(from_bits(0x7F800001))));  // payload only in dropped bits
}

// ----------------------------------------------------- element load / store

template <class T>
T stored(DType t, double v) {
  T out{};
  store_element(t, &out, 0, v);
  return out;
}

// The current API converts a float to an integer rounded to nearest, ties to even (NKI 0.6's
// simulator, the hardware); that is the default outside any scope.
TEST(Numerics, IntegerStoresRoundToNearestEven) {
  EXPECT_EQ(int_rounding(), IntRounding::nearest_even);
  EXPECT_EQ(stored<int32_t>(DType::int32, 2.5), 2);
  EXPECT_EQ(stored<int32_t>(DType::int32, 3.5), 4);
  EXPECT_EQ(stored<int32_t>(DType::int32, -2.5), -2);
  EXPECT_EQ(stored<int32_t>(DType::int32, -3.5), -4);
  EXPECT_EQ(stored<int32_t>(DType::int32, 2.9999999), 3);
  EXPECT_EQ(stored<int32_t>(DType::int32, -0.5), 0);
  EXPECT_EQ(stored<int16_t>(DType::int16, 1.5), 2);
  EXPECT_EQ(stored<int8_t>(DType::int8, -1.49), -1);
  EXPECT_EQ(stored<uint8_t>(DType::uint8, 254.5), 254);
  EXPECT_EQ(stored<uint8_t>(DType::uint8, 253.5), 254);
  EXPECT_EQ(stored<uint32_t>(DType::uint32, 4294967294.5), 4294967294u);
}

// The legacy API truncates toward zero, as its numpy-based simulator does (kernels rely on
// it, e.g. nl.floor(i / w, dtype=nl.int32)); the simulator opens this scope for them.
TEST(Numerics, LegacyIntegerStoresTruncateTowardZero) {
  {
    const IntRoundingScope legacy(IntRounding::toward_zero);
    EXPECT_EQ(stored<int32_t>(DType::int32, 2.5), 2);
    EXPECT_EQ(stored<int32_t>(DType::int32, 3.5), 3);
    EXPECT_EQ(stored<int32_t>(DType::int32, -2.5), -2);
    EXPECT_EQ(stored<int32_t>(DType::int32, -3.5), -3);
    EXPECT_EQ(stored<int32_t>(DType::int32, 2.9999999), 2);
    EXPECT_EQ(stored<int16_t>(DType::int16, 1.5), 1);
    EXPECT_EQ(stored<uint8_t>(DType::uint8, 253.9), 253);
    EXPECT_EQ(stored<int8_t>(DType::int8, 127.9), 127);
    EXPECT_EQ(stored<int8_t>(DType::int8, -300.0), -128);
    {
      const IntRoundingScope current(IntRounding::nearest_even);
      EXPECT_EQ(stored<int32_t>(DType::int32, 3.5), 4);
    }
    EXPECT_EQ(int_rounding(), IntRounding::toward_zero);
  }
  EXPECT_EQ(int_rounding(), IntRounding::nearest_even);
}

// The vectorised conversions (a tile row at a time) round as the element stores do.
TEST(Numerics, RowConversionsRoundAsTheScopeSays) {
  const float in[] = {0.5f, 1.5f, 2.5f, -1.5f, 2.6f, 300.0f, -300.0f, NAN, -0.4f};
  const int8_t nearest[] = {0, 2, 2, -2, 3, 127, -128, 0, 0};
  const int8_t toward_zero[] = {0, 1, 2, -1, 2, 127, -128, 0, 0};
  constexpr int n = sizeof in / sizeof in[0];
  for (IntRounding r : {IntRounding::nearest_even, IntRounding::toward_zero}) {
    const IntRoundingScope scope(r);
    int8_t out[n] = {};
    scatter_float(DType::int8, out, 0, 1, n, in);
    int64_t wide[n] = {};
    gather_int(DType::float32, in, 0, 1, n, wide);
    for (int i = 0; i < n; ++i) {
      const int8_t want = r == IntRounding::nearest_even ? nearest[i] : toward_zero[i];
      EXPECT_EQ(out[i], want) << i;
      if (i < 5 || i > 6) EXPECT_EQ(wide[i], want) << i;  // int64 does not saturate at 300
    }
  }
}

TEST(Numerics, IntegerStoresSaturate) {
  EXPECT_EQ(stored<int8_t>(DType::int8, 127.5), 127);
  EXPECT_EQ(stored<int8_t>(DType::int8, 300.0), 127);
  EXPECT_EQ(stored<int8_t>(DType::int8, -128.5), -128);
  EXPECT_EQ(stored<int8_t>(DType::int8, -1e30), -128);
  EXPECT_EQ(stored<int8_t>(DType::int8, INFINITY), 127);
  EXPECT_EQ(stored<int16_t>(DType::int16, 40000.0), 32767);
  EXPECT_EQ(stored<int16_t>(DType::int16, -40000.0), -32768);
  EXPECT_EQ(stored<int32_t>(DType::int32, 2147483647.5), 2147483647);
  EXPECT_EQ(stored<int32_t>(DType::int32, -2147483648.5), -2147483647 - 1);
  EXPECT_EQ(stored<int32_t>(DType::int32, -INFINITY), -2147483647 - 1);
  EXPECT_EQ(stored<uint8_t>(DType::uint8, -1.0), 0);
  EXPECT_EQ(stored<uint8_t>(DType::uint8, 255.5), 255);
  EXPECT_EQ(stored<uint16_t>(DType::uint16, 1e9), 65535);
  EXPECT_EQ(stored<uint32_t>(DType::uint32, 1e10), 4294967295u);
  EXPECT_EQ(stored<uint32_t>(DType::uint32, -5.0), 0u);
  for (DType t : {DType::int8, DType::int16, DType::int32, DType::uint8, DType::uint16, DType::uint32})
    EXPECT_EQ(round_to(t, NAN), 0.0) << name(t);
}

TEST(Numerics, BoolStoresNonZero) {
  EXPECT_EQ(stored<uint8_t>(DType::bool_, 0.0), 0);
  EXPECT_EQ(stored<uint8_t>(DType::bool_, -0.0), 0);
  EXPECT_EQ(stored<uint8_t>(DType::bool_, 0.25), 1);
  EXPECT_EQ(stored<uint8_t>(DType::bool_, -7.0), 1);
  EXPECT_EQ(stored<uint8_t>(DType::bool_, NAN), 1);
  const uint8_t raw[2] = {0, 5};
  EXPECT_EQ(load_element(DType::bool_, raw, 1), 1.0);
  EXPECT_EQ(load_element(DType::bool_, raw, 0), 0.0);
}

TEST(Numerics, FloatStoresUseTheFormatRounding) {
  EXPECT_EQ(stored<uint16_t>(DType::bfloat16, 1.00390625), 0x3F80);
  EXPECT_EQ(stored<uint16_t>(DType::float16, 65520.0), 0x7C00);
  EXPECT_EQ(stored<uint8_t>(DType::float8_e4m3, 248.0), 0x78);
  EXPECT_EQ(stored<uint8_t>(DType::float8_e5m2, -0.0), 0x80);
  EXPECT_EQ(stored<uint32_t>(DType::tfloat32, 1.0 + 3 * 0x1p-11), 0x3F804000u);  // tie -> even, up
  EXPECT_EQ(stored<float>(DType::float32, 0.1), 0.1f);
  EXPECT_EQ(stored<float>(DType::float32, 1e300), kInf);
  EXPECT_EQ(round_to(DType::bfloat16, 1.0 + 3 * 0x1p-8), 1.0 + 0x1p-6);
  EXPECT_EQ(round_to(DType::float8_e4m3, 1000.0), INFINITY);
  EXPECT_EQ(round_to(DType::float8_e5m2, 1e-6), 0.0);  // below half of 2^-16
  EXPECT_EQ(round_to(DType::float16, 1e-7), 0x1p-24 * 2);  // 1e-7 is nearest to 2 * 2^-24
  EXPECT_TRUE(std::isnan(round_to(DType::float8_e4m3, NAN)));
  EXPECT_TRUE(std::signbit(round_to(DType::bfloat16, -0.0)));
}

TEST(Numerics, LoadStoreEveryDTypeAtAnOffset) {
  const double samples[] = {0.0, 1.0, -1.0, 2.5, 100.0, -77.0, 3.0e9, -3.0e9, 0.1};
  for (int ti = 0; ti < nkic::ir::kNumDTypes; ++ti) {
    const DType t = static_cast<DType>(ti);
    if (nkic::ir::is_packed(t)) continue;  // four values per element: MxNumerics tests their lanes
    alignas(8) unsigned char buf[8 * 4] = {};
    for (double v : samples) {
      store_element(t, buf, 3, v);
      const double got = load_element(t, buf, 3);
      if (std::isnan(round_to(t, v))) {  // past e4m3fn's range, or no e8m0 value (zero, negatives)
        EXPECT_TRUE(std::isnan(got)) << name(t) << " " << v;
        continue;
      }
      EXPECT_EQ(got, round_to(t, v)) << name(t) << " " << v;
      EXPECT_EQ(round_to(t, got), got) << name(t) << " rounding is not idempotent at " << v;
    }
    // Elements 0..2 were never touched: stores write exactly size_of(t) bytes.
    for (int b = 0; b < 3 * size_of(t); ++b) ASSERT_EQ(buf[b], 0) << name(t);
    for (int b = 4 * size_of(t); b < static_cast<int>(sizeof buf); ++b) ASSERT_EQ(buf[b], 0) << name(t);
  }
}

TEST(Numerics, IntegerLoadsAreExact) {
  const int32_t i32[] = {-2147483647 - 1, 2147483647};
  EXPECT_EQ(load_element(DType::int32, i32, 0), -2147483648.0);
  EXPECT_EQ(load_element(DType::int32, i32, 1), 2147483647.0);
  const uint32_t u32[] = {4294967295u};
  EXPECT_EQ(load_element(DType::uint32, u32, 0), 4294967295.0);
  const int8_t i8[] = {-128};
  EXPECT_EQ(load_element(DType::int8, i8, 0), -128.0);
  const uint16_t u16[] = {65535};
  EXPECT_EQ(load_element(DType::uint16, u16, 0), 65535.0);
}

}  // namespace
