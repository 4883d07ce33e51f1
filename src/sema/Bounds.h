// Static out-of-bound detection (err_tensor_access_out_of_bound): the range of
// every access index over the instruction's iteration space, the enclosing
// loops and the launch grid, narrowed by the instruction's mask.
#pragma once
#include <functional>
#include <optional>
#include <utility>

#include "ir/IR.h"
#include "sema/Asserts.h"

namespace nkic::sema {

// The [min, max] a loop variable or program id takes; nullopt when only known at
// run time (a DynamicAxis), which leaves the accesses using it unchecked.
using VarRange = std::function<std::optional<std::pair<int64_t, int64_t>>(ir::Var)>;

void assert_access_in_bounds(const ir::Instruction& in, const ir::Access& a, const ir::TensorDecl& t,
                             const VarRange& range_of, const Raise& raise);

}  // namespace nkic::sema
