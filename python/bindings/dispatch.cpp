// TraceContext.call (seed 000): the call dispatcher every call site of traced
// code goes through, plus the eval_if_cnd and compare_nary hooks the AST
// pre-pass routes `if`/`while` conditions and chained comparisons to.
#include <pybind11/stl.h>

#include <algorithm>
#include <unordered_map>
#include <utility>

#include "codegen/AccessPattern.h"
#include "errors.h"
#include "native_calls.h"
#include "schedule_api.h"
#include "sema/ErrorCatalog.h"
#include "sema/OpTable.h"
#include "trace/Dispatch.h"
#include "trace/TraceContext.h"
#include "values.h"

namespace nkic::py_bind {

namespace {

// Module-lifetime Python references are leaked on purpose: destroying them
// after the interpreter has finalised would crash at exit.
py::object& trace_kernel_cls = *new py::object();  // nkic's TraceKernel class
py::object& inliner = *new py::object();           // Python: inline_function(func, args, kwargs)

using Decision = trace::DispatchCache::Decision;

Decision decide_uncached(py::handle func) {
  trace::CalleeTraits t;
  py::object marker = py::getattr(func, "nki_func", py::none());
  t.nki_func = !marker.is_none();
  t.dont_trace = py::bool_(py::getattr(func, "__nki_dont_trace__", py::bool_(false)));
  t.trace_kernel = trace_kernel_cls && py::isinstance(func, trace_kernel_cls);
  bool is_function = PyFunction_Check(func.ptr());
  bool is_builtin = PyCFunction_Check(func.ptr());
  t.function_or_builtin = is_function || is_builtin;
  if (t.function_or_builtin) {
    py::object mod = py::getattr(func, "__module__", py::none());
    if (py::isinstance<py::str>(mod)) t.module = mod.cast<std::string>();
  }
  t.is_class = PyType_Check(func.ptr());
  if (is_builtin || t.is_class) {
    py::object name = py::getattr(func, "__name__", py::none());
    if (py::isinstance<py::str>(name)) t.name = name.cast<std::string>();
  }
  if (t.is_class) {
    py::object mod = py::getattr(func, "__module__", py::none());
    if (py::isinstance<py::str>(mod)) t.module = mod.cast<std::string>();
  }
  PyObject* self = is_builtin ? PyCFunction_GET_SELF(func.ptr())
                   : PyMethod_Check(func.ptr()) ? PyMethod_GET_SELF(func.ptr()) : nullptr;
  t.bound_to_nki = self != nullptr && is_nki_data(self);
  Decision d{trace::dispatch(t, trace::default_excluded_modules()), ""};
  if (d.action == trace::CallAction::Builder) {
    d.api = py::isinstance<py::str>(marker) ? marker.cast<std::string>()
                                            : py::str(py::getattr(func, "__name__", py::str("?"))).cast<std::string>();
    d.native = native_form(func);
    d.min_nc_version = sema::op_spec(d.api).min_nc_version;
    d.instruction = py::bool_(py::getattr(func, "nki_instruction", py::bool_(false)));
  }
  // Builtins, classes and objects without Python source cannot be inlined: they run as Python.
  bool callable_object = !is_function && !PyMethod_Check(func.ptr()) && py::hasattr(py::type::handle_of(func), "__call__");
  if (d.action == trace::CallAction::Inline &&
      (is_builtin || PyType_Check(func.ptr()) || (!is_function && !PyMethod_Check(func.ptr()) && !callable_object)))
    d.action = trace::CallAction::RunConcrete;
  d.symbolic = trace::symbolic_loop_allows(d.action, t);
  return d;
}

// Decisions are cached per callee and trace (functions, builtins and classes:
// the callees that live long; a bound method is made afresh at each access) and
// forgotten when the callee dies, so that a new object at its address is decided
// anew. The weak reference watching the callee lives as long as the entry, so
// its callback (which may run on any thread, under the GIL) finds the cache alive.
// A callee that is not cached is decided into `scratch`.
const Decision& decide(trace::TraceContext& ctx, py::handle func, Decision& scratch) {
  PyObject* p = func.ptr();
  trace::DispatchCache& cache = ctx.dispatch_cache();
  if (const Decision* hit = cache.find(p)) return *hit;
  scratch = decide_uncached(func);
  bool long_lived = PyFunction_Check(p) || PyCFunction_Check(p) || PyType_Check(p);
  if (!long_lived || !PyType_SUPPORTS_WEAKREFS(Py_TYPE(p))) return scratch;
  py::cpp_function forget([p, c = &cache](py::handle) { c->erase(p); });
  PyObject* ref = py::weakref(func, forget).release().ptr();
  return cache.insert(p, std::move(scratch),
                      std::shared_ptr<void>(ref, [](void* r) { Py_DECREF(static_cast<PyObject*>(r)); }));
}

[[noreturn]] void return_consistency_failed() {
  PyErr_SetString(PyExc_AssertionError, "function without nki data as input should not return nki data");
  throw py::error_already_set();
}

// Tile indices count as inputs too: NKI 2.24's index values are index tensors
// (err_cannot_assign_to_index: "'index' tensor ..."), and helpers that turn an
// nl.arange/nl.mgrid index into a mask (public kernels' tile-mask helpers) pass.
bool is_nki_input(py::handle a) { return is_nki_data(a) || py::isinstance<PyTileIndex>(a); }

bool has_nki_data(const py::tuple& args, const py::dict& kwargs) {
  for (py::handle a : args)
    if (is_nki_input(a)) return true;
  for (auto kv : kwargs)
    if (is_nki_input(kv.second)) return true;
  return false;
}

// numpy / math / builtins (any callable without Python source) handed a traced
// value (np.exp(tile), len(i)) fail with a TypeError: say so at the user's line.
void host_call_failed(const py::error_already_set& e, py::handle func, const py::tuple& args, const py::dict& kwargs) {
  // The seed's builtin_range: range() in traced code takes the loop iterators' arguments.
  if (func.ptr() == reinterpret_cast<PyObject*>(&PyRange_Type) && (is_plain_type_error(e) || e.matches(PyExc_ValueError)))
    sema::fail(sema::err_invalid_range_args(
        "loop bounds must be integers known at trace time, with a nonzero step (" +
            py::str(e.value()).cast<std::string>() + ")",
        e.matches(PyExc_ValueError) ? sema::ErrorKind::Value : sema::ErrorKind::Type));
  if (!is_plain_type_error(e) || !has_nki_data(args, kwargs)) return;
  std::string name = py::str(py::getattr(func, "__name__", func));
  // Python's own message only: e.what() would carry pybind11's "At: <frames>" text.
  sema::Diagnostic d = sema::err_unexpected_type_of_operand(
      "x", "a traced tile or index passed to '" + name + "', which computes on host values; use the nl.* / nisa.* API (" +
               py::str(e.value()).cast<std::string>() + ")");
  // The callee as the user names it: numpy.exp (a ufunc's module is its type's), len.
  py::object module = py::getattr(func, "__module__", py::none());
  if (module.is_none()) module = py::getattr(py::type::handle_of(func), "__module__", py::none());
  std::string prefix = module.is_none() ? std::string() : py::str(module).cast<std::string>();
  d.api = (prefix.empty() || prefix == "builtins" ? std::string() : prefix + ".") + name;
  sema::fail(d);
}

// A TypeError out of an API call: when the arguments do not even bind to its
// signature (a missing operand, a keyword-only argument passed by position), the
// user's call is at fault: err_unsupported_args with Python's reason.
void explain_bad_arguments(py::handle func, const std::string& api, const py::tuple& args, const py::dict& kwargs) {
  py::module_ inspect = py::module_::import("inspect");
  py::object signature;
  try {
    signature = inspect.attr("signature")(func);
  } catch (py::error_already_set&) {
    return;  // no signature to compare the call with (a class of a builtin type): Python's own error stands
  }
  py::object params = signature.attr("parameters");
  bool takes_any = false;
  for (py::handle p : params.attr("values")())
    takes_any = takes_any || p.attr("kind").equal(inspect.attr("Parameter").attr("VAR_KEYWORD"));
  // A keyword the signature does not take: name it, with the closest one it takes (of
  // equally close ones, a required one: `op=` is op0, not the optional op1).
  py::object empty = inspect.attr("Parameter").attr("empty");
  for (auto kv : kwargs) {
    if (takes_any || params.contains(kv.first)) continue;
    py::list close = py::module_::import("difflib").attr("get_close_matches")(
        kv.first, py::module_::import("builtins").attr("sorted")(params), 3);
    py::object best = close.empty() ? py::object(py::none()) : py::object(close[0]);
    py::object ratio = py::module_::import("difflib").attr("SequenceMatcher");
    auto score = [&](py::handle c) { return ratio(py::none(), kv.first, c).attr("ratio")().cast<double>(); };
    for (py::handle c : close) {
      py::object dflt = params.attr("__getitem__")(c).attr("default");
      if (score(c) == score(best) && dflt.is(empty)) {
        best = py::reinterpret_borrow<py::object>(c);
        break;
      }
    }
    std::string why = "unexpected keyword argument " + py::repr(kv.first).cast<std::string>();
    if (!best.is_none()) why += "; did you mean " + py::repr(best).cast<std::string>() + "?";
    sema::Diagnostic d = sema::err_unsupported_args(api, why);
    d.api = api;
    sema::fail(d);
  }
  try {
    signature.attr("bind")(*args, **kwargs);
  } catch (py::error_already_set& bind) {
    if (bind.matches(PyExc_TypeError)) {
      sema::Diagnostic d = sema::err_unsupported_args(api, py::str(bind.value()).cast<std::string>());
      d.api = api;  // raised after the API's scope has closed
      sema::fail(d);
    }
  }
}

// The arguments of a call as the user wrote them, for a diagnostic: `name=value, ...`.
std::string rendered_args(py::handle func, const py::tuple& args, const py::dict& kwargs) {
  py::dict named;
  try {
    named = py::module_::import("inspect").attr("signature")(func).attr("bind")(*args, **kwargs).attr("arguments");
  } catch (py::error_already_set&) {
    for (size_t i = 0; i < args.size(); ++i) named[py::str("arg" + std::to_string(i))] = args[i];
    for (auto kv : kwargs) named[kv.first] = kv.second;
  }
  std::string out;
  for (auto kv : named) {
    out += (out.empty() ? "" : ", ") + py::str(kv.first).cast<std::string>() + "=" + short_repr(kv.second);
  }
  return out;
}

// Any other Python error out of an nkic API (int(None) on a shape, x.shape of a
// number, a value the binding cannot convert) is the user's argument at fault:
// err_unsupported_args naming the arguments, of the builtin kind Python raised.
void api_call_failed(const py::error_already_set& e, py::handle func, const std::string& api, const py::tuple& args,
                     const py::dict& kwargs) {
  if (is_diagnostic(e)) return;
  sema::ErrorKind kind;
  if (e.matches(PyExc_TypeError) || e.matches(PyExc_AttributeError)) kind = sema::ErrorKind::Type;
  else if (e.matches(PyExc_ValueError) || e.matches(PyExc_ArithmeticError)) kind = sema::ErrorKind::Value;
  else if (e.matches(PyExc_LookupError)) kind = sema::ErrorKind::Index;
  else return;
  std::string why = py::str(e.value());
  // pybind11's overload text names nkic's internal signatures, not the user's call.
  if (why.find("incompatible function arguments") != std::string::npos) why = "an argument of this type or value";
  sema::Diagnostic d = sema::err_unsupported_args(api, why + " (called with " + rendered_args(func, args, kwargs) + ")");
  d.kind = kind;
  d.api = api;
  sema::fail(d);
}

// What the dispatcher checks of a call's tensor arguments (and of its list and tuple
// arguments), in one pass: the first that covers no element (an empty slice, `x[:, n:n]`),
// and, for the current API, the on-chip views at a runtime offset, which
// check_on_chip_offsets_lowered follows.
struct TensorArguments {
  PyObject* empty = nullptr;
  std::vector<types::TensorVal> offsets;
};

TensorArguments scan_tensor_arguments(const codegen::KernelBuilder& b, const CallArgs& a) {
  TensorArguments out;
  auto take = [&](py::handle h) {
    if (!is_tensor(h)) return;
    const types::TensorVal& v = unwrap<PyTensor>(h).v;
    if (!out.empty && std::find(v.shape.begin(), v.shape.end(), 0) != v.shape.end()) out.empty = h.ptr();
    // A tensor of another trace is not this kernel's: the call itself reports it.
    if (!b.current_api || v.indirect.empty() || v.tensor < 0 || static_cast<size_t>(v.tensor) >= b.kernel().tensors.size())
      return;
    if (!ir::is_hbm(b.tensor(v.tensor).memory)) out.offsets.push_back(v);
  };
  for (size_t i = 0; i < a.nargs + a.nkw(); ++i) {
    py::handle h = a.args[i];
    take(h);
    if (PyList_Check(h.ptr()) || PyTuple_Check(h.ptr()))
      for (py::handle item : py::reinterpret_borrow<py::sequence>(h)) take(item);
  }
  return out;
}

// The value of keyword `name` in the call, or null.
PyObject* keyword(const CallArgs& a, const char* name) {
  for (size_t i = 0; i < a.nkw(); ++i)
    if (PyUnicode_CompareWithASCIIString(a.kwname(i), name) == 0) return a.kwvalue(i);
  return nullptr;
}

// `func(*a)` without a new tuple or dict.

py::object vectorcall(py::handle func, const CallArgs& a) {
  PyObject* r = PyObject_Vectorcall(func.ptr(), a.args, a.nargs, a.kwnames);
  if (!r) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(r);
}

py::object call_decided(trace::TraceContext* ctx, ir::SourceLoc here, const Decision& d, py::handle func,
                        const CallArgs& a) {
  if (!d.symbolic && ctx->builder().speculating())
    throw codegen::LoopNotSymbolic("a host call that may change Python state");
  switch (d.action) {
    case trace::CallAction::Builder: {
      PushedLocation at(ctx, here);
      trace::TraceContext::ApiScope scope(*ctx, d.api);
      if (d.min_nc_version) sema::assert_nc_version(ctx->target(), d.min_nc_version, d.api, ctx->builder().raiser());
      try {
        codegen::KernelBuilder& b = ctx->builder();
        // What the compiler tolerates: an API call on an empty slice (a tail loop's zero-length
        // tail) does nothing; a legacy call's result is that empty operand, which later calls skip too.
        const TensorArguments tensors = scan_tensor_arguments(b, a);
        if (PyObject* empty = tensors.empty) {
          const types::TensorVal& v = unwrap<PyTensor>(empty).v;
          b.warn(sema::warn_empty_access(d.api, codegen::KernelBuilder::display_name(b.tensor(v.tensor).name),
                                         sema::shape_str(v.shape)));
          if (d.instruction) return py::none();
          return py::reinterpret_borrow<py::object>(empty);
        }
        const size_t first = b.insertion_size();
        const int64_t first_id = b.next_instruction_id();
        py::object r;
        if (d.native) r = call_native(*d.native, a);
        if (!r) r = vectorcall(func, a);
        if (!tensors.offsets.empty()) codegen::check_on_chip_offsets_lowered(b, first, tensors.offsets);
        // Every nisa call of the current API returns an NkiInstruction (§5.6).
        if (d.instruction && r.is_none()) return instruction_handle(*ctx, first_id, keyword(a, "name"));
        return r;
      } catch (py::error_already_set& e) {
        if (is_plain_type_error(e)) explain_bad_arguments(func, d.api, a.tuple(), a.dict());
        api_call_failed(e, func, d.api, a.tuple(), a.dict());
        throw;
      }
    }
    case trace::CallAction::RunConcrete:
    case trace::CallAction::Library: {
      PushedLocation at(ctx, here);
      try {
        return vectorcall(func, a);
      } catch (py::error_already_set& e) {
        host_call_failed(e, func, a.tuple(), a.dict());
        throw;
      }
    }
    case trace::CallAction::NestedKernel: {
      trace::TraceContext::CallSite site(*ctx, here);
      PushedLocation at(ctx, {});
      py::object nested = func.attr("_trace_nested");
      return vectorcall(nested, a);
    }
    case trace::CallAction::Inline:
      break;
  }
  const py::tuple args = a.tuple();
  const py::dict kwargs = a.dict();
  py::object result;
  try {
    trace::TraceContext::CallSite site(*ctx, here);
    PushedLocation at(ctx, {});
    result = inliner(func, args, kwargs);
  } catch (py::error_already_set& e) {
    if (!PyFunction_Check(func.ptr()) && !PyMethod_Check(func.ptr())) host_call_failed(e, func, args, kwargs);
    else if (is_plain_type_error(e)) explain_bad_arguments(func, py::str(py::getattr(func, "__qualname__", func)), args, kwargs);
    throw;
  }
  // The seed's return-consistency check: a plain `assert`, not a diagnostic. A
  // bound method's object is one of its inputs.
  bool bound_data = PyMethod_Check(func.ptr()) && is_nki_data(PyMethod_GET_SELF(func.ptr()));
  if (!ctx->builder().current_api && !bound_data && !has_nki_data(args, kwargs) && is_nki_data(result))
    return_consistency_failed();
  return result;
}

trace::TraceContext* checked_callee(py::handle func) {
  trace::TraceContext* ctx = trace::TraceContext::current();
  // `t(3)`: a tile, index or mask is data, not a function.
  if (ctx && is_traced(func))
    sema::fail(sema::err_unexpected_type_of_operand("callee", "a '" + py_type_name(func) + "', which is not callable"));
  return ctx;
}

// `f(...)` at call site `loc` (an id from register_location) of traced code;
// `name`: the variable the result is assigned to (`x = f(...)`), or null.
py::object call(int loc, PyObject* name, py::handle func, const CallArgs& a) {
  trace::TraceContext* ctx = checked_callee(func);
  if (!ctx) return vectorcall(func, a);
  Decision scratch;
  const Decision& d = decide(*ctx, func, scratch);
  ir::SourceLoc here = ir::registered_location(loc);
  // Only an op builder's own tensor takes the name, not every tensor of an inlined helper.
  if (!name || d.action != trace::CallAction::Builder) return call_decided(ctx, here, d, func, a);
  Py_ssize_t len = 0;
  const char* utf8 = PyUnicode_AsUTF8AndSize(name, &len);
  if (!utf8) throw py::error_already_set();
  std::string saved = std::exchange(ctx->builder().name_hint, std::string(utf8, static_cast<size_t>(len)));
  struct Restore {
    trace::TraceContext* c;
    std::string s;
    ~Restore() {
      if (trace::TraceContext::current() == c) c->builder().name_hint = std::move(s);
    }
  } restore{ctx, std::move(saved)};
  return call_decided(ctx, here, d, func, a);
}

// `name = value` in traced code: a new tensor takes the variable's name;
// replacing a live tensor (`old`, what the name held) by another one may warn.
// Returns the value bound.
py::object bind_value(py::handle name, py::handle value, py::handle old) {
  PyTypeObject* tensor_type = traced_types().tensor;
  trace::TraceContext* c = trace::TraceContext::current();
  py::object result = py::reinterpret_borrow<py::object>(value);
  if (!c || Py_TYPE(value.ptr()) != tensor_type) return result;
  const types::TensorVal& fresh = unwrap<PyTensor>(value).v;
  std::string n = name.cast<std::string>();
  c->builder().adopt_name(fresh.tensor, n);
  if (Py_TYPE(old.ptr()) != tensor_type || old.ptr() == value.ptr()) return result;
  if (auto msg = c->shadowing_warning(n, unwrap<PyTensor>(old).v, fresh)) {
    ir::SourceLoc at = user_location();
    py::module_::import("warnings").attr("warn_explicit")(*msg, py::handle(PyExc_SyntaxWarning),
                                                          at.file ? *at.file : std::string("<kernel>"), at.line);
  }
  return result;
}

// The hooks as vectorcall functions, which pass the user's arguments on as they
// came, with no tuple or dict built for them:
//   __nki_call__(loc, func, *args, **kwargs)                   f(...)
//   __nki_call_named__(loc, name, func, *args, **kwargs)       name = f(...), name global
//   __nki_call_bound__(loc, name, old, func, *args, **kwargs)  name = f(...): the call, then bind
enum class Hook { Call, Named, Bound };

template <Hook kHook>
PyObject* call_hook(PyObject*, PyObject* const* args, Py_ssize_t nargsf, PyObject* kwnames) {
  constexpr size_t kLead = kHook == Hook::Call ? 2 : kHook == Hook::Named ? 3 : 4;
  const size_t n = static_cast<size_t>(PyVectorcall_NARGS(nargsf));
  if (n < kLead || !PyLong_Check(args[0]) || (kHook != Hook::Call && !PyUnicode_Check(args[1]))) {
    PyErr_SetString(PyExc_TypeError, "__nki_call__(loc, [name, [old,]] func, *args, **kwargs)");
    return nullptr;
  }
  try {
    const int loc = static_cast<int>(PyLong_AsLong(args[0]));
    CallArgs a{args + kLead, n - kLead, kwnames};
    py::object r = call(loc, kHook == Hook::Call ? nullptr : args[1], args[kLead - 1], a);
    if constexpr (kHook == Hook::Bound) r = bind_value(args[1], r, args[2]);
    return r.release().ptr();
  } catch (...) {
    return translated_exception();
  }
}

PyObject* bind_hook(PyObject*, PyObject* const* args, Py_ssize_t nargsf) {
  if (PyVectorcall_NARGS(nargsf) != 3 || !PyUnicode_Check(args[0])) {
    PyErr_SetString(PyExc_TypeError, "bind(name, value, old)");
    return nullptr;
  }
  try {
    return bind_value(args[0], args[1], args[2]).release().ptr();
  } catch (...) {
    return translated_exception();
  }
}

template <class F>
PyCFunction as_cfunction(F* f) {
  return reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(f));
}

PyMethodDef call_defs[] = {
    {"call", as_cfunction(&call_hook<Hook::Call>), METH_FASTCALL | METH_KEYWORDS,
     "The dispatcher every call site of traced code goes through."},
    {"call_named", as_cfunction(&call_hook<Hook::Named>), METH_FASTCALL | METH_KEYWORDS,
     "The dispatcher for `x = f(...)`: the call's tensor takes the name x."},
    {"call_bound", as_cfunction(&call_hook<Hook::Bound>), METH_FASTCALL | METH_KEYWORDS,
     "The dispatcher for `x = f(...)` that also binds x (given what x held), as bind does."},
    {"bind", as_cfunction(&bind_hook), METH_FASTCALL, "The pre-pass's `name = value` hook: bind(name, value, old)."},
};

// Python's truth value of `v`. A traced value's __bool__ raises the precise diagnostic;
// a numpy array of several elements has none, which Python would report at the user's
// condition: here it is the same diagnostic as a tensor's.
bool truth(py::handle v) {
  const int t = PyObject_IsTrue(v.ptr());
  if (t >= 0) return t == 1;
  py::error_already_set e;
  if (!e.matches(PyExc_ValueError) || !py::isinstance(v, py::module_::import("numpy").attr("ndarray"))) throw e;
  no_api_in_flight();
  std::vector<int64_t> shape;
  for (py::handle d : v.attr("shape")) shape.push_back(d.cast<int64_t>());
  sema::fail(sema::err_ambiguous_tensor_truth_value("a numpy array of shape " + sema::shape_str(shape)));
}

bool eval_if_cnd(py::handle cnd) {
  // The seed's first test: any tensor (whatever its size) is device data.
  if (py::isinstance<PyTensor>(cnd)) {
    if (trace::TraceContext::tensor_is_true()) return true;
    no_api_in_flight();
    sema::fail(sema::err_dynamic_control_flow_not_supported("a tensor, whose values are computed on the device"));
  }
  return truth(cnd);
}

types::CmpOp cmp_op(const std::string& s) {
  static const std::unordered_map<std::string, types::CmpOp> ops = {
      {"eq", types::CmpOp::eq}, {"ne", types::CmpOp::ne}, {"lt", types::CmpOp::lt},
      {"le", types::CmpOp::le}, {"gt", types::CmpOp::gt}, {"ge", types::CmpOp::ge}};
  return ops.at(s);
}

// One link of a chain: membership tests (the seed's in_ / not_in) are
// operator.contains on Python values; comparisons go through the type system.
types::Value compare_link(const std::string& op, py::handle a, py::handle b) {
  if (op == "in" || op == "not_in") {
    int r = PySequence_Contains(b.ptr(), a.ptr());
    if (r < 0) throw py::error_already_set();
    types::Other o;
    o.is_bool = true;
    o.value = (r == 1) == (op == "in");
    o.type_name = "bool";
    return o;
  }
  return trace::TraceContext::current()->type_system().compare(cmp_op(op), to_value(a), to_value(b));
}

py::object compare_nary(const std::vector<std::string>& ops, py::tuple operands) {
  bool traced = false;
  for (py::handle h : operands) traced = traced || is_traced(h);
  if (!traced || !trace::TraceContext::current()) {
    // Plain Python values keep Python's short-circuiting chain semantics.
    static const int py_ops[] = {Py_EQ, Py_NE, Py_LT, Py_LE, Py_GT, Py_GE};
    py::object result = py::bool_(true);
    for (size_t i = 0; i < ops.size(); ++i) {
      PyObject* r;
      if (ops[i] == "in" || ops[i] == "not_in") {
        int c = PySequence_Contains(operands[i + 1].ptr(), operands[i].ptr());
        if (c < 0) throw py::error_already_set();
        r = Py_NewRef((c == 1) == (ops[i] == "in") ? Py_True : Py_False);
      } else {
        r = PyObject_RichCompare(operands[i].ptr(), operands[i + 1].ptr(), py_ops[static_cast<int>(cmp_op(ops[i]))]);
      }
      if (!r) throw py::error_already_set();
      result = py::reinterpret_steal<py::object>(r);
      if (!py::bool_(result)) return result;
    }
    return result;
  }
  // compare_nary: (a OP1 b) & (b OP2 c) & ..., each operand evaluated once.
  types::NkiTypeSystem& ts = trace::TraceContext::nki_ctx("comparison").type_system();
  bool membership = std::any_of(ops.begin(), ops.end(), [](const std::string& s) { return s == "in" || s == "not_in"; });
  if (!membership) {
    std::vector<types::CmpOp> cops;
    for (const std::string& s : ops) cops.push_back(cmp_op(s));
    std::vector<types::Value> vals;
    for (py::handle h : operands) vals.push_back(to_value(h));
    return from_value(ts.compare_nary(cops, vals));
  }
  std::vector<types::Value> links;
  for (size_t i = 0; i < ops.size(); ++i) links.push_back(compare_link(ops[i], operands[i], operands[i + 1]));
  return from_value(ts.logical_and_nary(links));
}

}  // namespace

py::tuple CallArgs::tuple() const {
  py::tuple t(nargs);
  for (size_t i = 0; i < nargs; ++i) t[i] = py::reinterpret_borrow<py::object>(args[i]);
  return t;
}

py::dict CallArgs::dict() const {
  py::dict d;
  for (size_t i = 0; i < nkw(); ++i) d[kwname(i)] = py::reinterpret_borrow<py::object>(kwvalue(i));
  return d;
}

void bind_dispatch(py::module_& m) {
  m.def("set_dispatch_hooks", [](py::object trace_kernel, py::object inline_fn) {
    trace_kernel_cls = trace_kernel;
    inliner = inline_fn;
  });
  for (PyMethodDef& def : call_defs)
    m.add_object(def.ml_name, py::reinterpret_steal<py::object>(PyCFunction_NewEx(&def, nullptr, m.ptr())));
  m.def("eval_if_cnd", &eval_if_cnd);
  m.def("truth", &truth);
  m.def("compare_nary", &compare_nary);
  m.def("dispatch_action", [](py::object func) { return std::string(trace::name(decide_uncached(func).action)); });
}

}  // namespace nkic::py_bind
