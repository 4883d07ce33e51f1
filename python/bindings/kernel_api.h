// A traced kernel as Python sees it: printable, verifiable, simulatable IR.
#pragma once
#include <pybind11/pybind11.h>

#include <memory>

#include "ir/IR.h"

namespace py = pybind11;

namespace nkic::py_bind {

// The Python object of a traced kernel (core.Kernel).
struct PyKernel {
  std::shared_ptr<ir::Kernel> k;
};

py::object wrap_kernel(std::unique_ptr<ir::Kernel> k);
void bind_kernel_api(py::module_& m);

}  // namespace nkic::py_bind
