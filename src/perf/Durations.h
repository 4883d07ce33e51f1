// How long one execution of an instruction occupies its engine, and when its
// result is ready, from the Target's published figures (sema::CostFigures). The
// formula is chosen by the instruction table's cost class (ir::Cost).
#pragma once
#include <cstdint>

#include "ir/IR.h"
#include "perf/Footprint.h"
#include "perf/Profile.h"
#include "sema/Target.h"

namespace nkic::perf {

struct InstCost {
  bool costed = false;  // false: no engine time (random_seed, device_print, an empty mask)
  Track track = Track::pe;
  // Compute engines: the initiation interval (engine busy) and the time from
  // start to result. DMA: `queues` transfers in parallel, each busy `interval`
  // on its queue after the fixed latency; the result is ready when they end.
  double interval = 0, latency = 0;
  int queues = 0;
  int64_t dma_bytes = 0;
  int64_t runs = 0;  // DMA: the contiguous runs (descriptors) it moves, each paying the buffer overhead
  // Tensor Engine work, BF16-equivalent rows x columns x moving columns (HFU),
  // and whether it is a transpose (not counted in MFU).
  double pe_elements = 0;
  bool transpose = false;
  // Compute engines: the interval is the engine's minimum (MIN_II, the matmul init), which
  // the instruction is too small to fill.
  bool at_floor = false;
  // Vector, Scalar and GpSimd instructions: the Tensor-Engine time of the matmuls that broadcast
  // their partition-broadcast operands (broadcast_to of a one-partition tile) across the
  // partitions first, a ones column times the row into PSUM, and their elements (HFU, not MFU).
  double broadcast = 0, broadcast_pe_elements = 0;
};

// `ext` is the execution's iteration space after its mask (active_extents); `spans`, the
// loops a coalesced DMA moves all the iterations of at once (innermost first); `engine`, the
// engine it runs on when not its own (one the compiler chooses, compiler_engines).
InstCost cost_of(const ir::Instruction& in, const ir::Kernel& k, const sema::Target& t, const Extents& ext,
                 const std::vector<Span>& spans = {}, ir::Engine engine = ir::Engine::none);

// One leg of a spill (SBUF to HBM, or back): `bytes_per_partition` on every partition, one
// contiguous buffer each, on the queues a full-partition load takes.
InstCost spill_cost(int64_t bytes_per_partition, const sema::Target& t);

// The track an engine's instructions run on.
Track track_of(ir::Engine e);
// The figures of a compute engine's track.
const sema::EngineFigures& figures(const sema::CostFigures& f, Track t);

}  // namespace nkic::perf
