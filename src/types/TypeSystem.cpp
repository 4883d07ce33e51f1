#include "types/TypeSystem.h"

#include "sema/ErrorCatalog.h"
#include "types/IndexAlgebra.h"

namespace nkic::types {

const char* name(CmpCategory c) {
  static const char* kNames[] = {"OTHER", "SCALAR", "TILE_INDEX", "TENSOR"};
  return kNames[static_cast<int>(c)];
}

const char* name(LogicalCategory c) {
  static const char* kNames[] = {"OTHER", "SCALAR", "TILE_INDEX", "MASK", "PREDICATE", "TENSOR"};
  return kNames[static_cast<int>(c)];
}

CmpCategory get_cmp_category(const Value& v) {
  if (auto* i = std::get_if<IndexVal>(&v)) return i->is_scalar() ? CmpCategory::SCALAR : CmpCategory::TILE_INDEX;
  if (std::holds_alternative<TensorVal>(v)) return CmpCategory::TENSOR;
  return CmpCategory::OTHER;
}

LogicalCategory get_logical_category(const Value& v) {
  if (auto* i = std::get_if<IndexVal>(&v))
    return i->is_scalar() ? LogicalCategory::SCALAR : LogicalCategory::TILE_INDEX;
  if (std::holds_alternative<TensorVal>(v)) return LogicalCategory::TENSOR;
  if (auto* m = std::get_if<MaskVal>(&v)) {
    if (m->is_tile()) return LogicalCategory::MASK;
    return LogicalCategory::PREDICATE;
  }
  return LogicalCategory::OTHER;
}

LogicalCategory highest_category(const Value& a, const Value& b) {
  return std::max(get_logical_category(a), get_logical_category(b));
}

namespace {

std::string type_name(const Value& v) {
  if (auto* o = std::get_if<Other>(&v)) return o->type_name;
  if (auto* m = std::get_if<MaskVal>(&v)) return form_name(m->form);
  return name(get_cmp_category(v));
}

[[noreturn]] void unexpected_type(const char* op, const Value& a, const Value& b) {
  sema::Diagnostic d;
  d.kind = sema::ErrorKind::Type;
  d.message = "Unexpected type " + type_name(a) + " and " + type_name(b) + " for operator '" + op + "'";
  sema::fail(d);
}

IndexVal as_index(const Value& v, const char* op, const Value& a, const Value& b) {
  if (auto* i = std::get_if<IndexVal>(&v)) return *i;
  if (auto* o = std::get_if<Other>(&v); o && o->numeric) return index_from_other(*o, op);
  unexpected_type(op, a, b);
}

ir::AluOp alu_of(CmpOp op) {
  switch (op) {
    case CmpOp::eq: return ir::AluOp::equal;
    case CmpOp::ne: return ir::AluOp::not_equal;
    case CmpOp::lt: return ir::AluOp::less;
    case CmpOp::le: return ir::AluOp::less_equal;
    case CmpOp::gt: return ir::AluOp::greater;
    case CmpOp::ge: return ir::AluOp::greater_equal;
  }
  return ir::AluOp::equal;
}

}  // namespace

Value NkiTypeSystem::compare(CmpOp op, const Value& a, const Value& b) {
  CmpCategory ca = get_cmp_category(a), cb = get_cmp_category(b);
  if (ca == CmpCategory::TENSOR || cb == CmpCategory::TENSOR)
    return sink_.elementwise_int8(alu_of(op), a, b);
  if (ca == CmpCategory::TILE_INDEX || cb == CmpCategory::TILE_INDEX ||
      ca == CmpCategory::SCALAR || cb == CmpCategory::SCALAR)
    return compare_index(op, as_index(a, name(op), a, b), as_index(b, name(op), a, b));
  unexpected_type(name(op), a, b);
}

MaskVal NkiTypeSystem::promote_to_logical_type(const Value& v, LogicalCategory target) {
  LogicalCategory from = get_logical_category(v);
  if (auto* m = std::get_if<MaskVal>(&v)) return *m;
  if (auto* o = std::get_if<Other>(&v); o && o->numeric) return always(o->value != 0);
  sema::Diagnostic d;
  d.kind = sema::ErrorKind::Type;
  d.message = std::string("Cannot promote from ") + name(from) + " to " +
              (target == LogicalCategory::PREDICATE || target == LogicalCategory::SCALAR ||
                       target == LogicalCategory::OTHER
                   ? "PREDICATE"
                   : "MASK");
  d.hint = "combine comparisons (masks), e.g. (i_p < n) & (i_f < m); index values are not booleans";
  sema::fail(d);
}

Value NkiTypeSystem::logical(LogicalOp op, const Value& a, const Value& b) {
  LogicalCategory cat = highest_category(a, b);
  if (cat == LogicalCategory::TENSOR)
    return sink_.elementwise_int8(op == LogicalOp::and_ ? ir::AluOp::logical_and : ir::AluOp::logical_or, a, b);
  MaskVal pa = promote_to_logical_type(a, cat);
  MaskVal pb = promote_to_logical_type(b, cat);
  return op == LogicalOp::and_ ? mask_and(pa, pb) : mask_or(pa, pb);
}

Value NkiTypeSystem::logical_not(const Value& a) {
  LogicalCategory cat = highest_category(a, a);
  if (cat == LogicalCategory::TENSOR)
    sema::fail(sema::err_ambiguous_tensor_truth_value("'~' on a tensor"));
  return mask_not(promote_to_logical_type(a, cat));
}

Value NkiTypeSystem::logical_and_nary(const std::vector<Value>& operands) {
  Value acc = operands.at(0);
  for (size_t i = 1; i < operands.size(); ++i) acc = logical(LogicalOp::and_, acc, operands[i]);
  return acc;
}

Value NkiTypeSystem::logical_or_nary(const std::vector<Value>& operands) {
  Value acc = operands.at(0);
  for (size_t i = 1; i < operands.size(); ++i) acc = logical(LogicalOp::or_, acc, operands[i]);
  return acc;
}

namespace {
Other concrete_compare(CmpOp op, double a, double b) {
  Other r;
  r.is_bool = true;
  r.type_name = "bool";
  switch (op) {
    case CmpOp::eq: r.value = a == b; break;
    case CmpOp::ne: r.value = a != b; break;
    case CmpOp::lt: r.value = a < b; break;
    case CmpOp::le: r.value = a <= b; break;
    case CmpOp::gt: r.value = a > b; break;
    case CmpOp::ge: r.value = a >= b; break;
  }
  return r;
}
}  // namespace

Value NkiTypeSystem::compare_nary(const std::vector<CmpOp>& ops, const std::vector<Value>& operands) {
  std::vector<Value> links;
  links.reserve(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    // A link of two plain numbers (`1 < 2` in `1 < 2 < i_f`) is Python's bool;
    // logical_and_nary promotes it to AlwaysTrue / AlwaysFalse.
    const auto* a = std::get_if<Other>(&operands[i]);
    const auto* b = std::get_if<Other>(&operands[i + 1]);
    if (a && b && a->numeric && b->numeric) {
      links.push_back(concrete_compare(ops[i], a->value, b->value));
      continue;
    }
    links.push_back(compare(ops[i], operands[i], operands[i + 1]));
  }
  return logical_and_nary(links);
}

}  // namespace nkic::types
