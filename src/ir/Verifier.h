// Structural checks every well-formed kernel satisfies. Legality against a
// hardware target is sema's job; this only guards the IR's own invariants.
#pragma once
#include <string>
#include <vector>

#include "ir/IR.h"

namespace nkic::ir {

// Empty when the kernel is well formed; otherwise one line per problem.
std::vector<std::string> verify(const Kernel& k);

}  // namespace nkic::ir
