// What the cost model predicts for one kernel on one target: the vocabulary of
// neuron-profile (per-engine active time, HFU/MFU, DMA bandwidth use, SBUF/PSUM
// occupancy, an instruction timeline), plus time per source line and the
// critical path. Times are in nanoseconds.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "ir/IR.h"

namespace nkic::perf {

// The tracks of the timeline: the four compute engines, then one per DMA queue;
// on a kernel[n] launch, that for each physical core in turn.
enum class Track : uint8_t { pe, act, dve, pool, dma };
constexpr int kComputeTracks = 4;
const char* name(Track t);

// One instruction execution on the timeline. Iterations of a loop the model
// repeats without scheduling (steady state) show as one slice per track with
// `repeat` > 1 covering their span: the slices of the period scheduled last
// before it, slices [pattern_begin, pattern_end) on this track, `repeat` times
// again, each time `period` later (an empty range when the timeline was full).
struct Slice {
  int track = 0;          // 0..3 compute engines (Track order), 4 + q for DMA queue q (+ core x tracks_per_core)
  double start = 0, duration = 0;
  ir::Opcode opcode = ir::Opcode::Copy;
  std::string api;        // "nl.load"
  ir::SourceLoc loc;
  int64_t repeat = 1;
  double period = 0;
  int64_t pattern_begin = 0, pattern_end = 0;
};

struct EngineUse {
  Track track = Track::pe;
  double busy = 0;          // summed initiation intervals (DMA: queue time of its transfers)
  int64_t instructions = 0;
};

// Time attributed to one source line: the busy time of every instruction it
// emitted, and how much of it lies on the critical path.
struct LineCost {
  ir::SourceLoc loc;
  double busy = 0;
  double critical = 0;
  int64_t instructions = 0;
};

// One step of the critical path, latest first: the instruction that finished
// last, then whatever it waited for (its engine or an operand), and so on.
struct CriticalStep {
  ir::Opcode opcode = ir::Opcode::Copy;
  std::string api;
  ir::SourceLoc loc;
  int track = 0;
  double start = 0, end = 0;
  int64_t repeat = 1;  // a steady-state stretch of a loop, repeated this many times
};

struct OccupancySample {
  double time = 0;
  int64_t sbuf_bytes = 0;  // per partition, of the tiles live at `time` (kernel[n]: on the fullest core)
  int64_t psum_bytes = 0;
};

struct Profile {
  std::string kernel, target;
  double latency = 0;
  std::vector<EngineUse> engines;  // pe, act, dve, pool, dma (all queues)
  // Tensor Engine utilisation (neuron-profile): PE elements (rows x cols x moving
  // columns, BF16-equivalent) over pe_rows x pe_cols x the kernel's PE cycles;
  // MFU leaves out transposes.
  double hfu = 0, mfu = 0;
  int64_t dma_bytes = 0;
  int dma_queues = 0;          // of the target's NeuronCore (dma busy is summed over them)
  int cores = 1;               // physical NeuronCores (kernel[n]); busy times are summed over them
  int tracks_per_core() const { return kComputeTracks + dma_queues; }
  double dma_utilisation = 0;  // bytes over latency x aggregate DMA bandwidth (of every core)
  int64_t sbuf_peak_bytes = 0, psum_peak_bytes = 0;  // per partition, of one core
  int64_t sbuf_capacity_bytes = 0, psum_capacity_bytes = 0;
  std::vector<OccupancySample> occupancy;
  std::vector<LineCost> lines;            // by busy time, largest first
  std::vector<CriticalStep> critical_path;
  std::vector<Slice> slices;
  int64_t slices_dropped = 0;             // beyond Options::max_slices
  int64_t instructions = 0;               // executions costed (repeats included)
  int64_t instructions_scheduled = 0;     // of them, scheduled one by one
  std::vector<std::string> notes;         // assumptions this prediction had to make
  // What decided the latency: the critical path's split by engine, DMA and waiting, and the
  // figures behind its largest part (perf/Explain.h).
  std::string decided_by;
  // The allocation and schedule assumed (the kernel's CompileConfig): "COLORING", "LINEAR (RING)";
  // "the compiler's list schedule", "TRIVIAL", ...
  std::string allocation, scheduling;
};

}  // namespace nkic::perf
