// The vectorised exp gives the C library's expf bits: every 1021st float bit
// pattern (all signs, both ends of the range, subnormals, inf, NaN), at every
// array length's tail position.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

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
