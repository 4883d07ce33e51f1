// The compute op builders as nkic's Python layer calls them (nl.sum, nl.matmul,
// nisa.nc_matmul, nisa.iota, nisa.affine_select, nl.where, ...).
#include <pybind11/stl.h>

#include "codegen/Indexing.h"
#include "codegen/Ops.h"
#include "sema/Asserts.h"
#include "sema/ErrorCatalog.h"
#include "trace/TraceContext.h"
#include "native_calls.h"
#include "values.h"

namespace nkic::py_bind {

ir::AluOp alu_of(const std::string& op) {
  if (auto a = ir::alu_op_from_name(op)) return *a;
  sema::fail(sema::err_instruction_unsupported_op(op));
}

namespace {

// A call's shared keyword arguments; the mask is stored alongside so OpArgs can point at it.
// `to`: the call's destination, the caller's view (the current API, whose dtype is the
// result's) or, for dst None, a fresh tile (the legacy API, of dtype= or the builder's).
struct Args {
  std::optional<types::MaskVal> mask;
  codegen::OpArgs op;
  codegen::Dst to = codegen::Dst::fresh();
  Args(const codegen::KernelBuilder& b, py::handle dst, py::handle mask_obj, py::handle dtype) : Args(mask_obj, dtype) {
    to = dst_arg(dst);
    if (to.given()) op.dtype = to.dtype(b, ir::DType::float32);
  }
  Args(py::handle mask_obj, py::handle dtype) {
    if (!mask_obj.is_none()) {
      types::Value v = to_value(mask_obj);
      if (auto* m = std::get_if<types::MaskVal>(&v)) mask = *m;
      else sema::fail(sema::err_unsupported_expression_in_mask("mask= must be a comparison of index expressions"));
      op.mask = &*mask;
    }
    if (!dtype.is_none()) {
      auto d = ir::dtype_from_name(dtype.cast<std::string>());
      if (!d) sema::fail(sema::err_unsupported_dtype("'" + dtype.cast<std::string>() + "'"));
      op.dtype = *d;
    }
  }
  Args(const Args&) = delete;
};

codegen::KernelBuilder& builder(const std::string& api) { return trace::TraceContext::nki_ctx(api).builder(); }

// (op name, operand or None, reverse) as the nisa signatures give each ALU stage.
codegen::PipelineStep step_of(py::handle op, py::handle operand, bool reverse) {
  return {alu_of(op.cast<std::string>()), operand.is_none() ? std::nullopt : std::optional(to_value(operand)), reverse};
}

std::vector<codegen::PipelineStep> steps_of(py::list steps) {
  std::vector<codegen::PipelineStep> out;
  for (py::handle h : steps) {
    py::tuple t = py::reinterpret_borrow<py::tuple>(h);
    out.push_back(step_of(t[0], t[1], t[2].cast<bool>()));
  }
  return out;
}

const types::TensorVal* optional_tensor(py::handle h, const char* what, std::optional<types::TensorVal>& slot) {
  if (h.is_none()) return nullptr;
  slot = tensor_arg(h, what);
  return &*slot;
}

// reduce_op (a name, or None for add), reduce_res (a tile or None) and reduce_cmd
// (nisa.reduce_cmd: idle 0, reset 1, reduce 2, reset_reduce 3, load_reduce 4, as
// ir::AccCmd; these instructions take no reduce_init, so a load_reduce starts from 0).
codegen::Accumulate accumulate_of(py::handle op, py::handle res, int cmd, std::optional<types::TensorVal>& slot) {
  codegen::Accumulate acc;
  if (cmd < 0 || cmd > 4) sema::fail(sema::err_unexpected_type_of_operand("reduce_cmd", "not a nisa.reduce_cmd"));
  acc.cmd = static_cast<ir::AccCmd>(cmd);
  if (!op.is_none()) acc.op = alu_of(op.cast<std::string>());
  acc.res = optional_tensor(res, "reduce_res", slot);
  return acc;
}

// An nc_matmul's (or nc_matmul_mx's) tile_position and tile_size (tiling mode): ints, the start
// possibly an affine expression of loop variables, None as empty (nc_matmul_mx's default);
// codegen::check_pe_tile checks the values.
codegen::PeTile pe_tile_arg(py::handle tile_position, py::handle tile_size, const char* api) {
  codegen::PeTile tile;
  if (!tile_size.is_none()) tile.size = ints_arg(tile_size, "tile_size", api);
  if (tile_position.is_none()) return tile;
  for (py::handle at : ints_sequence(tile_position, "tile_position", api)) {
    const std::string what = tile.position.empty() ? "tile_position start_row" : "tile_position start_column";
    if (!is_index(at)) {
      tile.position.emplace_back(int_arg(at, what, api));
      continue;
    }
    const types::IndexVal& v = unwrap<PyIndex>(at).v;
    if (!v.is_scalar() || !v.non_affine.empty())
      sema::fail(sema::err_unsupported_args(api, what + " is not an int or an affine expression of loop variables" +
                                                     (v.non_affine.empty() ? "" : ": " + v.non_affine)));
    tile.position.push_back(v.expr);
  }
  return tile;
}

}  // namespace

void dma_copy_call(py::handle dst, py::handle src, py::handle mask, py::handle rmw_op, bool oob_skip, bool hwdge,
                   std::optional<int64_t> priority) {
  codegen::KernelBuilder& b = builder("nisa.dma_copy");
  Args a(mask, py::none());
  a.op.oob_skip = oob_skip;
  a.op.engine = ir::Engine::dma;
  const std::optional<ir::AluOp> rmw = rmw_op.is_none() ? std::nullopt : std::optional(alu_of(rmw_op.cast<std::string>()));
  codegen::dma_copy(b, tensor_arg(dst, "dst"), to_value(src), rmw, a.op, {hwdge, priority});
}

py::object tensor_tensor_call(py::handle dst, py::handle data1, py::handle data2, ir::AluOp op, py::handle mask,
                              py::handle dtype, int engine) {
  codegen::KernelBuilder& b = builder("");
  Args a(b, dst, mask, dtype);
  types::Value r = codegen::tensor_tensor(b, a.to, op, tensor_arg(data1, "data1"), tensor_arg(data2, "data2"),
                                          ir::engine_from_nki(engine), a.op);
  // Into the caller's dst the call returns nothing (the dispatcher's NkiInstruction): no tile to wrap.
  return a.to.given() ? py::none() : from_value(std::move(r));
}

void bind_ops_api(py::module_& m) {
  m.def("reshape_view", [](py::handle t, std::vector<int64_t> shape) {
    return wrap_tensor(codegen::reshape_view(builder("reshape"), tensor_arg(t, "tensor"), std::move(shape)));
  });
  m.def("dtype_view", [](py::handle t, const std::string& dtype) {
    auto d = ir::dtype_from_name(dtype);
    if (!d) sema::fail(sema::err_unsupported_dtype("'" + dtype + "'"));
    return wrap_tensor(codegen::dtype_view(builder("view"), tensor_arg(t, "tensor"), *d));
  });
  m.def("shared_constant", [](std::vector<int64_t> shape, const std::string& dtype, std::vector<double> values,
                              const std::string& api) {
    codegen::KernelBuilder& b = builder(api);
    auto d = ir::dtype_from_name(dtype);
    if (!d) sema::fail(sema::err_unsupported_dtype("'" + dtype + "'"));
    return wrap_tensor(codegen::shared_constant(b, std::move(shape), *d, std::move(values)));
  });
  m.def("gather_flattened", [](py::handle dst, py::handle data, py::handle indices, py::handle mask, py::handle dtype,
                               const std::string& api) {
    codegen::KernelBuilder& b = builder(api);
    Args a(b, dst, mask, dtype);
    return wrap_tensor(codegen::gather_flattened(b, a.to, tensor_arg(data, "data"), tensor_arg(indices, "indices"), a.op));
  });
  m.def("reciprocal", [](py::handle dst, py::handle data, py::handle mask, py::handle dtype) {
    codegen::KernelBuilder& b = builder("nisa.reciprocal");
    Args a(b, dst, mask, dtype);
    return from_value(codegen::reciprocal(b, a.to, tensor_arg(data, "data"), a.op));
  });
  m.def("atomic_rmw", [](py::handle dst, py::handle value, const std::string& op, py::handle mask) {
    codegen::KernelBuilder& b = builder("nl.atomic_rmw");
    Args a(mask, py::none());
    codegen::atomic_rmw(b, tensor_arg(dst, "dst"), to_value(value), alu_of(op), a.op);
  });
  m.def("dma_copy", &dma_copy_call, py::arg("dst"), py::arg("src"), py::arg("mask"), py::arg("rmw_op"), py::arg("oob_skip"), py::arg("hwdge") = false,
     py::arg("priority") = py::none());
  m.def("assign", [](py::handle dst, py::handle value, py::handle mask, bool accumulate, bool oob_skip) {
    codegen::KernelBuilder& b = builder("nisa.dma_copy");
    Args a(mask, py::none());
    a.op.oob_skip = oob_skip;
    a.op.engine = ir::Engine::dma;
    codegen::assign(b, tensor_arg(dst, "dst"), to_value(value), accumulate, a.op);
  });
  m.def("loop_reduce", [](py::handle dst, py::handle x, const std::string& op, py::list loop_vars, py::handle mask) {
    codegen::KernelBuilder& b = builder("nl.loop_reduce");
    Args a(mask, py::none());
    std::vector<types::IndexVal> ivs;
    for (py::handle h : loop_vars) {
      types::Value lv = to_value(h);
      auto* iv = std::get_if<types::IndexVal>(&lv);
      if (!iv) sema::fail(sema::err_unexpected_type_of_operand("loop_indices", "not a loop variable"));
      ivs.push_back(*iv);
    }
    codegen::loop_reduce(b, tensor_arg(dst, "dst"), tensor_arg(x, "x"), alu_of(op), ivs, a.op);
  });
  m.def("rand", [](std::vector<int64_t> shape, const std::string& dtype, py::handle mask) {
    codegen::KernelBuilder& b = builder("nl.rand");
    Args a(mask, py::str(dtype));
    return wrap_tensor(codegen::rand(b, std::move(shape), *a.op.dtype, a.op));
  });
  m.def("random_seed", [](double seed) { codegen::random_seed(builder("nl.random_seed"), seed); });
  m.def("all_reduce", [](py::handle x, const std::string& op, std::vector<int64_t> axes, py::handle mask,
                         py::handle dtype) {
    codegen::KernelBuilder& b = builder("nl.all_reduce");
    Args a(mask, dtype);
    return wrap_tensor(codegen::all_reduce(b, tensor_arg(x, "x"), alu_of(op), axes, a.op));
  });
  m.def("device_print", [](const std::string& prefix, py::handle x, py::handle mask) {
    codegen::KernelBuilder& b = builder("nl.device_print");
    Args a(mask, py::none());
    codegen::device_print(b, prefix, tensor_arg(x, "x"), a.op);
  });
  m.def("broadcast_view", [](py::handle t, std::vector<int64_t> shape) {
    return wrap_tensor(codegen::broadcast_view(builder("broadcast_to"), tensor_arg(t, "src"), shape));
  });
  m.def("assert_shape", [](py::handle t, std::vector<int64_t> shape) {
    codegen::assert_shape(builder("assert_shape"), tensor_arg(t, "self"), shape);
  });
  m.def("expand_dims_view", [](py::handle t, int64_t axis) {
    return wrap_tensor(codegen::expand_dims_view(builder("expand_dims"), tensor_arg(t, "data"), axis));
  });
  m.def("reduce", [](py::handle dst, const std::string& api, const std::string& op, py::handle x,
                     std::vector<int64_t> axes, bool keepdims, bool negate, py::handle mask, py::handle dtype) {
    codegen::KernelBuilder& b = builder(api);
    Args a(b, dst, mask, dtype);
    return wrap_tensor(codegen::reduce(b, a.to, alu_of(op), tensor_arg(x, "x"), std::move(axes), keepdims, a.op, negate));
  });
  m.def("mean", [](py::handle x, std::vector<int64_t> axes, bool keepdims, py::handle mask, py::handle dtype) {
    Args a(mask, dtype);
    return wrap_tensor(codegen::mean(builder("nl.mean"), tensor_arg(x, "x"), axes, keepdims, a.op));
  });
  m.def("var", [](py::handle x, std::vector<int64_t> axes, py::handle mask, py::handle dtype) {
    Args a(mask, dtype);
    return wrap_tensor(codegen::variance(builder("nl.var"), tensor_arg(x, "x"), axes, a.op));
  });
  m.def("softmax", [](py::handle x, std::vector<int64_t> axes, py::handle compute, py::handle mask, py::handle dtype) {
    Args a(mask, dtype), c(py::none(), compute);
    return wrap_tensor(codegen::softmax(builder("nl.softmax"), tensor_arg(x, "x"), axes, c.op.dtype, a.op));
  });
  m.def("rms_norm", [](py::handle x, py::handle w, std::vector<int64_t> axes, double n, double epsilon,
                       py::handle compute, py::handle mask, py::handle dtype) {
    Args a(mask, dtype), c(py::none(), compute);
    return wrap_tensor(codegen::rms_norm(builder("nl.rms_norm"), tensor_arg(x, "x"), to_value(w), axes, n, epsilon,
                                         c.op.dtype, a.op));
  });
  m.def("partition_reduce", [](py::handle dst, const std::string& op, py::handle data, py::handle mask,
                               py::handle dtype) {
    codegen::KernelBuilder& b = builder("nisa.tensor_partition_reduce");
    Args a(b, dst, mask, dtype);
    const bool average = op == "average" || op == "mean";  // nl.average (0.6), nl.mean (0.7): the add fold, scaled
    return wrap_tensor(codegen::partition_reduce(b, a.to, alu_of(average ? "add" : op), tensor_arg(data, "data"), a.op,
                                                 average ? op : ""));
  });
  m.def("local_gather", [](py::handle dst, py::handle src, py::handle index, int64_t num_elem,
                           std::optional<int64_t> num_valid, py::handle mask) {
    codegen::KernelBuilder& b = builder("nisa.local_gather");
    Args a(b, dst, mask, py::none());
    return wrap_tensor(codegen::local_gather(b, a.to, tensor_arg(src, "src_buffer"), tensor_arg(index, "index"), num_elem,
                                             num_valid, a.op));
  });
  // dst None: a new fp32 PSUM tile; a given dst (PSUM) is written with `accumulate` (None: inferred).
  // tile_position: ints, or affine expressions of loop variables (a start known per iteration).
  m.def("nc_matmul", [](py::handle dst, py::handle stationary, py::handle moving, py::handle mask, bool double_row,
                        bool is_transpose, py::handle tile_position, py::handle tile_size, std::optional<bool> accumulate) {
    constexpr const char* api = "nisa.nc_matmul";
    codegen::KernelBuilder& b = builder(api);
    Args a(b, dst, mask, py::none());
    return wrap_tensor(codegen::nisa_nc_matmul(b, a.to, tensor_arg(stationary, "stationary"),
                                               tensor_arg(moving, "moving"), a.op, double_row, is_transpose,
                                               pe_tile_arg(tile_position, tile_size, api), accumulate));
  });
  m.def("engine_accumulator", [] { return wrap_tensor(builder("").engine_accumulator()); });
  m.def("check_operand", [](py::handle t, const std::string& operand) {
    builder("").check_operand(operand.c_str(), tensor_arg(t, operand.c_str()));
  });
  m.def(
      "tile_sizes",
      [](bool current_api, bool dma_transpose_as_pe, const std::string& target) {
        // The traced kernel's target; outside a trace `target` when nkic knows it, else the default.
        trace::TraceContext* c = trace::TraceContext::current();
        const sema::Target* named = sema::find_target(target);
        const sema::Target& t = c ? c->target() : named ? *named : sema::default_target();
        py::dict out;
        for (const auto& [name, value] : sema::tile_sizes(t, {current_api, dma_transpose_as_pe}))
          out[name.c_str()] = value;
        return out;
      },
      py::arg("current_api") = false, py::arg("dma_transpose_as_pe") = false, py::arg("target") = "");
  m.def("tensor_copy_dynamic_src", [](py::handle src, py::handle mask, py::handle dtype) {
    codegen::KernelBuilder& b = builder("nisa.tensor_copy_dynamic_src");
    Args a(mask, dtype);
    return wrap_tensor(codegen::tensor_copy_dynamic_src(b, tensor_arg(src, "src"), a.op));
  });
  m.def("tensor_copy_dynamic_dst", [](py::handle dst, py::handle src, py::handle mask) {
    codegen::KernelBuilder& b = builder("nisa.tensor_copy_dynamic_dst");
    Args a(mask, py::none());
    codegen::tensor_copy_dynamic_dst(b, tensor_arg(dst, "dst"), tensor_arg(src, "src"), a.op);
  });
  m.def("quantize_mx", [](py::handle dst, py::handle src, py::handle dst_scale) {
    codegen::KernelBuilder& b = builder("nisa.quantize_mx");
    codegen::quantize_mx(b, tensor_arg(dst, "dst"), tensor_arg(src, "src"), tensor_arg(dst_scale, "dst_scale"));
  });
  m.def("nc_matmul_mx", [](py::handle dst, py::handle stationary, py::handle moving, py::handle stationary_scale,
                           py::handle moving_scale, std::optional<bool> accumulate, py::handle tile_position,
                           py::handle tile_size) {
    constexpr const char* api = "nisa.nc_matmul_mx";
    codegen::KernelBuilder& b = builder(api);
    codegen::nc_matmul_mx(b, tensor_arg(dst, "dst"), tensor_arg(stationary, "stationary"), tensor_arg(moving, "moving"),
                          tensor_arg(stationary_scale, "stationary_scale"), tensor_arg(moving_scale, "moving_scale"),
                          accumulate, pe_tile_arg(tile_position, tile_size, api));
  });
  m.def("matmul", [](py::handle x, py::handle y, bool transpose_x, py::handle mask) {
    codegen::KernelBuilder& b = builder("nl.matmul");
    Args a(mask, py::none());
    return wrap_tensor(codegen::matmul(b, tensor_arg(x, "x"), tensor_arg(y, "y"), transpose_x, a.op));
  });
  m.def("transpose", [](const std::string& api, py::handle x, py::handle mask, py::handle dtype) {
    codegen::KernelBuilder& b = builder(api);
    Args a(mask, dtype);
    return wrap_tensor(codegen::transpose(b, a.to, tensor_arg(x, "x"), a.op));
  });
  m.def("check_bn_stats", [](py::handle data, py::handle mask) {
    codegen::KernelBuilder& b = builder("nisa.bn_stats");
    Args a(mask, py::none());
    codegen::check_bn_stats(b, tensor_arg(data, "data"), a.op);
  });
  // A data that is no tile is the call's argument at fault (err_unsupported_args naming it), as before
  // the flattening moved here.
  m.def("nc_transpose", [](py::handle dst, const PyTensor& data, py::handle mask, py::handle dtype, int engine) {
    codegen::KernelBuilder& b = builder("nisa.nc_transpose");
    Args a(b, dst, mask, dtype);
    return wrap_tensor(codegen::nc_transpose(b, a.to, data.v, ir::engine_from_nki(engine), a.op));
  });
  m.def("iota", [](py::handle expr, const std::string& dtype, py::handle mask) {
    codegen::KernelBuilder& b = builder("nisa.iota");
    Args a(mask, py::str(dtype));
    types::Value v = to_value(expr);
    types::IndexVal idx;
    if (auto* i = std::get_if<types::IndexVal>(&v)) idx = *i;
    else if (auto* o = std::get_if<types::Other>(&v); o && o->is_int) idx.expr = ir::AffineExpr(static_cast<int64_t>(o->value));
    else
      sema::fail(sema::err_unexpected_type_of_operand(
          "expr", py_type_name(expr) + " where an index expression of nl.arange values (or an int) is expected"));
    if (!idx.non_affine.empty()) sema::fail(sema::err_non_affine_index_expression(idx.non_affine));
    return wrap_tensor(codegen::iota(b, codegen::Dst::fresh(), idx, *a.op.dtype, a.op));
  });
  m.def("affine_select", [](py::handle pred, py::handle on_true, double on_false, py::handle mask, py::handle dtype) {
    codegen::KernelBuilder& b = builder("nisa.affine_select");
    Args a(mask, dtype);
    types::Value p = to_value(pred);
    auto* mp = std::get_if<types::MaskVal>(&p);
    if (!mp) sema::fail(sema::err_unsupported_expression_in_mask("pred must be an affine comparison of index values"));
    if (mp->dnf.size() == 1 && mp->dnf[0].size() > 1)
      sema::fail(sema::err_unsupported_expression_in_mask(
          "affine_select takes a single comparison; combine conditions with nl.where instead of '&'"));
    return wrap_tensor(codegen::affine_select(b, a.to, *mp, tensor_arg(on_true, "on_true_tile"), on_false, a.op));
  });
  m.def("where", [](py::handle cond, py::handle x, py::handle y, py::handle mask, py::handle dtype) {
    codegen::KernelBuilder& b = builder("nl.where");
    Args a(mask, dtype);
    return wrap_tensor(codegen::where(b, tensor_arg(cond, "condition"), to_value(x), to_value(y), a.op));
  });
  // The ISA instructions with several ALU stages or a per-partition walk: one IR
  // instruction each (the API in flight names them in diagnostics).
  m.def("tensor_tensor", [](py::handle dst, py::handle data1, py::handle data2, const std::string& op, py::handle mask,
                            py::handle dtype, int engine) {
    return tensor_tensor_call(dst, data1, data2, alu_of(op), mask, dtype, engine);
  });
  m.def("scalar_tensor_tensor", [](py::handle dst, py::handle data, py::handle op0, py::handle operand0, bool reverse0,
                                   py::handle op1, py::handle operand1, bool reverse1, py::handle mask,
                                   py::handle dtype) {
    codegen::KernelBuilder& b = builder("");
    Args a(b, dst, mask, dtype);
    return wrap_tensor(codegen::scalar_tensor_tensor(b, a.to, tensor_arg(data, "data"), step_of(op0, operand0, reverse0),
                                                     step_of(op1, operand1, reverse1), a.op));
  });
  m.def("tensor_copy", [](py::handle dst, py::handle src, py::handle mask, py::handle dtype, int engine) {
    codegen::KernelBuilder& b = builder("");
    Args a(b, dst, mask, dtype);
    return wrap_tensor(codegen::tensor_copy(b, a.to, tensor_arg(src, "data"), ir::engine_from_nki(engine), a.op));
  });
  m.def("tensor_copy_predicated", [](py::handle dst, py::handle src, py::handle predicate, bool reverse_pred,
                                     py::handle mask) {
    codegen::KernelBuilder& b = builder("");
    Args a(mask, py::none());
    codegen::tensor_copy_predicated(b, tensor_arg(dst, "dst"), to_value(src), tensor_arg(predicate, "predicate"),
                                    reverse_pred, a.op);
  });
  m.def("dropout", [](py::handle dst, py::handle x, py::handle rate, py::handle mask, py::handle dtype) {
    codegen::KernelBuilder& b = builder("");
    Args a(b, dst, mask, dtype);
    return wrap_tensor(codegen::dropout(b, a.to, tensor_arg(x, "data"), to_value(rate), a.op));
  });
  m.def("nc_stream_shuffle", [](py::handle src, py::handle dst, std::vector<int64_t> shuffle_mask) {
    codegen::KernelBuilder& b = builder("");
    codegen::nc_stream_shuffle(b, tensor_arg(dst, "dst"), tensor_arg(src, "src"), shuffle_mask);
  });
  m.def("activation", [](py::handle dst, const std::string& op, py::handle data, py::handle bias, py::handle scale,
                         py::handle reduce_op, py::handle reduce_res, int reduce_cmd, py::handle mask, py::handle dtype) {
    codegen::KernelBuilder& b = builder("");
    Args a(b, dst, mask, dtype);
    if (!py::isinstance<PyTensor>(scale) && !PyNumber_Check(scale.ptr()))
      b.fail(sema::err_activation_scale_invalid_type(py_type_name(scale)));
    std::optional<types::TensorVal> res_slot;
    codegen::Accumulate acc = accumulate_of(reduce_op, reduce_res, reduce_cmd, res_slot);
    const std::optional<types::Value> bv = bias.is_none() ? std::nullopt : std::optional(to_value(bias));
    return wrap_tensor(codegen::activation(b, a.to, alu_of(op), tensor_arg(data, "data"), bv, to_value(scale), acc, a.op));
  });
  m.def("tensor_scalar", [](py::handle dst, py::handle data, py::list steps, py::handle reduce_op, py::handle reduce_res,
                            int reduce_cmd, py::handle mask, py::handle dtype, int engine) {
    codegen::KernelBuilder& b = builder("");
    Args a(b, dst, mask, dtype);
    a.op.engine = ir::engine_from_nki(engine);
    std::optional<types::TensorVal> res_slot;
    codegen::Accumulate acc = accumulate_of(reduce_op, reduce_res, reduce_cmd, res_slot);
    return wrap_tensor(codegen::tensor_scalar(b, a.to, tensor_arg(data, "data"), steps_of(steps), acc, a.op));
  });
  m.def("select_reduce", [](py::handle dst, py::handle predicate, py::handle on_true, py::handle on_false,
                            bool reverse_pred, py::handle reduce_op, py::handle reduce_res, int reduce_cmd,
                            py::handle mask) {
    codegen::KernelBuilder& b = builder("");
    Args a(mask, py::none());
    std::optional<types::TensorVal> res_slot;
    codegen::Accumulate acc = accumulate_of(reduce_op, reduce_res, reduce_cmd, res_slot);
    if (acc.cmd != ir::AccCmd::none && reduce_op.is_none())
      b.fail(sema::err_operand_cannot_be_none("reduce_op"));
    codegen::select_reduce(b, tensor_arg(dst, "dst"), tensor_arg(predicate, "predicate"), tensor_arg(on_true, "on_true"),
                           to_value(on_false), reverse_pred, acc, a.op);
  });
  m.def("range_select", [](py::handle dst, py::handle on_true, py::handle comp_op0, py::handle comp_op1,
                           py::handle bound0, py::handle bound1, py::handle reduce_op, py::handle reduce_res,
                           int reduce_cmd, int64_t range_start, py::handle on_false, py::handle mask,
                           py::handle dtype) {
    codegen::KernelBuilder& b = builder("");
    Args a(b, dst, mask, dtype);
    const types::Value fill = to_value(on_false);
    const auto* number = std::get_if<types::Other>(&fill);
    if (!number || !number->numeric) codegen::reject_operand(b, "on_false_value", fill);
    std::optional<types::TensorVal> res_slot;
    codegen::Accumulate acc = accumulate_of(reduce_op, reduce_res, reduce_cmd, res_slot);
    if (acc.cmd != ir::AccCmd::none && reduce_op.is_none()) b.fail(sema::err_operand_cannot_be_none("reduce_op"));
    return wrap_tensor(codegen::range_select(b, a.to, tensor_arg(on_true, "on_true_tile"), step_of(comp_op0, bound0, false),
                                             step_of(comp_op1, bound1, false), range_start, number->value, acc, a.op));
  });
  m.def("tensor_tensor_scan", [](py::handle dst, py::handle data0, py::handle data1, py::handle initial,
                                 py::handle op0, py::handle op1, bool reverse0, bool reverse1, py::handle mask,
                                 py::handle dtype) {
    codegen::KernelBuilder& b = builder("");
    Args a(b, dst, mask, dtype);
    return wrap_tensor(codegen::tensor_tensor_scan(b, a.to, tensor_arg(data0, "data0"), tensor_arg(data1, "data1"),
                                                   to_value(initial), step_of(op0, py::none(), reverse0),
                                                   step_of(op1, py::none(), reverse1), a.op));
  });
  m.def("bn_stats", [](py::handle dst, py::handle data, py::handle mask, py::handle dtype) {
    codegen::KernelBuilder& b = builder("");
    Args a(b, dst, mask, dtype);
    return wrap_tensor(codegen::bn_stats(b, a.to, tensor_arg(data, "data"), a.op));
  });
  m.def("bn_aggr", [](py::handle dst, py::handle data, py::handle mask, py::handle dtype) {
    codegen::KernelBuilder& b = builder("");
    Args a(b, dst, mask, dtype);
    return wrap_tensor(codegen::bn_aggr(b, a.to, tensor_arg(data, "data"), a.op));
  });
  m.def("sequence_bounds", [](py::handle dst, py::handle ids, py::handle dtype) {
    codegen::KernelBuilder& b = builder("");
    Args a(b, dst, py::none(), dtype);
    return wrap_tensor(codegen::sequence_bounds(b, a.to, tensor_arg(ids, "segment_ids"), a.op));
  });
  m.def("max8", [](py::handle dst, py::handle src, py::handle mask, py::handle dtype) {
    codegen::KernelBuilder& b = builder("");
    Args a(b, dst, mask, dtype);
    return wrap_tensor(codegen::max8(b, a.to, tensor_arg(src, "src"), a.op));
  });
  m.def("find_index8", [](py::handle dst, py::handle data, py::handle vals, py::handle mask, py::handle dtype) {
    codegen::KernelBuilder& b = builder("");
    Args a(b, dst, mask, dtype);
    return wrap_tensor(codegen::find_index8(b, a.to, tensor_arg(data, "data"), tensor_arg(vals, "vals"), a.op));
  });
  m.def("match_replace8", [](py::handle dst, py::handle data, py::handle vals, double imm, py::handle dst_idx,
                             py::handle mask, py::handle dtype) {
    codegen::KernelBuilder& b = builder("");
    Args a(b, dst, mask, dtype);
    std::optional<types::TensorVal> idx;
    return wrap_tensor(codegen::match_replace8(b, a.to, tensor_arg(data, "data"), tensor_arg(vals, "vals"), imm,
                                               optional_tensor(dst_idx, "dst_idx", idx), a.op));
  });
}

}  // namespace nkic::py_bind
