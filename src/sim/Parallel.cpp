#include "sim/Parallel.h"

#include <algorithm>
#include <cstdlib>

#include "ir/IRVisitor.h"
#include "sim/IndirectExec.h"

namespace nkic::sim {

namespace {

// Below this many points per run the threads' start-up costs more than they save.
constexpr double kMinPoints = 1 << 16;

// The tile instructions, which touch memory only through their accesses over
// the iteration space (row instructions walk each access over its own width).
bool tile_opcode(ir::Opcode op) {
  switch (ir::info(op).exec) {
    case ir::Exec::Move:
    case ir::Exec::Elementwise:
    case ir::Exec::Reduce:
    case ir::Exec::Matmul: return true;
    default: return false;
  }
}

bool divs_read(const ir::AffineExpr& e, ir::Var x) {
  for (const ir::DivTerm& d : e.divs())
    for (ir::Var v : d.num.vars())
      if (v == x) return true;
  return false;
}

}  // namespace

ParallelRegion::ParallelRegion(const ir::Kernel& k, const ir::Block& body, const ir::Loop* split)
    : k_(k),
      split_(split),
      private_(k.tensors.size(), false),
      read_(k.tensors.size(), false),
      writes_(k.tensors.size()),
      inner_(k.num_axes, nullptr) {
  scan(body);
}

ParallelRegion ParallelRegion::programs(const ir::Kernel& k, const std::vector<int>& per_instance) {
  ParallelRegion r(k, k.body, nullptr);
  for (int t : per_instance) r.private_[r.root(t)] = true;
  for (size_t t = 0; t < k.tensors.size(); ++t) r.private_[t] = r.private_[r.root(static_cast<int>(t))];
  r.drop_private();
  return r;
}

ParallelRegion ParallelRegion::loop(const ir::Kernel& k, const ir::Loop& l) {
  ParallelRegion r(k, l.body, &l);
  if (l.while_cond || !l.peers.empty()) r.eligible_ = false;
  r.inner_[l.axis] = &l;
  for (size_t t = 0; t < k.tensors.size(); ++t) {
    const ir::TensorDecl& d = k.tensor(r.root(static_cast<int>(t)));
    r.private_[t] = !ir::is_hbm(d.memory) && d.alloc_axis >= 0 && r.inner_[d.alloc_axis] != nullptr;
  }
  r.drop_private();
  return r;
}

void ParallelRegion::drop_private() {
  for (size_t t = 0; t < private_.size(); ++t)
    if (private_[t]) writes_[t].clear();
  std::erase_if(shared_, [this](int t) { return private_[t]; });
  std::sort(shared_.begin(), shared_.end());
  shared_.erase(std::unique(shared_.begin(), shared_.end()), shared_.end());
}

int ParallelRegion::root(int t) const { return k_.root(t); }

void ParallelRegion::scan(const ir::Block& b) {
  for (const ir::StmtPtr& s : b) {
    if (s->kind == ir::StmtKind::Instruction) {
      scan(static_cast<const ir::Instruction&>(*s));
      continue;
    }
    const auto& l = static_cast<const ir::Loop&>(*s);
    inner_[l.axis] = &l;
    for (const auto* a : {&l.dynamic_ub, &l.while_cond})
      if (*a) {
        read_[root((*a)->tensor)] = true;
        shared_.push_back((*a)->tensor);
      }
    for (const ir::Access& a : l.peers) {
      read_[root(a.tensor)] = true;
      shared_.push_back(a.tensor);
    }
    const double saved = trips_;
    if (!l.dynamic_ub && !l.while_cond) trips_ *= static_cast<double>(std::max<int64_t>(l.tripcount(), 0));
    scan(l.body);
    trips_ = saved;
  }
}

void ParallelRegion::scan(const ir::Instruction& in) {
  if (!tile_opcode(in.opcode) || IndirectExec::handles(in) || !in.dst.indirect.empty()) eligible_ = false;
  // The reduce accumulator is one register that every iteration and program reads and writes.
  if (in.acc_cmd != ir::AccCmd::none) eligible_ = false;
  double points = trips_;
  for (int64_t n : in.shape) points *= static_cast<double>(n);
  points_ += points;
  for (const ir::Access& a : in.srcs) {
    if (!a.indirect.empty()) eligible_ = false;
    read_[root(a.tensor)] = true;
    shared_.push_back(a.tensor);
  }
  // An accumulation reads only the elements it writes: no other program or iteration's.
  writes_[root(in.dst.tensor)].push_back({&in, &in.dst});
  shared_.push_back(in.dst.tensor);
}

bool ParallelRegion::disjoint(int r, ir::Var x, int64_t step, const int64_t* loop, const int64_t* pid) const {
  const std::vector<Write>& ws = writes_[r];
  const int tensor = ws.front().dst->tensor;
  for (const Write& w : ws)
    if (w.dst->tensor != tensor) return false;  // writes through different views
  const size_t rank = k_.tensor(tensor).shape.size();
  for (size_t d = 0; d < rank; ++d) {
    const int64_t c = ws.front().dst->index[d].coeff(x);
    if (c == 0) continue;
    int64_t mn = INT64_MAX, mx = INT64_MIN;
    bool ok = true;
    for (const Write& w : ws) {
      const ir::AffineExpr& e = w.dst->index[d];
      if (e.coeff(x) != c || divs_read(e, x)) {
        ok = false;
        break;
      }
      const ir::AffineExpr rest = e - ir::AffineExpr::var(x, c);
      auto range = [&](ir::Var v) -> std::pair<int64_t, int64_t> {
        switch (v.kind) {
          case ir::VarKind::Grid: return {0, w.in->shape.at(v.id) - 1};
          case ir::VarKind::ProgramId:
            if (split_) return {pid[v.id], pid[v.id]};
            return {0, k_.grid.at(v.id) - 1};
          case ir::VarKind::Loop: {
            const ir::Loop* l = inner_[v.id];
            if (!l) return {loop[v.id], loop[v.id]};
            if (l->runtime()) ok = false;
            const int64_t last = l->lb + std::max<int64_t>(l->tripcount() - 1, 0) * l->stride;
            return {std::min(l->lb, last), std::max(l->lb, last)};
          }
        }
        return {0, 0};
      };
      auto [lo, hi] = rest.bounds(range);
      mn = std::min(mn, lo);
      mx = std::max(mx, hi);
    }
    if (ok && mx - mn < std::abs(c * step)) return true;
  }
  return false;
}

bool ParallelRegion::splits(const std::vector<TensorMem>& mem, const int64_t* loop, const int64_t* pid) const {
  if (!eligible_ || points_ < kMinPoints) return false;
  for (size_t r = 0; r < writes_.size(); ++r) {
    if (writes_[r].empty()) continue;
    if (read_[r]) return false;
    for (const Write& w : writes_[r])
      if (mem[w.dst->tensor].tracked || mem[w.dst->tensor].accumulator || mem[r].tracked || mem[r].accumulator)
        return false;
    if (split_) {
      if (!disjoint(static_cast<int>(r), {ir::VarKind::Loop, split_->axis}, split_->stride, loop, pid)) return false;
      continue;
    }
    for (size_t a = 0; a < k_.grid.size(); ++a)
      if (k_.grid[a] > 1 && !disjoint(static_cast<int>(r), {ir::VarKind::ProgramId, static_cast<int>(a)}, 1, loop, pid))
        return false;
  }
  return true;
}

}  // namespace nkic::sim
