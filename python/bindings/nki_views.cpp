// The current nki API's view methods and view attributes (codegen/ViewMethods.h)
// and its register operands (codegen/Registers.h): arguments converted here,
// every rule in C++.
#include <pybind11/stl.h>

#include "codegen/Registers.h"
#include "codegen/ViewMethods.h"
#include "sema/ErrorCatalog.h"
#include "trace/TraceContext.h"
#include "values.h"

namespace nkic::py_bind {

namespace {

codegen::KernelBuilder& builder(const char* api) { return trace::TraceContext::nki_ctx(api).builder(); }

const types::TensorVal& view_arg(py::handle h, const char* api, const char* what = "self") {
  return tensor_arg(h, std::string(api) + " " + what, "a tensor");
}

// An einops side: each item an axis name, or a tuple of names (one merged dim).
codegen::AxisGroups groups_arg(py::handle h, const char* what) {
  constexpr const char* api = "tensor.rearrange";
  auto name = [&](py::handle n) {
    if (!py::isinstance<py::str>(n))
      sema::fail(sema::err_unsupported_args(api, std::string(what) + " names axes with strings, got '" +
                                                     py_type_name(n) + "'"));
    return n.cast<std::string>();
  };
  if (!py::isinstance<py::tuple>(h) && !py::isinstance<py::list>(h))
    sema::fail(sema::err_unsupported_args(api, std::string(what) + " is a tuple of axis names and tuples of them, got '" +
                                                   py_type_name(h) + "'"));
  codegen::AxisGroups out;
  for (py::handle item : py::reinterpret_borrow<py::sequence>(h)) {
    std::vector<std::string> g;
    if (py::isinstance<py::str>(item)) {
      g.push_back(name(item));
    } else if (py::isinstance<py::tuple>(item) || py::isinstance<py::list>(item)) {
      for (py::handle n : py::reinterpret_borrow<py::sequence>(item)) g.push_back(name(n));
    } else {
      name(item);
    }
    out.push_back(std::move(g));
  }
  return out;
}

}  // namespace

void bind_nki_views(py::module_& m) {
  m.def("view_slice", [](py::handle t, py::handle dim, py::handle start, py::handle end, py::handle step) {
    constexpr const char* api = "tensor.slice";
    return wrap_tensor(codegen::slice_view(builder(api), view_arg(t, api), int_arg(dim, "dim", api),
                                           int_arg(start, "start", api), int_arg(end, "end", api),
                                           int_arg(step, "step", api)));
  });
  m.def("view_select", [](py::handle t, py::handle dim, py::handle index) {
    constexpr const char* api = "tensor.select";
    codegen::KernelBuilder& b = builder(api);
    const int64_t d = int_arg(dim, "dim", api);
    if (is_tensor(index)) return wrap_tensor(codegen::select_view(b, view_arg(t, api), d, view_arg(index, api, "index")));
    return wrap_tensor(codegen::select_view(b, view_arg(t, api), d, int_arg(index, "index", api)));
  });
  m.def("view_vector_select", [](py::handle t, py::handle dim, py::handle offsets) {
    constexpr const char* api = "tensor.vector_select";
    return wrap_tensor(codegen::vector_select_view(builder(api), view_arg(t, api), int_arg(dim, "dim", api),
                                                   view_arg(offsets, api, "vector_offset")));
  });
  m.def("view_indirect", [](py::handle t, py::handle index, py::handle num_elem) {
    constexpr const char* api = "tensor.indirect";
    std::optional<int64_t> n;
    if (!num_elem.is_none()) n = int_arg(num_elem, "num_elem", api);
    return wrap_tensor(codegen::indirect_view(builder(api), view_arg(t, api), view_arg(index, api, "index"), n));
  });
  m.def("view_permute", [](py::handle t, py::handle dims) {
    constexpr const char* api = "tensor.permute";
    return wrap_tensor(codegen::permute_view(builder(api), view_arg(t, api), ints_arg(dims, "dims", api)));
  });
  m.def("view_broadcast", [](py::handle t, py::handle dim, py::handle size) {
    constexpr const char* api = "tensor.broadcast";
    return wrap_tensor(codegen::broadcast_dim_view(builder(api), view_arg(t, api), int_arg(dim, "dim", api),
                                                   int_arg(size, "size", api)));
  });
  m.def("view_expand_dim", [](py::handle t, py::handle dim) {
    constexpr const char* api = "tensor.expand_dim";
    return wrap_tensor(codegen::expand_dim_view(builder(api), view_arg(t, api), int_arg(dim, "dim", api)));
  });
  m.def("view_squeeze_dim", [](py::handle t, py::handle dim) {
    constexpr const char* api = "tensor.squeeze_dim";
    return wrap_tensor(codegen::squeeze_dim_view(builder(api), view_arg(t, api), int_arg(dim, "dim", api)));
  });
  m.def("view_reshape_dim", [](py::handle t, py::handle dim, py::handle shape) {
    constexpr const char* api = "tensor.reshape_dim";
    return wrap_tensor(codegen::reshape_dim_view(builder(api), view_arg(t, api), int_arg(dim, "dim", api),
                                                 ints_arg(shape, "shape", api)));
  });
  m.def("view_flatten_dims", [](py::handle t, py::handle start, py::handle end) {
    constexpr const char* api = "tensor.flatten_dims";
    return wrap_tensor(codegen::flatten_dims_view(builder(api), view_arg(t, api), int_arg(start, "start_dim", api),
                                                  int_arg(end, "end_dim", api)));
  });
  m.def("view_rearrange", [](py::handle t, py::handle src, py::handle dst, py::handle fixed) {
    constexpr const char* api = "tensor.rearrange";
    std::map<std::string, int64_t> sizes;
    if (!fixed.is_none()) {
      if (!py::isinstance<py::dict>(fixed))
        sema::fail(sema::err_unsupported_args(api, "fixed_sizes is a dict of axis name to size, got '" +
                                                       py_type_name(fixed) + "'"));
      for (auto [k, v] : py::reinterpret_borrow<py::dict>(fixed)) {
        if (!py::isinstance<py::str>(k))
          sema::fail(sema::err_unsupported_args(api, "fixed_sizes keys are axis names"));
        sizes[k.cast<std::string>()] = int_arg(v, "fixed_sizes", api);
      }
    }
    return wrap_tensor(codegen::rearrange_view(builder(api), view_arg(t, api), groups_arg(src, "src_pattern"),
                                               groups_arg(dst, "dst_pattern"), sizes));
  });
  m.def("view_reinterpret", [](py::handle t, const std::string& dtype) {
    constexpr const char* api = "tensor.view";
    const std::optional<ir::DType> d = ir::dtype_from_name(dtype);
    if (!d) sema::fail(sema::err_unsupported_dtype("'" + dtype + "'"));
    return wrap_tensor(codegen::reinterpret_view(builder(api), view_arg(t, api), *d));
  });
  m.def("check_register_operand", [](py::handle t, const std::string& api, const std::string& what) {
    codegen::check_register_operand(builder(api.c_str()), view_arg(t, api.c_str(), what.c_str()), api, what);
  });
  m.def("view_pattern", [](py::handle t) {
    constexpr const char* api = "tensor.get_pattern";
    const codegen::ViewPattern p = codegen::view_pattern(builder(api), view_arg(t, api), api);
    py::list out;
    for (const auto& [step, count] : p.pairs) out.append(py::make_tuple(step, count));
    py::object offset = py::none();
    if (p.offset.is_constant()) offset = py::int_(p.offset.constant());
    return py::make_tuple(out, offset);
  });
  m.def("view_is_contiguous", [](py::handle t) {
    constexpr const char* api = "tensor.is_contiguous";
    return codegen::is_contiguous(builder(api), view_arg(t, api));
  });
  m.def("view_is_indirect", [](py::handle t) { return !view_arg(t, "tensor.is_indirect").indirect.empty(); });
  m.def("view_name", [](py::handle t) {
    constexpr const char* api = "tensor.name";
    // Reshapes and .ap() views alias the tensor the kernel named.
    const ir::Kernel& k = builder(api).kernel();
    return k.tensor(k.root(view_arg(t, api).tensor)).name;
  });
}

}  // namespace nkic::py_bind
