#include "trace/Dispatch.h"

#include <algorithm>

namespace nkic::trace {

const char* name(CallAction a) {
  switch (a) {
    case CallAction::Builder: return "Builder";
    case CallAction::RunConcrete: return "RunConcrete";
    case CallAction::NestedKernel: return "NestedKernel";
    case CallAction::Library: return "Library";
    case CallAction::Inline: return "Inline";
  }
  return "?";
}

bool in_excluded_module(std::string_view module, const std::vector<std::string>& excluded) {
  for (const std::string& ex : excluded) {
    if (module.size() < ex.size() || module.compare(0, ex.size(), ex) != 0) continue;
    if (module.size() == ex.size() || module[ex.size()] == '.') return true;
  }
  return false;
}

CallAction dispatch(const CalleeTraits& t, const std::vector<std::string>& excluded) {
  if (t.nki_func) return CallAction::Builder;
  if (t.dont_trace) return CallAction::RunConcrete;
  if (t.trace_kernel) return CallAction::NestedKernel;
  // Gate 4 applies only to plain functions and builtins: a callable object from
  // an excluded module falls through and is inlined.
  if (t.function_or_builtin && in_excluded_module(t.module, excluded)) return CallAction::Library;
  return CallAction::Inline;
}

bool symbolic_loop_allows(CallAction a, const CalleeTraits& t) {
  switch (a) {
    case CallAction::Builder:
    case CallAction::Inline: return true;
    case CallAction::NestedKernel: return false;
    case CallAction::Library:  // nkic's own helpers and math compute; numpy would take a loop variable as an object
      return in_excluded_module(t.module, {"nkic", "math"});
    case CallAction::RunConcrete: break;
  }
  if (t.bound_to_nki) return true;
  if (t.module != "builtins" || t.dont_trace) return false;
  // Builtins that only compute from their arguments (a loop variable they cannot take raises, and unrolls).
  static const std::vector<std::string_view> pure = {
      "len", "min", "max", "abs", "isinstance", "issubclass", "getattr", "hasattr", "callable", "divmod",
      "tuple", "slice", "int", "float", "bool", "range", "enumerate", "zip", "reversed", "sum", "any", "all",
      "round", "type", "list", "dict", "set", "frozenset", "sorted", "map", "filter"};
  return std::find(pure.begin(), pure.end(), t.name) != pure.end();
}

const std::vector<std::string>& default_excluded_modules() {
  static const std::vector<std::string> modules = {"nkic", "neuronxcc.nki", "neuronxcc.starfish.penguin",
                                                   "numpy", "math"};
  return modules;
}

}  // namespace nkic::trace
