#include "perf/Schedule.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <utility>

#include "perf/InstructionFacts.h"

namespace nkic::perf {

namespace {

constexpr size_t kMaxGaps = 16;     // idle gaps remembered per engine
constexpr int64_t kSbufPort = -1, kPsumPort = -2;

// Keeps the newest kMaxGaps idle gaps of a track: splitting a gap around an instruction can add one.
template <class Gaps>
void trim(Gaps& gaps) {
  if (gaps.size() > kMaxGaps) gaps.erase(gaps.begin(), gaps.end() - static_cast<std::ptrdiff_t>(kMaxGaps));
}

bool near(double a, double b) { return std::fabs(a - b) <= 1e-6 + 1e-9 * std::max(std::fabs(a), std::fabs(b)); }

}  // namespace

bool Totals::same(const Totals& o) const {
  for (int i = 0; i <= kComputeTracks; ++i)
    if (!near(busy[i], o.busy[i]) || count[i] != o.count[i]) return false;
  if (!near(dma_bytes, o.dma_bytes) || !near(pe_hfu, o.pe_hfu) || instructions != o.instructions) return false;
  if (site_count != o.site_count || site_busy.size() != o.site_busy.size()) return false;
  for (size_t i = 0; i < site_busy.size(); ++i)
    if (!near(site_busy[i], o.site_busy[i])) return false;
  return true;
}

Schedule::Schedule(const ir::Kernel& k, const sema::Target& t, const Options& o,
                   std::vector<const ir::Instruction*> sites, BufferPlan buffers)
    : k_(k), t_(t), o_(o),
      program_order_(o.config.scheduling() && o.config.scheduling_heuristic() == sema::SchedulingHeuristic::Trivial),
      site_inst_(std::move(sites)), cores_(std::max(1, k.physical_cores)),
      per_core_(kComputeTracks + t.cost.dma_queues), free_(cores_ * per_core_, 0.0), last_node_(free_.size(), -1),
      gaps_(free_.size()), regions_(k.tensors.size()), written_(k.tensors.size(), false), live_(k.tensors.size()),
      plan_(std::move(buffers)), ring_(k.tensors.size()), reuse_(k.tensors.size()),
      done_(k.tensors.size()),
      site_busy_(site_inst_.size(), 0.0), site_critical_(site_inst_.size(), 0.0), site_count_(site_inst_.size(), 0),
      small_runs_(site_inst_.size(), false),
      site_at_floor_(site_inst_.size(), false),
      kept_axes_(kept_loop_axes(k)),
      run_time_block_(site_inst_.size(), false),
      moved_(site_inst_.size(), false),
      site_run_bytes_(site_inst_.size(), 0.0),
      dge_free_(static_cast<size_t>(cores_ * std::max(0, t.cost.dge_instances)), 0.0),
      dge_node_(dge_free_.size(), -1), pe_tiles_(static_cast<size_t>(cores_ * kPeCells)), pe_active_(cores_),
      end_(cores_, 0.0),
      end_node_(cores_, -1) {
  for (const ir::Instruction* in : site_inst_) {
    engines_.push_back(compiler_engines(*in, k));
    if (in->has_dst()) written_[root(in->dst.tensor)] = true;
    for (const ir::Access& a : in->extra_dsts) written_[root(a.tensor)] = true;
    for (int64_t p : in->after)
      for (int c = 0; c < cores_; ++c) ended_[p * cores_ + c] = {};
  }
}

int Schedule::root(int id) const { return k_.root(id); }

bool Schedule::orders(int id, const Region& r) const {
  return cores_ == 1 || r.core == core_ || r.core < 0 || !ir::is_hbm(k_.tensor(id).memory);
}

std::vector<int> Schedule::clock_order() const {
  std::vector<int> order(free_.size());
  std::iota(order.begin(), order.end(), 0);
  for (int c = 0; c < cores_; ++c) {
    const auto dma = order.begin() + c * per_core_;
    std::stable_sort(dma + kComputeTracks, dma + per_core_, [this](int a, int b) { return free_[a] < free_[b]; });
  }
  return order;
}

int64_t Schedule::add_node(const Node& n) {
  if (num_nodes() >= o_.max_nodes) return -1;
  nodes_.push_back(n);
  return num_nodes() - 1;
}

void Schedule::add_slice(int track, double start, double duration, int site, int64_t repeat) {
  if (static_cast<int64_t>(slices_.size()) >= o_.max_slices) {
    ++slices_dropped_;
    return;
  }
  Slice s;
  s.track = track;
  s.start = start;
  s.duration = duration;
  s.repeat = repeat;
  if (site >= 0) {
    const ir::Instruction& in = *site_inst_[site];
    s.opcode = in.opcode;
    s.api = in.api;
    s.loc = in.loc;
  }
  slices_.push_back(std::move(s));
}

std::vector<int64_t> Schedule::ports_of(const ir::Instruction& in, Track track) const {
  const sema::CostFigures& f = t_.cost;
  std::vector<int64_t> ports;
  const int64_t sbuf_port = kSbufPort - 2 * core_, psum_port = kPsumPort - 2 * core_;  // each core has its own
  auto add = [&ports](int64_t key) {
    if (std::find(ports.begin(), ports.end(), key) == ports.end()) ports.push_back(key);
  };
  auto visit = [&](const ir::Access& a) {
    const int id = root(a.tensor);
    const ir::Memory m = k_.tensor(id).memory;
    if (m == ir::Memory::SBUF && f.dve_pool_share_sbuf_port && (track == Track::dve || track == Track::pool))
      add(sbuf_port);
    if (m == ir::Memory::PSUM && (track == Track::dve || track == Track::act)) {
      if (f.dve_act_psum_port == sema::CostFigures::PsumPort::shared) add(psum_port);
      if (f.dve_act_psum_port == sema::CostFigures::PsumPort::per_bank) add(id);
    }
  };
  for (const ir::Access& a : in.srcs) visit(a);
  if (in.has_dst()) visit(in.dst);
  for (const ir::Access& a : in.extra_dsts) visit(a);
  return ports;
}

void Schedule::wait_for_ports(const std::vector<int64_t>& ports, Track track, double& ready, int64_t& dep) const {
  for (int64_t key : ports) {
    const auto p = ports_.find(key);
    if (p == ports_.end()) continue;
    for (int o = 0; o < kComputeTracks; ++o)
      if (o != static_cast<int>(track) && p->second.free[o] > ready) ready = p->second.free[o], dep = p->second.node[o];
  }
}

InstCost Schedule::on_chosen_engine(int site, const Extents& ext, InstCost own, double ready) const {
  const std::vector<ir::Engine>& engines = engines_[site];
  if (engines.size() < 2) return own;
  const ir::Instruction& in = *site_inst_[site];
  // The compiler puts it where it would finish first (on a tie, on its own engine).
  auto finish = [&](const InstCost& c) {
    double r = ready;
    int64_t dep = -1;
    wait_for_ports(ports_of(in, c.track), c.track, r, dep);
    return slot(core_ * per_core_ + static_cast<int>(c.track), r, c.interval).first + c.latency;
  };
  double best = finish(own);
  for (size_t e = 1; e < engines.size(); ++e) {
    InstCost c = cost_of(in, k_, t_, ext, {}, engines[e]);
    if (const double f = finish(c); f < best) best = f, own = std::move(c);
  }
  return own;
}

std::pair<double, int> Schedule::slot(int ti, double ready, double interval) const {
  const std::vector<Gap>& gaps = gaps_[ti];
  for (size_t i = 0; i < gaps.size() && !program_order_; ++i) {
    const double start = std::max(gaps[i].from, ready);
    if (start + interval <= gaps[i].to) return {start, static_cast<int>(i)};
  }
  return {std::max(free_[ti], ready), -1};
}

double Schedule::place(int ti, double ready, double interval, int64_t& waited) {
  std::vector<Gap>& gaps = gaps_[ti];
  const auto [start, i] = slot(ti, ready, interval);
  const int64_t next = num_nodes() < o_.max_nodes ? num_nodes() : -1;
  if (i >= 0) {
    const Gap g = gaps[i], before{g.from, start, g.before}, after{start + interval, g.to, next};
    waited = g.before;
    gaps.erase(gaps.begin() + i);
    if (after.to > after.from) gaps.insert(gaps.begin() + i, after);
    if (before.to > before.from) gaps.insert(gaps.begin() + i, before);
    trim(gaps);
    return start;
  }
  waited = last_node_[ti];
  if (start > free_[ti]) {
    gaps.push_back({free_[ti], start, last_node_[ti]});
    trim(gaps);
  }
  free_[ti] = start + interval;
  last_node_[ti] = next;  // an instruction in a gap leaves the track's last node as it was
  return start;
}

double Schedule::streamed(int ti, double ready, double interval) const {
  if (program_order_) return std::max(free_[ti], ready) + interval;
  double left = interval;
  for (const Gap& g : gaps_[ti]) {
    const double from = std::max(g.from, ready);
    if (from >= g.to) continue;
    if (from + left <= g.to) return from + left;
    left -= g.to - from;
  }
  return std::max(free_[ti], ready) + left;
}

std::pair<double, double> Schedule::stream(int ti, double ready, double interval, int64_t& waited,
                                           std::vector<std::pair<double, double>>& pieces) {
  pieces.clear();
  waited = -1;
  double left = interval;
  std::vector<Gap>& gaps = gaps_[ti];
  const int64_t next = num_nodes() < o_.max_nodes ? num_nodes() : -1;
  for (size_t i = 0; i < gaps.size() && left > 0 && !program_order_;) {
    const Gap g = gaps[i];
    const double from = std::max(g.from, ready);
    if (from >= g.to) {
      ++i;
      continue;
    }
    const double take = std::min(left, g.to - from);
    waited = g.before;
    pieces.emplace_back(from, from + take);
    left -= take;
    gaps.erase(gaps.begin() + static_cast<std::ptrdiff_t>(i));
    if (from + take < g.to) gaps.insert(gaps.begin() + static_cast<std::ptrdiff_t>(i), Gap{from + take, g.to, next});
    if (from > g.from) gaps.insert(gaps.begin() + static_cast<std::ptrdiff_t>(i++), Gap{g.from, from, g.before});
  }
  if (left > 0) {
    const double s = place(ti, ready, left, waited);
    pieces.emplace_back(s, s + left);
  }
  // What held the queue before its last piece is what the transfer waited for, if it waited.
  if (pieces.back().second <= ready + interval) waited = -1;
  trim(gaps);
  return {pieces.front().first, pieces.back().second};
}

Schedule::Transfer Schedule::transfer(double earliest, double interval, int queues, int site, int64_t pred) {
  // The transfers take the queues that finish them first, the earliest-free first on a tie;
  // each queue moves its share in its idle time, and the result is ready when the last ends.
  std::vector<std::pair<double, int>> q;
  for (int j = 0; j < t_.cost.dma_queues; ++j) {
    const int i = core_ * per_core_ + kComputeTracks + j;
    q.emplace_back(streamed(i, earliest, interval), i);
  }
  std::stable_sort(q.begin(), q.end(), [this](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first : free_[a.second] < free_[b.second];
  });
  q.resize(std::min<size_t>(q.size(), static_cast<size_t>(std::max(1, queues))));
  double start = -1, end = earliest;
  std::vector<std::pair<double, double>> pieces;
  for (const auto& [first_end, i] : q) {
    int64_t waited = -1;
    const auto [s, e] = stream(i, earliest, interval, waited, pieces);
    for (const auto& [from, to] : pieces) add_slice(i, from, to - from, site, 1);
    if (start < 0 || s < start) start = s;
    if (e > end && waited >= 0) pred = waited;
    end = std::max(end, e);
  }
  const int64_t node = add_node({start, end, pred, 1, site, static_cast<int16_t>(q.front().second)});
  tot_.busy[static_cast<int>(Track::dma)] += interval * static_cast<double>(q.size());
  return {start, end, node};
}

double Schedule::spill(double ready, int64_t& dep, int64_t touched) {
  // The excess of every partition goes to HBM and comes back: two dependent transfers,
  // each paying the fixed latency; the instruction at the peak waits for the reload. What
  // it does not touch there stays in HBM until an instruction needs it: the compiler spills
  // whole tiles, and an instruction that reads one element of a large block reloads no more
  // than it reads, so each pass moves at most the bytes per partition it touches.
  const InstCost c = spill_cost(std::min(plan_.spill_bytes, touched), t_);
  double t = ready;
  for (int leg = 0; leg < 2; ++leg) {
    const Transfer x = transfer(t + t_.cost.dma_fixed_latency_ns, c.interval, c.queues, plan_.spill_site, dep);
    t = x.end, dep = x.node;
    tot_.dma_bytes += static_cast<double>(c.dma_bytes);
  }
  spill_pending_ = false;
  spilled_ = true;
  return t;
}

void Schedule::skip(int site) {
  if (site == plan_.spill_site) spill_pending_ = true;
}

void Schedule::broadcast(const InstCost& c, int site, double& ready, int64_t& dep) {
  const int ti = static_cast<int>(Track::pe), tr = core_ * per_core_ + ti;
  int64_t waited = -1;
  const double start = place(tr, ready, c.broadcast, waited);
  const int64_t node = add_node({start, start + c.broadcast, start > ready ? waited : dep, 1, site, static_cast<int16_t>(tr)});
  add_slice(tr, start, c.broadcast, site, 1);
  tot_.busy[ti] += c.broadcast;
  tot_.pe_hfu += c.broadcast_pe_elements;
  ++tot_.count[ti];
  site_busy_[site] += c.broadcast;
  broadcast_busy_ += c.broadcast;
  if (broadcasts_++ == 0) first_broadcast_ = site;
  ready = start + c.broadcast, dep = node;
}

std::vector<int> Schedule::pe_cells(const ir::Instruction& in, const Env& env) const {
  constexpr int64_t kCell = 32, kSide = 4;  // the array's 128 PEs a side, in tiles of 32
  auto span = [&](const ir::AffineExpr& start, int64_t size) {
    const int64_t n = std::max<int64_t>(1, size / kCell);
    const int64_t first = std::clamp<int64_t>(start.eval([&env](ir::Var v) { return env.value(v); }) / kCell, 0, kSide - n);
    return std::pair{first, first + n};
  };
  const auto [r0, r1] = span(in.tile_row, in.tile_rows);
  const auto [c0, c1] = span(in.tile_col, in.tile_cols);
  std::vector<int> cells;
  for (int64_t r = r0; r < r1; ++r)
    for (int64_t c = c0; c < c1; ++c) cells.push_back(static_cast<int>(core_ * kPeCells + r * kSide + c));
  return cells;
}

void Schedule::execute(int site, const Env& env, const std::vector<const ir::Loop*>& coalesced) {
  const ir::Instruction& in = *site_inst_[site];
  const Extents ext = active_extents(in, env);
  // A coalesced DMA moves the iterations of its loops from this one (their first) on, and
  // touches the hull of what the first and the last iteration touch.
  std::vector<Span> spans;
  Env last = env;
  for (auto l = coalesced.rbegin(); l != coalesced.rend(); ++l) {
    const auto [first, final] = active_trips(**l, (*l)->tripcount(), env);
    spans.push_back({(*l)->axis, std::max<int64_t>(0, final - first + 1), (*l)->stride});
    last.loop[(*l)->axis] += (spans.back().trips - 1) * (*l)->stride;
  }
  InstCost c = cost_of(in, k_, t_, ext, spans);
  skip(site);
  if (!c.costed) return;
  ++scheduled_;
  auto box = [&](const ir::Access& a) {
    Box b = access_box(a, k_.tensor(a.tensor), ext, env);
    if (widen_run_time_blocks(b, a, k_.tensor(a.tensor), kept_axes_)) run_time_block_[site] = true;
    if (spans.empty() || b.whole) return b;
    const Box e = access_box(a, k_.tensor(a.tensor), ext, last);
    for (size_t d = 0; d < b.dim.size(); ++d)
      b.dim[d] = {std::min(b.dim[d].first, e.dim[d].first), std::max(b.dim[d].second, e.dim[d].second)};
    return b;
  };
  // Operands: what each read waits for, then what the writes wait for.
  double ready = 0;
  int64_t dep = -1;
  std::vector<std::pair<int, Box>> reads, writes;
  for (const ir::Access& a : in.srcs) reads.emplace_back(a.tensor, box(a));
  if (in.has_dst()) writes.emplace_back(in.dst.tensor, box(in.dst));
  for (const ir::Access& a : in.extra_dsts) writes.emplace_back(a.tensor, box(a));
  if (in.accumulate) reads.insert(reads.end(), writes.begin(), writes.end());
  for (const auto& [id, b] : reads) read(id, b, ready, dep);
  for (const auto& [id, b] : writes) renamed(id, b, reads, in.accumulate);
  for (const auto& [id, b] : writes) write_deps(id, b, ready, dep);
  for (int64_t p : in.after) {
    const Use& u = ended_.at(edge_key(p));
    if (u.done > ready) ready = u.done, dep = u.node;
  }
  if (floor_ > ready) ready = floor_, dep = floor_node_;
  if (spill_pending_) {
    int64_t touched = 0;  // on-chip bytes per partition the instruction reads and writes
    std::vector<std::vector<int64_t>> tiles;
    bool unknown = false;  // a view or indirect access: which tiles it touches is not known
    for (const auto* side : {&reads, &writes})
      for (const auto& [id, b] : *side) {
        const ir::TensorDecl& td = k_.tensor(id);
        if (td.memory != ir::Memory::SBUF) continue;
        int64_t elements = 1;
        for (size_t d = 0; d < td.shape.size(); ++d)
          if (static_cast<int>(d) != td.partition_dim)
            elements *= b.whole ? td.shape[d] : std::max<int64_t>(0, b.dim[d].second - b.dim[d].first + 1);
        touched += elements * ir::size_of(td.dtype);
        if (side == &writes) continue;  // what it writes is new: only what it reads comes back
        unknown |= b.whole;
        std::vector<int64_t> tile{id};
        for (int d = 0; d < td.partition_dim && !b.whole; ++d) tile.insert(tile.end(), {b.dim[d].first, b.dim[d].second});
        for (int a = 0; a <= td.alloc_axis; ++a) tile.push_back(env.loop[a]);
        tiles.push_back(std::move(tile));
      }
    // The compiler keeps a reloaded tile in SBUF while the instructions that follow use it:
    // an instruction in a loop over the columns of one block reloads it once, not per column.
    if (!unknown && spilled_ && tiles == spill_tiles_) spill_pending_ = false;
    else ready = spill(ready, dep, touched), spill_tiles_ = std::move(tiles);
  }

  if (c.broadcast > 0) broadcast(c, site, ready, dep);
  if (c.track != Track::dma) {
    const Track own = c.track;
    c = on_chosen_engine(site, ext, std::move(c), ready);
    if (c.track != own) moved_[site] = true;
  }

  double start = 0, end = 0;
  int64_t pred = dep;
  const int ti = static_cast<int>(c.track);
  if (c.track == Track::dma) {
    // After the fixed start latency, the transfers take the queues that can start them
    // earliest (in an idle gap or at their free time), the earliest-free first; each
    // queue starts its share when it can, and the result is ready when the last ends.
    size_t dge = dge_free_.size();
    if (in.hwdge && t_.cost.dge_instances > 0) {
      // The DGE instance free first generates the descriptors; the transfer does not wait for
      // the whole generation (the guide gives its time as the instruction's, not a latency).
      const auto first = dge_free_.begin() + core_ * t_.cost.dge_instances;
      dge = static_cast<size_t>(std::min_element(first, first + t_.cost.dge_instances) - dge_free_.begin());
      if (dge_free_[dge] > ready) ready = dge_free_[dge], dep = dge_node_[dge];
      dge_free_[dge] = ready + t_.cost.hwdge_issue_ns;
    }
    const Transfer x = transfer(ready + t_.cost.dma_fixed_latency_ns, c.interval, c.queues, site, dep);
    if (dge < dge_free_.size()) dge_node_[dge] = x.node;
    start = x.start;
    end = x.end;
    tot_.dma_bytes += static_cast<double>(c.dma_bytes);
    site_busy_[site] += c.interval;
    if (c.runs > 0 && static_cast<double>(c.dma_bytes) < c.runs * t_.cost.dma_buffer_overhead_bytes)
      small_runs_[site] = true;
    site_run_bytes_[site] = c.runs > 0 ? static_cast<double>(c.dma_bytes) / static_cast<double>(c.runs) : 0.0;
    pred = x.node;
  } else {
    const std::vector<int64_t> ports = ports_of(in, c.track);
    wait_for_ports(ports, c.track, ready, dep);
    // A matmul in tiling mode holds its tile of the PE array for its whole time, and the engine
    // issues the next one after its share of the array's time, so matmuls on disjoint tiles run at
    // once (the nki.isa reference); a whole-array matmul waits for every tile.
    const bool array = in.opcode == ir::Opcode::Matmul || in.opcode == ir::Opcode::MatmulMx;
    const bool tiled = array && (in.tile_rows < 128 || in.tile_cols < 128);
    const std::vector<int> cells = tiled ? pe_cells(in, env) : std::vector<int>{};
    for (int cell : cells)
      if (pe_tiles_[cell].done > ready) ready = pe_tiles_[cell].done, dep = pe_tiles_[cell].node;
    // The last tile to be free is the last tiled matmul's end.
    if (array && !tiled && pe_active_[core_].done > ready)
      ready = pe_active_[core_].done, dep = pe_active_[core_].node;
    const double interval = tiled ? c.interval * static_cast<double>(cells.size()) / kPeCells : c.interval;
    pred = dep;
    const int tr = core_ * per_core_ + ti;
    int64_t waited = -1;
    start = place(tr, ready, interval, waited);
    if (start > ready) pred = waited;
    end = start + c.latency;
    const int64_t node = add_node({start, end, pred, 1, site, static_cast<int16_t>(tr)});
    if (tiled)
      for (int cell : cells) pe_tiles_[cell] = {start + c.interval, node, num_nodes()};
    for (int64_t key : ports) {
      ports_[key].free[ti] = std::max(ports_[key].free[ti], start + c.interval);
      ports_[key].node[ti] = node;
    }
    add_slice(tr, start, interval, site, 1);
    // Busy: the time some of the array works, once however many tiles do.
    Use& active = pe_active_[core_];
    const double busy = tiled ? std::max(0.0, start + c.interval - std::max(start, active.done)) : interval;
    if (tiled && start + c.interval > active.done) active = {start + c.interval, node, num_nodes()};
    tot_.busy[ti] += busy;
    site_busy_[site] += busy;
    site_at_floor_[site] = c.at_floor;
    tot_.pe_hfu += c.pe_elements;
    if (!c.transpose) tot_.pe_mfu += c.pe_elements;
    pred = node;
  }
  ++tot_.count[ti];
  ++tot_.instructions;
  ++site_count_[site];
  if (end > end_[core_]) end_[core_] = end, end_node_[core_] = pred;
  if (!ended_.empty())  // only kernels with explicit edges record their producers' ends
    if (auto it = ended_.find(edge_key(in.id)); it != ended_.end()) it->second = {end, pred, num_nodes()};
  for (auto& [id, b] : reads) {
    touch(id, start, end, pred);
    record_read(id, std::move(b), end, pred);
  }
  for (auto& [id, b] : writes) {
    touch(id, start, end, pred);
    record_write(id, std::move(b), end, pred);
  }
}

std::vector<double> Schedule::clocks() const {
  const std::vector<int> order = clock_order();
  std::vector<double> c;
  for (int i : order) c.push_back(free_[i]);
  // Then each track's idle gaps: how many, where they start and how long they are. A loop
  // is steady once each gap moves by the period, or stays where it is (as it would
  // unrolled), keeping its length (a gap being filled shrinks).
  for (int i : order) {
    c.push_back(static_cast<double>(gaps_[i].size()));
    for (const Gap& g : gaps_[i]) c.push_back(g.from), c.push_back(g.to - g.from);
  }
  c.insert(c.end(), dge_free_.begin(), dge_free_.end());
  return c;
}

void Schedule::sync() {
  const auto last = std::max_element(end_.begin(), end_.end());
  floor_ = *last;
  floor_node_ = end_node_[last - end_.begin()];
}

Totals Schedule::totals(int s0, int s1) const {
  Totals t = tot_;
  t.slices = static_cast<int64_t>(slices_.size());
  t.site_busy.assign(site_busy_.begin() + s0, site_busy_.begin() + s1);
  t.site_count.assign(site_count_.begin() + s0, site_count_.begin() + s1);
  return t;
}

void Schedule::repeat(int64_t m, const std::vector<double>& delta, double period, const Totals& per, int s0,
                      int64_t since, const ir::SourceLoc& loc) {
  const double shift = period * static_cast<double>(m);
  stretches_.push_back({loc, s0, per.site_busy});
  const int64_t node = add_node({end_[core_], end_[core_] + shift, end_node_[core_], m,
                                  -1 - static_cast<int32_t>(stretches_.size()), static_cast<int16_t>(core_ * per_core_)});
  // Clocks: the compute engines by their own delta; the DMA queues in the order of their free times.
  const std::vector<int> order = clock_order();
  // The slices of the last period, which the stretch repeats (unknown once the timeline is full).
  const int64_t recorded = static_cast<int64_t>(slices_.size());
  const int64_t pattern_begin = slices_dropped_ == 0 ? recorded - per.slices : recorded;
  for (size_t j = 0; j < order.size(); ++j) {
    const int i = order[j];
    if (delta[j] <= 0) continue;
    if (static_cast<int64_t>(slices_.size()) < o_.max_slices) {
      Slice s;
      s.track = i;
      s.start = free_[i];
      s.duration = delta[j] * static_cast<double>(m);
      s.api = "steady-state iterations";
      s.loc = loc;
      s.repeat = m;
      s.period = delta[j];
      s.pattern_begin = pattern_begin;
      s.pattern_end = recorded;
      slices_.push_back(std::move(s));
    }
    free_[i] += delta[j] * static_cast<double>(m);
    last_node_[i] = node;
  }
  // Each idle gap moves by its own delta (clocks() lists them after the free times).
  size_t j = order.size();
  for (int i : order) {
    ++j;  // the count
    for (Gap& g : gaps_[i]) {
      const double shift_gap = delta[j] * static_cast<double>(m);
      g.from += shift_gap, g.to += shift_gap, g.before = node;
      j += 2;  // its start, then its length (unchanged)
    }
  }
  for (size_t d = 0; d < dge_free_.size(); ++d, ++j)  // after the gaps in clocks()
    if (delta[j] > 0) dge_free_[d] += delta[j] * static_cast<double>(m), dge_node_[d] = node;
  for (auto& [key, p] : ports_)
    for (int o = 0; o < kComputeTracks; ++o)
      if (p.node[o] >= since) p.free[o] += shift, p.node[o] = node;
  for (std::vector<Region>& rs : regions_)
    for (Region& r : rs) {
      if (r.write_stamp >= since && r.write_ready > 0) r.write_ready += shift, r.writer = node;
      if (r.read_stamp >= since && r.read_done > 0) r.read_done += shift, r.reader = node;
    }
  for (Live& l : live_)
    if (l.first >= 0 && l.stamp >= since) l.last += shift;
  auto shift_use = [&](Use& u) {
    if (u.stamp >= since && u.done > 0) u.done += shift, u.node = node;
  };
  for (std::deque<Use>& ring : ring_)
    for (Use& u : ring) shift_use(u);
  for (Use& u : reuse_) shift_use(u);
  for (Use& u : done_) shift_use(u);
  for (auto& [key, u] : ended_) shift_use(u);
  for (Use& u : pe_tiles_) shift_use(u);
  for (Use& u : pe_active_) shift_use(u);
  for (int i = 0; i <= kComputeTracks; ++i) {
    tot_.busy[i] += per.busy[i] * static_cast<double>(m);
    tot_.count[i] += per.count[i] * m;
  }
  tot_.dma_bytes += per.dma_bytes * static_cast<double>(m);
  tot_.pe_hfu += per.pe_hfu * static_cast<double>(m);
  tot_.pe_mfu += per.pe_mfu * static_cast<double>(m);
  tot_.instructions += per.instructions * m;
  for (size_t i = 0; i < per.site_busy.size(); ++i) {
    site_busy_[s0 + i] += per.site_busy[i] * static_cast<double>(m);
    site_count_[s0 + i] += per.site_count[i] * m;
  }
  end_[core_] += shift;
  end_node_[core_] = node;
}

Totals operator-(const Totals& a, const Totals& b) {
  Totals d;
  for (int i = 0; i <= kComputeTracks; ++i) d.busy[i] = a.busy[i] - b.busy[i], d.count[i] = a.count[i] - b.count[i];
  d.dma_bytes = a.dma_bytes - b.dma_bytes;
  d.pe_hfu = a.pe_hfu - b.pe_hfu;
  d.pe_mfu = a.pe_mfu - b.pe_mfu;
  d.instructions = a.instructions - b.instructions;
  d.slices = a.slices - b.slices;
  d.site_busy = a.site_busy;
  d.site_count = a.site_count;
  for (size_t i = 0; i < d.site_busy.size() && i < b.site_busy.size(); ++i) {
    d.site_busy[i] -= b.site_busy[i];
    d.site_count[i] -= b.site_count[i];
  }
  return d;
}

void Schedule::note(std::string text) {
  if (std::find(notes_.begin(), notes_.end(), text) == notes_.end()) notes_.push_back(std::move(text));
}

}  // namespace nkic::perf
