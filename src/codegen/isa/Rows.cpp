// The row instructions of the Vector Engine (sim/RowExec): each walks every
// partition along its free elements, flattened as the engine walks them.
#include <cstdint>

#include "codegen/Indexing.h"
#include "codegen/Ops.h"
#include "sema/Asserts.h"
#include "sema/ErrorCatalog.h"

namespace nkic::codegen {

using ir::Memory;

namespace {

// The instruction over srcs[0]'s rows, writing `dst` (and `extra` results); the
// mask applies to the positions of srcs[0] (bn_aggr: of its triples).
ir::Instruction& emit_rows(KernelBuilder& b, ir::Opcode opcode, const std::vector<TensorVal>& srcs,
                           const TensorVal& dst, const std::vector<TensorVal>& extra, const OpArgs& args) {
  auto in = make_instruction(opcode, {});
  const auto add = [&](const TensorVal& v, ir::Access& slot) {
    const TensorVal r = rows_of(b, v);
    slot = access_for(b, r, r.shape);
    in->widths.push_back(r.shape[1]);
  };
  add(dst, in->dst);
  for (const TensorVal& e : extra) add(e, in->extra_dsts.emplace_back());
  for (const TensorVal& s : srcs) add(s, in->srcs.emplace_back());
  const TensorVal data = rows_of(b, srcs[0]);
  in->shape = data.shape;
  in->predicate = predicate_for(b, args, 2);
  return b.emit(std::move(in));
}

TensorVal result(KernelBuilder& b, const Dst& to, const char* hint, std::vector<int64_t> shape, const OpArgs& args,
                 ir::DType dflt) {
  return to.resolve(b, hint, std::move(shape), args.dtype.value_or(dflt), Memory::SBUF);
}

ir::DType dtype_of(const KernelBuilder& b, const TensorVal& t) { return b.tensor(t.tensor).dtype; }

void check_vals(KernelBuilder& b, const TensorVal& vals) {
  b.check_operand("vals", vals);
  sema::assert_elements_per_partition(free_elements(vals), 8, 8, "vals", b.api(), b.raiser());
}

}  // namespace

TensorVal tensor_tensor_scan(KernelBuilder& b, const Dst& to, const TensorVal& data0, const TensorVal& data1, const Value& initial,
                             const PipelineStep& op0, const PipelineStep& op1, const OpArgs& args) {
  check_one_psum_input(b, {{"data0", &data0}, {"data1", &data1}});
  b.check_operand("data0", data0);
  b.check_operand("data1", data1);
  for (ir::AluOp op : {op0.op, op1.op})
    if (ir::info(op).kind == ir::AluKind::Bitvec || ir::info(op).kind == ir::AluKind::Activation)
      b.fail(sema::err_instruction_unsupported_op(ir::name(op)));  // NKI_API §3.4: arithmetic operators only
  check_rows(b, data0, data1);
  std::vector<TensorVal> srcs = {data0, data1};
  TensorVal dst = result(b, to, "tensor_tensor_scan", data0.shape, args, dtype_of(b, data0));
  double imm = 0.0;
  if (auto* t = std::get_if<TensorVal>(&initial)) {
    b.check_operand("initial", *t);
    check_rows(b, data0, *t, 1);
    srcs.push_back(*t);
  } else if (auto* o = std::get_if<types::Other>(&initial); o && o->numeric) {
    imm = o->value;
  } else {
    reject_operand(b, "initial", initial);
  }
  ir::Instruction& in = emit_rows(b, ir::Opcode::TensorTensorScan, srcs, dst, {}, args);
  // op0 combines data0 with the running value, op1 that result with data1.
  in.steps = {{op0.op, 0, 0.0, op0.reverse}, {op1.op, 1, 0.0, op1.reverse}};
  if (srcs.size() == 2) in.imms = {imm};
  return dst;
}

TensorVal bn_stats(KernelBuilder& b, const Dst& to, const TensorVal& data, const OpArgs& args) {
  check_bn_stats(b, data, args);
  TensorVal dst = result(b, to, "bn_stats", {data.shape[0], 6}, args, dtype_of(b, data));
  emit_rows(b, ir::Opcode::BnStats, {data}, dst, {}, args);
  return dst;
}

TensorVal bn_aggr(KernelBuilder& b, const Dst& to, const TensorVal& data, const OpArgs& args) {
  b.check_operand("data", data);
  TensorVal dst = result(b, to, "bn_aggr", {data.shape[0], 2}, args, dtype_of(b, data));
  emit_rows(b, ir::Opcode::BnAggr, {data}, dst, {}, args);
  return dst;
}

namespace {

// The top-8 instructions' element limits per partition (the target's, from `min`).
void check_top8_elements(KernelBuilder& b, const TensorVal& t, const char* name, int64_t min) {
  sema::assert_elements_per_partition(free_elements(t), min, b.target().topk_max_elements, name, b.api(), b.raiser());
}

}  // namespace

TensorVal max8(KernelBuilder& b, const Dst& to, const TensorVal& src, const OpArgs& args) {
  check_top8_elements(b, src, "src", b.target().topk_min_elements);
  b.check_operand("src", src);
  TensorVal dst = result(b, to, "max8", {src.shape[0], 8}, args, dtype_of(b, src));
  emit_rows(b, ir::Opcode::Max8, {src}, dst, {}, args);
  return dst;
}

TensorVal find_index8(KernelBuilder& b, const Dst& to, const TensorVal& data, const TensorVal& vals, const OpArgs& args) {
  check_top8_elements(b, data, "data", b.target().topk_min_elements);
  b.check_operand("data", data);
  check_vals(b, vals);
  check_rows(b, data, vals, 8);
  TensorVal dst = result(b, to, "find_index8", {data.shape[0], 8}, args, ir::DType::uint32);
  emit_rows(b, ir::Opcode::FindIndex8, {data, vals}, dst, {}, args);
  return dst;
}

TensorVal match_replace8(KernelBuilder& b, const Dst& to, const TensorVal& data, const TensorVal& vals, double imm,
                         const TensorVal* dst_idx, const OpArgs& args) {
  check_top8_elements(b, data, "data", 1);
  b.check_operand("data", data);
  check_vals(b, vals);
  check_rows(b, data, vals, 8);
  std::vector<TensorVal> extra;
  if (dst_idx) {
    b.check_operand("dst_idx", *dst_idx);
    check_rows(b, data, *dst_idx, 8);
    extra.push_back(*dst_idx);
  }
  TensorVal dst = result(b, to, "match_replace8", data.shape, args, dtype_of(b, data));
  emit_rows(b, ir::Opcode::MatchReplace8, {data, vals}, dst, extra, args).imms = {imm};
  return dst;
}

TensorVal sequence_bounds(KernelBuilder& b, const Dst& to, const TensorVal& segment_ids, const OpArgs& args) {
  b.check_operand("segment_ids", segment_ids);
  if (to.given()) b.check_operand("dst", to.view());
  // One sequence: "the partition dimension must always be 1" (the current API's nisa docs;
  // the legacy builder runs each partition's sequence on its own).
  if (b.current_api && segment_ids.shape[0] != 1)
    b.fail(sema::err_unsupported_args(b.api(), "segment_ids " + KernelBuilder::display_name(b.tensor(segment_ids.tensor).name) +
                                                   sema::shape_str(segment_ids.shape) + " has " +
                                                   std::to_string(segment_ids.shape[0]) +
                                                   " partitions; its partition dimension must be 1"));
  TensorVal dst = result(b, to, "sequence_bounds", {segment_ids.shape[0], 2, free_elements(segment_ids)}, args,
                         dtype_of(b, segment_ids));
  emit_rows(b, ir::Opcode::SequenceBounds, {segment_ids}, dst, {}, args);
  return dst;
}

namespace {

// A current-API operand that is a number or a [P, 1] tile of data's partitions:
// the tile becomes srcs[k] of the instruction (its index into `srcs`), a number `imm`.
int immediate(KernelBuilder& b, const char* name, const Value& v, const TensorVal& data, std::vector<TensorVal>& srcs,
              double& imm) {
  check_immediate(b, name, v, data);
  if (const auto* t = std::get_if<TensorVal>(&v)) {
    srcs.push_back(*t);
    return static_cast<int>(srcs.size()) - 1;
  }
  imm = std::get<types::Other>(v).value;
  return -1;
}

[[noreturn]] void unsupported(KernelBuilder& b, const std::string& why) { b.fail(sema::err_unsupported_args(b.api(), why)); }

}  // namespace

TensorVal tensor_scalar_cumulative(KernelBuilder& b, const TensorVal& dst, const TensorVal& src,
                                   const PipelineStep& op0, ir::AluOp op1, const std::optional<Value>& imm1,
                                   ir::AccCmd cmd) {
  using ir::AluOp;
  b.check_operand("src", src);
  b.check_operand("dst", dst);
  check_rows(b, src, dst);
  if (ir::info(op0.op).kind != ir::AluKind::Arith || ir::info(op0.op).arity != 2)
    b.fail(sema::err_instruction_unsupported_op(ir::name(op0.op)));
  if (op1 != AluOp::add && op1 != AluOp::subtract && op1 != AluOp::multiply && op1 != AluOp::maximum &&
      op1 != AluOp::minimum)
    unsupported(b, "op1 " + std::string(ir::name(op1)) + " is not one of add, subtract, multiply, maximum, minimum");
  if (cmd != ir::AccCmd::reset_reduce && cmd != ir::AccCmd::reduce && cmd != ir::AccCmd::load_reduce)
    unsupported(b, "reduce_cmd " + std::string(ir::name(cmd)) + " is not one of reset_reduce, reduce, load_reduce");
  if ((cmd == ir::AccCmd::load_reduce) != imm1.has_value())
    unsupported(b, cmd == ir::AccCmd::load_reduce ? "reduce_cmd.load_reduce starts from imm1, which is None"
                                                  : "imm1 is read only with reduce_cmd.load_reduce; leave it None");
  std::vector<TensorVal> srcs = {src};
  double imm0 = 0.0, init = 0.0;
  const int k0 = immediate(b, "imm0", *op0.operand, src, srcs, imm0);
  if (imm1) immediate(b, "imm1", *imm1, src, srcs, init);
  TensorVal reg = b.engine_accumulator();
  reg.shape[0] = src.shape[0];
  TensorVal out = destination_rows(b, dst);
  ir::Instruction& in = emit_rows(b, ir::Opcode::TensorScalarCumulative, srcs, out, {reg}, {});
  // steps[0]: op0 with imm0; the scan folds with acc_op from load_reduce's start
  // (acc_init, or the last source when imm1 is a tile).
  in.steps = {{op0.op, k0, imm0, op0.reverse}};
  in.acc_cmd = cmd;
  in.acc_op = op1;
  in.acc_init = init;
  return out;
}

TensorVal topk(KernelBuilder& b, const TensorVal& val_dst, const TensorVal& idx_dst, const TensorVal& src, int64_t n) {
  b.check_versioned_form("nisa.topk");
  b.check_operand("src", src);
  b.check_operand("val_dst", val_dst);
  b.check_operand("idx_dst", idx_dst);
  const int64_t k = free_elements(val_dst), partitions = src.shape[0];
  check_rows(b, src, val_dst, k);
  check_rows(b, src, idx_dst, k);
  if (partitions % 16 != 0) unsupported(b, "src has " + std::to_string(partitions) + " partitions, not a multiple of 16");
  if (n < 8 || n >= 65536) unsupported(b, "n = " + std::to_string(n) + " is outside [8, 65536)");
  if (k < 1 || k >= 32768 || k > n)
    unsupported(b, "K = " + std::to_string(k) + " (val_dst's free size) is outside [1, min(n, 32767)]");
  if (free_elements(src) * 16 < n)
    unsupported(b, "src's " + std::to_string(free_elements(src)) + " columns of 16 partitions hold fewer than n = " +
                       std::to_string(n) + " values");
  TensorVal out = destination_rows(b, val_dst);
  emit_rows(b, ir::Opcode::TopK, {src}, out, {idx_dst}, {}).imms = {static_cast<double>(n)};
  return out;
}

TensorVal nonzero_with_count(KernelBuilder& b, const TensorVal& dst, const TensorVal& src, int64_t index_offset,
                             int64_t padding_val) {
  b.check_operand("src", src);
  b.check_operand("dst", dst);
  check_rows(b, src, dst, free_elements(src) + 1);
  for (auto [name, v] : {std::pair{"index_offset", index_offset}, std::pair{"padding_val", padding_val}})
    if (v < INT32_MIN || v > INT32_MAX) unsupported(b, std::string(name) + " = " + std::to_string(v) + " is not an int32");
  TensorVal out = destination_rows(b, dst);
  emit_rows(b, ir::Opcode::NonzeroWithCount, {src}, out, {}, {}).imms = {static_cast<double>(index_offset),
                                                                        static_cast<double>(padding_val)};
  return out;
}

}  // namespace nkic::codegen
