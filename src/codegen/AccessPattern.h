// t.ap(pattern, offset) of the current nki API: a raw access pattern over the
// flattened storage of t's tensor, like torch.as_strided; t's own view is ignored
// but for its storage offset when no offset is given.
#pragma once
#include <optional>
#include <utility>
#include <vector>

#include "codegen/KernelBuilder.h"
#include "types/Values.h"

namespace nkic::codegen {

// The runtime part of an access pattern: an SBUF index tile whose value offsets
// dim `dim` of the base tensor, one value for the whole access (scalar, a [1, 1]
// tile; on chip a free dim) or one per partition of the view (vector, a [P, 1]
// tile; dim 0 of an HBM tensor only).
struct ApIndirect {
  types::TensorVal index;
  bool per_partition = false;
  int dim = 0;
};

// The storage offset (in elements) where view `t` starts in its tensor.
ir::AffineExpr view_offset(const KernelBuilder& b, const types::TensorVal& t);

// `pattern` is [step, count] pairs, outermost first, in elements (of `dtype` when
// it reinterprets the tensor). On chip the first pair is the partition access: its
// step is the tensor's free-element count.
types::TensorVal ap_view(KernelBuilder& b, const types::TensorVal& t,
                         const std::vector<std::pair<int64_t, int64_t>>& pattern, std::optional<ir::AffineExpr> offset,
                         const std::optional<ApIndirect>& indirect = std::nullopt,
                         std::optional<ir::DType> dtype = std::nullopt);

// After a current-API call that emitted the statements from `first` of the insertion
// block: each of `operands` read or written at a runtime offset on chip reached one of
// its instructions with that offset, and on chip only copies take offsets that vary
// by element (err_indirect_indices_are_not_supported_with_nki_api otherwise), so no
// lowering drops or misreads one.
void check_on_chip_offsets_lowered(KernelBuilder& b, size_t first, const std::vector<types::TensorVal>& operands);

}  // namespace nkic::codegen
