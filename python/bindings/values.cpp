#include "values.h"

#include <pybind11/stl.h>

#include <cmath>

#include "codegen/Indexing.h"
#include "errors.h"
#include "codegen/Ops.h"
#include "codegen/Scalars.h"
#include "sema/ErrorCatalog.h"
#include "trace/TraceContext.h"
#include "types/IndexAlgebra.h"
#include "types/MaskAlgebra.h"

namespace nkic::py_bind {

using types::IndexOp;
using types::Value;

namespace {

struct PyTileMask : PyMask {};
struct PyScalarPredicate : PyMask {};
struct PyEQTileMask : PyTileMask {};
struct PyTileMaskIntersection : PyTileMask {};
struct PyTileMaskUnion : PyTileMask {};
struct PyEQScalarPredicate : PyScalarPredicate {};
struct PyScalarPredicateIntersection : PyScalarPredicate {};
struct PyScalarPredicateUnion : PyScalarPredicate {};
struct PyAlwaysTrue : PyMask {};
struct PyAlwaysFalse : PyMask {};

trace::TraceContext& ctx_for(const char* api) { return trace::TraceContext::nki_ctx(api); }

types::Other other_of(py::handle h) {
  types::Other o;
  if (PyLong_CheckExact(h.ptr())) {  // the common case (indices, bounds) first
    o.is_int = true;
    o.value = static_cast<double>(int_arg(h, "the integer"));
    o.type_name = "int";
    return o;
  }
  o.type_name = py_type_name(h);
  if (PyBool_Check(h.ptr()) || o.type_name == "bool_") {
    o.is_bool = true;
    o.value = PyObject_IsTrue(h.ptr());
    return o;
  }
  // Python numbers and numpy scalars are numbers; arrays and other objects are not.
  static PyObject* np_generic = py::object(py::module_::import("numpy").attr("generic")).release().ptr();
  bool np_scalar = PyObject_IsInstance(h.ptr(), np_generic) == 1;
  // float64 has no NKI dtype, and int64 is only a scalar's width: such numpy scalars stay weak.
  if (np_scalar) o.dtype = ir::dtype_from_name(o.type_name);
  if (o.dtype && ir::is_wide(*o.dtype)) o.dtype.reset();
  if (!np_scalar && !PyLong_Check(h.ptr()) && !PyFloat_Check(h.ptr())) {
    o.numeric = false;
    return o;
  }
  if (PyLong_Check(h.ptr()) || (!PyFloat_Check(h.ptr()) && PyIndex_Check(h.ptr()))) {
    o.is_int = true;
    o.value = static_cast<double>(int_arg(h, "the integer"));
    return o;
  }
  if (PyFloat_Check(h.ptr()) || PyNumber_Check(h.ptr())) {
    PyObject* f = PyNumber_Float(h.ptr());
    if (f) {
      o.value = PyFloat_AsDouble(f);
      Py_DECREF(f);
      return o;
    }
    PyErr_Clear();
  }
  o.numeric = false;
  return o;
}

// `index + tensor` (either order) or `... - index`: a runtime offset; the tensor
// term keeps coefficient +1, as the hardware adds the value it reads.
py::object runtime_offset(IndexOp op, const char* sym, const Value& a, const Value& b) {
  const auto* ta = std::get_if<types::TensorVal>(&a);
  const types::TensorVal& t = ta ? *ta : std::get<types::TensorVal>(b);
  const Value& other = ta ? b : a;
  if (op == IndexOp::sub && !ta)
    sema::fail(sema::err_unexpected_type_of_operand(sym, "a tensor subtracted in an index expression (a runtime "
                                                         "offset is added: write `i + off`)"));
  types::IndexVal affine;
  if (auto* i = std::get_if<types::IndexVal>(&other)) affine = *i;
  else affine = types::index_from_other(std::get<types::Other>(other), sym);
  types::IndexVal minus_one;
  minus_one.expr = ir::AffineExpr(-1);
  if (op == IndexOp::sub) affine = types::index_binop(IndexOp::mul, affine, minus_one);
  return py::cast(PyRuntimeOffset{affine, t});
}

py::object tensor_arith(ir::AluOp op, const char* api, py::handle a, py::handle b);

[[noreturn]] void unsupported_operator(const char* op, const char* hint) {
  sema::Diagnostic d = sema::err_instruction_unsupported_op(op);
  d.hint = hint;
  sema::fail(d);
}

// Binary index arithmetic: both operands as index values (Python ints allowed).
py::object index_arith(IndexOp op, const char* sym, py::handle a, py::handle b) {
  ctx_for(sym);  // the operator is the API a conversion diagnostic names
  Value va = to_value(a), vb = to_value(b);
  const types::TensorVal* t = std::get_if<types::TensorVal>(&va);
  if (!t) t = std::get_if<types::TensorVal>(&vb);
  if (t && !(std::holds_alternative<types::TensorVal>(va) && std::holds_alternative<types::TensorVal>(vb))) {
    // One element read at run time offsets an index (`i_f + off[0, j]`); a whole
    // tile makes it a tensor operation (`t + i * 8`).
    int64_t n = 1;
    for (int64_t d : t->shape) n *= d;
    if (n == 1 && (op == IndexOp::add || op == IndexOp::sub)) return runtime_offset(op, sym, va, vb);
    switch (op) {
      case IndexOp::add: return tensor_arith(ir::AluOp::add, "nl.add", a, b);
      case IndexOp::sub: return tensor_arith(ir::AluOp::subtract, "nl.subtract", a, b);
      case IndexOp::mul: return tensor_arith(ir::AluOp::multiply, "nl.multiply", a, b);
      case IndexOp::mod: return tensor_arith(ir::AluOp::mod, "nl.mod", a, b);
      case IndexOp::floordiv: break;  // no tensor floor division: the index error below
    }
  }
  auto as_index = [&](const Value& v) -> types::IndexVal {
    if (auto* i = std::get_if<types::IndexVal>(&v)) return *i;
    if (auto* o = std::get_if<types::Other>(&v)) return types::index_from_other(*o, sym);
    sema::fail(sema::err_unexpected_type_of_operand(sym, "a tensor or mask in an index expression"));
  };
  return wrap_index(types::index_binop(op, as_index(va), as_index(vb)));
}

// Tensor arithmetic through the op builders (operators mean the nl.* API).
py::object tensor_arith(ir::AluOp op, const char* api, py::handle a, py::handle b) {
  trace::TraceContext& ctx = ctx_for(api);
  trace::TraceContext::ApiScope scope(ctx, api);
  return from_value(codegen::elementwise(ctx.builder(), codegen::Dst::fresh(), op, {to_value(a), to_value(b)}, {}));
}

py::object compare(types::CmpOp op, py::handle a, py::handle b) {
  trace::TraceContext& ctx = ctx_for("comparison");
  return from_value(ctx.type_system().compare(op, to_value(a), to_value(b)));
}

py::object logical(types::LogicalOp op, py::handle a, py::handle b) {
  trace::TraceContext& ctx = ctx_for(op == types::LogicalOp::and_ ? "&" : "|");
  return from_value(ctx.type_system().logical(op, to_value(a), to_value(b)));
}

py::object logical_not(py::handle a) {
  trace::TraceContext& ctx = ctx_for("~");
  return from_value(ctx.type_system().logical_not(to_value(a)));
}

// The seed's synthesized operators, shared by every traced-value class.
template <typename Cls>
void add_type_system_ops(Cls& cls) {
  using types::CmpOp;
  cls.def("__eq__", [](py::object a, py::object b) { return compare(CmpOp::eq, a, b); })
      .def("__ne__", [](py::object a, py::object b) { return compare(CmpOp::ne, a, b); })
      .def("__lt__", [](py::object a, py::object b) { return compare(CmpOp::lt, a, b); })
      .def("__le__", [](py::object a, py::object b) { return compare(CmpOp::le, a, b); })
      .def("__gt__", [](py::object a, py::object b) { return compare(CmpOp::gt, a, b); })
      .def("__ge__", [](py::object a, py::object b) { return compare(CmpOp::ge, a, b); })
      .def("__and__", [](py::object a, py::object b) { return logical(types::LogicalOp::and_, a, b); })
      .def("__rand__", [](py::object a, py::object b) { return logical(types::LogicalOp::and_, b, a); })
      .def("__or__", [](py::object a, py::object b) { return logical(types::LogicalOp::or_, a, b); })
      .def("__ror__", [](py::object a, py::object b) { return logical(types::LogicalOp::or_, b, a); })
      .def("__invert__", [](py::object a) { return logical_not(a); })
      .def("logical_and", [](py::object a, py::object b) { return logical(types::LogicalOp::and_, a, b); })
      .def("logical_or", [](py::object a, py::object b) { return logical(types::LogicalOp::or_, a, b); })
      .def("logical_not", [](py::object a) { return logical_not(a); })
      .def("__hash__", [](py::object self) { return py::hash(py::int_(reinterpret_cast<intptr_t>(self.ptr()))); })
      // Host-side Python protocols have no meaning for a traced value: each is a diagnostic.
      .def("__array__", [](py::object self, py::args, py::kwargs) -> py::object {
        sema::fail(sema::err_unexpected_type_of_operand(
            "x", "a traced '" + py_type_name(self) +
                     "' converted to a numpy array, which holds host values; use the nl.* / nisa.* API"));
      })
      .def("__reduce_ex__", [](py::object self, py::handle) -> py::object {
        sema::fail(sema::err_unexpected_type_of_operand(
            "x", "a traced '" + py_type_name(self) + "' pickled or copied; it exists only while the kernel is "
                                                     "traced (copy a tile's values with nl.copy)"));
      })
      .def(py::init([](py::args, py::kwargs) -> typename Cls::type* {
        sema::fail(sema::err_unsupported_args(
            "nki.tensor", "traced values are created by the NKI API (nl.ndarray, nl.zeros, nl.load, nl.arange, ...), "
                          "not by calling their type"));
      }))
      .attr("__array_ufunc__") = py::none();
  cls.attr("__array_priority__") = 1000;
}

std::vector<codegen::IndexItem> index_key(py::handle key) {
  std::vector<codegen::IndexItem> items;
  py::tuple tup = py::isinstance<py::tuple>(key) ? py::reinterpret_borrow<py::tuple>(key) : py::make_tuple(key);
  items.reserve(tup.size());
  for (py::handle k : tup) {
    codegen::IndexItem& it = items.emplace_back();  // filled in place: an item is large
    if (k.is_none()) {
      it.kind = codegen::IndexItem::Kind::NewAxis;
    } else if (k.ptr() == Py_Ellipsis) {
      it.kind = codegen::IndexItem::Kind::Ellipsis;
    } else if (PySlice_Check(k.ptr())) {
      it.kind = codegen::IndexItem::Kind::Slice;
      const auto* sl = reinterpret_cast<const PySliceObject*>(k.ptr());
      py::handle start = sl->start, stop = sl->stop, step = sl->step;
      auto bound = [](py::handle b) -> std::optional<types::IndexVal> {
        if (b.is_none()) return std::nullopt;
        // The common bound, a plain int, without the detour through a generic value.
        if (PyLong_CheckExact(b.ptr())) return types::index_constant(int_arg(b, "the integer"));
        Value v = to_value(b);
        if (auto* i = std::get_if<types::IndexVal>(&v)) return *i;
        return types::index_from_other(std::get<types::Other>(v), "slice");
      };
      it.start = bound(start);
      it.stop = bound(stop);
      if (!step.is_none()) it.step = int_arg(step, "slice step");
    } else if (py::isinstance<PyRuntimeOffset>(k)) {
      const PyRuntimeOffset& r = k.cast<const PyRuntimeOffset&>();
      it.kind = codegen::IndexItem::Kind::Tensor;
      it.tensor = std::make_shared<const types::TensorVal>(r.tensor);
      it.value = r.affine;
    } else if (!PyLong_CheckExact(k.ptr()) && !is_traced(k) && py::hasattr(k, "_nki_ds")) {  // nl.ds(start, size)
      it.kind = codegen::IndexItem::Kind::Slice;
      Value s = to_value(k.attr("start"));
      it.start = std::holds_alternative<types::IndexVal>(s) ? std::get<types::IndexVal>(s)
                                                             : types::index_from_other(std::get<types::Other>(s), "nl.ds");
      it.size = int_arg(k.attr("size"), "nl.ds size");
    } else {
      Value v = to_value(k);
      if (auto* i = std::get_if<types::IndexVal>(&v)) {
        it.kind = i->is_scalar() ? codegen::IndexItem::Kind::Scalar : codegen::IndexItem::Kind::Tile;
        it.value = *i;
      } else if (auto* o = std::get_if<types::Other>(&v)) {
        if (!o->numeric || !o->is_int)
          sema::fail(sema::err_unsupported_index(
              "a tensor index is an int, a slice, nl.ds, an nl.arange / nl.mgrid index expression or an index "
              "tile, not " + (o->numeric ? "the number " + py::str(k).cast<std::string>() : "a '" + o->type_name + "'")));
        it.value = types::index_from_other(*o, "index");
      } else if (auto* t = std::get_if<types::TensorVal>(&v)) {
        it.kind = codegen::IndexItem::Kind::Tensor;
        it.tensor = std::make_shared<const types::TensorVal>(*t);
      } else {
        sema::fail(sema::err_unexpected_type_of_operand("index", "a mask (pass it as mask=)"));
      }
    }
  }
  return items;
}

py::object tensor_getitem(py::handle self_h, py::handle key) {
  if (!is_tensor(self_h)) throw py::type_error("NkiTensor.__getitem__ needs a tensor");
  const PyTensor& self = unwrap<PyTensor>(self_h);
  trace::TraceContext& ctx = ctx_for("tensor indexing");
  if (is_mask(key)) return wrap_tensor(codegen::masked_view(ctx.builder(), self.v, unwrap<PyMask>(key).v));
  // An operand mask that folded to a Python bool (`rhs[n < N]` in a one-iteration loop).
  if (PyBool_Check(key.ptr()))
    return wrap_tensor(codegen::masked_view(ctx.builder(), self.v, types::always(key.ptr() == Py_True)));
  return wrap_tensor(codegen::subscript(ctx.builder(), self.v, index_key(key)));
}

// `t[key]`, the most frequent operation on a tensor, straight from the type's
// mapping slot: the same function as __getitem__, without pybind11's dispatch.
PyObject* tensor_subscript_slot(PyObject* self, PyObject* key) {
  try {
    return tensor_getitem(self, key).release().ptr();
  } catch (...) {
    return translated_exception();
  }
}

// nl.arange(...)[:, None] and friends: slices keep a dim, None inserts one.
py::object reshape_tile_index(const PyIndex& self, py::handle key) {
  py::tuple tup = py::isinstance<py::tuple>(key) ? py::reinterpret_borrow<py::tuple>(key) : py::make_tuple(key);
  const int rank = static_cast<int>(self.v.shape.size());
  // As numpy: each ':' keeps one dim of the index, '...' the dims no ':' names.
  int kept = 0, ellipses = 0;
  for (py::handle k : tup) {
    if (k.is_none()) continue;
    if (k.ptr() == Py_Ellipsis) ++ellipses;
    else if (PySlice_Check(k.ptr()) && k.attr("start").is_none() && k.attr("stop").is_none() && k.attr("step").is_none())
      ++kept;
    else sema::fail(sema::err_unexpected_type_of_operand("index", "only ':', None and '...' can reshape an index"));
  }
  if (ellipses > 1) sema::fail(sema::err_unsupported_index("an index can only have a single ellipsis ('...')"));
  if (kept > rank)
    sema::fail(sema::err_unsupported_index("too many indices for an index of " + std::to_string(rank) +
                                           " dimension(s): " + std::to_string(kept) + " ':' were given"));
  std::vector<int> spec;
  int next = 0;
  for (py::handle k : tup) {
    if (k.is_none()) spec.push_back(-1);
    else if (k.ptr() == Py_Ellipsis) for (int n = 0; n < rank - kept; ++n) spec.push_back(next++);
    else spec.push_back(next++);
  }
  while (next < rank) spec.push_back(next++);
  return wrap_index(types::reshape_index(self.v, spec));
}

}  // namespace

std::string py_type_name(py::handle h) { return py::str(py::type::handle_of(h).attr("__name__")); }

// Every tensor the builders get from Python comes through here or to_value.
static const types::TensorVal& traced_tensor(py::handle h) {
  const types::TensorVal& v = unwrap<PyTensor>(h).v;
  if (trace::TraceContext* ctx = trace::TraceContext::current()) ctx->builder().check_same_trace(v);
  return v;
}

codegen::Dst dst_arg(py::handle dst) {
  return dst.is_none() ? codegen::Dst::fresh() : codegen::Dst::into(tensor_arg(dst, "dst"));
}

ir::DType dtype_of(const std::string& name) {
  const auto d = ir::dtype_from_name(name);
  trace::TraceContext* c = trace::TraceContext::current();
  if (d && (!c || codegen::has_dtype(c->builder(), *d))) return *d;
  sema::fail(sema::err_unsupported_dtype("'" + name + "'"));
}

ir::Memory memory_of(const std::string& name) {
  if (name == "sbuf") return ir::Memory::SBUF;
  if (name == "psum") return ir::Memory::PSUM;
  if (name == "shared_hbm") return ir::Memory::SharedHBM;
  if (name == "private_hbm" || name == "hbm") return ir::Memory::PrivateHBM;
  sema::fail(sema::err_unsupported_buffer(name));
}

const types::TensorVal& tensor_arg(py::handle h, std::string_view what, std::string_view kind) {
  if (!is_tensor(h))
    sema::fail(sema::err_unexpected_type_of_operand(what, "'" + py_type_name(h) + "', expected " + std::string(kind)));
  return traced_tensor(h);
}

const TracedTypes& traced_types() {
  static const TracedTypes t{reinterpret_cast<PyTypeObject*>(py::type::of<PyTensor>().ptr()),
                             reinterpret_cast<PyTypeObject*>(py::type::of<PyIndex>().ptr()),
                             reinterpret_cast<PyTypeObject*>(py::type::of<PyMask>().ptr())};
  return t;
}

bool is_traced(py::handle h) { return is_tensor(h) || is_index(h) || is_mask(h); }

Value to_value(py::handle h) {
  if (is_tensor(h)) return traced_tensor(h);
  if (is_index(h)) return unwrap<PyIndex>(h).v;
  if (is_mask(h)) return unwrap<PyMask>(h).v;
  return other_of(h);
}

// Every traced op returns a new tensor object: the class's type record is looked
// up once, not on every cast.
py::object wrap_tensor(types::TensorVal v) {
  static const py::detail::type_info* const tinfo = py::detail::get_type_info(typeid(PyTensor));
  PyTensor t{std::move(v)};
  auto move = [](const void* p) -> void* { return new PyTensor(std::move(*static_cast<PyTensor*>(const_cast<void*>(p)))); };
  return py::reinterpret_steal<py::object>(
      py::detail::type_caster_generic::cast(&t, py::return_value_policy::move, {}, tinfo, nullptr, move));
}

py::object wrap_index(types::IndexVal v) {
  // A constant scalar index is just a Python int (e.g. program_id(0) of a 1-instance launch).
  if (v.is_scalar() && v.expr.is_constant() && v.non_affine.empty()) return py::int_(v.expr.constant());
  if (v.is_scalar()) {
    PyDynamicScalar s;
    s.v = std::move(v);
    return py::cast(std::move(s));
  }
  PyTileIndex t;
  t.v = std::move(v);
  return py::cast(std::move(t));
}

py::object wrap_mask(types::MaskVal v) {
  using F = types::MaskVal::Form;
  auto make = [&](auto obj) {
    obj.v = std::move(v);
    return py::cast(std::move(obj));
  };
  switch (v.form) {
    case F::EQTileMask: return make(PyEQTileMask{});
    case F::TileMaskIntersection: return make(PyTileMaskIntersection{});
    case F::TileMaskUnion: return make(PyTileMaskUnion{});
    case F::EQScalarPredicate: return make(PyEQScalarPredicate{});
    case F::ScalarPredicateIntersection: return make(PyScalarPredicateIntersection{});
    case F::ScalarPredicateUnion: return make(PyScalarPredicateUnion{});
    case F::AlwaysTrue: return make(PyAlwaysTrue{});
    case F::AlwaysFalse: return make(PyAlwaysFalse{});
  }
  return py::none();
}

py::object from_value(Value v) {
  if (auto* t = std::get_if<types::TensorVal>(&v)) return wrap_tensor(std::move(*t));
  if (auto* i = std::get_if<types::IndexVal>(&v)) return wrap_index(std::move(*i));
  if (auto* m = std::get_if<types::MaskVal>(&v)) return wrap_mask(std::move(*m));
  const auto& o = std::get<types::Other>(v);
  if (o.is_bool) return py::bool_(o.value != 0);
  if (o.is_int) return py::int_(static_cast<long long>(o.value));
  return py::float_(o.value);
}

void bind_values(py::module_& m) {
  m.def("int_arg", &int_arg, py::arg("value"), py::arg("what"), py::arg("api") = "");
  m.def("logical_and", [](py::object a, py::object b) { return logical(types::LogicalOp::and_, a, b); });
  m.def("logical_or", [](py::object a, py::object b) { return logical(types::LogicalOp::or_, a, b); });
  m.def("logical_not", [](py::object a) { return logical_not(a); });
  auto tensor = py::class_<PyTensor>(m, "NkiTensor", py::dynamic_attr());
  add_type_system_ops(tensor);
  tensor
      .def("__add__", [](py::object a, py::object b) {
        if (py::isinstance<PyIndex>(b)) return index_arith(IndexOp::add, "+", a, b);
        return tensor_arith(ir::AluOp::add, "nl.add", a, b);
      })
      .def("__radd__", [](py::object a, py::object b) { return tensor_arith(ir::AluOp::add, "nl.add", b, a); })
      .def("__sub__", [](py::object a, py::object b) {
        if (py::isinstance<PyIndex>(b)) return index_arith(IndexOp::sub, "-", a, b);
        return tensor_arith(ir::AluOp::subtract, "nl.subtract", a, b);
      })
      .def("__rsub__", [](py::object a, py::object b) { return tensor_arith(ir::AluOp::subtract, "nl.subtract", b, a); })
      .def("__mul__", [](py::object a, py::object b) { return tensor_arith(ir::AluOp::multiply, "nl.multiply", a, b); })
      .def("__rmul__", [](py::object a, py::object b) { return tensor_arith(ir::AluOp::multiply, "nl.multiply", b, a); })
      .def("__truediv__", [](py::object a, py::object b) { return tensor_arith(ir::AluOp::divide, "nl.divide", a, b); })
      .def("__rtruediv__", [](py::object a, py::object b) { return tensor_arith(ir::AluOp::divide, "nl.divide", b, a); })
      .def("__xor__", [](py::object a, py::object b) { return tensor_arith(ir::AluOp::bitwise_xor, "nl.bitwise_xor", a, b); })
      .def("__lshift__", [](py::object a, py::object b) { return tensor_arith(ir::AluOp::left_shift, "nl.left_shift", a, b); })
      .def("__rshift__", [](py::object a, py::object b) { return tensor_arith(ir::AluOp::right_shift, "nl.right_shift", a, b); })
      .def("__neg__", [](py::object a) { return tensor_arith(ir::AluOp::multiply, "nl.negative", a, py::int_(-1)); })
      .def("__pow__", [](py::object a, py::object b) { return tensor_arith(ir::AluOp::power, "nl.power", a, b); })
      .def("__rpow__", [](py::object a, py::object b) { return tensor_arith(ir::AluOp::power, "nl.power", b, a); })
      .def("__mod__", [](py::object a, py::object b) { return tensor_arith(ir::AluOp::mod, "nl.mod", a, b); })
      .def("__rmod__", [](py::object a, py::object b) { return tensor_arith(ir::AluOp::mod, "nl.mod", b, a); })
      // No single instruction computes these: name the APIs that do.
      .def("__floordiv__", [](py::object, py::object) -> py::object {
        unsupported_operator("//", "write nl.floor(nl.divide(x, y))");
      })
      .def("__matmul__", [](py::object, py::object) -> py::object {
        unsupported_operator("@", "write nl.matmul(x, y) or nisa.nc_matmul(stationary, moving)");
      })
      .def("__iadd__", [](py::object self, py::object v) {
        trace::TraceContext& ctx = ctx_for("+=");
        trace::TraceContext::ApiScope scope(ctx, "+=");
        codegen::assign(ctx.builder(), self.cast<const PyTensor&>().v, to_value(v), /*accumulate=*/true);
        return self;
      })
      .def("__isub__", [](py::object self, py::object v) {
        trace::TraceContext& ctx = ctx_for("-=");
        trace::TraceContext::ApiScope scope(ctx, "-=");
        codegen::update_inplace(ctx.builder(), ir::AluOp::subtract, self.cast<const PyTensor&>().v, to_value(v));
        return self;
      })
      .def("__imul__", [](py::object self, py::object v) {
        trace::TraceContext& ctx = ctx_for("*=");
        trace::TraceContext::ApiScope scope(ctx, "*=");
        codegen::update_inplace(ctx.builder(), ir::AluOp::multiply, self.cast<const PyTensor&>().v, to_value(v));
        return self;
      })
      .def("__getitem__", &tensor_getitem)
      .def("__setitem__", [](const PyTensor& self, py::handle key, py::handle value) {
        trace::TraceContext& ctx = ctx_for("tensor assignment");
        trace::TraceContext::ApiScope scope(ctx, "tensor assignment");
        types::TensorVal dst = codegen::subscript(ctx.builder(), self.v, index_key(key));
        codegen::assign(ctx.builder(), dst, to_value(value), false);
      })
      .def("__bool__", [](py::object self) -> bool {
        if (trace::TraceContext::tensor_is_true()) return true;
        truth_error(self);
      })
      .def("__index__", [](py::object self) -> int64_t { symbolic_int_error(self); })
      .def("__int__", [](py::object self) -> int64_t { symbolic_int_error(self); })
      .def("__float__", [](py::object self) -> double { symbolic_int_error(self); })
      .def_property_readonly("shape", [](const PyTensor& self) { return py::tuple(py::cast(self.v.shape)); })
      .def_property_readonly("ndim", [](const PyTensor& self) { return self.v.shape.size(); })
      .def_property_readonly("tensor_id", [](const PyTensor& self) { return self.v.tensor; })
      .def("__repr__", [](const PyTensor& self) {
        trace::TraceContext* ctx = trace::TraceContext::current();
        if (!ctx) return std::string("<NkiTensor (trace finished)>");
        const ir::TensorDecl& d = ctx->builder().tensor(self.v.tensor);
        return "<NkiTensor " + d.name + sema::shape_str(self.v.shape) + " " + std::string(ir::name(d.dtype)) +
               " " + ir::name(d.memory) + ">";
      });
  // After every def: defining __getitem__ set the slot to a lookup of it.
  reinterpret_cast<PyTypeObject*>(tensor.ptr())->tp_as_mapping->mp_subscript = &tensor_subscript_slot;
  PyType_Modified(reinterpret_cast<PyTypeObject*>(tensor.ptr()));

  auto index = py::class_<PyIndex>(m, "IndexValue");
  add_type_system_ops(index);
  index.def("__add__", [](py::object a, py::object b) { return index_arith(IndexOp::add, "+", a, b); })
      .def("__radd__", [](py::object a, py::object b) { return index_arith(IndexOp::add, "+", b, a); })
      .def("__sub__", [](py::object a, py::object b) { return index_arith(IndexOp::sub, "-", a, b); })
      .def("__rsub__", [](py::object a, py::object b) { return index_arith(IndexOp::sub, "-", b, a); })
      .def("__mul__", [](py::object a, py::object b) { return index_arith(IndexOp::mul, "*", a, b); })
      .def("__rmul__", [](py::object a, py::object b) { return index_arith(IndexOp::mul, "*", b, a); })
      .def("__floordiv__", [](py::object a, py::object b) { return index_arith(IndexOp::floordiv, "//", a, b); })
      .def("__rfloordiv__", [](py::object a, py::object b) { return index_arith(IndexOp::floordiv, "//", b, a); })
      .def("__mod__", [](py::object a, py::object b) { return index_arith(IndexOp::mod, "%", a, b); })
      .def("__rmod__", [](py::object a, py::object b) { return index_arith(IndexOp::mod, "%", b, a); })
      .def("__neg__", [](py::object a) { return index_arith(IndexOp::mul, "*", a, py::int_(-1)); })
      .def("__pos__", [](py::object a) { return a; })
      .def("__bool__", [](py::object self) -> bool { truth_error(self); })
      .def("__index__", [](py::object self) -> int64_t { symbolic_int_error(self); })
      .def("__int__", [](py::object self) -> int64_t { symbolic_int_error(self); })
      .def("__float__", [](py::object self) -> double { symbolic_int_error(self); })
      .def("__setitem__", [](py::object, py::handle, py::handle) {
        sema::fail(sema::err_cannot_assign_to_index("index"));
      })
      .def_property_readonly("shape", [](const PyIndex& self) { return py::tuple(py::cast(self.v.shape)); })
      .def("__repr__", [](const PyIndex& self) {
        return "<" + std::string(self.v.is_scalar() ? "DynamicScalar " : "TileIndex ") + self.v.expr.str() +
               (self.v.is_scalar() ? "" : " shape=" + sema::shape_str(self.v.shape)) + ">";
      });
  auto shift = [](const PyRuntimeOffset& self, py::handle k, IndexOp op, const char* sym) {
    Value v = to_value(k);
    types::IndexVal i;
    if (auto* iv = std::get_if<types::IndexVal>(&v)) i = *iv;
    else if (auto* o = std::get_if<types::Other>(&v)) i = types::index_from_other(*o, sym);
    else sema::fail(sema::err_unexpected_type_of_operand(sym, "a second tensor in a runtime offset"));
    return PyRuntimeOffset{types::index_binop(op, self.affine, i), self.tensor};
  };
  py::class_<PyRuntimeOffset>(m, "RuntimeOffset")
      .def("__add__", [shift](const PyRuntimeOffset& s, py::handle k) { return shift(s, k, IndexOp::add, "+"); })
      .def("__radd__", [shift](const PyRuntimeOffset& s, py::handle k) { return shift(s, k, IndexOp::add, "+"); })
      .def("__sub__", [shift](const PyRuntimeOffset& s, py::handle k) { return shift(s, k, IndexOp::sub, "-"); })
      .def("__repr__", [](const PyRuntimeOffset& s) { return "<RuntimeOffset " + s.affine.expr.str() + " + tensor>"; });
  py::class_<PyDynamicScalar, PyIndex>(m, "DynamicScalar");
  py::class_<PyTileIndex, PyIndex>(m, "TileIndex").def("__getitem__", &reshape_tile_index);

  auto mask = py::class_<PyMask>(m, "Predicate");
  add_type_system_ops(mask);
  mask.def("__bool__", [](py::object self) -> bool {
        const types::MaskVal& v = self.cast<const PyMask&>().v;
        if (!v.non_affine.empty())
          sema::fail(sema::err_dynamic_control_flow_not_supported("a condition on " + v.non_affine +
                                                                  ", which is not affine in the loop variables"));
        if (v.always_true() || v.always_false()) return v.always_true();
        truth_error(self);
      })
      .def("__setitem__", [](py::object, py::handle, py::handle) {
        sema::fail(sema::err_cannot_assign_to_index("mask"));
      })
      .def("__repr__", [](const PyMask& self) {
        std::string s = std::string("<") + types::form_name(self.v.form);
        for (size_t i = 0; i < self.v.dnf.size(); ++i) {
          s += i ? " |" : "";
          for (const types::Atom& a : self.v.dnf[i])
            s += " (" + a.expr.str() + (a.rel == types::Atom::Ge ? " >= 0)" : a.rel == types::Atom::Eq ? " == 0)" : " != 0)");
        }
        return s + ">";
      });
  py::class_<PyTileMask, PyMask>(m, "nki_mask");
  py::class_<PyScalarPredicate, PyMask>(m, "ScalarPredicate");
  py::class_<PyEQTileMask, PyTileMask>(m, "EQTileMask");
  py::class_<PyTileMaskIntersection, PyTileMask>(m, "TileMaskIntersection");
  py::class_<PyTileMaskUnion, PyTileMask>(m, "TileMaskUnion");
  py::class_<PyEQScalarPredicate, PyScalarPredicate>(m, "EQScalarPredicate");
  py::class_<PyScalarPredicateIntersection, PyScalarPredicate>(m, "ScalarPredicateIntersection");
  py::class_<PyScalarPredicateUnion, PyScalarPredicate>(m, "ScalarPredicateUnion");
  py::class_<PyAlwaysTrue, PyMask>(m, "AlwaysTruePredicate");
  py::class_<PyAlwaysFalse, PyMask>(m, "AlwaysFalsePredicate");
  // Python's own messages ("'NkiTensor' object is not callable") name a type by
  // its C-level name: drop the internal module prefix from it.
  for (const char* name : {"NkiTensor", "IndexValue", "RuntimeOffset", "DynamicScalar", "TileIndex", "Predicate",
                           "nki_mask", "ScalarPredicate", "EQTileMask", "TileMaskIntersection", "TileMaskUnion",
                           "EQScalarPredicate", "ScalarPredicateIntersection", "ScalarPredicateUnion",
                           "AlwaysTruePredicate", "AlwaysFalsePredicate"})
    m.attr(name).attr("__name__") = py::str(name);
}

}  // namespace nkic::py_bind
