// The current API's explicit scheduling (NKI_CURRENT_API.md §5.5-5.6): the NkiInstruction
// handle every nisa call returns, which the dispatcher makes from the ids the call emitted.
#pragma once
#include <pybind11/pybind11.h>

#include "trace/TraceContext.h"

namespace nkic::py_bind {

namespace py = pybind11;

// The handle of the instructions a nisa call emitted since id `first`, or None when it
// emitted none; a `label` (the call's name=, a str or null) records the ids under it.
py::object instruction_handle(trace::TraceContext& ctx, int64_t first, PyObject* label);
// The first instruction id of handle `h` (argument `what` of `api`) of the trace in `ctx`.
int64_t instruction_first(trace::TraceContext& ctx, py::handle h, const char* what);

}  // namespace nkic::py_bind
