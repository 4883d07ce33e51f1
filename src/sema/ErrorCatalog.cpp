#include "sema/ErrorCatalog.h"

namespace nkic::sema {

namespace {
Diagnostic make(std::string code, std::string msg, ErrorKind kind = ErrorKind::Syntax,
                std::string hint = "") {
  Diagnostic d;
  d.code = std::move(code);
  d.message = std::move(msg);
  d.kind = kind;
  d.hint = std::move(hint);
  return d;
}
std::string s(std::string_view v) { return std::string(v); }
// The documented messages name the bare API ('load', not 'nl.load').
std::string_view bare_api(std::string_view api) {
  size_t dot = api.find('.');
  return dot == std::string_view::npos ? api : api.substr(dot + 1);
}
}  // namespace

std::string shape_str(const std::vector<int64_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

Diagnostic err_nki_api_outside_of_nki_kernel(std::string_view api) {
  return make("err_nki_api_outside_of_nki_kernel",
              "'" + s(api) + "' can only be called inside an NKI kernel that is being traced",
              ErrorKind::Runtime,
              "decorate the function with @nki.jit and call it with numpy arrays, or run it "
              "through nki.simulate_kernel");
}

Diagnostic err_dynamic_control_flow_not_supported(std::string_view what, std::string_view origin) {
  return make("err_dynamic_control_flow_not_supported",
              "dynamic control-flow depending on tensor value is not supported: the condition is " +
                  s(what) + ", whose value " + s(origin) + " is only known on the device",
              ErrorKind::Syntax,
              "NKI traces the kernel once and evaluates Python `if`/`while` at trace time; select "
              "values with nl.where or nisa.affine_select, restrict work with mask=, or pass the "
              "deciding value as a static (Python) kernel argument");
}

Diagnostic err_control_flow_condition_depending_on_arange() {
  return make("err_control_flow_condition_depending_on_arange",
              "Control-flow depending on `nl.arange` or `nl.mgrid` is not supported: a comparison "
              "of index values is a mask over the tile, not a Python bool",
              ErrorKind::Syntax,
              "pass the comparison as mask= to the instruction (e.g. nl.add(a, b, mask=j > 2048))");
}

Diagnostic err_ambiguous_tensor_truth_value(std::string_view what) {
  return make("err_ambiguous_tensor_truth_value",
              "Cannot evaluate truth value of a multi-element tensor/array (" + s(what) + ")",
              ErrorKind::Value,
              "combine tensors elementwise with &, | and ~, compare explicitly, or test `is None`");
}

Diagnostic err_1d_arange_not_supported(std::string_view tensor) {
  return make("err_1d_arange_not_supported",
              "indexing tensor `" + s(tensor) + "` with 1d arange is not supported",
              ErrorKind::Syntax,
              "give the index a partition or free axis: nl.arange(n)[:, None] or nl.arange(n)[None, :]");
}

Diagnostic err_unsupported_mixing_basic_advanced_tensor_indexing(std::string_view tensor) {
  return make("err_unsupported_mixing_basic_advanced_tensor_indexing",
              "mixing basic tensor indexing (slices) and advanced tensor indexing (nl.arange / "
              "nl.mgrid) is not supported when indexing `" + s(tensor) + "`",
              ErrorKind::Syntax, "use nl.arange for every dimension, or slices for every dimension");
}

Diagnostic err_tensor_access_out_of_bound(std::string_view tensor, int dim, int64_t lo, int64_t hi,
                                          int64_t size) {
  return make("err_tensor_access_out_of_bound",
              "Out-of-bound access for tensor `" + s(tensor) + "` on dimension " +
                  std::to_string(dim) + ": index range [" + std::to_string(lo) + ", " +
                  std::to_string(hi) + "] exceed dimension size of " + std::to_string(size),
              ErrorKind::Index, "restrict the access with mask= (e.g. mask=(i_p < n))");
}

Diagnostic err_num_partition_exceed_arch_limit(int64_t par, int64_t limit) {
  return make("err_num_partition_exceed_arch_limit",
              "number of partitions " + std::to_string(par) +
                  " exceed architecture limitation of " + std::to_string(limit) + ".",
              ErrorKind::Syntax, "tile the partition dimension in chunks of nl.tile_size.pmax");
}

Diagnostic err_num_partition_mismatch(std::string_view a, std::string_view b, std::string_view api) {
  return make("err_num_partition_mismatch",
              "number of partitions (dimension 0 size of a tile) mismatch in parameters (" + s(a) +
                  ", " + s(b) + ") of '" + s(api) + "'");
}

Diagnostic err_unsupported_memory(std::string_view operand, std::string_view api,
                                  std::string_view expected, std::string_view actual) {
  // The documented wording names the bare API ('load', not 'nl.load').
  return make("err_unsupported_memory",
              "Expected operand '" + s(operand) + "' of '" + s(bare_api(api)) + "' to be in address space '" +
                  s(expected) + "', but got a tile in '" + s(actual) + "' instead.");
}

Diagnostic err_cannot_update_immutable_parameter(std::string_view tensor) {
  return make("err_cannot_update_immutable_parameter",
              "Cannot update immutable parameter '" + s(tensor) + "'", ErrorKind::Syntax,
              "copy the input into a new tensor, or annotate the parameter as nt.mutable_tensor and "
              "return it");
}

Diagnostic err_tensor_output_not_written_to(std::string_view tensor) {
  return make("err_tensor_output_not_written_to",
              "kernel output '" + s(tensor) + "' is never written to", ErrorKind::Syntax,
              "store into every returned tensor (nl.store / nisa.dma_copy) on every path");
}

Diagnostic err_shared_hbm_must_in_kernel_level() {
  return make("err_shared_hbm_must_in_kernel_level",
              "shared_hbm buffer can only be created top level kernel scope", ErrorKind::Syntax,
              "create the output with nl.ndarray(..., buffer=nl.shared_hbm) at the top of the "
              "kernel body and pass it into loops and helpers");
}

Diagnostic err_local_variable_used_out_of_scope(std::string_view tensor) {
  return make("err_local_variable_used_out_of_scope",
              "Local variable '" + s(tensor) +
                  "' is referenced outside of its parent scope (loop, if or else block)",
              ErrorKind::Syntax,
              "declare the tensor before the block and update it in place with t[...] = ...");
}

Diagnostic err_store_dst_shape_smaller_than_other_shape(std::string_view dst, std::string_view src) {
  return make("err_store_dst_shape_smaller_than_other_shape",
              "Illegal assignment destination shape: shape of parameter " + s(dst) +
                  " is smaller than other parameter shapes " + s(src));
}

Diagnostic err_param_shape_incompatible_with_numpy(std::string_view a, std::string_view b) {
  return make("err_param_shape_incompatible_with_numpy",
              "operands could not be broadcast together with shapes " + s(a) + " " + s(b),
              ErrorKind::Value);
}

Diagnostic err_unsupported_expression_in_mask(std::string_view why) {
  return make("err_unsupported_expression_in_mask",
              "NKI mask expressions must be affine expressions of static loop indices: " + s(why),
              ErrorKind::Syntax,
              "write the mask as comparisons of nl.arange / loop / program_id expressions combined "
              "with &");
}

Diagnostic err_non_affine_index_expression(std::string_view what) {
  return make("err_non_affine_index_expression",
              "index expression is not affine: " + s(what), ErrorKind::Type,
              "index expressions may add, subtract and multiply by Python integers");
}

Diagnostic err_unexpected_type_of_operand(std::string_view operand, std::string_view got) {
  return make("err_unexpected_type_of_operand",
              "unexpected type of operand '" + s(operand) + "': got " + s(got), ErrorKind::Type);
}

Diagnostic err_program_id_axis_out_of_bounds(int64_t axis, int64_t ndim) {
  return make("err_program_id_axis_out_of_bounds",
              "program_id axis " + std::to_string(axis) + " is out of bounds for a launch grid of " +
                  std::to_string(ndim) + " dimension(s)",
              ErrorKind::Index, "launch the kernel with a grid, e.g. kernel[2, 4](...)");
}

Diagnostic err_unsupported_dtype(std::string_view what) {
  return make("err_unsupported_dtype", "unsupported dtype " + s(what), ErrorKind::Type);
}

Diagnostic err_return_from_top_level() {
  Diagnostic d = make("", "Returning value from top level nki kernel is not supported",
                      ErrorKind::Syntax,
                      "return only shared_hbm tensors (or a tuple of them) created with "
                      "nl.ndarray(..., buffer=nl.shared_hbm)");
  return d;
}

Diagnostic err_annotation_shape_mismatch(std::string_view tensor, const std::vector<int64_t>& shape,
                                         const std::vector<int64_t>& expected) {
  return make("err_annotation_shape_mismatch",
              "shape of `" + s(tensor) + shape_str(shape) + "` does not match the expected shape of " +
                  shape_str(expected));
}

Diagnostic err_mutable_parameter_not_returned(std::string_view tensor) {
  return make("err_mutable_parameter_not_returned",
              "Mutable kernel parameter not returned by `return` statement: '" + s(tensor) +
                  "' is written by the kernel",
              ErrorKind::Syntax, "return the mutable parameter, e.g. `return " + s(tensor) + "`");
}

Diagnostic err_nested_kernel_with_spmd_grid() {
  return make("err_nested_kernel_with_spmd_grid",
              "a kernel cannot launch another kernel with an SPMD grid", ErrorKind::Syntax,
              "call the nested kernel without a grid; it is traced into the calling kernel");
}

Diagnostic err_size_of_dimension_exceed_arch_limit(int dim, std::string_view operand, std::string_view api,
                                                   int64_t limit) {
  return make("err_size_of_dimension_exceed_arch_limit",
              "size of dimension " + std::to_string(dim) + " in '" + s(operand) + "' of '" + s(bare_api(api)) +
                  "' exceed architecture limitation of " + std::to_string(limit));
}

Diagnostic err_exceed_max_supported_dimension(std::string_view operand, std::string_view api, int64_t max_dims) {
  return make("err_exceed_max_supported_dimension",
              "parameter '" + s(operand) + "' of '" + s(bare_api(api)) +
                  "' exceed max supported number of dimensions of " + std::to_string(max_dims));
}

}  // namespace nkic::sema
