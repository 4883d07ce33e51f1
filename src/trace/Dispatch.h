// The trace boundary (seed 000, TraceContext.call): four gates, in this order,
// decide whether a call site becomes IR, runs as Python, recurses into a nested
// kernel, or is inlined and traced. The order is the contract.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace nkic::trace {

struct CalleeTraits {
  bool nki_func = false;             // carries the nki_func marker (an nl./nisa. API)
  bool dont_trace = false;           // __nki_dont_trace__ is truthy
  bool trace_kernel = false;         // a TraceKernel (@nki.trace / @nki.jit)
  bool function_or_builtin = false;  // inspect.isfunction or inspect.isbuiltin
  std::string module;                // defining module's dotted name ("" if none)
};

enum class CallAction { Builder, RunConcrete, NestedKernel, Library, Inline };
const char* name(CallAction a);

// `module` is, or is a submodule of, one of `excluded` (dotted-prefix match).
bool in_excluded_module(std::string_view module, const std::vector<std::string>& excluded);

CallAction dispatch(const CalleeTraits& t, const std::vector<std::string>& excluded);

// The seed's exclusion set, with nkic's own surface standing in for neuronxcc.nki.
const std::vector<std::string>& default_excluded_modules();

}  // namespace nkic::trace
