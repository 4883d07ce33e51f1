// Bit-exact emulation of NKI's element formats. Everything computes in fp32 (or
// exactly, for integer paths) and rounds once, here, to the destination format.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>

#include "ir/DType.h"

namespace nkic::sim {

// float32 -> narrow format bits, round-to-nearest-even. NaN stays NaN; values
// beyond the largest finite number round to infinity as IEEE-style formats do
// (bf16, fp16, fp8 e5m2, and fp8 e4m3 in its IEEE-like variant: bias 7, max 240).
uint16_t float_to_bf16(float v);
uint16_t float_to_fp16(float v);
uint8_t float_to_fp8_e4m3(float v);
uint8_t float_to_fp8_e5m2(float v);
float bf16_to_float(uint16_t bits);
float fp16_to_float(uint16_t bits);
float fp8_e4m3_to_float(uint8_t bits);
float fp8_e5m2_to_float(uint8_t bits);
// OCP float8_e4m3fn (bias 7, no infinities, max 448, NaN S.1111.111), as ml_dtypes
// and so NKI's simulator convert: round to nearest even (464 ties to 448); a result
// above 464, an infinity or a NaN is NaN (0x7F with v's sign). No saturation.
uint8_t float_to_fp8_e4m3fn(float v);
float fp8_e4m3fn_to_float(uint8_t bits);
// OCP float8_e8m0fnu: 2^(bits - 127), 255 NaN, no sign and no zero. Encoding as
// ml_dtypes does: the exponent of v rounded to nearest (a significand >= 1.5
// rounds up; between 2^-127 and 2^-126 anything above 2^-127 is 2^-126), codes
// below 0 clamp to 0 (2^-127); zero, negatives, infinities,
// NaN and values past 2^127 are NaN (255).
uint8_t float_to_e8m0(float v);
float e8m0_to_float(uint8_t bits);
// tfloat32 keeps fp32's layout with the low 13 mantissa bits rounded away (RNE).
float round_tf32(float v);

// Element access on raw buffers: element `i` of a buffer of dtype `t`.
// Float formats decode exactly to double; integers convert exactly.
double load_element(ir::DType t, const void* base, int64_t i);
// How a float value becomes an integer: the current API rounds to nearest, ties to even
// (NKI 0.6's simulator, the hardware's conversion); the legacy neuronxcc simulator's numpy
// casts truncate toward zero. Both saturate to the format's range, NaN -> 0.
enum class IntRounding : uint8_t { nearest_even, toward_zero };
// The rounding this thread's float -> integer conversions use (nearest_even unless a scope
// says otherwise). The simulator opens a scope for the kernel it runs, on every thread.
IntRounding int_rounding();
class IntRoundingScope {
 public:
  explicit IntRoundingScope(IntRounding r);
  ~IntRoundingScope();
  IntRoundingScope(const IntRoundingScope&) = delete;
  IntRoundingScope& operator=(const IntRoundingScope&) = delete;

 private:
  IntRounding prev_;
};
// `v` as integer type T under rounding R: rounded, then saturated to T's range; NaN -> 0.
// Every bound of a type up to 64 bits is exact or rounds outward in double, so the
// comparisons decide saturation correctly.
template <class T, IntRounding R>
inline T round_saturate(double v) {
  if (v != v) return 0;
  const double r = R == IntRounding::nearest_even ? std::nearbyint(v) : std::trunc(v);
  constexpr double lo = static_cast<double>(std::numeric_limits<T>::min());
  constexpr double hi = static_cast<double>(std::numeric_limits<T>::max());
  if (r <= lo) return std::numeric_limits<T>::min();
  if (r >= hi) return std::numeric_limits<T>::max();
  return static_cast<T>(r);
}

// Store `v` converted to `t`: float formats round v (as float32 first) to
// nearest-even; integer formats round as int_rounding() says and saturate to the
// format's range (NaN -> 0); bool stores v != 0.
void store_element(ir::DType t, void* base, int64_t i, double v);
// The value `v` takes after a round trip through `t` (store then load).
double round_to(ir::DType t, double v);

}  // namespace nkic::sim
