#include "schedule_api.h"

#include <pybind11/stl.h>

#include "errors.h"
#include "ir/SourceLoc.h"
#include "sema/ErrorCatalog.h"
#include "values.h"

namespace nkic::py_bind {

namespace {

// The instructions of one nisa call: ids [first, end) of the trace `serial`.
struct NkiInstruction {
  int64_t first = 0, end = 0;
  uint64_t serial = 0;
};

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
  return py::cast(NkiInstruction{first, end, ctx.serial()});
}

void bind_schedule_api(py::module_& m) {
  py::class_<NkiInstruction>(m, "NkiInstruction", "The instructions one nisa call traced.")
      .def("depends_on", [](py::object handle, py::args producers) {
        const auto& self = handle.cast<const NkiInstruction&>();
        // This instruction runs after every producer has completed; returns self.
        trace::TraceContext& ctx = trace::TraceContext::nki_ctx("depends_on");
        std::vector<std::pair<int64_t, int64_t>> ids;
        for (py::handle p : producers) {
          if (!py::isinstance<NkiInstruction>(p))
            sema::fail(sema::err_unexpected_type_of_operand(
                "producer", py_type_name(p) + "; depends_on takes the NkiInstruction a nisa call returns"));
          const auto& other = p.cast<const NkiInstruction&>();
          if (other.serial != ctx.serial()) of_another_trace();
          ids.emplace_back(other.first, other.end);
        }
        if (self.serial != ctx.serial()) of_another_trace();
        add_dependencies(ctx, {self.first, self.end}, ids);
        return handle;
      })
      .def("__repr__", [](const NkiInstruction& self) {
        return "<NkiInstruction " + std::to_string(self.first) + ".." + std::to_string(self.end - 1) + ">";
      });
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
