#include "perf/InstructionFacts.h"

namespace nkic::perf {

namespace {

// aws-neuron-sdk 716f08dc nki/api/nki/isa/__init__.py, each instruction's docstring.
constexpr InstructionFacts kFacts[] = {
    // max(MIN_II, N) with src and predicate one in SBUF, one in PSUM; 2N both in SBUF: the
    // destination it keeps where the predicate is false is not a streamed input.
    {ir::Opcode::CopyPredicated, 0, true, true, -1, "tensor_copy_predicated, line 1513"},
    // 150 + N GpSimd cycles.
    {ir::Opcode::Iota, 0, false, false, 150, "iota, line 565"},
    // GPSIMD_START + N, the GpSimd start-up overhead about 150 cycles.
    {ir::Opcode::AffineSelect, 0, false, false, 150, "affine_select, line 289"},
    // max(MIN_II, 13 * (N / 3)) Vector cycles, N the elements per partition of its input.
    {ir::Opcode::BnAggr, 13.0 / 3.0, false, false, -1, "bn_aggr, line 335"},
};

}  // namespace

const InstructionFacts* facts_of(ir::Opcode op) {
  for (const InstructionFacts& f : kFacts)
    if (f.opcode == op) return &f;
  return nullptr;
}

}  // namespace nkic::perf
