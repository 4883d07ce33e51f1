// The reductions (nisa.tensor_reduce and nl.sum & co. on the Vector Engine,
// nisa.tensor_partition_reduce on GpSimd, one fold builder for both), the Vector
// Engine's transpose (by 32x32 blocks) and bn_stats' size and mask rules.
#include <algorithm>

#include "codegen/Indexing.h"
#include "codegen/Ops.h"
#include "sema/ErrorCatalog.h"

namespace nkic::codegen {

using ir::AffineExpr;
using ir::Memory;

namespace {

sema::Diagnostic axis_error(const std::string& msg) { return sema::err_unsupported_reduce_axis(msg); }

}  // namespace

namespace {

// Seed 004's reduce op set: arithmetic add/multiply/max/min, the bitvec ops,
// logical and/or; `negate` only with the arithmetic ones.
void check_reduce_op(KernelBuilder& b, ir::AluOp op, const TensorVal& x, bool negate, bool partition) {
  static const ir::AluOp kReduceOps[] = {ir::AluOp::add,         ir::AluOp::multiply,    ir::AluOp::maximum,
                                         ir::AluOp::minimum,     ir::AluOp::bitwise_and, ir::AluOp::bitwise_or,
                                         ir::AluOp::bitwise_xor, ir::AluOp::logical_and, ir::AluOp::logical_or};
  if (std::find(std::begin(kReduceOps), std::end(kReduceOps), op) == std::end(kReduceOps))
    b.fail(sema::err_instruction_unsupported_op(ir::name(op)));
  if (negate && ir::info(op).kind != ir::AluKind::Arith) b.fail(sema::err_reduce_unsupported_negate(ir::name(op)));
  ir::DType t = b.tensor(x.tensor).dtype;
  if (ir::info(op).kind == ir::AluKind::Bitvec && ir::is_float(t))
    b.fail(sema::err_reduce_bitvec_op_invalid_dtype(ir::name(op), ir::name(t), partition));
}

// The fold of `x` into a new SBUF tile of `out_shape`: dst element at `dst_index`
// (over x's grid) gathers every point that maps to it.
TensorVal emit_reduce(KernelBuilder& b, const Dst& to, ir::AluOp op, const TensorVal& x, std::vector<int64_t> out_shape,
                      const std::vector<ir::AffineExpr>& dst_index, const OpArgs& args, bool negate,
                      std::vector<double> scale = {}, ir::Engine engine = ir::Engine::none) {
  TensorVal dst = to.resolve(b, std::string(ir::name(op)), std::move(out_shape), args.dtype.value_or(b.tensor(x.tensor).dtype),
                             Memory::SBUF);
  auto in = make_instruction(ir::Opcode::TensorReduce, x.shape);
  in->alu = op;
  in->negate = negate;
  in->imms = std::move(scale);
  in->engine = engine;
  in->dst = write_access(b, dst, dst_index);
  in->srcs.push_back(access_for(b, x, x.shape));
  in->predicate = predicate_for(b, args, x.shape.size());
  b.emit(std::move(in));
  return dst;
}

}  // namespace

TensorVal partition_reduce(KernelBuilder& b, const Dst& dst, ir::AluOp op, const TensorVal& x, const OpArgs& args,
                           std::string_view mean) {
  b.check_operand("data", x);
  check_no_psum(b, {{"data", &x}});  // a GpSimd instruction: GpSimd never touches PSUM
  // The current API's op set (NKI 0.7's page; 0.6's had no xor and named the mean `average`,
  // which nkic still takes).
  const bool average = !mean.empty();
  if (mean == "mean") b.check_versioned_form("nisa.tensor_partition_reduce(op=nl.mean)");
  if (b.current_api && op == ir::AluOp::bitwise_xor)
    b.check_versioned_form("nisa.tensor_partition_reduce(op=nl.bitwise_xor)");
  static const ir::AluOp kPartitionOps[] = {ir::AluOp::add, ir::AluOp::maximum, ir::AluOp::bitwise_or,
                                            ir::AluOp::bitwise_and, ir::AluOp::bitwise_xor};
  if (b.current_api && std::find(std::begin(kPartitionOps), std::end(kPartitionOps), op) == std::end(kPartitionOps))
    b.fail(sema::err_instruction_unsupported_op(ir::name(op), b.api(),
                                                "add, mean, max, bitwise_or, bitwise_and and bitwise_xor"));
  check_reduce_op(b, op, x, false, true);
  if (average && op != ir::AluOp::add) b.fail(sema::err_internal("an average folds with add"));
  std::vector<int64_t> out_shape = x.shape;
  out_shape[0] = 1;
  std::vector<ir::AffineExpr> dst_index = {ir::AffineExpr(0)};  // every partition folds into row 0
  for (size_t d = 1; d < x.shape.size(); ++d) dst_index.push_back(ir::AffineExpr::grid(static_cast<int>(d)));
  const std::vector<double> scale = average ? std::vector<double>{1.0 / static_cast<double>(x.shape[0])}
                                            : std::vector<double>{};
  // "A reduction across partitions ... using GpSimd Engine" (the stub).
  return emit_reduce(b, dst, op, x, std::move(out_shape), dst_index, args, false, scale,
                     ir::call_engine("tensor_partition_reduce"));
}

TensorVal reduce(KernelBuilder& b, const Dst& dst, ir::AluOp op, const TensorVal& x, std::vector<int64_t> axes,
                 bool keepdims, const OpArgs& args, bool negate) {
  b.check_operand("x", x);
  check_reduce_op(b, op, x, negate, false);
  int64_t rank = static_cast<int64_t>(x.shape.size());
  std::vector<bool> reduced(rank, false);
  for (int64_t a : axes) {
    int64_t ax = a < 0 ? a + rank : a;
    if (ax < 0 || ax >= rank) b.fail(axis_error("axis " + std::to_string(a) + " is out of range for a tile of rank " + std::to_string(rank)));
    if (ax == 0) b.fail(axis_error("reduction over the partition axis (axis 0) is not supported"));
    reduced[ax] = true;
  }
  // The current API's nisa.tensor_reduce (the reduce given a dst) folds the last contiguous free
  // dims, ending at the final one (its stub: (3,), (2, 3) or (1, 2, 3) of a rank-4 tile).
  if (dst.given()) {
    int64_t first = rank;
    while (first > 1 && reduced[first - 1]) --first;
    if (std::find(reduced.begin() + 1, reduced.begin() + first, true) != reduced.begin() + first) {
      std::string given;
      for (int64_t a : axes) given += (given.empty() ? "" : ", ") + std::to_string(a);
      b.fail(axis_error("axis (" + given + ") of a rank-" + std::to_string(rank) +
                        " tile: nisa.tensor_reduce reduces the last contiguous free dims, ending at axis " +
                        std::to_string(rank - 1)));
    }
  }
  std::vector<int64_t> out_shape;
  std::vector<ir::AffineExpr> dst_index;  // per output dim, over the input's grid
  for (int64_t d = 0; d < rank; ++d) {
    if (!reduced[d]) {
      out_shape.push_back(x.shape[d]);
      dst_index.push_back(ir::AffineExpr::grid(static_cast<int>(d)));
    } else if (keepdims) {
      out_shape.push_back(1);
      dst_index.push_back(ir::AffineExpr(0));
    }
  }
  if (out_shape.size() < 2) {  // on-chip tiles keep a free dim: [P] -> [P, 1]
    out_shape.push_back(1);
    dst_index.push_back(ir::AffineExpr(0));
  }
  return emit_reduce(b, dst, op, x, std::move(out_shape), dst_index, args, negate);
}

TensorVal vector_transpose(KernelBuilder& b, const Dst& to, const TensorVal& x, const OpArgs& args) {
  b.check_operand("data", x);
  const int64_t q = b.target().vector_transpose_max, p = x.shape[0], f = x.shape[1];
  const bool whole = p <= q && f <= q;
  if (!whole && (p % q != 0 || f % q != 0)) {
    // Blocks must tile the data: name a dim that breaks them (else the one too large).
    const int dim = p % q != 0 && p > q ? 0 : f % q != 0 && f > q ? 1 : p > q ? 0 : 1;
    b.fail(sema::err_size_of_dimension_exceed_arch_limit(dim, "data" + sema::shape_str(x.shape), b.api(), q));
  }
  const int64_t bp = std::min(p, q), bf = std::min(f, q);
  // A full transpose, one 32 x 32 block instruction at a time, block (r, c) landing at (c, r):
  // the compiler accepts a [64, 128] tile times the transpose of a [128, 64] one (public kernels
  // that built and ran on trn1/trn2), and the ISA reference swaps the partition and free dims.
  TensorVal dst = to.resolve(b, "transpose", {f, p}, args.dtype.value_or(b.tensor(x.tensor).dtype), Memory::SBUF);
  const ir::Predicate mask = predicate_for(b, args, 2);
  const ir::Access src = access_for(b, x, x.shape);
  for (int64_t r = 0; r < p; r += bp)
    for (int64_t c = 0; c < f; c += bf) {
      // Block (r, c) of the data: its point (i0, i1) lands at (c + i1, r + i0).
      const std::vector<AffineExpr> at = {AffineExpr::grid(0) + AffineExpr(r), AffineExpr::grid(1) + AffineExpr(c)};
      auto in = make_instruction(ir::Opcode::Copy, {bp, bf});
      in->dst = write_access(b, dst, {AffineExpr::grid(1) + AffineExpr(c), AffineExpr::grid(0) + AffineExpr(r)});
      ir::Access a = src;
      for (AffineExpr& e : a.index) e = e.substitute_grid(at);
      in->srcs.push_back(std::move(a));
      for (const ir::Constraint& k : mask) in->predicate.push_back({k.expr.substitute_grid(at), k.kind});
      b.emit(std::move(in));
    }
  return dst;
}

void check_bn_stats(KernelBuilder& b, const TensorVal& data, const OpArgs& args) {
  int64_t n = 1;
  for (size_t d = 1; d < data.shape.size(); ++d) n *= data.shape[d];
  if (n > b.target().bn_stats_fmax)
    b.fail(sema::err_size_of_dimension_exceed_arch_limit(1, "data" + sema::shape_str(data.shape), b.api(),
                                                         b.target().bn_stats_fmax));
  for (const ir::Constraint& c : predicate_for(b, args, data.shape.size())) {
    // The constraint's range over the data's grid and the loops / programs being traced.
    auto range = [&](ir::Var v) -> ir::AffineExpr::OptRange {
      if (v.kind == ir::VarKind::Grid) return std::pair<int64_t, int64_t>{0, data.shape.at(v.id) - 1};
      return b.var_range(v);
    };
    bool free = false, known = true;
    for (ir::Var v : c.expr.vars()) {
      free = free || (v.kind == ir::VarKind::Grid && v.id >= 1);
      known = known && range(v).has_value();
    }
    auto [lo, hi] = known ? c.expr.bounds([&](ir::Var v) { return *range(v); }) : std::pair<int64_t, int64_t>{0, 0};
    const bool always = known && (c.kind == ir::CmpKind::Ge ? lo >= 0 : lo == 0 && hi == 0);
    if (free && !always) return b.warn(sema::warn_bn_stats_mask_on_reduce_dims());
  }
}

}  // namespace nkic::codegen
