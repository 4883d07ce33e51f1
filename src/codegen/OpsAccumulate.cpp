// The ALU instructions that carry the engine's reduce accumulator (reduce_cmd):
// activation on the Scalar Engine, tensor_scalar on the Vector Engine. The fold
// is a stage of the instruction itself, not a tensor_reduce after it.
#include "codegen/Indexing.h"
#include "codegen/Ops.h"
#include "sema/Asserts.h"
#include "sema/ErrorCatalog.h"

namespace nkic::codegen {

namespace {

// The register's folds: the fp32 arithmetic and logical ones (no bitvec fold).
bool accumulator_fold(ir::AluOp op) {
  using ir::AluOp;
  switch (op) {
    case AluOp::add: case AluOp::subtract: case AluOp::multiply: case AluOp::maximum: case AluOp::minimum:
    case AluOp::logical_and: case AluOp::logical_or: case AluOp::logical_xor: return true;
    default: return false;
  }
}

int64_t free_elements(const TensorVal& t) {
  int64_t n = 1;
  for (size_t d = 1; d < t.shape.size(); ++d) n *= t.shape[d];
  return n;
}

}  // namespace

void attach_accumulator(KernelBuilder& b, ir::Instruction& in, const Accumulate& acc) {
  if (acc.cmd == ir::AccCmd::none) return;
  if (!accumulator_fold(acc.op)) b.fail(sema::err_instruction_unsupported_op(ir::name(acc.op)));
  const int64_t partitions = in.shape.at(0);
  // The register is the accumulator's rows [0, P) viewed on the instruction's grid.
  TensorVal reg = b.engine_accumulator();
  reg.shape[0] = partitions;
  in.acc_cmd = acc.cmd;
  in.acc_op = acc.op;
  in.extra_dsts.push_back(access_for(b, reg, {partitions, 1}));
  if (!acc.res) return;
  const TensorVal& res = *acc.res;
  b.check_operand("reduce_res", res);
  sema::assert_elements_per_partition(free_elements(res), 1, 1, "reduce_res", b.api(), b.raiser());
  if (res.shape.at(0) != partitions)
    b.fail(sema::err_num_partition_mismatch("reduce_res" + sema::shape_str(res.shape),
                                            "data" + sema::shape_str(in.shape), b.api()));
  // Both are read on a [P, 1] grid, whose coord 0 is the instruction's partition coord.
  const TensorVal column = res.shape.size() == 2 ? res : reshape_view(b, res, {partitions, 1});
  in.extra_dsts.push_back(access_for(b, column, {partitions, 1}));
}

TensorVal activation(KernelBuilder& b, ir::AluOp op, const TensorVal& data, const std::optional<Value>& bias,
                     const Value& scale,
                     Accumulate acc, const OpArgs& args) {
  const auto* scale_tile = std::get_if<TensorVal>(&scale);
  check_activation_operands(b, data, bias ? std::get_if<TensorVal>(&*bias) : nullptr, scale_tile);
  std::vector<PipelineStep> steps;
  const auto* number = std::get_if<types::Other>(&scale);
  if (scale_tile || !number || number->value != 1.0) steps.push_back({ir::AluOp::multiply, scale, false});
  if (bias) steps.push_back({ir::AluOp::add, *bias, false});
  steps.push_back({op, std::nullopt, false});
  if (acc.cmd == ir::AccCmd::none && acc.res) acc.cmd = ir::AccCmd::reset_reduce;
  // NeuronCore-v2's activation accumulates with add only.
  if (acc.cmd != ir::AccCmd::none && acc.op != ir::AluOp::add)
    sema::assert_nc_version(b.target(), 3, "nisa.activation(reduce_op=" + std::string(ir::name(acc.op)) + ")",
                            b.raiser());
  return isa_pipeline(b, ir::Opcode::Activation, data, steps, args, ir::Engine::none, acc);
}

TensorVal tensor_scalar(KernelBuilder& b, const TensorVal& data, const std::vector<PipelineStep>& steps,
                        const Accumulate& acc, const OpArgs& args) {
  // NKI_API §3.4: a fused pair is two bitvec ops (integer bits) or two arithmetic ones (fp32).
  if (steps.size() == 2) {
    const bool first = ir::info(steps[0].op).kind == ir::AluKind::Bitvec;
    if (first != (ir::info(steps[1].op).kind == ir::AluKind::Bitvec))
      b.fail(sema::err_instruction_unsupported_op(std::string(ir::name(steps[0].op)) + " with " + std::string(
                                                  ir::name(steps[1].op))));
  }
  return isa_pipeline(b, ir::Opcode::TensorScalar, data, steps, args, args.engine, acc);
}

}  // namespace nkic::codegen
