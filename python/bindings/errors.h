// Diagnostics crossing into Python: the NKIError exception family, and the
// user's source position read off the Python frames of traced kernel code.
#pragma once
#include <pybind11/pybind11.h>

#include <vector>

#include "sema/Diagnostic.h"
#include "sema/Hints.h"
#include "trace/TraceContext.h"

namespace py = pybind11;

namespace nkic::py_bind {

// Marks a code object (and the code nested in it) as user kernel code: its
// frames are where diagnostics and instructions point.
void register_user_code(py::handle code);

// The innermost user frame's position; `notes` gets one "called from" note per
// enclosing user frame (call sites of inlined helpers).
ir::SourceLoc user_location(std::vector<sema::Note>* notes = nullptr);
// Outside traced code: the innermost frame that is not nkic's or Python's.
ir::SourceLoc caller_location();

// Raises `d` as the Python exception of its kind, completing location, API and the hint
// in the terms of the traced kernel's API (or of `api`: a kernel that has been traced).
void raise_diagnostic(sema::Diagnostic d);
// A warn_* diagnostic as a Python warning at its location: "[code] message" (a
// DeprecationWarning for a deprecation, else a UserWarning).
void issue_warning(const sema::Diagnostic& d);
void raise_diagnostic(sema::Diagnostic d, sema::Api api);
// The diagnostic about to be raised is Python's construct's (a condition, a statement), not
// an NKI API's: the last API called names none of it.
void no_api_in_flight();

// A Python TypeError that is not an NKI diagnostic: a call nkic made for the user failed.
bool is_plain_type_error(const py::error_already_set& e);
// An NKI diagnostic (an NKIError of any kind).
bool is_diagnostic(const py::error_already_set& e);

// In a catch block of a function Python calls directly (not through pybind11):
// the C++ exception in flight as the pending Python error (diagnostics become
// NKIError, as pybind11's dispatcher translates them); returns null.
PyObject* translated_exception();

// While a call runs, the builder points at its call site (a hooked API call, or
// kernel.with_schedule's call for the edges it adds): an API's
// instructions and diagnostics, and the call site of an inlined helper. Inside
// an inlined helper or nested kernel no location is pushed until the callee's
// own hooked calls push theirs. Restored on the way out (the context may have
// been torn down by then).
class PushedLocation {
 public:
  PushedLocation(trace::TraceContext* ctx, ir::SourceLoc loc) : ctx_(ctx), saved_(ctx->builder().set_location(loc)) {}
  ~PushedLocation() {
    if (trace::TraceContext::current() == ctx_) ctx_->builder().set_location(saved_);
  }
  PushedLocation(const PushedLocation&) = delete;
  PushedLocation& operator=(const PushedLocation&) = delete;

 private:
  trace::TraceContext* ctx_;
  ir::SourceLoc saved_;
};

void bind_errors(py::module_& m);

}  // namespace nkic::py_bind
