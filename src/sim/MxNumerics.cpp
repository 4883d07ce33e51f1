#include "sim/MxNumerics.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <vector>

#include "sim/Numerics.h"

namespace nkic::sim {

namespace {

using ir::DType;

// One lane format: every code's value, and what rounding needs.
struct LaneFormat {
  int bits = 8;
  std::vector<float> value;         // by code
  std::vector<uint8_t> by_value;    // non-negative finite codes, ascending value
  uint8_t nan = 0;                  // the code a NaN stores as
};

// A minifloat with `e` exponent and `m` mantissa bits, bias 2^(e-1) - 1, and
// neither infinities nor NaN (fp4 e2m1: a NaN stores as 0).
LaneFormat minifloat(int e, int m) {
  LaneFormat f;
  f.bits = 1 + e + m;
  const int bias = (1 << (e - 1)) - 1;
  const int codes = 1 << f.bits;
  f.value.resize(codes);
  for (int c = 0; c < codes; ++c) {
    const int mag = c & ((1 << (e + m)) - 1);
    const int ex = mag >> m, man = mag & ((1 << m) - 1);
    float v = ex == 0 ? std::ldexp(static_cast<float>(man), 1 - bias - m)
                      : std::ldexp(static_cast<float>((1 << m) + man), ex - bias - m);
    f.value[c] = (c >> (e + m)) ? -v : v;
  }
  return f;
}

// An fp8 lane format decoded by the element format's own table.
LaneFormat fp8(float (*decode)(uint8_t)) {
  LaneFormat f;
  f.bits = 8;
  f.value.resize(256);
  for (int c = 0; c < 256; ++c) f.value[c] = decode(static_cast<uint8_t>(c));
  f.nan = 0x7F;
  return f;
}

const LaneFormat& format_of(DType packed) {
  static const std::array<LaneFormat, 3> formats = [] {
    std::array<LaneFormat, 3> fs = {fp8(fp8_e4m3fn_to_float), fp8(fp8_e5m2_to_float), minifloat(2, 1)};
    for (LaneFormat& f : fs) {
      const int sign = 1 << (f.bits - 1);
      for (int c = 0; c < sign; ++c)
        if (std::isfinite(f.value[c])) f.by_value.push_back(static_cast<uint8_t>(c));
      std::sort(f.by_value.begin(), f.by_value.end(),
                [&](uint8_t a, uint8_t b) { return f.value[a] < f.value[b]; });
    }
    return fs;
  }();
  switch (packed) {
    case DType::float8_e4m3fn_x4: return formats[0];
    case DType::float8_e5m2_x4: return formats[1];
    default: return formats[2];
  }
}

// Nearest code to v (ties to the even code), saturating.
uint8_t encode(const LaneFormat& f, float v) {
  if (std::isnan(v)) return f.nan;
  const uint8_t sign = std::signbit(v) ? static_cast<uint8_t>(1 << (f.bits - 1)) : 0;
  const float a = std::fabs(v);
  auto above = std::lower_bound(f.by_value.begin(), f.by_value.end(), a,
                                [&](uint8_t c, float x) { return f.value[c] < x; });
  uint8_t code;
  if (above == f.by_value.end()) {
    code = f.by_value.back();
  } else if (above == f.by_value.begin() || f.value[*above] == a) {
    code = *above;
  } else {
    const uint8_t lo = *(above - 1), hi = *above;
    const float dlo = a - f.value[lo], dhi = f.value[hi] - a;
    code = dlo < dhi ? lo : dhi < dlo ? hi : (lo % 2 == 0 ? lo : hi);
  }
  return static_cast<uint8_t>(code | sign);
}

}  // namespace

float mx_lane_load(DType packed, const std::byte* word, int lane) {
  const LaneFormat& f = format_of(packed);
  const unsigned byte = static_cast<unsigned>(word[f.bits == 8 ? lane : lane / 2]);
  const unsigned code = f.bits == 8 ? byte : (byte >> (4 * (lane % 2))) & 0xF;
  return f.value[code];
}

void mx_lane_store(DType packed, std::byte* word, int lane, float v) {
  const LaneFormat& f = format_of(packed);
  const uint8_t code = encode(f, v);
  if (f.bits == 8) {
    word[lane] = static_cast<std::byte>(code);
    return;
  }
  const int shift = 4 * (lane % 2);
  const unsigned old = static_cast<unsigned>(word[lane / 2]) & ~(0xFu << shift);
  word[lane / 2] = static_cast<std::byte>(old | (static_cast<unsigned>(code) << shift));
}

uint8_t mx_block_scale(int emax, int bias, float amax) {
  if (!std::isfinite(amax)) return 255;
  if (amax == 0.0f) return 0;
  int exp = 0;
  std::frexp(amax, &exp);  // amax = m * 2^exp, m in [0.5, 1): floor(log2 amax) = exp - 1
  const int s = (exp - 1) - emax + bias + 127;
  return static_cast<uint8_t>(std::clamp(s, 0, 254));
}

}  // namespace nkic::sim
