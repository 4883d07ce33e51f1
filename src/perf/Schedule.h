// The machine the cost model runs instructions on: one in-order queue per
// compute engine and `dma_queues` DMA queues; an instruction starts when its
// engine (or the queues its transfers take) is free and every element it reads
// was written, every element it writes was read and written before (RAW, WAR,
// WAW on the boxes it touches). It records what the Profile reports.
// A kernel[n] launch has these engines and queues once per physical core; the
// cores wait for each other only at sync points (sync()).
#pragma once
#include <cstdint>
#include <deque>
#include <map>
#include <unordered_map>
#include <vector>

#include "ir/IR.h"
#include "perf/Buffers.h"
#include "perf/Durations.h"
#include "perf/Footprint.h"
#include "perf/Profile.h"
#include "sema/CompileConfig.h"
#include "sema/Target.h"

namespace nkic::perf {

struct Options {
  int64_t max_slices = 200000;     // timeline slices kept (the rest are counted)
  int64_t max_nodes = 4000000;     // executions remembered for the critical path
  // The kernel's nki.compiler config: scheduling=True with the TRIVIAL heuristic keeps program
  // order (no engine fills an idle gap with a later instruction); the rest is named in the report.
  sema::CompileConfig config;
  int64_t prefetch_ring = 0;  // SBUF bytes per partition its prefetch ring takes (sema/CompileConfig.h)
};

// Sums a loop's steady-state iteration adds, so that repeating it is arithmetic.
struct Totals {
  double busy[kComputeTracks + 1] = {};
  int64_t count[kComputeTracks + 1] = {};
  double dma_bytes = 0, pe_hfu = 0, pe_mfu = 0;
  int64_t instructions = 0;
  int64_t slices = 0;             // timeline slices recorded (not compared by same())
  std::vector<double> site_busy;  // for the sites of one loop body
  std::vector<int64_t> site_count;
  bool same(const Totals& o) const;
};

class Schedule {
 public:
  // `sites`: the kernel's instructions in program order (a site is an index into it).
  Schedule(const ir::Kernel& k, const sema::Target& t, const Options& o, std::vector<const ir::Instruction*> sites,
           BufferPlan buffers = {});

  // `coalesced`: the loops a coalesced DMA spans (Coalescing.h), outermost first; it runs
  // once, in their first iteration, for all of them.
  void execute(int site, const Env& env, const std::vector<const ir::Loop*>& coalesced = {});
  // The program passed `site` without running it (hoisted, folded): a spill due there goes
  // with the next instruction that runs.
  void skip(int site);
  // The physical core the next executions run on (kernel[n]).
  void set_core(int c) { core_ = c; }
  // A sync point of the cores (core_barrier, sendrecv): nothing after it starts before
  // everything before it, on every core, has ended.
  void sync();
  // A fresh allocation of on-chip tensor `id` (a new loop iteration or program):
  // no dependency on its earlier contents; its occupancy interval closes. `rotate`
  // (a new loop iteration): the allocation takes the next of the tensor's physical
  // buffers (BufferPlan), and its writes wait until the iteration that last used
  // that buffer has finished with it (WAR on the physical buffer).
  void release(int id, bool rotate = false);
  // Whether every tensor of `ids` has been through each of its physical buffers (before,
  // a loop's iterations are not yet steady).
  bool rotated(const std::vector<int>& ids) const;
  // A write of `b` that overwrites everything a tile outside the loops held, by an instruction
  // that neither reads the tile nor accumulates into it, starts a new live range of it: the
  // next of its physical buffers (BufferPlan), as a new loop iteration's allocation does.
  // One whole block of a block-dim tile starts a new live range of that block the same way.
  void renamed(int tensor, const Box& b, const std::vector<std::pair<int, Box>>& reads, bool accumulate);

  // Every queue's free time (per core: compute engines, then the DMA queues
  // sorted), then per queue the number of its idle gaps and their bounds, for
  // detecting a loop's steady state.
  std::vector<double> clocks() const;
  // Totals so far, with the per-site sums of sites [s0, s1).
  Totals totals(int s0, int s1) const;
  int64_t num_nodes() const { return static_cast<int64_t>(nodes_.size()); }
  // Adds `m` more iterations of a steady loop without scheduling them: every
  // clock advances m times its per-iteration delta, every dependency recorded
  // since node `since` by m * period, and the totals by m * `per_iteration`.
  void repeat(int64_t m, const std::vector<double>& delta, double period, const Totals& per_iteration, int s0,
              int64_t since, const ir::SourceLoc& loc);

  Profile finish();
  void note(std::string text);

 private:
  struct Node {
    double start, end;
    int64_t pred;   // the node whose end set the start; -1 none
    int64_t repeat; // > 1: a steady stretch of a loop
    int32_t site;   // -1: a steady stretch
    int16_t track;
  };
  struct Region {
    Box box;
    double write_ready = 0, read_done = 0;
    int64_t writer = -1, reader = -1;
    int64_t write_stamp = 0, read_stamp = 0;  // when each was recorded (a steady loop moves what it set)
    int core = 0;  // the core whose accesses it records; -1: several (merged)
  };
  struct Live {  // one allocation of an on-chip tensor
    double first = -1, last = 0;
    int64_t stamp = 0;  // when the access ending at `last` was recorded
    int core = 0;       // whose SBUF/PSUM holds it (kernel[n]: each core traces its own tiles)
  };
  struct Interval {
    double first, last;
    int tensor, core;
  };

  struct Gap {
    double from, to;
    int64_t before = -1;  // the node that holds the track until `from`
  };
  // One iteration's use of a physical buffer: when its last access ended, and by which node.
  struct Use {
    double done = 0;
    int64_t node = -1, stamp = 0;
  };
  // A live range of tensor `id` ends with the accesses `regions` recorded: its buffer joins
  // the tensor's ring, and the next live range's writes wait for the one n ranges ago.
  void retire(int id, const std::vector<Region>& regions);
  // A memory port two engines cannot stream through at once (CostFigures):
  // until when, and by which node, each engine holds it.
  struct Port {
    double free[kComputeTracks] = {};
    int64_t node[kComputeTracks] = {-1, -1, -1, -1};
  };

  // The earliest start >= ready at which track `ti` (an engine or a DMA queue) is
  // idle for `interval`: a gap it left waiting for operands (the compiler's
  // scheduler fills those with later independent instructions and transfers),
  // else its free time; and the gap's index (-1: the free time). place() takes it.
  std::pair<double, int> slot(int ti, double ready, double interval) const;
  // Takes the slot for the node added next; `waited` is the node that held the track until
  // the start (what a start later than `ready` waited for).
  double place(int ti, double ready, double interval, int64_t& waited);
  // Moves `ready` (and `dep`) past the other engines' use of the SBUF/PSUM `ports` an
  // instruction on `track` shares with them.
  void wait_for_ports(const std::vector<int64_t>& ports, Track track, double& ready, int64_t& dep) const;
  // The cost of site's instruction (`own`, on its own engine) on the engine the compiler
  // chooses for it, when its kernel names none (engines_): the one that finishes it first.
  InstCost on_chosen_engine(int site, const Extents& ext, InstCost own, double ready) const;
  // Places the Tensor-Engine broadcast of an instruction's partition-broadcast operands
  // (InstCost::broadcast) once its inputs are `ready`; the instruction then waits for it.
  void broadcast(const InstCost& c, int site, double& ready, int64_t& dep);
  std::vector<int64_t> ports_of(const ir::Instruction& in, Track track) const;
  // The 32x32 tiles of the PE array (pe_tiles_ indices, this core's) a matmul runs on.
  static constexpr int kPeCells = 16;
  std::vector<int> pe_cells(const ir::Instruction& in, const Env& env) const;
  int root(int id) const;
  // Whether the current core waits for what `r` of tensor `id` records: between sync
  // points, another core's accesses to HBM are not ordered with its own.
  bool orders(int id, const Region& r) const;
  // Tracks in clock order: per core, its compute engines, then its DMA queues by free time.
  std::vector<int> clock_order() const;
  void read(int tensor, const Box& b, double& ready, int64_t& dep) const;
  void write_deps(int tensor, const Box& b, double& ready, int64_t& dep) const;
  // Adds region `r` of a tensor; past kMaxRegions the oldest two merge into their hull.
  static void keep(std::vector<Region>& rs, Region r);
  void record_read(int tensor, Box b, double end, int64_t node);
  void record_write(int tensor, Box b, double end, int64_t node);
  void touch(int tensor, double start, double end, int64_t node);
  // Before the instruction at the spill site (BufferPlan), or the first to run after it: the
  // excess, up to the `touched` bytes per partition of SBUF that instruction reads and writes,
  // is stored and reloaded on the DMA queues, and it waits for the reload. Returns when that ends.
  double spill(double ready, int64_t& dep, int64_t touched);
  // A DMA queue's engine serves several rings and interleaves their descriptors, so a transfer
  // moves its bytes in the queue's idle time from `ready` on: the gaps earlier-placed transfers
  // left, then its free time. streamed() says when it would end there; stream() takes those
  // pieces (`pieces`: their bounds) for the node added next and returns its start and end.
  double streamed(int ti, double ready, double interval) const;
  std::pair<double, double> stream(int ti, double ready, double interval, int64_t& waited,
                                   std::vector<std::pair<double, double>>& pieces);
  // Places a transfer of `interval` per queue on the `queues` DMA queues that finish it first
  // (starting at `earliest` or later); returns its start, end and node (`pred`: what it waited for).
  struct Transfer {
    double start, end;
    int64_t node;
  };
  Transfer transfer(double earliest, double interval, int queues, int site, int64_t pred);
  int64_t add_node(const Node& n);
  void add_slice(int track, double start, double duration, int site, int64_t repeat);

  const ir::Kernel& k_;
  const sema::Target& t_;
  Options o_;
  bool program_order_;  // TRIVIAL scheduling: an engine's instructions start in program order
  std::vector<const ir::Instruction*> site_inst_;
  int cores_ = 1, core_ = 0, per_core_ = 0;  // per_core_: tracks of one core
  std::vector<double> free_;          // per core: compute engines, then DMA queues
  std::vector<int64_t> last_node_;    // per track: the node that holds it
  std::vector<std::vector<Gap>> gaps_;  // per track (engines and DMA queues), oldest first
  std::map<int64_t, Port> ports_;  // per core kSbufPort, kPsumPort, or a PSUM tensor (its bank)
  std::vector<std::vector<Region>> regions_;  // per root tensor
  std::vector<bool> written_;         // tensors some instruction writes
  std::vector<Live> live_;
  BufferPlan plan_;
  bool spill_pending_ = false, spilled_ = false;
  // The SBUF tiles the last spill reloaded: (tensor, its block coordinates and, for a tensor
  // declared in a loop, the iteration that made it). While a pass reads the same tiles they
  // are resident and nothing moves again.
  std::vector<std::vector<int64_t>> spill_tiles_;
  std::vector<std::deque<Use>> ring_;  // per tensor: its latest iterations' uses, oldest first
  std::vector<Use> reuse_;             // per tensor: the use of the buffer the current iteration took
  std::vector<Use> done_;              // per tensor: its latest access (what a tile taking its bytes waits for)
  // Explicit edges (Instruction::after): per (instruction id, core) of a producer, when its
  // latest execution ended.
  std::unordered_map<int64_t, Use> ended_;
  int64_t edge_key(int64_t id) const { return id * cores_ + core_; }
  std::vector<Interval> intervals_;
  std::vector<Node> nodes_;
  std::vector<Slice> slices_;
  int64_t slices_dropped_ = 0;
  Totals tot_;
  std::vector<double> site_busy_, site_critical_;
  std::vector<int64_t> site_count_;
  std::vector<bool> small_runs_;   // by site: a DMA whose contiguous runs average under the buffer overhead
  // The partition broadcasts' Tensor-Engine matmuls (broadcast()): their time, how many, the first's reader.
  double broadcast_busy_ = 0;
  int64_t broadcasts_ = 0;
  int first_broadcast_ = -1;
  std::vector<bool> site_at_floor_;       // by site: its last execution was at its engine's minimum interval
  std::vector<bool> kept_axes_;           // by loop axis: a loop kept at run time (kept_loop_axes)
  std::vector<bool> run_time_block_;      // by site: it picks an on-chip block by a kept loop's counter
  std::vector<std::vector<ir::Engine>> engines_;  // by site: the engines it may run on (compiler_engines)
  std::vector<bool> moved_;               // by site: the compiler's engine choice moved it (once at least)
  std::vector<double> site_run_bytes_;    // by site: a DMA's bytes per contiguous run, last execution
  std::vector<double> dge_free_;   // per core, per hardware DGE instance: when it is free
  std::vector<int64_t> dge_node_;  // and the transfer that last took it
  std::vector<Use> pe_tiles_;       // per core, per 32x32 tile of the PE array: the matmul holding it
  std::vector<Use> pe_active_;      // per core: until when some tile of the PE array works
  std::vector<double> end_;        // per core: when its last result is ready
  std::vector<int64_t> end_node_;
  double floor_ = 0;                // the last sync point: nothing starts earlier
  int64_t floor_node_ = -1;
  int64_t scheduled_ = 0;
  std::vector<std::string> notes_;
  // Each steady stretch: its loop's location, and the body sites [s0, ...) with
  // their busy time per iteration (its critical time is shared out by it).
  struct Stretch {
    ir::SourceLoc loc;
    int s0 = 0;
    std::vector<double> site_busy;
  };
  std::vector<Stretch> stretches_;
};

// What a stretch of execution added: later totals minus earlier (site sums too).
Totals operator-(const Totals& a, const Totals& b);

}  // namespace nkic::perf
