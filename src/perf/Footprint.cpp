#include "perf/Footprint.h"

#include <algorithm>
#include <cstdlib>

#include "ir/IRVisitor.h"

namespace nkic::perf {

int64_t Env::value(ir::Var v) const {
  const std::vector<int64_t>& vals = v.kind == ir::VarKind::Loop ? loop : pid;
  return v.id >= 0 && static_cast<size_t>(v.id) < vals.size() ? vals[v.id] : 0;
}

bool Extents::empty() const {
  for (const auto& [lo, hi] : range)
    if (lo > hi) return true;
  return false;
}

int64_t Extents::points() const {
  if (empty()) return 0;
  int64_t n = 1;
  for (size_t k = 0; k < range.size(); ++k) n *= size(k);
  return n;
}

namespace {

// Narrows [lo, hi] of v to where coeff*v + k >= 0 (Ge) or == 0 (Eq).
void narrow(std::pair<int64_t, int64_t>& r, int64_t coeff, int64_t k, ir::CmpKind kind) {
  auto& [lo, hi] = r;
  if (kind == ir::CmpKind::Eq) {
    if (k % coeff == 0) lo = std::max(lo, -k / coeff), hi = std::min(hi, -k / coeff);
    else hi = lo - 1;
  } else if (coeff > 0) {
    lo = std::max(lo, -ir::floor_div(k, coeff));
  } else {
    hi = std::min(hi, ir::floor_div(k, -coeff));
  }
}

// Binds the Loop and ProgramId vars of `e` to their values.
ir::AffineExpr bind_outer(const ir::AffineExpr& e, const Env& env) {
  if (!e.uses(ir::VarKind::Loop) && !e.uses(ir::VarKind::ProgramId)) return e;
  return e.map_vars([&env](ir::Var v) {
    return v.kind == ir::VarKind::Grid ? ir::AffineExpr::var(v) : ir::AffineExpr(env.value(v));
  });
}

}  // namespace

Extents active_extents(const ir::Instruction& in, const Env& env) {
  Extents ext;
  for (int64_t n : in.shape) ext.range.emplace_back(0, n - 1);
  for (const ir::Constraint& c : in.predicate) {
    ir::AffineExpr e = bind_outer(c.expr, env);
    if (e.is_constant()) {
      if (!c.holds(e.constant())) ext.range.assign(ext.range.size(), {0, -1});
      continue;
    }
    if (e.terms().size() != 1 || !e.is_affine()) continue;
    const ir::Term& t = e.terms()[0];
    if (t.var.kind == ir::VarKind::Grid && static_cast<size_t>(t.var.id) < ext.range.size())
      narrow(ext.range[t.var.id], t.coeff, e.constant(), c.kind);
  }
  return ext;
}

namespace {

// Narrows the trips [lo, hi] of `l` to those where `c` can hold for some point of `in`.
// Axes are numbered in creation order: those below l's are the loops around it (bound
// by `env`), those above it loops inside it.
void narrow_trips(const ir::Constraint& c, const ir::Instruction& in, const ir::Loop& l, const Env& env, int64_t& lo,
                  int64_t& hi) {
  const ir::Var t{ir::VarKind::Loop, l.axis};
  if (c.kind != ir::CmpKind::Ge || !c.expr.is_affine() || c.expr.coeff(t) == 0) return;
  const ir::AffineExpr e = c.expr.map_vars([&](ir::Var v) {
    const bool bound = v.kind == ir::VarKind::ProgramId || (v.kind == ir::VarKind::Loop && v.id < l.axis);
    return bound ? ir::AffineExpr(env.value(v)) : ir::AffineExpr::var(v);
  });
  __int128 best = e.constant();  // e = a * t + (the most the rest reaches)
  int grid_terms = 0;
  for (const ir::Term& term : e.terms()) {
    if (term.var == t) continue;
    if (term.var.kind != ir::VarKind::Grid || static_cast<size_t>(term.var.id) >= in.shape.size() || ++grid_terms > 1)
      return;  // an inner loop's variable or a second coordinate: the schedule does not narrow by it either
    best += std::max<__int128>(0, static_cast<__int128>(term.coeff) * (in.shape[term.var.id] - 1));
  }
  // With t = lb + i * stride the constraint reads A * i + B >= 0, over trips i >= 0 (A != 0).
  const __int128 a = e.coeff(t), A = a * l.stride, B = a * l.lb + best;
  if (A > 0 && B < 0) lo = static_cast<int64_t>(std::min<__int128>(std::max<__int128>(lo, (-B + A - 1) / A), hi + 1));
  if (A < 0) hi = B < 0 ? -1 : static_cast<int64_t>(std::min<__int128>(hi, B / -A));
}

}  // namespace

std::pair<int64_t, int64_t> active_trips(const ir::Loop& l, int64_t trips, const Env& env) {
  int64_t first = trips, last = -1;
  std::vector<const ir::Block*> todo{&l.body};
  while (!todo.empty() && (first > 0 || last < trips - 1)) {
    const ir::Block& b = *todo.back();
    todo.pop_back();
    for (const ir::StmtPtr& s : b) {
      if (s->kind == ir::StmtKind::Loop) {
        todo.push_back(&static_cast<const ir::Loop&>(*s).body);
        continue;
      }
      const auto& in = static_cast<const ir::Instruction&>(*s);
      int64_t lo = 0, hi = trips - 1;
      for (const ir::Constraint& c : in.predicate) narrow_trips(c, in, l, env, lo, hi);
      if (lo <= hi) first = std::min(first, lo), last = std::max(last, hi);
    }
  }
  return {first, last};
}

bool Box::overlaps(const Box& o) const {
  if (whole || o.whole) return true;
  for (size_t d = 0; d < dim.size() && d < o.dim.size(); ++d)
    if (dim[d].second < o.dim[d].first || o.dim[d].second < dim[d].first) return false;
  return true;
}

bool Box::contains(const Box& o) const {
  if (whole) return true;
  if (o.whole || dim.size() != o.dim.size()) return false;
  for (size_t d = 0; d < dim.size(); ++d)
    if (o.dim[d].first < dim[d].first || o.dim[d].second > dim[d].second) return false;
  return true;
}

Box access_box(const ir::Access& a, const ir::TensorDecl& t, const Extents& ext, const Env& env) {
  Box b;
  if (t.alias_of >= 0 || a.index.size() != t.shape.size()) {
    b.whole = true;
    return b;
  }
  b.dim.resize(t.shape.size());
  for (size_t d = 0; d < a.index.size(); ++d) {
    auto r = a.index[d].bounds([&](ir::Var v) -> std::pair<int64_t, int64_t> {
      if (v.kind == ir::VarKind::Grid)
        return static_cast<size_t>(v.id) < ext.range.size() ? ext.range[v.id] : std::pair<int64_t, int64_t>{0, 0};
      int64_t x = env.value(v);
      return {x, x};
    });
    b.dim[d] = {std::max<int64_t>(r.first, 0), std::min<int64_t>(r.second, t.shape[d] - 1)};
  }
  for (const ir::IndirectIndex& ind : a.indirect)
    if (ind.dim >= 0 && static_cast<size_t>(ind.dim) < b.dim.size()) b.dim[ind.dim] = {0, t.shape[ind.dim] - 1};
  return b;
}

std::vector<bool> kept_loop_axes(const ir::Kernel& k) {
  struct Kept : ir::IRVisitor {
    std::vector<bool> axes;
    void visit(const ir::Loop& l) override {
      if (l.type == ir::AxisType::Sequential && l.axis >= 0) {
        if (static_cast<size_t>(l.axis) >= axes.size()) axes.resize(l.axis + 1, false);
        axes[l.axis] = true;
      }
      visit_block(l.body);
    }
  } kept;
  // The current nki API unrolls every loop at compile time: its counters are ints.
  if (!k.current_api) kept.visit_block(k.body);
  return kept.axes;
}

bool widen_run_time_blocks(Box& b, const ir::Access& a, const ir::TensorDecl& t, const std::vector<bool>& kept) {
  if (b.whole || ir::is_hbm(t.memory)) return false;
  auto kept_var = [&kept](ir::Var v) {
    return v.kind == ir::VarKind::Loop && v.id >= 0 && static_cast<size_t>(v.id) < kept.size() && kept[v.id];
  };
  bool widened = false;
  for (size_t d = 0; d < b.dim.size(); ++d)
    for (const ir::DivTerm& div : a.index[d].divs()) {
      const std::vector<ir::Var> vars = div.num.vars();
      if (std::none_of(vars.begin(), vars.end(), kept_var)) continue;
      b.dim[d] = {0, t.shape[d] - 1};
      widened = true;
    }
  return widened;
}

namespace {

// How one step of variable v (a Grid coordinate, or a loop's) moves `a` through t's memory: by `elements`
// (on chip: within a partition's free layout), across `partitions`, or not by
// one fixed stride (floor divisions, indirect rows).
struct Step {
  int64_t elements = 0;
  bool partitions = false;
  bool fixed = true;
  bool next_buffer = false;  // a spanned loop's new tile: continues whatever run precedes it
};

Step step_of(const ir::Access& a, const ir::TensorDecl& t, ir::Var v) {
  Step s;
  if (a.index.size() != t.shape.size()) return {0, false, false};
  const bool on_chip = !ir::is_hbm(t.memory);
  auto divides_v = [&](const ir::AffineExpr& e) {
    for (const ir::DivTerm& div : e.divs())
      if (div.num.coeff(v) != 0) return true;
    return false;
  };
  // The offset in the free layout as one sum: a reshape alias (an .ap() view) indexes by
  // floor division and modulo, which cancel there.
  ir::AffineExpr flat(0);
  int64_t dim_stride = 1;
  for (int d = static_cast<int>(t.shape.size()) - 1; d >= 0; --d) {
    const ir::AffineExpr& e = a.index[d];
    const bool moves = e.coeff(v) != 0 || divides_v(e);
    const bool indirect =
        std::any_of(a.indirect.begin(), a.indirect.end(), [d](const ir::IndirectIndex& i) { return i.dim == d; });
    if (moves && indirect) s.fixed = false;
    if (on_chip && d == t.partition_dim) {
      s.partitions = s.partitions || moves;
      if (divides_v(e)) s.fixed = false;
      continue;  // partitions are apart: the free layout skips this dim
    }
    flat = flat + e * dim_stride;
    dim_stride *= t.shape[d];
  }
  if (divides_v(flat)) s.fixed = false;
  s.elements = flat.coeff(v);
  return s;
}

}  // namespace

DmaShape dma_shape(const std::vector<const ir::Access*>& accesses, const ir::Kernel& k, const Extents& ext,
                   const std::vector<Span>& spans) {
  // Every dimension of the transfer (the Grid coordinates, then the spanned loops) with how
  // one step of it moves each access. A tile declared in a spanned loop (a new one every
  // iteration) that the index does not walk is taken as the next buffer: one step moves it
  // on by everything the dimensions inside that loop's iteration cover.
  struct Dim {
    int64_t n;
    std::vector<Step> steps;
    bool grid;
  };
  std::vector<Dim> dims;
  for (int g = static_cast<int>(ext.range.size()) - 1; g >= 0; --g) {
    Dim d{ext.size(g), {}, true};
    for (const ir::Access* a : accesses) d.steps.push_back(step_of(*a, k.tensor(a->tensor), {ir::VarKind::Grid, g}));
    dims.push_back(std::move(d));
  }
  std::vector<int> inner_axes;
  for (const Span& sp : spans) {
    inner_axes.push_back(sp.axis);
    Dim d{sp.trips, {}, false};
    for (const ir::Access* a : accesses) {
      const ir::TensorDecl& td = k.tensor(a->tensor);
      Step s = step_of(*a, td, {ir::VarKind::Loop, sp.axis});
      s.elements *= sp.stride;
      const bool fresh = std::find(inner_axes.begin(), inner_axes.end(), td.alloc_axis) != inner_axes.end();
      s.next_buffer = s.fixed && !s.partitions && s.elements == 0 && !ir::is_hbm(td.memory) && fresh;
      d.steps.push_back(s);
    }
    dims.push_back(std::move(d));
  }
  // A transpose: the innermost coordinate does not continue a run, is contiguous on one side
  // and walks the partitions of the other.
  DmaShape shape;
  for (const Dim& d : dims) {
    if (!d.grid || d.n <= 1) continue;
    bool contiguous = true, walks_partitions = false, unit_elsewhere = false;
    for (const Step& s : d.steps) {
      const bool unit = s.fixed && !s.partitions && s.elements == 1;
      contiguous = contiguous && unit;
      walks_partitions = walks_partitions || s.partitions;
      unit_elsewhere = unit_elsewhere || unit;
    }
    shape.transposes = !contiguous && walks_partitions && unit_elsewhere;
    break;
  }
  if (shape.transposes) return shape;
  // Otherwise a run grows by any dimension that continues it in every access at once, in
  // whatever order the dimensions come (descriptors follow memory, not the loop order).
  std::vector<int64_t> expected(accesses.size(), 1);
  std::vector<bool> used(dims.size(), false);
  for (bool grew = true; grew;) {
    grew = false;
    for (size_t j = 0; j < dims.size() && !grew; ++j) {
      if (used[j] || dims[j].n <= 1) continue;
      bool contiguous = true;
      for (size_t i = 0; i < accesses.size(); ++i) {
        const Step& s = dims[j].steps[i];
        contiguous = contiguous && s.fixed && !s.partitions && (s.elements == expected[i] || s.next_buffer);
      }
      if (!contiguous) continue;
      used[j] = grew = true;
      shape.run *= dims[j].n;
      for (int64_t& e : expected) e *= dims[j].n;
    }
  }
  return shape;
}

int64_t minor_stride_bytes(const ir::Access& a, const ir::TensorDecl& t, int rank) {
  if (rank < 1) return 0;
  return std::llabs(step_of(a, t, {ir::VarKind::Grid, rank - 1}).elements) * ir::size_of(t.dtype);
}

int partition_coord(const ir::Access& a, const ir::TensorDecl& t) {
  if (ir::is_hbm(t.memory) || static_cast<size_t>(t.partition_dim) >= a.index.size()) return 0;
  return std::max(0, a.index[t.partition_dim].single_grid_var());
}

bool streams(const ir::Access& a, int pcoord) {
  for (const ir::AffineExpr& e : a.index)
    for (ir::Var v : e.vars())
      if (v.kind == ir::VarKind::Grid && v.id != pcoord) return true;
  return !a.indirect.empty();
}

bool partition_broadcast(const ir::Access& a, const ir::TensorDecl& t) {
  if (ir::is_hbm(t.memory) || !a.indirect.empty() || static_cast<size_t>(t.partition_dim) >= a.index.size())
    return false;
  // The same row for every partition: no coordinate walks the partitions (a transpose's
  // source walks them with a free coordinate of its result).
  for (ir::Var v : a.index[t.partition_dim].vars())
    if (v.kind == ir::VarKind::Grid) return false;
  return true;
}

}  // namespace nkic::perf
