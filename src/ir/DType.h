// Element types of NKI tensors (NKI_API.md §2.4). The 64-bit integers (nki 0.7+) are the
// widths of device scalars and HBM offsets only: no compute engine reads or writes them.
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>

namespace nkic::ir {

enum class DType : uint8_t {
  float32, float16, bfloat16, tfloat32, float8_e4m3, float8_e5m2,
  int8, int16, int32, uint8, uint16, uint32, bool_,
  // OCP Microscaling (mx) element formats packed four to a word: one element of
  // these dtypes holds four fp8 (or fp4) values, lane j in byte (nibble) j.
  float8_e4m3fn_x4, float8_e5m2_x4, float4_e2m1fn_x4,
  // The OCP fp8 formats of NKI 0.2+ / 0.5+ (NKI_CURRENT_API.md §7.6): e4m3fn has no
  // infinities (max 448, NaN only S.1111.111); e8m0fnu is an unsigned power of two
  // 2^(e-127) (0xFF NaN), the MX block scale.
  float8_e4m3fn, float8_e8m0fnu,
  int64, uint64,
};
inline constexpr int kNumDTypes = 20;

struct DTypeInfo {
  std::string_view name;  // the nl.* spelling, also the printer's
  int size;               // bytes per element
  bool is_float;
  bool is_signed;
  int lanes = 1;          // values packed in one element (4 for the mx dtypes)
  int min_nc_version = 0; // the first NeuronCore generation whose engines read or write it (0: every one)
};

const DTypeInfo& info(DType t);
inline std::string_view name(DType t) { return info(t).name; }
inline int size_of(DType t) { return info(t).size; }
inline bool is_float(DType t) { return info(t).is_float; }
inline bool is_integer(DType t) { return !info(t).is_float; }
inline bool is_packed(DType t) { return info(t).lanes > 1; }
inline bool is_wide(DType t) { return info(t).size == 8; }  // int64, uint64
inline int min_nc_version(DType t) { return info(t).min_nc_version; }
// The exponent of the largest finite value of one lane of a packed dtype
// (e4m3fn: 448 = 1.75 * 2^8, e5m2: 57344 = 1.75 * 2^15, e2m1: 6 = 1.5 * 2^2).
int lane_max_exponent(DType packed);
std::optional<DType> dtype_from_name(std::string_view n);

}  // namespace nkic::ir
