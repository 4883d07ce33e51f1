// The engines' partition rule (NKI_CURRENT_API.md §3.4; the legacy ncc.sbuf.alloc
// placement rule, NKI_API.md): a compute engine reads and writes P contiguous
// partitions starting at partition 0 when 64 < P, at 0 or 64 when 32 < P <= 64,
// and at 0, 32, 64 or 96 when P <= 32. The trn2 build rejects any other access
// ("Invalid access of 1 partitions starting at partition 1"); the DMA queues
// move any partitions.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>

#include "ir/IR.h"


namespace nkic::sema {

// The values a loop variable or program id takes: first, step and count; nullopt when
// only known at run time, which leaves the accesses using it unchecked.
struct VarSteps {
  int64_t first = 0, step = 1, count = 1;
};
using VarLattice = std::function<std::optional<VarSteps>(ir::Var)>;

// The partition a P-partition access may start at is a multiple of this (0: only partition 0).
int64_t partition_start_alignment(int64_t partitions);

// An on-chip access of `in` (an engine's, not a DMA's) that starts at a partition the rule
// above refuses, for some value of the loops around it: its partitions, the first such start
// and the alignment it misses (err_invalid_partition_access).
struct PartitionStartViolation {
  int64_t partitions = 0, start = 0, alignment = 0;
};
std::optional<PartitionStartViolation> partition_start_violation(const ir::Instruction& in, const ir::Access& a,
                                                                 const ir::TensorDecl& t, const VarLattice& lattice);

}  // namespace nkic::sema
