#include "perf/Hoisting.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace nkic::perf {

namespace {

bool uses_axis(const ir::AffineExpr& e, int axis) {
  for (const ir::Var& v : e.vars())
    if (v.kind == ir::VarKind::Loop && v.id == axis) return true;
  return false;
}

bool varies(const ir::Access& a, int axis) {
  if (!a.indirect.empty()) return true;  // the index tile's contents are run-time values
  for (const ir::AffineExpr& e : a.index)
    if (uses_axis(e, axis)) return true;
  return false;
}

// The operands and the iteration space of `in` are the same in every iteration
// of loop `axis`, and running it twice has no effect of its own.
bool fixed_in(const ir::Kernel& k, const ir::Instruction& in, int axis) {
  const ir::Exec exec = ir::info(in.opcode).exec;
  if (exec == ir::Exec::Side || exec == ir::Exec::Collective) return false;
  if (!in.has_dst() || in.accumulate || in.acc_cmd != ir::AccCmd::none) return false;
  if (ir::is_hbm(k.tensor(in.dst.tensor).memory)) return false;  // stores stay where they are
  if (varies(in.dst, axis) || uses_axis(in.value, axis)) return false;
  for (const ir::Access& a : in.srcs)
    if (varies(a, axis)) return false;
  for (const ir::Access& a : in.extra_dsts)
    if (varies(a, axis)) return false;
  for (const ir::Constraint& c : in.predicate)
    if (uses_axis(c.expr, axis)) return false;
  for (const ir::Constraint& c : in.cond)
    if (uses_axis(c.expr, axis)) return false;
  return true;
}

struct Body {
  std::vector<const ir::Instruction*> order;  // every instruction of the body, nested ones too
  std::vector<bool> direct;

  void collect(const ir::Block& b, bool top) {
    for (const ir::StmtPtr& s : b) {
      if (s->kind == ir::StmtKind::Instruction) {
        order.push_back(static_cast<const ir::Instruction*>(s.get()));
        direct.push_back(top);
      } else {
        collect(static_cast<const ir::Loop*>(s.get())->body, false);
      }
    }
  }
};

std::vector<int> written(const ir::Kernel& k, const ir::Instruction& in) {
  std::vector<int> w;
  if (in.has_dst()) w.push_back(k.root(in.dst.tensor));
  for (const ir::Access& a : in.extra_dsts) w.push_back(k.root(a.tensor));
  return w;
}

std::vector<int> read(const ir::Kernel& k, const ir::Instruction& in) {
  std::vector<int> r;
  for (const ir::Access& a : in.srcs) r.push_back(k.root(a.tensor));
  if (in.accumulate && in.has_dst()) r.push_back(k.root(in.dst.tensor));
  return r;
}

bool shares(const std::vector<int>& a, const std::vector<int>& b) {
  for (int x : a)
    for (int y : b)
      if (x == y) return true;
  return false;
}

struct Uses {
  int writers = 0, not_hoisted = 0;
  size_t last_write = 0, first_read = SIZE_MAX;
};

// A fixed instruction is hoisted when every tensor it reads is written in the
// body only by hoisted instructions before it, nothing else in the body writes
// what it writes, and nothing before it reads that (iteration 0 would see the
// value from before the loop). Writers precede their readers, so one pass in
// program order decides each instruction after everything it depends on.
void hoist(const ir::Kernel& k, const ir::Loop& l, std::unordered_map<const ir::Instruction*, int>& out) {
  Body b;
  b.collect(l.body, true);
  const size_t n = b.order.size();
  std::vector<std::vector<int>> w(n), r(n);
  std::vector<bool> up(n);
  std::unordered_map<int, Uses> uses;
  for (size_t i = 0; i < n; ++i) {
    w[i] = written(k, *b.order[i]);
    r[i] = read(k, *b.order[i]);
    up[i] = b.direct[i] && fixed_in(k, *b.order[i], l.axis) && !shares(r[i], w[i]);
    for (int t : w[i]) {
      Uses& u = uses[t];
      ++u.writers;
      u.last_write = i;
      if (!up[i]) ++u.not_hoisted;
    }
    for (int t : r[i]) uses[t].first_read = std::min(uses[t].first_read, i);
  }
  for (size_t c = 0; c < n; ++c) {
    if (!up[c]) continue;
    bool keep = true;
    for (int t : r[c]) {
      const Uses& u = uses[t];
      if (u.not_hoisted > 0 || (u.writers > 0 && u.last_write > c)) keep = false;
    }
    for (int t : w[c]) {
      const Uses& u = uses[t];
      const auto own = std::count(w[c].begin(), w[c].end(), t);
      if (u.writers > own || u.first_read < c) keep = false;
    }
    if (keep) {
      out[b.order[c]] = l.axis;
    } else {
      up[c] = false;
      for (int t : w[c]) ++uses[t].not_hoisted;
    }
  }
}

void visit(const ir::Kernel& k, const ir::Block& b, std::unordered_map<const ir::Instruction*, int>& out) {
  for (const ir::StmtPtr& s : b) {
    if (s->kind != ir::StmtKind::Loop) continue;
    const auto& l = *static_cast<const ir::Loop*>(s.get());
    hoist(k, l, out);
    visit(k, l.body, out);
  }
}

}  // namespace

std::unordered_map<const ir::Instruction*, int> loop_invariant(const ir::Kernel& k) {
  std::unordered_map<const ir::Instruction*, int> out;
  if (!k.current_api) visit(k, k.body, out);
  return out;
}

}  // namespace nkic::perf
