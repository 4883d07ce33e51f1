#include "sim/TileExec.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "sim/InstPlan.h"
#include "sim/Numerics.h"
#include "sim/RaceCheck.h"
#include "sim/Uninit.h"

namespace nkic::sim {

using AccessPlan = InstPlan::Access;
using Kind = InstPlan::Kind;

namespace {
std::string range_str(int64_t lo, int64_t hi) {
  return "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
}
}  // namespace

TileExecutor::TileExecutor(std::vector<TensorMem>& mem, const SimOptions& opts, RaceCheck* races)
    : mem_(mem), opts_(opts), races_(races) {
  for (int i = 0; i < 4; ++i) {
    fbuf_[i].resize(kChunk);
    ibuf_[i].resize(kChunk);
  }
  cbuf_.resize(kChunk);
  mask_.resize(kChunk);
  for (int i = 0; i < 2; ++i) {
    fconst_[i].resize(kChunk);
    iconst_[i].resize(kChunk);
    fuse_[i].resize(kChunk);
    ifuse_[i].resize(kChunk);
  }
}

TileExecutor::~TileExecutor() = default;

const InstPlan& TileExecutor::plan_for(const ir::Instruction& in, bool only_run) {
  if (only_run) {
    if (!scratch_) scratch_ = std::make_unique<InstPlan>();
    build_plan(*scratch_, in, mem_);
    return *scratch_;
  }
  std::unique_ptr<InstPlan>& slot = plans_[&in];
  if (!slot) slot = make_plan(in, mem_);
  return *slot;
}

void TileExecutor::run(const ir::Instruction& in, const Env& env, bool only_run) {
  const InstPlan& p = plan_for(in, only_run);
  const size_t rank = in.shape.size();
  box_lo_.assign(rank, 0);
  box_hi_.assign(in.shape.begin(), in.shape.end());
  if (p.grid_divs.empty()) return run_box(p, in, env);
  split_box(p, in, env);
  sub_.assign(rank, 0);
  Env at = env;
  at.grid = box_lo_.data();
  for (;;) {
    for (size_t k = 0; k < rank; ++k) {
      box_lo_[k] = cuts_[k][sub_[k]];
      box_hi_[k] = cuts_[k][sub_[k] + 1];
    }
    run_box(p, in, at);
    size_t k = rank;
    for (; k > 0; --k) {
      if (++sub_[k - 1] + 1 < cuts_[k - 1].size()) break;
      sub_[k - 1] = 0;
    }
    if (k == 0) return;
  }
}

void TileExecutor::split_box(const InstPlan& p, const ir::Instruction& in, const Env& env) {
  const size_t rank = in.shape.size();
  cuts_.assign(rank, {});
  for (size_t k = 0; k < rank; ++k) cuts_[k] = {0, in.shape[k]};
  Env origin = env;
  origin.grid = nullptr;  // Grid coords read as 0
  for (const ir::DivTerm& d : p.grid_divs) {
    std::vector<int> coords;
    for (ir::Var v : d.num.vars())
      if (v.kind == ir::VarKind::Grid) coords.push_back(v.id);
    if (coords.size() != 1 || d.num.divs_use(ir::VarKind::Grid)) {
      // Not a function of one coord with a fixed step: unit sub-boxes.
      for (int k : coords)
        for (int64_t g = 1; g < in.shape[k]; ++g) cuts_[k].push_back(g);
      continue;
    }
    // floor((a*g + r) / den) changes value where a*g + r crosses a multiple of den.
    const int k = coords[0];
    const int64_t a = d.num.coeff({ir::VarKind::Grid, k}), n = in.shape[k];
    const int64_t r = d.num.eval([&origin](ir::Var v) { return origin.value(v); });
    int64_t q = ir::floor_div(r, d.den);
    for (;;) {
      int64_t next = a > 0 ? -ir::floor_div(r - (q + 1) * d.den, a) : ir::floor_div(r - q * d.den, -a) + 1;
      if (next >= n) break;
      cuts_[k].push_back(next);
      q = ir::floor_div(a * next + r, d.den);
    }
  }
  for (std::vector<int64_t>& c : cuts_) {
    std::sort(c.begin(), c.end());
    c.erase(std::unique(c.begin(), c.end()), c.end());
  }
}

void TileExecutor::run_box(const InstPlan& p, const ir::Instruction& in, const Env& env) {
  if (!clamp_box(p, in, env)) return;
  check_bounds(p, in, env);

  const int n = static_cast<int>(p.accesses.size());
  const int forms = n + static_cast<int>(p.forms.size());
  space_.reset(lo_, hi_);
  bases_.resize(n);
  for (int e = 0; e < n; ++e) {
    bases_[e] = p.accesses[e].flat.base(env);
    space_.add_form(bases_[e], p.accesses[e].flat.grid.data());
  }
  for (const SplitExpr& f : p.forms) space_.add_form(f.base(env), f.grid.data());
  for (const MultiCond& c : multi_)
    space_.add_cond(c.base, p.constraints[c.index].grid.data(), c.kind);
  space_.finish();
  step_.resize(forms);
  off_.resize(forms);
  for (int e = 0; e < forms; ++e) step_[e] = space_.row_step(e);

  fill_pending(p);
  const TensorMem& dst = mem_[p.accesses[0].tensor];
  if (p.accumulate && dst.accumulator) start_accumulation_groups(p);
  const bool poisons = uninit::active() && reads_uninitialized(p);
  if (poisons) collect_poison(p);
  if (races_) race_reads(p, in);
  switch (p.kind) {
    case Kind::Elementwise: run_elementwise(p); break;
    case Kind::Reduce: run_reduce(p); break;
    case Kind::Matmul: run_matmul(p); break;
  }
  if (dst.tracked || dst.accumulator) mark_written(p);
  if (poisons) apply_poison(p);
  if (races_) race_writes(p, in);
}

bool TileExecutor::clamp_box(const InstPlan& p, const ir::Instruction& in, const Env& env) {
  lo_ = box_lo_;
  hi_ = box_hi_;
  multi_.clear();
  for (size_t c = 0; c < p.constraints.size(); ++c) {
    const SplitExpr& x = p.constraints[c];
    const ir::CmpKind kind = in.predicate[c].kind;
    int64_t base = x.base(env);
    if (x.num_grid_vars == 0) {
      if (!holds(kind, base)) return false;
    } else if (x.num_grid_vars == 1) {
      int k = 0;
      while (x.grid[k] == 0) ++k;
      clamp_range(x.grid[k], base, kind, lo_[k], hi_[k]);
    } else {
      multi_.push_back({static_cast<int>(c), base, kind});
    }
  }
  for (size_t k = 0; k < lo_.size(); ++k)
    if (lo_[k] >= hi_[k]) return false;
  return true;
}

namespace {
[[noreturn]] void throw_oob(const ir::Instruction& in, const ir::TensorDecl& t, size_t dim,
                            int64_t lo, int64_t hi) {
  sim_error("err_tensor_access_out_of_bound",
            "Out-of-bound access for tensor `" + t.name + "` on dimension " + std::to_string(dim) +
                ": index range " + range_str(lo, hi) + " exceed dimension size of " + std::to_string(t.shape[dim]),
            in.loc, "", ir::ErrorKind::Index);
}
}  // namespace

// Each index is affine in the Grid coordinates, so its extremes over the box are
// at corners chosen by the coefficients' signs. Points the multi-var constraints
// mask out may be among them: then only the exact check can tell.
void TileExecutor::check_bounds(const InstPlan& p, const ir::Instruction& in, const Env& env) {
  for (const AccessPlan& a : p.accesses) {
    const ir::TensorDecl& t = *mem_[a.tensor].decl;
    for (size_t d = 0; d < a.dims.size(); ++d) {
      const SplitExpr& x = a.dims[d];
      int64_t mn = x.base(env), mx = mn;
      for (size_t k = 0; k < x.grid.size(); ++k) {
        int64_t c = x.grid[k];
        mn += c * (c > 0 ? lo_[k] : hi_[k] - 1);
        mx += c * (c > 0 ? hi_[k] - 1 : lo_[k]);
      }
      if (mn >= 0 && mx < t.shape[d]) continue;
      if (multi_.empty()) throw_oob(in, t, d, mn, mx);
      return check_exact_bounds(p, in, env);
    }
  }
}

void TileExecutor::check_exact_bounds(const InstPlan& p, const ir::Instruction& in,
                                      const Env& env) {
  check_space_.reset(lo_, hi_);
  for (const AccessPlan& a : p.accesses)
    for (const SplitExpr& x : a.dims) check_space_.add_form(x.base(env), x.grid.data());
  for (const MultiCond& c : multi_)
    check_space_.add_cond(c.base, p.constraints[c.index].grid.data(), c.kind);
  check_space_.finish();
  const int forms = check_space_.num_forms();
  std::vector<int64_t> mn(forms, INT64_MAX), mx(forms, INT64_MIN);
  check_space_.for_each_row([&](const int64_t* start, int64_t a, int64_t b) {
    for (int f = 0; f < forms; ++f) {
      int64_t first = start[f] + a * check_space_.row_step(f);
      int64_t last = start[f] + (b - 1) * check_space_.row_step(f);
      mn[f] = std::min({mn[f], first, last});
      mx[f] = std::max({mx[f], first, last});
    }
  });
  int f = 0;
  for (const AccessPlan& a : p.accesses) {
    const ir::TensorDecl& t = *mem_[a.tensor].decl;
    for (size_t d = 0; d < a.dims.size(); ++d, ++f)
      if (mn[f] <= mx[f] && (mn[f] < 0 || mx[f] >= t.shape[d])) throw_oob(in, t, d, mn[f], mx[f]);
  }
}

// Fresh memory gets its never-read pattern on first touch, unless this
// instruction overwrites all of it first (most tiles: a load or an op writing
// the whole tile), which makes the fill dead work.
void TileExecutor::fill_pending(const InstPlan& p) {
  for (size_t e = 0; e < p.accesses.size(); ++e) {
    TensorMem& t = mem_[p.accesses[e].tensor];
    if (!t.pending_fill) continue;
    t.pending_fill = false;
    if (e == 0 && overwrites_dst(p)) continue;
    fill_fresh(t);
  }
}

// True when every dst element is written and none of the dst is read: no
// multi-var constraint, and each dst dim is a distinct Grid coord with
// coefficient ±1 spanning the whole dim over the box (bounds are checked), or
// a size-1 dim. Every opcode writes each point of its box (a reduction or
// matmul point writes the dst element it maps to).
bool TileExecutor::overwrites_dst(const InstPlan& p) const {
  if (!multi_.empty()) return false;
  const AccessPlan& dst = p.accesses[0];
  for (int e : p.reads)
    if (p.accesses[e].tensor == dst.tensor) return false;
  const std::vector<int64_t>& shape = mem_[dst.tensor].decl->shape;
  uint64_t used = 0;
  for (size_t d = 0; d < dst.dims.size(); ++d) {
    const SplitExpr& x = dst.dims[d];
    if (x.num_grid_vars == 0) {
      if (shape[d] != 1) return false;
      continue;
    }
    if (x.num_grid_vars != 1) return false;
    size_t k = 0;
    while (x.grid[k] == 0) ++k;
    if ((x.grid[k] != 1 && x.grid[k] != -1) || k >= 64 || (used >> k & 1)) return false;
    used |= uint64_t{1} << k;
    if (hi_[k] - lo_[k] != shape[d]) return false;
  }
  return true;
}

// Calls f(at, step, n) for rows of the elements access `e` touches at executed
// points. A box coord that neither the access nor a multi-var constraint uses
// only repeats those elements (a matmul operand's third coord, a reduction's
// folded coord), so it is walked once.
template <class F>
void TileExecutor::for_each_access_row(const InstPlan& p, int e, F f) {
  const SplitExpr& flat = p.accesses[e].flat;
  access_hi_.assign(hi_.begin(), hi_.end());
  bool collapsed = false;
  for (size_t k = 0; k < lo_.size(); ++k) {
    if (flat.grid[k] != 0 || hi_[k] - lo_[k] == 1) continue;
    bool constrained = false;
    for (const MultiCond& c : multi_) constrained |= p.constraints[c.index].grid[k] != 0;
    if (constrained) continue;
    access_hi_[k] = lo_[k] + 1;
    collapsed = true;
  }
  RowSpace* walk = &space_;
  int form = e;
  if (collapsed) {
    access_space_.reset(lo_, access_hi_);
    access_space_.add_form(bases_[e], flat.grid.data());
    for (const MultiCond& c : multi_)
      access_space_.add_cond(c.base, p.constraints[c.index].grid.data(), c.kind);
    access_space_.finish();
    walk = &access_space_;
    form = 0;
  }
  const int64_t step = walk->row_step(form);
  walk->for_each_row([&](const int64_t* start, int64_t a, int64_t b) {
    f(start[form] + a * step, step, step == 0 ? 1 : b - a);
  });
}

// Elements an accumulation reaches before anything wrote them start at zero.
void TileExecutor::start_accumulation_groups(const InstPlan& p) {
  TensorMem& t = mem_[p.accesses[0].tensor];
  for_each_access_row(p, 0, [&](int64_t at, int64_t step, int64_t n) {
    // Past its first accumulation a group is written throughout: find that fast.
    if (step == 1 && !std::memchr(t.written.data() + at, 0, n)) return;
    for (int64_t i = 0; i < n; ++i, at += step) {
      if (t.written[at]) continue;
      store_element(t.decl->dtype, t.data, at, 0.0);
      t.written[at] = 1;
    }
  });
}

bool TileExecutor::reads_uninitialized(const InstPlan& p) {
  bool any = false;
  for (int e : p.reads) {
    const TensorMem& t = mem_[p.accesses[e].tensor];
    if (!t.tracked || any) continue;
    for_each_access_row(p, e, [&](int64_t at, int64_t step, int64_t n) {
      for (int64_t i = 0; i < n && !any; ++i) any = uninit::unclean(t, at + i * step);
    });
  }
  return any;
}

// Before the instruction runs (it may write what it reads): each point's dst
// element is poisoned when any element the point reads is uninitialized; a
// reduction's or matmul's dst element, when any of its points is. The origin
// named is the first uninitialized read of the row.
void TileExecutor::collect_poison(const InstPlan& p) {
  poison_.clear();
  space_.for_each_row([&](const int64_t* start, int64_t a, int64_t b) {
    int origin = -1;
    for (int64_t i = a; i < b; ++i) {
      bool unclean = false;
      for (int e : p.reads) unclean = unclean || uninit::unclean(mem_[p.accesses[e].tensor], start[e] + i * step_[e]);
      if (!unclean) continue;
      if (origin < 0) {
        uninit::row_start();
        for (int e : p.reads) uninit::read(mem_[p.accesses[e].tensor], start[e] + i * step_[e]);
        origin = uninit::taint();
      }
      poison_.emplace_back(start[0] + i * step_[0], origin);
    }
  });
  uninit::row_start();
}

void TileExecutor::apply_poison(const InstPlan& p) {
  TensorMem& dst = mem_[p.accesses[0].tensor];
  for (const auto& [at, origin] : poison_) uninit::poison(dst, at, origin);
}

// An accumulation's read of the accumulated tile is the accumulation itself,
// which the race check treats as order-independent.
void TileExecutor::race_reads(const InstPlan& p, const ir::Instruction& in) {
  const int accumulated = 1 + races_->accumulated_src(in);
  for (int e : p.reads) {
    const int t = p.accesses[e].tensor;
    if ((e == 0 && p.accumulate) || (accumulated > 0 && e == accumulated) || !races_->watches_reads(t)) continue;
    for_each_access_row(p, e,
                        [&](int64_t at, int64_t step, int64_t n) { races_->read(t, at, step, n); });
  }
}

void TileExecutor::race_writes(const InstPlan& p, const ir::Instruction& in) {
  const int t = p.accesses[0].tensor;
  if (!races_->watches_writes(t)) return;
  const bool accumulating = races_->accumulates(in);
  for_each_access_row(p, 0, [&](int64_t at, int64_t step, int64_t n) {
    races_->write(t, at, step, n, accumulating);
  });
}

void TileExecutor::mark_written(const InstPlan& p) {
  uint8_t* w = mem_[p.accesses[0].tensor].written.data();
  for_each_access_row(p, 0, [&](int64_t at, int64_t step, int64_t n) {
    if (step == 1) {
      std::memset(w + at, 1, n);
    } else {
      for (int64_t i = 0; i < n; ++i) w[at + i * step] = 1;
    }
  });
}

// Reductions and matmuls read all their operands before writing the dst, so
// they need no snapshot of an operand that shares the dst's memory.
void TileExecutor::bind_direct(const InstPlan& p) {
  data_.resize(p.accesses.size());
  for (size_t e = 0; e < p.accesses.size(); ++e) data_[e] = mem_[p.accesses[e].tensor].data;
}

}  // namespace nkic::sim
