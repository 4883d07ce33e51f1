#include "perf/CostModel.h"

#include <algorithm>
#include <deque>
#include <unordered_map>
#include <unordered_set>

#include "ir/IRVisitor.h"
#include "perf/Coalescing.h"
#include "perf/Hoisting.h"
#include "sema/ErrorCatalog.h"

namespace nkic::perf {

namespace {

// Instructions numbered in program order; a loop body's instructions are the
// contiguous sites [first, last).
struct Sites {
  std::unordered_map<const ir::Instruction*, int> site;
  std::unordered_map<const ir::Loop*, std::pair<int, int>> body;
  std::vector<std::vector<int>> allocated_in;  // by loop axis: tensors declared in its body
  std::unordered_map<const ir::Loop*, std::vector<int>> rotating;  // declared in its body or a nested one
  BufferPlan buffers;
  std::vector<int> on_chip;                    // fresh in every program
  std::vector<const ir::Instruction*> order;   // by site
  std::vector<bool> folded;                    // by site: costs nothing (fold_psum_zeroing)
  std::vector<std::vector<const ir::Loop*>> coalesced;  // by site: the loops a coalesced DMA spans
  std::unordered_set<const ir::Loop*> coalesced_loops;  // every loop of those
  std::vector<int> owner;                      // kernel[n], by root tensor: the core that touches it first
  int count = 0;

  void number(const ir::Block& b) {
    for (const ir::StmtPtr& s : b) {
      if (s->kind == ir::StmtKind::Instruction) {
        order.push_back(static_cast<const ir::Instruction*>(s.get()));
        site[order.back()] = count++;
      } else {
        const auto* l = static_cast<const ir::Loop*>(s.get());
        const int first = count;
        number(l->body);
        body[l] = {first, count};
      }
    }
  }
};

// Calls f(instruction) for every instruction of statement `s`, loops included.
template <class F>
void each_instruction(const ir::Stmt& s, F&& f) {
  if (s.kind == ir::StmtKind::Instruction) return f(static_cast<const ir::Instruction&>(s));
  for (const ir::StmtPtr& t : static_cast<const ir::Loop&>(s).body) each_instruction(*t, f);
}

// kernel[n]: the core each on-chip tensor belongs to (the first to touch it: its tiles are
// in that core's SBUF), so that an exchange's copy runs on the queues of the core sending.
std::vector<int> tensor_owners(const ir::Kernel& k) {
  std::vector<int> owner(k.tensors.size(), -1);
  for (const ir::Kernel::CoreSpan& span : k.core_spans) {
    if (span.core < 0) continue;
    auto own = [&](const ir::Access& a) {
      if (int& o = owner[k.root(a.tensor)]; o < 0) o = span.core;
    };
    for (size_t i = span.first; i < span.last; ++i)
      each_instruction(*k.body[i], [&](const ir::Instruction& in) {
        if (in.has_dst()) own(in.dst);
        for (const ir::Access& a : in.extra_dsts) own(a);
        for (const ir::Access& a : in.srcs) own(a);
      });
  }
  return owner;
}

bool touches(const ir::Instruction& in, int tensor) {
  if (in.has_dst() && in.dst.tensor == tensor) return true;
  for (const ir::Access& a : in.srcs)
    if (a.tensor == tensor) return true;
  for (const ir::Access& a : in.extra_dsts)
    if (a.tensor == tensor) return true;
  return false;
}

// `acc = nl.zeros(..., buffer=nl.psum)` followed by `acc += nc_matmul(...)`:
// neuronx-cc starts the accumulation group with a matmul that overwrites PSUM
// instead of zeroing it first, so a zeroing memset whose next use is a matmul
// into the same tile costs nothing; followed by `acc[...] = nc_matmul(...)` the
// zeros are never read at all (NKIBench's kernels, as neuronx-cc emits them, zero
// whole PSUM block tiles that matmuls then overwrite block by block).
void fold_psum_zeroing(const ir::Kernel& k, Sites& s) {
  s.folded.assign(s.order.size(), false);
  for (size_t i = 0; i < s.order.size(); ++i) {
    const ir::Instruction& z = *s.order[i];
    if (ir::info(z.opcode).form != ir::Form::fill || z.imms.empty() || z.imms[0] != 0.0 || !z.predicate.empty() ||
        k.tensor(z.dst.tensor).memory != ir::Memory::PSUM)
      continue;
    for (size_t j = i + 1; j < s.order.size(); ++j) {
      const ir::Instruction& next = *s.order[j];
      if (!touches(next, z.dst.tensor)) continue;
      s.folded[i] = ir::info(next.opcode).exec == ir::Exec::Matmul && next.dst.tensor == z.dst.tensor;
      break;
    }
  }
}

// For every loop, the rotated tensors (BufferPlan) declared in its body or a nested loop's.
std::vector<int> collect_rotating(const ir::Block& b, Sites& s) {
  std::vector<int> all;
  for (const ir::StmtPtr& st : b) {
    if (st->kind != ir::StmtKind::Loop) continue;
    const auto* l = static_cast<const ir::Loop*>(st.get());
    std::vector<int> mine = collect_rotating(l->body, s);
    if (static_cast<size_t>(l->axis) < s.allocated_in.size())
      for (int id : s.allocated_in[l->axis])
        if (s.buffers.count[id] > 0) mine.push_back(id);
    all.insert(all.end(), mine.begin(), mine.end());
    s.rotating[l] = std::move(mine);
  }
  return all;
}

class Walker {
 public:
  Walker(const ir::Kernel& k, const sema::Target& t, const Options& o, const Sites& s)
      : k_(k), sites_(s), config_(o.config), prefetch_ring_(o.prefetch_ring), sched_(k, t, o, s.order, s.buffers) {
    env_.loop.assign(k.num_axes, 0);
    env_.pid.assign(k.grid.size(), 0);
    later_.assign(k.num_axes, false);
  }

  Profile run() {
    // SPMD programs run one after another on one NeuronCore, each with fresh on-chip memory.
    iterate(k_.num_programs(), 0, sites_.count, k_.loc, {}, [this](int64_t p) {
      for (size_t d = k_.grid.size(); d-- > 0;) {
        env_.pid[d] = p % k_.grid[d];
        p /= k_.grid[d];
      }
      for (int id : sites_.on_chip) sched_.release(id);
      if (k_.core_spans.empty()) block(k_.body);
      else cores(k_.body, k_.core_spans);
    });
    if (k_.num_programs() > 1) sched_.note("SPMD programs run one after another on one NeuronCore");
    if (k_.physical_cores > 1)
      sched_.note("the " + std::to_string(k_.physical_cores) +
                  " physical cores run on their own engines and DMA queues and wait for each other at every"
                  " core_barrier and sendrecv");
    const auto coalesced = std::count_if(sites_.coalesced.begin(), sites_.coalesced.end(),
                                         [](const std::vector<const ir::Loop*>& l) { return !l.empty(); });
    if (coalesced > 0)
      sched_.note(std::to_string(coalesced) +
                  " DMA instruction(s) in loops that only move data are costed as one transfer over all their"
                  " iterations, its descriptors the contiguous runs of them all, as neuronx-cc coalesces them");
    const std::vector<int>& by_site = sites_.buffers.hoisted;
    const auto hoisted = std::count_if(by_site.begin(), by_site.end(), [](int a) { return a >= 0; });
    if (hoisted > 0)
      sched_.note(std::to_string(hoisted) +
                  " instruction(s) whose operands do not change across their loop's iterations are costed once per"
                  " loop entry, as neuronx-cc hoists them");
    config_notes();
    if (sites_.buffers.recomputed > 0)
      sched_.note(std::to_string(sites_.buffers.recomputed) +
                  " loop-invariant instruction(s) are costed in every iteration: their loop's tiles do not fit on"
                  " chip with the result held over the loop");
    return sched_.finish();
  }

 private:
  // What the prediction takes from the kernel's CompileConfig, and what of it the model does not follow.
  void config_notes() {
    using sema::SchedulingHeuristic;
    if (config_.scheduling() && config_.scheduling_heuristic() != SchedulingHeuristic::Trivial &&
        config_.scheduling_heuristic() != SchedulingHeuristic::Asap)
      sched_.note("scheduling=True with " + sema::scheduling_name(config_) +
                  " is not modelled: costed with the list schedule (ASAP)");
    if (config_.nki_allocates() && config_.allocation_mode() == sema::AllocationMode::MaxReuse)
      sched_.note("allocation LINEAR (MAX_REUSE): a loop tile keeps one buffer and every other tile takes the lowest "
                  "free address, so a write waits for the last reader of the memory it reuses");
    else if (config_.nki_allocates())
      sched_.note("allocation " + sema::allocation_name(config_) +
                  " is costed with the model's own buffer plan (one buffer per tile, more where they fit); the "
                  "address reuse of the RING and FAST modes is not modelled beyond it");
    if (prefetch_ring_ > 0)
      sched_.note("a prefetch ring takes " + std::to_string(prefetch_ring_) +
                  " bytes per partition of SBUF: the tiles' buffers fit in the rest");
    if (config_.nki_allocates() && config_.opt_level() != sema::OptLevel::O0)
      sched_.note("an un-pinned tensor_copy runs on its default engine, as at opt_level O0: the compiler's engine "
                  "choice at O1 and O2 is not modelled");
  }

  // kernel[n]: each span on its core; at a new segment the cores synchronise. An exchange's
  // copy (nisa.sendrecv) runs on the core that owns the tile it sends.
  void cores(const ir::Block& body, const std::vector<ir::CoreSpan>& spans) {
    int segment = 0;
    for (const ir::CoreSpan& span : spans) {
      if (span.segment > segment) {
        sched_.sync();
        segment = span.segment;
      }
      for (size_t i = span.first; i < span.last; ++i) {
        int core = span.core;
        if (core < 0)
          each_instruction(*body[i], [&](const ir::Instruction& in) {
            if (core < 0 && !in.srcs.empty()) core = std::max(0, sites_.owner[k_.root(in.srcs[0].tensor)]);
          });
        sched_.set_core(std::max(core, 0));
        statement(*body[i]);
      }
    }
  }

  void statement(const ir::Stmt& s) {
    if (s.kind == ir::StmtKind::Instruction) {
      const auto* in = static_cast<const ir::Instruction*>(&s);
      const int site = sites_.site.at(in);
      const int h = sites_.buffers.hoisted[site];
      if (!sites_.folded[site] && (h < 0 || !later_[h])) sched_.execute(site, env_, sites_.coalesced[site]);
      else sched_.skip(site);
    } else {
      loop(static_cast<const ir::Loop&>(s));
    }
  }

  void block(const ir::Block& b) {
    for (const ir::StmtPtr& s : b) statement(*s);
  }

  void loop(const ir::Loop& l) {
    int64_t trips = l.tripcount();
    if (l.runtime()) {
      trips = 1;
      sched_.note("a loop whose trip count is known only at run time is costed as one iteration");
    }
    // Trips whose every instruction is masked off add nothing (nor rotate a buffer): only
    // the range that may have work is walked, so a loop's empty tail costs no time to predict.
    const auto [first, last] = l.runtime() ? std::pair<int64_t, int64_t>{0, trips - 1} : active_trips(l, trips, env_);
    const auto [s0, s1] = sites_.body.at(&l);
    const std::vector<int>& fresh =
        static_cast<size_t>(l.axis) < sites_.allocated_in.size() ? sites_.allocated_in[l.axis] : std::vector<int>{};
    trips = std::max<int64_t>(0, last - first + 1);
    // A loop whose transfers are coalesced runs them all in its first iteration.
    if (sites_.coalesced_loops.count(&l)) trips = std::min<int64_t>(trips, 1);
    iterate(trips, s0, s1, l.loc, sites_.rotating.at(&l), [&](int64_t i) {
      env_.loop[l.axis] = l.lb + (first + i) * l.stride;
      later_[l.axis] = i > 0;
      for (int id : fresh) sched_.release(id, true);
      // A loop every core runs (kernel[n]): each trip syncs the cores at its sync points.
      if (l.core_spans.empty()) block(l.body);
      else cores(l.body, l.core_spans);
    });
  }

  // Runs `trips` iterations; once two consecutive groups of `p` iterations (p = 1, or up
  // to kMaxPeriod when transfers alternate between idle gaps and a queue's end, or loads
  // run many buffers ahead of their stores on shared queues) advance every clock by
  // the same delta and add the same totals, the remaining groups but the last two
  // iterations (which may be ragged) are repeated arithmetically; not before every tensor
  // of `rotating` has used each of its physical buffers (until then later iterations wait
  // for buffers differently).
  template <class Body>
  void iterate(int64_t trips, int s0, int s1, const ir::SourceLoc& loc, const std::vector<int>& rotating, Body&& body) {
    constexpr int64_t kMaxPeriod = 16;
    std::deque<std::pair<std::vector<double>, Totals>> seen;  // the state before each recent iteration
    const int64_t since = sched_.num_nodes();
    bool repeated = false;
    for (int64_t i = 0; i < trips; ++i) {
      if (!repeated) seen.emplace_back(sched_.clocks(), sched_.totals(s0, s1));
      if (seen.size() > 2 * kMaxPeriod + 1) seen.pop_front();
      body(i);
      if (repeated || !sched_.rotated(rotating)) continue;
      const std::vector<double> now = sched_.clocks();
      const Totals total = sched_.totals(s0, s1);
      for (int64_t p = 1; p <= kMaxPeriod; ++p) {
        const int64_t m = (trips - i - 3) / p;  // keep the last two iterations explicit
        const size_t n = seen.size();
        if (m <= 0 || n < static_cast<size_t>(2 * p)) continue;
        const auto& [mid, mid_total] = seen[n - p];
        const auto& [old, old_total] = seen[n - 2 * p];
        const std::vector<double> delta = minus(now, mid), prev = minus(mid, old);
        const Totals per = total - mid_total;
        if (delta.empty() || delta.size() != prev.size() || !per.same(mid_total - old_total) || !steady(delta, prev))
          continue;
        sched_.repeat(m, delta, *std::max_element(delta.begin(), delta.end()), per, s0, since, loc);
        i += m * p;
        repeated = true;
        break;
      }
    }
  }

  static std::vector<double> minus(const std::vector<double>& a, const std::vector<double>& b) {
    std::vector<double> d(a.size() == b.size() ? a.size() : 0);
    for (size_t j = 0; j < d.size(); ++j) d[j] = a[j] - b[j];
    return d;
  }

  // Every clock (and gap figure) moved by the same delta as in the previous group, none
  // back, and every one that moved by one common period. A period of 0 is steady too: the
  // group added nothing to any clock (its instructions are hoisted or masked off entirely).
  static bool steady(const std::vector<double>& d, const std::vector<double>& prev) {
    const double period = *std::max_element(d.begin(), d.end());
    if (period < 0) return false;
    for (size_t j = 0; j < d.size(); ++j) {
      const double tol = 1e-6 + 1e-9 * period;
      if (std::abs(d[j] - prev[j]) > tol || d[j] < -tol) return false;  // clocks never go back; gaps may shrink
      if (d[j] > tol && std::abs(d[j] - period) > tol) return false;
    }
    return true;
  }

  const ir::Kernel& k_;
  const Sites& sites_;
  const sema::CompileConfig& config_;
  int64_t prefetch_ring_;
  Schedule sched_;
  Env env_;
  std::vector<bool> later_;  // by loop axis: past its first iteration (hoisted sites are skipped)
};

}  // namespace

Profile predict(const ir::Kernel& k, const sema::Target& target, const Options& opts) {
  if (!target.has_cost_figures()) ir::fail(sema::err_no_cost_figures(target.name));
  Sites s;
  s.number(k.body);
  fold_psum_zeroing(k, s);
  s.owner = tensor_owners(k);
  s.coalesced.resize(s.order.size());
  for (auto& [in, loops] : coalesced_dmas(k)) {
    s.coalesced_loops.insert(loops.begin(), loops.end());
    s.coalesced[s.site.at(in)] = std::move(loops);
  }
  // By site, the loop axis it runs once in, or -1; the buffer plan keeps those whose result fits.
  std::vector<int> hoisted(s.order.size(), -1);
  for (const auto& [in, axis] : loop_invariant(k)) hoisted[s.site.at(in)] = axis;
  const bool max_reuse =
      opts.config.nki_allocates() && opts.config.allocation_mode() == sema::AllocationMode::MaxReuse;
  s.buffers = plan_buffers(k, target, s.order, std::move(hoisted), {max_reuse, opts.prefetch_ring});
  s.allocated_in.resize(k.num_axes);
  for (const ir::TensorDecl& t : k.tensors) {
    if (ir::is_hbm(t.memory) && t.memory != ir::Memory::PrivateHBM) continue;
    if (t.alias_of >= 0) continue;
    s.on_chip.push_back(t.id);
    if (t.alloc_axis >= 0 && t.alloc_axis < k.num_axes) s.allocated_in[t.alloc_axis].push_back(t.id);
  }
  collect_rotating(k.body, s);
  return Walker(k, target, opts, s).run();
}

}  // namespace nkic::perf
