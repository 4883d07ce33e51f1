#include "sema/Bounds.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <vector>

#include "ir/SmallVec.h"
#include "sema/ErrorCatalog.h"

namespace nkic::sema {

namespace {

// [lo, hi] as a trivially copyable pair (kept in a SmallVec).
struct Range {
  int64_t first = 0, second = 0;
  Range() = default;
  Range(int64_t lo, int64_t hi) : first(lo), second(hi) {}
  Range(std::pair<int64_t, int64_t> r) : first(r.first), second(r.second) {}  // NOLINT: VarRange's pairs convert
  operator std::pair<int64_t, int64_t>() const { return {first, second}; }     // NOLINT
};
// One range per access dim: checked for every access of every traced
// instruction, so kept in place rather than on the heap.
using Ranges = ir::SmallVec<Range, 4>;

int64_t clamp_to_int64(__int128 v) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max(), kMin = std::numeric_limits<int64_t>::min();
  return v > kMax ? kMax : v < kMin ? kMin : static_cast<int64_t>(v);
}

// Narrows `r` (the range of the constraint's only variable) to where `coeff*v + k >= 0` / `== 0` holds.
void narrow(Range& r, int64_t coeff, int64_t k, ir::CmpKind kind) {
  auto& [lo, hi] = r;
  if (kind == ir::CmpKind::Eq) {
    if (k % coeff == 0) lo = std::max(lo, -k / coeff), hi = std::min(hi, -k / coeff);
    else hi = lo - 1;  // no integer solution: nothing executes
  } else if (coeff > 0) {  // v >= ceil(-k / coeff)
    lo = std::max(lo, -k >= 0 ? (-k + coeff - 1) / coeff : -(k / coeff));
  } else {  // v <= floor(k / -coeff)
    int64_t c = -coeff;
    hi = std::min(hi, k >= 0 ? k / c : -((-k + c - 1) / c));
  }
}

// The [lo, hi] of every index of `a` over the points the predicate keeps, with
// the loop/pid variables in `fixed` set to values (the others span their ranges).
// Constraints on a single variable narrow it; the others are ignored, which
// only widens the ranges. Returns false when the predicate leaves nothing.
bool index_ranges(const ir::Instruction& in, const ir::Access& a, const VarRange& range_of,
                  const std::map<ir::Var, int64_t>& fixed, Ranges& out, bool& known) {
  // A few vars each (the grid coords, some loop variables): a flat list in place,
  // searched linearly; a returned Range* is used before the list grows again.
  struct Slot {
    ir::Var v;
    Range r;
  };
  ir::SmallVec<Slot, 8> ranges;
  for (size_t k = 0; k < in.shape.size(); ++k)
    ranges.push_back({{ir::VarKind::Grid, static_cast<int32_t>(k)}, {0, in.shape[k] - 1}});
  auto range = [&](ir::Var v) -> Range* {
    for (Slot& s : ranges)
      if (s.v == v) return &s.r;
    if (auto f = fixed.find(v); f != fixed.end()) {
      ranges.push_back(Slot{v, {f->second, f->second}});
      return &ranges.back().r;
    }
    auto r = range_of(v);
    if (!r) return nullptr;
    ranges.push_back(Slot{v, *r});
    return &ranges.back().r;
  };
  for (const ir::Constraint& c : in.predicate) {
    ir::AffineExpr e = fixed.empty() ? c.expr : c.expr.map_vars([&fixed](ir::Var v) {
      auto f = fixed.find(v);
      return f != fixed.end() ? ir::AffineExpr(f->second) : ir::AffineExpr::var(v);
    });
    if (e.is_constant()) {
      if (!c.holds(e.constant())) return false;
      continue;
    }
    if (e.terms().size() != 1 || !e.is_affine()) continue;
    if (Range* r = range(e.terms()[0].var)) narrow(*r, e.terms()[0].coeff, e.constant(), c.kind);
  }
  for (const Slot& s : ranges)
    if (s.r.first > s.r.second) return false;
  known = true;
  out.clear();
  for (const ir::AffineExpr& e : a.index) {
    bool ranged = true;
    if (e.is_affine()) {  // the terms hold each var once: no list of vars to build
      // In 128 bits, clamped to int64: a loop to near 2**63 times a tile stride must not wrap
      // around into the tensor.
      __int128 lo = e.constant(), hi = e.constant();
      for (const ir::Term& t : e.terms()) {
        const Range* r = range(t.var);
        if (!r) {
          ranged = false;
          break;
        }
        lo += static_cast<__int128>(t.coeff) * (t.coeff > 0 ? r->first : r->second);
        hi += static_cast<__int128>(t.coeff) * (t.coeff > 0 ? r->second : r->first);
      }
      if (ranged) {
        out.push_back({clamp_to_int64(lo), clamp_to_int64(hi)});
        continue;
      }
    } else {
      for (ir::Var v : e.vars()) ranged = ranged && range(v);
    }
    if (!ranged) {
      known = false;
      return true;
    }
    out.push_back(e.bounds([&](ir::Var v) { return *range(v); }));
  }
  return true;
}

// A mask constraint on the access expression itself bounds it exactly: `k - e >= 0` or `e - k >= 0`.
void apply_direct_bounds(const ir::Instruction& in, const ir::AffineExpr& e, Range& r) {
  for (const ir::Constraint& c : in.predicate) {
    if (c.kind != ir::CmpKind::Ge) continue;
    ir::AffineExpr upper = c.expr + e, lower = c.expr - e;
    if (upper.is_constant()) r.second = std::min(r.second, upper.constant());
    if (lower.is_constant()) r.first = std::max(r.first, -lower.constant());
  }
}

bool in_bounds(const Ranges& rs, const ir::TensorDecl& t, size_t& bad) {
  for (size_t d = 0; d < rs.size() && d < t.shape.size(); ++d)
    if (rs[d].first < 0 || rs[d].second >= t.shape[d]) {
      bad = d;
      return false;
    }
  return true;
}

// A row instruction walks each access over its own width; the mask selects
// positions of the data (srcs[0]) only.
ir::Instruction row_view(const ir::Instruction& in, const ir::Access& a) {
  std::vector<const ir::Access*> all = {&in.dst};
  for (const ir::Access& e : in.extra_dsts) all.push_back(&e);
  for (const ir::Access& e : in.srcs) all.push_back(&e);
  ir::Instruction view;
  const size_t e = std::find(all.begin(), all.end(), &a) - all.begin();
  view.shape = {in.shape.at(0), e < in.widths.size() ? in.widths[e] : in.shape.at(1)};
  if (!in.srcs.empty() && &a == &in.srcs[0]) view.predicate = in.predicate;
  return view;
}

// A shuffle walks dst and src each over its own partitions (widths[0], widths[1]).
ir::Instruction shuffle_view(const ir::Instruction& in, const ir::Access& a) {
  ir::Instruction view;
  view.shape = {in.widths.at(&a == &in.dst ? 0 : 1), in.shape.at(1)};
  return view;
}

// A static access (tile coordinates times constants plus a constant, no mask, no runtime
// index), the common case: its range per dim is at the corners of the iteration space,
// found without the general machinery. True when that range is in bounds; otherwise the
// general check decides (and words the diagnostic).
bool static_access_in_bounds(const ir::Instruction& in, const ir::Access& a, const ir::TensorDecl& t) {
  if (!in.predicate.empty() || !a.indirect.empty()) return false;
  for (int64_t n : in.shape)
    if (n <= 0) return false;
  for (size_t d = 0; d < a.index.size(); ++d) {
    const ir::AffineExpr& e = a.index[d];
    if (!e.is_affine()) return false;
    __int128 lo = e.constant(), hi = e.constant();
    for (const ir::Term& term : e.terms()) {
      if (term.var.kind != ir::VarKind::Grid || term.var.id < 0 || static_cast<size_t>(term.var.id) >= in.shape.size())
        return false;
      const __int128 last = static_cast<__int128>(term.coeff) * (in.shape[term.var.id] - 1);
      (term.coeff > 0 ? hi : lo) += last;
    }
    if (d < t.shape.size() && (clamp_to_int64(lo) < 0 || clamp_to_int64(hi) >= t.shape[d])) return false;
  }
  return true;
}

// The check of `a` over the points of `in` (the instruction, or the view of it the access walks).
void check_access(const ir::Instruction& in, const ir::Access& a, const ir::TensorDecl& t, const VarRange& range_of,
                  const Raise& raise) {
  if (static_access_in_bounds(in, a, t)) return;
  Ranges rs;
  bool known = false;
  if (!index_ranges(in, a, range_of, {}, rs, known) || !known) return;
  for (size_t d = 0; d < rs.size(); ++d) apply_direct_bounds(in, a.index[d], rs[d]);
  for (const ir::IndirectIndex& ind : a.indirect) rs.at(ind.dim) = {0, 0};  // read at run time
  size_t bad = 0;
  if (in_bounds(rs, t, bad)) return;
  // The box over-approximates when constraints tie loop variables to the
  // access: enumerate the loop/pid values (when few) and check each exactly.
  std::vector<ir::Var> vars;
  auto collect = [&](const ir::AffineExpr& e) {
    for (ir::Var v : e.vars())
      if (v.kind != ir::VarKind::Grid && std::find(vars.begin(), vars.end(), v) == vars.end()) vars.push_back(v);
  };
  for (const ir::AffineExpr& e : a.index) collect(e);
  for (const ir::Constraint& c : in.predicate) collect(c.expr);
  int64_t combos = 1;
  std::vector<Range> var_ranges;
  for (ir::Var v : vars) {
    auto r = range_of(v);
    if (!r) return;
    var_ranges.push_back(*r);
    combos *= r->second - r->first + 1;
    if (combos > 100000) break;
  }
  Range worst = rs[bad];
  if (!vars.empty() && combos <= 100000) {
    std::map<ir::Var, int64_t> fixed;
    for (size_t i = 0; i < vars.size(); ++i) fixed[vars[i]] = var_ranges[i].first;
    bool any_bad = false;
    while (true) {
      Ranges exact;
      bool k2 = false;
      if (index_ranges(in, a, range_of, fixed, exact, k2) && k2) {
        for (size_t d = 0; d < exact.size(); ++d) apply_direct_bounds(in, a.index[d], exact[d]);
        for (const ir::IndirectIndex& ind : a.indirect) exact.at(ind.dim) = {0, 0};
        size_t b2 = 0;
        if (!in_bounds(exact, t, b2)) {
          any_bad = true;
          bad = b2;
          worst = rs[b2];  // the message gives the range over the whole loop nest
          break;
        }
      }
      size_t i = 0;
      for (; i < vars.size(); ++i) {
        // Only loop values the loop actually takes matter; stepping by 1 over
        // [min, max] is a superset for strided loops, which is conservative.
        if (++fixed[vars[i]] <= var_ranges[i].second) break;
        fixed[vars[i]] = var_ranges[i].first;
      }
      if (i == vars.size()) break;
    }
    if (!any_bad) return;
  }
  raise(err_tensor_access_out_of_bound(t.name, static_cast<int>(bad), worst.first, worst.second, t.shape[bad]));
}

}  // namespace

void assert_access_in_bounds(const ir::Instruction& in, const ir::Access& a, const ir::TensorDecl& t,
                             const VarRange& range_of, const Raise& raise) {
  switch (ir::info(in.opcode).exec) {
    // A collective walks each operand's whole view (codegen/Collectives.cpp), checked when it was
    // made; the box of its flattening's floor divisions would over-approximate.
    case ir::Exec::Ranks: return;
    case ir::Exec::Row: return check_access(row_view(in, a), a, t, range_of, raise);
    case ir::Exec::Shuffle: return check_access(shuffle_view(in, a), a, t, range_of, raise);
    default: return check_access(in, a, t, range_of, raise);
  }
}

}  // namespace nkic::sema
