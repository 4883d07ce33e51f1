// The Scalar Engine's instructions (the instruction table's `act` rows): nisa.activation (and
// activation_reduce) and nisa.activate2, each one ALU pipeline with the engine's accumulator.
#include <algorithm>

#include "codegen/Ops.h"
#include "sema/Asserts.h"
#include "sema/ErrorCatalog.h"

namespace nkic::codegen {

namespace {

// The Scalar Engine's accumulator resets or folds; it cannot be loaded (load_reduce
// is the Vector Engine's).
void check_scalar_engine_accumulator(const KernelBuilder& b, const Accumulate& acc) {
  if (acc.cmd == ir::AccCmd::load_reduce)
    b.fail(sema::err_unsupported_args(b.api(), "the Scalar Engine's accumulator has no load_reduce"));
}

}  // namespace

void check_activation_operands(KernelBuilder& b, const TensorVal& data, const TensorVal* bias, const TensorVal* scale) {
  using D = ir::DType;
  if (bias) {
    D t = b.tensor(bias->tensor).dtype;
    if (t != D::float32 && t != D::float16 && t != D::bfloat16) b.fail(sema::err_activation_bias_invalid_type(ir::name(t)));
    // The current API's reference: bias is a (P, 1) vector over data's partitions ("free dim 1 enforced").
    int64_t per_partition = 1;
    for (size_t d = 1; d < bias->shape.size(); ++d) per_partition *= bias->shape[d];
    if (b.current_api && (bias->shape.empty() || bias->shape[0] != data.shape[0] || per_partition != 1))
      b.fail(sema::err_activation_bias_vector(bias->shape, data.shape.empty() ? 0 : data.shape[0]));
  } else if (b.direct_allocation) {
    b.fail(sema::err_bias_tensor_must_be_specified_in_allocation(b.api()));
  }
  if (scale) {
    D t = b.tensor(scale->tensor).dtype;
    if (t != D::float32) b.fail(sema::err_activation_scale_invalid_type(ir::name(t)));
    int64_t per_partition = 1;
    for (size_t d = 1; d < scale->shape.size(); ++d) per_partition *= scale->shape[d];
    if (scale->shape.empty() || scale->shape[0] != data.shape[0] || per_partition != 1)
      b.fail(sema::err_activation_scale_scalar_or_vector(scale->shape));
  }
}

TensorVal activation(KernelBuilder& b, const Dst& dst, ir::AluOp op, const TensorVal& data,
                     const std::optional<Value>& bias, const Value& scale, Accumulate acc, const OpArgs& args) {
  check_scalar_engine_accumulator(b, acc);
  const auto* scale_tile = std::get_if<TensorVal>(&scale);
  check_activation_operands(b, data, bias ? std::get_if<TensorVal>(&*bias) : nullptr, scale_tile);
  // A number as the bias is NeuronCore-v3's (the current API's reference: "scalar bias from v3").
  if (b.current_api && bias && std::holds_alternative<types::Other>(*bias))
    sema::assert_nc_version(b.target(), 3, b.api() + "(bias=<a number>)", b.raiser());
  std::vector<PipelineStep> steps;
  const auto* number = std::get_if<types::Other>(&scale);
  if (scale_tile || !number || number->value != 1.0) steps.push_back({ir::AluOp::multiply, scale, false});
  if (bias) steps.push_back({ir::AluOp::add, *bias, false});
  // activation has no relu_param: prelu takes activate2's default, 0.
  steps.push_back({op, ir::is_parametric_activation(op) ? std::optional<Value>(Value(types::Other{})) : std::nullopt,
                   false});
  acc = with_result(acc);
  // NeuronCore-v2's activation accumulates with add only.
  if (acc.cmd != ir::AccCmd::none && acc.op != ir::AluOp::add)
    sema::assert_nc_version(b.target(), 3, "nisa.activation(reduce_op=" + std::string(ir::name(acc.op)) + ")",
                            b.raiser());
  return isa_pipeline(b, dst, ir::Opcode::Activation, data, steps, args, ir::Engine::none, acc);
}

TensorVal activate2(KernelBuilder& b, const Dst& dst, ir::AluOp op, const TensorVal& data,
                    const PipelineStep& first, const PipelineStep& second, const Value& relu_param, Accumulate acc) {
  using ir::AluOp;
  b.check_versioned_form("nisa.activate2");
  check_scalar_engine_accumulator(b, acc);
  b.check_operand("data", data);
  check_dst_rows(b, dst, data);
  // The engine's six tensor-scalar stage pairs (the stub's list).
  static const std::pair<AluOp, AluOp> kPairs[] = {{AluOp::multiply, AluOp::add},   {AluOp::multiply, AluOp::subtract},
                                                   {AluOp::multiply, AluOp::bypass}, {AluOp::add, AluOp::bypass},
                                                   {AluOp::subtract, AluOp::bypass}, {AluOp::bypass, AluOp::bypass}};
  if (std::find(std::begin(kPairs), std::end(kPairs), std::pair{first.op, second.op}) == std::end(kPairs))
    b.fail(sema::err_unsupported_args(
        b.api(), "(op0, op1) = (" + std::string(ir::name(first.op)) + ", " + std::string(ir::name(second.op)) +
                     ") is not one of (multiply, add), (multiply, subtract), (multiply, bypass), (add, bypass), "
                     "(subtract, bypass), (bypass, bypass)"));
  for (const PipelineStep* s : {&first, &second})
    if (s->op == AluOp::bypass && s->reverse)
      b.fail(sema::err_unsupported_args(b.api(), std::string(s == &first ? "reverse0 needs op0" : "reverse1 needs op1") +
                                                     " (it is bypass)"));
  const auto* t0 = first.operand ? std::get_if<TensorVal>(&*first.operand) : nullptr;
  const auto* t1 = second.operand ? std::get_if<TensorVal>(&*second.operand) : nullptr;
  if (first.operand) check_immediate(b, "imm0", *first.operand, data);
  if (second.operand) check_immediate(b, "imm1", *second.operand, data);
  check_immediate(b, "relu_param", relu_param, data);
  if (t0 && t1 && b.tensor(t0->tensor).dtype != b.tensor(t1->tensor).dtype)
    b.fail(sema::err_supported_operand_dtype("the tiles imm0 ('" + std::string(ir::name(b.tensor(t0->tensor).dtype)) +
                                             "') and imm1 ('" + std::string(ir::name(b.tensor(t1->tensor).dtype)) +
                                             "') of 'nisa.activate2' must have one dtype"));
  acc = with_result(acc);
  if (acc.cmd != ir::AccCmd::none && acc.op != AluOp::add && acc.op != AluOp::maximum && acc.op != AluOp::minimum &&
      acc.op != AluOp::abs_max && acc.op != AluOp::abs_min)
    b.fail(sema::err_unsupported_args(b.api(), "reduce_op " + std::string(ir::name(acc.op)) +
                                                   " is not one of add, maximum, minimum, abs_max, abs_min"));
  std::vector<PipelineStep> steps;
  for (const PipelineStep* s : {&first, &second})
    if (s->op != AluOp::bypass) steps.push_back(*s);
  steps.push_back({op, ir::is_parametric_activation(op) ? std::optional<Value>(relu_param) : std::nullopt, false});
  OpArgs args;
  args.dtype = dst.dtype(b, b.tensor(data.tensor).dtype);
  return isa_pipeline(b, dst, ir::Opcode::Activate2, data, steps, args, ir::Engine::none, acc);
}

}  // namespace nkic::codegen
