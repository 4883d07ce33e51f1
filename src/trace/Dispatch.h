// The trace boundary (seed 000, TraceContext.call): four gates, in this order,
// decide whether a call site becomes IR, runs as Python, recurses into a nested
// kernel, or is inlined and traced. The order is the contract.
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "trace/NativeCall.h"

namespace nkic::trace {

struct CalleeTraits {
  bool nki_func = false;             // carries the nki_func marker (an nl./nisa. API)
  bool dont_trace = false;           // __nki_dont_trace__ is truthy
  bool trace_kernel = false;         // a TraceKernel (@nki.trace / @nki.jit)
  bool function_or_builtin = false;  // inspect.isfunction or inspect.isbuiltin
  std::string module;                // defining module's dotted name ("" if none)
  std::string name;                  // __name__ of a builtin function or a class
  bool is_class = false;
  bool bound_to_nki = false;         // a method bound to an NKI value (a tensor's method)
};

enum class CallAction { Builder, RunConcrete, NestedKernel, Library, Inline };
const char* name(CallAction a);

// `module` is, or is a submodule of, one of `excluded` (dotted-prefix match).
bool in_excluded_module(std::string_view module, const std::vector<std::string>& excluded);

CallAction dispatch(const CalleeTraits& t, const std::vector<std::string>& excluded);

// A call met while a current-API loop body is traced once on speculation: whether it
// keeps the loop symbolic. A host call that may change Python state (print, a list's
// append, a numpy call handed a loop variable) needs the loop unrolled; an inlined
// helper is judged by its own body.
bool symbolic_loop_allows(CallAction a, const CalleeTraits& t);

// The seed's exclusion set, with nkic's own surface standing in for neuronxcc.nki.
const std::vector<std::string>& default_excluded_modules();

// Each callee is decided once per trace: the front end keys a decision by an
// identity that stays valid while the callee lives (with a guard that keeps the
// front end's watch on the callee), and erases it when the callee dies.
class DispatchCache {
 public:
  struct Decision {
    CallAction action = CallAction::Inline;
    std::string api;  // the NKI API a Builder call runs
    // The plain form a Builder call may take without entering the API's Python function, or null.
    const NativeForm* native = nullptr;
    int min_nc_version = 0;  // a Builder call's first NeuronCore generation (the op table's), 0: every one
    bool symbolic = true;    // symbolic_loop_allows
    // A current-API nisa call: what it emitted comes back as an NkiInstruction handle.
    bool instruction = false;
  };
  const Decision* find(const void* callee) const {
    auto it = map_.find(callee);
    return it == map_.end() ? nullptr : &it->second.decision;
  }
  // The entry stays where it is until its callee is erased: callers hold it across the call.
  const Decision& insert(const void* callee, Decision d, std::shared_ptr<void> guard = nullptr) {
    Entry& e = map_[callee];
    e = {std::move(d), std::move(guard)};
    return e.decision;
  }
  void erase(const void* callee) { map_.erase(callee); }
  size_t size() const { return map_.size(); }

 private:
  struct Entry {
    Decision decision;
    std::shared_ptr<void> guard;
  };
  std::unordered_map<const void*, Entry> map_;
};

}  // namespace nkic::trace
