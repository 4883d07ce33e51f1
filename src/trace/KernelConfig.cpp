#include "trace/KernelConfig.h"

#include "sema/ErrorCatalog.h"

namespace nkic::trace {

void configure_kernel(TraceContext& c, sema::CompileConfig config, sema::SpecializationConfig spec,
                      const KernelEnvironment& env) {
  codegen::KernelBuilder& b = c.builder();
  if (!env.compiler_frontend.empty())
    b.warn(sema::warn_compiler_frontend_ignored(env.compiler_frontend));
  c.prefetch_ring =
      sema::prefetch_ring_bytes(config, env.prefetch_ring_size, c.target().prefetch_ring_par_size_in_bytes);
  c.compile_config = std::move(config);
  c.specialization_config = spec;
}

void check_nested_config(TraceContext& c, const std::string& kernel, const std::optional<sema::CompileConfig>& nested) {
  if (!nested) return;
  const std::string difference = c.compile_config.difference(*nested);
  if (difference.empty()) return;
  if (!c.specialization_config.allow_nested_config_override)
    c.builder().fail(sema::err_nested_kernel_config_mismatch(kernel, difference));
  c.builder().warn(sema::warn_nested_kernel_config_override(kernel, difference));
}

}  // namespace nkic::trace
