#include "sema/Partitions.h"

#include <algorithm>

namespace nkic::sema {

int64_t partition_start_alignment(int64_t partitions) {
  constexpr int64_t kQuadrant = 32, kHalf = 64;
  return partitions <= kQuadrant ? kQuadrant : partitions <= kHalf ? kHalf : 0;
}

namespace {

bool engine_access(const ir::Instruction& in) {
  if (ir::engine_of(in) == ir::Engine::dma) return false;
  // Row, shuffle and mx instructions walk partitions their own way (their builders check them).
  const ir::Exec e = ir::info(in.opcode).exec;
  return e == ir::Exec::Elementwise || e == ir::Exec::Reduce || e == ir::Exec::Matmul || e == ir::Exec::Move;
}

bool misaligned(int64_t value, int64_t alignment) { return alignment == 0 ? value != 0 : value % alignment != 0; }

}  // namespace

std::optional<PartitionStartViolation> partition_start_violation(const ir::Instruction& in, const ir::Access& a,
                                                                 const ir::TensorDecl& t, const VarLattice& lattice) {
  const size_t pdim = static_cast<size_t>(std::max(t.partition_dim, 0));
  if (ir::is_hbm(t.memory) || !engine_access(in) || a.index.size() <= pdim || !a.indirect.empty()) return std::nullopt;
  const ir::AffineExpr& p = a.index[pdim];
  if (!p.divs().empty()) return std::nullopt;
  // The partitions covered: one per value of the grid coordinate the index walks with
  // coefficient 1 (a partition stride is another rule's), else one.
  int64_t partitions = 1;
  int64_t start = p.constant();
  struct Stride {
    int64_t coeff;
    VarSteps steps;
  };
  std::vector<Stride> strides;
  for (const ir::Term& term : p.terms()) {
    if (term.var.kind == ir::VarKind::Grid) {
      if (term.coeff != 1 || partitions != 1) return std::nullopt;
      partitions = in.shape.at(term.var.id);
      continue;
    }
    const std::optional<VarSteps> s = lattice(term.var);
    if (!s) return std::nullopt;
    start += term.coeff * s->first;
    if (s->count > 1) strides.push_back({term.coeff, *s});
  }
  const int64_t alignment = partition_start_alignment(partitions);
  // Every start is aligned when the first is and every step keeps it so; else name the first
  // start that is not.
  int64_t bad = misaligned(start, alignment) ? start : -1;
  for (const Stride& s : strides)
    if (bad < 0 && misaligned(s.coeff * s.steps.step, alignment)) bad = start + s.coeff * s.steps.step;
  if (bad < 0) return std::nullopt;
  return PartitionStartViolation{partitions, bad, alignment};
}

}  // namespace nkic::sema
