// The Python face of the type system's values: NkiTensor, DynamicScalar,
// TileIndex and the mask/predicate classes, and the conversions between
// Python objects and types::Value.
#pragma once
#include <pybind11/pybind11.h>

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

types::Value to_value(py::handle h);
py::object from_value(types::Value v);
py::object wrap_tensor(types::TensorVal v);
py::object wrap_index(types::IndexVal v);
py::object wrap_mask(types::MaskVal v);
bool is_traced(py::handle h);  // an NKI value, not plain Python
// The seed's is_nki_data: an IR tensor or a mask (not an index value).
inline bool is_nki_data(py::handle h) { return py::isinstance<PyTensor>(h) || py::isinstance<PyMask>(h); }
std::string py_type_name(py::handle h);
// A Python number where nkic takes an integer (a shape, a bound, an axis, a step):
// an int, a numpy integer or an integral float that fits in 64 bits; anything
// else is a diagnostic naming the value (`what`) and `api` (default: the API in flight).
int64_t int_arg(py::handle h, std::string_view what, const std::string& api = "");
// A traced tile or index where a Python int is needed: why it is symbolic, as a diagnostic.
[[noreturn]] void symbolic_int_error(py::handle h);

void bind_values(py::module_& m);

}  // namespace nkic::py_bind
