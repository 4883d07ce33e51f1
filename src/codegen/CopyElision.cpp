#include "codegen/CopyElision.h"

#include <algorithm>
#include <vector>

#include "ir/IRVisitor.h"

namespace nkic::codegen {

namespace {

// How often each tensor is read and written, anywhere in the kernel.
struct Uses final : ir::IRVisitor {
  std::vector<int> reads, writes;
  std::vector<bool> aliased;  // some view (reshape) names the tensor's bytes
  explicit Uses(const ir::Kernel& k) : reads(k.tensors.size(), 0), writes(k.tensors.size(), 0), aliased(k.tensors.size()) {
    for (const ir::TensorDecl& t : k.tensors)
      if (t.alias_of >= 0) aliased[t.alias_of] = true;
  }
  void read(const ir::Access& a) {
    ++reads[a.tensor];
    for (const ir::IndirectIndex& i : a.indirect) read(i.index);
  }
  void visit(const ir::Instruction& in) override {
    for (const ir::Access& a : in.srcs) read(a);
    if (in.has_dst()) {
      ++writes[in.dst.tensor];
      for (const ir::IndirectIndex& i : in.dst.indirect) read(i.index);
    }
    for (const ir::Access& a : in.extra_dsts) ++writes[a.tensor];
  }
  void visit(const ir::Loop& l) override {
    if (l.dynamic_ub) read(*l.dynamic_ub);
    if (l.while_cond) read(*l.while_cond);
    for (const ir::Access& a : l.peers) read(a);
    visit_block(l.body);
  }
};

// For each dimension of tmp, the Grid coordinate `a` walks it with (a plain
// coordinate, unit step, from 0, over the whole dimension), or -1 for a unit
// dimension `a` indexes with 0; empty when `a` is not such a whole view.
std::vector<int> whole_view(const ir::Access& a, const ir::TensorDecl& t, const std::vector<int64_t>& shape) {
  std::vector<int> g(a.index.size(), -1);
  if (!a.indirect.empty() || a.index.size() != t.shape.size()) return {};
  for (size_t d = 0; d < a.index.size(); ++d) {
    const ir::AffineExpr& e = a.index[d];
    if (t.shape[d] == 1 && e.is_constant() && e.constant() == 0) continue;
    const int k = e.single_grid_var();
    if (k < 0 || e.constant() != 0 || !e.is_affine() || e.terms().size() != 1 || e.terms()[0].coeff != 1 ||
        shape.at(k) != t.shape[d])
      return {};
    if (std::find(g.begin(), g.end(), k) != g.end()) return {};  // a diagonal is not the whole tensor
    g[d] = k;
  }
  return g;
}

// Whether `in`, writing `dst`, reads any element of dst's tensor other than the one it writes
// at the same point: an elementwise instruction that reads dst exactly where it writes it works
// in place (each point reads its element before writing it), as neuronx-cc compiles
// `t[...] = nisa.activation(data=t[...])`.
// A view (reshape) of dst's bytes counts as other elements.
bool reads_other_elements(const ir::Instruction& in, const ir::Access& dst, const ir::Kernel& k) {
  const bool pointwise = ir::info(in.opcode).exec == ir::Exec::Elementwise && dst.indirect.empty();
  for (const ir::Access& a : in.srcs)
    if (k.root(a.tensor) == k.root(dst.tensor) &&
        !(pointwise && a.tensor == dst.tensor && a.indirect.empty() && a.index == dst.index))
      return true;
  return false;
}

// Retargets `p` (which wrote tmp) to write what `c` wrote; false when it may not.
bool fold(ir::Instruction& p, const ir::Instruction& c, const ir::Kernel& k, const Uses& uses) {
  if (c.opcode != ir::Opcode::Copy && c.opcode != ir::Opcode::Load && c.opcode != ir::Opcode::Store) return false;
  if (!p.has_dst() || c.srcs.size() != 1 || c.srcs[0].tensor != p.dst.tensor || !p.extra_dsts.empty()) return false;
  const int tmp = p.dst.tensor, dst = c.dst.tensor;
  const ir::TensorDecl& t = k.tensor(tmp);
  const ir::TensorDecl& d = k.tensor(dst);
  if (t.role != ir::Role::Local || t.alias_of >= 0 || uses.aliased[tmp] || uses.reads[tmp] != 1 ||
      uses.writes[tmp] != 1)
    return false;
  if (t.memory != d.memory || t.dtype != d.dtype || !c.dst.indirect.empty()) return false;
  if (c.engine != ir::Engine::none && c.engine != ir::engine_of(p)) return false;  // the copy names its own engine
  if (p.accumulate || p.oob_skip || c.oob_skip) return false;
  // Accumulating into dst: only the Tensor Engine adds its result to PSUM in place, with the same rounding.
  if (c.accumulate && !(p.opcode == ir::Opcode::Matmul && d.memory == ir::Memory::PSUM)) return false;
  const std::vector<int> pg = whole_view(p.dst, t, p.shape), cg = whole_view(c.srcs[0], t, c.shape);
  if (pg.empty() || cg.empty()) return false;
  // The copy's coordinate walking tmp dim d becomes the producer's; the copy's
  // other coordinates are unit (they index nothing of tmp).
  std::vector<ir::AffineExpr> subst(c.shape.size(), ir::AffineExpr(0));
  std::vector<bool> mapped(c.shape.size(), false);
  for (size_t d = 0; d < cg.size(); ++d) {
    if (cg[d] < 0) continue;
    subst[cg[d]] = pg[d] < 0 ? ir::AffineExpr(0) : ir::AffineExpr::grid(pg[d]);
    mapped[cg[d]] = true;
  }
  for (size_t k = 0; k < c.shape.size(); ++k)
    if (!mapped[k] && c.shape[k] != 1) return false;
  // Masks: the copy either has none or the producer's own, read in the producer's
  // coordinates (a matmul's mask on loop variables masks its `+=` copy too).
  if (!c.predicate.empty()) {
    if (p.predicate.size() != c.predicate.size()) return false;
    for (size_t i = 0; i < c.predicate.size(); ++i)
      if (c.predicate[i].kind != p.predicate[i].kind || c.predicate[i].expr.substitute_grid(subst) != p.predicate[i].expr)
        return false;
  }
  ir::Access a = c.dst;
  for (ir::AffineExpr& e : a.index) e = e.substitute_grid(subst);
  if (reads_other_elements(p, a, k)) return false;
  p.dst = std::move(a);
  p.accumulate = c.accumulate;
  return true;
}

void elide(ir::Block& b, const ir::Kernel& k, const Uses& uses) {
  ir::Block kept;  // rebuilt rather than erased from: unrolled blocks hold 100k statements
  kept.reserve(b.size());
  for (ir::StmtPtr& s : b) {
    if (s->kind == ir::StmtKind::Loop) {
      elide(static_cast<ir::Loop&>(*s).body, k, uses);
    } else if (!kept.empty() && kept.back()->kind == ir::StmtKind::Instruction &&
               fold(static_cast<ir::Instruction&>(*kept.back()), static_cast<const ir::Instruction&>(*s), k, uses)) {
      continue;
    }
    kept.push_back(std::move(s));
  }
  b = std::move(kept);
}

}  // namespace

void elide_copies(ir::Kernel& k) {
  Uses uses(k);
  uses.visit_block(k.body);
  elide(k.body, k, uses);
}

}  // namespace nkic::codegen
