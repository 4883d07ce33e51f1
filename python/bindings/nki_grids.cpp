// NKI 0.7's tile grids (codegen/TileGrid.h): the grid as an opaque object with its
// attributes, and the calls that make, index and read it; arguments converted here,
// every rule in C++.
#include <pybind11/stl.h>

#include "codegen/TileGrid.h"
#include "sema/ErrorCatalog.h"
#include "trace/TraceContext.h"
#include "values.h"

namespace nkic::py_bind {

namespace {

using codegen::TileGrid;

py::tuple ints_tuple(const std::vector<int64_t>& v) { return py::tuple(py::cast(v)); }

// A shape argument: a tuple of exact Python ints, as the documented TypeError asks
// (no list, bool or numpy integer); None is empty where `optional`.
std::vector<int64_t> shape_arg(py::handle h, const char* what, const std::string& api, bool optional = false) {
  std::vector<int64_t> out;
  if (optional && h.is_none()) return out;
  if (!PyTuple_Check(h.ptr())) sema::fail(sema::err_grid_shape_not_ints(api, what, "'" + py_type_name(h) + "'"));
  for (py::handle x : py::reinterpret_borrow<py::tuple>(h)) {
    if (!PyLong_CheckExact(x.ptr()))
      sema::fail(sema::err_grid_shape_not_ints(api, what, "a tuple holding '" + py_type_name(x) + "'"));
    out.push_back(int_arg(x, what, api));
  }
  return out;
}

// buffer=: an nl buffer object (nl.sbuf, nl.psum, ...), never its name as a string.
ir::Memory buffer_arg(py::handle h, const std::string& api) {
  if (!py::hasattr(h, "name") || !py::hasattr(h, "direct") || !py::isinstance<py::str>(h.attr("name")))
    sema::fail(sema::err_grid_buffer_not_memory_region(api, "'" + py_type_name(h) + "' " + short_repr(h)));
  return memory_of(h.attr("name").cast<std::string>());
}

codegen::KernelBuilder& builder(const char* api) { return trace::TraceContext::nki_ctx(api).builder(); }

// g[key]: an int, a slice, or a tuple of them.
std::vector<codegen::GridKey> key_arg(py::handle key) {
  constexpr const char* api = "grid[...]";
  auto item = [&](py::handle k) {
    codegen::GridKey g;
    if (PySlice_Check(k.ptr())) {
      auto* s = reinterpret_cast<PySliceObject*>(k.ptr());
      auto bound = [&](PyObject* v) -> std::optional<int64_t> {
        if (v == Py_None) return std::nullopt;
        return int_arg(v, "a slice bound", api);
      };
      g.is_slice = true;
      g.start = bound(s->start), g.stop = bound(s->stop), g.step = bound(s->step);
    } else if (PyIndex_Check(k.ptr()) && !PyBool_Check(k.ptr()) && !is_traced(k)) {  // int, numpy integer
      g.index = int_arg(k, "an index", api);
    } else {
      sema::fail(sema::err_grid_index("a grid is indexed with ints and slices, got '" + py_type_name(k) + "'"));
    }
    return g;
  };
  std::vector<codegen::GridKey> out;
  if (PyTuple_Check(key.ptr())) {
    for (py::handle k : py::reinterpret_borrow<py::tuple>(key)) out.push_back(item(k));
  } else {
    out.push_back(item(key));
  }
  return out;
}

}  // namespace

void bind_nki_grids(py::module_& m) {
  py::class_<TileGrid>(m, "TileGrid")
      .def_property_readonly("blocked", &TileGrid::blocked)
      .def_property_readonly("shape", [](const TileGrid& g) { return ints_tuple(codegen::grid_shape(g)); })
      .def_property_readonly("tile_shape", [](const TileGrid& g) { return ints_tuple(g.tile_shape); })
      .def_property_readonly("block_shape", [](const TileGrid& g) -> py::object {
        return g.blocked() ? py::object(ints_tuple(g.block_shape)) : py::object(py::none());
      })
      .def_property_readonly("element_shape", [](const TileGrid& g) { return ints_tuple(g.count); })
      .def_property_readonly("index_step_elements",
                             [](const TileGrid& g) { return ints_tuple(codegen::index_step_elements(g)); })
      .def_property_readonly("is_remainder", &codegen::is_remainder)
      .def_property_readonly("is_data_representable", [](const TileGrid& g) {
        return codegen::data_obstacle(builder("grid.is_data_representable"), g).why.empty();
      })
      // The tensor the elements live in (its dtype and buffer are the grid's).
      .def_property_readonly("storage", [](const TileGrid& g) { return wrap_tensor(g.storage); });
  // nl.tiles / nl.blocks: `source` a tensor or a TileGrid; block_shape None for nl.tiles.
  m.def("grid_of", [](const std::string& api, py::handle source, py::handle tile_shape, py::handle block_shape) {
    codegen::KernelBuilder& b = builder(api.c_str());
    const std::vector<int64_t> tile = shape_arg(tile_shape, "tile_shape", api, true);
    const std::vector<int64_t> block = shape_arg(block_shape, "block_shape", api, true);
    if (py::isinstance<TileGrid>(source)) return codegen::regroup(b, source.cast<const TileGrid&>(), tile, block);
    if (!is_tensor(source)) sema::fail(sema::err_grid_source(api, "'" + py_type_name(source) + "'"));
    return codegen::grid_of(b, tensor_arg(source, "source", "a tensor"), tile, block);
  });
  m.def("grid_alloc", [](const std::string& api, py::handle tile_shape, py::handle block_shape,
                         py::handle element_shape, py::handle buffer, const std::string& dtype, const std::string& name) {
    trace::TraceContext& c = trace::TraceContext::nki_ctx(api);
    const std::vector<int64_t> tile = shape_arg(tile_shape, "tile_shape", api);
    const std::vector<int64_t> block = shape_arg(block_shape, "block_shape", api, true);
    const std::vector<int64_t> elements = shape_arg(element_shape, "element_shape", api);
    const ir::Memory memory = buffer_arg(buffer, api);
    return codegen::alloc_grid(c.builder(), tile, block, elements, memory, c.storage_dtype(dtype_of(dtype), memory),
                               name);
  });
  m.def("grid_select", [](const TileGrid& g, py::handle key) {
    codegen::KernelBuilder& b = builder("grid[...]");
    return codegen::select(b, g, key_arg(key));
  });
  m.def("grid_data", [](const TileGrid& g) { return wrap_tensor(codegen::grid_data(builder("grid.data"), g)); });
}

}  // namespace nkic::py_bind
