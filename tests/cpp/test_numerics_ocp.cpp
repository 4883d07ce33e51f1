// The OCP element formats float8_e4m3fn and float8_e8m0fnu against references
// written here from the format definitions (every code decoded with ldexp, the
// nearest value searched in double), with the conversion rules of ml_dtypes,
// which NKI's simulator stores them with: no saturation, overflow is NaN.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <random>
#include <vector>

#include "sim/Numerics.h"

namespace {

using nkic::ir::DType;
using namespace nkic::sim;

// e4m3fn: bias 7, every exponent normal (no infinities), only S.1111.111 NaN.
double e4m3fn_value(int code) {
  const int exp = (code >> 3) & 0xF, man = code & 7;
  const double v = exp == 0 ? std::ldexp(man, -9) : std::ldexp(8 + man, exp - 10);
  return (code & 0x80) ? -v : v;
}

// Nearest non-negative code, ties to the even code; 480 (the code 0x7F would
// have with one more exponent) stands for the overflow, which is NaN.
int e4m3fn_reference(float v) {
  if (!std::isfinite(v)) return std::signbit(v) ? 0xFF : 0x7F;
  const double a = std::fabs(static_cast<double>(v));
  int best = 0;
  for (int c = 1; c <= 0x7F; ++c) {
    const double value = c == 0x7F ? 480.0 : e4m3fn_value(c);
    const double d = std::fabs(value - a), db = std::fabs((best == 0x7F ? 480.0 : e4m3fn_value(best)) - a);
    if (d < db || (d == db && c % 2 == 0)) best = c;
  }
  return std::signbit(v) ? best | 0x80 : best;
}

std::vector<float> random_floats(int n, int lo_exp, int hi_exp, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> exp(lo_exp, hi_exp);
  std::vector<float> out;
  for (int i = 0; i < n; ++i) {
    const uint32_t r = rng();
    const float mant = 1.0f + static_cast<float>(r & 0x7FFFFF) * 0x1p-23f;
    out.push_back(std::ldexp((r >> 31) ? -mant : mant, exp(rng)));
  }
  return out;
}

TEST(NumericsOcp, E4m3fnDecodesEveryCode) {
  for (int c = 0; c < 256; ++c) {
    const float got = fp8_e4m3fn_to_float(static_cast<uint8_t>(c));
    if ((c & 0x7F) == 0x7F) {
      EXPECT_TRUE(std::isnan(got)) << c;
    } else {
      EXPECT_EQ(got, e4m3fn_value(c)) << c;
    }
  }
  EXPECT_EQ(fp8_e4m3fn_to_float(0x7E), 448.0f);
  EXPECT_EQ(fp8_e4m3fn_to_float(0x78), 256.0f);  // the top exponent holds numbers, not infinities
  EXPECT_EQ(fp8_e4m3fn_to_float(0x01), 0x1p-9f);
}

TEST(NumericsOcp, E4m3fnEdgeCases) {
  EXPECT_EQ(float_to_fp8_e4m3fn(448.0f), 0x7E);
  EXPECT_EQ(float_to_fp8_e4m3fn(464.0f), 0x7E);  // the tie above 448 goes to the even 448
  EXPECT_EQ(float_to_fp8_e4m3fn(464.01f), 0x7F);  // past it: NaN, not saturated
  EXPECT_EQ(float_to_fp8_e4m3fn(1e9f), 0x7F);
  EXPECT_EQ(float_to_fp8_e4m3fn(-1e9f), 0xFF);
  EXPECT_EQ(float_to_fp8_e4m3fn(INFINITY), 0x7F);  // no infinities: NaN
  EXPECT_EQ(float_to_fp8_e4m3fn(-INFINITY), 0xFF);
  EXPECT_EQ(float_to_fp8_e4m3fn(NAN), 0x7F);
  EXPECT_EQ(float_to_fp8_e4m3fn(-0.0f), 0x80);
  EXPECT_EQ(float_to_fp8_e4m3fn(0x1p-10f), 0x00);  // half the smallest subnormal ties to 0
  EXPECT_EQ(float_to_fp8_e4m3fn(0x1.8p-10f), 0x01);
  EXPECT_EQ(float_to_fp8_e4m3fn(240.0f), 0x77);  // the legacy e4m3's largest finite value
  EXPECT_EQ(float_to_fp8_e4m3fn(250.0f), 0x78);  // rounds into the top exponent (256)
}

TEST(NumericsOcp, E4m3fnMatchesNearestSearch) {
  for (float x : random_floats(100000, -12, 10, 5)) ASSERT_EQ(float_to_fp8_e4m3fn(x), e4m3fn_reference(x)) << x;
  for (int c = 0; c < 256; ++c) {
    if ((c & 0x7F) == 0x7F) continue;
    const float v = fp8_e4m3fn_to_float(static_cast<uint8_t>(c));
    ASSERT_EQ(float_to_fp8_e4m3fn(v), c) << c;  // every code round-trips
  }
}

// e8m0: the nearest power of two 2^-127 .. 2^127 (ties, 1.5 * 2^k, up); 2^128
// stands for the overflow (NaN).
int e8m0_reference(float v) {
  const double a = v;
  int best = 0;
  for (int c = 1; c <= 255; ++c) {
    const double d = std::fabs(std::ldexp(1.0, c - 127) - a), db = std::fabs(std::ldexp(1.0, best - 127) - a);
    if (d <= db) best = c;
  }
  return best;
}

TEST(NumericsOcp, E8m0DecodesAndEncodes) {
  EXPECT_EQ(e8m0_to_float(127), 1.0f);
  EXPECT_EQ(e8m0_to_float(0), 0x1p-127f);
  EXPECT_EQ(e8m0_to_float(254), 0x1p127f);
  EXPECT_TRUE(std::isnan(e8m0_to_float(255)));
  EXPECT_EQ(float_to_e8m0(1.0f), 127);
  EXPECT_EQ(float_to_e8m0(1.49f), 127);
  EXPECT_EQ(float_to_e8m0(1.5f), 128);  // the midpoint rounds up
  EXPECT_EQ(float_to_e8m0(0x1p127f), 254);
  EXPECT_EQ(float_to_e8m0(0x1.8p127f), 255);  // rounds past 2^127: NaN
  EXPECT_EQ(float_to_e8m0(0x1p-127f), 0);
  EXPECT_EQ(float_to_e8m0(0x1.2p-127f), 1);  // a float32 subnormal above 2^-127 goes up, as in ml_dtypes
  EXPECT_EQ(float_to_e8m0(0x1p-140f), 0);
  for (float v : {0.0f, -0.0f, -1.0f, INFINITY, -INFINITY, NAN}) EXPECT_EQ(float_to_e8m0(v), 255) << v;
  for (float x : random_floats(20000, -126, 127, 9)) {
    const float a = std::fabs(x);
    ASSERT_EQ(float_to_e8m0(a), e8m0_reference(a)) << a;
  }
}

TEST(NumericsOcp, ElementLoadsAndStores) {
  alignas(4) unsigned char buf[4] = {};
  store_element(DType::float8_e4m3fn, buf, 1, 300.0);
  EXPECT_EQ(buf[1], 0x79);  // 300 is nearer 288 (0x79) than 320
  EXPECT_EQ(load_element(DType::float8_e4m3fn, buf, 1), 288.0);
  store_element(DType::float8_e8m0fnu, buf, 2, 0.25);
  EXPECT_EQ(buf[2], 125);
  EXPECT_EQ(load_element(DType::float8_e8m0fnu, buf, 2), 0.25);
  EXPECT_EQ(buf[0], 0);
  EXPECT_EQ(buf[3], 0);
  EXPECT_TRUE(std::isnan(round_to(DType::float8_e4m3fn, 1000.0)));
  EXPECT_TRUE(std::isnan(round_to(DType::float8_e8m0fnu, 0.0)));
}

}  // namespace
