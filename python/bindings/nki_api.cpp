// The current nki API's own entry points (python/nki): the instructions only it has, each
// given the caller's dst, and its scheduling, LNC and placement calls.
#include <pybind11/stl.h>

#include "codegen/AccessPattern.h"
#include "codegen/Cores.h"
#include "codegen/Ops.h"
#include "codegen/Placement.h"
#include "errors.h"
#include "ir/SourceLoc.h"
#include "sema/ErrorCatalog.h"
#include "trace/TraceContext.h"
#include "values.h"

namespace nkic::py_bind {

namespace {

codegen::KernelBuilder& nisa(const char* api) { return trace::TraceContext::nki_ctx(api).builder(); }

ir::AluOp alu_arg(const std::string& op) {
  if (auto a = ir::alu_op_from_name(op)) return *a;
  sema::fail(sema::err_instruction_unsupported_op(op));
}

// nisa.reduce_cmd's number (idle 0 ... load_reduce 4) as the instruction's accumulator command.
ir::AccCmd acc_cmd(int cmd) {
  if (cmd < 0 || cmd > 4) sema::fail(sema::err_unexpected_type_of_operand("reduce_cmd", "not a nisa.reduce_cmd"));
  return static_cast<ir::AccCmd>(cmd);
}

// A number argument of `api`; nkic takes these as Python numbers only.
double number_arg(py::handle h, const char* what, const char* api) {
  if (is_tensor(h))
    sema::fail(sema::err_unsupported_args(api, std::string("nkic takes ") + what + " as a number, not a tile"));
  if (!PyNumber_Check(h.ptr()) || is_traced(h))
    sema::fail(sema::err_unexpected_type_of_operand(what, "'" + py_type_name(h) + "', expected a number"));
  return h.cast<double>();
}

// The accumulator stage of a call: its command, fold and optional reduce_res.
struct AccArgs {
  std::optional<types::TensorVal> res;
  codegen::Accumulate acc;
  AccArgs(int cmd, ir::AluOp op, py::handle reduce_res) {
    acc.cmd = acc_cmd(cmd);
    acc.op = op;
    if (!reduce_res.is_none()) res = tensor_arg(reduce_res, "reduce_res");
    acc.res = res ? &*res : nullptr;
  }
};

void bind_accumulating(py::module_& m) {
  m.def("dma_compute", [](py::handle dst, py::sequence srcs, const std::string& reduce_op,
                          const std::vector<double>& scales, bool unique_indices, bool oob_skip) {
    codegen::KernelBuilder& b = nisa("nisa.dma_compute");
    std::vector<types::TensorVal> views;
    for (py::handle s : srcs) views.push_back(tensor_arg(s, "srcs"));
    codegen::dma_compute(b, tensor_arg(dst, "dst"), views, alu_arg(reduce_op), scales, unique_indices, oob_skip);
  });
  m.def("iota_pattern", [](py::handle dst, codegen::AffinePattern pattern, py::handle offset,
                           py::handle channel_multiplier) {
    codegen::KernelBuilder& b = nisa("nisa.iota");
    return wrap_tensor(codegen::iota_pattern(b, tensor_arg(dst, "dst"), pattern, to_value(offset),
                                             int_arg(channel_multiplier, "channel_multiplier", "nisa.iota")));
  });
  m.def("affine_select_pattern", [](py::handle dst, codegen::AffinePattern pattern, py::handle channel_multiplier,
                                    py::handle on_true, double on_false, const std::string& cmp, py::handle offset) {
    codegen::KernelBuilder& b = nisa("nisa.affine_select");
    return wrap_tensor(codegen::affine_select_pattern(
        b, tensor_arg(dst, "dst"), pattern, int_arg(channel_multiplier, "channel_multiplier", "nisa.affine_select"),
        tensor_arg(on_true, "on_true_tile"), on_false, alu_arg(cmp), to_value(offset)));
  });
  m.def("exponential", [](py::handle dst, py::handle src, py::handle max_value, py::handle reduce_res, int cmd,
                          py::handle reduce_init) {
    codegen::KernelBuilder& b = nisa("nisa.exponential");
    AccArgs a(cmd, ir::AluOp::add, reduce_res);
    std::optional<types::TensorVal> init_tile;
    if (is_tensor(reduce_init)) init_tile = tensor_arg(reduce_init, "reduce_init");
    else a.acc.init = number_arg(reduce_init, "reduce_init", "nisa.exponential");
    a.acc.init_tile = init_tile ? &*init_tile : nullptr;
    return wrap_tensor(codegen::exponential(b, codegen::Dst::into(tensor_arg(dst, "dst")), tensor_arg(src, "src"), to_value(max_value), a.acc));
  });
  m.def("activate2", [](py::handle dst, const std::string& op, py::handle data, py::handle imm0, py::handle imm1,
                        const std::string& op0, const std::string& op1, py::handle relu_param, bool reverse0,
                        bool reverse1, const std::string& reduce_op, py::handle reduce_res, int cmd) {
    codegen::KernelBuilder& b = nisa("nisa.activate2");
    AccArgs a(cmd, alu_arg(reduce_op), reduce_res);
    return wrap_tensor(codegen::activate2(b, codegen::Dst::into(tensor_arg(dst, "dst")), alu_arg(op), tensor_arg(data, "data"),
                                          {alu_arg(op0), to_value(imm0), reverse0}, {alu_arg(op1), to_value(imm1), reverse1},
                                          to_value(relu_param), a.acc));
  });
  m.def("tensor_scalar_reduce", [](py::handle dst, py::handle data, const std::string& op0, py::handle operand0,
                                   bool reverse0, const std::string& reduce_op, py::handle reduce_res, int cmd,
                                   py::handle reduce_init, bool negate) {
    codegen::KernelBuilder& b = nisa("nisa.tensor_scalar_reduce");
    AccArgs a(cmd, alu_arg(reduce_op), reduce_res);
    a.acc.negate_res = negate;
    std::optional<types::Value> init, operand;
    if (!reduce_init.is_none()) init = to_value(reduce_init);
    if (!operand0.is_none()) operand = to_value(operand0);
    return wrap_tensor(codegen::tensor_scalar_reduce(b, codegen::Dst::into(tensor_arg(dst, "dst")), tensor_arg(data, "data"),
                                                     {alu_arg(op0), operand, reverse0}, init, a.acc));
  });
  m.def("tensor_scalar_cumulative", [](py::handle dst, py::handle src, const std::string& op0, const std::string& op1,
                                       py::handle imm0, py::handle imm1, int cmd) {
    codegen::KernelBuilder& b = nisa("nisa.tensor_scalar_cumulative");
    std::optional<types::Value> init;
    if (!imm1.is_none()) init = to_value(imm1);
    return wrap_tensor(codegen::tensor_scalar_cumulative(b, tensor_arg(dst, "dst"), tensor_arg(src, "src"),
                                                         {alu_arg(op0), to_value(imm0), false}, alu_arg(op1), init,
                                                         acc_cmd(cmd)));
  });
  m.def("topk", [](py::handle val_dst, py::handle idx_dst, py::handle src, py::handle n) {
    codegen::KernelBuilder& b = nisa("nisa.topk");
    return wrap_tensor(codegen::topk(b, tensor_arg(val_dst, "val_dst"), tensor_arg(idx_dst, "idx_dst"), tensor_arg(src, "src"),
                                     int_arg(n, "n", "nisa.topk")));
  });
  m.def("nonzero_with_count", [](py::handle dst, py::handle src, py::handle index_offset, py::handle padding_val) {
    codegen::KernelBuilder& b = nisa("nisa.nonzero_with_count");
    return wrap_tensor(codegen::nonzero_with_count(b, tensor_arg(dst, "dst"), tensor_arg(src, "src"),
                                                   int_arg(index_offset, "index_offset", "nisa.nonzero_with_count"),
                                                   int_arg(padding_val, "padding_val", "nisa.nonzero_with_count")));
  });
}

void bind_random(py::module_& m) {
  m.def("rng", [](py::handle dst, int engine) {
    return wrap_tensor(codegen::rng(nisa("nisa.rng"), tensor_arg(dst, "dst"), ir::engine_from_nki(engine)));
  });
  m.def("rand2", [](py::handle dst, py::handle min, py::handle max) {
    return wrap_tensor(codegen::rand2(nisa("nisa.rand2"), tensor_arg(dst, "dst"), to_value(min), to_value(max)));
  });
  m.def("set_rng_seed", [](py::handle seeds) {
    codegen::set_rng_seed(nisa("nisa.set_rng_seed"), tensor_arg(seeds, "src_seeds"));
  });
  m.def("rand_set_state", [](py::handle seeds, int engine) {
    codegen::rand_set_state(nisa("nisa.rand_set_state"), tensor_arg(seeds, "src_seeds"), ir::engine_from_nki(engine));
  });
  m.def("rand_get_state", [](py::handle dst, int engine) {
    return wrap_tensor(
        codegen::rand_get_state(nisa("nisa.rand_get_state"), tensor_arg(dst, "dst"), ir::engine_from_nki(engine)));
  });
}

}  // namespace

void bind_nki_api(py::module_& m) {
  bind_accumulating(m);
  bind_random(m);
  m.def("check_address", [](py::handle t, int64_t partition, int64_t free_offset) {
    codegen::KernelBuilder& b = trace::TraceContext::nki_ctx("nl.ndarray").builder();
    codegen::check_address(b, tensor_arg(t, "tensor"), partition, free_offset);
  });
  // kernel[n] of the current API: the body traced once per core (codegen/Cores.h).
  m.def("lnc_begin_core", [](int c, int n) {
    codegen::KernelBuilder& b = trace::TraceContext::nki_ctx("nki.jit").builder();
    if (c == 0) b.cores.emplace(n);
    b.cores->begin_core(b, c);
  });
  m.def("lnc_finish", [] {
    codegen::KernelBuilder& b = trace::TraceContext::nki_ctx("nki.jit").builder();
    b.cores->finish(b);
  });
  // (cores, the core being traced) under kernel[n], None otherwise.
  m.def("lnc_active", []() -> py::object {
    trace::TraceContext* c = trace::TraceContext::current();
    if (!c || !c->builder().cores) return py::none();
    return py::make_tuple(c->builder().cores->count(), c->builder().cores->current());
  });
  m.def("core_barrier", [](py::handle data, const std::vector<int64_t>& cores) {
    codegen::core_barrier(nisa("nisa.core_barrier"), tensor_arg(data, "data"), cores);
  });
  m.def("sendrecv", [](py::handle src, py::handle dst, int64_t send_to, int64_t recv_from) {
    codegen::sendrecv(nisa("nisa.sendrecv"), tensor_arg(src, "src"), tensor_arg(dst, "dst"), send_to, recv_from);
  });
  m.def("sendrecv_compute", [](py::handle src, py::handle dst, int64_t send_to, int64_t recv_from,
                               const std::string& reduce_op) {
    codegen::sendrecv(nisa("nisa.sendrecv_compute"), tensor_arg(src, "src"), tensor_arg(dst, "dst"), send_to, recv_from,
                      alu_of(reduce_op));
  });
  m.def("check_placements", [] { codegen::check_placement_overlap(trace::TraceContext::nki_ctx("nl.ndarray").builder()); });
  m.def("check_outputs", [](py::list outputs) {
    trace::TraceContext& ctx = trace::TraceContext::nki_ctx("nki.jit");
    std::vector<types::TensorVal> ts;
    for (py::handle h : outputs) ts.push_back(tensor_arg(h, "output"));
    ctx.check_shared_hbm_outputs(ts);
  });
  // A construct outside the accepted Python subset, found by the front end's AST walk;
  // in a helper (`callee`), with a note at each user call that reached it.
  m.def("raise_unsupported_construct", [](const std::string& what, const std::string& hint, const std::string& file,
                                          int line, int col, const std::string& callee) {
    sema::Diagnostic d = sema::err_unsupported_python_construct(what, hint);
    d.loc = {ir::intern_file(file), line, col};
    no_api_in_flight();
    if (!callee.empty()) {
      std::vector<sema::Note> outer;
      ir::SourceLoc here = user_location(&outer);
      if (here.known()) d.notes.push_back({here, "called '" + callee + "' from here"});
      d.notes.insert(d.notes.end(), outer.begin(), outer.end());
    }
    sema::fail(d);
  }, py::arg("what"), py::arg("hint"), py::arg("file"), py::arg("line"), py::arg("col"), py::arg("callee") = "");
  // A construct the parser frontend of nki 0.6 rejected, which the 0.7+ tracer runs as Python.
  m.def("warn_parser_frontend_construct", [](const std::string& what, const std::string& hint, const std::string& file,
                                             int line, int col) {
    sema::Diagnostic d = sema::warn_parser_frontend_construct(what, hint);
    d.loc = {ir::intern_file(file), line, col};
    issue_warning(d);
  });
  m.def("current_api", [] {
    trace::TraceContext* ctx = trace::TraceContext::current();
    return ctx != nullptr && ctx->builder().current_api;
  });
  // The kernel is traced as the NKI version served (an invalid NKIC_NKI_VERSION fails here).
  m.def("set_current_api", [] {
    codegen::KernelBuilder& b = trace::TraceContext::nki_ctx("nki.jit").builder();
    b.nki_version = sema::served_nki_version();
    b.current_api = true;
  });
  m.def("ap_view", [](py::handle t, std::vector<std::pair<int64_t, int64_t>> pattern, std::optional<int64_t> offset,
                      py::handle scalar_offset, py::handle vector_offset, int indirect_dim, py::handle dtype) {
    codegen::KernelBuilder& b = trace::TraceContext::nki_ctx("tensor.ap").builder();
    std::optional<codegen::ApIndirect> ind;
    if (!scalar_offset.is_none()) ind = codegen::ApIndirect{tensor_arg(scalar_offset, "scalar_offset"), false, indirect_dim};
    if (!vector_offset.is_none()) ind = codegen::ApIndirect{tensor_arg(vector_offset, "vector_offset"), true, indirect_dim};
    std::optional<ir::DType> d;
    if (!dtype.is_none()) {
      d = ir::dtype_from_name(dtype.cast<std::string>());
      if (!d) sema::fail(sema::err_unsupported_dtype("'" + dtype.cast<std::string>() + "'"));
    }
    std::optional<ir::AffineExpr> start;
    if (offset) start = ir::AffineExpr(*offset);
    return wrap_tensor(codegen::ap_view(b, tensor_arg(t, "tensor"), pattern, start, ind, d));
  });
}

}  // namespace nkic::py_bind
