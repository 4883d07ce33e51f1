// The GpSimd Engine's instructions (the `pool` rows of the instruction and call tables):
// gathers by runtime indices within SBUF (nl.gather_flattened / nisa.nc_n_gather per
// partition along its flattened free dims, nisa.local_gather per GpSimd core, with the core's
// indices shared by its 16 partitions), nisa.iota and nisa.affine_select.
#include <algorithm>
#include <optional>

#include "codegen/Indexing.h"
#include "codegen/Ops.h"
#include "sema/ErrorCatalog.h"
#include "types/IndexAlgebra.h"
#include "types/MaskAlgebra.h"

namespace nkic::codegen {

using ir::AffineExpr;
using ir::Memory;

namespace {

// `t` as [P, F]: its free dims as one flat row per partition (a whole-tensor view).
TensorVal flat_rows(KernelBuilder& b, const TensorVal& t) {
  int64_t free = 1;
  for (size_t d = 1; d < t.shape.size(); ++d) free *= t.shape[d];
  return operand_view(b, t, {t.shape[0], free});
}

}  // namespace

TensorVal gather_flattened(KernelBuilder& b, const Dst& to, const TensorVal& data, const TensorVal& indices,
                           const OpArgs& args) {
  b.check_operand("data", data);
  b.check_operand("indices", indices);
  if (data.shape[0] != indices.shape[0])
    b.fail(sema::err_num_partition_mismatch(describe(b, data), describe(b, indices), b.api()));
  if (!ir::is_integer(b.tensor(indices.tensor).dtype))
    b.fail(sema::err_supported_operand_dtype("'indices' of 'gather_flattened' must be an integer tile"));
  // Per partition, the free dims are one flat row, indexed by the indices tile.
  TensorVal src = flat_rows(b, data);
  src.shape = indices.shape;
  src.index = {ir::AffineExpr::grid(0), ir::AffineExpr(0)};
  src.indirect.push_back({1, std::make_shared<const TensorVal>(indices)});
  TensorVal dst = to.resolve(b, "gather", indices.shape, args.dtype.value_or(b.tensor(data.tensor).dtype), Memory::SBUF);
  // nisa.nc_n_gather (the current API's, given its dst) runs on GpSimd, which reads no PSUM.
  const ir::Engine engine = to.given() ? ir::call_engine("nc_n_gather") : ir::Engine::none;
  if (engine == ir::Engine::pool) check_no_psum(b, {{"data", &data}, {"indices", &indices}});
  auto in = make_instruction(ir::Opcode::Copy, indices.shape);
  in->engine = engine;
  in->dst = access_for(b, dst, indices.shape);
  in->srcs.push_back(access_for(b, src, indices.shape));
  in->predicate = predicate_for(b, args, indices.shape.size());
  b.emit(std::move(in));
  return dst;
}

TensorVal local_gather(KernelBuilder& b, const Dst& to, const TensorVal& src_buffer, const TensorVal& index, int64_t num_elem_per_idx,
                       std::optional<int64_t> num_valid_indices, const OpArgs& args) {
  b.check_operand("src_buffer", src_buffer);
  b.check_operand("index", index);
  const int64_t core = b.target().gpsimd_partitions_per_core, p = src_buffer.shape[0];
  if (index.shape[0] != p) b.fail(sema::err_num_partition_mismatch(describe(b, src_buffer), describe(b, index), b.api()));
  if (p % core != 0)
    b.fail(sema::err_unexpected_type_of_operand(
        "src_buffer", describe(b, src_buffer) + ": its partitions must be a multiple of " + std::to_string(core) +
                          " (each GpSimd core serves " + std::to_string(core) + " partitions)"));
  static const int64_t kElems[] = {1, 2, 4, 8, 16, 32};
  if (std::find(std::begin(kElems), std::end(kElems), num_elem_per_idx) == std::end(kElems))
    b.fail(sema::err_unexpected_type_of_operand("num_elem_per_idx",
                                                std::to_string(num_elem_per_idx) + "; it is one of 1, 2, 4, 8, 16, 32"));
  // Each core flattens its partitions' indices partition-first: index v is
  // index[core + v % 16, v / 16], and gathers num_elem_per_idx elements from it.
  const int64_t per_core = core * index.shape[1];
  const int64_t valid = num_valid_indices.value_or(per_core);
  if (valid < 1 || valid > std::min(per_core, b.target().local_gather_max_indices))
    b.fail(sema::err_unexpected_type_of_operand(
        "num_valid_indices", std::to_string(valid) + "; a core has " + std::to_string(per_core) +
                                 " indices and gathers at most " + std::to_string(b.target().local_gather_max_indices)));
  const int64_t rows = (valid + core - 1) / core;
  TensorVal flat = flat_rows(b, src_buffer);
  TensorVal dst = to.resolve(b, "local_gather", {p, rows, core, num_elem_per_idx}, b.tensor(src_buffer.tensor).dtype,
                             Memory::SBUF);
  if (b.current_api && b.nki_version.at_least(0, 8) && !num_valid_indices) {  // the 0.8 announcement
    const std::vector<int64_t>& given = to.given() ? to.view().shape : dst.shape;
    int64_t free = 1;
    for (size_t d = 1; d < given.size(); ++d) free *= given[d];
    b.warn(sema::warn_local_gather_num_valid_indices(free / num_elem_per_idx));
  }
  // Grid [cores, partition in core, k, j, element]: v = k * 16 + j.
  const std::vector<int64_t> space = {p / core, core, rows, core, num_elem_per_idx};
  const AffineExpr c = AffineExpr::grid(0), r = AffineExpr::grid(1), k = AffineExpr::grid(2), j = AffineExpr::grid(3),
                   e = AffineExpr::grid(4);
  auto in = make_instruction(ir::Opcode::Copy, space);
  in->dst = write_access(b, dst, {c * core + r, k, j, e});
  in->engine = ir::call_engine("local_gather");
  ir::Access src = access_for(b, flat, flat.shape);
  for (AffineExpr& x : src.index) x = x.substitute_grid({c * core + r, e});
  ir::Access idx = access_for(b, index, index.shape);
  for (AffineExpr& x : idx.index) x = x.substitute_grid({c * core + j, k});
  src.indirect.push_back({1, std::move(idx)});
  in->srcs.push_back(std::move(src));
  in->predicate = predicate_for(b, args, space.size());
  in->predicate.push_back({AffineExpr(valid - 1) - k * core - j, ir::CmpKind::Ge});  // v < num_valid_indices
  b.emit(std::move(in));
  return dst;
}

TensorVal iota(KernelBuilder& b, const Dst& to, const types::IndexVal& expr, ir::DType dtype, const OpArgs& args) {
  std::vector<int64_t> shape = expr.shape;
  while (shape.size() < 2) shape.push_back(1);
  TensorVal dst = to.resolve(b, "iota", shape, dtype, Memory::SBUF);
  auto in = make_instruction(ir::Opcode::Iota, shape);
  in->dst = access_for(b, dst, shape);
  in->value = types::align_grid(expr.expr.drop_broadcast_grid(expr.shape), expr.shape.size(), expr.shape.size());
  in->predicate = predicate_for(b, args, shape.size());
  b.emit(std::move(in));
  return dst;
}

namespace {

types::IndexVal affine_pattern(KernelBuilder& b, const TensorVal& dst, const AffinePattern& pattern,
                               const Value& offset, int64_t channel_multiplier) {
  ir::AffineExpr start;
  if (const auto* i = std::get_if<types::IndexVal>(&offset); i && i->is_scalar()) {
    if (!i->non_affine.empty()) b.fail(sema::err_non_affine_index_expression(i->non_affine));
    start = i->expr;
  } else if (const auto* o = std::get_if<types::Other>(&offset); o && o->is_int) {
    start = ir::AffineExpr(static_cast<int64_t>(o->value));
  } else {
    reject_operand(b, "offset", offset);
  }
  types::IndexVal v;
  v.shape = {dst.shape.at(0)};
  v.expr = ir::AffineExpr::grid(0) * channel_multiplier + start;
  for (const auto& [step, count] : pattern) {
    v.expr = v.expr + ir::AffineExpr::grid(static_cast<int>(v.shape.size())) * step;
    v.shape.push_back(count);
  }
  return v;
}

}  // namespace

TensorVal iota_pattern(KernelBuilder& b, const TensorVal& dst, const AffinePattern& pattern, const Value& offset,
                       int64_t channel_multiplier) {
  return iota(b, Dst::into(dst), affine_pattern(b, dst, pattern, offset, channel_multiplier), b.tensor(dst.tensor).dtype,
              {});
}

TensorVal affine_select_pattern(KernelBuilder& b, const TensorVal& dst, const AffinePattern& pattern,
                                int64_t channel_multiplier, const TensorVal& on_true, double on_false, ir::AluOp cmp,
                                const Value& offset) {
  using types::CmpOp;
  CmpOp op;
  switch (cmp) {
    case ir::AluOp::equal: op = CmpOp::eq; break;
    case ir::AluOp::not_equal: op = CmpOp::ne; break;
    case ir::AluOp::greater: op = CmpOp::gt; break;
    case ir::AluOp::greater_equal: op = CmpOp::ge; break;
    case ir::AluOp::less: op = CmpOp::lt; break;
    case ir::AluOp::less_equal: op = CmpOp::le; break;
    default: b.fail(sema::err_instruction_unsupported_op(ir::name(cmp)));
  }
  const types::MaskVal pred = types::compare_index(op, affine_pattern(b, dst, pattern, offset, channel_multiplier),
                                                   types::index_constant(0));
  return affine_select(b, Dst::into(dst), pred, on_true, on_false, {});
}

TensorVal affine_select(KernelBuilder& b, const Dst& to, const MaskVal& pred, const TensorVal& on_true, double on_false,
                        const OpArgs& args) {
  b.check_operand("on_true_tile", on_true);
  TensorVal dst = to.resolve(b, "affine_select", on_true.shape, args.dtype.value_or(b.tensor(on_true.tensor).dtype),
                             Memory::SBUF);
  auto in = make_instruction(ir::Opcode::AffineSelect, on_true.shape);
  in->dst = access_for(b, dst, on_true.shape);
  in->srcs.push_back(access_for(b, on_true, on_true.shape));
  in->cond = types::lower_mask(pred, on_true.shape.size());
  in->imms = {on_false};
  in->predicate = predicate_for(b, args, on_true.shape.size());
  b.emit(std::move(in));
  return dst;
}

}  // namespace nkic::codegen
