// What one execution of an instruction touches, with its loop variables and
// program ids bound: the iteration space left after its mask, the box of
// elements each access covers, and how an access breaks into contiguous runs
// (the DMA buffers a transfer is made of).
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "ir/IR.h"

namespace nkic::perf {

// Values of the Loop and ProgramId variables for one execution.
struct Env {
  std::vector<int64_t> loop;  // by loop axis
  std::vector<int64_t> pid;   // by launch-grid axis
  int64_t value(ir::Var v) const;
};

// The [lo, hi] (inclusive) of every Grid coordinate after the instruction's
// mask, narrowing only by constraints on one coordinate (others keep the whole
// extent); empty() when the mask leaves nothing.
struct Extents {
  std::vector<std::pair<int64_t, int64_t>> range;
  bool empty() const;
  int64_t size(size_t k) const { return range[k].second - range[k].first + 1; }
  int64_t points() const;
};
Extents active_extents(const ir::Instruction& in, const Env& env);

// The first and last trip (counted from 0) of `l`, with `trips` trips, in which some
// instruction of its body can have a nonempty mask (first > last: none), with the loops
// around `l` bound by `env`. Only constraints in `l`'s variable and at most one Grid
// coordinate narrow it, as in active_extents: outside the range every instruction of
// the body is masked off entirely.
std::pair<int64_t, int64_t> active_trips(const ir::Loop& l, int64_t trips, const Env& env);

// The elements of a tensor an access covers, as per-dimension [lo, hi]. `whole`
// stands for every element (views, indirect indexing): it overlaps everything.
struct Box {
  std::vector<std::pair<int64_t, int64_t>> dim;
  bool whole = false;
  bool overlaps(const Box& o) const;
  bool contains(const Box& o) const;
};
Box access_box(const ir::Access& a, const ir::TensorDecl& t, const Extents& ext, const Env& env);

// By loop axis: whether neuronx-cc keeps the loop at run time (a legacy sequential_range), its
// counter a run-time value.
std::vector<bool> kept_loop_axes(const ir::Kernel& k);
// Widens `b` over every dimension of an on-chip `a` whose index divides a kept loop's counter
// (floor division, modulo: `buf[i % 2]`): an address computed at run time, which the compiler's
// dependency analysis cannot tell from the tensor's other blocks. Whether it widened one.
bool widen_run_time_blocks(Box& b, const ir::Access& a, const ir::TensorDecl& t, const std::vector<bool>& kept);

// How a transfer between `accesses` breaks into DMA buffers: `run` points are
// contiguous in every access at once (walking the innermost Grid coordinates; on
// chip, within one partition); `transposes` when the innermost coordinate is
// contiguous on one side but walks the partitions of the other (a DMA transpose).
// With `spans` (innermost first), the transfer is coalesced over those loops' iterations
// too (Coalescing.h): a run continues across iterations that are adjacent in every access.
struct DmaShape {
  int64_t run = 1;
  bool transposes = false;
};
// A loop a coalesced transfer spans: its variable takes lb + i * stride for i < trips.
struct Span {
  int axis = -1;
  int64_t trips = 1, stride = 1;
};
DmaShape dma_shape(const std::vector<const ir::Access*>& accesses, const ir::Kernel& k, const Extents& ext,
                   const std::vector<Span>& spans = {});

// Bytes between consecutive elements along the access's innermost Grid
// coordinate (its most-minor free dimension); 0 when it does not move.
int64_t minor_stride_bytes(const ir::Access& a, const ir::TensorDecl& t, int rank);

// The Grid coordinate that walks the partitions of on-chip tensor `t` through
// `a` (the one in its partition dimension), or 0 when none does.
int partition_coord(const ir::Access& a, const ir::TensorDecl& t);

// Whether the access walks more than the partitions (`pcoord`): a streamed
// operand, not a broadcast scalar or per-partition vector.
bool streams(const ir::Access& a, int pcoord);

// Whether on-chip access `a` reads the same row for every partition: a partition broadcast
// (broadcast_to of a one-partition tile).
bool partition_broadcast(const ir::Access& a, const ir::TensorDecl& t);

}  // namespace nkic::perf
