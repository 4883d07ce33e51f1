// The Python face of the type system's values: NkiTensor, DynamicScalar,
// TileIndex and the mask/predicate classes, and the conversions between
// Python objects and types::Value.
#pragma once
#include <pybind11/pybind11.h>

#include "codegen/Destination.h"
#include "types/Values.h"

namespace py = pybind11;

namespace nkic::py_bind {

struct PyTensor { types::TensorVal v; };
struct PyIndex { types::IndexVal v; };  // base of DynamicScalar and TileIndex
struct PyDynamicScalar : PyIndex {};
struct PyTileIndex : PyIndex {};
struct PyMask { types::MaskVal v; };    // base of every mask / predicate class
// `i_f + off[0, j]`: an index plus a value read from an SBUF tile at run time,
// usable only as a subscript (nisa.tensor_copy_dynamic_src/dst, indirect DMA).
struct PyRuntimeOffset {
  types::IndexVal affine;
  types::TensorVal tensor;
};

// The Python classes of the traced values, for type tests without pybind11's
// per-call type lookup (these run several times per traced call).
struct TracedTypes {
  PyTypeObject* tensor;
  PyTypeObject* index;
  PyTypeObject* mask;
};
const TracedTypes& traced_types();
inline bool is_tensor(py::handle h) { return PyObject_TypeCheck(h.ptr(), traced_types().tensor); }
inline bool is_index(py::handle h) { return PyObject_TypeCheck(h.ptr(), traced_types().index); }
inline bool is_mask(py::handle h) { return PyObject_TypeCheck(h.ptr(), traced_types().mask); }
// The C++ value held by a traced object whose class was just tested (T or a
// class derived from it without an offset, as all the traced classes are).
template <typename T>
const T& unwrap(py::handle h) {
  return *static_cast<const T*>(reinterpret_cast<py::detail::instance*>(h.ptr())->get_value_and_holder().value_ptr());
}

// getattr(h, name, None) with a name interned once (the call site keeps it in a
// static): the attribute reads of the per-call native forms make no string.
inline py::object attr_or_none(py::handle h, PyObject* interned_name) {
  PyObject* r = PyObject_GetAttr(h.ptr(), interned_name);
  if (!r) {
    PyErr_Clear();
    return py::none();
  }
  return py::reinterpret_steal<py::object>(r);
}
inline PyObject* interned(const char* name) { return PyUnicode_InternFromString(name); }

// An ALU op by its name ("add", as nkic._ops.op_name gives it), or err_instruction_unsupported_op.
ir::AluOp alu_of(const std::string& op);

types::Value to_value(py::handle h);
py::object from_value(types::Value v);
py::object wrap_tensor(types::TensorVal v);
py::object wrap_index(types::IndexVal v);
py::object wrap_mask(types::MaskVal v);
bool is_traced(py::handle h);  // an NKI value, not plain Python
// The seed's is_nki_data: an IR tensor or a mask (not an index value).
inline bool is_nki_data(py::handle h) { return is_tensor(h) || is_mask(h); }
std::string py_type_name(py::handle h);
// repr(h) for a diagnostic, cut to 60 characters.
std::string short_repr(py::handle h);
// A Python number where nkic takes an integer (a shape, a bound, an axis, a step):
// an int, a numpy integer or an integral float that fits in 64 bits; anything
// else is a diagnostic naming the value (`what`) and `api` (default: the API in flight).
int64_t int_arg(py::handle h, std::string_view what, const std::string& api = "");
// A list or tuple of such integers (int_arg each), else err_unsupported_args naming `what`;
// ints_sequence checks only that it is a list or tuple.
py::sequence ints_sequence(py::handle h, const char* what, const char* api);
std::vector<int64_t> ints_arg(py::handle h, const char* what, const char* api);
// A dtype and a buffer by their names (nkic._dtypes.dtype_name, nl.sbuf.name): the
// core's, or err_unsupported_dtype / err_unsupported_buffer.
ir::DType dtype_of(const std::string& name);
ir::Memory memory_of(const std::string& name);
// The tile an API argument must be, or err_unexpected_type_of_operand naming `what`
// and saying it expected `kind`.
const types::TensorVal& tensor_arg(py::handle h, std::string_view what, std::string_view kind = "a tile");
// A call's dst: None (the legacy API: the builder's fresh tile) or the caller's view.
codegen::Dst dst_arg(py::handle dst);
// A traced tile or index where a Python int is needed: why it is symbolic, as a diagnostic.
[[noreturn]] void symbolic_int_error(py::handle h);
// A traced value in a Python condition (`if t:`): why it cannot be a bool, as a diagnostic.
[[noreturn]] void truth_error(py::handle h);

void bind_values(py::module_& m);

}  // namespace nkic::py_bind
