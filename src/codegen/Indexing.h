// Subscripting a tensor view (NKI_API.md §1.3): basic indexing (integers,
// loop variables, slices, nl.ds) or advanced indexing (nl.arange / nl.mgrid
// grids broadcast together), never both. The result is another view.
#pragma once
#include <optional>
#include <vector>

#include "codegen/KernelBuilder.h"
#include "types/Values.h"

namespace nkic::codegen {

struct IndexItem {
  enum class Kind { Scalar, Slice, Tile, Tensor, Ellipsis, NewAxis };
  Kind kind = Kind::Scalar;
  types::IndexVal value;                        // Scalar / Tile
  std::shared_ptr<const types::TensorVal> tensor;  // Tensor: an index tile (indirect indexing)
  std::optional<types::IndexVal> start, stop;   // Slice (absent = default)
  std::optional<int64_t> size;                  // Slice from nl.ds(start, size)
  int64_t step = 1;
};

types::TensorVal subscript(KernelBuilder& b, const types::TensorVal& t, const std::vector<IndexItem>& key);
// t[mask]: the same view carrying an operand mask (NKI_API.md §6, matmul operands).
types::TensorVal masked_view(KernelBuilder& b, const types::TensorVal& t, const types::MaskVal& mask);
// t.reshape(shape) / t.view(dtype): the same bytes under a new shape or dtype (a whole
// tensor: a new tensor aliasing it; an indexed view: reshape_pattern_view).
types::TensorVal reshape_view(KernelBuilder& b, const types::TensorVal& t, std::vector<int64_t> shape);
// An instruction operand at the instruction's shape (the same element count): its elements
// in row-major order, whatever its strides (// and % index a non-contiguous view).
types::TensorVal operand_view(KernelBuilder& b, const types::TensorVal& t, std::vector<int64_t> shape);
types::TensorVal dtype_view(KernelBuilder& b, const types::TensorVal& t, ir::DType dtype);
// t.broadcast_to(shape): numpy broadcasting as a view (no data moves).
// t.assert_shape(shape): err_annotation_shape_mismatch (an assertion) unless t has `shape`.
void assert_shape(KernelBuilder& b, const types::TensorVal& t, const std::vector<int64_t>& shape);
types::TensorVal broadcast_view(KernelBuilder& b, const types::TensorVal& t, const std::vector<int64_t>& shape);
// t.expand_dims(axis): a size-1 dimension inserted at `axis`, as a view.
types::TensorVal expand_dims_view(KernelBuilder& b, const types::TensorVal& t, int64_t axis);

}  // namespace nkic::codegen
