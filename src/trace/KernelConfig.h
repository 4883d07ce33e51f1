// What a current-API kernel's nki.compiler configs and the environment decide for its trace
// (NKI_07_08_API.md §1, §6): the configs the trace records, the prefetch ring, the ignored
// parser frontend, and the agreement of nested @nki.jit kernels with the top-level one.
#pragma once
#include <optional>
#include <string>

#include "sema/CompileConfig.h"
#include "trace/TraceContext.h"

namespace nkic::trace {

// The environment variables a trace reads (their texts; empty when unset).
struct KernelEnvironment {
  std::string compiler_frontend;   // NKI_COMPILER_FRONTEND
  std::string prefetch_ring_size;  // NKI_PREFETCH_RING_SIZE
};

// Records the top-level kernel's configs in `c` and sizes its prefetch ring; warns that
// NKI_COMPILER_FRONTEND is ignored (warn_compiler_frontend_ignored).
void configure_kernel(TraceContext& c, sema::CompileConfig config, sema::SpecializationConfig spec,
                      const KernelEnvironment& env);

// A nested @nki.jit kernel `kernel`, inlined, that gives `nested` (nullopt: no compile_config,
// so it takes the outer one): differing from the trace's config it is
// err_nested_kernel_config_mismatch, or warn_nested_kernel_config_override when the top-level
// kernel's SpecializationConfig allows it.
void check_nested_config(TraceContext& c, const std::string& kernel, const std::optional<sema::CompileConfig>& nested);

}  // namespace nkic::trace
