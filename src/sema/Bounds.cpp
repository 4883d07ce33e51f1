#include "sema/Bounds.h"

#include <algorithm>
#include <vector>

#include "sema/ErrorCatalog.h"

namespace nkic::sema {

namespace {

// Grid coordinate ranges after the mask's single-coordinate constraints that
// use no other variable (e.g. i1 <= 63).
std::vector<std::pair<int64_t, int64_t>> grid_ranges(const ir::Instruction& in) {
  std::vector<std::pair<int64_t, int64_t>> r;
  for (int64_t n : in.shape) r.push_back({0, n - 1});
  for (const ir::Constraint& c : in.predicate) {
    if (c.expr.terms().size() != 1 || c.expr.terms()[0].var.kind != ir::VarKind::Grid) continue;
    const ir::Term& t = c.expr.terms()[0];
    auto& [lo, hi] = r[t.var.id];
    int64_t k = c.expr.constant();
    if (c.kind == ir::CmpKind::Eq) {
      if (k % t.coeff == 0) lo = hi = -k / t.coeff;
    } else if (t.coeff > 0) {  // coeff*i + k >= 0  ->  i >= ceil(-k / coeff)
      int64_t b = -k >= 0 ? (-k + t.coeff - 1) / t.coeff : -((k) / t.coeff);
      lo = std::max(lo, b);
    } else {  // i <= floor(k / -coeff)
      int64_t c2 = -t.coeff;
      int64_t b = k >= 0 ? k / c2 : -((-k + c2 - 1) / c2);
      hi = std::min(hi, b);
    }
  }
  return r;
}

}  // namespace

void assert_access_in_bounds(const ir::Instruction& in, const ir::Access& a, const ir::TensorDecl& t,
                             const VarRange& range_of, const Raise& raise) {
  auto grid = grid_ranges(in);
  for (const auto& [lo, hi] : grid)
    if (lo > hi) return;  // the mask leaves nothing to execute
  for (size_t d = 0; d < a.index.size() && d < t.shape.size(); ++d) {
    const ir::AffineExpr& e = a.index[d];
    int64_t lo = e.constant(), hi = e.constant();
    bool known = true;
    for (const ir::Term& term : e.terms()) {
      auto r = term.var.kind == ir::VarKind::Grid ? std::optional(grid[term.var.id]) : range_of(term.var);
      if (!r) {
        known = false;
        break;
      }
      auto [vlo, vhi] = *r;
      lo += term.coeff * (term.coeff > 0 ? vlo : vhi);
      hi += term.coeff * (term.coeff > 0 ? vhi : vlo);
    }
    if (!known) continue;
    // A mask constraint on this very expression bounds it exactly: `k - e >= 0` or `e - k >= 0`.
    for (const ir::Constraint& c : in.predicate) {
      if (c.kind != ir::CmpKind::Ge) continue;
      ir::AffineExpr upper = c.expr + e, lower = c.expr - e;
      if (upper.is_constant()) hi = std::min(hi, upper.constant());
      if (lower.is_constant()) lo = std::max(lo, -lower.constant());
    }
    if (lo < 0 || hi >= t.shape[d])
      raise(err_tensor_access_out_of_bound(t.name, static_cast<int>(d), lo, hi, t.shape[d]));
  }
}

}  // namespace nkic::sema
