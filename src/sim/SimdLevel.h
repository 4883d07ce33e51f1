// The widest vector unit the simulator's kernels use. Every level computes the
// same bits (IEEE operations only; a fused multiply-add only where it rounds as
// a product then an add would), so the level changes speed, never a result.
#pragma once
#include <cstdint>

namespace nkic::sim {

enum class SimdLevel : uint8_t { baseline, avx2, avx512 };

// The CPU's level (avx2 needs AVX2 and FMA, avx512 AVX-512F as well), capped by
// NKIC_SIMD=baseline|avx2|avx512 (read once per process; other values are ignored).
SimdLevel simd_level();

}  // namespace nkic::sim
