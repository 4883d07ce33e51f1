// _nkic: the one thin extension module between libnkic and nkic's Python layer.
#include <pybind11/pybind11.h>

#include "kernel_api.h"
#include "dtypes/numpy_dtypes.h"

namespace py = pybind11;

namespace nkic::py_bind {
void bind_errors(py::module_& m);
void bind_values(py::module_& m);
void bind_dispatch(py::module_& m);
void bind_nki_api(py::module_& m);
void bind_collectives_api(py::module_& m);
void bind_schedule_api(py::module_& m);
void bind_nki_views(py::module_& m);
void bind_nki_grids(py::module_& m);
void bind_trace_api(py::module_& m);
void bind_ops_api(py::module_& m);
void bind_perf_api(py::module_& m);
void bind_scalars_api(py::module_& m);
void bind_version_api(py::module_& m);
void bind_compiler_api(py::module_& m);
}  // namespace nkic::py_bind

PYBIND11_MODULE(_nkic, m) {
  m.doc() = "nkic core: tracer, IR, legality checks and simulator";
  nkic::py_bind::bind_errors(m);
  nkic::py_bind::bind_values(m);
  nkic::py_bind::bind_dispatch(m);
  nkic::py_bind::bind_nki_api(m);
  nkic::py_bind::bind_collectives_api(m);
  nkic::py_bind::bind_schedule_api(m);
  nkic::py_bind::bind_nki_views(m);
  nkic::py_bind::bind_nki_grids(m);
  nkic::py_bind::bind_trace_api(m);
  nkic::py_bind::bind_ops_api(m);
  nkic::py_bind::bind_kernel_api(m);
  nkic::py_bind::bind_perf_api(m);
  nkic::py_bind::bind_scalars_api(m);
  nkic::py_bind::bind_version_api(m);
  nkic::py_bind::bind_compiler_api(m);
  nkic::py_bind::register_numpy_dtypes(m);
}
