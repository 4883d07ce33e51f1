// Python integers where nkic takes an integer (shapes, bounds, axes, steps):
// checked once here, so a huge or wrong-typed value is a diagnostic naming it.
#include <cmath>

#include "sema/ErrorCatalog.h"
#include "trace/TraceContext.h"
#include "values.h"

namespace nkic::py_bind {

namespace {

// The API in flight, for a diagnostic raised while converting one of its operands.
std::string api_in_flight() {
  trace::TraceContext* ctx = trace::TraceContext::current();
  return ctx && !ctx->cur_api().empty() ? ctx->cur_api() : std::string("this operation");
}


}  // namespace

py::sequence ints_sequence(py::handle h, const char* what, const char* api) {
  // A tile indexes like a sequence; it is not one of ints.
  if (is_traced(h) || !py::isinstance<py::sequence>(h) || py::isinstance<py::str>(h))
    sema::fail(sema::err_unsupported_args(api, std::string(what) + " is a list or tuple of ints, got '" +
                                                   py_type_name(h) + "'"));
  return py::reinterpret_borrow<py::sequence>(h);
}

std::vector<int64_t> ints_arg(py::handle h, const char* what, const char* api) {
  std::vector<int64_t> out;
  for (py::handle x : ints_sequence(h, what, api)) out.push_back(int_arg(x, what, api));
  return out;
}

int64_t int_arg(py::handle h, std::string_view what, const std::string& api) {
  if (!PyLong_CheckExact(h.ptr()) && (is_tensor(h) || is_index(h))) symbolic_int_error(h);
  auto fail = [&](sema::Diagnostic d) {
    if (!api.empty()) d.api = api;
    sema::fail(d);
  };
  auto too_large = [&] {
    fail(sema::err_unsupported_args(api.empty() ? api_in_flight() : api,
                                    std::string(what) + " " + short_repr(h) + " does not fit in a signed 64-bit integer"));
  };
  if (PyLong_CheckExact(h.ptr())) {  // the common case, without the conversion below
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(h.ptr(), &overflow);
    if (overflow) too_large();
    return v;
  }
  if (PyIndex_Check(h.ptr())) {  // int, bool, numpy integers
    py::object i = py::reinterpret_steal<py::object>(PyNumber_Index(h.ptr()));
    if (!i) throw py::error_already_set();
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
    if (overflow) too_large();
    return v;
  }
  static PyObject* np_floating = py::object(py::module_::import("numpy").attr("floating")).release().ptr();
  if (PyFloat_Check(h.ptr()) || PyObject_IsInstance(h.ptr(), np_floating) == 1) {
    double d = py::float_(py::reinterpret_borrow<py::object>(h));
    // An integral float is the integer numpy would take; 2**63 and beyond do not fit.
    if (std::isfinite(d) && d == std::floor(d)) {
      if (std::fabs(d) < 9223372036854775808.0) return static_cast<int64_t>(d);
      too_large();
    }
    fail(sema::err_unexpected_type_of_operand(what, "the float " + short_repr(h) + ", expected an integer"));
  }
  fail(sema::err_unexpected_type_of_operand(what, "'" + py_type_name(h) + "' " + short_repr(h) + ", expected an integer"));
  return 0;  // not reached: fail raises
}

std::string short_repr(py::handle h) {
  std::string r;
  try {
    // reprlib bounds the depth and the items shown: the full repr of a tuple nested by
    // doubling grows exponentially with its depth. Scalars and objects keep 60 characters.
    py::object bounded = py::module_::import("reprlib").attr("Repr")();
    for (const char* limit : {"maxstring", "maxlong", "maxother"}) bounded.attr(limit) = 60;
    r = py::str(bounded.attr("repr")(h));
  } catch (py::error_already_set&) {  // a repr that fails still names the type
    return "<" + py_type_name(h) + " object>";
  }
  return r.size() > 60 ? r.substr(0, 57) + "..." : r;
}

}  // namespace nkic::py_bind
