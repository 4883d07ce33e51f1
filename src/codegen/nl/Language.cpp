// The nl.* builders of one instruction that no nisa signature shares: nl.where,
// nl.device_print, the multi-program nl.all_reduce and nl.atomic_rmw, and
// nl.loop_reduce's accumulation across loop iterations.
#include <algorithm>

#include "codegen/Indexing.h"
#include "codegen/Ops.h"
#include "sema/ErrorCatalog.h"
#include "types/IndexAlgebra.h"
#include "types/MaskAlgebra.h"
#include "types/Promotion.h"

namespace nkic::codegen {

using ir::Memory;

TensorVal where(KernelBuilder& b, const TensorVal& cond, const Value& x, const Value& y, const OpArgs& args) {
  b.check_operand("condition", cond);
  std::vector<int64_t> shape = cond.shape;
  ir::DType dt = ir::DType::float32;
  bool first = true;
  for (const Value* v : {&x, &y}) {
    ir::DType d;
    if (auto* t = std::get_if<TensorVal>(v)) {
      b.check_operand(v == &x ? "x" : "y", *t);
      shape = types::broadcast_shapes(shape, t->shape);
      d = b.tensor(t->tensor).dtype;
    } else if (auto* o = std::get_if<types::Other>(v); o && o->numeric) {
      d = types::scalar_dtype(*o);
    } else {
      reject_operand(b, v == &x ? "x" : "y", *v);
    }
    dt = first ? d : types::promote(dt, d);
    first = false;
  }
  if (!std::holds_alternative<TensorVal>(x))
    b.fail(sema::err_unexpected_type_of_operand("x", "a number; nl.where needs a tensor for x"));
  TensorVal dst = alloc_tensor(b, b.tensor_name("", "where"), shape, args.dtype.value_or(dt), Memory::SBUF);
  auto in = make_instruction(ir::Opcode::Select, shape);
  in->dst = access_for(b, dst, shape);
  in->srcs.push_back(access_for(b, cond, shape));
  in->srcs.push_back(access_for(b, std::get<TensorVal>(x), shape));
  if (auto* t = std::get_if<TensorVal>(&y)) in->srcs.push_back(access_for(b, *t, shape));
  else in->imms = {std::get<types::Other>(y).value};
  in->predicate = predicate_for(b, args, shape.size());
  b.emit(std::move(in));
  return dst;
}

void device_print(KernelBuilder& b, const std::string& prefix, const TensorVal& x, const OpArgs& args) {
  b.check_live(x);
  auto in = make_instruction(ir::Opcode::Print, x.shape);
  in->srcs.push_back(access_for(b, x, x.shape));
  in->text = prefix;
  in->predicate = predicate_for(b, args, x.shape.size());
  b.emit(std::move(in));
}

TensorVal all_reduce(KernelBuilder& b, const TensorVal& x, ir::AluOp op, const std::vector<int64_t>& axes,
                     const OpArgs& args) {
  b.check_operand("x", x);
  if (b.in_dynamic_loop())
    b.fail(sema::err_dynamic_control_flow_not_supported(
        "the trip count of an enclosing loop, read from a tensor (nl.all_reduce needs every program to "
        "reach it the same number of times)"));
  const int64_t ndim = static_cast<int64_t>(b.kernel().grid.size());
  for (int64_t a : axes)
    if (a < 0 || a >= std::max<int64_t>(ndim, 1)) b.fail(sema::err_program_id_axis_out_of_bounds(a, ndim));
  // Every program of a group contributes: a mask that differs between programs
  // would leave the collective waiting for operands that never come.
  if (args.mask)
    for (const types::Conjunction& c : args.mask->dnf)
      for (const types::Atom& atom : c)
        if (atom.expr.uses(ir::VarKind::ProgramId))
          b.fail(sema::err_unsupported_expression_in_mask(
              "nl.all_reduce's mask cannot depend on nl.program_id: every program of the group contributes"));
  auto in = make_instruction(ir::Opcode::AllReduce, x.shape);
  TensorVal dst = alloc_tensor(b, b.tensor_name("", "all_reduce"), x.shape,
                               args.dtype.value_or(b.tensor(x.tensor).dtype), Memory::SBUF);
  in->dst = access_for(b, dst, x.shape);
  in->srcs.push_back(access_for(b, x, x.shape));
  in->alu = op;
  in->imms.assign(axes.begin(), axes.end());
  in->predicate = predicate_for(b, args, x.shape.size());
  b.emit(std::move(in));
  return dst;
}

void atomic_rmw(KernelBuilder& b, const TensorVal& dst, const Value& value, ir::AluOp op, const OpArgs& args) {
  b.check_operand("dst", dst);
  if (op != ir::AluOp::add) b.fail(sema::err_atomic_rmw_add_only(ir::name(op)));
  if (dst.indirect.empty()) b.fail(sema::err_atomic_rmw_dynamic_index(b.tensor(dst.tensor).name));
  const auto* v = std::get_if<TensorVal>(&value);
  if (!v) b.fail(sema::err_unexpected_type_of_operand("value", "a number; nl.atomic_rmw adds a tile"));
  b.check_operand("value", *v);
  auto in = make_instruction(ir::Opcode::Store, dst.shape);
  in->dst = access_for(b, dst, dst.shape);
  in->srcs.push_back(access_for(b, *v, dst.shape));
  in->accumulate = true;
  in->predicate = predicate_for(b, args, dst.shape.size());
  b.emit(std::move(in));
}

void loop_reduce(KernelBuilder& b, const TensorVal& dst, const TensorVal& x, ir::AluOp op,
                 const std::vector<types::IndexVal>& loop_vars, const OpArgs& args) {
  b.check_operand("dst", dst);
  b.check_operand("x", x);
  // Per loop, the iteration number (0 in its first iteration).
  std::vector<ir::AffineExpr> ivs;
  for (const types::IndexVal& lv : loop_vars) {
    const ir::Loop* loop = nullptr;
    if (lv.is_scalar() && lv.expr.is_affine() && lv.expr.terms().size() == 1 && lv.expr.constant() == 0 &&
        lv.expr.terms()[0].coeff == 1 && lv.expr.terms()[0].var.kind == ir::VarKind::Loop)
      loop = b.open_loop(lv.expr.terms()[0].var.id);
    if (!loop)
      b.fail(sema::err_unexpected_type_of_operand("loop_indices", "an expression; pass the loop variables themselves"));
    ivs.push_back(loop->stride < 0 ? ir::AffineExpr(loop->lb) - lv.expr : lv.expr - loop->lb);
  }
  TensorVal src = fit_value(b, dst.shape, x);
  auto first = make_instruction(ir::Opcode::Copy, dst.shape);
  first->dst = access_for(b, dst, dst.shape);
  first->srcs.push_back(access_for(b, src, dst.shape));
  first->predicate = predicate_for(b, args, dst.shape.size());
  for (const ir::AffineExpr& iv : ivs) first->predicate.push_back({iv, ir::CmpKind::Eq});
  b.emit(std::move(first));
  // Every later iteration folds: one instruction per loop k, for the iterations
  // where the loops before k are in their first iteration and loop k is not.
  for (size_t k = 0; k < ivs.size(); ++k) {
    auto rest = make_instruction(op == ir::AluOp::add ? ir::Opcode::Copy : ir::Opcode::TensorTensor, dst.shape);
    rest->dst = access_for(b, dst, dst.shape);
    if (op == ir::AluOp::add) {
      rest->accumulate = true;
    } else {
      rest->alu = op;
      rest->srcs.push_back(access_for(b, dst, dst.shape));
    }
    rest->srcs.push_back(access_for(b, src, dst.shape));
    rest->predicate = predicate_for(b, args, dst.shape.size());
    for (size_t j = 0; j < k; ++j) rest->predicate.push_back({ivs[j], ir::CmpKind::Eq});
    rest->predicate.push_back({ivs[k] - 1, ir::CmpKind::Ge});
    b.emit(std::move(rest));
  }
}

}  // namespace nkic::codegen
