// The stable, readable text form of a kernel. Deterministic: the same kernel
// always prints byte-identical text.
#pragma once
#include <string>

#include "ir/IR.h"

namespace nkic::ir {

struct PrintOptions {
  bool show_locations = true;
};

std::string print(const Kernel& k, const PrintOptions& opts = {});
std::string print_constraint(const Constraint& c, const Kernel* k = nullptr);

}  // namespace nkic::ir
