#include "sim/RaceCheck.h"

#include <algorithm>
#include <string>

#include "sim/Simulator.h"

namespace nkic::sim {

namespace {

std::string loop_name(const ir::Loop& l) { return "affine loop `" + l.name + "`"; }

// Whether any of the n stamps lies in [first, first + span): one branch-free
// pass the compiler vectorises, ahead of the exact (rare) search.
bool any_in(const int64_t* stamp, int64_t start, int64_t step, int64_t n, int64_t first,
            int64_t span) {
  bool any = false;
  if (step == 1) {
    for (int64_t i = 0; i < n; ++i)
      any |= static_cast<uint64_t>(stamp[start + i] - first) < static_cast<uint64_t>(span);
  } else {
    for (int64_t i = 0; i < n; ++i)
      any |= static_cast<uint64_t>(stamp[start + i * step] - first) < static_cast<uint64_t>(span);
  }
  return any;
}

bool same_access(const ir::Access& a, const ir::Access& b) {
  return a.tensor == b.tensor && a.indirect.empty() && b.indirect.empty() && a.index == b.index;
}

bool same_predicate(const ir::Predicate& a, const ir::Predicate& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const ir::Constraint& x, const ir::Constraint& y) { return x.kind == y.kind && x.expr == y.expr; });
}

// An add, max or min of two tiles (the associative, commutative folds).
bool associative_op(const ir::Instruction& in) {
  return in.opcode == ir::Opcode::TensorTensor && in.steps.empty() && in.srcs.size() == 2 &&
         (in.alu == ir::AluOp::add || in.alu == ir::AluOp::maximum || in.alu == ir::AluOp::minimum);
}

// The source of `in` that is its own dst (the accumulated tile), or -1.
int own_operand(const ir::Instruction& in) {
  for (int s = 0; s < 2; ++s)
    if (same_access(in.srcs[s], in.dst)) return s;
  return -1;
}

// The source of `op` that `back` (the next instruction) overwrites with op's
// result, unchanged and at the same points, or -1.
int copied_back_operand(const ir::Instruction& op, const ir::Instruction& back) {
  if (back.opcode != ir::Opcode::Copy || back.accumulate || back.srcs.size() != 1 ||
      !same_access(back.srcs[0], op.dst) || back.shape != op.shape || !same_predicate(back.predicate, op.predicate))
    return -1;
  for (int s = 0; s < 2; ++s)
    if (same_access(op.srcs[s], back.dst)) return s;
  return -1;
}

void find_associative(const ir::Block& block, std::unordered_map<const ir::Instruction*, int>& out) {
  const ir::Instruction* prev = nullptr;
  for (const ir::StmtPtr& st : block) {
    if (st->kind == ir::StmtKind::Loop) {
      find_associative(static_cast<const ir::Loop&>(*st).body, out);
      prev = nullptr;
      continue;
    }
    const auto& in = static_cast<const ir::Instruction&>(*st);
    if (associative_op(in) && !in.accumulate) {
      if (const int s = own_operand(in); s >= 0) out[&in] = s;
    }
    if (prev && associative_op(*prev) && !prev->accumulate && !out.count(prev)) {
      if (const int s = copied_back_operand(*prev, in); s >= 0) {
        out[prev] = s;
        out[&in] = -1;
      }
    }
    prev = &in;
  }
}

}  // namespace

RaceCheck::RaceCheck(const std::vector<TensorMem>& mem, const ir::Kernel& k) : mem_(mem), marks_(mem.size()) {
  find_associative(k.body, associative_);
}

bool RaceCheck::accumulates(const ir::Instruction& in) const {
  if (in.accumulate) return true;
  const auto it = associative_.find(&in);
  // The op into a temporary reads the tile; only its copy back (or the op into
  // the tile itself) writes it.
  return it != associative_.end() && (it->second < 0 || same_access(in.srcs[it->second], in.dst));
}

int RaceCheck::accumulated_src(const ir::Instruction& in) const {
  const auto it = associative_.find(&in);
  return it == associative_.end() ? -1 : it->second;
}

void RaceCheck::enter(const ir::Loop& l) {
  levels_.emplace_back();
  levels_.back().loop = &l;
}

void RaceCheck::next_iteration() { levels_.back().starts.push_back(++now_); }

void RaceCheck::leave() { levels_.pop_back(); }

void RaceCheck::fresh(int tensor) {
  Marks& m = marks_[tensor];
  // What an earlier allocation held is no value of this one: reading it is an
  // uninitialized read (sim/Uninit.h), not a dependency on that iteration.
  std::fill(m.stamp.begin(), m.stamp.end(), 0);
  if (!m.has_ambiguous) return;
  std::fill(m.ambiguous.begin(), m.ambiguous.end(), 0);
  m.has_ambiguous = false;
}

bool RaceCheck::watches_reads(int tensor) const {
  const Marks& m = marks_[tensor];
  return (!levels_.empty() && !m.stamp.empty()) || m.has_ambiguous;
}

bool RaceCheck::watches_writes(int tensor) const {
  return !levels_.empty() || marks_[tensor].has_ambiguous;
}

int RaceCheck::conflict(int64_t s) const {
  for (int i = static_cast<int>(levels_.size()); i-- > 0;) {
    const std::vector<int64_t>& st = levels_[i].starts;
    if (s >= st.front() && s < st.back()) return i;
  }
  return -1;
}

bool RaceCheck::running(int64_t execution) const {
  for (const Level& l : levels_)
    if (l.starts.front() == execution) return true;
  return false;
}

// The slow paths below remember the last stamp (or execution) they looked up:
// the elements of one row were mostly written by one instruction execution.

void RaceCheck::read(int tensor, int64_t start, int64_t step, int64_t n) {
  const Marks& m = marks_[tensor];
  if (!levels_.empty() && !m.stamp.empty()) {
    // Stamps older than the outermost execution or from the current innermost
    // iteration conflict with no running loop.
    const int64_t first = levels_.front().starts.front();
    const int64_t* stamp = m.stamp.data();
    if (any_in(stamp, start, step, n, first, levels_.back().starts.back() - first)) {
      int64_t seen = -1;
      for (int64_t i = 0, at = start; i < n; ++i, at += step) {
        if (stamp[at] == seen) continue;
        seen = stamp[at];
        const int level = conflict(seen);
        if (level >= 0) report_read(level, seen, tensor, at);
      }
    }
  }
  if (!m.has_ambiguous) return;
  int64_t running_execution = 0;
  for (int64_t i = 0, at = start; i < n; ++i, at += step) {
    const int64_t a = m.ambiguous[at];
    if (a == 0 || a == running_execution) continue;
    if (!running(a)) report_ambiguous(a, tensor, at);
    running_execution = a;
  }
}

void RaceCheck::write(int tensor, int64_t start, int64_t step, int64_t n, bool accumulating) {
  Marks& m = marks_[tensor];
  if (levels_.empty()) {
    // Outside checked loops only a rewrite of an ambiguous element matters.
    if (accumulating) return;
    for (int64_t i = 0, at = start; i < n; ++i, at += step) m.ambiguous[at] = 0;
    return;
  }
  const TensorMem& t = mem_[tensor];
  const int64_t numel = t.decl->num_elements();
  if (m.stamp.empty()) m.stamp.assign(numel, 0);
  int64_t* stamp = m.stamp.data();
  const int64_t first = levels_.front().starts.front(), now = now_;
  if (accumulating) {
    for (int64_t i = 0, at = start; i < n; ++i, at += step)
      stamp[at] = stamp[at] < first ? now : stamp[at];
    return;
  }
  if (!any_in(stamp, start, step, n, first, levels_.back().starts.back() - first)) {
    for (int64_t i = 0, at = start; i < n; ++i, at += step) stamp[at] = now;
    if (m.has_ambiguous)
      for (int64_t i = 0, at = start; i < n; ++i, at += step) m.ambiguous[at] = 0;
    return;
  }
  const bool on_chip = !ir::is_hbm(t.decl->memory);
  int64_t seen = -1, execution = 0;  // the last stamp looked up, the execution it raced in
  for (int64_t i = 0, at = start; i < n; ++i, at += step) {
    if (stamp[at] != seen) {
      seen = stamp[at];
      const int level = conflict(seen);
      execution = 0;
      if (level >= 0) {
        if (!on_chip) report_write(level, seen, tensor, at);
        Level& l = levels_[level];
        execution = l.starts.front();
        if (!l.recorded) {
          executions_.emplace_back(execution, l.loop);
          l.recorded = true;
        }
        if (m.ambiguous.empty()) m.ambiguous.assign(numel, 0);
        m.has_ambiguous = true;
      }
    }
    if (m.has_ambiguous) m.ambiguous[at] = execution;
    stamp[at] = now;
  }
}

int64_t RaceCheck::induction(const Level& l, int64_t stamp) const {
  const auto it = std::upper_bound(l.starts.begin(), l.starts.end(), stamp);
  return l.loop->lb + (it - l.starts.begin() - 1) * l.loop->stride;
}

void RaceCheck::report_write(int level, int64_t stamp, int tensor, int64_t at) const {
  const Level& l = levels_[level];
  const TensorMem& t = mem_[tensor];
  sim_error("err_unexpected_output_dependencies",
                 "iterations " + std::to_string(induction(l, stamp)) + " and " +
                     std::to_string(induction(l, now_)) + " of " + loop_name(*l.loop) +
                     " both write tensor `" + t.decl->name + "` (element " + element_str(t, at) +
                     "); index the write by the loop variable or use nl.sequential_range",
                 l.loop->loc);
}

void RaceCheck::report_read(int level, int64_t stamp, int tensor, int64_t at) const {
  const Level& l = levels_[level];
  const TensorMem& t = mem_[tensor];
  sim_error("err_unexpected_output_dependencies",
                 "iteration " + std::to_string(induction(l, now_)) + " of " + loop_name(*l.loop) +
                     " reads tensor `" + t.decl->name +
                     "` written by iteration " + std::to_string(induction(l, stamp)) + " (element " +
                     element_str(t, at) + "); a loop-carried dependency needs nl.sequential_range",
                 l.loop->loc);
}

void RaceCheck::report_ambiguous(int64_t execution, int tensor, int64_t at) const {
  const auto it = std::find_if(executions_.begin(), executions_.end(),
                               [&](const auto& e) { return e.first == execution; });
  const ir::Loop& loop = *it->second;
  const TensorMem& t = mem_[tensor];
  sim_error("err_unexpected_output_dependencies",
                 "tensor `" + t.decl->name + "` (element " + element_str(t, at) +
                     ") is read after several iterations of " + loop_name(loop) +
                     " wrote it, so its value depends on their order; index the write by the "
                     "loop variable or use nl.sequential_range",
                 loop.loc);
}

}  // namespace nkic::sim
