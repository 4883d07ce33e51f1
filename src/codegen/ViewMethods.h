// The view methods of the current nki API (NKI_CURRENT_API.md §4.3, 0.5+):
// each reads the view's strided pattern over its tensor's flattened storage,
// rewrites it, and builds the result with .ap() (AccessPattern.h), so the
// on-chip partition rules are checked in one place. Views never copy.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "codegen/KernelBuilder.h"
#include "types/Values.h"

namespace nkic::codegen {

// [step, count] per view dim, outermost first, in elements of the view's dtype,
// and the element where the view starts.
struct ViewPattern {
  std::vector<std::pair<int64_t, int64_t>> pairs;
  ir::AffineExpr offset;
};

// Fails (err_unsupported_args naming `api`) for an indirect view, whose
// addresses are run-time values.
ViewPattern view_pattern(KernelBuilder& b, const types::TensorVal& t, std::string_view api);
bool is_contiguous(KernelBuilder& b, const types::TensorVal& t);

types::TensorVal slice_view(KernelBuilder& b, const types::TensorVal& t, int64_t dim, int64_t start, int64_t end,
                            int64_t step);
types::TensorVal select_view(KernelBuilder& b, const types::TensorVal& t, int64_t dim, int64_t index);
// select(dim, index) with a [1, 1] SBUF index tile, and vector_select(0, [P, 1] tile): run-time rows of an HBM view.
types::TensorVal select_view(KernelBuilder& b, const types::TensorVal& t, int64_t dim, const types::TensorVal& index);
types::TensorVal vector_select_view(KernelBuilder& b, const types::TensorVal& t, int64_t dim,
                                    const types::TensorVal& index);
types::TensorVal permute_view(KernelBuilder& b, const types::TensorVal& t, const std::vector<int64_t>& dims);
types::TensorVal broadcast_dim_view(KernelBuilder& b, const types::TensorVal& t, int64_t dim, int64_t size);
types::TensorVal expand_dim_view(KernelBuilder& b, const types::TensorVal& t, int64_t dim);
types::TensorVal squeeze_dim_view(KernelBuilder& b, const types::TensorVal& t, int64_t dim);
types::TensorVal reshape_dim_view(KernelBuilder& b, const types::TensorVal& t, int64_t dim,
                                  std::vector<int64_t> shape);
// reshape(shape) of an indexed view, as a pattern of the same storage: dims are split
// freely and merged where contiguous (flatten_dims's rule); on chip dim 0 keeps its size.
types::TensorVal reshape_pattern_view(KernelBuilder& b, const types::TensorVal& t, const std::vector<int64_t>& shape);
types::TensorVal flatten_dims_view(KernelBuilder& b, const types::TensorVal& t, int64_t start_dim, int64_t end_dim);
// view(dtype) / reinterpret_cast(dtype): the same bytes as `dtype`; the last dim
// (contiguous) scales by the size ratio.
types::TensorVal reinterpret_view(KernelBuilder& b, const types::TensorVal& t, ir::DType dtype);
// indirect(index, num_elem): tensor indirection (NeuronCore-v4+); nkic checks the
// generation and the index tile, then refuses it (err_unsupported_args): the sources
// disagree on what its index selects (see the function).
types::TensorVal indirect_view(KernelBuilder& b, const types::TensorVal& t, const types::TensorVal& index,
                               std::optional<int64_t> num_elem);
// einops-style: each side is a list of groups of axis names, a group of one
// name being a plain axis; `sizes` gives axis sizes the source does not fix.
using AxisGroups = std::vector<std::vector<std::string>>;
types::TensorVal rearrange_view(KernelBuilder& b, const types::TensorVal& t, const AxisGroups& src,
                                const AxisGroups& dst, const std::map<std::string, int64_t>& sizes);

}  // namespace nkic::codegen
