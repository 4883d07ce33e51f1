#include "sim/AccumulatorExec.h"

#include "sim/AluEval.h"
#include "sim/Folds.h"
#include "sim/Numerics.h"
#include "sim/PointWalk.h"

namespace nkic::sim {

namespace {

// Whether the element offset of `a` is an affine function of the Grid coords
// alone (no floor division, no runtime index): then it steps by a fixed amount
// per coord and the walk needs no expression evaluation per point.
bool plain_affine(const ir::Access& a) {
  if (!a.indirect.empty()) return false;
  for (const ir::AffineExpr& e : a.index)
    if (!e.divs().empty()) return false;
  return true;
}

}  // namespace

void AccumulatorExec::fold_dst(const ir::Instruction& in, const int64_t* loops, const int64_t* pids) {
  const TensorMem& dst = mem_.at(in.dst.tensor);
  const ir::DType dt = dst.decl->dtype;
  const size_t rank = in.shape.size();
  fold_.assign(in.shape[0], 0.0f);
  seen_.assign(in.shape[0], 0);
  std::vector<int64_t> point(rank, 0);
  ValueOf value_of = values_at(point, loops, pids);
  // The offset at the origin and its step along each coord (the dst was just
  // written at every kept point, so each of these points is in bounds).
  const bool affine = plain_affine(in.dst);
  std::vector<int64_t> step(rank, 0);
  const int64_t origin = point_offset(mem_, in, in.dst, value_of);
  if (affine)
    for (size_t k = 0; k < rank; ++k)
      if (in.shape[k] > 1) {
        point[k] = 1;
        step[k] = point_offset(mem_, in, in.dst, value_of) - origin;
        point[k] = 0;
      }
  const bool truth = logical_fold(in.acc_op);
  with_fold<float>(in.acc_op, [&](auto f) {
    int64_t off = origin;
    while (true) {
      bool keep = true;
      for (const ir::Constraint& c : in.predicate) keep = keep && c.holds(c.expr.eval(value_of));
      if (keep) {
        float v = static_cast<float>(load_element(dt, dst.data, affine ? off : point_offset(mem_, in, in.dst, value_of)));
        if (truth) to_truth(&v, 1);
        const int64_t p = point[0];
        fold_[p] = seen_[p] ? f(fold_[p], v) : v;
        seen_[p] = 1;
      }
      size_t d = rank;
      while (d > 0 && ++point[d - 1] == in.shape[d - 1]) {
        off -= step[d - 1] * (in.shape[d - 1] - 1);
        point[--d] = 0;
      }
      if (d == 0) return;
      off += step[d - 1];
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
    if (t.tracked || t.accumulator) t.written.at(off) = 1;
  };
  for (int64_t p = 0; p < in.shape[0]; ++p) {
    if (!seen_[p]) continue;
    row[0] = p;
    const int64_t off = point_offset(mem_, in, in.extra_dsts[0], at_row);
    float v = in.acc_cmd == ir::AccCmd::reset ? 0.0f : fold_[p];
    if (in.acc_cmd == ir::AccCmd::load_reduce) {
      const float init = static_cast<float>(in.acc_init);
      eval_binary(in.acc_op, &init, &v, &v, 1);
    } else if (in.acc_cmd == ir::AccCmd::reduce) {
      // The register folds the new partial in, as a tensor_tensor of the two would.
      const float held = static_cast<float>(
          load_element(reg.decl->dtype, reg.data, read_offset(mem_, in, in.extra_dsts[0], at_row, opts_.check_uninitialized)));
      eval_binary(in.acc_op, &held, &v, &v, 1);
    }
    write(reg, off, v);
    if (res) write(*res, point_offset(mem_, in, in.extra_dsts[1], at_row), v);
  }
}

}  // namespace nkic::sim
