#include "sim/Convert.h"

#include <immintrin.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <type_traits>

#include "sim/Numerics.h"
#include "sim/VectorClones.h"

namespace nkic::sim {

using ir::DType;

namespace {

// The stride-1 branch is the common case (a tile row) and gets its own loop, in
// blocks of 8 with a fixed-count inner loop: GCC vectorises those even at -O2,
// whose cost model refuses loops that would need a scalar epilogue.
constexpr int64_t kBlock = 16;

// The codec templates are forced inline so each vector clone of gather_float and
// scatter_float gets its own wide copy (an outlined instance is built once, for
// the default target).
#define NKIC_CODEC inline __attribute__((always_inline))

template <class T, class U, class F>
NKIC_CODEC void gather_as(const void* data, int64_t off, int64_t stride, int64_t n, U* __restrict out,
                      F conv) {
  const T* __restrict p = static_cast<const T*>(data) + off;
  if (stride == 1) {
    int64_t i = 0;
    for (; i + kBlock <= n; i += kBlock)
      for (int64_t j = 0; j < kBlock; ++j) out[i + j] = conv(p[i + j]);
    for (; i < n; ++i) out[i] = conv(p[i]);
  } else if (stride == 0) {  // a broadcast operand: one value (a partition's scalar) along the row
    std::fill_n(out, n, conv(p[0]));
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = conv(p[i * stride]);
  }
}

template <class T, class U, class F>
NKIC_CODEC void scatter_as(void* data, int64_t off, int64_t stride, int64_t n, const U* __restrict in,
                       F conv) {
  T* __restrict p = static_cast<T*>(data) + off;
  if (stride == 1) {
    int64_t i = 0;
    for (; i + kBlock <= n; i += kBlock)
      for (int64_t j = 0; j < kBlock; ++j) p[i + j] = conv(in[i + j]);
    for (; i < n; ++i) p[i] = conv(in[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) p[i * stride] = conv(in[i]);
  }
}

template <class T>
inline T saturate(int64_t v) {
  if constexpr (sizeof(T) == sizeof(int64_t))  // int64 holds every value; uint64 its non-negative ones
    return std::is_signed_v<T> || v >= 0 ? static_cast<T>(v) : T{0};
  if (v < static_cast<int64_t>(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
  if (v > static_cast<int64_t>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(v);
}

// bf16 is the high half of an fp32 word, so both directions are a few integer
// operations; they are inlined here because bf16 is the most common narrow format
// on the hot path. They equal sim::bf16_to_float / float_to_bf16 bit for bit
// (tests/cpp/test_sim.cpp checks it).
inline float bf16_bits_to_float(uint16_t b) { return std::bit_cast<float>(uint32_t{b} << 16); }
inline uint16_t float_to_bf16_bits(float v) {
  const uint32_t f = std::bit_cast<uint32_t>(v);
  // Add just under half an ulp plus the kept lsb: exact ties go to even. NaNs
  // stay (quiet) NaNs; a select rather than a branch keeps the loop vectorisable.
  const uint32_t rounded = (f + 0x7FFF + ((f >> 16) & 1)) >> 16;
  const uint32_t nan = (f >> 16) | 0x7FC0;
  // Signed compare of the (non-negative) magnitude: SSE2 has no unsigned one.
  const bool is_nan = static_cast<int32_t>(f & 0x7FFFFFFF) > 0x7F800000;
  return static_cast<uint16_t>(is_nan ? nan : rounded);
}

// Calls `body(storage_tag, decode)` for float format `t`. Each codec is its own
// lambda type, so every instantiation calls (or inlines) it directly.
template <class Body>
NKIC_CODEC void with_float_decoder(DType t, Body body) {
  switch (t) {
    case DType::float32:
    case DType::tfloat32: body(float{}, [](float v) { return v; }); return;
    case DType::bfloat16:
      body(uint16_t{}, [](uint16_t b) { return bf16_bits_to_float(b); });
      return;
    case DType::float16: body(uint16_t{}, [](uint16_t b) { return fp16_to_float(b); }); return;
    case DType::float8_e4m3:
      body(uint8_t{}, [](uint8_t b) { return fp8_e4m3_to_float(b); });
      return;
    case DType::float8_e5m2:
      body(uint8_t{}, [](uint8_t b) { return fp8_e5m2_to_float(b); });
      return;
    case DType::float8_e4m3fn:
      body(uint8_t{}, [](uint8_t b) { return fp8_e4m3fn_to_float(b); });
      return;
    case DType::float8_e8m0fnu:
      body(uint8_t{}, [](uint8_t b) { return e8m0_to_float(b); });
      return;
    default: return;
  }
}

// Calls `body(storage_tag, encode)` for float format `t`.
template <class Body>
NKIC_CODEC void with_float_encoder(DType t, Body body) {
  switch (t) {
    case DType::float32: body(float{}, [](float v) { return v; }); return;
    case DType::tfloat32: body(float{}, [](float v) { return round_tf32(v); }); return;
    case DType::bfloat16: body(uint16_t{}, [](float v) { return float_to_bf16_bits(v); }); return;
    case DType::float16: body(uint16_t{}, [](float v) { return float_to_fp16(v); }); return;
    case DType::float8_e4m3: body(uint8_t{}, [](float v) { return float_to_fp8_e4m3(v); }); return;
    case DType::float8_e5m2: body(uint8_t{}, [](float v) { return float_to_fp8_e5m2(v); }); return;
    case DType::float8_e4m3fn: body(uint8_t{}, [](float v) { return float_to_fp8_e4m3fn(v); }); return;
    case DType::float8_e8m0fnu: body(uint8_t{}, [](float v) { return float_to_e8m0(v); }); return;
    default: return;
  }
}

// Calls `body(storage_tag)` for integer format `t` (bool as its byte; readers
// normalise it to 0/1 first).
template <class Body>
NKIC_CODEC void with_int_type(DType t, Body body) {
  switch (t) {
    case DType::int8: body(int8_t{}); return;
    case DType::int16: body(int16_t{}); return;
    case DType::int32: body(int32_t{}); return;
    case DType::uint8: body(uint8_t{}); return;
    case DType::uint16: body(uint16_t{}); return;
    case DType::uint32: body(uint32_t{}); return;
    case DType::int64: body(int64_t{}); return;
    case DType::uint64: body(uint64_t{}); return;
    case DType::bool_: body(uint8_t{}); return;
    default: return;
  }
}

}  // namespace

NKIC_VECTOR_BODY void gather_float_body(DType t, const void* data, int64_t off, int64_t stride, int64_t n,
                                       float* out) {
  if (ir::is_float(t)) {
    with_float_decoder(
        t, [&](auto tag, auto dec) { gather_as<decltype(tag)>(data, off, stride, n, out, dec); });
  } else if (t == DType::bool_) {
    gather_as<uint8_t>(data, off, stride, n, out, [](uint8_t v) { return v != 0 ? 1.0f : 0.0f; });
  } else {
    with_int_type(t, [&](auto tag) {
      using T = decltype(tag);
      gather_as<T>(data, off, stride, n, out, [](T v) { return static_cast<float>(v); });
    });
  }
}
NKIC_VECTOR_BUILDS(gather_float_body, void, gather_float,
                   (DType t, const void* data, int64_t off, int64_t stride, int64_t n, float* out),
                   (t, data, off, stride, n, out))

void gather_int(DType t, const void* data, int64_t off, int64_t stride, int64_t n, int64_t* out) {
  if (ir::is_float(t)) {
    with_float_decoder(t, [&](auto tag, auto dec) {
      if (int_rounding() == IntRounding::nearest_even)
        gather_as<decltype(tag)>(data, off, stride, n, out, [dec](auto v) {
          return round_saturate<int64_t, IntRounding::nearest_even>(dec(v));
        });
      else
        gather_as<decltype(tag)>(data, off, stride, n, out, [dec](auto v) {
          return round_saturate<int64_t, IntRounding::toward_zero>(dec(v));
        });
    });
  } else if (t == DType::bool_) {
    gather_as<uint8_t>(data, off, stride, n, out, [](uint8_t v) { return int64_t{v != 0}; });
  } else {
    with_int_type(t, [&](auto tag) {
      using T = decltype(tag);
      gather_as<T>(data, off, stride, n, out, [](T v) { return static_cast<int64_t>(v); });
    });
  }
}

NKIC_VECTOR_BODY void scatter_float_body(DType t, void* data, int64_t off, int64_t stride, int64_t n,
                                        const float* in) {
  if (ir::is_float(t)) {
    with_float_encoder(
        t, [&](auto tag, auto enc) { scatter_as<decltype(tag)>(data, off, stride, n, in, enc); });
  } else if (t == DType::bool_) {
    scatter_as<uint8_t>(data, off, stride, n, in, [](float v) { return uint8_t{v != 0.0f}; });
  } else {
    with_int_type(t, [&](auto tag) {
      using T = decltype(tag);
      if (int_rounding() == IntRounding::nearest_even)
        scatter_as<T>(data, off, stride, n, in, [](float v) { return round_saturate<T, IntRounding::nearest_even>(v); });
      else
        scatter_as<T>(data, off, stride, n, in, [](float v) { return round_saturate<T, IntRounding::toward_zero>(v); });
    });
  }
}
NKIC_VECTOR_BUILDS(scatter_float_body, void, scatter_float,
                   (DType t, void* data, int64_t off, int64_t stride, int64_t n, const float* in),
                   (t, data, off, stride, n, in))

void scatter_int(DType t, void* data, int64_t off, int64_t stride, int64_t n, const int64_t* in) {
  if (ir::is_float(t)) {
    with_float_encoder(t, [&](auto tag, auto enc) {
      scatter_as<decltype(tag)>(data, off, stride, n, in,
                                [enc](int64_t v) { return enc(static_cast<float>(v)); });
    });
  } else if (t == DType::bool_) {
    scatter_as<uint8_t>(data, off, stride, n, in, [](int64_t v) { return uint8_t{v != 0}; });
  } else {
    with_int_type(t, [&](auto tag) {
      using T = decltype(tag);
      scatter_as<T>(data, off, stride, n, in, [](int64_t v) { return saturate<T>(v); });
    });
  }
}

void scatter_int_wrapped(DType t, void* data, int64_t off, int64_t stride, int64_t n, const int64_t* in) {
  if (!ir::is_integer(t) || t == DType::bool_) return scatter_int(t, data, off, stride, n, in);
  with_int_type(t, [&](auto tag) {
    using T = decltype(tag);
    scatter_as<T>(data, off, stride, n, in, [](int64_t v) { return static_cast<T>(v); });
  });
}

namespace {
template <class T>
void copy_typed(const void* src, int64_t soff, int64_t sstride, void* dst, int64_t doff,
                int64_t dstride, int64_t n) {
  const T* s = static_cast<const T*>(src) + soff;
  T* d = static_cast<T*>(dst) + doff;
  if (sstride == 1 && dstride == 1) {
    std::memmove(d, s, n * sizeof(T));
    return;
  }
  for (int64_t i = 0; i < n; ++i) d[i * dstride] = s[i * sstride];
}

template <class T>
void copy_blocked_typed(const void* src, int64_t soff, int64_t srow, int64_t scol, void* dst, int64_t doff,
                        int64_t drow, int64_t dcol, int64_t rows, int64_t cols) {
  constexpr int64_t kBlock = 16;
  const T* s = static_cast<const T*>(src) + soff;
  T* d = static_cast<T*>(dst) + doff;
  for (int64_t r0 = 0; r0 < rows; r0 += kBlock) {
    const int64_t r1 = std::min(rows, r0 + kBlock);
    for (int64_t c0 = 0; c0 < cols; c0 += kBlock) {
      const int64_t cn = std::min(cols - c0, kBlock);
      for (int64_t r = r0; r < r1; ++r) {
        const T* sr = s + r * srow + c0 * scol;
        T* dr = d + r * drow + c0 * dcol;
        for (int64_t c = 0; c < cn; ++c) dr[c * dcol] = sr[c * scol];
      }
    }
  }
}

template <class T>
void fill_typed(const void* value, void* dst, int64_t off, int64_t stride, int64_t n) {
  T v;
  std::memcpy(&v, value, sizeof(T));
  T* d = static_cast<T*>(dst) + off;
  for (int64_t i = 0; i < n; ++i) d[i * stride] = v;
}
}  // namespace

void copy_elements(int elem_size, const void* src, int64_t soff, int64_t sstride, void* dst,
                   int64_t doff, int64_t dstride, int64_t n) {
  switch (elem_size) {
    case 1: copy_typed<uint8_t>(src, soff, sstride, dst, doff, dstride, n); return;
    case 2: copy_typed<uint16_t>(src, soff, sstride, dst, doff, dstride, n); return;
    case 8: copy_typed<uint64_t>(src, soff, sstride, dst, doff, dstride, n); return;
    default: copy_typed<uint32_t>(src, soff, sstride, dst, doff, dstride, n); return;
  }
}

void copy_blocked(int elem_size, const void* src, int64_t soff, int64_t srow, int64_t scol, void* dst,
                  int64_t doff, int64_t drow, int64_t dcol, int64_t rows, int64_t cols) {
  switch (elem_size) {
    case 1: return copy_blocked_typed<uint8_t>(src, soff, srow, scol, dst, doff, drow, dcol, rows, cols);
    case 2: return copy_blocked_typed<uint16_t>(src, soff, srow, scol, dst, doff, drow, dcol, rows, cols);
    case 8: return copy_blocked_typed<uint64_t>(src, soff, srow, scol, dst, doff, drow, dcol, rows, cols);
    default: return copy_blocked_typed<uint32_t>(src, soff, srow, scol, dst, doff, drow, dcol, rows, cols);
  }
}

namespace {
// Whole 32-byte stores after an aligning head; the tail is copied normally.
__attribute__((target("avx2"))) void stream_avx2(std::byte* d, const std::byte* s, int64_t bytes) {
  const int64_t head = std::min<int64_t>(bytes, (32 - reinterpret_cast<uintptr_t>(d) % 32) % 32);
  std::memcpy(d, s, head);
  int64_t i = head;
  for (; i + 32 <= bytes; i += 32)
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d + i), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i)));
  std::memcpy(d + i, s + i, bytes - i);
}
}  // namespace

bool stream_copy(void* dst, const void* src, int64_t bytes) {
  if (simd_level() < SimdLevel::avx2) return false;
  stream_avx2(static_cast<std::byte*>(dst), static_cast<const std::byte*>(src), bytes);
  return true;
}

void stream_fence() { _mm_sfence(); }

void fill_elements(int elem_size, const void* value, void* dst, int64_t off, int64_t stride,
                   int64_t n) {
  switch (elem_size) {
    case 1: fill_typed<uint8_t>(value, dst, off, stride, n); return;
    case 2: fill_typed<uint16_t>(value, dst, off, stride, n); return;
    case 8: fill_typed<uint64_t>(value, dst, off, stride, n); return;
    default: fill_typed<uint32_t>(value, dst, off, stride, n); return;
  }
}

}  // namespace nkic::sim
