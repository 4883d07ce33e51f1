// The current nki API's entry points (python/nki): destination-passing calls
// run a legacy builder through Python and re-point its result at the caller's dst.
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include "codegen/AccessPattern.h"
#include "codegen/CurrentRules.h"
#include "codegen/Destination.h"
#include "codegen/Placement.h"
#include "ir/SourceLoc.h"
#include "sema/ErrorCatalog.h"
#include "trace/TraceContext.h"
#include "values.h"

namespace nkic::py_bind {

namespace {

types::TensorVal tile_arg(py::handle h, const char* what) {
  if (!is_tensor(h)) sema::fail(sema::err_unexpected_type_of_operand(what, "'" + py_type_name(h) + "', expected a tile"));
  return unwrap<PyTensor>(h).v;
}

}  // namespace

void bind_nki_api(py::module_& m) {
  // produce() builds the instruction(s) into a fresh result; they then write dst.
  m.def("write_into", [](py::handle dst, const py::function& produce) {
    codegen::KernelBuilder& b = trace::TraceContext::nki_ctx("nisa").builder();
    types::TensorVal d = tile_arg(dst, "dst");
    codegen::DestinationMark mark = codegen::begin_destination(b);
    py::object result = produce();
    codegen::write_into(b, mark, tile_arg(result, "result"), d);
  });
  m.def("matmul_into", [](py::handle dst, const py::function& produce, std::optional<bool> accumulate) {
    codegen::KernelBuilder& b = trace::TraceContext::nki_ctx("nisa.nc_matmul").builder();
    types::TensorVal d = tile_arg(dst, "dst");
    codegen::DestinationMark mark = codegen::begin_destination(b);
    py::object result = produce();
    codegen::matmul_into(b, mark, tile_arg(result, "result"), d, accumulate);
  });
  m.def("check_dma_copy", [](py::handle dst, py::handle src, bool hwdge) {
    codegen::KernelBuilder& b = trace::TraceContext::nki_ctx("nisa.dma_copy").builder();
    codegen::check_dma_copy(b, tile_arg(dst, "dst"), tile_arg(src, "src"), hwdge);
  });
  m.def("check_memset_value", [](py::handle dst, py::handle value) {
    codegen::KernelBuilder& b = trace::TraceContext::nki_ctx("nisa.memset").builder();
    if (!PyNumber_Check(value.ptr()) || is_traced(value))
      sema::fail(sema::err_unexpected_type_of_operand("value", "'" + py_type_name(value) + "', expected a number"));
    bool integer = PyIndex_Check(value.ptr()) != 0;  // int, bool and numpy integers; not floats
    codegen::check_memset_value(b, tile_arg(dst, "dst"), value.cast<double>(), integer);
  });
  m.def("check_address", [](py::handle t, int64_t partition, int64_t free_offset) {
    codegen::KernelBuilder& b = trace::TraceContext::nki_ctx("nl.ndarray").builder();
    codegen::check_address(b, tile_arg(t, "tensor"), partition, free_offset);
  });
  m.def("check_placements", [] { codegen::check_placement_overlap(trace::TraceContext::nki_ctx("nl.ndarray").builder()); });
  m.def("check_outputs", [](py::list outputs) {
    codegen::KernelBuilder& b = trace::TraceContext::nki_ctx("nki.jit").builder();
    std::vector<types::TensorVal> ts;
    for (py::handle h : outputs) ts.push_back(tile_arg(h, "output"));
    codegen::check_outputs_shared_hbm(b, ts);
  });
  // A construct outside the accepted Python subset, found by the front end's AST walk.
  m.def("raise_unsupported_construct", [](const std::string& what, const std::string& hint, const std::string& file,
                                          int line, int col) {
    sema::Diagnostic d = sema::err_unsupported_python_construct(what, hint);
    d.loc = {ir::intern_file(file), line, col};
    sema::fail(d);
  });
  m.def("current_api", [] {
    trace::TraceContext* ctx = trace::TraceContext::current();
    return ctx != nullptr && ctx->builder().current_api;
  });
  m.def("set_current_api", [] { trace::TraceContext::nki_ctx("nki.jit").builder().current_api = true; });
  m.def("ap_view", [](py::handle t, std::vector<std::pair<int64_t, int64_t>> pattern, std::optional<int64_t> offset,
                      py::handle scalar_offset, py::handle vector_offset, int indirect_dim, py::handle dtype) {
    codegen::KernelBuilder& b = trace::TraceContext::nki_ctx("tensor.ap").builder();
    std::optional<codegen::ApIndirect> ind;
    if (!scalar_offset.is_none()) ind = codegen::ApIndirect{tile_arg(scalar_offset, "scalar_offset"), false, indirect_dim};
    if (!vector_offset.is_none()) ind = codegen::ApIndirect{tile_arg(vector_offset, "vector_offset"), true, indirect_dim};
    std::optional<ir::DType> d;
    if (!dtype.is_none()) {
      d = ir::dtype_from_name(dtype.cast<std::string>());
      if (!d) sema::fail(sema::err_unsupported_dtype("'" + dtype.cast<std::string>() + "'"));
    }
    std::optional<ir::AffineExpr> start;
    if (offset) start = ir::AffineExpr(*offset);
    return wrap_tensor(codegen::ap_view(b, tile_arg(t, "tensor"), pattern, start, ind, d));
  });
}

}  // namespace nkic::py_bind
