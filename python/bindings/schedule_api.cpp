#include "schedule_api.h"

#include <pybind11/stl.h>

#include "errors.h"
#include "ir/SourceLoc.h"
#include "sema/ErrorCatalog.h"
#include "values.h"

namespace nkic::py_bind {

namespace {

// The instructions of one nisa call: ids [first, end) of the trace `serial`. A plain CPython
// type (every current-API call makes one: no pybind11 instance bookkeeping on the hot path).
struct NkiInstruction {
  PyObject_HEAD
  int64_t first, end;
  uint64_t serial;
};

PyTypeObject instruction_type = {PyVarObject_HEAD_INIT(nullptr, 0)};

bool is_instruction(PyObject* p) { return PyObject_TypeCheck(p, &instruction_type); }

ir::SourceLoc source_loc(const std::tuple<std::string, int, int>& where) {
  return {ir::intern_file(std::get<0>(where)), std::get<1>(where), std::get<2>(where)};
}

// Every instruction of `consumer` waits for every instruction of each of `producers`.
void add_dependencies(trace::TraceContext& ctx, std::pair<int64_t, int64_t> consumer,
                      const std::vector<std::pair<int64_t, int64_t>>& producers) {
  codegen::KernelBuilder& b = ctx.builder();
  for (int64_t c = consumer.first; c < consumer.second; ++c)
    for (const auto& [first, end] : producers)
      for (int64_t p = first; p < end; ++p) b.add_dependency(c, p);
}

[[noreturn]] void of_another_trace() {
  sema::fail(sema::err_unsupported_args("depends_on", "an NkiInstruction of another kernel's trace; wire "
                                                      "instructions of the kernel being traced"));
}

// The ids recorded under `label`, or null.
std::vector<trace::TraceContext::InstructionIds>* labelled(trace::TraceContext& ctx, const std::string& label) {
  for (auto& [name, ids] : ctx.instruction_labels())
    if (name == label) return &ids;
  return nullptr;
}

}  // namespace

py::object instruction_handle(trace::TraceContext& ctx, int64_t first, PyObject* label) {
  const int64_t end = ctx.builder().next_instruction_id();
  if (end == first) return py::none();
  if (label && PyUnicode_Check(label)) {
    const std::string name = py::reinterpret_borrow<py::str>(label).cast<std::string>();
    auto* ids = labelled(ctx, name);
    if (!ids) ids = &ctx.instruction_labels().emplace_back(name, std::vector<trace::TraceContext::InstructionIds>{}).second;
    ids->emplace_back(first, end);
  }
  auto* h = PyObject_New(NkiInstruction, &instruction_type);
  if (!h) throw py::error_already_set();
  h->first = first;
  h->end = end;
  h->serial = ctx.serial();
  return py::reinterpret_steal<py::object>(reinterpret_cast<PyObject*>(h));
}

int64_t instruction_first(trace::TraceContext& ctx, py::handle h, const char* what) {
  if (!is_instruction(h.ptr()))
    sema::fail(sema::err_unexpected_type_of_operand(what, py_type_name(h) + "; expected the NkiInstruction a call returned"));
  const auto* self = reinterpret_cast<const NkiInstruction*>(h.ptr());
  if (self->serial != ctx.serial()) of_another_trace();
  return self->first;
}

namespace {

// handle.depends_on(*producers): this instruction runs after every producer has completed; returns it.
PyObject* depends_on(PyObject* handle, PyObject* const* producers, Py_ssize_t n) {
  try {
    const auto* self = reinterpret_cast<const NkiInstruction*>(handle);
    trace::TraceContext& ctx = trace::TraceContext::nki_ctx("depends_on");
    std::vector<std::pair<int64_t, int64_t>> ids;
    for (Py_ssize_t i = 0; i < n; ++i) {
      if (!is_instruction(producers[i]))
        sema::fail(sema::err_unexpected_type_of_operand(
            "producer", py_type_name(producers[i]) + "; depends_on takes the NkiInstruction a nisa call returns"));
      const auto* other = reinterpret_cast<const NkiInstruction*>(producers[i]);
      if (other->serial != ctx.serial()) of_another_trace();
      ids.emplace_back(other->first, other->end);
    }
    if (self->serial != ctx.serial()) of_another_trace();
    add_dependencies(ctx, {self->first, self->end}, ids);
    Py_INCREF(handle);
    return handle;
  } catch (...) {
    return translated_exception();
  }
}

PyObject* instruction_repr(PyObject* handle) {
  const auto* self = reinterpret_cast<const NkiInstruction*>(handle);
  return PyUnicode_FromFormat("<NkiInstruction %lld..%lld>", static_cast<long long>(self->first),
                              static_cast<long long>(self->end - 1));
}

PyMethodDef instruction_methods[] = {
    {"depends_on", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&depends_on)), METH_FASTCALL,
     "depends_on(*producers): this instruction runs after every producer has completed; returns it."},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace

void bind_schedule_api(py::module_& m) {
  instruction_type.tp_name = "_nkic.NkiInstruction";
  instruction_type.tp_doc = "The instructions one nisa call traced.";
  instruction_type.tp_basicsize = sizeof(NkiInstruction);
  instruction_type.tp_flags = Py_TPFLAGS_DEFAULT;
  instruction_type.tp_new = nullptr;  // made by the dispatcher only
  instruction_type.tp_methods = instruction_methods;
  instruction_type.tp_repr = instruction_repr;
  if (PyType_Ready(&instruction_type) < 0) throw py::error_already_set();
  m.attr("NkiInstruction") = py::handle(reinterpret_cast<PyObject*>(&instruction_type));
  // kernel.with_schedule's edges, after the body traced: consumer label -> producer labels,
  // reported at `where` (its call site).
  m.def("schedule_labels", [](const std::vector<std::pair<std::string, std::vector<std::string>>>& edges,
                              std::tuple<std::string, int, int> where) {
    trace::TraceContext& ctx = trace::TraceContext::nki_ctx("kernel.with_schedule");
    const PushedLocation at(&ctx, source_loc(where));
    for (const auto& [consumer, producers] : edges) {
      std::vector<std::string> names = producers;
      names.insert(names.begin(), consumer);
      for (const std::string& label : names) {
        if (labelled(ctx, label)) continue;
        std::string known;
        for (const auto& [name, ids] : ctx.instruction_labels()) known += (known.empty() ? "'" : ", '") + name + "'";
        sema::Diagnostic d = sema::err_unsupported_args(
            "kernel.with_schedule", "no instruction of the kernel is named '" + label + "'");
        d.loc = source_loc(where);
        d.hint = "the names given with name=: " + (known.empty() ? std::string("none") : known);
        sema::fail(d);
      }
      std::vector<std::pair<int64_t, int64_t>> ids;
      for (const std::string& p : producers) ids.insert(ids.end(), labelled(ctx, p)->begin(), labelled(ctx, p)->end());
      for (const auto& c : *labelled(ctx, consumer)) add_dependencies(ctx, c, ids);
    }
  });
  m.def("begin_no_reorder", [] { trace::TraceContext::nki_ctx("nl.no_reorder").builder().begin_no_reorder(); });
  m.def("end_no_reorder", [] { trace::TraceContext::nki_ctx("nl.no_reorder").builder().end_no_reorder(); });
}

}  // namespace nkic::py_bind
