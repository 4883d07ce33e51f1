#include "kernel_api.h"

#include <pybind11/stl.h>

#include <functional>
#include <optional>
#include <sstream>

#include "errors.h"
#include "ir/IRPrinter.h"
#include "ir/Isa.h"
#include "ir/IRVisitor.h"
#include "ir/Verifier.h"
#include "sim/Budget.h"
#include "sim/Simulator.h"

namespace nkic::py_bind {

namespace {

py::tuple tensor_desc(const ir::TensorDecl& t) {
  return py::make_tuple(t.name, py::tuple(py::cast(t.shape)), std::string(ir::name(t.dtype)));
}

// Raw addresses of C-contiguous numpy buffers, so user dtypes (bfloat16, fp8)
// need no buffer-protocol support; the Python caller keeps the arrays alive.
// A simulation's options; a null time limit keeps the simulator's default.
sim::SimOptions sim_options(bool check_uninitialized, bool check_races, std::optional<double> time_limit,
                            double memory_limit) {
  sim::SimOptions opts;
  opts.check_uninitialized = check_uninitialized;
  opts.check_races = check_races;
  if (time_limit) opts.time_limit_seconds = *time_limit;
  opts.memory_limit_bytes = memory_limit;
  return opts;
}

[[noreturn]] void raise_sim_error(const ir::NkiError& e, const ir::Kernel& k) {
  raise_diagnostic(e.diag(), k.current_api ? sema::Api::Current : sema::Api::Legacy);
  throw py::error_already_set();
}

std::vector<void*> bindings_of(const ir::Kernel& k, const std::vector<uintptr_t>& inputs,
                               const std::vector<uintptr_t>& outputs) {
  if (inputs.size() != k.inputs.size() || outputs.size() != k.outputs.size())
    throw py::value_error("simulate: wrong number of buffers");
  std::vector<void*> bindings(k.tensors.size(), nullptr);
  for (size_t i = 0; i < inputs.size(); ++i) bindings[k.inputs[i]] = reinterpret_cast<void*>(inputs[i]);
  for (size_t i = 0; i < outputs.size(); ++i) bindings[k.outputs[i]] = reinterpret_cast<void*>(outputs[i]);
  return bindings;
}

// Runs `simulate` without the GIL, then prints what the kernel printed and issues its warnings
// at the user's lines, or raises its diagnostic.
void run_simulation(const ir::Kernel& k, sim::SimOptions& opts, const std::function<void()>& simulate) {
  std::ostringstream printed;  // nl.device_print output, written to Python's stdout afterwards
  opts.print_stream = &printed;
  std::vector<ir::Diagnostic> warnings;  // issued as Python warnings at the user's line once the GIL is back
  opts.warning = [&warnings](const ir::Diagnostic& d) { warnings.push_back(d); };
  try {
    {
      py::gil_scoped_release release;
      simulate();
    }
    if (!printed.str().empty()) py::print(printed.str(), py::arg("end") = "", py::arg("flush") = true);
    for (const ir::Diagnostic& d : warnings) issue_warning(d);
  } catch (const ir::NkiError& e) {
    if (!printed.str().empty()) py::print(printed.str(), py::arg("end") = "", py::arg("flush") = true);
    raise_sim_error(e, k);
  }
}

void run(const PyKernel& self, const std::vector<uintptr_t>& inputs, const std::vector<uintptr_t>& outputs,
         bool check_uninitialized, bool check_races, std::optional<double> time_limit, double memory_limit,
         py::object progress, bool budget_checked) {
  const ir::Kernel& k = *self.k;
  std::vector<void*> bindings = bindings_of(k, inputs, outputs);
  sim::SimOptions opts = sim_options(check_uninitialized, check_races, time_limit, memory_limit);
  opts.budget_checked = budget_checked;
  if (!progress.is_none())
    opts.progress = [&progress](double done) {
      py::gil_scoped_acquire gil;
      progress(done);
    };
  run_simulation(k, opts, [&] { sim::simulate(k, bindings, opts); });
}

// nki.multi_rank_simulate: rank r's buffers are inputs[r] and outputs[r].
void run_ranks(const PyKernel& self, const std::vector<std::vector<uintptr_t>>& inputs,
               const std::vector<std::vector<uintptr_t>>& outputs, bool check_uninitialized, bool check_races,
               std::optional<double> time_limit, double memory_limit) {
  const ir::Kernel& k = *self.k;
  std::vector<std::vector<void*>> bindings;
  for (size_t r = 0; r < inputs.size() && r < outputs.size(); ++r) bindings.push_back(bindings_of(k, inputs[r], outputs[r]));
  sim::SimOptions opts = sim_options(check_uninitialized, check_races, time_limit, memory_limit);
  opts.budget_checked = true;
  run_simulation(k, opts, [&] { sim::simulate_ranks(k, bindings, opts); });
}

// Input positions the kernel can write: some instruction's dst is the input or a
// view of it. The others are read in place, without a defensive copy.
py::list written_inputs(const PyKernel& s) {
  const ir::Kernel& k = *s.k;
  struct Writes final : ir::IRVisitor {
    explicit Writes(const ir::Kernel& kernel) : k(kernel), written(kernel.tensors.size(), false) {}
    const ir::Kernel& k;
    std::vector<bool> written;
    void visit(const ir::Instruction& in) override {
      if (!in.has_dst()) return;
      for (int t = in.dst.tensor; t >= 0 && !written[t]; t = k.tensor(t).alias_of) written[t] = true;
    }
  } w(k);
  w.visit_block(k.body);
  py::list l;
  for (size_t i = 0; i < k.inputs.size(); ++i)
    if (w.written[k.inputs[i]]) l.append(i);
  return l;
}

}  // namespace

py::object wrap_kernel(std::unique_ptr<ir::Kernel> k, sema::CompileConfig config, int64_t prefetch_ring) {
  return py::cast(PyKernel{std::shared_ptr<ir::Kernel>(std::move(k)), std::move(config), prefetch_ring});
}

void bind_kernel_api(py::module_& m) {
  // The instruction table's rows: ISA name, default engine, simulator executor.
  m.def("instruction_table", [] {
    py::list rows;
    for (int i = 0; i < ir::kNumOpcodes; ++i) {
      const ir::OpcodeInfo& r = ir::info(static_cast<ir::Opcode>(i));
      rows.append(py::dict(py::arg("name") = r.name, py::arg("engine") = ir::name(r.engine),
                           py::arg("exec") = ir::name(r.exec)));
    }
    return rows;
  });
  // The nisa calls without a row of their own: (name, the row they emit or None, engine).
  m.def("nisa_calls", [] {
    py::list rows;
    for (const ir::NisaCall& c : ir::nisa_calls())
      rows.append(py::make_tuple(c.name, c.emits ? py::object(py::str(ir::name(*c.emits))) : py::object(py::none()),
                                 ir::name(c.engine)));
    return rows;
  });
  // The ALU ops (name, arity, kind) and the dtypes (name, is_float), in the core's order:
  // the front ends' lists of nl functions and dtypes derive from them.
  m.def("alu_ops", [] {
    py::list ops;
    for (int i = 0; i < ir::kNumAluOps; ++i) {
      const ir::AluOpInfo& r = ir::info(static_cast<ir::AluOp>(i));
      ops.append(py::make_tuple(std::string(r.name), r.arity, ir::name(r.kind)));
    }
    return ops;
  });
  m.def("dtypes", [] {
    py::list ts;
    for (int i = 0; i < ir::kNumDTypes; ++i) {
      const ir::DTypeInfo& r = ir::info(static_cast<ir::DType>(i));
      ts.append(py::make_tuple(std::string(r.name), r.is_float));
    }
    return ts;
  });
  py::class_<PyKernel>(m, "Kernel")
      .def_property_readonly("name", [](const PyKernel& s) { return s.k->name; })
      .def_property_readonly("grid", [](const PyKernel& s) { return s.k->grid; })
      .def_property_readonly("inputs", [](const PyKernel& s) {
        py::list l;
        for (int id : s.k->inputs) l.append(tensor_desc(s.k->tensor(id)));
        return l;
      })
      .def_property_readonly("outputs", [](const PyKernel& s) {
        py::list l;
        for (int id : s.k->outputs) l.append(tensor_desc(s.k->tensor(id)));
        return l;
      })
      .def_property_readonly("mutable_outputs", [](const PyKernel& s) {
        // Output positions that are (mutable) inputs, as (output index, input index).
        py::list l;
        for (size_t o = 0; o < s.k->outputs.size(); ++o)
          for (size_t i = 0; i < s.k->inputs.size(); ++i)
            if (s.k->outputs[o] == s.k->inputs[i]) l.append(py::make_tuple(o, i));
        return l;
      })
      .def_property_readonly("written_inputs", &written_inputs)
      // (ISA name, engine) of every instruction, in the printed order.
      .def("instruction_engines", [](const PyKernel& s) {
        struct Collect : ir::IRVisitor {
          py::list out;
          void visit(const ir::Instruction& in) override {
            out.append(py::make_tuple(ir::name(in.opcode), ir::name(ir::engine_of(in))));
          }
        } c;
        c.visit_block(s.k->body);
        return c.out;
      })
      .def("num_instructions", [](const PyKernel& s) {
        struct Counter : ir::IRVisitor {
          int64_t n = 0;
          void visit(const ir::Instruction&) override { ++n; }
        } c;
        c.visit_block(s.k->body);
        return c.n;
      })
      .def("text", [](const PyKernel& s, bool locations) { return ir::print(*s.k, {locations}); },
           py::arg("locations") = true)
      .def("verify", [](const PyKernel& s) { return ir::verify(*s.k); })
      .def("simulate", &run, py::arg("inputs"), py::arg("outputs"), py::arg("check_uninitialized") = false,
           py::arg("check_races") = false, py::arg("time_limit") = std::nullopt, py::arg("memory_limit") = 0.0,
           py::arg("progress") = py::none(), py::arg("budget_checked") = false)
      .def("simulate_ranks", &run_ranks, py::arg("inputs"), py::arg("outputs"), py::arg("check_uninitialized") = false,
           py::arg("check_races") = false, py::arg("time_limit") = std::nullopt, py::arg("memory_limit") = 0.0)
      // simulate()'s budget check, run before the caller allocates the outputs.
      .def("fail_out_of_memory", [](const PyKernel& s) {
        try {
          sim::fail_out_of_memory(*s.k, sim_options(false, false, std::nullopt, 0.0));
        } catch (const ir::NkiError& e) {
          raise_sim_error(e, *s.k);
        }
      })
      .def("check_budget", [](const PyKernel& s, bool check_uninitialized, std::optional<double> time_limit,
                              double memory_limit) {
        try {
          sim::check_budget(*s.k, sim_options(check_uninitialized, false, time_limit, memory_limit));
        } catch (const ir::NkiError& e) {
          raise_sim_error(e, *s.k);
        }
      });
}

}  // namespace nkic::py_bind
