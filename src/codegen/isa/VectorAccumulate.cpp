// The Vector Engine's ALU instructions that carry the engine's reduce accumulator
// (reduce_cmd): tensor_scalar, exponential, select and their kin; the fold is a stage of the
// instruction itself, not a tensor_reduce after it. The accumulator stage itself
// (attach_accumulator) serves the Scalar Engine's activations too (isa/ScalarEngine.cpp).
#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

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
    case AluOp::abs_max: case AluOp::abs_min: case AluOp::logical_and: case AluOp::logical_or: case AluOp::logical_xor: return true;
    default: return false;
  }
}

// select_reduce and range_select take no reduce_init: their load_reduce starts the
// fold afresh, as reset_reduce does.
Accumulate without_init(Accumulate acc) {
  if (acc.cmd == ir::AccCmd::load_reduce) acc.cmd = ir::AccCmd::reset_reduce;
  return acc;
}

}  // namespace

Accumulate with_result(Accumulate acc) {
  if (acc.cmd == ir::AccCmd::none && acc.res) acc.cmd = ir::AccCmd::reset_reduce;
  return acc;
}

void attach_accumulator(KernelBuilder& b, ir::Instruction& in, const Accumulate& acc) {
  if (acc.cmd == ir::AccCmd::none) return;
  if (!accumulator_fold(acc.op)) b.fail(sema::err_instruction_unsupported_op(ir::name(acc.op)));
  const int64_t partitions = in.shape.at(0);
  // The register is the accumulator's rows [0, P) viewed on the instruction's grid.
  TensorVal reg = b.engine_accumulator();
  reg.shape[0] = partitions;
  in.acc_cmd = acc.cmd;
  in.acc_op = acc.op;
  in.acc_init = acc.init;
  in.negate = acc.negate_res;
  in.extra_dsts.push_back(access_for(b, reg, {partitions, 1}));
  if (acc.init_tile) {
    // Per-partition starts of load_reduce: a [P, 1] fp32 tile, the last source.
    const TensorVal& init = *acc.init_tile;
    b.check_operand("reduce_init", init);
    sema::assert_elements_per_partition(free_elements(init), 1, 1, "reduce_init", b.api(), b.raiser());
    if (init.shape.at(0) != partitions)
      b.fail(sema::err_num_partition_mismatch("reduce_init" + sema::shape_str(init.shape),
                                              "data" + sema::shape_str(in.shape), b.api()));
    if (b.tensor(init.tensor).dtype != ir::DType::float32)
      b.fail(sema::err_supported_operand_dtype("reduce_init of '" + b.api() + "' is a float32 tile, got '" +
                                               std::string(ir::name(b.tensor(init.tensor).dtype)) + "'"));
    const TensorVal column = init.shape.size() == 2 ? init : operand_view(b, init, {partitions, 1});
    in.srcs.push_back(access_for(b, column, in.shape));
  }
  if (!acc.res) return;
  const TensorVal& res = *acc.res;
  b.check_operand("reduce_res", res);
  sema::assert_elements_per_partition(free_elements(res), 1, 1, "reduce_res", b.api(), b.raiser());
  if (res.shape.at(0) != partitions)
    b.fail(sema::err_num_partition_mismatch("reduce_res" + sema::shape_str(res.shape),
                                            "data" + sema::shape_str(in.shape), b.api()));
  // Both are read on a [P, 1] grid, whose coord 0 is the instruction's partition coord.
  const TensorVal column = res.shape.size() == 2 ? res : operand_view(b, res, {partitions, 1});
  in.extra_dsts.push_back(access_for(b, column, {partitions, 1}));
}

namespace {

bool is_zero(const Value& v) {
  const auto* o = std::get_if<types::Other>(&v);
  return o && o->numeric && o->value == 0.0;
}

// Op slot `slot` (0: op0) of tensor_scalar. A one-operand op reads the data alone. square
// and relu take op0 from NeuronCore-v4 (nki 0.4) with operand0 None or 0, as the current
// API's stub (`current`: its call gives the dst) asks of every one-operand op0 (the legacy API
// ignores abs's, rsqrt's and reciprocal's operand, whatever it is).
PipelineStep scalar_slot(KernelBuilder& b, const PipelineStep& s, size_t slot, bool current) {
  const std::string op(ir::name(s.op)), name = slot == 0 ? "op0" : "op1";
  const bool v4 = s.op == ir::AluOp::square || s.op == ir::AluOp::relu;
  if (v4) {
    if (slot != 0) b.fail(sema::err_instruction_unsupported_op(op + " as op1 (square and relu take op0 only)"));
    sema::assert_nc_version(b.target(), 4, b.api() + "(op0=" + op + ")", b.raiser());
  }
  std::optional<Value> operand = v4 ? std::nullopt : slot_operand(s.op, s.operand);
  if (!operand && s.operand && (v4 || current) && !is_zero(*s.operand))
    b.fail(sema::err_unsupported_args(b.api(), name + " " + op + " reads the data alone: operand" +
                                                   std::to_string(slot) + " must be None or 0"));
  return {s.op, operand, s.reverse};
}

}  // namespace

TensorVal tensor_scalar(KernelBuilder& b, const Dst& dst, const TensorVal& data, const std::vector<PipelineStep>& given,
                        const Accumulate& acc, const OpArgs& args) {
  std::vector<PipelineStep> steps;
  for (const PipelineStep& s : given) steps.push_back(scalar_slot(b, s, steps.size(), dst.given()));
  // NKI_API §3.4: a fused pair is two bitvec ops (integer bits) or two arithmetic ones (fp32).
  if (steps.size() == 2) {
    const bool first = ir::info(steps[0].op).kind == ir::AluKind::Bitvec;
    if (first != (ir::info(steps[1].op).kind == ir::AluKind::Bitvec))
      b.fail(sema::err_instruction_unsupported_op(std::string(ir::name(steps[0].op)) + " with " + std::string(
                                                  ir::name(steps[1].op))));
  }
  if (b.current_api && b.nki_version.at_least(0, 8) && (args.engine == ir::Engine::act || args.engine == ir::Engine::pool))
    for (const PipelineStep& s : steps)
      if (ir::info(s.op).kind == ir::AluKind::Bitvec) {
        b.warn(sema::warn_bitvec_op_engine(b.api(), ir::name(s.op), args.engine == ir::Engine::act ? "Scalar" : "GpSimd"));
        break;
      }
  return isa_pipeline(b, dst, ir::Opcode::TensorScalar, data, steps, args, args.engine, acc);
}

TensorVal exponential(KernelBuilder& b, const Dst& dst, const TensorVal& src, const Value& max_value, Accumulate acc) {
  b.check_versioned_form("nisa.exponential");
  b.check_operand("src", src);
  check_dst_rows(b, dst, src);
  check_immediate(b, "max_value", max_value, src);
  if (acc.cmd != ir::AccCmd::load_reduce && (acc.init != 0.0 || acc.init_tile))
    b.fail(sema::err_unsupported_args(b.api(), "reduce_init is read only with reduce_cmd.load_reduce; leave it 0.0"));
  const std::vector<PipelineStep> steps = {{ir::AluOp::subtract, max_value, false}, {ir::AluOp::exp, std::nullopt, false}};
  OpArgs args;
  args.dtype = dst.dtype(b, b.tensor(src.tensor).dtype);
  return isa_pipeline(b, dst, ir::Opcode::Exponential, src, steps, args, ir::Engine::none, with_result(acc));
}

TensorVal tensor_scalar_reduce(KernelBuilder& b, const Dst& dst, const TensorVal& data, const PipelineStep& op0,
                               const std::optional<Value>& reduce_init, Accumulate acc) {
  using ir::AluOp;
  b.check_operand("data", data);
  check_dst_rows(b, dst, data);
  // 0.6 lets the reduction stay in the accumulator, for a later reduce_cmd.reduce to continue.
  if (!acc.res) b.check_versioned_form("nisa.tensor_scalar_reduce(reduce_res=None)");
  // "Bitvec operators are not supported in this API" (the stub); unary ones (abs) take operand0 0.
  if (ir::info(op0.op).kind == ir::AluKind::Bitvec)
    b.fail(sema::err_instruction_unsupported_op(std::string(ir::name(op0.op)) + " as op0 (not a bitvec operator)"));
  if (acc.op != AluOp::add && acc.op != AluOp::multiply && acc.op != AluOp::maximum && acc.op != AluOp::minimum)
    b.fail(sema::err_unsupported_args(b.api(), "reduce_op " + std::string(ir::name(acc.op)) +
                                                   " is not one of add, multiply, maximum, minimum"));
  if (acc.cmd != ir::AccCmd::reset_reduce && acc.cmd != ir::AccCmd::reduce && acc.cmd != ir::AccCmd::load_reduce)
    b.fail(sema::err_unsupported_args(b.api(), std::string("reduce_cmd ") + ir::name(acc.cmd) +
                                                   " is not one of reset_reduce, reduce, load_reduce"));
  if ((acc.cmd == ir::AccCmd::load_reduce) != reduce_init.has_value())
    b.fail(sema::err_unsupported_args(b.api(), acc.cmd == ir::AccCmd::load_reduce
                                                   ? "reduce_cmd.load_reduce starts from reduce_init: give it"
                                                   : "reduce_init is read only with reduce_cmd.load_reduce; leave it None"));
  if (reduce_init) {
    if (const auto* t = std::get_if<TensorVal>(&*reduce_init)) acc.init_tile = t;
    else if (const auto* o = std::get_if<types::Other>(&*reduce_init); o && o->numeric) acc.init = o->value;
    else reject_operand(b, "reduce_init", *reduce_init);
  }
  OpArgs args;
  args.dtype = dst.dtype(b, b.tensor(data.tensor).dtype);
  return tensor_scalar(b, dst, data, {op0}, acc, args);
}

void select_reduce(KernelBuilder& b, const TensorVal& dst, const TensorVal& predicate, const TensorVal& on_true,
                   const Value& on_false, bool reverse_pred, const Accumulate& acc, const OpArgs& args) {
  b.check_operand("dst", dst);
  b.check_operand("predicate", predicate);
  b.check_operand("on_true", on_true);
  auto in = make_instruction(ir::Opcode::Select, dst.shape);
  in->dst = access_for(b, dst, dst.shape);
  auto read = [&](const TensorVal& t) { return access_for(b, fit_value(b, dst.shape, on_grid_of(b, t, dst.shape)), dst.shape); };
  in->srcs = {read(predicate), read(on_true)};
  if (const auto* t = std::get_if<TensorVal>(&on_false)) {
    b.check_operand("on_false", *t);
    in->srcs.push_back(read(*t));
  } else if (const auto* o = std::get_if<types::Other>(&on_false); o && o->numeric) {
    in->imms = {o->value};
  } else {
    reject_operand(b, "on_false", on_false);
  }
  in->reverse = reverse_pred;
  in->predicate = predicate_for(b, args, dst.shape.size());
  attach_accumulator(b, *in, without_init(acc));
  b.emit(std::move(in));
}

namespace {

// The value memset stores in `t`: a float rounds (in the simulator, as the store does), an
// integer truncates toward zero and saturates (NaN: 0), a bool is v != 0.
double memset_value(ir::DType t, double v) {
  if (ir::is_float(t)) return v;
  if (t == ir::DType::bool_) return v != 0.0;
  if (std::isnan(v)) return 0.0;
  const int bits = 8 * ir::size_of(t);
  const bool is_signed = ir::info(t).is_signed;
  const double hi = std::ldexp(1.0, is_signed ? bits - 1 : bits) - 1.0;
  const double lo = is_signed ? -hi - 1.0 : 0.0;
  return std::clamp(std::trunc(v), lo, hi);
}

}  // namespace

void tensor_copy_predicated(KernelBuilder& b, const TensorVal& dst, const Value& src, const TensorVal& predicate,
                            bool reverse_pred, const OpArgs& args) {
  const auto* tile = std::get_if<TensorVal>(&src);
  const auto* number = std::get_if<types::Other>(&src);
  if (!tile && !(number && number->numeric)) reject_operand(b, "src", src);
  b.check_operand("dst", dst);
  b.check_operand("predicate", predicate);
  if (tile) b.check_operand("src", *tile);
  check_one_psum_input(b, {{"predicate", &predicate}, {"src", tile}});
  auto in = make_instruction(ir::Opcode::CopyPredicated, dst.shape);
  in->dst = access_for(b, dst, dst.shape);
  auto read = [&](const TensorVal& t) { return access_for(b, fit_value(b, dst.shape, on_grid_of(b, t, dst.shape)), dst.shape); };
  in->srcs.push_back(read(predicate));
  // dst keeps its value where the copy does not happen: it is the last source. A
  // number is the immediate the pick takes where dst is not, so the predicate reverses.
  if (tile) in->srcs.push_back(read(*tile));
  else in->imms = {memset_value(b.tensor(dst.tensor).dtype, number->value)};
  in->srcs.push_back(in->dst);
  in->reverse = tile ? reverse_pred : !reverse_pred;
  in->predicate = predicate_for(b, args, dst.shape.size());
  b.emit(std::move(in));
}

TensorVal range_select(KernelBuilder& b, const Dst& to, const TensorVal& on_true, const PipelineStep& first,
                       const PipelineStep& second, int64_t range_start, double on_false, const Accumulate& acc,
                       const OpArgs& args) {
  b.check_operand("on_true_tile", on_true);
  // The current API's stub (its call gives the dst): the engine fills with FP32_MIN only (a
  // Python float of it is fine).
  if (to.given() && static_cast<float>(on_false) != std::numeric_limits<float>::lowest() &&
      !b.accepts("nisa.range_select(on_false_value=) other than FP32_MIN")) {
    std::ostringstream v;
    v << on_false;
    b.fail(sema::err_unsupported_args(b.api(), "on_false_value is " + v.str() +
                                                   "; it must be FP32_MIN (-3.4028235e+38, nl.fp32.min)"));
  }
  const TensorVal rows = rows_of(b, on_true);
  auto in = make_instruction(ir::Opcode::RangeSelect, rows.shape);
  in->srcs.push_back(access_for(b, rows, rows.shape));
  for (const PipelineStep* s : {&first, &second}) {
    const char* name = s == &first ? "bound0" : "bound1";
    if (ir::info(s->op).kind != ir::AluKind::Compare)
      b.fail(sema::err_instruction_unsupported_op(std::string(ir::name(s->op)) + " as " +
                                                  (s == &first ? "comp_op0" : "comp_op1")));
    if (!s->operand) b.fail(sema::err_operand_cannot_be_none(name));
    check_immediate(b, name, *s->operand, rows);
    ir::AluStep step{s->op, -1, 0.0, false};
    if (const auto* t = std::get_if<TensorVal>(&*s->operand)) {
      step.src = static_cast<int>(in->srcs.size());
      in->srcs.push_back(access_for(b, *t, rows.shape));
    } else {
      step.imm = std::get<types::Other>(*s->operand).value;
    }
    in->steps.push_back(step);
  }
  in->imms = {on_false};
  in->value = ir::AffineExpr::grid(1) + ir::AffineExpr(range_start);
  TensorVal dst = to.resolve(b, "range_select", rows.shape, args.dtype.value_or(b.tensor(on_true.tensor).dtype),
                             ir::Memory::SBUF);
  in->dst = access_for(b, dst, rows.shape);
  in->predicate = predicate_for(b, args, rows.shape.size());
  attach_accumulator(b, *in, without_init(acc));
  b.emit(std::move(in));
  return on_true.shape == rows.shape || to.given() ? dst : operand_view(b, dst, on_true.shape);
}

}  // namespace nkic::codegen
