#include <algorithm>
#include <limits>

#include "sema/Allocation.h"

namespace nkic::sema {

namespace {

// Visits every access of `body` with the loops around it (`stack`, outermost first).
void count_blocks(const ir::Kernel& k, const ir::Block& body, std::vector<const ir::Loop*>& stack,
                  std::vector<int64_t>& blocks) {
  auto visit = [&](const ir::Access& a) {
    const ir::TensorDecl& d = k.tensor(a.tensor);
    if (d.memory != ir::Memory::SBUF || d.alias_of >= 0 || d.partition_dim <= 0 || !a.indirect.empty()) return;
    std::vector<int> picks;  // the loops whose variables pick the block
    for (int dim = 0; dim < d.partition_dim && static_cast<size_t>(dim) < a.index.size(); ++dim)
      for (const ir::Var& v : a.index[dim].vars())
        if (v.kind == ir::VarKind::Loop) picks.push_back(v.id);
    auto picks_block = [&](const ir::Loop* l) { return std::find(picks.begin(), picks.end(), l->axis) != picks.end(); };
    size_t first = 0;  // the loops inside the tile's declaring loop
    for (size_t i = 0; i < stack.size(); ++i)
      if (stack[i]->axis == d.alloc_axis) first = i + 1;
    auto times = [](int64_t a, int64_t b) {  // saturating: trip counts multiply past int64
      return b > 0 && a > std::numeric_limits<int64_t>::max() / b ? std::numeric_limits<int64_t>::max() : a * b;
    };
    int64_t all = 1;  // the tile's blocks: no more are ever live
    for (int dim = 0; dim < d.partition_dim && static_cast<size_t>(dim) < d.shape.size(); ++dim)
      all = times(all, d.shape[dim]);
    int64_t held = 1;
    for (size_t i = first; i < stack.size(); ++i) {
      if (picks_block(stack[i]) || stack[i]->runtime() || stack[i]->tripcount() < 2) continue;
      int64_t read = 1;
      for (size_t j = i + 1; j < stack.size(); ++j)
        if (picks_block(stack[j]) && !stack[j]->runtime()) read = times(read, std::max<int64_t>(1, stack[j]->tripcount()));
      held = std::max(held, read);
    }
    blocks[d.id] = std::max(blocks[d.id], std::min(held, all));
  };
  for (const ir::StmtPtr& st : body) {
    if (st->kind == ir::StmtKind::Loop) {
      const auto* l = static_cast<const ir::Loop*>(st.get());
      stack.push_back(l);
      count_blocks(k, l->body, stack, blocks);
      stack.pop_back();
      continue;
    }
    const auto& in = static_cast<const ir::Instruction&>(*st);
    if (in.has_dst()) visit(in.dst);
    for (const ir::Access& a : in.srcs) visit(a);
    for (const ir::Access& a : in.extra_dsts) visit(a);
  }
}

}  // namespace

std::vector<int64_t> held_blocks(const ir::Kernel& k) {
  std::vector<int64_t> blocks(k.tensors.size(), 1);
  std::vector<const ir::Loop*> stack;
  count_blocks(k, k.body, stack, blocks);
  return blocks;
}

}  // namespace nkic::sema
