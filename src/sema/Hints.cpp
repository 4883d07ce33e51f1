#include "sema/Hints.h"

#include <array>

namespace nkic::sema {

namespace {

struct Hint {
  std::string_view code;
  std::string_view legacy;        // neuronxcc.nki: masks, nl.arange, SPMD grids
  std::string_view current = {};  // nki 0.3+: slices, dst-first nisa calls, kernel[lnc]; empty: as legacy
};

constexpr std::array kHints = {
    Hint{"err_activation_bias_vector", "pass a (P, 1) tile: one bias value per partition of data",
         "pass a (P, 1) tile, one bias value per partition of data (or a number, from NeuronCore-v3 on)"},
    Hint{"err_invalid_partition_access",
         "start the slice at an allowed partition, or move the rows to partition 0 of another tile with a DMA first "
         "(the DMA queues read any partition)"},
    Hint{"err_nki_api_outside_of_nki_kernel",
         "decorate the function with @nki.jit and call it with numpy arrays, or run it through nki.simulate_kernel",
         "decorate the function with @nki.jit and call it with numpy arrays, or run it through "
         "nki.simulate(kernel)(...)"},
    Hint{"err_dynamic_control_flow_not_supported",
         "NKI traces the kernel once and evaluates Python `if`/`while` at trace time; select values with nl.where "
         "or nisa.affine_select, restrict work with mask=, or pass the deciding value as a static (Python) kernel "
         "argument",
         "NKI traces the kernel once and evaluates Python `if`/`while` at trace time; select values with "
         "nisa.affine_select, loop on a value computed on the device with nl.while_loop, or pass the deciding value "
         "as a static (Python) kernel argument"},
    Hint{"err_control_flow_condition_depending_on_arange",
         "pass the comparison as mask= to the instruction (e.g. nl.add(a, b, mask=j > 2048))",
         "select elements with nisa.affine_select, or cut the operands' slices to the elements to compute"},
    Hint{"err_1d_arange_not_supported",
         "give the index a partition or free axis: nl.arange(n)[:, None] or nl.arange(n)[None, :]",
         "index with slices or nl.ds(start, size)"},
    Hint{"err_unsupported_mixing_basic_advanced_tensor_indexing",
         "use nl.arange for every dimension, or slices for every dimension", "index every dimension with slices"},
    Hint{"err_tensor_access_out_of_bound", "restrict the access with mask= (e.g. mask=(i_p < n))",
         "cut the slice to the tensor's size (e.g. t[i * 128:min((i + 1) * 128, n)])"},
    Hint{"err_unsupported_expression_in_mask",
         "write the mask as comparisons of nl.arange / loop / program_id expressions combined with &",
         "the current API has no masks: cut the operands' slices, or select with nisa.affine_select"},
    Hint{"err_tile_index_add_non_integer_scalar",
         "indices are affine in loop variables, nl.arange and nl.program_id; cast with int()",
         "indices are affine in loop variables and nl.program_id; cast with int()"},
    Hint{"err_symbolic_value_used_as_python_int",
         "iterate with nl.static_range to get Python ints, or keep the value symbolic (index tensors with it, use "
         "it in masks)",
         "iterate with nl.static_range to get Python ints, or keep the value symbolic (index tensors with it)"},
    Hint{"err_break_in_deferred_loop",
         "restrict the work with mask= instead, or iterate with nl.static_range to unroll the loop in Python",
         "iterate with nl.static_range to unroll the loop in Python, or loop at run time with nl.while_loop"},
    Hint{"err_indirect_indices_free_dim",
         "index the partition dimension with the index tile and the free dims with nl.arange",
         "index the partition dimension with the index tile and the free dims with slices"},
    Hint{"err_indirect_indices_are_not_supported_with_nki_api",
         "load with nl.load (which supports indirect indices) and transpose on chip",
         "gather with nisa.dma_copy from src.ap(..., vector_offset=idx, indirect_dim=0) and transpose on chip"},
    Hint{"err_cannot_update_immutable_parameter",
         "copy the input into a new tensor, or annotate the parameter as nt.mutable_tensor and return it",
         "copy the input into a new tensor (nl.ndarray) and write that"},
    Hint{"err_program_id_axis_out_of_bounds", "launch the kernel with a grid, e.g. kernel[2, 4](...)",
         "the current API launches over one axis, the logical NeuronCore: kernel[2](...) and nl.program_id(0)"},
    Hint{"err_unsupported_args", "see the API's signature in docs/language.md; keyword-only arguments must be named",
         "see the API's signature in docs/current_api.md; nisa calls take the destination first (dst=) and "
         "keyword-only arguments must be named"},
    Hint{"err_read_uninitialized_memory",
         "write every element the result depends on: fill the tile first (nl.zeros, nisa.memset), or mask the "
         "instructions (mask=) to the elements that were written",
         "write every element the result depends on: fill the tile first (nisa.memset), or cut the slices to the "
         "elements that were written"},
    Hint{"err_unexpected_output_dependencies",
         "index each iteration's writes by the loop variable, or iterate with nl.sequential_range when an "
         "iteration needs the one before",
         "index each iteration's writes by the loop variable, or iterate with nl.sequential_range when an "
         "iteration needs the one before"},
    Hint{"err_exception_in_kernel",
         "nkic runs the kernel's Python once to trace it; fix the line shown (the neuronxcc.nki APIs are in "
         "docs/language.md)",
         "nkic runs the kernel's Python once to trace it; fix the line shown (the nki APIs are in "
         "docs/current_api.md)"},
    // The hints both APIs share.
    Hint{"err_ambiguous_tensor_truth_value",
         "combine tensors elementwise with &, | and ~, compare explicitly, or test `is None`"},
    Hint{"err_num_partition_exceed_arch_limit",
         "tile the partition dimension in chunks of nl.tile_size.pmax"},
    Hint{"err_param_shape_incompatible_with_matmul",
         "the contraction dimension is the partition dimension of both operands"},
    Hint{"err_shared_hbm_must_in_kernel_level",
         "create the output with nl.ndarray(..., buffer=nl.shared_hbm) at the top of the kernel body and pass "
         "it into loops and helpers"},
    Hint{"err_store_dst_shape_smaller_than_other_shape",
         "assign into a destination as large as the value, or index the value down"},
    Hint{"err_non_affine_index_expression",
         "index expressions may add, subtract and multiply by Python integers"},
    Hint{"err_nested_kernel_with_spmd_grid",
         "call the nested kernel without a grid; it is traced into the calling kernel"},
    Hint{"err_cannot_assign_to_index",
         "materialise the index into a tile with nisa.iota first"},
    Hint{"err_comparison_precedence",
         "parenthesise each comparison: (a < b) & (c < d)"},
    Hint{"err_return_in_predicated_branch",
         "assign the result to a tensor declared before the if (t[...] = ...) and return after it"},
    Hint{"err_incorrect_target_type",
         "use one of inf1, trn1, inf2, trn2, trn3"},
    Hint{"err_hbm_tensor_with_init_value_not_supported",
         "create it with nl.ndarray(..., buffer=nl.shared_hbm) and write it with nl.store"},
    Hint{"err_unsupported_buffer",
         "use nl.sbuf, nl.psum, nl.hbm, nl.private_hbm or nl.shared_hbm"},
    Hint{"err_unsupported_reduce_axis",
         "reduce over free axes (1, 2, ...); transpose first, or use nisa.tensor_partition_reduce, for the "
         "partition axis"},
    Hint{"err_insufficient_rank",
         "use a [N, 1] tile instead of [N]"},
    Hint{"warn_block_dimension_is_deprecated",
         "fold the blocks into the free dimensions ((128, 8, 512)) or declare the tensor inside the loop"},
    Hint{"err_indirect_indices_sbuf",
         "load the indices with nl.load (or make them with nisa.iota) first"},
    Hint{"err_copy_dynamic_indirect_indices_not_natively_supported",
         "copy on chip at a runtime offset with nisa.tensor_copy_dynamic_src (offset source) or "
         "nisa.tensor_copy_dynamic_dst (offset destination)",
         "copy on chip at a runtime offset with nisa.tensor_copy(dst, src.ap(pattern, offset, scalar_offset=reg))"},
    Hint{"err_transpose_on_tensor_engine_not_allowed_in_allocated_kernel",
         "declare your own identity tensor and call nisa.nc_matmul (is_transpose=True), or pass "
         "transpose_x=True to nl.matmul with an already transposed operand"},
    Hint{"err_min_arch_support_for_hwdge",
         "use dge_mode=nisa.dge_mode.swdge (or leave it unknown) on this target"},
    Hint{"err_expected_constant_value",
         "shapes, sizes, axes, immediate values and nl.*_range bounds are fixed when the kernel is traced; "
         "pass a Python number (nl.static_range yields Python ints), or an operand that takes a tile"},
    Hint{"err_no_cost_figures",
         "profile on trn1, inf2, trn2 or trn3"},
    Hint{"err_bitvec_operand_must_be_integer",
         "bitcast the tile to an integer dtype (t.view(nl.int32)) or use an arithmetic operator"},
    Hint{"err_tensor_exceeds_hbm_capacity",
         "tile the problem over several kernel calls, or use a smaller shape"},
    Hint{"err_trace_limit_exceeded",
         "nl.affine_range / nl.sequential_range keep one loop axis and trace the body once; raise the limit "
         "with the environment variable NKIC_TRACE_LIMIT=<count> if the kernel really is this large",
         "a compile-time loop whose body does not depend on its iteration stays one loop axis, and "
         "nl.fori_loop / nl.while_loop loop at run time; raise the limit with the environment variable "
         "NKIC_TRACE_LIMIT=<count> if the kernel really is this large"},
    Hint{"err_internal",
         "this is a defect of nkic, not of the kernel: please report it with the kernel"},
    Hint{"err_recursion_too_deep",
         "end the recursion on a value known at trace time (a shape, a Python int), or write a loop"},
    Hint{"err_while_loop_requires_unconditional_entry",
         "enter unconditionally and test at the end: cond = scalar(True); while cond: ...; cond = <runtime "
         "condition>"},
    Hint{"err_tensor_creation_on_scratchpad_with_init_value_not_supported",
         "create it with nl.ndarray and fill it with nisa.memset or an assignment"},
    Hint{"err_hwdge_dtype_mismatch",
         "give src and dst one dtype (reinterpret with .view(dtype)), or leave dge_mode unknown"},
    Hint{"err_memset_value_dtype",
         "pass a value of dst's type (an int literal for integer tensors)"},
    Hint{"err_lnc_config_mismatch",
         "launch kernel[NEURON_LOGICAL_NC_CONFIG], or unset the variable"},
    Hint{"err_address_out_of_range",
         "place the tensor inside the buffer (address=(start partition, free byte offset))"},
    Hint{"err_address_overlap",
         "place them apart, or let nkic place one of them (omit address=)"},
    Hint{"warn_matmul_accumulate_uninitialized",
         "write the first matmul of a location with accumulate=False (or None)"},
    Hint{"warn_dependency_against_program_order",
         "trace the producer first, or drop the edge"},
};

}  // namespace

std::string hint_for(std::string_view code, Api api) {
  for (const Hint& h : kHints)
    if (h.code == code) return std::string(api == Api::Current && !h.current.empty() ? h.current : h.legacy);
  return {};
}

void complete_hint(Diagnostic& d, Api api) {
  if (d.hint.empty()) d.hint = hint_for(d.code, api);
}

std::vector<std::string> hinted_codes() {
  std::vector<std::string> codes;
  for (const Hint& h : kHints) codes.emplace_back(h.code);
  return codes;
}

}  // namespace nkic::sema
