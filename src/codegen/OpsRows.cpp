// The row instructions of the Vector Engine (sim/RowExec): each walks every
// partition along its free elements, flattened as the engine walks them.
#include "codegen/Indexing.h"
#include "codegen/Ops.h"
#include "sema/Asserts.h"
#include "sema/ErrorCatalog.h"

namespace nkic::codegen {

using ir::Memory;

namespace {

// `t` as [P, F]: its free dims as one row per partition.
TensorVal rows_of(KernelBuilder& b, const TensorVal& t) {
  if (t.shape.size() == 2) return t;
  int64_t free = 1;
  for (size_t d = 1; d < t.shape.size(); ++d) free *= t.shape[d];
  return reshape_view(b, t, {t.shape.empty() ? 1 : t.shape[0], free});
}

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

TensorVal result(KernelBuilder& b, const char* hint, std::vector<int64_t> shape, const OpArgs& args, ir::DType dflt) {
  return alloc_tensor(b, b.tensor_name("", hint), std::move(shape), args.dtype.value_or(dflt), Memory::SBUF);
}

ir::DType dtype_of(const KernelBuilder& b, const TensorVal& t) { return b.tensor(t.tensor).dtype; }

int64_t free_elements(const TensorVal& t) {
  int64_t n = 1;
  for (size_t d = 1; d < t.shape.size(); ++d) n *= t.shape[d];
  return n;
}

// `other` walks the same rows as `data`: its partitions and elements per partition
// (`elements`, or data's) match.
void check_rows(KernelBuilder& b, const TensorVal& data, const TensorVal& other, int64_t elements = -1) {
  if (other.shape[0] != data.shape[0])
    b.fail(sema::err_num_partition_mismatch(describe(b, data), describe(b, other), b.api()));
  if (free_elements(other) != (elements < 0 ? free_elements(data) : elements))
    b.fail(sema::err_tile_shape_mismatch(describe(b, data), describe(b, other), b.api()));
}

void check_vals(KernelBuilder& b, const TensorVal& vals) {
  b.check_operand("vals", vals);
  sema::assert_elements_per_partition(free_elements(vals), 8, 8, "vals", b.api(), b.raiser());
}

}  // namespace

TensorVal tensor_tensor_scan(KernelBuilder& b, const TensorVal& data0, const TensorVal& data1, const Value& initial,
                             const PipelineStep& op0, const PipelineStep& op1, const OpArgs& args) {
  b.check_operand("data0", data0);
  b.check_operand("data1", data1);
  for (ir::AluOp op : {op0.op, op1.op})
    if (ir::info(op).kind == ir::AluKind::Bitvec || ir::info(op).arity != 2)
      b.fail(sema::err_instruction_unsupported_op(ir::name(op)));  // NKI_API §3.4: arithmetic operators only
  check_rows(b, data0, data1);
  std::vector<TensorVal> srcs = {data0, data1};
  TensorVal dst = result(b, "tensor_tensor_scan", data0.shape, args, dtype_of(b, data0));
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

TensorVal bn_stats(KernelBuilder& b, const TensorVal& data, const OpArgs& args) {
  check_bn_stats(b, data, args);
  TensorVal dst = result(b, "bn_stats", {data.shape[0], 6}, args, dtype_of(b, data));
  emit_rows(b, ir::Opcode::BnStats, {data}, dst, {}, args);
  return dst;
}

TensorVal bn_aggr(KernelBuilder& b, const TensorVal& data, const OpArgs& args) {
  b.check_operand("data", data);
  TensorVal dst = result(b, "bn_aggr", {data.shape[0], 2}, args, dtype_of(b, data));
  emit_rows(b, ir::Opcode::BnAggr, {data}, dst, {}, args);
  return dst;
}

TensorVal max8(KernelBuilder& b, const TensorVal& src, const OpArgs& args) {
  b.check_operand("src", src);
  TensorVal dst = result(b, "max8", {src.shape[0], 8}, args, dtype_of(b, src));
  emit_rows(b, ir::Opcode::Max8, {src}, dst, {}, args);
  return dst;
}

TensorVal find_index8(KernelBuilder& b, const TensorVal& data, const TensorVal& vals, const OpArgs& args) {
  b.check_operand("data", data);
  check_vals(b, vals);
  check_rows(b, data, vals, 8);
  TensorVal dst = result(b, "find_index8", {data.shape[0], 8}, args, ir::DType::uint32);
  emit_rows(b, ir::Opcode::FindIndex8, {data, vals}, dst, {}, args);
  return dst;
}

TensorVal match_replace8(KernelBuilder& b, const TensorVal& data, const TensorVal& vals, double imm,
                         const TensorVal* dst_idx, const OpArgs& args) {
  b.check_operand("data", data);
  check_vals(b, vals);
  check_rows(b, data, vals, 8);
  std::vector<TensorVal> extra;
  if (dst_idx) {
    b.check_operand("dst_idx", *dst_idx);
    check_rows(b, data, *dst_idx, 8);
    extra.push_back(*dst_idx);
  }
  TensorVal dst = result(b, "match_replace8", data.shape, args, dtype_of(b, data));
  emit_rows(b, ir::Opcode::MatchReplace8, {data, vals}, dst, extra, args).imms = {imm};
  return dst;
}

TensorVal sequence_bounds(KernelBuilder& b, const TensorVal& segment_ids, const OpArgs& args) {
  b.check_operand("segment_ids", segment_ids);
  TensorVal dst = result(b, "sequence_bounds", {segment_ids.shape[0], 2, free_elements(segment_ids)}, args,
                         dtype_of(b, segment_ids));
  emit_rows(b, ir::Opcode::SequenceBounds, {segment_ids}, dst, {}, args);
  return dst;
}

}  // namespace nkic::codegen
