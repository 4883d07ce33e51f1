#include "sim/AccumulatorExec.h"

#include "sim/AluEval.h"
#include "sim/Convert.h"
#include "sim/Folds.h"
#include "sim/Numerics.h"
#include "sim/PointWalk.h"
#include "sim/TileSpace.h"
#include "sim/Uninit.h"

namespace nkic::sim {

namespace {

// Whether the element offset of `a` is an affine function of the Grid coords
// alone (no floor division, no runtime index): then it steps by a fixed amount
// along each coord.
bool plain_affine(const ir::Access& a) {
  if (!a.indirect.empty()) return false;
  for (const ir::AffineExpr& e : a.index)
    if (!e.divs().empty()) return false;
  return true;
}

}  // namespace

// Walks the kept points a row (the last coord) at a time when the dst offset and
// the predicate's constraints step by fixed amounts along it, else a point at a
// time; each partition folds its values in row-major order either way.
void AccumulatorExec::fold_dst(const ir::Instruction& in, const int64_t* loops, const int64_t* pids) {
  const TensorMem& dst = mem_.at(in.dst.tensor);
  const ir::DType dt = dst.decl->dtype;
  const size_t rank = in.shape.size();
  fold_.assign(in.shape[0], 0.0f);
  seen_.assign(in.shape[0], 0);
  const bool checked = uninit::active() && dst.tracked;
  unclean_.assign(checked ? in.shape[0] : 0, -1);
  std::vector<int64_t> point(rank, 0);
  ValueOf value_of = values_at(point, loops, pids);
  const size_t last = rank - 1;
  bool rows = rank > 1 && plain_affine(in.dst);
  for (const ir::Constraint& c : in.predicate) rows = rows && c.expr.divs().empty();
  const size_t outer = rows ? last : rank;  // coords walked point by point
  const int64_t len = rows ? in.shape[last] : 1;
  std::vector<int64_t> cond_step(in.predicate.size(), 0);
  if (rows)
    for (size_t c = 0; c < in.predicate.size(); ++c)
      cond_step[c] = in.predicate[c].expr.coeff({ir::VarKind::Grid, static_cast<int>(last)});
  int64_t off_step = 0;
  bool have_step = false;
  values_.resize(len);
  const bool truth = logical_fold(in.acc_op);
  with_fold<float>(in.acc_op, [&](auto f) {
    while (true) {
      int64_t lo = 0, hi = len;
      for (size_t c = 0; c < in.predicate.size() && lo < hi; ++c) {
        const ir::Constraint& k = in.predicate[c];
        const int64_t v = k.expr.eval(value_of);
        if (cond_step[c] == 0) {
          if (!k.holds(v)) hi = lo;
        } else {
          clamp_range(cond_step[c], v, k.kind, lo, hi);
        }
      }
      if (lo < hi) {
        // Offsets only at kept points: the dst was just written there, so they are in bounds.
        if (rows) point[last] = lo;
        const int64_t off = point_offset(mem_, in, in.dst, value_of);
        if (hi - lo > 1 && !have_step) {
          point[last] = lo + 1;
          off_step = point_offset(mem_, in, in.dst, value_of) - off;
          have_step = true;
        }
        if (rows) point[last] = 0;
        const int64_t n = hi - lo;
        gather_float(dt, dst.data, off, off_step, n, values_.data());
        if (checked)
          for (int64_t i = 0; i < n && unclean_[point[0]] < 0; ++i)
            if (uninit::unclean(dst, off + i * off_step)) unclean_[point[0]] = off + i * off_step;
        if (truth) to_truth(values_.data(), n);
        const int64_t p = point[0];
        float acc = seen_[p] ? f(fold_[p], values_[0]) : values_[0];
        for (int64_t i = 1; i < n; ++i) acc = f(acc, values_[i]);
        fold_[p] = acc;
        seen_[p] = 1;
      }
      size_t d = outer;
      while (d > 0 && ++point[d - 1] == in.shape[d - 1]) point[--d] = 0;
      if (d == 0) return;
    }
  });
}

void AccumulatorExec::run(const ir::Instruction& in, const int64_t* loops, const int64_t* pids) {
  if (in.acc_cmd != ir::AccCmd::reset) fold_dst(in, loops, pids);
  else seen_.assign(in.shape[0], 1);
  // The register and reduce_res are [P, 1] views: row p is the point (p, 0, ...).
  std::vector<int64_t> row(in.shape.size(), 0);
  ValueOf at_row = values_at(row, loops, pids);
  TensorMem& reg = mem_.at(in.extra_dsts[0].tensor);
  ensure_filled(reg);
  TensorMem* res = in.extra_dsts.size() > 1 ? &mem_.at(in.extra_dsts[1].tensor) : nullptr;
  if (res) ensure_filled(*res);
  auto write = [](TensorMem& t, int64_t off, float v) {
    store_element(t.decl->dtype, t.data, off, v);
    uninit::wrote(t, off);
  };
  for (int64_t p = 0; p < in.shape[0]; ++p) {
    if (!seen_[p]) continue;
    // Each partition's register folds that partition's values alone.
    uninit::row_start();
    if (unclean_.size() > static_cast<size_t>(p) && unclean_[p] >= 0) uninit::read(mem_.at(in.dst.tensor), unclean_[p]);
    row[0] = p;
    const int64_t off = point_offset(mem_, in, in.extra_dsts[0], at_row);
    float v = in.acc_cmd == ir::AccCmd::reset ? 0.0f : fold_[p];
    if (in.acc_cmd == ir::AccCmd::load_reduce) {
      // From acc_init, or per partition from reduce_init's tile (read at row p).
      const ir::Access* from = ir::load_reduce_source(in);
      const float init = from ? static_cast<float>(load_element(
                                    mem_.at(from->tensor).decl->dtype, mem_.at(from->tensor).data,
                                    read_offset(mem_, in, *from, at_row)))
                              : static_cast<float>(in.acc_init);
      eval_binary(in.acc_op, &init, &v, &v, 1);
    } else if (in.acc_cmd == ir::AccCmd::reduce) {
      // The register folds the new partial in, as a tensor_tensor of the two would.
      const float held = static_cast<float>(
          load_element(reg.decl->dtype, reg.data, read_offset(mem_, in, in.extra_dsts[0], at_row)));
      eval_binary(in.acc_op, &held, &v, &v, 1);
    }
    write(reg, off, v);
    if (res) write(*res, point_offset(mem_, in, in.extra_dsts[1], at_row), in.negate ? -v : v);
  }
}

}  // namespace nkic::sim
