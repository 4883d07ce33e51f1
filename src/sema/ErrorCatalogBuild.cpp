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

Diagnostic err_psum_over_capacity(std::string_view target, int64_t banks, int64_t capacity_banks, int64_t bank_bytes,
                                  std::string_view live) {
  return make("err_psum_over_capacity",
              "PSUM needs " + std::to_string(banks) + " banks of " + std::to_string(bank_bytes) +
                  " bytes per partition live at once here, more than the " + std::to_string(capacity_banks) +
                  " target '" + s(target) + "' has; live: " + s(live),
              ErrorKind::Value,
              "copy each accumulator to SBUF once it is complete and let the next reuse its bank (declare it in "
              "the loop body that uses it), or accumulate fewer tiles at once");
}

namespace {
// "the 196608 target 'trn2' has" / "the 180224 target 'trn2' leaves after its 16384-byte prefetch ring".
std::string sbuf_room(std::string_view target, int64_t capacity, int64_t ring) {
  if (ring <= 0) return "the " + std::to_string(capacity) + " target '" + s(target) + "' has";
  return "the " + std::to_string(capacity - ring) + " target '" + s(target) + "' leaves after its " +
         std::to_string(ring) + "-byte prefetch ring";
}
}  // namespace

Diagnostic warn_sbuf_spill(std::string_view target, int64_t bytes, int64_t capacity, std::string_view live,
                           int64_t ring) {
  return make("warn_sbuf_spill",
              "SBUF holds " + std::to_string(bytes) + " bytes per partition live here, more than " +
                  sbuf_room(target, capacity, ring) + ": the compiler spills " +
                  std::to_string(bytes - (capacity - ring)) + " bytes per partition to HBM and reloads them; live: " +
                  s(live),
              ErrorKind::Value,
              "work on smaller tiles, or declare tiles in the loop body that uses them so that iterations reuse "
              "their buffers");
}

Diagnostic err_sbuf_over_capacity(std::string_view target, int64_t bytes, int64_t capacity, std::string_view live,
                                  int64_t ring) {
  return make("err_sbuf_over_capacity",
              "NKI allocation (allocation=Allocation.LINEAR, nki_alloc_fallback=False) needs " + std::to_string(bytes) +
                  " bytes per partition of SBUF live here, more than " + sbuf_room(target, capacity, ring) +
                  "; live, largest first: " + s(live),
              ErrorKind::Value,
              "work on smaller tiles or declare them in the loop body that uses them, or leave nki_alloc_fallback "
              "on so that the compiler allocates (and spills) instead");
}

}  // namespace nkic::sema
