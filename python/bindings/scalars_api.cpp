// The nki 0.7/0.8 device scalars (python/nki/_scalars.py): scalar_load, scalar_store,
// scalar_alu and the 32-bit check of a scalar's uses; conversions only (codegen/Scalars.h).
#include <pybind11/pybind11.h>

#include "codegen/Scalars.h"
#include "errors.h"
#include "sema/ErrorCatalog.h"
#include "sema/ErrorCatalogScalars.h"
#include "trace/TraceContext.h"
#include "values.h"

namespace nkic::py_bind {

namespace {

codegen::KernelBuilder& builder(const char* api) { return trace::TraceContext::nki_ctx(api).builder(); }

// A scalar's register tile, or an int as its low 64 bits (two's complement).
codegen::ScalarOperand scalar_operand(py::handle h, const char* what) {
  if (is_tensor(h)) return tensor_arg(h, what);
  static const py::handle numpy_integer = py::object(py::module_::import("numpy").attr("integer")).release();
  if (PyLong_Check(h.ptr()) || py::isinstance(h, numpy_integer)) {
    py::object i = py::reinterpret_steal<py::object>(PyNumber_Index(h.ptr()));
    return static_cast<int64_t>(PyLong_AsUnsignedLongLongMask(i.ptr()));
  }
  sema::fail(sema::err_unexpected_type_of_operand(what, "'" + py_type_name(h) + "', expected an NkiScalar or an int"));
}

ir::AluOp scalar_op(const std::string& op) {
  if (auto a = ir::alu_op_from_name(op)) return *a;
  sema::fail(sema::err_instruction_unsupported_op(op));
}

}  // namespace

void bind_scalars_api(py::module_& m) {
  m.def("scalar_load", [](py::handle src) {
    return wrap_tensor(codegen::scalar_load(builder("nisa.scalar_load"), tensor_arg(src, "src")));
  });
  m.def("scalar_store", [](py::handle dst, py::handle value) {
    codegen::KernelBuilder& b = builder("nisa.scalar_store");
    codegen::scalar_store(b, tensor_arg(dst, "dst"), scalar_operand(value, "value"));
  });
  // Returns a new scalar's tile, or an int when both operands are ints.
  m.def("scalar_alu", [](py::handle a, py::handle c, const std::string& op) -> py::object {
    codegen::KernelBuilder& b = builder("nisa.scalar_alu");
    const codegen::ScalarOperand x = scalar_operand(a, "data1"), y = scalar_operand(c, "data2");
    if (std::holds_alternative<int64_t>(x) && std::holds_alternative<int64_t>(y))
      return py::int_(codegen::scalar_alu_constant(b, std::get<int64_t>(x), std::get<int64_t>(y), scalar_op(op)));
    return wrap_tensor(codegen::scalar_alu(b, x, y, scalar_op(op)));
  });
  // Python's own protocol on a scalar: no API is in flight.
  m.def("raise_scalar_condition", [] {
    no_api_in_flight();
    sema::fail(sema::err_scalar_condition());
  });
  m.def("raise_scalar_operator", [](const std::string& op) {
    no_api_in_flight();
    sema::fail(sema::err_scalar_python_operator(op));
  });
  m.def("check_scalar_32", [](py::handle s, const std::string& api, const std::string& what) {
    codegen::check_scalar_32(builder(api.c_str()), tensor_arg(s, "scalar"), api, what);
  });
}

}  // namespace nkic::py_bind
