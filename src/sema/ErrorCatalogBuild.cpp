// The err_* builders of the target compiler's build rules: what the trn2 build rejects
// although a simulation that does not check it would run (docs/errors.md cites each rule's source).
#include "sema/CatalogMake.h"
#include "sema/ErrorCatalog.h"

namespace nkic::sema {

using catalog::make;
using catalog::s;

Diagnostic err_invalid_partition_access(std::string_view tensor, int64_t partitions, int64_t start, int64_t alignment) {
  const std::string allowed = alignment == 0    ? "partition 0"
                              : alignment == 64 ? "partition 0 or 64"
                                                : "partition 0, 32, 64 or 96";
  return make("err_invalid_partition_access",
              "Invalid access of " + std::to_string(partitions) + " partitions starting at partition " +
                  std::to_string(start) + " of '" + s(tensor) + "': an engine reads or writes " +
                  std::to_string(partitions) + " partitions from " + allowed,
              ErrorKind::Index);
}

Diagnostic warn_empty_access(std::string_view api, std::string_view tensor, std::string_view shape) {
  return make("warn_empty_access",
              "'" + s(api) + "' is given an empty slice of '" + s(tensor) + "' (shape " + s(shape) +
                  "): it covers no element, and nothing is executed",
              ErrorKind::Syntax, "skip the call when the slice is empty (a loop's tail of zero length)");
}

}  // namespace nkic::sema
