// Affine arithmetic on index values (tile indices, loop variables, program
// ids) with numpy broadcasting of their grids. Anything that would leave the
// affine world is rejected here, at the user's operator.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "types/Values.h"

namespace nkic::types {

// numpy broadcasting of two shapes; throws err_param_shape_incompatible_with_numpy.
std::vector<int64_t> broadcast_shapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b);
// Re-express an index value on a grid of rank `rank` (right-aligned).
ir::AffineExpr align_grid(const ir::AffineExpr& e, size_t from_rank, size_t rank);

IndexVal index_constant(int64_t v);
// An Other operand as an index constant; throws if it is not an integer.
IndexVal index_from_other(const Other& o, const char* op);

enum class IndexOp { add, sub, mul, floordiv, mod };
IndexVal index_binop(IndexOp op, const IndexVal& a, const IndexVal& b);

// nl.arange(start, stop): a 1-D tile index over [start, stop).
IndexVal arange(int64_t start, int64_t stop);
// arange(...)[key]: `key` lists, per output position, either the input dim it
// takes (>= 0) or -1 for a new broadcast axis (None).
IndexVal reshape_index(const IndexVal& v, const std::vector<int>& key);

}  // namespace nkic::types
