#include "perf/InstructionFacts.h"

#include <algorithm>

namespace nkic::perf {

namespace {

// aws-neuron-sdk 716f08dc nki/api/nki/isa/__init__.py, each instruction's docstring.
constexpr InstructionFacts kFacts[] = {
    // max(MIN_II, N) with src and predicate one in SBUF, one in PSUM; 2N both in SBUF: the
    // destination it keeps where the predicate is false is not a streamed input.
    {ir::Opcode::CopyPredicated, std::nullopt, 0, true, true, -1, "tensor_copy_predicated, line 1513"},
    // 150 + N GpSimd cycles.
    {ir::Opcode::Iota, std::nullopt, 0, false, false, 150, "iota, line 565"},
    // GPSIMD_START + N, the GpSimd start-up overhead about 150 cycles.
    {ir::Opcode::AffineSelect, std::nullopt, 0, false, false, 150, "affine_select, line 289"},
    // max(MIN_II, 13 * (N / 3)) Vector cycles, N the elements per partition of its input.
    {ir::Opcode::BnAggr, std::nullopt, 13.0 / 3.0, false, false, -1, "bn_aggr, line 335"},
    // max(MIN_II, 8 * N) Vector cycles, N the elements per partition of data. Not in a legacy
    // kernel: AccelOpt's NKIBench silu and adamw (trn1, neuronx-cc) run a [128, 512] fp32
    // nisa.reciprocal per tile in less time than 8N would take on its own (silu: 448 of them,
    // 1.64 ms at 8N, 1.33 ms measured for the whole kernel).
    {ir::Opcode::Activation, ir::AluOp::reciprocal, 8, false, false, -1, "reciprocal, line 1189", true},
};

}  // namespace

const InstructionFacts* facts_of(const ir::Instruction& in, bool current_api) {
  for (const InstructionFacts& f : kFacts)
    if (f.opcode == in.opcode && (!f.alu || *f.alu == in.alu) && (current_api || !f.current_api_only)) return &f;
  return nullptr;
}

namespace {

// Whether a tensor_scalar's ALU steps are ones the Scalar Engine runs: (multiply, add),
// (multiply) or (add).
bool scalar_engine_form(const ir::Instruction& in) {
  std::vector<ir::AluOp> ops;
  if (in.steps.empty()) ops.push_back(in.alu);
  for (const ir::AluStep& s : in.steps) ops.push_back(s.op);
  using ir::AluOp;
  return ops == std::vector{AluOp::multiply, AluOp::add} || ops == std::vector{AluOp::multiply} ||
         ops == std::vector{AluOp::add};
}

}  // namespace

std::vector<ir::Engine> compiler_engines(const ir::Instruction& in, const ir::Kernel& k) {
  const ir::Engine own = ir::engine_of(in);
  if (in.opcode != ir::Opcode::TensorScalar || in.engine != ir::Engine::none || in.accumulate ||
      !in.extra_dsts.empty() || !scalar_engine_form(in))
    return {own};
  auto plain = [&k](const ir::Access& a) { return a.indirect.empty() && ir::is_float(k.tensor(a.tensor).dtype); };
  if (!plain(in.dst) || !std::all_of(in.srcs.begin(), in.srcs.end(), plain)) return {own};
  return {own, ir::Engine::act};
}

}  // namespace nkic::perf
