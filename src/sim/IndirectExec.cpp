#include "sim/IndirectExec.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <stdexcept>

#include "sim/Numerics.h"
#include "sim/PointWalk.h"
#include "sim/Uninit.h"

namespace nkic::sim {

namespace {

bool mentions(const ir::AffineExpr& e, ir::Var v) {
  if (e.coeff(v) != 0) return true;
  for (const ir::DivTerm& d : e.divs())
    if (mentions(d.num, v)) return true;
  return false;
}

// Whether the element `a` touches moves by a fixed step along `v`: its index is
// linear in v and the indirect index values it adds do not change along v.
bool steps_along(const ir::Access& a, ir::Var v) {
  for (const ir::AffineExpr& e : a.index)
    for (const ir::DivTerm& d : e.divs())
      if (mentions(d.num, v)) return false;
  for (const ir::IndirectIndex& ind : a.indirect) {
    if (!ind.index.indirect.empty()) return false;
    for (const ir::AffineExpr& e : ind.index.index)
      if (mentions(e, v)) return false;
  }
  return true;
}

// The first element and the step of `a` along `v` over a row of n points starting
// at the current point, when the whole row lies inside the tensor.
struct RowSpan {
  int64_t first = 0, step = 0;
};
std::optional<RowSpan> row_span(const std::vector<TensorMem>& mem, const ir::Instruction& in, const ir::Access& a,
                                const ValueOf& value_of, ir::Var v, int64_t n, std::vector<int64_t>& idx) {
  const TensorMem& t = mem.at(a.tensor);
  point_indices(mem, in, a, value_of, idx);
  RowSpan span;
  for (size_t d = 0; d < idx.size(); ++d) {
    const int64_t c = a.index[d].coeff(v), last = idx[d] + c * (n - 1);
    if (std::min(idx[d], last) < 0 || std::max(idx[d], last) >= t.decl->shape[d]) return std::nullopt;
    span.first += idx[d] * t.strides[d];
    span.step += c * t.strides[d];
  }
  return span;
}

}  // namespace

bool IndirectExec::handles(const ir::Instruction& in) {
  if (in.has_dst() && !in.dst.indirect.empty()) return true;
  for (const ir::Access& a : in.srcs)
    if (!a.indirect.empty()) return true;
  return false;
}

void IndirectExec::run(const ir::Instruction& in, const int64_t* loops, const int64_t* pids) {
  if (ir::info(in.opcode).exec != ir::Exec::Move && ir::info(in.opcode).form != ir::Form::fill)
    throw std::invalid_argument(std::string("simulate: indirect indices on a ") + ir::name(in.opcode) +
                                " instruction (only load, store and copy take them)");
  TensorMem& dst = mem_.at(in.dst.tensor);
  ensure_filled(dst);
  ir::DType dt = dst.decl->dtype;
  const TensorMem* src = in.srcs.empty() ? nullptr : &mem_.at(in.srcs[0].tensor);
  const double imm = in.imms.empty() ? 0.0 : in.imms[0];
  const int size = ir::size_of(dt);
  // A move between tensors of one dtype copies the element's bits, as a DMA does:
  // NaN payloads and packed mx words (no single number) arrive unchanged.
  const bool same_bits = src && src->decl->dtype == dt && !in.accumulate;
  auto write = [&](int64_t off, double v) {
    if (in.accumulate) {
      uninit::read(dst, off);
      v = static_cast<float>(load_element(dt, dst.data, off)) + static_cast<float>(v);
    }
    store_element(dt, dst.data, off, v);
    uninit::wrote(dst, off);
  };
  // Each point moves one element: its value depends on that element alone.
  auto move = [&](int64_t off, int64_t at) {
    uninit::row_start();
    if (src) uninit::read(*src, at);
    if (!same_bits) return write(off, src ? load_element(src->decl->dtype, src->data, at) : imm);
    std::memmove(dst.data + off * size, src->data + at * size, static_cast<size_t>(size));
    uninit::wrote(dst, off);
  };
  auto element = [&](const ValueOf& value_of) {
    const int64_t at = src ? point_offset(mem_, in, in.srcs[0], value_of) : 0;
    if (at < 0) return;  // skipped out-of-bound read: dst keeps its value
    const int64_t off = point_offset(mem_, in, in.dst, value_of);
    if (off >= 0) move(off, at);  // else a skipped out-of-bound write
  };

  // Along the innermost dim the index tiles usually hold one value per row (a
  // gather of whole rows): such a row moves as one strided run, in the same order
  // and with the same values as point by point. Rows that leave the tensor, or
  // whose mask changes along the row, go point by point (errors, oob skips).
  const size_t rank = in.shape.size();
  const ir::Var inner{ir::VarKind::Grid, static_cast<int>(rank) - 1};
  bool by_rows = rank > 0 && steps_along(in.dst, inner) && (!src || steps_along(in.srcs[0], inner));
  for (const ir::Constraint& c : in.predicate) by_rows = by_rows && !mentions(c.expr, inner);
  if (!by_rows) return for_each_point(in, loops, pids, element);

  const int64_t n = in.shape[rank - 1];
  std::vector<int64_t> point(rank, 0), idx;
  ValueOf value_of = values_at(point, loops, pids);
  while (true) {
    point[rank - 1] = 0;
    bool keep = true;
    for (const ir::Constraint& c : in.predicate) keep = keep && c.holds(c.expr.eval(value_of));
    if (keep) {
      auto d = row_span(mem_, in, in.dst, value_of, inner, n, idx);
      auto s = src ? row_span(mem_, in, in.srcs[0], value_of, inner, n, idx) : std::optional<RowSpan>(RowSpan{});
      if (!d || !s) {
        for (int64_t i = 0; i < n; ++i, ++point[rank - 1]) element(value_of);
      } else if (same_bits && src != &dst && d->step == 1 && s->step == 1 && !uninit::active()) {
        // Unchecked (the check walks element by element): no written flags to keep.
        std::memcpy(dst.data + d->first * size, src->data + s->first * size, static_cast<size_t>(n * size));
      } else {
        for (int64_t i = 0; i < n; ++i) move(d->first + i * d->step, s->first + i * s->step);
      }
    }
    size_t d = rank - 1;
    while (d > 0 && ++point[d - 1] == in.shape[d - 1]) point[--d] = 0;
    if (d == 0) return;
  }
}

}  // namespace nkic::sim
