// The mx lane formats and E8M0 scales (sim/MxNumerics): decoding, rounding to
// nearest-even with saturation, lane placement in the packed word, block scales.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstddef>

#include "sim/MxNumerics.h"
#include "sim/Numerics.h"

using nkic::ir::DType;
using namespace nkic::sim;

namespace {

std::array<std::byte, 4> word(unsigned b0, unsigned b1 = 0, unsigned b2 = 0, unsigned b3 = 0) {
  return {std::byte(b0), std::byte(b1), std::byte(b2), std::byte(b3)};
}

float e4m3fn(unsigned code) { return mx_lane_load(DType::float8_e4m3fn_x4, word(code).data(), 0); }

unsigned stored(DType t, float v, int lane = 0) {
  auto w = word(0);
  mx_lane_store(t, w.data(), lane, v);
  return t == DType::float4_e2m1fn_x4 ? (static_cast<unsigned>(w[lane / 2]) >> (4 * (lane % 2))) & 0xF
                                      : static_cast<unsigned>(w[lane]);
}

}  // namespace

TEST(MxNumerics, E4m3fnDecodesWithoutInfinities) {
  EXPECT_EQ(e4m3fn(0x7E), 448.0f);
  EXPECT_EQ(e4m3fn(0xFE), -448.0f);
  EXPECT_TRUE(std::isnan(e4m3fn(0x7F)));
  EXPECT_TRUE(std::isnan(e4m3fn(0xFF)));
  EXPECT_EQ(e4m3fn(0x78), 256.0f);  // exponent 15 is a normal binade, not infinity
  EXPECT_EQ(e4m3fn(0x08), std::ldexp(1.0f, -6));
  EXPECT_EQ(e4m3fn(0x01), std::ldexp(1.0f, -9));
  EXPECT_EQ(e4m3fn(0x38), 1.0f);
}

TEST(MxNumerics, E4m3fnRoundsToEvenAndSaturates) {
  const DType t = DType::float8_e4m3fn_x4;
  EXPECT_EQ(stored(t, 448.0f), 0x7Eu);
  EXPECT_EQ(stored(t, 1000.0f), 0x7Eu);
  EXPECT_EQ(stored(t, -1.0e30f), 0xFEu);
  EXPECT_EQ(stored(t, INFINITY), 0x7Eu);
  EXPECT_EQ(stored(t, NAN), 0x7Fu);
  EXPECT_EQ(stored(t, 1.0625f), 0x38u);  // halfway between 1.0 (even) and 1.125
  EXPECT_EQ(stored(t, 1.1875f), 0x3Au);  // halfway between 1.125 and 1.25 (even)
  EXPECT_EQ(stored(t, 1.07f), 0x39u);
  EXPECT_EQ(stored(t, -0.0f), 0x80u);
  EXPECT_EQ(stored(t, std::ldexp(1.0f, -11)), 0x00u);  // a quarter of the smallest subnormal
}

TEST(MxNumerics, E5m2LanesAreTheFp8E5m2Format) {
  for (unsigned c = 0; c < 256; ++c) {
    const float want = fp8_e5m2_to_float(static_cast<uint8_t>(c));
    const float got = mx_lane_load(DType::float8_e5m2_x4, word(0, 0, c).data(), 2);
    if (std::isnan(want)) EXPECT_TRUE(std::isnan(got)) << c;
    else EXPECT_EQ(got, want) << c;
  }
  EXPECT_EQ(stored(DType::float8_e5m2_x4, 1.0e6f), 0x7Bu);  // saturates at 57344, not infinity
}

TEST(MxNumerics, Fp4LanesAreNibblesAndRoundToEven) {
  const DType t = DType::float4_e2m1fn_x4;
  const float values[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  for (unsigned c = 0; c < 16; ++c) {
    auto w = word(c | (c << 4), c | (c << 4));
    for (int lane = 0; lane < 4; ++lane)
      EXPECT_EQ(mx_lane_load(t, w.data(), lane), (c & 8 ? -1.0f : 1.0f) * values[c & 7]) << c << " " << lane;
  }
  EXPECT_EQ(stored(t, 2.5f, 1), 4u);   // between 2 (code 4, even) and 3
  EXPECT_EQ(stored(t, 5.0f, 2), 6u);   // between 4 (code 6, even) and 6
  EXPECT_EQ(stored(t, 0.25f, 3), 0u);  // between 0 and 0.5: to 0, the even code
  EXPECT_EQ(stored(t, 7.0f), 7u);      // saturates at 6
  EXPECT_EQ(stored(t, -6.0f), 15u);
  EXPECT_EQ(stored(t, NAN), 0u);       // fp4 has no NaN
  auto w = word(0xFF, 0xFF);
  mx_lane_store(t, w.data(), 2, 0.0f);  // one nibble changes, the others stay
  EXPECT_EQ(static_cast<unsigned>(w[0]), 0xFFu);
  EXPECT_EQ(static_cast<unsigned>(w[1]), 0xF0u);
}

TEST(MxNumerics, E8m0ScalesAndBlockScale) {
  EXPECT_EQ(e8m0_to_float(127), 1.0f);
  EXPECT_EQ(e8m0_to_float(0), std::ldexp(1.0f, -127));
  EXPECT_EQ(e8m0_to_float(254), std::ldexp(1.0f, 127));
  EXPECT_TRUE(std::isnan(e8m0_to_float(255)));
  EXPECT_EQ(mx_block_scale(8, 1, 448.0f), 128);   // 2^(8 - 8 + 1): twice the OCP sample scale (0.5+)
  EXPECT_EQ(mx_block_scale(8, 1, 511.0f), 128);
  EXPECT_EQ(mx_block_scale(8, 1, 512.0f), 129);
  EXPECT_EQ(mx_block_scale(8, 0, 448.0f), 127);   // 2^(8 - 8): the OCP sample scale (before 0.5)
  EXPECT_EQ(mx_block_scale(8, 0, 512.0f), 128);
  EXPECT_EQ(mx_block_scale(15, 1, 1.0f), 113);
  EXPECT_EQ(mx_block_scale(2, 1, 3.0e38f), 253);
  EXPECT_EQ(mx_block_scale(8, 1, 0.0f), 0);
  EXPECT_EQ(mx_block_scale(8, 1, 1.0e-40f), 0);  // clamped at the smallest scale
  EXPECT_EQ(mx_block_scale(8, 0, 1.0e-40f), 0);
  EXPECT_EQ(mx_block_scale(8, 1, INFINITY), 255);
  EXPECT_EQ(mx_block_scale(8, 1, NAN), 255);
}
