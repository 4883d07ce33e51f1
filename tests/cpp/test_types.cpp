// NkiTypeSystem dispatch tables (seed 001): every (category, category, operator)
// of TYPE_COMBINATIONS, plus mask simplification and lowering.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sema/Diagnostic.h"
#include "types/IndexAlgebra.h"
#include "types/MaskAlgebra.h"
#include "types/TypeSystem.h"

using namespace nkic;
using namespace nkic::types;

namespace {

// Records the elementwise ops the type system sends to the tensor path.
struct RecordingSink : TensorOpSink {
  std::vector<ir::AluOp> calls;
  Value elementwise_int8(ir::AluOp op, const Value& a, const Value& b) override {
    calls.push_back(op);
    TensorVal t;
    t.tensor = 99;
    t.shape = {128, 4};
    return t;
  }
};

Value other_int(int64_t v) {
  Other o;
  o.value = static_cast<double>(v);
  o.is_int = true;
  o.type_name = "int";
  return o;
}
Value other_bool(bool v) {
  Other o;
  o.value = v;
  o.is_bool = true;
  o.type_name = "bool";
  return o;
}
// Left and right operands use different variables, so no comparison folds to a constant.
Value scalar(int loop = 0) {  // a loop variable
  IndexVal s;
  s.expr = ir::AffineExpr::var({ir::VarKind::Loop, loop});
  return s;
}
Value tile() {  // nl.arange(128)[:, None]; the right operand uses nl.arange(4)[None, :]
  return reshape_index(arange(0, 128), {0, -1});
}
Value tensor() {
  TensorVal t;
  t.tensor = 0;
  t.shape = {128, 4};
  return t;
}
Value tile_mask() { return compare_index(CmpOp::lt, std::get<IndexVal>(tile()), index_constant(100)); }
Value predicate() { return compare_index(CmpOp::lt, std::get<IndexVal>(scalar()), index_constant(3)); }

// What an operation produced: a form name, "tensor:<op>" for the tensor path, or "error:<text>".
std::string outcome(const std::function<Value()>& f, RecordingSink& sink) {
  sink.calls.clear();
  try {
    Value v = f();
    if (!sink.calls.empty()) return "tensor:" + std::string(ir::name(sink.calls.back()));
    if (auto* m = std::get_if<MaskVal>(&v)) return form_name(m->form);
    return "value";
  } catch (const sema::NkiError& e) {
    return "error:" + e.diag().message;
  }
}

struct Operand {
  const char* name;
  CmpCategory cmp;
  LogicalCategory logical;
  std::function<Value()> make;
  std::function<Value()> make_right;  // the same category, another value
};

const std::vector<Operand>& operands() {
  static const std::vector<Operand> ops = {
      {"int", CmpCategory::OTHER, LogicalCategory::OTHER, [] { return other_int(5); }, [] { return other_int(7); }},
      {"scalar", CmpCategory::SCALAR, LogicalCategory::SCALAR, [] { return scalar(0); }, [] { return scalar(1); }},
      {"tile", CmpCategory::TILE_INDEX, LogicalCategory::TILE_INDEX, [] { return tile(); }, [] { return reshape_index(arange(0, 4), {-1, 0}); }},
      {"tensor", CmpCategory::TENSOR, LogicalCategory::TENSOR, tensor, tensor},
  };
  return ops;
}

// Errors compare by message prefix; everything else exactly.
void check(const std::string& got, const std::string& expected, const std::string& what) {
  if (expected.rfind("error:", 0) == 0) EXPECT_EQ(got.substr(0, expected.size()), expected) << what << ": " << got;
  else EXPECT_EQ(got, expected) << what;
}

}  // namespace

TEST(TypeSystem, CategoriesFollowTheSeedsIsinstanceOrder) {
  for (const Operand& o : operands()) {
    EXPECT_EQ(get_cmp_category(o.make()), o.cmp) << o.name;
    EXPECT_EQ(get_logical_category(o.make()), o.logical) << o.name;
  }
  EXPECT_EQ(get_logical_category(tile_mask()), LogicalCategory::MASK);
  EXPECT_EQ(get_logical_category(predicate()), LogicalCategory::PREDICATE);
  EXPECT_EQ(get_cmp_category(tile_mask()), CmpCategory::OTHER);  // the 4-member lattice has no MASK
  EXPECT_EQ(highest_category(tensor(), tile_mask()), LogicalCategory::TENSOR);
  EXPECT_EQ(highest_category(other_bool(true), predicate()), LogicalCategory::PREDICATE);
  EXPECT_STREQ(name(LogicalCategory::PREDICATE), "PREDICATE");
}

TEST(TypeSystem, ComparisonDispatchCoversEveryCategoryPair) {
  RecordingSink sink;
  NkiTypeSystem ts(sink);
  const CmpOp ops[] = {CmpOp::eq, CmpOp::ne, CmpOp::lt, CmpOp::le, CmpOp::gt, CmpOp::ge};
  const char* alu[] = {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal"};
  for (const Operand& a : operands())
    for (const Operand& b : operands())
      for (int i = 0; i < 6; ++i) {
        CmpOp op = ops[i];
        bool equality = op == CmpOp::eq || op == CmpOp::ne;
        std::string expected;
        if (a.cmp == CmpCategory::TENSOR || b.cmp == CmpCategory::TENSOR)
          expected = std::string("tensor:") + alu[i];
        else if (a.cmp == CmpCategory::TILE_INDEX || b.cmp == CmpCategory::TILE_INDEX)
          expected = equality ? "EQTileMask" : "TileMaskIntersection";
        else if (a.cmp == CmpCategory::SCALAR || b.cmp == CmpCategory::SCALAR)
          expected = equality ? "EQScalarPredicate" : "ScalarPredicateIntersection";
        else
          expected = "error:Unexpected type";
        check(outcome([&] { return ts.compare(op, a.make(), b.make_right()); }, sink), expected,
              std::string(a.name) + " " + name(op) + " " + b.name);
      }
}

TEST(TypeSystem, LogicalDispatchCoversEveryCategoryPair) {
  RecordingSink sink;
  NkiTypeSystem ts(sink);
  std::vector<Operand> all = operands();
  all[0].make = all[0].make_right = [] { return other_bool(true); };
  all.push_back({"mask", CmpCategory::OTHER, LogicalCategory::MASK, tile_mask, tile_mask});
  all.push_back({"predicate", CmpCategory::OTHER, LogicalCategory::PREDICATE, predicate, predicate});
  for (const Operand& a : all)
    for (const Operand& b : all)
      for (LogicalOp op : {LogicalOp::and_, LogicalOp::or_}) {
        bool is_and = op == LogicalOp::and_;
        LogicalCategory hi = std::max(a.logical, b.logical);
        auto promotable = [](LogicalCategory c) {
          return c == LogicalCategory::OTHER || c == LogicalCategory::MASK || c == LogicalCategory::PREDICATE;
        };
        std::string expected;
        if (hi == LogicalCategory::TENSOR) {
          expected = is_and ? "tensor:logical_and" : "tensor:logical_or";
        } else if (!promotable(a.logical) || !promotable(b.logical)) {
          expected = "error:Cannot promote";
        } else if (a.logical == LogicalCategory::OTHER && b.logical == LogicalCategory::OTHER) {
          expected = "AlwaysTruePredicate";  // true & true, true | true
        } else if (a.logical == LogicalCategory::OTHER || b.logical == LogicalCategory::OTHER) {
          // true & m == m; true | m == true
          const Operand& m = a.logical == LogicalCategory::OTHER ? b : a;
          expected = is_and ? (m.logical == LogicalCategory::MASK ? "TileMaskIntersection" : "ScalarPredicateIntersection")
                            : "AlwaysTruePredicate";
        } else {
          bool tile = a.logical == LogicalCategory::MASK || b.logical == LogicalCategory::MASK;
          expected = tile ? (is_and ? "TileMaskIntersection" : "TileMaskUnion")
                          : (is_and ? "ScalarPredicateIntersection" : "ScalarPredicateUnion");
        }
        check(outcome([&] { return ts.logical(op, a.make(), b.make_right()); }, sink), expected,
              std::string(a.name) + (is_and ? " & " : " | ") + b.name);
      }
}

TEST(TypeSystem, InvertIsDeMorganAwareAndRejectsTensors) {
  RecordingSink sink;
  NkiTypeSystem ts(sink);
  check(outcome([&] { return ts.logical_not(tensor()); }, sink), "error:Cannot evaluate truth value", "~tensor");
  // ~(i < 100) == (i >= 100): one atom 'i - 100 >= 0'.
  MaskVal m = std::get<MaskVal>(ts.logical_not(tile_mask()));
  ASSERT_EQ(m.dnf.size(), 1u);
  ASSERT_EQ(m.dnf[0].size(), 1u);
  EXPECT_EQ(m.dnf[0][0].expr, ir::AffineExpr::grid(0) - 100);
  // ~(a & b) == ~a | ~b: two disjuncts.
  MaskVal both = std::get<MaskVal>(ts.logical(LogicalOp::and_, tile_mask(), predicate()));
  MaskVal inv = mask_not(both);
  EXPECT_EQ(inv.dnf.size(), 2u);
  EXPECT_STREQ(form_name(inv.form), "TileMaskUnion");
  // ~~m == m.
  EXPECT_EQ(mask_not(mask_not(std::get<MaskVal>(tile_mask()))).dnf, std::get<MaskVal>(tile_mask()).dnf);
  // ~(i == 3) is '!=', which a mask cannot lower.
  MaskVal ne = mask_not(compare_index(CmpOp::eq, std::get<IndexVal>(tile()), index_constant(3)));
  EXPECT_EQ(ne.dnf[0][0].rel, Atom::Ne);
}

TEST(TypeSystem, CompareNaryFoldsWithAnd) {
  RecordingSink sink;
  NkiTypeSystem ts(sink);
  // 10 <= i < 100  ->  (10 <= i) & (i < 100)
  MaskVal m = std::get<MaskVal>(ts.compare_nary({CmpOp::le, CmpOp::lt}, {other_int(10), tile(), other_int(100)}));
  EXPECT_STREQ(form_name(m.form), "TileMaskIntersection");
  ASSERT_EQ(m.dnf.size(), 1u);
  ir::Predicate p = lower_mask(m, 2);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].expr, ir::AffineExpr::grid(0) - 10);
  EXPECT_EQ(p[1].expr, ir::AffineExpr(99) - ir::AffineExpr::grid(0));
}

TEST(MaskAlgebra, ConstantAtomsFold) {
  IndexVal i = std::get<IndexVal>(tile());
  EXPECT_EQ(compare_index(CmpOp::lt, index_constant(1), index_constant(2)).form, MaskVal::Form::AlwaysTrue);
  EXPECT_EQ(compare_index(CmpOp::ge, index_constant(1), index_constant(2)).form, MaskVal::Form::AlwaysFalse);
  MaskVal m = mask_and(compare_index(CmpOp::lt, i, index_constant(5)), always(true));
  EXPECT_EQ(m.dnf.size(), 1u);
  EXPECT_EQ(m.dnf[0].size(), 1u);
  EXPECT_TRUE(mask_and(m, always(false)).always_false());
  EXPECT_TRUE(mask_or(m, always(true)).always_true());
}

TEST(MaskAlgebra, LoweringProducesGeAndEqConstraintsOrRejects) {
  IndexVal p = std::get<IndexVal>(tile());                   // (128, 1): grid 0
  IndexVal f = reshape_index(arange(0, 512), {-1, 0});       // (1, 512): grid 1
  MaskVal m = mask_and(compare_index(CmpOp::lt, p, index_constant(64)), compare_index(CmpOp::lt, f, index_constant(256)));
  EXPECT_EQ(m.shape, (std::vector<int64_t>{128, 512}));
  ir::Predicate pr = lower_mask(m, 2);
  ASSERT_EQ(pr.size(), 2u);
  EXPECT_EQ(pr[0].expr, ir::AffineExpr(63) - ir::AffineExpr::grid(0));
  EXPECT_EQ(pr[1].expr, ir::AffineExpr(255) - ir::AffineExpr::grid(1));
  ir::Predicate eq = lower_mask(compare_index(CmpOp::eq, p, index_constant(7)), 2);
  EXPECT_EQ(eq[0].kind, ir::CmpKind::Eq);
  auto code_of = [](const std::function<void()>& f) {
    try {
      f();
    } catch (const sema::NkiError& e) {
      return e.diag().code + ": " + e.diag().message;
    }
    return std::string("no error");
  };
  EXPECT_NE(code_of([&] { lower_mask(compare_index(CmpOp::ne, p, index_constant(7)), 2); }).find("'not equal' mask"),
            std::string::npos);
  EXPECT_NE(code_of([&] { lower_mask(mask_or(m, compare_index(CmpOp::eq, p, index_constant(1))), 2); })
                .find("err_unsupported_expression_in_mask: NKI mask expressions must be affine expressions of static "
                      "loop indices: 'logical or'"),
            std::string::npos);
  EXPECT_NE(code_of([&] { lower_mask(m, 1); }).find("dimensions but the instruction iterates over 1"), std::string::npos);
}

TEST(IndexAlgebra, AffineArithmeticAndRejections) {
  IndexVal i = std::get<IndexVal>(tile());
  IndexVal l = std::get<IndexVal>(scalar());
  IndexVal e = index_binop(IndexOp::add, index_binop(IndexOp::mul, l, index_constant(128)), i);
  EXPECT_EQ(e.shape, (std::vector<int64_t>{128, 1}));
  EXPECT_EQ(e.expr.coeff({ir::VarKind::Loop, 0}), 128);
  IndexVal q = index_binop(IndexOp::floordiv, index_binop(IndexOp::mul, i, index_constant(4)), index_constant(2));
  EXPECT_EQ(q.expr, ir::AffineExpr::grid(0) * 2);
  EXPECT_EQ(index_binop(IndexOp::mod, index_constant(-7), index_constant(3)).expr, ir::AffineExpr(2));
  // Non-affine results carry their reason; a mask built from them cannot lower.
  EXPECT_EQ(index_binop(IndexOp::mul, i, l).non_affine, "the product of two index values (i0) * (L0)");
  IndexVal by_var = index_binop(IndexOp::mod, i, l);
  EXPECT_EQ(by_var.non_affine, "(i0) % (L0), a division by a value that is not a positive integer constant");
  EXPECT_EQ(index_binop(IndexOp::add, by_var, index_constant(1)).non_affine, by_var.non_affine);
  MaskVal bad = compare_index(CmpOp::lt, by_var, index_constant(2));
  try {
    lower_mask(mask_and(bad, compare_index(CmpOp::lt, i, index_constant(3))), 2);
    ADD_FAILURE() << "a non-affine mask lowered";
  } catch (const sema::NkiError& e) {
    EXPECT_EQ(e.diag().code, "err_unsupported_expression_in_mask");
    EXPECT_NE(e.diag().message.find("not a positive integer constant is not affine"), std::string::npos);
  }
  // Quasi-affine: `%` and `//` by a positive constant stay exact expressions.
  IndexVal m4 = index_binop(IndexOp::mod, i, index_constant(4));
  EXPECT_TRUE(m4.non_affine.empty());
  EXPECT_EQ(m4.expr, ir::AffineExpr::mod(ir::AffineExpr::grid(0), 4));
  EXPECT_EQ(m4.expr.eval([](ir::Var) { return 11; }), 3);
  // A quotient that is constant over the tile's extent folds: (i0 + 128*L0) // 128 is L0.
  IndexVal blk = index_binop(IndexOp::floordiv, e, index_constant(128));
  EXPECT_EQ(blk.expr, ir::AffineExpr::var({ir::VarKind::Loop, 0}));
  EXPECT_THROW(index_binop(IndexOp::add, i, reshape_index(arange(0, 3), {0, -1})), sema::NkiError);
}
