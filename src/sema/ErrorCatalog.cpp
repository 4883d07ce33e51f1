#include "sema/ErrorCatalog.h"

#include <cstdio>

#include "sema/CatalogMake.h"

namespace nkic::sema {

namespace {
using catalog::make;
using catalog::s;
// The documented messages name the bare API ('load', not 'nl.load').
std::string_view bare_api(std::string_view api) {
  size_t dot = api.find('.');
  return dot == std::string_view::npos ? api : api.substr(dot + 1);
}
// An elementwise API of two data operands, whose [P, 1] operand belongs in nisa.tensor_scalar.
bool two_operand_elementwise(std::string_view api) {
  std::string_view op = bare_api(api);
  for (std::string_view name : {"tensor_tensor", "add", "subtract", "multiply", "divide", "maximum", "minimum",
                                "power", "equal", "not_equal", "greater", "greater_equal", "less", "less_equal"})
    if (op == name) return true;
  return false;
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
              ErrorKind::Runtime);
}

Diagnostic err_dynamic_control_flow_not_supported(std::string_view what) {
  return make("err_dynamic_control_flow_not_supported",
              "dynamic control-flow depending on tensor value is not supported: the condition is " + s(what) +
                  ", which is only known when the kernel runs on the device",
              ErrorKind::Syntax);
}

Diagnostic err_control_flow_condition_depending_on_arange() {
  return make("err_control_flow_condition_depending_on_arange",
              "Control-flow depending on `nl.arange` or `nl.mgrid` is not supported: a comparison "
              "of index values is a mask over the tile, not a Python bool",
              ErrorKind::Syntax);
}

Diagnostic err_ambiguous_tensor_truth_value(std::string_view what) {
  return make("err_ambiguous_tensor_truth_value",
              "Cannot evaluate truth value of a multi-element tensor/array (" + s(what) + ")", ErrorKind::Value);
}

Diagnostic err_1d_arange_not_supported(std::string_view tensor) {
  return make("err_1d_arange_not_supported",
              "indexing tensor `" + s(tensor) + "` with 1d arange is not supported",
              ErrorKind::Syntax);
}

Diagnostic err_unsupported_mixing_basic_advanced_tensor_indexing(std::string_view tensor) {
  return make("err_unsupported_mixing_basic_advanced_tensor_indexing",
              "mixing basic tensor indexing (slices) and advanced tensor indexing (nl.arange / "
              "nl.mgrid) is not supported when indexing `" + s(tensor) + "`",
              ErrorKind::Syntax);
}

Diagnostic err_tensor_access_out_of_bound(std::string_view tensor, int dim, int64_t lo, int64_t hi,
                                          int64_t size) {
  return make("err_tensor_access_out_of_bound",
              "Out-of-bound access for tensor `" + s(tensor) + "` on dimension " +
                  std::to_string(dim) + ": index range [" + std::to_string(lo) + ", " +
                  std::to_string(hi) + "] exceed dimension size of " + std::to_string(size),
              ErrorKind::Index);
}

Diagnostic err_num_partition_exceed_arch_limit(int64_t par, int64_t limit) {
  return make("err_num_partition_exceed_arch_limit",
              "number of partitions " + std::to_string(par) +
                  " exceed architecture limitation of " + std::to_string(limit) + ".", ErrorKind::Syntax);
}

Diagnostic err_num_partition_mismatch(std::string_view a, std::string_view b, std::string_view api) {
  return make("err_num_partition_mismatch",
              "number of partitions (dimension 0 size of a tile) mismatch in parameters (" + s(a) +
                  ", " + s(b) + ") of '" + s(bare_api(api)) + "'");
}

Diagnostic err_param_shape_incompatible_with_matmul(std::string_view why, std::string_view stationary,
                                                   std::string_view moving, std::string_view api) {
  return make("err_param_shape_incompatible_with_matmul",
              s(why) + ": parameters (" + s(stationary) + ", " + s(moving) + ") of '" + s(bare_api(api)) +
                  "' are incompatible with a matmul", ErrorKind::Syntax);
}

Diagnostic err_unsupported_memory(std::string_view operand, std::string_view api,
                                  std::string_view expected, std::string_view actual) {
  // The documented wording names the bare API ('load', not 'nl.load').
  const bool dma_from_psum = actual == "psum" && bare_api(api).find("dma") != std::string_view::npos;
  return make("err_unsupported_memory",
              "Expected operand '" + s(operand) + "' of '" + s(bare_api(api)) + "' to be in address space '" +
                  s(expected) + "', but got a tile in '" + s(actual) + "' instead.",
              ErrorKind::Syntax,
              dma_from_psum ? "DMA does not reach PSUM: copy the tile to SBUF first with nisa.tensor_copy, then "
                              "move the SBUF tile"
                            : "");
}

Diagnostic err_cannot_update_immutable_parameter(std::string_view tensor) {
  return make("err_cannot_update_immutable_parameter",
              "Cannot update immutable parameter '" + s(tensor) + "'", ErrorKind::Syntax);
}

Diagnostic err_tensor_output_not_written_to(std::string_view tensor) {
  return make("err_tensor_output_not_written_to",
              "kernel output '" + s(tensor) + "' is never written to", ErrorKind::Syntax,
              "store into every returned tensor (nl.store / nisa.dma_copy) on every path");
}

Diagnostic err_shared_hbm_must_in_kernel_level() {
  return make("err_shared_hbm_must_in_kernel_level",
              "shared_hbm buffer can only be created top level kernel scope", ErrorKind::Syntax);
}

Diagnostic err_local_variable_used_out_of_scope(std::string_view tensor) {
  return make("err_local_variable_used_out_of_scope",
              "Local variable '" + s(tensor) +
                  "' is referenced outside of its parent scope (loop, if or else block)",
              ErrorKind::Syntax,
              "declare the tensor before the block and update it in place with t[...] = ...");
}

Diagnostic err_assert_shape_mismatch(const std::vector<int64_t>& shape, const std::vector<int64_t>& expected) {
  return make("err_annotation_shape_mismatch",
              "tensor shape " + shape_str(shape) + " does not match the expected shape " + shape_str(expected),
              ErrorKind::Assertion);
}

Diagnostic err_tensor_of_another_trace(std::string_view made_in, std::string_view kernel) {
  return make("err_local_variable_used_out_of_scope",
              "this tensor was made by an earlier trace (of kernel '" + s(made_in) + "') and is used while tracing '" +
                  s(kernel) + "': a tensor lives only in the trace that makes it",
              ErrorKind::Syntax, "pass it to the kernel as an argument, or make it in this kernel");
}

Diagnostic err_store_dst_shape_smaller_than_other_shape(const std::vector<int64_t>& dst,
                                                        const std::vector<int64_t>& src) {
  // The documented template names the destination 'a' and the value 'b'.
  return make("err_store_dst_shape_smaller_than_other_shape",
              "Illegal assignment destination shape in 'a = b': shape " + shape_str(dst) +
                  " of parameter 'a' is smaller than other parameter shapes b" + shape_str(src), ErrorKind::Syntax);
}

Diagnostic err_param_shape_incompatible_with_numpy(std::string_view a, std::string_view b) {
  return make("err_param_shape_incompatible_with_numpy",
              "operands could not be broadcast together with shapes " + s(a) + " " + s(b),
              ErrorKind::Value);
}

Diagnostic err_unsupported_expression_in_mask(std::string_view why) {
  return make("err_unsupported_expression_in_mask",
              "NKI mask expressions must be affine expressions of static loop indices: " + s(why),
              ErrorKind::Syntax);
}

Diagnostic err_non_affine_index_expression(std::string_view what) {
  return make("err_non_affine_index_expression",
              "index expression is not affine: " + s(what), ErrorKind::Type);
}

Diagnostic err_unexpected_type_of_operand(std::string_view operand, std::string_view got) {
  return make("err_unexpected_type_of_operand",
              "unexpected type of operand '" + s(operand) + "': got " + s(got), ErrorKind::Type);
}

Diagnostic err_program_id_axis_out_of_bounds(int64_t axis, int64_t ndim) {
  return make("err_program_id_axis_out_of_bounds",
              "program_id axis " + std::to_string(axis) + " is out of bounds for a launch grid of " +
                  std::to_string(ndim) + " dimension(s)",
              ErrorKind::Index);
}

Diagnostic err_unsupported_dtype(std::string_view what) {
  return make("err_unsupported_dtype", "unsupported dtype " + s(what), ErrorKind::Type);
}

Diagnostic err_return_from_top_level() {
  return make("", "Returning value from top level nki kernel is not supported", ErrorKind::Syntax,
              "return only HBM tensors (or a tuple of them), e.g. created with nl.ndarray(..., buffer=nl.shared_hbm)");
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

Diagnostic err_kernel_has_no_output() {
  return make("err_tensor_output_not_written_to", "the kernel has no output: it returns no tensor", ErrorKind::Syntax,
              "create the output with nl.ndarray(..., buffer=nl.shared_hbm), store into it and return it");
}

Diagnostic err_nested_kernel_with_spmd_grid() {
  return make("err_nested_kernel_with_spmd_grid",
              "a kernel cannot launch another kernel with an SPMD grid", ErrorKind::Syntax);
}

Diagnostic err_size_of_dimension_exceed_arch_limit(int dim, std::string_view operand, std::string_view api,
                                                   int64_t limit) {
  const bool matmul = api.find("matmul") != std::string_view::npos;
  return make("err_size_of_dimension_exceed_arch_limit",
              "size of dimension " + std::to_string(dim) + " in '" + s(operand) + "' of '" + s(bare_api(api)) +
                  "' exceed architecture limitation of " + std::to_string(limit),
              ErrorKind::Syntax,
              matmul ? "split the matmul into tiles of at most " + std::to_string(limit) +
                           " along this dimension and loop over them, accumulating the products in PSUM"
                     : "split the dimension into tiles of at most " + std::to_string(limit) + " and loop over them");
}

Diagnostic err_exceed_max_supported_dimension(std::string_view operand, std::string_view api, int64_t max_dims) {
  return make("err_exceed_max_supported_dimension",
              "parameter '" + s(operand) + "' of '" + s(bare_api(api)) +
                  "' exceed max supported number of dimensions of " + std::to_string(max_dims));
}

Diagnostic err_tile_index_add_non_integer_scalar(std::string_view got, std::string_view op) {
  return make("err_tile_index_add_non_integer_scalar",
              "index expressions only combine with integers, got " + s(got) + " in '" + s(op) + "'",
              ErrorKind::Type);
}

Diagnostic err_unsupported_index(std::string_view message) {
  return make("err_unsupported_index", s(message), ErrorKind::Index);
}

Diagnostic err_symbolic_value_used_as_python_int() {
  return make("err_symbolic_value_used_as_python_int",
              "a symbolic index value cannot be used where Python needs an int (list index, range(), int()): "
              "its value is only known when the loop runs on the device",
              ErrorKind::Type);
}

Diagnostic err_cannot_assign_to_index(std::string_view what) {
  return make("err_cannot_assign_to_index", "'" + s(what) + "' tensor does not support item assignment",
              ErrorKind::Type);
}

Diagnostic err_comparison_precedence() {
  return make("err_comparison_precedence",
              "'&' and '|' bind tighter than comparisons: `a < b & c < d` is parsed as `a < (b & c) < d`",
              ErrorKind::Syntax);
}

Diagnostic err_break_in_deferred_loop(std::string_view statement) {
  return make("err_break_in_deferred_loop",
              "'" + s(statement) + "' inside an nl.affine_range / nl.sequential_range loop: the body is traced "
              "once as one loop axis, so it cannot be left early",
              ErrorKind::Syntax);
}

Diagnostic err_return_in_predicated_branch() {
  return make("err_return_in_predicated_branch",
              "'return' inside an `if` on a loop variable: both branches are traced, each predicated, so the "
              "function cannot return from one of them", ErrorKind::Syntax);
}

Diagnostic err_invalid_range_args(std::string_view message, ErrorKind kind) {
  return make("err_invalid_range_args", s(message), kind);
}

Diagnostic err_incorrect_target_type(std::string_view name) {
  return make("err_incorrect_target_type", "unknown platform_target '" + s(name) + "'", ErrorKind::Value);
}

Diagnostic err_invalid_shape(const std::vector<int64_t>& shape) {
  return make("err_invalid_shape", "tensor shape " + shape_str(shape) + " has a non-positive dimension",
              ErrorKind::Value);
}

Diagnostic err_invalid_shape(std::string_view why) {
  return make("err_invalid_shape", "invalid tensor shape: " + s(why), ErrorKind::Value);
}

Diagnostic err_hbm_tensor_with_init_value_not_supported() {
  return make("err_hbm_tensor_with_init_value_not_supported", "HBM tensors cannot be created with an initial value",
              ErrorKind::Syntax);
}

Diagnostic err_unsupported_buffer(std::string_view name) {
  return make("err_unsupported_buffer", "unknown buffer '" + s(name) + "'", ErrorKind::Value);
}

Diagnostic err_instruction_unsupported_op(std::string_view op) {
  return make("err_instruction_unsupported_op", "unsupported operator '" + s(op) + "'", ErrorKind::Value);
}

Diagnostic err_instruction_unsupported_op(std::string_view op, std::string_view api, std::string_view allowed) {
  return make("err_instruction_unsupported_op",
              "unsupported operator '" + s(op) + "' for '" + s(bare_api(api)) + "', which takes " + s(allowed),
              ErrorKind::Value);
}

Diagnostic err_unsupported_reduce_axis(std::string_view message) {
  return make("err_unsupported_reduce_axis", s(message), ErrorKind::Value);
}

Diagnostic err_supported_operand_dtype(std::string_view message) {
  return make("err_supported_operand_dtype", s(message), ErrorKind::Type);
}

Diagnostic err_insufficient_rank(std::string_view what, const std::vector<int64_t>& shape, size_t min_rank) {
  return make("err_insufficient_rank",
              "Insufficient rank: " + s(what) + " " + shape_str(shape) + " must have at least " +
                  std::to_string(min_rank) + " dimensions (partition and free)", ErrorKind::Syntax);
}

Diagnostic err_stack_overflow(bool psum, int64_t required, int64_t capacity, std::string_view target) {
  return make(psum ? "err_stack_overflow_psum" : "err_stack_overflow_sbuf",
              "Size of free dimensions " + std::to_string(required) + " bytes per partition on " +
                  (psum ? "PSUM" : "SBUF") + " buffer exceeds the " + std::to_string(capacity) +
                  " bytes per partition of " + s(target),
              ErrorKind::Syntax, "tile the free dimension (loop over chunks) or use a narrower dtype");
}

Diagnostic err_failed_to_infer_tile_from_local_tensor(std::string_view tensor) {
  return make("err_failed_to_infer_tile_from_local_tensor", "Failed to infer tile from tensor '" + s(tensor) + "'",
              ErrorKind::Syntax, "index the block dimensions first, e.g. " + s(tensor) + "[i], to get a tile");
}

Diagnostic warn_bn_stats_mask_on_reduce_dims() {
  return make("warn_bn_stats_mask_on_reduce_dims",
              "nisa.bn_stats's mask leaves out elements of the free (reduce) dims, a known issue of neuronx-cc "
              "(bn_stats mask cannot contain reduce-dim indices); the statistics cover the masked elements only",
              ErrorKind::Syntax, "mask only the partitions, or slice the data to the elements to reduce");
}

Diagnostic warn_block_dimension_is_deprecated() {
  return make("warn_block_dimension_is_deprecated",
              "Block dimension is deprecated: dimensions before the partition dimension (nl.par_dim) are blocks",
              ErrorKind::Syntax);
}

Diagnostic err_indirect_indices_free_dim(std::string_view tensor, int dim) {
  return make("err_indirect_indices_free_dim",
              "indirect indexing of tensor `" + s(tensor) + "` on free dimension " + std::to_string(dim) +
                  " is not supported; only the partition (or block) dimension can be indexed by a tile",
              ErrorKind::Syntax);
}

Diagnostic err_indirect_indices_sbuf(std::string_view index) {
  return make("err_indirect_indices_sbuf",
              "the index tile `" + s(index) + "` of an indirect access must be in SBUF", ErrorKind::Syntax);
}

Diagnostic err_tensor_index_not_supported(std::string_view tensor, std::string_view why) {
  return make("err_tensor_index_not_supported", "cannot index tensor `" + s(tensor) + "` with a tensor: " + s(why),
              ErrorKind::Syntax);
}

Diagnostic err_indirect_indices_are_not_supported_with_nki_api(std::string_view api, std::string_view hint) {
  return make("err_indirect_indices_are_not_supported_with_nki_api",
              "indirect indices are not supported by '" + s(bare_api(api)) + "'", ErrorKind::Syntax, s(hint));
}

Diagnostic err_copy_dynamic_indirect_indices_not_natively_supported(std::string_view lhs) {
  return make("err_copy_dynamic_indirect_indices_not_natively_supported",
              "cannot copy a tensor with indirect memory reference access to `" + s(lhs) + "`", ErrorKind::Syntax);
}

Diagnostic err_atomic_rmw_add_only(std::string_view op) {
  return make("err_atomic_rmw_add_only", "nl.atomic_rmw only supports op=np.add, got '" + s(op) + "'", ErrorKind::Value);
}

Diagnostic err_atomic_rmw_dynamic_index(std::string_view tensor) {
  return make("err_atomic_rmw_dynamic_index",
              "the destination of nl.atomic_rmw must use indirect indexing, e.g. " + s(tensor) + "[idx_tile, i_f]",
              ErrorKind::Syntax);
}

Diagnostic err_reduce_unsupported_negate(std::string_view op) {
  return make("err_reduce_unsupported_negate",
              "negate=True only applies to arithmetic reduce operators, not '" + s(op) + "'", ErrorKind::Value);
}

Diagnostic err_transpose_dst_shape(std::string_view dst, const std::vector<int64_t>& expected, std::string_view axes,
                                   std::string_view api) {
  return make("err_tile_shape_mismatch",
              "dst " + s(dst) + " of '" + s(bare_api(api)) + "' must be src permuted by " + s(axes) + ", of shape " +
                  shape_str(expected) + " (the same rank as src)",
              ErrorKind::Syntax, "size dst to the transposed src, dim for dim");
}

Diagnostic err_tile_shape_mismatch(std::string_view a, std::string_view b, std::string_view api) {
  return make("err_tile_shape_mismatch",
              "number of elements per partition mismatch in parameters (" + s(a) + ", " + s(b) + ") of '" +
                  s(bare_api(api)) + "'",
              ErrorKind::Syntax,
              // A destination is described by its shape alone ("[128, 64]"); a second data operand by name.
              b.substr(0, 1) == "["
                  ? "the destination must have as many elements per partition as the result; size it to the result"
                  : two_operand_elementwise(api)
                        ? "'" + s(bare_api(api)) + "' does not broadcast; use nisa.tensor_scalar for a [P, 1] operand"
                        : "give both operands the same number of elements per partition");
}

Diagnostic err_transpose_on_tensor_engine_not_allowed_in_allocated_kernel(std::string_view api) {
  return make("err_transpose_on_tensor_engine_not_allowed_in_allocated_kernel",
              "'" + s(bare_api(api)) + "' transposes on the Tensor Engine into a temporary, which is not allowed in "
              "a kernel with directly allocated tensors", ErrorKind::Syntax);
}

Diagnostic err_min_arch_support_for_inst(std::string_view api, int min_version, std::string_view target,
                                         int version) {
  return make("err_min_arch_support_for_inst",
              "'" + s(api) + "' is available on NeuronCore-v" + std::to_string(min_version) +
                  " and newer only; target '" + s(target) + "' is NeuronCore-v" + std::to_string(version),
              ErrorKind::Value, "select a newer target with platform_target= (or --target) to use it");
}

Diagnostic err_min_arch_support_for_hwdge(std::string_view api, std::string_view target, int version) {
  return make("err_min_arch_support_for_hwdge",
              "dge_mode=hwdge in '" + s(api) + "' needs hardware DGE, which target '" + s(target) +
                  "' (NeuronCore-v" + std::to_string(version) + ") does not have", ErrorKind::Value);
}

Diagnostic err_expected_constant_value(std::string_view what, std::string_view why) {
  return make("err_expected_constant_value",
              "expected a compile-time constant value, but got " + s(what) + ": " + s(why), ErrorKind::Value);
}

Diagnostic err_string_type_hint(std::string_view param, std::string_view hint) {
  return make("err_string_type_hint", "Unexpected str in typehint", ErrorKind::Assertion,
              "parameter '" + s(param) + "' is annotated with the string '" + s(hint) +
                  "': annotate it with the object (nt.tensor, nt.mutable_tensor), and do not use "
                  "`from __future__ import annotations` in a kernel's module");
}

Diagnostic err_unsupported_args(std::string_view api, std::string_view why) {
  return make("err_unsupported_args", "unsupported arguments to '" + s(api) + "': " + s(why), ErrorKind::Type);
}

Diagnostic err_multi_cores_spmd_not_supported(int cores, std::string_view target, int max_cores) {
  return make("err_multi_cores_spmd_not_supported",
              "a launch-grid dim over " + std::to_string(cores) + " physical NeuronCores (nl.nc(" +
                  std::to_string(cores) + ")) is not supported on target '" + s(target) +
                  "': its logical NeuronCore spans " + std::to_string(max_cores) + " physical core(s)",
              ErrorKind::Value, "launch over nl.nc(2) on trn2 / trn3, or drop nl.nc on trn1 / inf2");
}

Diagnostic err_no_cost_figures(std::string_view target) {
  return make("err_no_cost_figures",
              "no published engine and DMA figures for target '" + s(target) + "': nkic cannot predict its latency",
              ErrorKind::Value);
}

Diagnostic err_operand_cannot_be_none(std::string_view operand) {
  return make("err_operand_cannot_be_none", "operand '" + s(operand) + "' cannot be None", ErrorKind::Type);
}

Diagnostic err_bitvec_operand_must_be_integer(std::string_view op, std::string_view operand, std::string_view dtype) {
  return make("err_bitvec_operand_must_be_integer",
              "bitvec operator '" + s(op) + "' works on integer bit patterns, but operand '" + s(operand) +
                  "' is " + s(dtype), ErrorKind::Type);
}

Diagnostic err_reduce_bitvec_op_invalid_dtype(std::string_view op, std::string_view dtype, bool partition) {
  return make(partition ? "err_par_reduce_bitvec_op_invalid_dtype" : "err_reduce_bitvec_op_invalid_dtype",
              std::string(partition ? "partition reduction" : "reduction") + " with bitvec operator '" + s(op) +
                  "' needs an integer input, but the data is " + s(dtype),
              ErrorKind::Type, "reduce integer tiles with bitvec operators, float tiles with add/max/min/multiply");
}

Diagnostic err_elements_per_partition_mismatch(std::string_view operand, std::string_view api, int64_t n,
                                               int64_t min_size, int64_t max_size) {
  std::string must = min_size == max_size ? "exactly " + std::to_string(min_size)
                                          : "between " + std::to_string(min_size) + " and " + std::to_string(max_size);
  return make("err_elements_per_partition_mismatch",
              "'" + s(operand) + "' of '" + s(bare_api(api)) + "' has " + std::to_string(n) +
                  " elements per partition, but must have " + must,
              ErrorKind::Value);
}

Diagnostic err_invalid_mx_packing(std::string_view rule, std::string_view detail) {
  return make("err_invalid_mx_packing", s(rule), ErrorKind::Value, s(detail));
}

Diagnostic err_packed_dtype_not_computable(std::string_view tensor, std::string_view dtype, std::string_view api) {
  return make("err_supported_operand_dtype",
              "'" + s(bare_api(api)) + "' cannot compute on `" + s(tensor) + "` of packed mx dtype '" + s(dtype) +
                  "'",
              ErrorKind::Type,
              "packed tensors are only moved unchanged (nl.load, nl.store, nisa.dma_copy, nisa.tensor_copy "
              "without a dtype) or consumed by nisa.nc_matmul_mx; nisa.quantize_mx produces them");
}

std::string bytes_str(double bytes) {
  static const char* const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  while (bytes >= 1024 && u < 6) bytes /= 1024, ++u;
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
  return buf;
}

Diagnostic err_tensor_exceeds_hbm_capacity(std::string_view tensor, const std::vector<int64_t>& shape,
                                           double bytes, std::string_view target, int64_t capacity) {
  return make("err_tensor_exceeds_hbm_capacity",
              "HBM tensor '" + s(tensor) + "' of shape " + shape_str(shape) + " needs " + bytes_str(bytes) +
                  ", more than the " + bytes_str(static_cast<double>(capacity)) + " of HBM of a '" + s(target) +
                  "' chip", ErrorKind::Value);
}

Diagnostic err_trace_limit_exceeded(std::string_view what, int64_t limit) {
  return make("err_trace_limit_exceeded", "tracing would " + s(what) + ", more than the limit of " + std::to_string(limit),
              ErrorKind::Value);
}

Diagnostic err_internal(std::string_view what) {
  return make("err_internal", "internal error in nkic while handling this line (" + s(what) + ")", ErrorKind::Runtime);
}

Diagnostic err_exception_in_kernel(std::string_view exception) {
  return make("err_exception_in_kernel", "the kernel's Python code raised " + s(exception), ErrorKind::Runtime);
}

Diagnostic err_recursion_too_deep(std::string_view function, int limit) {
  return make("err_recursion_too_deep",
              "'" + s(function) + "' calls itself more than " + std::to_string(limit) +
                  " levels deep: tracing inlines every call, so the recursion never ends", ErrorKind::Runtime);
}

Diagnostic err_while_loop_requires_unconditional_entry() {
  return make("err_while_loop_requires_unconditional_entry",
              "Traditional while loops are not supported - use do-while pattern instead", ErrorKind::Value);
}

Diagnostic err_activation_bias_invalid_type(std::string_view dtype) {
  return make("err_activation_bias_invalid_type",
              "Bias parameter of activation or activation_reduce must be a vector of type float32, float16, or "
              "bfloat16, got " + s(dtype),
              ErrorKind::Type);
}

Diagnostic err_activation_scale_invalid_type(std::string_view dtype) {
  return make("err_activation_scale_invalid_type",
              "Scale parameter of activation or activation_reduce must be a scalar or vector of type float32, got " +
                  s(dtype),
              ErrorKind::Type);
}

Diagnostic err_activation_scale_scalar_or_vector(const std::vector<int64_t>& shape) {
  return make("err_activation_scale_scalar_or_vector",
              "Scale parameter of activation must be either a scalar value or a 1D vector spanning the partition "
              "dimension, got a tile of shape " + shape_str(shape),
              ErrorKind::Value);
}

Diagnostic err_bias_tensor_must_be_specified_in_allocation(std::string_view api) {
  return make("err_bias_tensor_must_be_specified_in_allocation",
              "Bias tensor of an activation op must be specified in allocated NKI kernels", ErrorKind::Syntax,
              s(api).rfind("nl.", 0) == 0
                  ? "'" + s(api) + "' runs as an activation: call nisa.activation with a bias tile instead"
                  : "pass bias= (e.g. a zero [P, 1] float32 tile)");
}

Diagnostic err_tensor_creation_on_scratchpad_with_init_value_not_supported() {
  return make("err_tensor_creation_on_scratchpad_with_init_value_not_supported",
              "Creating SBUF/PSUM tensor with init value is not supported in allocated NKI kernels", ErrorKind::Syntax);
}

}  // namespace nkic::sema
