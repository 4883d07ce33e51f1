#include "sim/Numerics.h"

#include <algorithm>
#include <cmath>
#include <array>
#include <bit>
#include <cstring>
#include <limits>

namespace nkic::sim {

namespace {

// The magnitude of v (finite) rounded to a format with E exponent and M mantissa
// bits (bias 2^(E-1)-1), as the code it would have with an unbounded exponent
// field. Works on the float32 significand as an integer so rounding is exact: one
// shift, one RNE increment; the carry out of the mantissa moves into the
// exponent field for free.
template <int E, int M>
constexpr uint32_t round_magnitude(uint32_t f) {
  constexpr int kBias = (1 << (E - 1)) - 1;
  constexpr int kEmin = 1 - kBias;  // exponent of the smallest normal
  const uint32_t fexp = (f >> 23) & 0xFF;
  const uint32_t fman = f & 0x7FFFFF;
  // |v| = sig * 2^(e - 23), also for float32 subnormals.
  const int e = fexp ? static_cast<int>(fexp) - 127 : -126;
  const uint32_t sig = fexp ? (fman | 0x800000) : fman;
  // Below the target's normal range the kept mantissa shrinks (subnormals).
  // Past 25 bits of shift everything is below half the smallest subnormal.
  const int shift = std::min(23 - M + std::max(kEmin - e, 0), 25);
  uint32_t r = sig >> shift;
  const uint32_t rem = sig & ((1u << shift) - 1);
  const uint32_t half = 1u << (shift - 1);
  if (rem > half || (rem == half && (r & 1))) ++r;
  return (static_cast<uint32_t>(std::max(e - kEmin, 0)) << M) + r;
}

// Generic IEEE-style encoder (all-ones exponent reserved for inf/NaN): the
// rounding carry turns the largest finite value into infinity on overflow.
template <int E, int M>
constexpr uint32_t encode_ieee(float v) {
  constexpr uint32_t kInf = ((1u << E) - 1) << M;
  constexpr uint32_t kQNaN = kInf | (1u << (M - 1));
  const uint32_t f = std::bit_cast<uint32_t>(v);
  const uint32_t sign = (f >> 31) << (E + M);
  if (((f >> 23) & 0xFF) == 0xFF) return sign | ((f & 0x7FFFFF) ? kQNaN : kInf);
  return sign | std::min(round_magnitude<E, M>(f), kInf);
}

template <int E, int M>
constexpr float decode_ieee(uint32_t b) {
  constexpr int kBias = (1 << (E - 1)) - 1;
  constexpr uint32_t kExpMask = (1u << E) - 1;
  constexpr uint32_t kManMask = (1u << M) - 1;
  const uint32_t sign = ((b >> (E + M)) & 1) << 31;
  const uint32_t exp = (b >> M) & kExpMask;
  const uint32_t man = b & kManMask;
  if (exp == kExpMask)
    return std::bit_cast<float>(sign | 0x7F800000 | (man ? 0x400000 | (man << (23 - M)) : 0));
  if (exp == 0) {
    // Subnormal: man * 2^(1 - bias - M), exact in float32 for every format here.
    const float scale = std::bit_cast<float>(static_cast<uint32_t>(1 - kBias - M + 127) << 23);
    return std::bit_cast<float>(sign | std::bit_cast<uint32_t>(static_cast<float>(man) * scale));
  }
  return std::bit_cast<float>(sign | ((exp - kBias + 127) << 23) | (man << (23 - M)));
}

template <int E, int M>
constexpr std::array<float, 256> make_fp8_table() {
  std::array<float, 256> t{};
  for (uint32_t b = 0; b < 256; ++b) t[b] = decode_ieee<E, M>(b);
  return t;
}

constexpr std::array<float, 256> kE4M3 = make_fp8_table<4, 3>();
constexpr std::array<float, 256> kE5M2 = make_fp8_table<5, 2>();

// e4m3fn is e4m3 with the all-ones exponent holding normal numbers (up to 448)
// and only S.1111.111 NaN.
constexpr std::array<float, 256> make_e4m3fn_table() {
  std::array<float, 256> t{};
  for (uint32_t b = 0; b < 256; ++b) {
    const uint32_t sign = (b >> 7) << 31, exp = (b >> 3) & 0xF, man = b & 7;
    t[b] = (b & 0x7F) == 0x7F ? std::bit_cast<float>(sign | 0x7FC00000)
           : exp == 15        ? std::bit_cast<float>(sign | ((exp - 7 + 127) << 23) | (man << 20))
                              : decode_ieee<4, 3>(b);
  }
  return t;
}

constexpr std::array<float, 256> kE4M3FN = make_e4m3fn_table();

thread_local IntRounding tl_int_rounding = IntRounding::nearest_even;

template <class T>
T saturate_int(double v) {
  return int_rounding() == IntRounding::nearest_even ? round_saturate<T, IntRounding::nearest_even>(v)
                                                     : round_saturate<T, IntRounding::toward_zero>(v);
}

template <class T>
T read(const void* base, int64_t i) {
  T x;
  std::memcpy(&x, static_cast<const char*>(base) + i * static_cast<int64_t>(sizeof(T)), sizeof(T));
  return x;
}

template <class T>
void write(void* base, int64_t i, T x) {
  std::memcpy(static_cast<char*>(base) + i * static_cast<int64_t>(sizeof(T)), &x, sizeof(T));
}

}  // namespace

uint16_t float_to_bf16(float v) {
  const uint32_t f = std::bit_cast<uint32_t>(v);
  if ((f & 0x7FFFFFFF) > 0x7F800000) return static_cast<uint16_t>((f >> 16) | 0x7FC0);
  // bf16 is the top half of float32: add just under half an ulp, plus the
  // kept lsb so exact ties go to even; carries propagate into the exponent.
  return static_cast<uint16_t>((f + 0x7FFF + ((f >> 16) & 1)) >> 16);
}

uint16_t float_to_fp16(float v) { return static_cast<uint16_t>(encode_ieee<5, 10>(v)); }
uint8_t float_to_fp8_e4m3(float v) { return static_cast<uint8_t>(encode_ieee<4, 3>(v)); }
uint8_t float_to_fp8_e5m2(float v) { return static_cast<uint8_t>(encode_ieee<5, 2>(v)); }

float bf16_to_float(uint16_t bits) { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }
float fp16_to_float(uint16_t bits) { return decode_ieee<5, 10>(bits); }
float fp8_e4m3_to_float(uint8_t bits) { return kE4M3[bits]; }
float fp8_e5m2_to_float(uint8_t bits) { return kE5M2[bits]; }

uint8_t float_to_fp8_e4m3fn(float v) {
  const uint32_t f = std::bit_cast<uint32_t>(v);
  const auto sign = static_cast<uint8_t>((f >> 24) & 0x80);
  if (((f >> 23) & 0xFF) == 0xFF) return sign | 0x7F;
  const uint32_t m = round_magnitude<4, 3>(f);
  return sign | static_cast<uint8_t>(m > 0x7E ? 0x7F : m);
}

float fp8_e4m3fn_to_float(uint8_t bits) { return kE4M3FN[bits]; }

uint8_t float_to_e8m0(float v) {
  if (!(v > 0.0f) || !std::isfinite(v)) return 255;
  int exp = 0;
  const float m = std::frexp(v, &exp);  // v = m * 2^exp, m in [0.5, 1)
  // ml_dtypes rounds a float32 subnormal above 2^-127 up to 2^-126 (code 1).
  if (exp == -126) return m > 0.5f ? 1 : 0;
  const int code = (exp - 1) + 127 + (m >= 0.75f ? 1 : 0);
  return code > 254 ? 255 : static_cast<uint8_t>(std::max(code, 0));
}

float e8m0_to_float(uint8_t bits) {
  return bits == 255 ? std::numeric_limits<float>::quiet_NaN() : std::ldexp(1.0f, bits - 127);
}

float round_tf32(float v) {
  const uint32_t f = std::bit_cast<uint32_t>(v);
  if ((f & 0x7FFFFFFF) > 0x7F800000) return std::bit_cast<float>(f | 0x400000);
  return std::bit_cast<float>((f + 0xFFF + ((f >> 13) & 1)) & ~0x1FFFu);
}

IntRounding int_rounding() { return tl_int_rounding; }

IntRoundingScope::IntRoundingScope(IntRounding r) : prev_(tl_int_rounding) { tl_int_rounding = r; }

IntRoundingScope::~IntRoundingScope() { tl_int_rounding = prev_; }

double load_element(ir::DType t, const void* base, int64_t i) {
  using ir::DType;
  switch (t) {
    case DType::float32:
    case DType::tfloat32: return read<float>(base, i);
    case DType::float16: return fp16_to_float(read<uint16_t>(base, i));
    case DType::bfloat16: return bf16_to_float(read<uint16_t>(base, i));
    case DType::float8_e4m3: return kE4M3[read<uint8_t>(base, i)];
    case DType::float8_e5m2: return kE5M2[read<uint8_t>(base, i)];
    case DType::float8_e4m3fn: return kE4M3FN[read<uint8_t>(base, i)];
    case DType::float8_e8m0fnu: return e8m0_to_float(read<uint8_t>(base, i));
    case DType::int8: return read<int8_t>(base, i);
    case DType::int16: return read<int16_t>(base, i);
    case DType::int32: return read<int32_t>(base, i);
    case DType::uint8: return read<uint8_t>(base, i);
    case DType::uint16: return read<uint16_t>(base, i);
    case DType::uint32: return read<uint32_t>(base, i);
    case DType::int64: return static_cast<double>(read<int64_t>(base, i));
    case DType::uint64: return static_cast<double>(read<uint64_t>(base, i));
    case DType::bool_: return read<uint8_t>(base, i) != 0 ? 1.0 : 0.0;
    // A packed mx element is four values, no single number: sim/MxNumerics reads its lanes.
    case DType::float8_e4m3fn_x4:
    case DType::float8_e5m2_x4:
    case DType::float4_e2m1fn_x4: return NAN;
  }
  return 0.0;
}

void store_element(ir::DType t, void* base, int64_t i, double v) {
  using ir::DType;
  const float f = static_cast<float>(v);
  switch (t) {
    case DType::float32: write(base, i, f); return;
    case DType::tfloat32: write(base, i, round_tf32(f)); return;
    case DType::float16: write(base, i, float_to_fp16(f)); return;
    case DType::bfloat16: write(base, i, float_to_bf16(f)); return;
    case DType::float8_e4m3: write(base, i, float_to_fp8_e4m3(f)); return;
    case DType::float8_e5m2: write(base, i, float_to_fp8_e5m2(f)); return;
    case DType::float8_e4m3fn: write(base, i, float_to_fp8_e4m3fn(f)); return;
    case DType::float8_e8m0fnu: write(base, i, float_to_e8m0(f)); return;
    case DType::int8: write(base, i, saturate_int<int8_t>(v)); return;
    case DType::int16: write(base, i, saturate_int<int16_t>(v)); return;
    case DType::int32: write(base, i, saturate_int<int32_t>(v)); return;
    case DType::uint8: write(base, i, saturate_int<uint8_t>(v)); return;
    case DType::uint16: write(base, i, saturate_int<uint16_t>(v)); return;
    case DType::uint32: write(base, i, saturate_int<uint32_t>(v)); return;
    case DType::int64: write(base, i, saturate_int<int64_t>(v)); return;
    case DType::uint64: write(base, i, saturate_int<uint64_t>(v)); return;
    case DType::bool_: write(base, i, static_cast<uint8_t>(v != 0.0)); return;
    case DType::float8_e4m3fn_x4:
    case DType::float8_e5m2_x4:
    case DType::float4_e2m1fn_x4: return;  // written lane by lane (sim/MxNumerics)
  }
}

double round_to(ir::DType t, double v) {
  alignas(8) unsigned char buf[8];
  store_element(t, buf, 0, v);
  return load_element(t, buf, 0);
}

}  // namespace nkic::sim
