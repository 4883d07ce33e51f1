// How many physical buffers the compiler gives the tiles declared in a loop body.
// A tile declared in a loop body is one logical tile per iteration; neuronx-cc maps
// those to physical buffers and may give one tile several, so that a later
// iteration's writes (a load) overlap an earlier iteration's reads (the block
// dimension migration guide: "a space-time tradeoff"). Its ring allocation reuses
// memory only once the allocation wraps around the memory. The model takes the
// kernel's live footprint with one buffer per tile (a tile is live from its first
// to its last access in program order, and over the body of every loop that reaches it
// without declaring it; a hoisted result over its loop) and gives the loop tiles more buffers, one
// more each round (the innermost loops' first, as their tiles turn over most often),
// while what is live stays within the per-partition capacity: a loop tile's extra
// buffers are live over its whole loop body. A tile never gets more buffers than it has
// allocations (its loop's iterations times its enclosing loops').
// The other tiles (an unrolled loop's, the kernel body's) take memory from the same ring, in
// program order: each lands past the previous one, skipping the tiles still live, wrapping
// around the memory, and waits for the tiles whose bytes it takes to be done with them.
#pragma once
#include <cstdint>
#include <vector>

#include "ir/IR.h"
#include "sema/Target.h"

namespace nkic::perf {

struct BufferPlan {
  // By tensor: the physical buffers its iterations rotate through; 0: not rotated
  // (HBM, views, tiles declared outside every loop).
  std::vector<int> count;
  // Per memory: the peak of one buffer per tile, per partition, and the capacity.
  int64_t sbuf_peak = 0, psum_peak = 0, sbuf_capacity = 0, psum_capacity = 0;
  // Past the SBUF capacity with one buffer per tile: the site at which the peak is
  // reached, and the bytes per partition over the capacity there (spilled out and
  // reloaded around it every time it runs).
  int spill_site = -1;
  int64_t spill_bytes = 0;
  // By tensor, for the tiles that do not rotate: the earlier tiles whose bytes the ring
  // allocation gives it, dead by its first access (its writes wait for their last access).
  std::vector<std::vector<int>> reuses;
  // By site: the loop axis whose later iterations skip it (Hoisting.h), or -1; `recomputed`
  // counts the loop-invariant instructions left in every iteration because their loop's
  // tiles do not fit with their result held over it.
  std::vector<int> hoisted;
  int recomputed = 0;
  // By tensor: the blocks of an SBUF block-dim tile live at once (1 for every other tensor):
  // more than one where a loop reads the same blocks in every iteration and so holds them.
  std::vector<int64_t> blocks;
};

// What the kernel's CompileConfig changes of the plan. `max_reuse` (NKI allocation's MAX_REUSE
// mode: "always best-fit; least memory, least overlap"): a loop tile keeps one buffer, and every
// other tile takes the lowest address free at its first access. `prefetch_ring`: SBUF bytes per
// partition a prefetch ring takes out of the capacity.
struct BufferOptions {
  bool max_reuse = false;
  int64_t prefetch_ring = 0;
};

// `order`: the kernel's instructions in program order (the cost model's sites); `hoisted`:
// by site, the loop axis loop_invariant() hoists it out of, or -1 (empty: none).
BufferPlan plan_buffers(const ir::Kernel& k, const sema::Target& t, const std::vector<const ir::Instruction*>& order,
                        std::vector<int> hoisted = {}, const BufferOptions& o = {});

}  // namespace nkic::perf
