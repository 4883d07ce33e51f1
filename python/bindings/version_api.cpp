// The NKI version served (sema/NkiVersion.h): nki.__version__, and the check of a form
// whose acceptance depends on it, for the front end to name the form it meets.
#include <pybind11/stl.h>

#include "errors.h"
#include "sema/NkiVersion.h"
#include "trace/TraceContext.h"

namespace nkic::py_bind {

namespace {

// A kernel of the current API being traced: its builder holds the version it is traced as.
codegen::KernelBuilder* current_kernel() {
  trace::TraceContext* ctx = trace::TraceContext::current();
  return ctx != nullptr && ctx->builder().current_api ? &ctx->builder() : nullptr;
}

// A deprecation met outside a trace (a decorator argument): a Python warning at the caller's line.
void warn_at_caller(const sema::Diagnostic& d) {
  const ir::SourceLoc at = caller_location();
  py::module_::import("warnings").attr("warn_explicit")("[" + d.code + "] " + d.message,
                                                        py::handle(PyExc_DeprecationWarning),
                                                        at.file ? *at.file : std::string("<unknown>"), at.line);
}

}  // namespace

void bind_version_api(py::module_& m) {
  // "0.8.0": the version served, as nki.__version__ spells it.
  m.def("nki_version", [] {
    const codegen::KernelBuilder* b = current_kernel();
    return (b ? b->nki_version : sema::served_nki_version()).str() + ".0";
  });
  m.def("accepts_form", [](const std::string& form) {
    const codegen::KernelBuilder* b = current_kernel();
    return sema::accepts(form, b ? b->nki_version : sema::served_nki_version());
  });
  m.def("check_versioned_form", [](const std::string& form) {
    if (const codegen::KernelBuilder* b = current_kernel()) return b->check_versioned_form(form);
    sema::check_versioned_form(form, sema::served_nki_version(), [](sema::Diagnostic d) { sema::fail(std::move(d)); },
                               warn_at_caller);
  });
}

}  // namespace nkic::py_bind
