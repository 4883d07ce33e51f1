#include "sema/Hints.h"

#include <array>

namespace nkic::sema {

namespace {

struct Hint {
  std::string_view code;
  std::string_view legacy;   // neuronxcc.nki: masks, nl.arange, SPMD grids
  std::string_view current;  // nki 0.3+: slices, dst-first nisa calls, kernel[lnc]
};

constexpr std::array kHints = {
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
         "write every element before it is read: fill the tile first (nl.zeros, nisa.memset), or mask the read "
         "(mask=) to the elements that were written",
         "write every element before it is read: fill the tile first (nisa.memset), or cut the read's slice to the "
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
};

}  // namespace

std::string hint_for(std::string_view code, Api api) {
  for (const Hint& h : kHints)
    if (h.code == code) return std::string(api == Api::Current ? h.current : h.legacy);
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
