// NkiTypeSystem (seed 001): the operator dispatch that guarantees a comparison
// or logical operation on a traced value never yields a Python bool. Operands
// are classified into the TypeCategory lattices; the highest category decides
// between mask/predicate structure and an elementwise int8 tensor op.
#pragma once
#include <string>
#include <vector>

#include "ir/AluOp.h"
#include "types/MaskAlgebra.h"
#include "types/Values.h"

namespace nkic::types {

// The comparison lattice (4 members) and the logical one (adds MASK, PREDICATE);
// enum order is dominance order (highest_category = max).
enum class CmpCategory { OTHER, SCALAR, TILE_INDEX, TENSOR };
enum class LogicalCategory { OTHER, SCALAR, TILE_INDEX, MASK, PREDICATE, TENSOR };
const char* name(CmpCategory c);
const char* name(LogicalCategory c);

// isinstance order of the seed: scalar, tensor, tile_index(, mask, predicate).
CmpCategory get_cmp_category(const Value& v);
LogicalCategory get_logical_category(const Value& v);
LogicalCategory highest_category(const Value& a, const Value& b);

enum class LogicalOp { and_, or_ };

// Where tensor operands go: the op builders emit an elementwise instruction.
class TensorOpSink {
 public:
  virtual ~TensorOpSink() = default;
  virtual Value elementwise_int8(ir::AluOp op, const Value& a, const Value& b) = 0;
};

class NkiTypeSystem {
 public:
  explicit NkiTypeSystem(TensorOpSink& sink) : sink_(sink) {}

  Value compare(CmpOp op, const Value& a, const Value& b);
  Value logical(LogicalOp op, const Value& a, const Value& b);
  Value logical_not(const Value& a);
  // a OP1 b OP2 c ... -> (a OP1 b) & (b OP2 c) & ...; each operand evaluated once.
  Value compare_nary(const std::vector<CmpOp>& ops, const std::vector<Value>& operands);
  Value logical_and_nary(const std::vector<Value>& operands);
  Value logical_or_nary(const std::vector<Value>& operands);

  // PROMOTION_MAP[target](value): bools/numbers -> AlwaysTrue/AlwaysFalse,
  // masks/predicates unchanged; anything else "Cannot promote from".
  MaskVal promote_to_logical_type(const Value& v, LogicalCategory target);

 private:
  TensorOpSink& sink_;
};

}  // namespace nkic::types
