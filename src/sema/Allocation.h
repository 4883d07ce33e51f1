// Allocation as the compiler does it: the SBUF and PSUM bytes per partition of the tensors
// live at each instruction of a kernel, against the target's capacities. A tensor is live
// from its first access to its last in program order, and over the whole body of every
// loop that reaches it without declaring it (each iteration reaches it again); a tile
// declared in a loop body is one buffer per iteration, live within the iteration (the
// compiler may give it more buffers only where they fit, so one is what must fit). The blocks
// of a legacy declaration with block dims are tiles of their own (held_blocks). Placed
// tensors (address=) count
// where they are live like the others: two of them share bytes only while one is dead
// (err_address_overlap).
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ir/IR.h"
#include "sema/Diagnostic.h"
#include "sema/Target.h"

namespace nkic::sema {

// Bytes one partition holds of on-chip tensor `t` (its block dims included).
int64_t partition_bytes(const ir::TensorDecl& t);
// The bytes per partition one block of `t` takes: the blocks of a legacy declaration with
// block dims ((B, nl.par_dim(P), F)) are tiles of their own, each live while it is used.
int64_t allocated_bytes(const ir::TensorDecl& t);
// By tensor: how many blocks of an SBUF block-dim tile are live at once (1 for every other
// tensor). One where each block is used within one iteration of the loops that pick it
// (neuronx-cc splits an instruction over several blocks and reorders affine loops to stream a
// producer into its consumer). A block read again in every iteration of a loop (one that does
// not pick it, inside the tile's declaring loop) is kept over that loop with all the blocks
// the loop's body reads, as a plain tile a loop reaches without declaring it is. A tile
// reached through a view or an indirect index counts one block. PSUM keeps one block: the
// attention tutorials hold a PSUM tensor of 16 one-bank blocks over a loop, and build.
std::vector<int64_t> held_blocks(const ir::Kernel& k);
// The bytes per partition `t` takes at once: its held blocks (`held`, by tensor: held_blocks).
inline int64_t held_bytes(const ir::TensorDecl& t, const std::vector<int64_t>& held) {
  return allocated_bytes(t) * held[t.id];
}

// By tensor id, the [first, last] instructions (numbered in program order, loop bodies in
// place) over which the root tensor is live; first < 0: never accessed. Indirect index
// tensors count as accessed where they are read.
struct LiveRange {
  int64_t first = -1, last = -1;
};
std::vector<LiveRange> live_ranges(const ir::Kernel& k);

// Where one memory of one core holds the most: `bytes` per partition live at instruction
// `at` (PSUM: whole banks, tiles smaller than a bank sharing them), the tensors live there
// largest first, and what the target has.
struct MemoryPeak {
  ir::Memory memory = ir::Memory::SBUF;
  int core = 0;
  int64_t bytes = 0, capacity = 0;
  int64_t at = -1;
  std::vector<int> tensors;
};
// The SBUF and PSUM peaks of every core; none for a kernel that places its tiles itself
// (ncc.sbuf/psum alloc: its own allocation, checked where it is made).
std::vector<MemoryPeak> allocation_peaks(const ir::Kernel& k, const Target& t);

// The verdict on the peaks: PSUM over its banks is an error (the compiler has nowhere to put
// an accumulator); SBUF over its capacity is a warning naming the spill (the compiler spills
// to HBM and reloads). Each is located at the instruction of the peak, with a note at every
// live tensor's declaration. `display`: the name the user wrote for an IR tensor name.
struct AllocationVerdict {
  std::optional<Diagnostic> error;
  std::vector<Diagnostic> warnings;
};
// What the kernel's CompileConfig changes: a prefetch ring takes `prefetch_ring` SBUF bytes
// per partition; NKI's linear-scan allocation without fallback (`no_fallback`) cannot spill,
// so SBUF over its capacity is an error (err_sbuf_over_capacity) too.
struct AllocationOptions {
  bool no_fallback = false;
  int64_t prefetch_ring = 0;
};
AllocationVerdict check_allocation(const ir::Kernel& k, const Target& t,
                                   const std::function<std::string(const std::string&)>& display,
                                   const AllocationOptions& o = {});

}  // namespace nkic::sema
