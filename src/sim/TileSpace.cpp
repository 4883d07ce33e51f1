#include "sim/TileSpace.h"

namespace nkic::sim {

namespace {
using ir::floor_div;
int64_t ceil_div(int64_t a, int64_t b) { return -floor_div(-a, b); }
}  // namespace

int64_t Env::value(ir::Var v) const {
  switch (v.kind) {
    case ir::VarKind::Loop: return loop[v.id];
    case ir::VarKind::ProgramId: return pid[v.id];
    case ir::VarKind::Grid: return grid ? grid[v.id] : 0;
  }
  return 0;
}

SplitExpr SplitExpr::from(const ir::AffineExpr& e, int rank) {
  SplitExpr s;
  s.set(e, rank);
  return s;
}

void SplitExpr::set(const ir::AffineExpr& e, int rank) {
  constant = e.constant();
  if (e.divs().empty()) {  // nearly every index: no division to copy or scan
    divs.clear();
    grid_divs = false;
  } else {
    divs = e.divs();
    grid_divs = e.divs_use(ir::VarKind::Grid);
  }
  grid.assign(rank, 0);
  outer.clear();
  num_grid_vars = 0;
  for (const ir::Term& t : e.terms()) {
    if (t.var.kind == ir::VarKind::Grid) {
      grid[t.var.id] = t.coeff;
      ++num_grid_vars;
    } else {
      outer.push_back(t);
    }
  }
}

int64_t SplitExpr::outer_base(const Env& env) const {
  int64_t v = constant;
  for (const ir::Term& t : outer)
    v += t.coeff * (t.var.kind == ir::VarKind::Loop ? env.loop[t.var.id] : env.pid[t.var.id]);
  for (const ir::DivTerm& d : divs)
    v += d.coeff * floor_div(d.num.eval([&env](ir::Var x) { return env.value(x); }), d.den);
  return v;
}

void SplitExpr::add_scaled(const SplitExpr& o, int64_t k) {
  constant += o.constant * k;
  for (const ir::Term& t : o.outer) outer.push_back({t.var, t.coeff * k});
  for (const ir::DivTerm& d : o.divs) divs.push_back({d.num, d.den, d.coeff * k});
  grid_divs = grid_divs || o.grid_divs;
  num_grid_vars = 0;
  for (size_t i = 0; i < grid.size(); ++i) {
    grid[i] += o.grid[i] * k;
    num_grid_vars += grid[i] != 0;
  }
}

void clamp_range(int64_t c, int64_t r, ir::CmpKind kind, int64_t& lo, int64_t& hi) {
  if (kind == ir::CmpKind::Eq) {
    if (r % c != 0) {
      hi = lo;
      return;
    }
    int64_t i = -r / c;
    if (i > lo) lo = i;
    if (i + 1 < hi) hi = i + 1;
    return;
  }
  if (c > 0) {  // i >= ceil(-r / c)
    int64_t first = ceil_div(-r, c);
    if (first > lo) lo = first;
  } else {  // i <= floor(r / -c)
    int64_t last = floor_div(r, -c);
    if (last + 1 < hi) hi = last + 1;
  }
}

void RowSpace::reset(const std::vector<int64_t>& lo, const std::vector<int64_t>& hi) {
  lo_ = lo;
  hi_ = hi;
  in_base_.clear();
  in_coeff_.clear();
  cond_base_.clear();
  cond_coeff_.clear();
  cond_kind_.clear();
  num_forms_ = 0;
}

void RowSpace::add_form(int64_t base, const int64_t* grid) {
  in_base_.push_back(base);
  in_coeff_.insert(in_coeff_.end(), grid, grid + lo_.size());
  ++num_forms_;
}

void RowSpace::add_cond(int64_t base, const int64_t* grid, ir::CmpKind kind) {
  cond_base_.push_back(base);
  cond_coeff_.insert(cond_coeff_.end(), grid, grid + lo_.size());
  cond_kind_.push_back(kind);
}

void RowSpace::finish() {
  const int dims = static_cast<int>(lo_.size());
  in_base_.insert(in_base_.end(), cond_base_.begin(), cond_base_.end());
  in_coeff_.insert(in_coeff_.end(), cond_coeff_.begin(), cond_coeff_.end());
  const int entries = static_cast<int>(in_base_.size());
  auto given = [&](int e, int d) { return in_coeff_[e * dims + d]; };

  // Rebase every entry at the box origin, then keep the dims of extent > 1,
  // merging a dim into the previous one when every entry steps through the pair
  // as through one dim (outer coefficient = inner coefficient * inner extent).
  base_ = in_base_;
  for (int e = 0; e < entries; ++e)
    for (int d = 0; d < dims; ++d) base_[e] += given(e, d) * lo_[d];
  ext_.clear();
  dim_coeff_.clear();  // per kept dim, per entry
  auto kept = [&](size_t r, int e) -> int64_t& { return dim_coeff_[r * entries + e]; };
  for (int d = 0; d < dims; ++d) {
    int64_t n = hi_[d] - lo_[d];
    if (n == 1) continue;
    bool mergeable = !ext_.empty();
    for (int e = 0; e < entries && mergeable; ++e)
      mergeable = kept(ext_.size() - 1, e) == given(e, d) * n;
    if (mergeable) {
      ext_.back() *= n;
    } else {
      ext_.push_back(n);
      dim_coeff_.resize(ext_.size() * entries);
    }
    for (int e = 0; e < entries; ++e) kept(ext_.size() - 1, e) = given(e, d);
  }
  if (ext_.empty()) {
    ext_.push_back(1);
    dim_coeff_.assign(entries, 0);
  }
  rank_ = static_cast<int>(ext_.size());
  coeff_.resize(static_cast<size_t>(entries) * rank_);
  for (int r = 0; r < rank_; ++r)
    for (int e = 0; e < entries; ++e) coeff_[e * rank_ + r] = kept(r, e);
}

}  // namespace nkic::sim
