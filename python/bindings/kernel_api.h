// A traced kernel as Python sees it: printable, verifiable, simulatable IR.
#pragma once
#include <pybind11/pybind11.h>

#include <memory>

#include "ir/IR.h"
#include "sema/CompileConfig.h"

namespace py = pybind11;

namespace nkic::py_bind {

// The Python object of a traced kernel (core.Kernel).
struct PyKernel {
  std::shared_ptr<ir::Kernel> k;
  // The traced kernel's nki.compiler config and the SBUF bytes per partition of its prefetch
  // ring (the cost model reads them).
  sema::CompileConfig config;
  int64_t prefetch_ring = 0;
};

py::object wrap_kernel(std::unique_ptr<ir::Kernel> k, sema::CompileConfig config = {}, int64_t prefetch_ring = 0);
void bind_kernel_api(py::module_& m);

}  // namespace nkic::py_bind
