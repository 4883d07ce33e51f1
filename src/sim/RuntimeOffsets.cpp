#include "sim/RuntimeOffsets.h"

#include "sim/Numerics.h"
#include "sim/PointWalk.h"
#include "sim/Uninit.h"

namespace nkic::sim {

namespace {

bool uniform(const ir::Access& a) {
  if (a.indirect.empty()) return false;
  for (const ir::IndirectIndex& ind : a.indirect)
    for (const ir::AffineExpr& e : ind.index.index)
      if (e.uses(ir::VarKind::Grid) || !ind.index.indirect.empty()) return false;
  return true;
}

// The range of grid coord k the access `e` of `in` walks: the iteration space, or
// for row instructions coord 1 over that access's own width.
std::pair<int64_t, int64_t> grid_range(const ir::Instruction& in, size_t e, int k) {
  if (ir::walks_own_width(ir::info(in.opcode).exec) && k == 1 && e < in.widths.size()) return {0, in.widths[e] - 1};
  return {0, in.shape.at(k) - 1};
}

}  // namespace

std::optional<ir::Instruction> resolve_uniform_offsets(const std::vector<TensorMem>& mem, const ir::Instruction& in,
                                                       const int64_t* loops, const int64_t* pids) {
  if (ir::info(in.opcode).exec == ir::Exec::Move) return std::nullopt;
  std::optional<ir::Instruction> out;
  auto visit = [&](auto&& inst, auto&& each) {
    if (inst.has_dst()) each(inst.dst);
    for (auto& a : inst.extra_dsts) each(a);
    for (auto& a : inst.srcs) each(a);
  };
  bool any = false, varying = false;
  visit(in, [&](const ir::Access& a) {
    if (a.indirect.empty()) return;
    (uniform(a) ? any : varying) = true;
  });
  if (!any || varying) return std::nullopt;
  out.emplace(in);
  const std::vector<int64_t> origin(in.shape.size(), 0);
  const ValueOf at_origin = values_at(origin, loops, pids);
  size_t e = 0;
  visit(*out, [&](ir::Access& a) {
    const size_t which = e++;
    if (a.indirect.empty()) return;
    for (const ir::IndirectIndex& ind : a.indirect) {
      const TensorMem& it = mem.at(ind.index.tensor);
      const int64_t off = point_offset(mem, in, ind.index, at_origin);
      uninit::use(it, off, in.loc, "an address");
      a.index.at(ind.dim) =
          a.index[ind.dim] + ind.step * static_cast<int64_t>(load_element(it.decl->dtype, it.data, off));
    }
    a.indirect.clear();
    // In bounds over the box of the walk: nothing to check point by point.
    const TensorMem& t = mem.at(a.tensor);
    bool inside = true;
    for (size_t d = 0; inside && d < a.index.size(); ++d) {
      const auto [lo, hi] = a.index[d].bounds([&](ir::Var v) -> std::pair<int64_t, int64_t> {
        if (v.kind == ir::VarKind::Grid) return grid_range(in, which, v.id);
        const int64_t x = v.kind == ir::VarKind::Loop ? loops[v.id] : pids[v.id];
        return {x, x};
      });
      inside = lo >= 0 && hi < t.decl->shape[d];
    }
    // The box over-approximates (a mask, floor divisions): walk it, raising at the first point outside.
    if (!inside && !ir::walks_own_width(ir::info(in.opcode).exec))
      for_each_point(*out, loops, pids, [&](const ValueOf& value_of) { point_offset(mem, *out, a, value_of); });
  });
  return out;
}

}  // namespace nkic::sim
