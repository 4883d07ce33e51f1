// Range lowering (seed 003): normalising range-like arguments, loop directives,
// and create_affine_axis_block, the one place a deferred loop becomes an axis.
#pragma once
#include <cstdint>
#include <string>
#include <optional>
#include <utility>
#include <vector>

#include "ir/IR.h"

namespace nkic::codegen {

struct RangeArgs {
  int64_t lb = 0, ub = 0, stride = 1, tripcount = 0;
};
// (stop), (start, stop) or (start, stop, step), as Python's range; step != 0.
RangeArgs normalize_range_args(const std::vector<int64_t>& args);

// A loop directive as the user wrote it (ncc.multi_buffer(2), ncc.no_reorder(), ...).
struct LoopDirective {
  std::string kind;
  std::string value;
};
// Directives -> the axis attributes the printer shows (sorted, deduplicated by kind).
std::vector<std::pair<std::string, std::string>> extract_loop_directives(const std::vector<LoopDirective>& ds);

// create_affine_axis_block's kwargs contract, field for field.
struct AxisBlockArgs {
  std::string loop_name_id;
  int64_t lb = 0, ub = 0, stride = 1;
  const ir::Loop* parent = nullptr;        // the enclosing axis (null at kernel level)
  const ir::Stmt* insert_before = nullptr;  // must be null: axes are appended
  ir::AxisType axis_type = ir::AxisType::Affine;
  std::optional<ir::Access> dynamic_ub;     // a runtime upper bound: the axis is a DynamicAxis
  std::vector<std::pair<std::string, std::string>> attrs;
};

}  // namespace nkic::codegen
