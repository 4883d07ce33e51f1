// The err_* builders of nki.compiler (CompileConfig, SpecializationConfig, NKI 0.7/0.8) and of
// the 0.7 tracer frontend: the quoted texts are the compiler's (NKI_07_08_API.md §6.5, §1.3).
#include "sema/CatalogMake.h"
#include "sema/ErrorCatalog.h"

namespace nkic::sema {

using catalog::make;
using catalog::s;

Diagnostic err_compile_config_type(std::string_view field, std::string_view expected) {
  return make("err_compile_config_type", s(field) + " must be " + s(expected), ErrorKind::Type,
              "pass a member of the nki.compiler enum (from nki.compiler import Allocation, ...), not a string or "
              "number");
}

Diagnostic err_scheduling_needs_linear_allocation(std::string_view got) {
  return make("err_scheduling_needs_linear_allocation",
              got.empty() ? "scheduling=True needs an allocation; set allocation=Allocation.LINEAR as well."
                          : "scheduling=True needs allocation=Allocation.LINEAR, got allocation=" + s(got),
              ErrorKind::Value);
}

Diagnostic err_option_needs_nki_allocation(std::string_view option) {
  return make("err_option_needs_nki_allocation",
              s(option) + " acts only when NKI allocates; it cannot be set with allocation=Allocation.COLORING.",
              ErrorKind::Value, "set allocation=Allocation.LINEAR, or leave " + s(option) + " out");
}

Diagnostic err_option_needs_nki_scheduling(std::string_view option) {
  return make("err_option_needs_nki_scheduling",
              s(option) + " acts only when NKI schedules; set scheduling=True as well.", ErrorKind::Value);
}

Diagnostic err_prefetch_ring_conflict(std::string_view ring_env) {
  return make("err_prefetch_ring_conflict",
              "prefetch_auto=True and NKI_PREFETCH_RING_SIZE=" + s(ring_env) +
                  " are mutually exclusive: prefetch_auto sizes the prefetch ring itself",
              ErrorKind::Value, "unset NKI_PREFETCH_RING_SIZE, or leave prefetch_auto out");
}

Diagnostic err_invalid_environment_value(std::string_view variable, std::string_view value, std::string_view expected) {
  return make("err_invalid_environment_value", s(variable) + "=" + s(value) + " is not " + s(expected),
              ErrorKind::Value, "set " + s(variable) + " to " + s(expected) + ", or unset it");
}

namespace {
std::string nested_config(std::string_view kernel, std::string_view difference) {
  return "Kernel '" + s(kernel) +
         "' is called from inside another kernel but sets compile config that differs from the outer kernel's: " +
         s(difference);
}
}  // namespace

Diagnostic err_nested_kernel_config_mismatch(std::string_view kernel, std::string_view difference) {
  return make("err_nested_kernel_config_mismatch", nested_config(kernel, difference), ErrorKind::Value,
              "give '" + s(kernel) +
                  "' the outer kernel's compile_config (or none), or let the top-level kernel allow it with "
                  "specialization_config=SpecializationConfig(allow_nested_config_override=True)");
}

Diagnostic warn_nested_kernel_config_override(std::string_view kernel, std::string_view difference) {
  return make("warn_nested_kernel_config_override",
              nested_config(kernel, difference) +
                  "; the top-level kernel allows it (allow_nested_config_override=True), so it is inlined under the "
                  "outer kernel's config",
              ErrorKind::Value);
}

Diagnostic err_lnc_compiler_mismatch(std::string_view kernel, int64_t kernel_lnc, int64_t compiler_lnc) {
  return make("err_lnc_compiler_mismatch",
              "NKI kernel '" + s(kernel) + "' is configured with LNC=" + std::to_string(kernel_lnc) +
                  ", but neuronx-cc is using LNC=" + std::to_string(compiler_lnc) + ".",
              ErrorKind::Value,
              "every kernel of a compiled graph has the graph's LNC degree: set NEURON_LOGICAL_NC_CONFIG to the "
              "--lnc of NEURON_CC_FLAGS (neuronx-cc's NCC_EVRF066)");
}

Diagnostic warn_compiler_frontend_ignored(std::string_view value) {
  return make("warn_compiler_frontend_ignored",
              "NKI_COMPILER_FRONTEND=" + s(value) +
                  " is ignored: nkic traces every kernel as Python, as the tracer frontend of nki 0.7+ does (=custom, "
                  "the parser frontend, is deprecated since Neuron 2.33)",
              ErrorKind::Syntax, "unset NKI_COMPILER_FRONTEND");
}

Diagnostic warn_parser_frontend_construct(std::string_view what, std::string_view hint) {
  return make("warn_parser_frontend_construct",
              s(what) + " was rejected by the parser frontend of nki 0.6 and before; since 0.7 the kernel runs as "
                        "Python and it has Python's meaning",
              ErrorKind::Syntax, s(hint));
}

}  // namespace nkic::sema
