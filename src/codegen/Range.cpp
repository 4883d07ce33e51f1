#include "codegen/Range.h"

#include <algorithm>
#include <map>

#include "sema/ErrorCatalog.h"

namespace nkic::codegen {

RangeArgs normalize_range_args(const std::vector<int64_t>& args) {
  if (args.empty() || args.size() > 3)
    sema::fail(sema::err_invalid_range_args(
        "expected 1 to 3 range arguments (stop | start, stop | start, stop, step), got " + std::to_string(args.size()),
        sema::ErrorKind::Type));
  RangeArgs r;
  if (args.size() == 1) {
    r.ub = args[0];
  } else {
    r.lb = args[0];
    r.ub = args[1];
    if (args.size() == 3) r.stride = args[2];
  }
  if (r.stride == 0) sema::fail(sema::err_invalid_range_args("range() step must not be zero", sema::ErrorKind::Value));
  r.tripcount = ir::trip_count(r.lb, r.ub, r.stride);
  return r;
}

std::vector<std::pair<std::string, std::string>> extract_loop_directives(const std::vector<LoopDirective>& ds) {
  std::map<std::string, std::string> by_kind;  // the last directive of a kind wins; map keeps output stable
  for (const LoopDirective& d : ds) by_kind[d.kind] = d.value;
  return {by_kind.begin(), by_kind.end()};
}

}  // namespace nkic::codegen
