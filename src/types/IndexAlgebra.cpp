#include "types/IndexAlgebra.h"

#include <cmath>

#include "sema/ErrorCatalog.h"

namespace nkic::types {

std::vector<int64_t> broadcast_shapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  size_t r = std::max(a.size(), b.size());
  std::vector<int64_t> out(r, 1);
  for (size_t i = 0; i < r; ++i) {
    int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da != db && da != 1 && db != 1)
      sema::fail(sema::err_param_shape_incompatible_with_numpy(sema::shape_str(a), sema::shape_str(b)));
    out[i] = da == 1 ? db : da;
  }
  return out;
}

ir::AffineExpr align_grid(const ir::AffineExpr& e, size_t from_rank, size_t rank) {
  return e.shift_grid(static_cast<int>(rank - from_rank));
}

IndexVal index_constant(int64_t v) {
  IndexVal r;
  r.expr = ir::AffineExpr(v);
  return r;
}

IndexVal index_from_other(const Other& o, const char* op) {
  if (!o.numeric || !o.is_int)
    sema::fail(sema::err_tile_index_add_non_integer_scalar(
        o.numeric ? "a non-integer number" : "'" + o.type_name + "'", op));
  return index_constant(static_cast<int64_t>(o.value));
}

namespace {
// A value arithmetic cannot keep affine: it carries the reason instead.
IndexVal non_affine(IndexVal r, const std::string& why) {
  r.expr = ir::AffineExpr(0);
  r.non_affine = why;
  return r;
}
}  // namespace

IndexVal index_binop(IndexOp op, const IndexVal& a, const IndexVal& b) {
  IndexVal r;
  r.shape = broadcast_shapes(a.shape, b.shape);
  r.from_arange = a.from_arange || b.from_arange;
  if (!a.non_affine.empty()) return non_affine(r, a.non_affine);
  if (!b.non_affine.empty()) return non_affine(r, b.non_affine);
  ir::AffineExpr ea = align_grid(a.expr, a.shape.size(), r.shape.size());
  ir::AffineExpr eb = align_grid(b.expr, b.shape.size(), r.shape.size());
  switch (op) {
    case IndexOp::add: r.expr = ea + eb; break;
    case IndexOp::sub: r.expr = ea - eb; break;
    case IndexOp::mul:
      if (ea.is_constant()) r.expr = eb * ea.constant();
      else if (eb.is_constant()) r.expr = ea * eb.constant();
      else return non_affine(r, "the product of two index values (" + ea.str() + ") * (" + eb.str() + ")");
      break;
    case IndexOp::floordiv:
    case IndexOp::mod: {
      // Quasi-affine: floor division and modulo by a positive constant only.
      if (!eb.is_constant() || eb.constant() <= 0)
        return non_affine(r, "(" + ea.str() + (op == IndexOp::floordiv ? ") // (" : ") % (") + eb.str() +
                                 "), a division by a value that is not a positive integer constant");
      int64_t c = eb.constant();
      r.expr = op == IndexOp::floordiv ? ir::AffineExpr::floordiv(ea, c) : ir::AffineExpr::mod(ea, c);
      // Grid coordinates range over the index's shape: (i_p + 128*k) // 128 is k.
      r.expr = r.expr.fold_constant_divs([&r](ir::Var v) -> ir::AffineExpr::OptRange {
        if (v.kind != ir::VarKind::Grid || v.id >= static_cast<int>(r.shape.size())) return std::nullopt;
        return std::pair<int64_t, int64_t>{0, r.shape[v.id] - 1};
      });
      break;
    }
  }
  return r;
}

IndexVal arange(int64_t start, int64_t stop) {
  IndexVal r;
  r.shape = {std::max<int64_t>(stop - start, 0)};
  // A one-element arange is its start everywhere it is broadcast to (numpy's
  // rule), not a coordinate of the grid it joins.
  r.expr = r.shape[0] == 1 ? ir::AffineExpr(start) : ir::AffineExpr::grid(0) + start;
  r.from_arange = true;
  return r;
}

IndexVal reshape_index(const IndexVal& v, const std::vector<int>& key) {
  IndexVal r;
  r.from_arange = v.from_arange;
  std::vector<ir::AffineExpr> subst(v.shape.size());
  for (size_t pos = 0; pos < key.size(); ++pos) {
    if (key[pos] < 0) {
      r.shape.push_back(1);
    } else {
      r.shape.push_back(v.shape[key[pos]]);
      subst[key[pos]] = ir::AffineExpr::grid(static_cast<int>(pos));
    }
  }
  r.expr = v.expr.substitute_grid(subst);
  return r;
}

}  // namespace nkic::types
