// Schedule::finish: the Profile of a finished schedule (engine totals, the critical path,
// time per source line, SBUF/PSUM occupancy and the notes).
#include <algorithm>
#include <map>
#include <tuple>

#include "perf/Explain.h"
#include "perf/Schedule.h"
#include "sema/Allocation.h"

namespace nkic::perf {

namespace {

// At most `n` samples: the peak of each run of consecutive samples.
std::vector<OccupancySample> downsample(const std::vector<OccupancySample>& all, size_t n) {
  if (all.size() <= n) return all;
  std::vector<OccupancySample> out;
  const size_t per = (all.size() + n - 1) / n;
  for (size_t i = 0; i < all.size(); i += per) {
    OccupancySample s = all[i];
    for (size_t j = i; j < std::min(all.size(), i + per); ++j) {
      s.sbuf_bytes = std::max(s.sbuf_bytes, all[j].sbuf_bytes);
      s.psum_bytes = std::max(s.psum_bytes, all[j].psum_bytes);
    }
    out.push_back(s);
  }
  return out;
}

}  // namespace

Profile Schedule::finish() {
  for (size_t id = 0; id < live_.size(); ++id) release(static_cast<int>(id));
  Profile p;
  p.kernel = k_.name;
  p.target = t_.name;
  p.allocation = sema::allocation_name(o_.config);
  p.scheduling = sema::scheduling_name(o_.config);
  const auto last = std::max_element(end_.begin(), end_.end());
  const int64_t end_node = end_node_[last - end_.begin()];
  p.latency = *last;
  p.cores = cores_;
  for (int i = 0; i <= kComputeTracks; ++i) p.engines.push_back({static_cast<Track>(i), tot_.busy[i], tot_.count[i]});
  const sema::CostFigures& f = t_.cost;
  const double pe_capacity = static_cast<double>(f.pe_rows * f.pe_cols) * p.latency * f.pe.clock_ghz * cores_;
  p.hfu = pe_capacity > 0 ? tot_.pe_hfu / pe_capacity : 0;
  p.mfu = pe_capacity > 0 ? tot_.pe_mfu / pe_capacity : 0;
  p.dma_bytes = static_cast<int64_t>(tot_.dma_bytes);
  p.dma_queues = f.dma_queues;
  p.dma_utilisation =
      p.latency > 0 ? tot_.dma_bytes / (p.latency * f.dma_queues * f.dma_queue_bytes_per_ns * cores_) : 0;
  p.instructions = tot_.instructions;
  p.instructions_scheduled = scheduled_;

  // The critical path: back from the last result through what each start waited for. A
  // step may overlap the next (an engine's next instruction starts once the previous has
  // left it; a transfer fills a gap before the queue's last): each counts up to where the
  // next begins.
  double bound = p.latency;
  CriticalShares shares;
  shares.total = p.latency;
  double dma_weight = 0;
  // A part of the path on `track` (an engine, or a DMA queue) spent by `site`.
  auto share = [&](int track, int site, double span) {
    const int part = std::min(track % per_core_, kComputeTracks);
    shares.track[part] += span;
    if (part < kComputeTracks) {
      if (site_at_floor_[site]) shares.at_floor[part] += span;
      return;
    }
    dma_weight += span;
    shares.dma_run_bytes += span * site_run_bytes_[site];
    shares.spill = shares.spill || (span > 0 && ir::engine_of(*site_inst_[site]) != ir::Engine::dma);
  };
  for (int64_t n = end_node; n >= 0; n = nodes_[n].pred) {
    const Node& nd = nodes_[n];
    const double span = std::max(0.0, std::min(nd.end, bound) - nd.start);
    bound = std::min(bound, nd.start);
    if (nd.site >= 0) {
      site_critical_[nd.site] += span;
      share(nd.track, nd.site, span);
    } else {
      const Stretch& st = stretches_[-2 - nd.site];
      double busy = 0;
      for (double b : st.site_busy) busy += b;
      for (size_t i = 0; busy > 0 && i < st.site_busy.size(); ++i) {
        const int site = st.s0 + static_cast<int>(i);
        site_critical_[site] += span * st.site_busy[i] / busy;
        share(static_cast<int>(track_of(ir::engine_of(*site_inst_[site]))), site, span * st.site_busy[i] / busy);
      }
    }
    if (p.critical_path.size() < 64) {
      CriticalStep st;
      st.track = nd.track;
      st.start = nd.start;
      st.end = nd.end;
      st.repeat = nd.repeat;
      if (nd.site >= 0) {
        st.opcode = site_inst_[nd.site]->opcode;
        st.api = site_inst_[nd.site]->api;
        st.loc = site_inst_[nd.site]->loc;
      } else {
        st.api = "steady-state iterations";
        st.loc = stretches_[-2 - nd.site].loc;
      }
      p.critical_path.push_back(std::move(st));
    }
  }
  if (dma_weight > 0) shares.dma_run_bytes /= dma_weight;
  p.decided_by = decided_by(shares, t_);
  if (num_nodes() >= o_.max_nodes) note("the critical path covers only the first " + std::to_string(o_.max_nodes) +
                                        " instruction executions");

  std::map<std::pair<const std::string*, int>, LineCost> lines;
  for (size_t s = 0; s < site_inst_.size(); ++s) {
    if (site_count_[s] == 0) continue;
    LineCost& l = lines[{site_inst_[s]->loc.file, site_inst_[s]->loc.line}];
    l.loc = site_inst_[s]->loc;
    l.busy += site_busy_[s];
    l.critical += site_critical_[s];
    l.instructions += site_count_[s];
  }
  for (auto& [key, l] : lines) p.lines.push_back(l);
  std::stable_sort(p.lines.begin(), p.lines.end(), [](const LineCost& a, const LineCost& b) { return a.busy > b.busy; });

  // Occupancy: every allocation from its first to its last use, per core (kernel[n]: each
  // core has its own SBUF and PSUM; a sample is the fullest core's); at equal times frees
  // come first.
  struct Event {
    double time;
    int64_t bytes;
    int core;
    bool psum;
  };
  std::vector<Event> ev;
  for (const Interval& iv : intervals_) {
    const ir::TensorDecl& t = k_.tensor(iv.tensor);
    const int64_t bytes = sema::allocated_bytes(t);
    const bool psum = t.memory == ir::Memory::PSUM;
    ev.push_back({iv.first, bytes, iv.core, psum});
    ev.push_back({iv.last, -bytes, iv.core, psum});
  }
  std::stable_sort(ev.begin(), ev.end(), [](const Event& a, const Event& b) {
    return a.time != b.time ? a.time < b.time : a.bytes < b.bytes;
  });
  std::vector<OccupancySample> samples;
  std::vector<int64_t> sbuf(cores_, 0), psum(cores_, 0);
  for (const Event& e : ev) {
    (e.psum ? psum : sbuf)[e.core] += e.bytes;
    const OccupancySample s{e.time, *std::max_element(sbuf.begin(), sbuf.end()),
                            *std::max_element(psum.begin(), psum.end())};
    p.sbuf_peak_bytes = std::max(p.sbuf_peak_bytes, s.sbuf_bytes);
    p.psum_peak_bytes = std::max(p.psum_peak_bytes, s.psum_bytes);
    if (!samples.empty() && samples.back().time == e.time) samples.back() = s;
    else samples.push_back(s);
  }
  p.occupancy = downsample(samples, 2000);
  p.sbuf_capacity_bytes = t_.statebuf_par_size_in_bytes - o_.prefetch_ring;
  p.psum_capacity_bytes = t_.psum_par_size_in_bytes * t_.psum_num_banks;
  // The transfers whose contiguous runs are small enough that the per-run overhead takes
  // most of their queue time: what makes a variant DMA-bound on descriptors, not bytes.
  double small_busy = 0, dma_busy = 0;
  int small_sites = 0, first_small = -1;
  for (size_t s = 0; s < site_inst_.size(); ++s) {
    if (site_count_[s] == 0 || ir::engine_of(*site_inst_[s]) != ir::Engine::dma) continue;
    dma_busy += site_busy_[s];
    if (!small_runs_[s]) continue;
    small_busy += site_busy_[s], ++small_sites;
    if (first_small < 0) first_small = static_cast<int>(s);
  }
  // "file.py:12" of a site, for the notes.
  auto where = [this](int site) {
    const ir::SourceLoc& at = site_inst_[site]->loc;
    return at.known() ? at.file->substr(at.file->find_last_of('/') + 1) + ":" + std::to_string(at.line) : "?";
  };
  if (small_sites > 0) {
    note(std::to_string(small_sites) + " DMA instruction(s) (the first at " + where(first_small) + ") move contiguous runs of under " +
         std::to_string(static_cast<int64_t>(f.dma_buffer_overhead_bytes)) +
         " bytes on average, the DMA bandwidth guide's overhead-bound payloads: " +
         std::to_string(static_cast<int>(100 * small_busy / std::max(dma_busy, 1e-9) + 0.5)) +
         " % of the DMA queue time, each run costing the queue time of " +
         std::to_string(static_cast<int64_t>(f.dma_buffer_overhead_bytes)) + " bytes more");
  }
  const auto run_time_blocks = std::count(run_time_block_.begin(), run_time_block_.end(), true);
  if (run_time_blocks > 0) {
    const auto first = std::find(run_time_block_.begin(), run_time_block_.end(), true) - run_time_block_.begin();
    note(std::to_string(run_time_blocks) + " instruction(s) (the first at " + where(static_cast<int>(first)) +
         ") pick an on-chip block by a floor division or modulo of a sequential_range counter, an address "
         "computed at run time: the compiler cannot tell that block from the others, so the instruction waits "
         "for (and holds up) every access to the tensor along that dimension");
  }
  const auto moved = std::count(moved_.begin(), moved_.end(), true);
  if (moved > 0)
    note(std::to_string(moved) + " tensor_scalar instruction(s) that name no engine (the first at " +
         where(static_cast<int>(std::find(moved_.begin(), moved_.end(), true) - moved_.begin())) +
         ") run on the Scalar Engine where it finishes them first, as the compiler chooses");
  const bool spilled = spilled_;
  if (broadcasts_ > 0)
    note(std::to_string(broadcasts_) + " partition broadcast(s) (broadcast_to of a one-partition tile, the first read at " +
         where(first_broadcast_) + ") are Tensor-Engine matmuls of a ones column with the row: " +
         fmt("%.1f", broadcast_busy_ / 1e3) + " us of Tensor-Engine time");
  if (spilled) {
    // The largest block-dim tile a loop holds whole: what usually takes the SBUF past its capacity.
    int held = -1;
    for (size_t id = 0; id < plan_.blocks.size(); ++id)
      if (plan_.blocks[id] > 1 && (held < 0 || sema::held_bytes(k_.tensors[id], plan_.blocks) >
                                                   sema::held_bytes(k_.tensors[held], plan_.blocks)))
        held = static_cast<int>(id);
    std::string holds;
    if (held >= 0) {
      const ir::TensorDecl& d = k_.tensors[held];
      holds = " (a loop holds " + std::to_string(plan_.blocks[held]) + " blocks of " +
              std::to_string(sema::allocated_bytes(d)) + " bytes of '" + d.name + "'" +
              (d.loc.known() ? ", declared at line " + std::to_string(d.loc.line) : "") + ", as it reads them in every iteration)";
    }
    note("one buffer per tile keeps " + std::to_string(plan_.sbuf_peak) + " bytes per partition of SBUF live at " +
         where(plan_.spill_site) + holds + ", more than the " + std::to_string(plan_.sbuf_capacity) +
         " the target has: the excess, up to what the instruction there touches, is spilled to HBM and reloaded"
         " there, again whenever the program passes it reading other tiles");
  }
  // Loop tiles rotate through the buffers that fit (BufferPlan), and a footprint over the
  // capacity is spilled; what the schedule still keeps live beyond it, the plan does not bound.
  for (const auto& [peak, cap, what] : {std::tuple{p.sbuf_peak_bytes, p.sbuf_capacity_bytes, "SBUF"},
                                        std::tuple{p.psum_peak_bytes, p.psum_capacity_bytes, "PSUM"}})
    if (peak > cap && !(spilled && what == std::string("SBUF")))
      note(std::string("the schedule keeps ") + std::to_string(peak) + " bytes per partition of " + what +
           " live, more than the " + std::to_string(cap) + " the target has: expect spills or less overlap");
  p.slices = std::move(slices_);
  p.slices_dropped = slices_dropped_;
  p.notes = notes_;
  return p;
}

}  // namespace nkic::perf
