// Evaluation of every ir::AluOp over whole arrays: one switch per entry point,
// one tight loop per op, so the simulator's instruction loop stays generic and
// the per-element work vectorises.
#pragma once
#include <cstdint>

#include "ir/AluOp.h"

namespace nkic::sim {

// The two's-complement format a bitwise op works in (that of its integer
// operands): its results wrap to it, and logical right shift and invert act on
// exactly `bits` bits.
struct IntFormat {
  int bits = 32;
  bool is_signed = true;
};

// fp32 path: Arith, Compare, Logical and Activation ops. Comparisons and logical
// ops produce 1/0; logical ops treat any nonzero (and NaN) as true. `out` must not
// overlap the inputs; `a` and `b` may be the same array.
void eval_unary(ir::AluOp op, const float* a, float* out, int64_t n);
void eval_binary(ir::AluOp op, const float* a, const float* b, float* out, int64_t n);

// Exact integer path (int64): Arith ops saturate to the int64 range (divide and
// negative powers round to nearest-even, a zero divisor gives what the float path
// would store into an integer: ±saturated or 0); Compare and Logical produce 1/0;
// Bitvec ops wrap to `f`.
void eval_unary_int(ir::AluOp op, const int64_t* a, int64_t* out, int64_t n, IntFormat f);
void eval_binary_int(ir::AluOp op, const int64_t* a, const int64_t* b, int64_t* out, int64_t n,
                     IntFormat f);

// out[i] = acc[i] + out[i]: PSUM-style accumulation, in fp32 or saturating int64.
void accumulate(const float* acc, float* out, int64_t n);
void accumulate_int(const int64_t* acc, int64_t* out, int64_t n);

}  // namespace nkic::sim
