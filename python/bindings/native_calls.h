// The dispatcher's fast path: the plain forms of the most frequent nl.* calls
// (nl.load, nl.store, the one- and two-operand elementwise ops) run their
// builder straight from the call site, without entering the API's Python
// function, so a traced call crosses into the core once.
#pragma once
#include <pybind11/pybind11.h>

#include <cstddef>
#include <optional>

#include "trace/NativeCall.h"

namespace py = pybind11;

namespace nkic::py_bind {

// A call's arguments as Python's vectorcall protocol passes them: `nargs`
// positional ones, then one value per name in `kwnames` (a tuple, or null).
struct CallArgs {
  PyObject* const* args = nullptr;
  size_t nargs = 0;
  PyObject* kwnames = nullptr;
  size_t nkw() const { return kwnames ? static_cast<size_t>(PyTuple_GET_SIZE(kwnames)) : 0; }
  PyObject* kwname(size_t i) const { return PyTuple_GET_ITEM(kwnames, i); }
  PyObject* kwvalue(size_t i) const { return args[nargs + i]; }
  py::tuple tuple() const;  // the positional arguments
  py::dict dict() const;    // the keyword arguments
};

// Runs the call; a null object when its arguments take another form (the API's
// Python function then handles them, with its own defaults and errors).
py::object call_native(const trace::NativeForm& form, const CallArgs& a);

// nisa.dma_copy and nisa.tensor_tensor as their bindings take them (dst None: the legacy API).
void dma_copy_call(py::handle dst, py::handle src, py::handle mask, py::handle rmw_op, bool oob_skip, bool hwdge,
                   std::optional<int64_t> priority);
py::object tensor_tensor_call(py::handle dst, py::handle data1, py::handle data2, ir::AluOp op, py::handle mask,
                              py::handle dtype, int engine);

// The fast path for the API function `func` (the form its nki_native marker names), or null.
const trace::NativeForm* native_form(py::handle func);

}  // namespace nkic::py_bind
