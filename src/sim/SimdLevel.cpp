#include "sim/SimdLevel.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace nkic::sim {

namespace {

SimdLevel cpu_level() {
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) return SimdLevel::baseline;
  return __builtin_cpu_supports("avx512f") ? SimdLevel::avx512 : SimdLevel::avx2;
}

SimdLevel capped(SimdLevel level) {
  const char* s = std::getenv("NKIC_SIMD");
  if (!s) return level;
  for (auto [name, cap] : {std::pair{"baseline", SimdLevel::baseline}, std::pair{"avx2", SimdLevel::avx2},
                           std::pair{"avx512", SimdLevel::avx512}})
    if (std::strcmp(s, name) == 0) return std::min(level, cap);
  return level;
}

}  // namespace

SimdLevel simd_level() {
  static const SimdLevel level = capped(cpu_level());
  return level;
}

}  // namespace nkic::sim
