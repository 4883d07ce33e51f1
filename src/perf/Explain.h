// Why a prediction is what it is: the critical path's time split by what holds it (each
// compute engine, the DMA queues, or waiting on fixed latencies between them), and the
// Target figures that set the largest part, in one sentence the profile reports
// (Profile::decided_by).
#pragma once
#include <string>

#include "perf/Profile.h"
#include "sema/Target.h"

namespace nkic::perf {

struct CriticalShares {
  double total = 0;                       // the critical path's length (the latency)
  double track[kComputeTracks + 1] = {};  // its time on each compute engine and the DMA queues
  // Of each compute engine's share: the time in instructions too short to fill the engine's
  // minimum interval (MIN_II; the Tensor Engine's matmul init), which their size does not set.
  double at_floor[kComputeTracks] = {};
  double dma_run_bytes = 0;               // DMA share: bytes per contiguous run, time-weighted
  bool spill = false;                     // a spill transfer is on the path
};

std::string decided_by(const CriticalShares& s, const sema::Target& t);

// `v` printed with the printf format `f` (one number), for the profile's sentences.
std::string fmt(const char* f, double v);

}  // namespace nkic::perf
