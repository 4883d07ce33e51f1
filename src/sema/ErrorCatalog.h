// The err_* builders (NKI_API.md §7.1 official codes, seed texts). A builder
// only assembles the Diagnostic; it runs only on the failing path.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sema/Diagnostic.h"

namespace nkic::sema {

std::string shape_str(const std::vector<int64_t>& shape);  // "[128, 512]"

Diagnostic err_nki_api_outside_of_nki_kernel(std::string_view api);
// `what` says what the condition is and where its value comes from.
Diagnostic err_dynamic_control_flow_not_supported(std::string_view what);
Diagnostic err_control_flow_condition_depending_on_arange();
Diagnostic err_ambiguous_tensor_truth_value(std::string_view what);
Diagnostic err_1d_arange_not_supported(std::string_view tensor);
Diagnostic err_unsupported_mixing_basic_advanced_tensor_indexing(std::string_view tensor);
Diagnostic err_tensor_access_out_of_bound(std::string_view tensor, int dim, int64_t lo,
                                          int64_t hi, int64_t size);
Diagnostic err_num_partition_exceed_arch_limit(int64_t par, int64_t limit);
Diagnostic err_num_partition_mismatch(std::string_view a, std::string_view b,
                                      std::string_view api);
Diagnostic err_unsupported_memory(std::string_view operand, std::string_view api,
                                  std::string_view expected, std::string_view actual);
Diagnostic err_cannot_update_immutable_parameter(std::string_view tensor);
Diagnostic err_tensor_output_not_written_to(std::string_view tensor);
Diagnostic err_shared_hbm_must_in_kernel_level();
Diagnostic err_local_variable_used_out_of_scope(std::string_view tensor);
// A tensor kept (in a global, a closure, a default argument) from the trace of `made_in`.
// t.assert_shape(expected) of a tensor of another shape (an AssertionError, as documented).
Diagnostic err_assert_shape_mismatch(const std::vector<int64_t>& shape, const std::vector<int64_t>& expected);
Diagnostic err_tensor_of_another_trace(std::string_view made_in, std::string_view kernel);
Diagnostic err_store_dst_shape_smaller_than_other_shape(const std::vector<int64_t>& dst,
                                                        const std::vector<int64_t>& src);
Diagnostic err_param_shape_incompatible_with_matmul(std::string_view why, std::string_view stationary,
                                                   std::string_view moving, std::string_view api);
Diagnostic err_param_shape_incompatible_with_numpy(std::string_view a, std::string_view b);
Diagnostic err_unsupported_expression_in_mask(std::string_view why);
Diagnostic err_non_affine_index_expression(std::string_view what);
Diagnostic err_unexpected_type_of_operand(std::string_view operand, std::string_view got);
Diagnostic err_program_id_axis_out_of_bounds(int64_t axis, int64_t ndim);
Diagnostic err_unsupported_dtype(std::string_view what);
Diagnostic err_return_from_top_level();
// A kernel parameter annotated with a string (seed 004's canonicalizer): an AssertionError.
Diagnostic err_string_type_hint(std::string_view param, std::string_view hint);
Diagnostic err_annotation_shape_mismatch(std::string_view tensor, const std::vector<int64_t>& shape,
                                         const std::vector<int64_t>& expected);
Diagnostic err_mutable_parameter_not_returned(std::string_view tensor);
Diagnostic err_kernel_has_no_output();
Diagnostic err_nested_kernel_with_spmd_grid();
Diagnostic err_size_of_dimension_exceed_arch_limit(int dim, std::string_view operand, std::string_view api,
                                                   int64_t limit);
Diagnostic err_exceed_max_supported_dimension(std::string_view operand, std::string_view api, int64_t max_dims);

// Indexing and index arithmetic.
Diagnostic err_tile_index_add_non_integer_scalar(std::string_view got, std::string_view op);
Diagnostic err_unsupported_index(std::string_view message);
Diagnostic err_symbolic_value_used_as_python_int();
Diagnostic err_cannot_assign_to_index(std::string_view what);  // what: "index" or "mask"
Diagnostic err_comparison_precedence();
// Tracing.
Diagnostic err_break_in_deferred_loop(std::string_view statement);
Diagnostic err_return_in_predicated_branch();
Diagnostic err_invalid_range_args(std::string_view message, ErrorKind kind);
Diagnostic err_incorrect_target_type(std::string_view name);
// Creation, operands and per-op rules.
Diagnostic err_invalid_shape(const std::vector<int64_t>& shape);
Diagnostic err_invalid_shape(std::string_view why);
Diagnostic err_hbm_tensor_with_init_value_not_supported();
Diagnostic err_unsupported_buffer(std::string_view name);
Diagnostic err_instruction_unsupported_op(std::string_view op);
// An operator `api` does not take; `allowed` lists the ones it does.
Diagnostic err_instruction_unsupported_op(std::string_view op, std::string_view api, std::string_view allowed);
Diagnostic err_unsupported_reduce_axis(std::string_view message);
Diagnostic err_supported_operand_dtype(std::string_view message);
Diagnostic err_insufficient_rank(std::string_view what, const std::vector<int64_t>& shape, size_t min_rank);
Diagnostic err_failed_to_infer_tile_from_local_tensor(std::string_view tensor);
Diagnostic warn_block_dimension_is_deprecated();
Diagnostic warn_bn_stats_mask_on_reduce_dims();
Diagnostic err_indirect_indices_free_dim(std::string_view tensor, int dim);
Diagnostic err_indirect_indices_sbuf(std::string_view index);
Diagnostic err_tensor_index_not_supported(std::string_view tensor, std::string_view why);
Diagnostic err_indirect_indices_are_not_supported_with_nki_api(
    std::string_view api, std::string_view hint = "");
Diagnostic err_copy_dynamic_indirect_indices_not_natively_supported(std::string_view lhs);
Diagnostic err_tile_shape_mismatch(std::string_view a, std::string_view b, std::string_view api);
// nisa.dma_transpose into a dst whose shape is not src's permuted by `axes` (NKI 0.4).
Diagnostic err_transpose_dst_shape(std::string_view dst, const std::vector<int64_t>& expected, std::string_view axes,
                                   std::string_view api);
Diagnostic err_reduce_unsupported_negate(std::string_view op);
Diagnostic err_atomic_rmw_add_only(std::string_view op);
Diagnostic err_atomic_rmw_dynamic_index(std::string_view tensor);
Diagnostic err_transpose_on_tensor_engine_not_allowed_in_allocated_kernel(std::string_view api);
Diagnostic err_stack_overflow(bool psum, int64_t required, int64_t capacity, std::string_view target);
// nisa.activation operands and direct-allocation kernels (NKI_API.md §7.1).
Diagnostic err_activation_bias_invalid_type(std::string_view dtype);
Diagnostic err_activation_scale_invalid_type(std::string_view dtype);
Diagnostic err_activation_scale_scalar_or_vector(const std::vector<int64_t>& shape);
Diagnostic err_bias_tensor_must_be_specified_in_allocation(std::string_view api);
Diagnostic err_tensor_creation_on_scratchpad_with_init_value_not_supported();
// `while` on a runtime condition that is not known true on entry (2.25 do-while rule).
Diagnostic err_while_loop_requires_unconditional_entry();
// A helper of the kernel calls itself without end: tracing inlines every call.
Diagnostic err_recursion_too_deep(std::string_view function, int limit);
// An HBM tensor larger than the target chip's HBM (Target::hbm_capacity_bytes).
Diagnostic err_tensor_exceeds_hbm_capacity(std::string_view tensor, const std::vector<int64_t>& shape,
                                           double bytes, std::string_view target, int64_t capacity);
// A trace that would unroll or emit more than `limit` (NKIC_TRACE_LIMIT): `what` says what.
Diagnostic err_trace_limit_exceeded(std::string_view what, int64_t limit);
// "1.5 GiB": a byte count for messages.
std::string bytes_str(double bytes);
// A defect of nkic (an internal invariant broke), reported at the user's line.
Diagnostic err_internal(std::string_view what);
// The kernel's own Python code raised `exception` ("AssertionError: rows must be 64") while
// it was traced: what the command line reports at the user's line (from Python the
// exception itself propagates).
Diagnostic err_exception_in_kernel(std::string_view exception);
// An API of a later NeuronCore than the target's.
Diagnostic err_min_arch_support_for_inst(std::string_view api, int min_version, std::string_view target,
                                         int version);
Diagnostic err_min_arch_support_for_hwdge(std::string_view api, std::string_view target, int version);
// `what` names the non-constant value, `why` says why it is only known at run time.
Diagnostic err_expected_constant_value(std::string_view what, std::string_view why);
Diagnostic err_operand_cannot_be_none(std::string_view operand);
Diagnostic err_multi_cores_spmd_not_supported(int cores, std::string_view target, int max_cores);
// The cost model has no published engine figures for the target (inf1).
Diagnostic err_no_cost_figures(std::string_view target);
// A call whose arguments do not bind to the API's signature (Python's reason in `why`).
Diagnostic err_unsupported_args(std::string_view api, std::string_view why);
Diagnostic err_bitvec_operand_must_be_integer(std::string_view op, std::string_view operand, std::string_view dtype);
// err_reduce_bitvec_op_invalid_dtype, or err_par_reduce_... for a partition reduction.
Diagnostic err_reduce_bitvec_op_invalid_dtype(std::string_view op, std::string_view dtype, bool partition);
// The element-count companions (seed 004): exact per-partition element counts.
Diagnostic err_elements_per_partition_mismatch(std::string_view operand, std::string_view api, int64_t n,
                                               int64_t min_size, int64_t max_size);
// The mx packing rules of check_matmul_mx_low_level_shape (seed 004 texts).
Diagnostic err_invalid_mx_packing(std::string_view rule, std::string_view detail);
// A packed mx dtype reaching an instruction that would compute on its elements.
Diagnostic err_packed_dtype_not_computable(std::string_view tensor, std::string_view dtype, std::string_view api);

// The current nki API's 0.3+ rules and its accepted Python subset (docs/current_api.md).
Diagnostic err_hwdge_dtype_mismatch(std::string_view src, std::string_view dst);
Diagnostic err_memset_value_dtype(std::string_view value, std::string_view dtype, std::string_view why);
Diagnostic err_output_not_in_shared_hbm(std::string_view tensor, std::string_view memory);
// nisa.activation's bias tile is a (P, 1) vector over data's P partitions.
Diagnostic err_activation_bias_vector(const std::vector<int64_t>& shape, int64_t partitions);
// `launch`: what set the degree ("kernel[4]", "NEURON_LOGICAL_NC_CONFIG=4").
Diagnostic err_lnc_not_supported(std::string_view launch, int64_t lnc, std::string_view target, int max_cores);
Diagnostic err_lnc_config_mismatch(int64_t lnc, std::string_view runtime);
// kernel[n]: the cores run a loop they synchronise in (core_barrier, sendrecv) unlike each
// other; `how` says where they part ("core 0 runs it 2 time(s), core 1 3").
Diagnostic err_core_sync_mismatch(std::string_view how);
// nki.multi_rank_simulate: one specialization serves every rank, so `argument` is the same on
// each; rank `rank` passes `theirs` where rank 0 passes `first`.
Diagnostic err_multi_rank_arguments(std::string_view argument, int64_t rank, std::string_view first,
                                    std::string_view theirs);
// nki.execute / nki.multi_rank_execute: there is no NeuronDevice to run on.
Diagnostic err_no_neuron_device(std::string_view api, std::string_view instead);
Diagnostic err_unsupported_python_construct(std::string_view what, std::string_view hint);
// The version switch (NkiVersion.h): a value of NKIC_NKI_VERSION that names no version served;
// a form the served version no longer accepts (`last`: the newest version that did), or does not
// accept yet; a form it accepts but deprecates.
Diagnostic err_unsupported_nki_version(std::string_view value, std::string_view accepted);
Diagnostic err_removed_in_nki_version(std::string_view form, std::string_view removed, std::string_view served,
                                      std::string_view instead, std::string_view last);
Diagnostic err_not_in_nki_version(std::string_view form, std::string_view introduced, std::string_view served,
                                  std::string_view instead);
Diagnostic warn_deprecated_in_nki_version(std::string_view form, std::string_view since, std::string_view instead);

Diagnostic err_address_out_of_range(std::string_view tensor, std::string_view why);
Diagnostic err_psum_address_not_bank_aligned(std::string_view tensor, int64_t offset, int64_t bank_bytes);
// Two tensors placed by address= share bytes of a partition while both are live.
Diagnostic err_address_overlap(std::string_view tensor, std::string_view other, std::string_view where);
// nc_matmul(accumulate=True) onto PSUM elements nothing wrote before (undefined on the hardware).
Diagnostic warn_matmul_accumulate_uninitialized(std::string_view tensor);
Diagnostic warn_matmul_dst_crosses_psum_bank(std::string_view tensor, int64_t first_byte, int64_t last_byte,
                                             int64_t bank_bytes);
// depends_on / with_schedule: an edge whose producer comes after its consumer in program order.
// nisa.local_gather called without num_valid_indices (NKI 0.8: undefined, a warning).
Diagnostic warn_local_gather_num_valid_indices(int64_t future_default);
// A bitvec operator on an engine NKI 0.8 announces will reject it (tensor_tensor on GpSimd,
// tensor_scalar on the Scalar or GpSimd Engine).
Diagnostic warn_bitvec_op_engine(std::string_view api, std::string_view op, std::string_view engine);
Diagnostic warn_dependency_against_program_order(std::string_view consumer, std::string_view producer,
                                                 const ir::SourceLoc& producer_loc);

// The target compiler's build rules (ErrorCatalogBuild.cpp): what the trn2 build rejects
// that an unchecked simulation would run.
// An engine access of `partitions` partitions starting at `start`, refused by the start
// rule (alignment: the multiple of 32 or 64 it must start at, 0: partition 0 only).
Diagnostic err_invalid_partition_access(std::string_view tensor, int64_t partitions, int64_t start, int64_t alignment);
// Allocation (Allocation.h): more PSUM banks live at once than the target has; more SBUF bytes
// per partition live than it has, which the compiler spills. `live`: the tensors live there.
Diagnostic err_psum_over_capacity(std::string_view target, int64_t banks, int64_t capacity_banks, int64_t bank_bytes,
                                  std::string_view live);
// `ring`: the SBUF bytes per partition a prefetch ring takes out of the capacity (CompileConfig.h).
Diagnostic warn_sbuf_spill(std::string_view target, int64_t bytes, int64_t capacity, std::string_view live,
                           int64_t ring = 0);
// NKI allocation without fallback (allocation=LINEAR, nki_alloc_fallback=False): SBUF over its capacity.
Diagnostic err_sbuf_over_capacity(std::string_view target, int64_t bytes, int64_t capacity, std::string_view live,
                                  int64_t ring);

// nki.compiler (NKI 0.7/0.8) and the tracer frontend (ErrorCatalogCompiler.cpp).
// `expected`: "a bool", "an nki.compiler.AllocationMode or None", ...
Diagnostic err_compile_config_type(std::string_view field, std::string_view expected);
// `got`: the allocation given ("Allocation.COLORING"); empty when none is.
Diagnostic err_scheduling_needs_linear_allocation(std::string_view got);
Diagnostic err_option_needs_nki_allocation(std::string_view option);
Diagnostic err_option_needs_nki_scheduling(std::string_view option);
Diagnostic err_prefetch_ring_conflict(std::string_view ring_env);
Diagnostic err_invalid_environment_value(std::string_view variable, std::string_view value, std::string_view expected);
// A nested @nki.jit kernel whose compile config differs (`difference`: CompileConfig::difference).
Diagnostic err_nested_kernel_config_mismatch(std::string_view kernel, std::string_view difference);
Diagnostic warn_nested_kernel_config_override(std::string_view kernel, std::string_view difference);
// neuronx-cc's NCC_EVRF066: the kernel's LNC degree is not the compiler's (NEURON_CC_FLAGS --lnc).
Diagnostic err_lnc_compiler_mismatch(std::string_view kernel, int64_t kernel_lnc, int64_t compiler_lnc);
Diagnostic warn_compiler_frontend_ignored(std::string_view value);
// A construct nki 0.6's parser frontend rejected, which the 0.7+ tracer frontend runs as Python.
Diagnostic warn_parser_frontend_construct(std::string_view what, std::string_view hint);
// An API call on an empty view of `tensor` (shape `shape`): nothing is executed.
Diagnostic warn_empty_access(std::string_view api, std::string_view tensor, std::string_view shape);
// Tile grids of NKI 0.7 (ErrorCatalogGrids.cpp; codegen/TileGrid.h). `api` is the call
// (nl.tiles, nl.alloc_tiles, ...), `what` the argument or grid.
// A shape argument that is not a tuple of Python ints (a TypeError, as documented).
Diagnostic err_grid_shape_not_ints(std::string_view api, std::string_view what, std::string_view got);
// A shape argument of the right type that breaks a geometry rule (a ValueError).
Diagnostic err_grid_shape_invalid(std::string_view api, std::string_view why);
// buffer= that is not an nl buffer (a TypeError), or one grids cannot live in (a ValueError).
Diagnostic err_grid_buffer_not_memory_region(std::string_view api, std::string_view got);
Diagnostic err_grid_buffer_unsupported(std::string_view api, std::string_view buffer);
// nl.tiles / nl.blocks of something that is neither a tensor nor a grid (a TypeError).
Diagnostic err_grid_source(std::string_view api, std::string_view got);
// grid[key] with a key out of range or not ints and step-1 slices (an IndexError).
Diagnostic err_grid_index(std::string_view why);
// grid.data of a selection no single access pattern describes (a ValueError).
Diagnostic err_grid_data_not_representable(std::string_view why, std::string_view fix);
}  // namespace nkic::sema
