// The tracer's surface for nkic's Python layer: the context lifecycle, scopes,
// loops, kernel parameters and the nl.* op builders.
#include <pybind11/stl.h>

#include <cstdlib>

#include "codegen/Ops.h"
#include "codegen/Range.h"
#include "errors.h"
#include "kernel_api.h"
#include "native_calls.h"
#include "sema/ErrorCatalog.h"
#include "sema/OpTable.h"
#include "sema/Target.h"
#include "trace/TraceContext.h"
#include "types/IndexAlgebra.h"
#include "values.h"

namespace nkic::py_bind {

namespace {

trace::TraceContext& ctx(const char* api = "nki") { return trace::TraceContext::nki_ctx(api); }


// mask= and dtype= keyword arguments; the MaskVal lives in `storage`.
codegen::OpArgs op_args(py::handle mask, py::handle dtype, std::optional<types::MaskVal>& storage) {
  codegen::OpArgs a;
  if (!mask.is_none()) {
    types::Value v = to_value(mask);
    if (auto* m = std::get_if<types::MaskVal>(&v)) storage = *m;
    else if (auto* o = std::get_if<types::Other>(&v); o && o->is_bool) storage = types::always(o->value != 0);
    else sema::fail(sema::err_unsupported_expression_in_mask("mask= must be a comparison of index expressions, got '" + py_type_name(mask) + "'"));
    a.mask = &*storage;
  }
  if (!dtype.is_none()) a.dtype = dtype_of(dtype.cast<std::string>());
  return a;
}

// A kernel's return value: None, one tensor, or a tuple/list of tensors.
std::vector<types::TensorVal> returned_tensors(py::handle returned) {
  std::vector<types::TensorVal> outs;
  auto add = [&](py::handle h) {
    if (!py::isinstance<PyTensor>(h)) sema::fail(sema::err_return_from_top_level());
    outs.push_back(h.cast<const PyTensor&>().v);
  };
  if (py::isinstance<py::tuple>(returned) || py::isinstance<py::list>(returned)) {
    for (py::handle h : returned) add(h);
  } else if (!returned.is_none()) {
    add(returned);
  }
  return outs;
}

// NKIC_TRACE_LIMIT overrides the budget of instructions and static_range iterations of a trace.
int64_t trace_limit() {
  const char* v = std::getenv("NKIC_TRACE_LIMIT");
  if (!v || !*v) return codegen::KernelBuilder::kDefaultMaxInstructions;
  char* end = nullptr;
  long long n = std::strtoll(v, &end, 10);
  if (*end || n <= 0)
    sema::fail(sema::err_unsupported_args("NKIC_TRACE_LIMIT", "expects a positive integer, got '" + std::string(v) + "'"));
  return n;
}


// A new tensor of nl.ndarray (both APIs), stored as storage_dtype says.
py::object ndarray_call(std::vector<int64_t> shape, const std::string& dtype, const std::string& buffer,
                        const std::string& name, int partition_dim) {
  trace::TraceContext& c = ctx("nl.ndarray");
  codegen::KernelBuilder& b = c.builder();
  const ir::Memory memory = memory_of(buffer);
  const ir::DType stored = c.storage_dtype(dtype_of(dtype), memory);
  // kernel[n]: a shared-HBM tensor is allocated once for every core (codegen/Cores.h).
  if (memory == ir::Memory::SharedHBM && b.cores) return wrap_tensor(b.cores->shared_tensor(b, std::move(shape), stored, name));
  return wrap_tensor(codegen::alloc_tensor(b, name, std::move(shape), stored, memory, partition_dim));
}

py::object load_call(py::handle src, py::handle mask, py::handle dtype, bool oob_skip) {
  trace::TraceContext& c = ctx("nl.load");
  std::optional<types::MaskVal> ms;
  codegen::OpArgs a = op_args(mask, dtype, ms);
  a.oob_skip = oob_skip;
  return wrap_tensor(codegen::load(c.builder(), tensor_arg(src, "src", "a tensor"), a));
}

void store_call(py::handle dst, py::handle value, py::handle mask, bool oob_skip) {
  trace::TraceContext& c = ctx("nl.store");
  std::optional<types::MaskVal> ms;
  codegen::OpArgs a = op_args(mask, py::none(), ms);
  a.oob_skip = oob_skip;
  codegen::store(c.builder(), tensor_arg(dst, "dst", "a tensor"), to_value(value), a);
}

// `dst`: None (a fresh tile), or the caller's view (the current API's nisa calls of one op).
// nl.ndarray of a plain shape (Python ints), a dtype of the current API (its nki_dtype_name)
// and an on-chip buffer that notes nothing (None: sbuf); a null object for any other form,
// which the Python function converts and checks.
py::object ndarray_native(py::handle shape, py::handle dtype, py::handle buffer) {
  if (!PyTuple_Check(shape.ptr()) && !PyList_Check(shape.ptr())) return {};
  std::vector<int64_t> dims;
  for (py::handle d : shape) {
    if (!PyLong_CheckExact(d.ptr())) return {};
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(d.ptr(), &overflow);
    if (overflow || v <= 0 || v >= (int64_t{1} << 62)) return {};
    dims.push_back(v);
  }
  static PyObject* const dtype_name = interned("nki_dtype_name");
  static PyObject* const buffer_name = interned("name");
  static PyObject* const buffer_direct = interned("direct");
  py::object name = attr_or_none(dtype, dtype_name);
  if (!py::isinstance<py::str>(name)) return {};
  std::string memory = "sbuf";
  if (!buffer.is_none()) {
    py::object where = attr_or_none(buffer, buffer_name), direct = attr_or_none(buffer, buffer_direct);
    if (!py::isinstance<py::str>(where) || !direct.is(py::bool_(false))) return {};
    memory = where.cast<std::string>();
    if (memory != "sbuf" && memory != "psum" && memory != "shared_hbm") return {};
  }
  return ndarray_call(dims, name.cast<std::string>(), memory, "", 0);
}

py::object elementwise_call(trace::TraceContext& c, ir::AluOp op, PyObject* const* operands, size_t n, py::handle mask,
                            py::handle dtype, py::handle dst = py::none()) {
  std::optional<types::MaskVal> ms;
  codegen::OpArgs a = op_args(mask, dtype, ms);
  std::vector<types::Value> vals;
  vals.reserve(n);
  for (size_t i = 0; i < n; ++i) vals.push_back(to_value(operands[i]));
  if (dst.is_none()) return from_value(codegen::elementwise(c.builder(), codegen::Dst::fresh(), op, std::move(vals), a));
  const codegen::Dst to = codegen::Dst::into(tensor_arg(dst, "dst"));
  a.dtype = to.dtype(c.builder(), ir::DType::float32);
  return from_value(codegen::elementwise(c.builder(), to, op, std::move(vals), a));
}

}  // namespace

// trace::bind_native places the call's arguments (its keywords by name and
// None-ness: a call passes few, nl.store's value=, a mask=); the binding only
// converts the values.
py::object call_native(const trace::NativeForm& form, const CallArgs& a) {
  constexpr size_t kMaxKeywords = 6;
  const size_t nkw = a.nkw();
  if (nkw > kMaxKeywords) return {};
  trace::Keyword keywords[kMaxKeywords];
  for (size_t i = 0; i < nkw; ++i) {
    Py_ssize_t len = 0;
    const char* utf8 = PyUnicode_AsUTF8AndSize(a.kwname(i), &len);
    if (!utf8) throw py::error_already_set();
    keywords[i] = {std::string_view(utf8, static_cast<size_t>(len)), a.kwvalue(i) == Py_None};
  }
  trace::NativeArgs at;
  if (!trace::bind_native(form, a.nargs, keywords, nkw, at)) return {};
  auto arg = [&](int i) { return py::handle(a.args[i]); };
  const py::handle mask = at.mask >= 0 ? arg(at.mask) : py::none();
  switch (form.kind) {
    case trace::NativeForm::Kind::Load: return load_call(arg(at.operands[0]), mask, py::none(), false);
    case trace::NativeForm::Kind::Store:
      store_call(arg(at.operands[0]), arg(at.operands[1]), mask, false);
      return py::none();
    case trace::NativeForm::Kind::Elementwise: {
      PyObject* operands[2] = {a.args[at.operands[0]], form.arity > 1 ? a.args[at.operands[1]] : nullptr};
      return elementwise_call(ctx(), form.op, operands, form.arity, mask, py::none());
    }
    case trace::NativeForm::Kind::DmaCopy:
      dma_copy_call(arg(at.operands[0]), arg(at.operands[1]), py::none(), py::none(), false, false, std::nullopt);
      return py::none();
    case trace::NativeForm::Kind::NdArray: return ndarray_native(arg(at.operands[0]), arg(at.operands[1]),
                                                                 at.operands[2] >= 0 ? arg(at.operands[2]) : py::none());
    case trace::NativeForm::Kind::TensorTensor: {
      // The op's own plain form names its ALU op (nl.add: "elementwise:add"); any other op
      // (a numpy ufunc, a name) takes the Python form, which names it.
      const trace::NativeForm* op = native_form(arg(at.operands[3]));
      if (!op || op->kind != trace::NativeForm::Kind::Elementwise) return {};
      tensor_tensor_call(arg(at.operands[0]), arg(at.operands[1]), arg(at.operands[2]), op->op, py::none(), py::none(),
                         0);
      return py::none();  // the call writes dst; the dispatcher returns its NkiInstruction
    }
  }
  return {};
}

// The Python functions name their native form (nki_native), so a callee whose
// signature differs never takes it.
const trace::NativeForm* native_form(py::handle func) {
  static PyObject* const nki_native = interned("nki_native");
  py::object marker = attr_or_none(func, nki_native);
  if (!py::isinstance<py::str>(marker)) return nullptr;
  Py_ssize_t len = 0;
  const char* utf8 = PyUnicode_AsUTF8AndSize(marker.ptr(), &len);
  if (!utf8) throw py::error_already_set();
  return trace::native_form(std::string_view(utf8, static_cast<size_t>(len)));
}

void bind_trace_api(py::module_& m) {
  // The targets nkic knows, the default one, and those each API supports (sema/Target.h).
  m.def("target_names", [] {
    std::vector<std::string> names;
    for (const sema::Target& t : sema::all_targets()) names.push_back(t.name);
    return names;
  });
  m.def("default_target", [] { return sema::default_target().name; });
  m.def("api_targets", &sema::api_targets, py::arg("current_api"));
  m.def("trace_begin", [](const std::string& name, const std::string& target, std::vector<int64_t> grid,
                          std::vector<int> cores, bool unroll_builtin_range, bool legacy_outputs,
                          const std::string& def_file, int def_line) {
    trace::TraceOptions o;
    o.legacy_outputs = legacy_outputs;
    o.def_loc = {ir::intern_file(def_file), def_line, 1};
    o.kernel_name = name;
    o.target = target;
    o.grid = std::move(grid);
    o.grid_physical_cores = std::move(cores);
    o.trace_time_unroll_builtin_range = unroll_builtin_range;
    const int64_t limit = trace_limit();
    trace::TraceContext& c = trace::TraceContext::new_ctx(std::move(o));
    c.builder().max_instructions = limit;
    const sema::Target& t = c.target();
    for (int n : c.opts().grid_physical_cores)
      if (n > t.max_num_physical_cores) {
        trace::TraceContext::clear();  // the trace never began
        sema::fail(sema::err_multi_cores_spmd_not_supported(n, t.name, t.max_num_physical_cores));
      }
    c.builder().location_provider = [] { return user_location(); };
    c.builder().warning_handler = issue_warning;
  });
  m.def("trace_end", &trace::TraceContext::clear);
  m.def("raise_nested_kernel_with_spmd_grid", [] {
    sema::fail(sema::err_nested_kernel_with_spmd_grid());
  });
  m.def("trace_active", [] { return trace::TraceContext::current() != nullptr; });
  m.def("unroll_builtin_range", [] { return ctx().opts().trace_time_unroll_builtin_range; });
  m.def("target_name", [] { return ctx().target().name; });
  m.def("nc_version", [] { return ctx("nisa.get_nc_version").target().nc_version; });
  m.def("cur_api", [] { return ctx().cur_api(); });
  m.def("scope_kinds", [] {
    std::vector<std::string> kinds;
    for (const trace::Scope& s : ctx().scopes()) kinds.push_back(trace::name(s.kind));
    return kinds;
  });

  // ncc.allocation_scope(): an SBUF/PSUM lifetime region (seed 003) of its own.
  m.def("push_allocation_scope", [] { ctx("ncc.allocation_scope").push_scope(trace::ScopeKind::Stmt, "allocation_scope"); });
  m.def("push_function_scope", [](const std::string& name) {
    trace::TraceContext& c = ctx();
    const auto& sites = c.call_sites();
    c.push_scope(trace::ScopeKind::Function, name, sites.empty() ? user_location() : sites.back());
  });
  // An `if` condition that is a scalar predicate over loop variables only (no
  // program ids) selects a predicated scope; anything else goes to eval_if_cnd.
  m.def("is_loop_predicate", [](py::handle cnd) {
    if (!py::isinstance<PyMask>(cnd)) return false;
    const types::MaskVal& m = cnd.cast<const PyMask&>().v;
    if (m.is_tile() || m.always_true() || m.always_false() || !m.non_affine.empty()) return false;
    for (const types::Conjunction& c : m.dnf)
      for (const types::Atom& a : c)
        if (a.expr.uses(ir::VarKind::ProgramId) || a.expr.uses(ir::VarKind::Grid)) return false;
    return true;
  });
  m.def("push_predicated_scope", [](py::handle cnd, bool negate) {
    ctx("if").push_predicated_scope(cnd.cast<const PyMask&>().v, negate);
  });
  m.def("note_direct_allocation", [] { ctx("direct allocation").builder().direct_allocation = true; });
  m.def("raise_return_in_predicated_branch", [] { sema::fail(sema::err_return_in_predicated_branch()); });
  m.def("pop_predicated_scope", [] {
    if (trace::TraceContext* c = trace::TraceContext::current()) c->pop_predicated_scope();
  });
  m.def("pop_scope", [] {
    if (trace::TraceContext* c = trace::TraceContext::current()) c->pop_scope();
  });
  m.def("is_tensor_live", [](py::handle t) {
    const types::TensorVal& v = t.cast<const PyTensor&>().v;
    return !v.region || v.region->open;
  });
  m.def("is_outer_tensor", [](py::handle t) {
    const types::TensorVal& v = t.cast<const PyTensor&>().v;
    return v.region && v.region != ctx().builder().region();
  });
  m.def("adopt_name", [](py::handle t, const std::string& name) {
    ctx().builder().adopt_name(t.cast<const PyTensor&>().v.tensor, name);
  });
  // Argument checks of the Python layer, raised as catalog diagnostics at the user's line.
  m.def("raise_unsupported_buffer", [](const std::string& what) { sema::fail(sema::err_unsupported_buffer(what)); });
  m.def("raise_unsupported_dtype", [](const std::string& what) { sema::fail(sema::err_unsupported_dtype(what)); });
  m.def("check_hwdge", [] {
    trace::TraceContext& c = ctx();
    sema::check_hwdge(c.cur_api(), c.target(), c.builder().raiser());
  });
  m.def("raise_operand_cannot_be_none", [](const std::string& operand) {
    sema::fail(sema::err_operand_cannot_be_none(operand));
  });
  m.def("raise_invalid_shape", [](const std::string& why) { sema::fail(sema::err_invalid_shape(why)); });
  m.def("assert_nc_version", [](int min_version, const std::string& what) {
    trace::TraceContext& c = ctx();
    sema::assert_nc_version(c.target(), min_version, what, c.builder().raiser());
  });
  m.def("raise_unsupported_args", [](const std::string& api, const std::string& why) {
    sema::fail(sema::err_unsupported_args(api, why));
  });
  m.def("raise_recursion_too_deep", [](const std::string& function, int limit, const std::string& file, int line,
                                       int col) {
    sema::Diagnostic d = sema::err_recursion_too_deep(function, limit);
    d.loc.file = ir::intern_file(file);
    d.loc.line = line;
    d.loc.col = col;
    sema::fail(d);
  });
  m.def("raise_unsupported_op", [](const std::string& op) { sema::fail(sema::err_instruction_unsupported_op(op)); });
  m.def(
      "raise_unsupported_index",
      [](const std::string& why, const std::string& api) {
        // `api`: the Python protocol that failed (len(), iteration), which no dispatch names.
        sema::Diagnostic d = sema::err_unsupported_index(why);
        if (!api.empty()) d.api = api;
        sema::fail(d);
      },
      py::arg("why"), py::arg("api") = "");
  m.def("raise_unexpected_operand", [](const std::string& operand, const std::string& got) {
    sema::fail(sema::err_unexpected_type_of_operand(operand, got));
  });
  m.def("raise_annotation_shape_mismatch", [](py::handle t, std::vector<int64_t> expected, const std::string& name) {
    sema::fail(sema::err_annotation_shape_mismatch(name, t.cast<const PyTensor&>().v.shape, expected));
  });
  m.def("raise_string_type_hint", [](const std::string& param, const std::string& hint, const std::string& file,
                                     int line, int col) {
    sema::Diagnostic d = sema::err_string_type_hint(param, hint);
    d.loc = {ir::intern_file(file), line, col};
    sema::fail(d);
  });
  m.def("is_nki_data", &is_nki_data);
  m.def("flags", [] {
    trace::TraceContext& c = ctx();
    return py::dict(py::arg("has_collectives") = c.has_collectives, py::arg("in_exception_block") = c.in_exception_block,
                    py::arg("multi_physical_cores") = c.multi_physical_cores);
  });
  m.def("set_in_exception_block", [](bool v) {
    if (trace::TraceContext* c = trace::TraceContext::current()) c->in_exception_block = v;
  });
  m.def("hoist", [](py::object v) -> py::object {
    if (!py::isinstance<PyTensor>(v)) return v;
    return wrap_tensor(ctx().hoist(v.cast<const PyTensor&>().v));
  });

  m.def("program_id", [](int64_t axis) { return wrap_index(ctx("nl.program_id").program_id(axis)); });
  m.def("num_programs", [](std::optional<int64_t> axis) { return ctx("nl.num_programs").num_programs(axis); });
  m.def("program_ndim", [] { return ctx("nl.program_ndim").opts().grid.size(); });
  m.def("arange", [](int64_t start, int64_t stop) {
    ctx("nl.arange");
    // nl.arange(3, 3) is empty (the calls given it do nothing); a range that ends before it starts is a mistake.
    if (stop < start) sema::fail(sema::err_invalid_shape({stop - start}));
    return wrap_index(types::arange(start, stop));
  });

  m.def("normalize_range_args", [](const std::vector<int64_t>& args) {
    codegen::RangeArgs r = codegen::normalize_range_args(args);
    return py::make_tuple(r.lb, r.ub, r.stride, r.tripcount);
  });
  m.def("raise_invalid_range_args", [](const std::string& msg) {
    sema::fail(sema::err_invalid_range_args(msg, sema::ErrorKind::Type));
  });
  m.def("open_loop", [](const std::string& name, int64_t lb, py::handle ub, int64_t stride, bool sequential,
                        const std::vector<std::pair<std::string, std::string>>& directives) {
    std::vector<codegen::LoopDirective> ds;
    for (const auto& [kind, value] : directives) ds.push_back({kind, value});
    ir::AxisType type = sequential ? ir::AxisType::Sequential : ir::AxisType::Affine;
    if (py::isinstance<PyTensor>(ub)) {  // a runtime bound: DynamicAxis
      codegen::RangeArgs r{lb, lb, stride, -1};
      return wrap_index(ctx().affine_range(name, r, type, ds, &ub.cast<const PyTensor&>().v));
    }
    return wrap_index(ctx().affine_range(name, codegen::normalize_range_args({lb, ub.cast<int64_t>(), stride}), type, ds));
  });
  // A speculative loop trace: begin returns its mark, which commit or rollback ends.
  py::class_<trace::TraceContext::Speculation>(m, "Speculation");
  m.def("begin_speculation", [] { return ctx().begin_speculation(); });
  m.def("commit_speculation", [](const trace::TraceContext::Speculation& s) { ctx().commit(s); });
  m.def("rollback_speculation", [](const trace::TraceContext::Speculation& s) { ctx().rollback(s); });
  m.def("speculating", [] {
    trace::TraceContext* c = trace::TraceContext::current();
    return c != nullptr && c->builder().speculating();
  });
  m.def("runtime_loop_begins", [] { ctx().builder().check_runtime_loop_allowed(); });
  m.def("require_unrolled", [](const std::string& why) {
    if (trace::TraceContext* c = trace::TraceContext::current()) c->builder().require_unrolled(why);
  });
  m.def("raise_break_in_deferred_loop", [](const std::string& statement) {
    sema::fail(sema::err_break_in_deferred_loop(statement));
  });
  m.def("is_traced", [](py::handle h) { return is_traced(h); });
  m.def("is_scalar_predicate", [](py::handle h) {
    return py::isinstance<PyMask>(h) && !h.cast<const PyMask&>().v.is_tile();
  });
  m.def("raise_precedence_trap", [] {
    sema::fail(sema::err_comparison_precedence());
  });
  m.def("num_instructions", [] { return ctx().builder().num_instructions(); });
  m.def("check_unroll", [](int64_t iterations) {
    codegen::KernelBuilder& b = ctx("nl.static_range").builder();
    if (iterations > b.max_instructions)
      b.fail(sema::err_trace_limit_exceeded("unroll a static_range of " + std::to_string(iterations) + " iterations",
                                            b.max_instructions));
  });
  m.def("open_while_loop", [](py::handle cond) { ctx("while").open_while_loop(tensor_arg(cond, "cond", "a tensor")); });
  m.def("close_while_loop", [](py::handle cond) { ctx("while").close_while_loop(tensor_arg(cond, "cond", "a tensor")); });
  m.def("close_loop", [] {
    if (trace::TraceContext* c = trace::TraceContext::current()) c->close_loop();
  });

  m.def("add_input", [](const std::string& name, std::vector<int64_t> shape, const std::string& dtype, bool is_mutable) {
    std::optional<ir::DType> dt = ir::dtype_from_name(dtype);
    if (!dt) sema::fail(sema::err_unsupported_dtype("'" + dtype + "' of the kernel argument '" + name + "'"));
    return wrap_tensor(ctx().add_input(name, std::move(shape), *dt, is_mutable));
  });
  m.def("at_kernel_level", [] { return ctx().at_kernel_level(); });
  m.def("kernel_return", [](py::object returned) -> py::object {
    std::vector<types::TensorVal> outs = ctx().kernel_outputs(returned_tensors(returned));
    if (returned.is_none()) return returned;
    if (!py::isinstance<py::tuple>(returned) && !py::isinstance<py::list>(returned)) return wrap_tensor(outs[0]);
    py::list l;
    for (const types::TensorVal& v : outs) l.append(wrap_tensor(v));
    return py::isinstance<py::tuple>(returned) ? py::object(py::tuple(l)) : py::object(l);
  });
  m.def("finalize", [](py::object returned) {
    return wrap_kernel(ctx().finalize(returned_tensors(returned)), ctx().compile_config, ctx().prefetch_ring);
  });

  m.def("ndarray", &ndarray_call);
  m.def("full", [](std::vector<int64_t> shape, double value, const std::string& dtype, const std::string& buffer,
                   const std::string& name, const std::string& api, int partition_dim) {
    trace::TraceContext& c = ctx(api.c_str());
    const ir::Memory memory = memory_of(buffer);
    return wrap_tensor(codegen::full(c.builder(), name, std::move(shape), c.storage_dtype(dtype_of(dtype), memory),
                                     memory, value, partition_dim));
  });
  m.def("set_narrow_floats_as_fp32", [](bool on) { ctx("nki.jit").narrow_floats_as_fp32 = on; });
  // Each builder resolves the context first: outside a kernel that is the error to report.
  m.def("load", &load_call);
  m.def("load_transpose2d", [](py::handle dst, py::handle src, py::handle mask, py::handle dtype,
                               std::optional<std::vector<int64_t>> axes, bool oob_skip, bool hwdge,
                               std::optional<int64_t> priority) {
    trace::TraceContext& c = ctx("nl.load_transpose2d");
    std::optional<types::MaskVal> ms;
    codegen::OpArgs a = op_args(mask, dtype, ms);
    a.oob_skip = oob_skip;
    const codegen::Dst to = dst_arg(dst);
    return wrap_tensor(
        codegen::load_transpose2d(c.builder(), to, tensor_arg(src, "src", "a tensor"), a, axes,
                                  {hwdge, priority}));
  }, py::arg("dst"), py::arg("src"), py::arg("mask"), py::arg("dtype"), py::arg("axes"),
     py::arg("oob_skip"), py::arg("hwdge") = false, py::arg("priority") = py::none());
  // nisa.memset: dst None makes a fresh SBUF tile of `shape` and `dtype` (the legacy API).
  m.def("memset", [](py::handle dst, std::vector<int64_t> shape, py::handle value, py::handle dtype) {
    trace::TraceContext& c = ctx("nisa.memset");
    if (!PyNumber_Check(value.ptr()) || is_traced(value))
      sema::fail(sema::err_unexpected_type_of_operand("value", "'" + py_type_name(value) + "', expected a number"));
    const bool integer = PyIndex_Check(value.ptr()) != 0;  // int, bool and numpy integers; not floats
    const codegen::Dst to = dst_arg(dst);
    return wrap_tensor(codegen::memset(c.builder(), to, std::move(shape), value.cast<double>(), integer,
                                       dtype.is_none() ? ir::DType::float32 : dtype_of(dtype.cast<std::string>())));
  });
  m.def("store", &store_call);
  m.def("elementwise", [](const std::string& op, py::tuple operands, py::handle mask, py::handle dtype, py::handle dst) {
    trace::TraceContext& c = ctx(("nl." + op).c_str());
    auto alu = ir::alu_op_from_name(op);
    if (!alu) sema::fail(sema::err_instruction_unsupported_op(op));
    return elementwise_call(c, *alu, &PySequence_Fast_ITEMS(operands.ptr())[0], operands.size(), mask, dtype, dst);
  }, py::arg("op"), py::arg("operands"), py::arg("mask"), py::arg("dtype"), py::arg("dst") = py::none());
  m.def("tensor_info", [](py::handle t) {
    types::TensorVal v = tensor_arg(t, "tensor", "a tensor");
    const codegen::KernelBuilder& b = ctx().builder();
    const ir::TensorDecl& d = b.tensor(v.tensor);
    return py::make_tuple(d.name, std::string(ir::name(d.dtype)), std::string(ir::name(b.buffer(v.tensor))));
  });
}

}  // namespace nkic::py_bind
