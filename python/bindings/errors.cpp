#include "errors.h"

#include <pybind11/stl.h>

#include <unordered_map>

#include "sema/ErrorCatalog.h"
#include "sema/Hints.h"
#include "trace/TraceContext.h"

namespace nkic::py_bind {

namespace {

struct CodeInfo {
  const std::string* file;
  std::string name;
  bool internal;  // Python's stdlib inlined into a kernel (copy.copy): never where a diagnostic points
};

// Directories whose frames are never the user's (nkic's packages, Python's stdlib).
auto& internal_dirs = *new std::vector<std::string>();

bool is_internal_file(const std::string& file) {
  bool internal = file.empty() || file[0] == '<';
  for (const std::string& dir : internal_dirs) internal = internal || file.rfind(dir, 0) == 0;
  return internal;
}

// The one rule for what is the user's code among the rewritten code: anything
// but nkic's own packages and Python's stdlib (a kernel exec'd from a string,
// file "<string>", is the user's).
bool is_user_code_file(const std::string& file) { return file.empty() || file[0] == '<' || !is_internal_file(file); }

// Registered code objects are kept alive by `keep_alive`, so pointers stay valid.
// Leaked on purpose: Python references must not be released after finalisation.
auto& user_codes = *new std::unordered_map<PyObject*, CodeInfo>();
auto& keep_alive = *new std::vector<py::object>();

PyObject* exc_base = nullptr;
std::unordered_map<int, PyObject*> exc_by_kind;
// nki.isa.NkiValidationError, the current API's documented class of hardware-constraint
// violations, and the kind classes that also derive from it: what a current kernel's trace raises.
PyObject* validation_error = nullptr;
std::unordered_map<int, PyObject*> current_exc_by_kind;

ir::SourceLoc frame_loc(PyFrameObject* f, PyCodeObject* co, const CodeInfo& info) {
  ir::SourceLoc loc;
  loc.file = info.file;
  int sl = 0, sc = 0, el = 0, ec = 0;
  if (PyCode_Addr2Location(co, PyFrame_GetLasti(f), &sl, &sc, &el, &ec) && sl > 0) {
    loc.line = sl;
    loc.col = sc >= 0 ? sc + 1 : 0;
  } else {
    loc.line = PyFrame_GetLineNumber(f);
  }
  return loc;
}

PyObject* exception_class(sema::ErrorKind k, sema::Api api) {
  return (api == sema::Api::Current ? current_exc_by_kind : exc_by_kind).at(static_cast<int>(k));
}

// The API of the kernel being traced (legacy outside a trace).
sema::Api traced_api() {
  trace::TraceContext* ctx = trace::TraceContext::current();
  return ctx != nullptr && ctx->builder().current_api ? sema::Api::Current : sema::Api::Legacy;
}

}  // namespace

// Outside traced code (an nl.* call at module level, a decorator argument, a
// kernel call's arguments): the innermost frame that is not nkic's or Python's.
ir::SourceLoc caller_location() {
  ir::SourceLoc loc;
  PyFrameObject* f = PyEval_GetFrame();
  Py_XINCREF(f);
  while (f && !loc.known()) {
    PyCodeObject* co = PyFrame_GetCode(f);
    std::string file = py::str(py::handle(co->co_filename));
    if (!is_internal_file(file)) loc = frame_loc(f, co, {ir::intern_file(file), "", false});
    Py_DECREF(co);
    PyFrameObject* back = PyFrame_GetBack(f);
    Py_DECREF(f);
    f = back;
  }
  Py_XDECREF(f);
  return loc;
}

void register_user_code(py::handle code) {
  if (!PyCode_Check(code.ptr()) || user_codes.count(code.ptr())) return;
  auto* co = reinterpret_cast<PyCodeObject*>(code.ptr());
  std::string file = py::str(py::handle(co->co_filename));
  user_codes[code.ptr()] = {ir::intern_file(file), py::str(py::handle(co->co_name)), !is_user_code_file(file)};
  keep_alive.push_back(py::reinterpret_borrow<py::object>(code));
  for (py::handle c : py::reinterpret_borrow<py::tuple>(co->co_consts)) register_user_code(c);
}

ir::SourceLoc user_location(std::vector<sema::Note>* notes) {
  ir::SourceLoc primary;
  PyFrameObject* f = PyEval_GetFrame();
  Py_XINCREF(f);
  std::string callee;
  while (f) {
    PyCodeObject* co = PyFrame_GetCode(f);
    auto it = user_codes.find(reinterpret_cast<PyObject*>(co));
    if (it != user_codes.end() && !it->second.internal) {
      ir::SourceLoc loc = frame_loc(f, co, it->second);
      if (!primary.known()) {
        primary = loc;
      } else {
        notes->push_back({loc, "called '" + callee + "' from here"});
      }
      if (!notes) {  // only the innermost user frame is asked for
        Py_DECREF(co);
        Py_DECREF(f);
        break;
      }
      callee = it->second.name;
    }
    Py_DECREF(co);
    PyFrameObject* back = PyFrame_GetBack(f);
    Py_DECREF(f);
    f = back;
  }
  return primary;
}

void no_api_in_flight() {
  if (trace::TraceContext* c = trace::TraceContext::current()) c->builder().requested_api.clear();
}

void raise_diagnostic(sema::Diagnostic d) { raise_diagnostic(std::move(d), traced_api()); }

void raise_diagnostic(sema::Diagnostic d, sema::Api api) {
  if (d.notes.empty()) {
    std::vector<sema::Note> notes;
    ir::SourceLoc here = user_location(&notes);
    if (!d.loc.known()) d.loc = here.known() ? here : caller_location();
    // Call-site notes belong to the diagnostic when it points at the innermost user frame.
    if (here.file == d.loc.file && here.line == d.loc.line) d.notes = std::move(notes);
  }
  if (d.api.empty())
    if (trace::TraceContext* ctx = trace::TraceContext::current()) d.api = ctx->cur_api();
  if (d.kind == sema::ErrorKind::Assertion && d.code.empty()) {
    PyErr_SetString(PyExc_AssertionError, d.message.c_str());
    return;
  }
  sema::complete_hint(d, api);
  PyObject* cls = exception_class(d.kind, api);
  py::object exc = py::reinterpret_steal<py::object>(PyObject_CallFunction(cls, "s", sema::render(d).c_str()));
  if (!exc) return;
  exc.attr("code") = d.code;
  exc.attr("message") = d.message;
  exc.attr("hint") = d.hint;
  exc.attr("api") = d.api;
  exc.attr("file") = d.loc.file ? py::object(py::str(*d.loc.file)) : py::object(py::none());
  exc.attr("line") = d.loc.line;
  exc.attr("col") = d.loc.col;
  py::list notes;
  for (const sema::Note& n : d.notes)
    notes.append(py::make_tuple(n.loc.file ? *n.loc.file : std::string(), n.loc.line, n.loc.col, n.message));
  exc.attr("notes") = notes;
  PyErr_SetObject(cls, exc.ptr());
}

void issue_warning(const sema::Diagnostic& d) {
  // Outside the kernel's code (as its trace begins): at the caller's line.
  const ir::SourceLoc loc = d.loc.known() ? d.loc : caller_location();
  py::module_::import("warnings").attr("warn_explicit")(
      "[" + d.code + "] " + d.message,
      py::handle(d.code.find("deprecated") != std::string::npos ? PyExc_DeprecationWarning : PyExc_UserWarning),
      loc.file ? *loc.file : std::string("<kernel>"), loc.line);
}

bool is_diagnostic(const py::error_already_set& e) { return PyObject_IsInstance(e.value().ptr(), exc_base) == 1; }

bool is_plain_type_error(const py::error_already_set& e) { return e.matches(PyExc_TypeError) && !is_diagnostic(e); }

// As pybind11's own function dispatcher translates exceptions.
PyObject* translated_exception() {
  try {
    throw;
  } catch (py::error_already_set& e) {
    e.restore();
    return nullptr;
  } catch (...) {
    if (py::detail::apply_exception_translators(py::detail::get_local_internals().registered_exception_translators) ||
        py::detail::apply_exception_translators(py::detail::get_internals().registered_exception_translators))
      return nullptr;
    PyErr_SetString(PyExc_SystemError, "an exception escaped nkic's call dispatcher");
    return nullptr;
  }
}

void bind_errors(py::module_& m) {
  exc_base = PyErr_NewExceptionWithDoc("nkic.NKIError", "An NKI diagnostic: code, message, location.",
                                       PyExc_Exception, nullptr);
  m.attr("NKIError") = py::handle(exc_base);
  struct KindClass {
    sema::ErrorKind kind;
    const char* name;
    PyObject* builtin;
  };
  const KindClass kinds[] = {
      {sema::ErrorKind::Syntax, "NKISyntaxError", PyExc_SyntaxError},
      {sema::ErrorKind::Value, "NKIValueError", PyExc_ValueError},
      {sema::ErrorKind::Type, "NKITypeError", PyExc_TypeError},
      {sema::ErrorKind::Index, "NKIIndexError", PyExc_IndexError},
      {sema::ErrorKind::Runtime, "NKIRuntimeError", PyExc_RuntimeError},
      {sema::ErrorKind::Assertion, "NKIAssertionError", PyExc_AssertionError},
  };
  validation_error = PyErr_NewExceptionWithDoc("nki.isa.NkiValidationError",
                                               "Raised when hardware constraints are violated.", PyExc_Exception,
                                               nullptr);
  m.attr("NkiValidationError") = py::handle(validation_error);
  for (const KindClass& k : kinds) {
    const std::string name = std::string("nkic.") + k.name;
    py::tuple bases = py::make_tuple(py::handle(exc_base), py::handle(k.builtin));
    PyObject* cls = PyErr_NewException(name.c_str(), bases.ptr(), nullptr);
    exc_by_kind[static_cast<int>(k.kind)] = cls;
    m.attr(k.name) = py::handle(cls);
    // The same class, named alike, for a current kernel: `except nkic.NKIValueError` and
    // `except nisa.NkiValidationError` both catch it.
    py::tuple current = py::make_tuple(py::handle(cls), py::handle(validation_error));
    current_exc_by_kind[static_cast<int>(k.kind)] = PyErr_NewException(name.c_str(), current.ptr(), nullptr);
  }
  static auto& loop_not_symbolic = *new py::exception<codegen::LoopNotSymbolic>(m, "LoopNotSymbolic");  // leaked: see above
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const sema::NkiError& e) {
      raise_diagnostic(e.diag());
    } catch (const codegen::LoopNotSymbolic& e) {
      PyErr_SetString(loop_not_symbolic.ptr(), e.what());
    } catch (const py::error_already_set&) {
      throw;
    } catch (const py::builtin_exception&) {
      throw;
    } catch (const std::exception&) {
      // A defect of nkic itself: a diagnostic at the user's line, whose C++ text means nothing there.
      raise_diagnostic(sema::err_internal("an unexpected exception in nkic's core"));
    }
  });
  m.def("register_user_code", &register_user_code);
  // A hooked call site of rewritten code: its id, or no location for nkic's own
  // and the stdlib's code (their calls point at the user's line that reached them).
  m.def("register_location", [](const std::string& file, int line, int col) {
    if (!is_user_code_file(file)) return ir::kNoLocation;
    return ir::register_location({ir::intern_file(file), line, col});
  });
  m.def("is_user_code_file", &is_user_code_file);
  // An exception the kernel's own Python code raised while traced (`exception` is its type
  // and message), at the user's `file:line:col`, with a note at each call that reached it.
  using Call = std::tuple<std::string, int, int, std::string>;  // file, line, col of a call; its callee
  m.def("raise_exception_in_kernel", [](const std::string& exception, bool current, const std::string& file,
                                        int line, int col, const std::vector<Call>& calls) {
    sema::Diagnostic d = sema::err_exception_in_kernel(exception);
    d.loc = {ir::intern_file(file), line, col};
    for (const auto& [f, l, c, callee] : calls)
      d.notes.push_back({{ir::intern_file(f), l, c}, "called '" + callee + "' from here"});
    raise_diagnostic(std::move(d), current ? sema::Api::Current : sema::Api::Legacy);
    throw py::error_already_set();
  });
  // An exception out of nkic's own Python code while it traced the user's `file:line:col`.
  m.def("raise_internal_error", [](bool current, const std::string& file, int line, int col) {
    sema::Diagnostic d = sema::err_internal("an unexpected exception in nkic's Python front end");
    d.loc = {ir::intern_file(file), line, col};
    raise_diagnostic(std::move(d), current ? sema::Api::Current : sema::Api::Legacy);
    throw py::error_already_set();
  });
  m.def("hint_for", [](const std::string& code, bool current) {
    return sema::hint_for(code, current ? sema::Api::Current : sema::Api::Legacy);
  });
  m.def("hinted_codes", &sema::hinted_codes);
  m.def("set_internal_dirs", [](std::vector<std::string> dirs) { internal_dirs = std::move(dirs); });
  // Outside traced code: the caller's line, as a diagnostic raised there would name.
  m.def("user_location", []() {
    ir::SourceLoc l = user_location();
    if (!l.known()) l = caller_location();
    return py::make_tuple(l.file ? *l.file : std::string(), l.line, l.col);
  });
}

}  // namespace nkic::py_bind
