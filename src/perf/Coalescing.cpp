#include "perf/Coalescing.h"

namespace nkic::perf {

namespace {

bool plain_dma(const ir::Instruction& in) {
  if (ir::engine_of(in) != ir::Engine::dma || ir::info(in.opcode).cost != ir::Cost::dma) return false;
  if (!in.dst.indirect.empty()) return false;  // a gather or scatter: one descriptor per row read at run time
  for (const ir::Access& a : in.srcs)
    if (!a.indirect.empty()) return false;
  return true;
}

// Whether `l` runs its iterations independently at compile-time bounds and its body,
// nested loops included, holds only plain DMAs.
bool moves_only(const ir::Loop& l) {
  if (l.type != ir::AxisType::Affine || l.runtime()) return false;
  for (const ir::StmtPtr& s : l.body) {
    if (s->kind == ir::StmtKind::Loop) {
      if (!moves_only(static_cast<const ir::Loop&>(*s))) return false;
    } else if (!plain_dma(static_cast<const ir::Instruction&>(*s))) {
      return false;
    }
  }
  return true;
}

void visit(const ir::Block& b, std::vector<const ir::Loop*>& nest, bool inside,
           std::unordered_map<const ir::Instruction*, std::vector<const ir::Loop*>>& out) {
  for (const ir::StmtPtr& s : b) {
    if (s->kind == ir::StmtKind::Instruction) {
      if (inside) out[static_cast<const ir::Instruction*>(s.get())] = nest;
      continue;
    }
    const auto& l = static_cast<const ir::Loop&>(*s);
    const bool merged = inside || (l.tripcount() > 1 && moves_only(l));
    if (merged) nest.push_back(&l);
    visit(l.body, nest, merged, out);
    if (merged) nest.pop_back();
  }
}

}  // namespace

std::unordered_map<const ir::Instruction*, std::vector<const ir::Loop*>> coalesced_dmas(const ir::Kernel& k) {
  std::unordered_map<const ir::Instruction*, std::vector<const ir::Loop*>> out;
  std::vector<const ir::Loop*> nest;
  if (!k.current_api) visit(k.body, nest, false, out);
  return out;
}

}  // namespace nkic::perf
