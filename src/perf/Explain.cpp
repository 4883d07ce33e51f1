#include "perf/Explain.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "perf/Durations.h"

namespace nkic::perf {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

namespace {

const char* long_name(int track) {
  static const char* const kNames[] = {"Tensor Engine", "Scalar Engine", "Vector Engine", "GpSimd Engine",
                                       "DMA queues"};
  return kNames[track];
}

std::string percent(double part, double whole) { return fmt("%.0f %%", whole > 0 ? 100 * part / whole : 0.0); }


// The figures behind one part of the path.
std::string figures(const CriticalShares& s, int part, const sema::Target& t) {
  const sema::CostFigures& f = t.cost;
  if (part == kComputeTracks + 1)
    return "waiting is the DMA fixed latency (" + fmt("%.0f", f.dma_fixed_latency_ns) +
           " ns per transfer) and the engines' fixed cost before a result is read (" +
           fmt("%.0f", f.dve.fixed_cycles) + " Vector, " + fmt("%.0f", f.act.fixed_cycles) + " Scalar cycles)";
  if (part == kComputeTracks) {
    std::string text = "the DMA queues move runs of " + fmt("%.0f", s.dma_run_bytes) + " B on average, each paying " +
                       fmt("%.0f", f.dma_buffer_overhead_bytes) + " B of buffer overhead, at " +
                       fmt("%g", f.dma_queue_bytes_per_ns) + " B/ns per queue (" + std::to_string(f.dma_queues) +
                       " queues)";
    if (s.spill) text += ", spill traffic included";
    return text;
  }
  const sema::EngineFigures& e = figures(f, static_cast<Track>(part));
  const std::string floor = fmt("%.0f", part == 0 ? f.mm_init_cycles : e.min_ii()) + "-cycle " +
                            (part == 0 ? "matmul minimum" : "minimum interval (MIN_II)");
  const double small = s.track[part] > 0 ? s.at_floor[part] / s.track[part] : 0;
  std::string text = "the " + std::string(long_name(part)) + " runs at " + fmt("%g", e.clock_ghz) + " GHz";
  // Mostly instructions the engine's minimum interval holds: their size does not matter.
  if (small >= 0.5) return text + "; " + percent(small, 1) + " of its time there is instructions too small to fill its " + floor;
  text += part == 0 ? ", one moving column per cycle"
                    : ", " + fmt("%g", e.elems_per_cycle) + (e.elems_per_cycle == 1 ? " element" : " elements") +
                          " per partition per cycle";
  if (small >= 0.05) text += " (" + percent(small, 1) + " of its time there at its " + floor + ")";
  return text;
}

}  // namespace

std::string decided_by(const CriticalShares& s, const sema::Target& t) {
  if (s.total <= 0) return "";
  // Parts: each compute engine, the DMA queues, then the waiting between them.
  double part[kComputeTracks + 2];
  double on = 0;
  for (int i = 0; i <= kComputeTracks; ++i) part[i] = s.track[i], on += s.track[i];
  part[kComputeTracks + 1] = std::max(0.0, s.total - on);
  int order[kComputeTracks + 2];
  for (int i = 0; i < kComputeTracks + 2; ++i) order[i] = i;
  std::stable_sort(order, order + kComputeTracks + 2, [&](int a, int b) { return part[a] > part[b]; });
  std::string text = "critical path " + fmt("%.3f", s.total / 1e3) + " us:";
  for (int i : order) {
    if (part[i] < 0.005 * s.total) continue;
    text += (i == order[0] ? " " : ", ") + percent(part[i], s.total) + " " +
            (i == kComputeTracks + 1 ? "waiting on fixed latencies" : long_name(i));
  }
  return text + "; " + figures(s, order[0], t);
}

}  // namespace nkic::perf
