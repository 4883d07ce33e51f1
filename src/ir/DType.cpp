#include "ir/DType.h"

#include <array>

namespace nkic::ir {

namespace {
constexpr std::array<DTypeInfo, kNumDTypes> kInfo = {{
    {"float32", 4, true, true},     {"float16", 2, true, true},
    {"bfloat16", 2, true, true},    {"tfloat32", 4, true, true},
    {"float8_e4m3", 1, true, true}, {"float8_e5m2", 1, true, true},
    {"int8", 1, false, true},       {"int16", 2, false, true},
    {"int32", 4, false, true},      {"uint8", 1, false, false},
    {"uint16", 2, false, false},    {"uint32", 4, false, false},
    {"bool", 1, false, false},
    {"float8_e4m3fn_x4", 4, true, true, 4}, {"float8_e5m2_x4", 4, true, true, 4},
    {"float4_e2m1fn_x4", 2, true, true, 4},
    {"float8_e4m3fn", 1, true, true, 1, 4}, {"float8_e8m0fnu", 1, true, false, 1, 4},
    {"int64", 8, false, true},      {"uint64", 8, false, false},
}};
}  // namespace

const DTypeInfo& info(DType t) { return kInfo[static_cast<int>(t)]; }

int lane_max_exponent(DType packed) {
  switch (packed) {
    case DType::float8_e4m3fn_x4: return 8;
    case DType::float8_e5m2_x4: return 15;
    case DType::float4_e2m1fn_x4: return 2;
    default: return 0;
  }
}

std::optional<DType> dtype_from_name(std::string_view n) {
  if (n == "bool_") return DType::bool_;
  for (int i = 0; i < kNumDTypes; ++i)
    if (kInfo[i].name == n) return static_cast<DType>(i);
  return std::nullopt;
}

}  // namespace nkic::ir
