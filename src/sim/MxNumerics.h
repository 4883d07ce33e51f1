// The OCP Microscaling (mx) formats: the fp8/fp4 values packed four to an
// element of the *_x4 dtypes, and the E8M0 block scales (a biased power of two
// in a uint8) that nisa.quantize_mx writes and nisa.nc_matmul_mx applies.
#pragma once
#include <cstddef>
#include <cstdint>

#include "ir/DType.h"
#include "sim/Numerics.h"  // e8m0_to_float: the scales' values

namespace nkic::sim {

// Lane `lane` (0..3) of the packed element at `word`, decoded exactly.
float mx_lane_load(ir::DType packed, const std::byte* word, int lane);
// Rounds `v` to the lane format (nearest, ties to even, saturating at the
// largest finite value; NaN -> the format's NaN, or 0 in fp4, which has none)
// and writes it into lane `lane` of the element at `word`, keeping the others.
void mx_lane_store(ir::DType packed, std::byte* word, int lane, float v);

// The E8M0 scale of a block whose largest magnitude is `amax`, for a lane
// format whose largest finite value has exponent `emax`: exponent(amax) - emax
// + bias (bias 0: the OCP sample scale; 1: twice it, so the largest value rounds
// without saturating), clamped to 0..254; 255 (NaN) when amax is infinite or NaN.
uint8_t mx_block_scale(int emax, int bias, float amax);

}  // namespace nkic::sim
