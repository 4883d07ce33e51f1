// The vectorised exp gives the C library's expf bits: every 1021st float bit
// pattern (all signs, both ends of the range, subnormals, inf, NaN), at every
// array length's tail position; the activations built on it keep the bits of
// their scalar formulas (any NaN for a NaN).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "sim/AluEval.h"
#include "sim/VecExp.h"

namespace {

TEST(SimVecExp, SameBitsAsTheCLibrary) {
  std::vector<float> x, got;
  for (uint64_t b = 0; b < (uint64_t{1} << 32); b += 1021) {
    const uint32_t bits = static_cast<uint32_t>(b);
    float f;
    std::memcpy(&f, &bits, 4);
    x.push_back(f);
  }
  for (float special : {88.0f, -88.0f, 88.7f, -103.9f, -104.0f, INFINITY, -INFINITY, NAN, 0.0f, -0.0f})
    x.push_back(special);
  got.resize(x.size());
  nkic::sim::exp_floats(x.data(), got.data(), static_cast<int64_t>(x.size()));
  int64_t mismatches = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const float ref = std::exp(x[i]);
    mismatches += std::memcmp(&ref, &got[i], 4) != 0;
  }
  EXPECT_EQ(mismatches, 0);
  for (int64_t n = 0; n < 17; ++n) {  // lengths that leave a scalar tail
    std::vector<float> out(n);
    nkic::sim::exp_floats(x.data() + 1000, out.data(), n);
    for (int64_t i = 0; i < n; ++i) {
      const float ref = std::exp(x[1000 + i]);
      EXPECT_EQ(std::memcmp(&ref, &out[i], 4), 0) << n << " " << i;
    }
  }
}

}  // namespace

namespace {

// The activations built on exp keep their scalar formulas' bits.
TEST(SimVecExp, ExpActivationsKeepTheirScalarBits) {
  using nkic::ir::AluOp;
  std::vector<float> x;
  for (uint64_t b = 0; b < (uint64_t{1} << 32); b += 65521) {
    const uint32_t bits = static_cast<uint32_t>(b);
    float f;
    std::memcpy(&f, &bits, 4);
    x.push_back(f);
  }
  const std::pair<AluOp, float (*)(float)> cases[] = {
      {AluOp::exp, [](float v) { return std::exp(v); }},
      {AluOp::sigmoid, [](float v) { return 1.0f / (1.0f + std::exp(-v)); }},
      {AluOp::silu, [](float v) { return v * (1.0f / (1.0f + std::exp(-v))); }},
      {AluOp::gelu_apprx_sigmoid, [](float v) { return v * (1.0f / (1.0f + std::exp(-(1.702f * v)))); }},
      {AluOp::silu_dx, [](float v) {
         const float s = 1.0f / (1.0f + std::exp(-v));
         return s * (1.0f + v * (1.0f - s));
       }},
  };
  std::vector<float> got(x.size());
  for (const auto& [op, ref] : cases) {
    nkic::sim::eval_unary(op, x.data(), got.data(), static_cast<int64_t>(x.size()));
    int64_t mismatches = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      // A NaN's payload depends on the order the compiler gives a product's operands.
      const float r = ref(x[i]);
      mismatches += std::isnan(r) ? !std::isnan(got[i]) : std::memcmp(&r, &got[i], 4) != 0;
    }
    EXPECT_EQ(mismatches, 0) << nkic::ir::name(op);
  }
}

}  // namespace
