// The current API's destination-passing form, nisa.op(dst, ...), on the builders
// the legacy API shares: a builder emits its instructions into a fresh result
// tensor, then those instructions are re-pointed at the caller's dst view. The IR
// keeps one instruction per ISA instruction, each writing dst itself (no copy).
#pragma once
#include <optional>

#include "codegen/KernelBuilder.h"
#include "types/Values.h"

namespace nkic::codegen {

// Where the instructions of one destination-passing call begin.
struct DestinationMark {
  size_t insertion_size = 0;
};
DestinationMark begin_destination(const KernelBuilder& b);

// Redirects what was emitted since `mark` into `result` onto `dst`: equal shapes,
// or the same partitions and elements per partition (the engines walk the free
// elements flat). A dst of another dtype than the result is the builder's
// concern (it was asked for dst's dtype).
void write_into(KernelBuilder& b, const DestinationMark& mark, const types::TensorVal& result,
                const types::TensorVal& dst);

// nisa.nc_matmul(dst, ..., accumulate=): write_into, then the matmul's accumulate
// flag. None infers it: a matmul whose dst elements an earlier matmul of this
// kernel wrote accumulates; the first write of a location overwrites.
void matmul_into(KernelBuilder& b, const DestinationMark& mark, const types::TensorVal& result,
                 const types::TensorVal& dst, std::optional<bool> accumulate);

// The accumulate flag of the matmuls (nc_matmul, nc_matmul_mx) emitted since `mark`
// that write dst: `accumulate`, or None's inference above.
void mark_matmul_accumulation(KernelBuilder& b, const DestinationMark& mark, const types::TensorVal& dst,
                              std::optional<bool> accumulate);

}  // namespace nkic::codegen
