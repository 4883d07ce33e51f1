#include "sim/Simulator.h"

#include <algorithm>
#include <cstring>
#include <iostream>
#include <memory>
#include <optional>
#include <unordered_map>
#include <sstream>
#include <mutex>
#include <thread>

#include "ir/IRVisitor.h"
#include "ir/Verifier.h"
#include "sema/ErrorCatalog.h"
#include "sim/AluEval.h"
#include "sim/Budget.h"
#include "sim/IndirectExec.h"
#include "sim/MxExec.h"
#include "sim/Numerics.h"
#include "sim/Parallel.h"
#include "sim/PointWalk.h"
#include "sim/RaceCheck.h"
#include "sim/RanksExec.h"
#include "sim/Rendezvous.h"
#include "sim/RowExec.h"
#include "sim/RuntimeOffsets.h"
#include "sim/ScalarExec.h"
#include "sim/ShuffleExec.h"
#include "sim/AccumulatorExec.h"
#include "sim/SideEffects.h"
#include "sim/ThreadPool.h"
#include "sim/TileExec.h"
#include "sim/Uninit.h"

namespace nkic::sim {

void sim_error(std::string code, std::string message, ir::SourceLoc loc, std::string hint, ir::ErrorKind kind) {
  ir::fail({std::move(code), std::move(message), kind, loc, {}, std::move(hint), ""});
}

namespace {

// nl.all_reduce operands, [event][program] -> the values in point order. Programs
// run one after another, so each pass serves every all_reduce from the previous
// pass's operands; simulate() replays until the operands stop changing.
using Exchange = std::vector<std::vector<std::vector<float>>>;

// Bit equality, so NaN operands (fresh memory, NaN inputs) settle too.
bool same_operands(const Exchange& a, const Exchange& b) {
  auto same_values = [](const std::vector<float>& x, const std::vector<float>& y) {
    return x.size() == y.size() && (x.empty() || std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0);
  };
  auto same_event = [&](const auto& x, const auto& y) {
    return std::equal(x.begin(), x.end(), y.begin(), y.end(), same_values);
  };
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), same_event);
}

// Runs the kernel body once per program instance; loops and instructions are
// the visitor's two node kinds.
class Executor final : public ir::IRVisitor {
 public:
  // A `nested` executor runs a chunk of another's programs or loop iterations
  // and splits nothing itself.
  Executor(const ir::Kernel& k, const std::vector<void*>& bindings, const SimOptions& opts,
           const Exchange* served = nullptr, bool nested = false)
      : k_(k),
        opts_(opts),
        served_(served),
        nested_(nested),
        mem_(k.tensors.size()),
        side_(mem_, opts.print_stream ? *opts.print_stream : std::cout),
        mx_(mem_, opts),
        rows_(mem_, opts),
        accumulators_(mem_, opts),
        loop_(k.num_axes, 0),
        pid_(k.grid.size(), 0) {
    if (bindings.size() > k.tensors.size())
      throw std::invalid_argument("simulate: more bindings than tensors");
    if (opts.check_races) races_.emplace(mem_, k);
    if (opts.check_uninitialized) uninit_.emplace(mem_);
    tiles_ = std::make_unique<TileExecutor>(mem_, opts, races_ ? &*races_ : nullptr);
    per_iteration_.resize(k.num_axes);
    // A bound view (a returned reshape of an output) lends its buffer to the tensor it views.
    std::vector<void*> bound_to(bindings);
    bound_to.resize(k.tensors.size(), nullptr);
    for (size_t id = 0; id < k.tensors.size(); ++id)
      if (int root = k.tensors[id].alias_of; bound_to[id] && root >= 0 && !bound_to[root]) bound_to[root] = bound_to[id];
    // The simulator's own tensors share one block (an unrolled kernel has one per
    // instruction), each at a cache-line boundary.
    constexpr size_t kAlign = 64;
    auto owns = [&](size_t id) { return !bound_to[id] && k.tensors[id].alias_of < 0; };
    auto bytes_of = [&](size_t id) {
      const size_t n = k.tensors[id].num_elements() * ir::size_of(k.tensors[id].dtype);
      return (n + kAlign - 1) / kAlign * kAlign;
    };
    size_t total = 0;
    for (size_t id = 0; id < k.tensors.size(); ++id)
      if (owns(id)) total += bytes_of(id);
    owned_.reset(new (std::align_val_t{kAlign}) std::byte[total]);
    size_t next = 0;
    for (size_t id = 0; id < k.tensors.size(); ++id) {
      const ir::TensorDecl& t = k.tensors[id];
      TensorMem& m = mem_[id];
      m.decl = &t;
      m.strides.assign(t.shape.size(), 1);
      for (size_t d = t.shape.size(); d-- > 1;) m.strides[d - 1] = m.strides[d] * t.shape[d];
      void* bound = bound_to[id];
      if (bound) {
        m.data = static_cast<std::byte*>(bound);
        continue;
      }
      if (t.alias_of >= 0) {  // a view of an earlier tensor's bytes: no storage of its own
        TensorMem& base = mem_.at(t.alias_of);
        m.data = base.data;
        aliased_.push_back(t.alias_of);
        if (ir::size_of(t.dtype) == ir::size_of(base.decl->dtype)) {
          m.written.share(base.written);
          m.tracked = base.tracked;
          m.accumulator = base.accumulator;
        }
        continue;
      }
      m.data = owned_.get() + next;
      next += bytes_of(id);
      if (!t.init.empty()) {
        for (size_t i = 0; i < t.init.size(); ++i) store_element(t.dtype, m.data, static_cast<int64_t>(i), t.init[i]);
      } else if (t.memory == ir::Memory::SharedHBM) {
        fill_fresh(m);
      } else {
        per_instance_.push_back(static_cast<int>(id));
        if (t.alloc_axis >= 0 && !ir::is_hbm(t.memory)) per_iteration_[t.alloc_axis].push_back(static_cast<int>(id));
        m.tracked = opts.check_uninitialized;
        m.accumulator = t.memory == ir::Memory::PSUM;
      }
    }
  }

  void run() {
    const int64_t n = k_.num_programs();
    const int chunks = chunks_for(n);
    if (chunks > 1) {
      ParallelRegion region = ParallelRegion::programs(k_, per_instance_);
      if (region.splits(mem_, loop_.data(), pid_.data())) {
        std::vector<std::unique_ptr<Executor>> workers;
        for (int c = 1; c < chunks; ++c) workers.push_back(worker(region));
        splitting_ = true;  // the programs' loops run whole
        parallel_for(chunks, [&](int64_t c) {
          const IntRoundingScope rounding(rounding_);
          Executor& ex = c + 1 < chunks ? *workers[c] : *this;
          ex.run_programs(n * c / chunks, n * (c + 1) / chunks);
        });
        return;
      }
    }
    run_programs(0, n);
  }

  void run_programs(int64_t first, int64_t end) {
    first_program_ = first;
    end_program_ = end;
    for (program_ = first; program_ < end; ++program_) {
      pid_ = program_ids(program_);
      event_ = 0;
      for (int id : per_instance_) make_fresh(id);
      visit_block(k_.body);
      report_progress(1.0);
    }
  }

  // The share of this executor's programs done, with `in_program` of the current
  // one; only the executor the caller runs on reports (its chunk stands for all).
  void report_progress(double in_program) {
    if (!opts_.progress || nested_) return;
    const double done = (static_cast<double>(program_ - first_program_) + in_program) /
                        static_cast<double>(std::max<int64_t>(1, end_program_ - first_program_));
    if (done < reported_ + 0.01 && done < 1.0) return;
    reported_ = done;
    opts_.progress(done);
  }

  Exchange& operands() { return operands_; }
  // The warning for uninitialized values the run read and dropped, if any.
  std::optional<ir::Diagnostic> dropped() const { return uninit_ ? uninit_->dropped() : std::nullopt; }
  bool settled() const { return settled_; }

  // Row-major: the last launch-grid axis varies fastest.
  std::vector<int64_t> program_ids(int64_t p) const {
    std::vector<int64_t> ids(k_.grid.size());
    for (size_t a = k_.grid.size(); a-- > 0;) {
      ids[a] = p % k_.grid[a];
      p /= k_.grid[a];
    }
    return ids;
  }

  // A tensor (re)allocated: its memory holds the never-written pattern again.
  void make_fresh(int id) {
    TensorMem& m = mem_[id];
    // A tensor with views fills now: a write through a view must not be overwritten by a late fill.
    m.pending_fill = std::find(aliased_.begin(), aliased_.end(), id) == aliased_.end();
    if (!m.pending_fill) fill_fresh(m);
    if (m.tracked || m.accumulator) m.written.assign(m.decl->num_elements(), 0);
    if (races_) races_->fresh(id);
  }

  void visit(const ir::Loop& l) override {
    ++depth_;
    run_loop(l);
    --depth_;
  }

  void run_loop(const ir::Loop& l) {
    if (l.while_cond) return do_while(l);
    int64_t& v = loop_[l.axis];
    const int64_t ub = l.dynamic_ub ? runtime_bound(*l.dynamic_ub, l.loc) : l.ub;
    RaceCheck* races = races_ && l.type == ir::AxisType::Affine ? &*races_ : nullptr;
    const int64_t trips = ir::trip_count(l.lb, ub, l.stride);
    for (size_t c = 0; c < l.peers.size(); ++c)
      if (const int64_t theirs = ir::trip_count(l.lb, runtime_bound(l.peers[c], l.loc), l.stride); theirs != trips)
        cores_diverge(l, "core 0 runs it " + std::to_string(trips) + " time(s), core " + std::to_string(c + 1) + " " +
                             std::to_string(theirs));
    if (!races) {
      if (split_loop(l, trips)) return;
      return iterations(l, 0, trips);
    }
    races->enter(l);
    for (int64_t i = 0; i < trips; ++i) {
      v = l.lb + i * l.stride;
      for (int id : per_iteration_[l.axis]) make_fresh(id);
      races->next_iteration();
      visit_block(l.body);
    }
    v = l.lb + trips * l.stride;  // one stride past the last, as iterations() leaves it
    races->leave();
  }

  // Iterations first .. first + count - 1 of `l` (counted from its lb), in order;
  // the loop variable ends one stride past the last, as the loop leaves it.
  void iterations(const ir::Loop& l, int64_t first, int64_t count) {
    int64_t& v = loop_[l.axis];
    v = l.lb + first * l.stride;
    for (int64_t i = 0; i < count; ++i, v += l.stride) {
      for (int id : per_iteration_[l.axis]) make_fresh(id);
      visit_block(l.body);
      if (depth_ == 1) report_progress(static_cast<double>(i + 1) / static_cast<double>(count + 1));
    }
  }

  // Runs the loop's iterations in contiguous chunks on several executors when
  // they are independent; this executor takes the last chunk, so what the loop
  // leaves in its tensors is what the last iteration wrote.
  bool split_loop(const ir::Loop& l, int64_t trips) {
    const int chunks = chunks_for(trips);
    if (chunks < 2) return false;
    auto [it, fresh] = splits_.try_emplace(&l);
    LoopSplit& s = it->second;
    if (fresh) s.region = std::make_unique<ParallelRegion>(ParallelRegion::loop(k_, l));
    if (!s.region->splits(mem_, loop_.data(), pid_.data())) return false;
    for (int t : s.region->shared()) ensure_filled(mem_[t]);
    while (s.workers.size() + 1 < static_cast<size_t>(chunks)) s.workers.push_back(worker(*s.region));
    for (int c = 0; c + 1 < chunks; ++c) {
      s.workers[c]->loop_ = loop_;
      s.workers[c]->pid_ = pid_;
    }
    splitting_ = true;
    try {
      parallel_for(chunks, [&](int64_t c) {
        const IntRoundingScope rounding(rounding_);
        Executor& ex = c + 1 < chunks ? *s.workers[c] : *this;
        ex.iterations(l, trips * c / chunks, trips * (c + 1) / chunks - trips * c / chunks);
      });
    } catch (...) {
      splitting_ = false;
      throw;
    }
    splitting_ = false;
    loop_[l.axis] = l.lb + trips * l.stride;
    return true;
  }

  // How many executors may share `n` programs or iterations.
  int chunks_for(int64_t n) const {
    if (nested_ || splitting_ || served_ || opts_.check_races || opts_.check_uninitialized || n < 2) return 1;
    const int threads = opts_.threads > 0 ? opts_.threads : sim_threads();
    return static_cast<int>(std::min<int64_t>(threads, n));
  }

  // An executor for one chunk of `r`: the region's private tensors get storage
  // of their own, every other tensor is this executor's memory.
  std::unique_ptr<Executor> worker(const ParallelRegion& r) {
    std::vector<void*> shared(k_.tensors.size(), nullptr);
    for (size_t id = 0; id < shared.size(); ++id)
      if (!r.is_private()[id]) shared[id] = mem_[id].data;
    return std::make_unique<Executor>(k_, shared, opts_, nullptr, true);
  }

  // A do-while loop: the body runs, then repeats while its condition reads nonzero.
  // A condition that never clears would hang the simulation: it is an error.
  static constexpr int64_t kMaxWhileIterations = int64_t{1} << 20;
  void do_while(const ir::Loop& l) {
    int64_t& v = loop_[l.axis];
    v = 0;
    do {
      if (v == kMaxWhileIterations)
        sim_error("err_while_loop_does_not_terminate",
                       "the while loop ran " + std::to_string(v) + " iterations without its condition becoming zero",
                       l.loc);
      for (int id : per_iteration_[l.axis]) make_fresh(id);
      visit_block(l.body);
      ++v;
      const bool again = runtime_bound(*l.while_cond, l.loc) != 0;
      for (size_t c = 0; c < l.peers.size(); ++c)
        if ((runtime_bound(l.peers[c], l.loc) != 0) != again)
          cores_diverge(l, "after trip " + std::to_string(v) + " core 0 " + (again ? "repeats" : "leaves") +
                               " it and core " + std::to_string(c + 1) + " " + (again ? "leaves" : "repeats"));
      if (!again) break;
    } while (true);
  }

  // kernel[n]: the cores run a loop they synchronise in a different number of times. On the
  // device one core waits at a synchronisation point the other never reaches.
  [[noreturn]] static void cores_diverge(const ir::Loop& l, const std::string& how) {
    const ir::Diagnostic d = sema::err_core_sync_mismatch(how);
    sim_error(d.code, d.message, l.loc, d.hint);
  }

  // A DynamicAxis bound: the element the access names, read now.
  int64_t runtime_bound(const ir::Access& a, ir::SourceLoc loc) {
    ir::Instruction scalar;
    scalar.shape = {1};
    int64_t off = point_offset(mem_, scalar, a, [this](ir::Var v) -> int64_t {
      return v.kind == ir::VarKind::Loop ? loop_[v.id] : v.kind == ir::VarKind::ProgramId ? pid_[v.id] : 0;
    });
    if (uninit_ && uninit::unclean(mem_[a.tensor], off)) uninit_->used_as(mem_[a.tensor], off, loc, "a loop bound");
    return static_cast<int64_t>(load_element(mem_[a.tensor].decl->dtype, mem_[a.tensor].data, off));
  }

  void visit(const ir::Instruction& given) override {
    std::optional<uninit::Scope> scope;
    if (uninit_) scope.emplace(*uninit_, given);
    // Offsets read at run time, one per access, make a resolved copy of static accesses.
    const std::optional<ir::Instruction> resolved = resolve_uniform_offsets(mem_, given, loop_.data(), pid_.data());
    const ir::Instruction& in = resolved ? *resolved : given;
    switch (ir::info(in.opcode).exec) {
      case ir::Exec::Collective: return all_reduce(in);
      case ir::Exec::Ranks: return ranks_exec_.run(in, loop_.data(), pid_.data());
      case ir::Exec::Side: return side_.run(in, loop_.data(), pid_.data());
      case ir::Exec::Mx: return mx_.run(in, loop_.data(), pid_.data());
      case ir::Exec::Row: return rows_.run(in, loop_.data(), pid_.data());
      case ir::Exec::Shuffle: return run_shuffle(mem_, in, loop_.data(), pid_.data());
      case ir::Exec::Scalar: return run_scalar(mem_, in, loop_.data(), pid_.data());
      default: break;
    }
    if (IndirectExec::handles(in)) indirect_.run(in, loop_.data(), pid_.data());
    // Outside every loop of a one-program launch an instruction runs once (a
    // collective's replay runs a fresh executor; a nested one runs loop bodies):
    // its plan is not worth keeping; nor is a resolved copy's, which lives for one run.
    else tiles_->run(in, Env{loop_.data(), pid_.data()}, resolved || (!nested_ && depth_ == 0 && k_.num_programs() == 1));
    if (in.acc_cmd != ir::AccCmd::none) accumulators_.run(in, loop_.data(), pid_.data());
  }

 private:
  void all_reduce(const ir::Instruction& in) {
    const TensorMem& src = mem_[in.srcs[0].tensor];
    std::vector<float> mine;
    for_each_point(in, loop_.data(), pid_.data(), [&](const auto& value_of) {
      mine.push_back(static_cast<float>(
          load_element(src.decl->dtype, src.data, point_offset(mem_, in, in.srcs[0], value_of))));
    });
    const size_t e = event_++;
    if (operands_.size() <= e) operands_.resize(e + 1, std::vector<std::vector<float>>(k_.num_programs()));
    operands_[e][program_] = mine;
    std::vector<float> result(mine.size(), 0.0f);
    bool first = true;
    for (int64_t q = 0; q < k_.num_programs(); ++q) {
      const std::vector<float>* theirs = served_ && e < served_->size() ? &(*served_)[e][q] : nullptr;
      if (!theirs || theirs->size() != mine.size()) {
        settled_ = false;
        break;
      }
      if (!same_group(in, q)) continue;
      if (first) result = *theirs;
      else eval_binary(in.alu, result.data(), theirs->data(), result.data(), static_cast<int64_t>(result.size()));
      first = false;
    }
    TensorMem& dst = mem_[in.dst.tensor];
    ensure_filled(dst);
    size_t i = 0;
    for_each_point(in, loop_.data(), pid_.data(), [&](const auto& value_of) {
      int64_t off = point_offset(mem_, in, in.dst, value_of);
      store_element(dst.decl->dtype, dst.data, off, result[i++]);
      uninit::wrote(dst, off);
    });
  }

  // Program q reduces with this one when their ids differ only on the instruction's axes.
  bool same_group(const ir::Instruction& in, int64_t q) const {
    std::vector<int64_t> theirs = program_ids(q);
    for (size_t a = 0; a < theirs.size(); ++a)
      if (theirs[a] != pid_[a] &&
          std::find(in.imms.begin(), in.imms.end(), static_cast<double>(a)) == in.imms.end())
        return false;
    return true;
  }

  struct LoopSplit {
    std::unique_ptr<ParallelRegion> region;
    std::vector<std::unique_ptr<Executor>> workers;  // kept: their plans serve every entry
  };

  const ir::Kernel& k_;
  SimOptions opts_;
  const Exchange* served_;
  bool nested_;
  bool splitting_ = false;  // running one chunk of a split region
  int depth_ = 0;           // loops open around the instruction in flight
  int64_t first_program_ = 0, end_program_ = 1;
  double reported_ = 0.0;
  std::unordered_map<const ir::Loop*, LoopSplit> splits_;
  Exchange operands_;
  bool settled_ = true;
  int64_t program_ = 0;
  size_t event_ = 0;
  std::vector<TensorMem> mem_;
  // Storage of the tensors no binding or view provides.
  struct AlignedDelete {
    void operator()(std::byte* p) const { ::operator delete[](p, std::align_val_t{64}); }
  };
  std::unique_ptr<std::byte[], AlignedDelete> owned_;
  std::vector<int> per_instance_;  // simulator-owned tensors that start fresh in each instance
  std::vector<int> aliased_;       // tensors some reshape/view shares memory with
  std::vector<std::vector<int>> per_iteration_;  // by loop axis: on-chip tensors declared in its body
  std::optional<RaceCheck> races_;
  std::optional<uninit::Tracker> uninit_;
  std::unique_ptr<TileExecutor> tiles_;
  SideEffects side_;
  IndirectExec indirect_{mem_};
  MxExec mx_;
  RowExec rows_;
  AccumulatorExec accumulators_;
  RanksExec ranks_exec_{mem_, opts_};
  std::vector<int64_t> loop_, pid_;
  // The thread that runs the kernel opens it (simulate()); the pool's threads, per chunk.
  const IntRounding rounding_ = int_rounding();
};

}  // namespace

void simulate(const ir::Kernel& k, const std::vector<void*>& bindings, const SimOptions& opts) {
  const IntRoundingScope rounding(k.int_round_nearest_even ? IntRounding::nearest_even : IntRounding::toward_zero);
  std::vector<std::string> problems = ir::verify(k);
  if (!problems.empty()) {
    std::string msg = "simulate: malformed kernel " + k.name + ":";
    for (const std::string& p : problems) msg += "\n  " + p;
    throw std::invalid_argument(msg);
  }
  if (!opts.budget_checked) check_budget(k, opts);
  struct FindsAllReduce final : ir::IRVisitor {
    bool found = false;
    void visit(const ir::Instruction& in) override { found |= ir::info(in.opcode).exec == ir::Exec::Collective; }
  } finder;
  finder.visit_block(k.body);
  auto warn = [&](const Executor& ex) {
    if (auto w = ex.dropped(); w && opts.warning) opts.warning(*w);
  };
  if (!finder.found) {
    Executor ex(k, bindings, opts);
    ex.run();
    return warn(ex);
  }
  // Collectives: replay every program until each all_reduce sees the operands it
  // serves. Bound arrays are restored before each pass; prints come from the last.
  std::vector<std::vector<std::byte>> initial(bindings.size());
  auto bytes_of = [&](size_t id) { return k.tensors[id].num_elements() * ir::size_of(k.tensors[id].dtype); };
  for (size_t id = 0; id < bindings.size(); ++id)
    if (bindings[id]) initial[id].assign(static_cast<std::byte*>(bindings[id]), static_cast<std::byte*>(bindings[id]) + bytes_of(id));
  Exchange served;
  for (size_t pass = 0;; ++pass) {
    for (size_t id = 0; id < bindings.size(); ++id)
      if (bindings[id]) std::copy(initial[id].begin(), initial[id].end(), static_cast<std::byte*>(bindings[id]));
    std::ostringstream printed;
    SimOptions quiet = opts;
    quiet.print_stream = &printed;
    Executor ex(k, bindings, quiet, &served);
    ex.run();
    if (ex.settled() && same_operands(ex.operands(), served)) {
      (opts.print_stream ? *opts.print_stream : std::cout) << printed.str();
      return warn(ex);
    }
    // Pass n serves the first n all_reduce events right, so the operands settle in events + 1 passes.
    if (pass > ex.operands().size() + 1) throw std::logic_error("simulate: nl.all_reduce operands do not settle");
    served = std::move(ex.operands());
  }
}

void simulate_ranks(const ir::Kernel& k, const std::vector<std::vector<void*>>& bindings, const SimOptions& opts) {
  Rendezvous rendezvous(static_cast<int>(bindings.size()));
  std::vector<std::vector<ir::Diagnostic>> warnings(bindings.size());
  std::vector<std::ostringstream> printed(bindings.size());  // each rank's, shown in rank order
  std::mutex first_mu;
  std::exception_ptr first;  // the failure that stopped the others
  std::vector<std::thread> threads;
  for (size_t r = 0; r < bindings.size(); ++r)
    threads.emplace_back([&, r] {
      SimOptions mine = opts;
      mine.ranks = &rendezvous;
      mine.rank = static_cast<int>(r);
      mine.threads = 1;  // the ranks are the threads; a rank waiting at a collective holds its own
      mine.progress = {};
      mine.print_stream = &printed[r];
      mine.warning = [&warnings, r](const ir::Diagnostic& d) { warnings[r].push_back(d); };
      try {
        simulate(k, bindings[r], mine);
        rendezvous.finish(static_cast<int>(r));
      } catch (const Rendezvous::Aborted&) {
      } catch (...) {
        {
          std::lock_guard lock(first_mu);
          if (!first) first = std::current_exception();
        }
        rendezvous.abort();
      }
    });
  for (std::thread& t : threads) t.join();
  for (const std::ostringstream& p : printed) (opts.print_stream ? *opts.print_stream : std::cout) << p.str();
  if (first) std::rethrow_exception(first);
  if (opts.warning)
    for (const auto& rank : warnings)
      for (const ir::Diagnostic& d : rank) opts.warning(d);
}

}  // namespace nkic::sim
