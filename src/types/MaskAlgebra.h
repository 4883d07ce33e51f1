// The mask/predicate algebra: comparisons of index values build masks (over a
// tile-index grid) or scalar predicates (over loop variables / program ids);
// & | ~ combine them in disjunctive normal form; lowering turns a mask into the
// conjunction of affine constraints an IR instruction carries.
#pragma once
#include <vector>

#include "ir/IR.h"
#include "types/Values.h"

namespace nkic::types {

enum class CmpOp { eq, ne, lt, le, gt, ge };
const char* name(CmpOp op);  // "eq", "lt", ...

MaskVal compare_index(CmpOp op, const IndexVal& a, const IndexVal& b);
MaskVal always(bool v);
MaskVal mask_and(const MaskVal& a, const MaskVal& b);
MaskVal mask_or(const MaskVal& a, const MaskVal& b);
MaskVal mask_not(const MaskVal& a);  // De Morgan over the DNF

// The IR predicate for an instruction whose iteration space has rank `rank`.
// The mask's grid is left-aligned with the iteration space (dim 0 is the
// partition dim). Throws err_unsupported_expression_in_mask for forms the
// hardware cannot express ('!=', '|', a grid wider than the instruction).
ir::Predicate lower_mask(const MaskVal& m, size_t rank);

const char* form_name(MaskVal::Form f);

}  // namespace nkic::types
