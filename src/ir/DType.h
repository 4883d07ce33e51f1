// Element types of NKI tensors (NKI_API.md §2.4). No 64-bit types exist on the hardware.
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>

namespace nkic::ir {

enum class DType : uint8_t {
  float32, float16, bfloat16, tfloat32, float8_e4m3, float8_e5m2,
  int8, int16, int32, uint8, uint16, uint32, bool_,
};
inline constexpr int kNumDTypes = 13;

struct DTypeInfo {
  std::string_view name;  // the nl.* spelling, also the printer's
  int size;               // bytes per element
  bool is_float;
  bool is_signed;
};

const DTypeInfo& info(DType t);
inline std::string_view name(DType t) { return info(t).name; }
inline int size_of(DType t) { return info(t).size; }
inline bool is_float(DType t) { return info(t).is_float; }
inline bool is_integer(DType t) { return !info(t).is_float; }
std::optional<DType> dtype_from_name(std::string_view n);

}  // namespace nkic::ir
