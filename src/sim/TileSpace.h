// The iteration space of one instruction execution, prepared for plain integer
// walking: affine expressions split into a fixed Grid part and a per-execution
// base, the predicate turned into a clamped box plus per-row cuts, and the box
// walked as rows (merged dims), so the work per point is an add.
#pragma once
#include <cstdint>
#include <vector>

#include "ir/IR.h"

namespace nkic::sim {

// Values of the Loop and ProgramId variables where an instruction executes.
struct Env {
  const int64_t* loop = nullptr;  // by loop axis
  const int64_t* pid = nullptr;   // by launch-grid axis
  // The origin of a sub-box on which every floor-division over Grid coords is
  // constant (those divisions are evaluated there); null when there are none.
  const int64_t* grid = nullptr;
  int64_t value(ir::Var v) const;
};

// An affine expression split for execution: its Grid coefficients are fixed for
// the instruction, while the constant plus its Loop and ProgramId terms (and
// its floor-divisions) form a base evaluated once per execution. A floor-
// division over Grid coords is constant only on a sub-box (Env::grid).
struct SplitExpr {
  int64_t constant = 0;
  ir::SmallVec<ir::Term, 2> outer;  // Loop and ProgramId terms
  ir::SmallVec<int64_t, 6> grid;    // coefficient per Grid coordinate (ranks reach 6)
  int num_grid_vars = 0;
  std::vector<ir::DivTerm> divs;
  bool grid_divs = false;  // some division reads a Grid coord

  // `rank` is the instruction's iteration-space rank (Grid ids are below it).
  static SplitExpr from(const ir::AffineExpr& e, int rank);
  // The same, in place (a reused plan keeps its storage).
  void set(const ir::AffineExpr& e, int rank);
  int64_t base(const Env& env) const {
    // Inline for a static index (no loop, program id or division): most accesses of an
    // unrolled kernel, asked for by the bounds check and the walk of every instruction.
    return outer.empty() && divs.empty() ? constant : outer_base(env);
  }
  // *this += k * o
  void add_scaled(const SplitExpr& o, int64_t k);

 private:
  int64_t outer_base(const Env& env) const;
};

inline bool holds(ir::CmpKind kind, int64_t v) { return kind == ir::CmpKind::Ge ? v >= 0 : v == 0; }

// Narrows [lo, hi) to the i with c*i + r >= 0 (Ge) or c*i + r == 0 (Eq); c != 0.
// The result may be empty (lo >= hi).
void clamp_range(int64_t c, int64_t r, ir::CmpKind kind, int64_t& lo, int64_t& hi);

// A non-empty box [lo[k], hi[k]) walked as rows. Forms are affine functions of
// the point (element offsets, indices) tracked along the walk; conditions are
// constraints over several Grid vars, which cut each row to a sub-range. Adjacent
// dims that every form and condition steps through contiguously are merged, so a
// whole tile is usually one long row.
class RowSpace {
 public:
  void reset(const std::vector<int64_t>& lo, const std::vector<int64_t>& hi);
  // `grid` has one coefficient per box dim; the form's value at point i is
  // base + sum grid[k]*i[k]. Forms are numbered in the order they are added.
  void add_form(int64_t base, const int64_t* grid);
  void add_cond(int64_t base, const int64_t* grid, ir::CmpKind kind);
  void finish();

  int num_forms() const { return num_forms_; }
  bool has_conds() const { return static_cast<int>(base_.size()) > num_forms_; }
  // The merged walk: its dims, their extents, and form `f` at the first point and per step along dim `d`.
  int rank() const { return rank_; }
  int64_t extent(int d) const { return ext_[d]; }
  int64_t start(int f) const { return base_[f]; }
  int64_t step(int f, int d) const { return coeff_[f * rank_ + d]; }
  // How much form `f` advances per step along a row.
  int64_t row_step(int f) const { return coeff_[f * rank_ + rank_ - 1]; }

  // Calls f(start, a, b) for every row with executed points: form `e` at row
  // position j (a <= j < b) is start[e] + j*row_step(e).
  template <class F>
  void for_each_row(F&& f);

 private:
  // Box and entries (forms, then conditions) as given, before merging.
  std::vector<int64_t> lo_, hi_;
  std::vector<int64_t> in_base_, in_coeff_, cond_base_, cond_coeff_;
  std::vector<ir::CmpKind> cond_kind_;
  int num_forms_ = 0;
  // Merged: rank_ dims of extent ext_; entries base_/coeff_ (forms, then conditions).
  int rank_ = 0;
  std::vector<int64_t> ext_, base_, coeff_, cur_, idx_, dim_coeff_;
};

template <class F>
void RowSpace::for_each_row(F&& f) {
  const int entries = static_cast<int>(base_.size());
  const int inner = rank_ - 1;
  cur_.assign(base_.begin(), base_.end());
  idx_.assign(rank_, 0);
  for (;;) {
    int64_t a = 0, b = ext_[inner];
    for (int c = num_forms_; c < entries && a < b; ++c) {
      int64_t step = coeff_[c * rank_ + inner];
      ir::CmpKind kind = cond_kind_[c - num_forms_];
      if (step == 0) {
        if (!holds(kind, cur_[c])) b = a;
      } else {
        clamp_range(step, cur_[c], kind, a, b);
      }
    }
    if (a < b) f(static_cast<const int64_t*>(cur_.data()), a, b);
    int d = inner - 1;
    for (; d >= 0; --d) {
      for (int e = 0; e < entries; ++e) cur_[e] += coeff_[e * rank_ + d];
      if (++idx_[d] < ext_[d]) break;
      for (int e = 0; e < entries; ++e) cur_[e] -= coeff_[e * rank_ + d] * ext_[d];
      idx_[d] = 0;
    }
    if (d < 0) return;
  }
}

}  // namespace nkic::sim
