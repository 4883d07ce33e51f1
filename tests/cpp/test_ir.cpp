// Tests for src/ir: affine expressions, dtypes, ALU ops, loops, the printer's
// stable text form and the structural verifier.
#include <gtest/gtest.h>

#include <limits>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "ir/AluOp.h"
#include "ir/DType.h"
#include "ir/Expr.h"
#include "ir/IR.h"
#include "ir/IRPrinter.h"
#include "ir/SourceLoc.h"
#include "ir/Verifier.h"

namespace nkic::ir {
namespace {

// ---------------------------------------------------------------- helpers

Var G(int id) { return {VarKind::Grid, id}; }
Var LV(int id) { return {VarKind::Loop, id}; }
Var P(int id) { return {VarKind::ProgramId, id}; }
AffineExpr g(int id, int64_t c = 1) { return AffineExpr::var(G(id), c); }
AffineExpr lv(int id, int64_t c = 1) { return AffineExpr::var(LV(id), c); }
AffineExpr pid(int id, int64_t c = 1) { return AffineExpr::var(P(id), c); }

SourceLoc at(int line, int col = 0, const char* file = "kernels/scale.py") {
  return SourceLoc{intern_file(file), line, col};
}

int add_tensor(Kernel& k, const std::string& name, std::vector<int64_t> shape, DType dt,
               Memory mem, Role role, SourceLoc loc = {}) {
  TensorDecl t;
  t.id = static_cast<int>(k.tensors.size());
  t.name = name;
  t.shape = std::move(shape);
  t.dtype = dt;
  t.memory = mem;
  t.role = role;
  t.loc = loc;
  k.tensors.push_back(std::move(t));
  if (role == Role::Input) k.inputs.push_back(k.tensors.back().id);
  if (role == Role::Output) k.outputs.push_back(k.tensors.back().id);
  return k.tensors.back().id;
}

Access acc(int tensor, std::vector<AffineExpr> index) {
  Access a;
  a.tensor = tensor;
  a.index = std::move(index);
  return a;
}

std::unique_ptr<Instruction> inst(Opcode op, std::vector<int64_t> shape, Access dst,
                                  std::vector<Access> srcs = {}, SourceLoc loc = {}) {
  auto in = std::make_unique<Instruction>();
  in->opcode = op;
  in->shape = std::move(shape);
  in->dst = std::move(dst);
  in->srcs = std::move(srcs);
  in->loc = loc;
  return in;
}

std::unique_ptr<Loop> loop(Kernel& k, const std::string& name, int64_t lb, int64_t ub,
                           int64_t stride, AxisType type = AxisType::Affine, SourceLoc loc = {}) {
  auto l = std::make_unique<Loop>();
  l->axis = k.num_axes++;
  l->name = name;
  l->lb = lb;
  l->ub = ub;
  l->stride = stride;
  l->type = type;
  l->loc = loc;
  return l;
}

Constraint ge(AffineExpr e) { return Constraint{std::move(e), CmpKind::Ge}; }
Constraint eq(AffineExpr e) { return Constraint{std::move(e), CmpKind::Eq}; }

// A small, well-formed SPMD kernel: per program, 4 tiles of 128 rows of a
// [1000, 512] input (500 rows per program, last tile masked), scaled and stored.
Kernel sample_kernel() {
  Kernel k;
  k.name = "tile_scale";
  k.loc = at(3, 1);
  k.grid = {2};
  int a = add_tensor(k, "a", {1000, 512}, DType::float32, Memory::SharedHBM, Role::Input, at(3, 16));
  k.tensors[a].is_mutable = true;
  int out =
      add_tensor(k, "out", {1000, 512}, DType::float32, Memory::SharedHBM, Role::Output, at(5, 9));
  int buf = add_tensor(k, "buf", {128, 512}, DType::bfloat16, Memory::SBUF, Role::Local, at(8, 11));
  int ps = add_tensor(k, "ps", {128, 512}, DType::float32, Memory::PSUM, Role::Local);

  auto ms = inst(Opcode::Memset, {128, 512}, acc(ps, {g(0), g(1)}), {}, at(6, 5));
  ms->imms = {0.0};
  ms->api = "nl.zeros";
  k.body.push_back(std::move(ms));

  auto l = loop(k, "i", 0, 4, 1, AxisType::Affine, at(7, 3));
  AffineExpr row = g(0) + lv(0, 128) + pid(0, 500);
  Predicate mask = {ge(AffineExpr(499) - g(0) - lv(0, 128))};

  auto ld = inst(Opcode::Load, {128, 512}, acc(buf, {g(0), g(1)}), {acc(a, {row, g(1)})}, at(8, 11));
  ld->predicate = mask;
  ld->api = "nl.load";
  l->body.push_back(std::move(ld));

  auto mul = inst(Opcode::TensorScalar, {128, 512}, acc(buf, {g(0), g(1)}),
                  {acc(buf, {g(0), g(1)})}, at(9, 11));
  mul->alu = AluOp::multiply;
  mul->imms = {2.5};
  l->body.push_back(std::move(mul));

  auto sub = inst(Opcode::TensorScalar, {128, 512}, acc(buf, {g(0), g(1)}),
                  {acc(buf, {g(0), g(1)})}, at(10, 11));
  sub->alu = AluOp::subtract;
  sub->imms = {1.0};
  sub->reverse = true;
  l->body.push_back(std::move(sub));

  auto add = inst(Opcode::TensorTensor, {128, 512}, acc(ps, {g(0), g(1)}),
                  {acc(buf, {g(0), g(1)}), acc(buf, {g(0), g(1)})}, at(11, 5));
  add->alu = AluOp::add;
  add->accumulate = true;
  l->body.push_back(std::move(add));

  auto st = inst(Opcode::Store, {128, 512}, acc(out, {row, g(1)}), {acc(ps, {g(0), g(1)})},
                 at(12, 5));
  st->predicate = {ge(AffineExpr(499) - g(0) - lv(0, 128)), ge(g(1))};
  st->api = "nl.store";
  l->body.push_back(std::move(st));

  k.body.push_back(std::move(l));
  return k;
}

// ---------------------------------------------------------------- AffineExpr

TEST(IrAffineExpr, DefaultAndConstant) {
  AffineExpr z;
  EXPECT_TRUE(z.is_constant());
  EXPECT_EQ(z.constant(), 0);
  EXPECT_TRUE(z.terms().empty());
  AffineExpr c = 7;
  EXPECT_TRUE(c.is_constant());
  EXPECT_EQ(c.constant(), 7);
  EXPECT_EQ(z, AffineExpr(0));
  EXPECT_FALSE(c == z);
}

TEST(IrAffineExpr, VarWithZeroCoefficientIsZero) {
  EXPECT_EQ(AffineExpr::var(G(0), 0), AffineExpr(0));
  EXPECT_TRUE(AffineExpr::var(LV(3), 0).terms().empty());
}

TEST(IrAffineExpr, TermsSortedByKindThenId) {
  AffineExpr e = pid(1) + lv(2) + g(3) + pid(0) + g(0) + lv(0);
  std::vector<Var> order;
  for (const Term& t : e.terms()) order.push_back(t.var);
  std::vector<Var> want = {G(0), G(3), LV(0), LV(2), P(0), P(1)};
  EXPECT_EQ(order, want);
  // Construction order does not matter.
  EXPECT_EQ(e, g(0) + g(3) + lv(0) + lv(2) + pid(0) + pid(1));
}

TEST(IrAffineExpr, LikeTermsCombineAndZerosDrop) {
  AffineExpr e = g(0, 3) + g(1) + g(0, -1);
  ASSERT_EQ(e.terms().size(), 2u);
  EXPECT_EQ(e.terms()[0], (Term{G(0), 2}));
  EXPECT_EQ(e.terms()[1], (Term{G(1), 1}));

  AffineExpr cancel = g(0) + lv(1, 4) - g(0);
  ASSERT_EQ(cancel.terms().size(), 1u);
  EXPECT_EQ(cancel.terms()[0], (Term{LV(1), 4}));
  EXPECT_EQ(cancel.coeff(G(0)), 0);

  AffineExpr all_gone = (g(0) + 5) - g(0);
  EXPECT_TRUE(all_gone.is_constant());
  EXPECT_EQ(all_gone, AffineExpr(5));
}

TEST(IrAffineExpr, ConstantFolding) {
  EXPECT_EQ(AffineExpr(3) + AffineExpr(4), AffineExpr(7));
  EXPECT_EQ(AffineExpr(3) - AffineExpr(10), AffineExpr(-7));
  EXPECT_EQ(AffineExpr(6) * -2, AffineExpr(-12));
  AffineExpr e = (g(0) + 3) + (g(1) + 4) - 2;
  EXPECT_EQ(e.constant(), 5);
  EXPECT_EQ(e.coeff(G(0)), 1);
  EXPECT_EQ(e.coeff(G(1)), 1);
}

TEST(IrAffineExpr, Scale) {
  AffineExpr e = (g(0, 2) - lv(1) + 3) * 4;
  EXPECT_EQ(e.constant(), 12);
  EXPECT_EQ(e.coeff(G(0)), 8);
  EXPECT_EQ(e.coeff(LV(1)), -4);
  EXPECT_EQ(e * 0, AffineExpr(0));
  EXPECT_TRUE((e * 0).terms().empty());
  EXPECT_EQ(e * 1, e);
  EXPECT_EQ(-e, e * -1);
  EXPECT_EQ(-(-e), e);
  EXPECT_EQ(e - e, AffineExpr(0));
}

TEST(IrAffineExpr, SubtractionIsAdditionOfNegation) {
  AffineExpr a = g(0, 3) + lv(0) + 7;
  AffineExpr b = g(0) + pid(0, 2) - 1;
  EXPECT_EQ(a - b, a + (-b));
  EXPECT_EQ((a - b) + b, a);
}

TEST(IrAffineExpr, CoeffAndUses) {
  AffineExpr e = g(1, 5) + lv(0, -2) + 9;
  EXPECT_EQ(e.coeff(G(1)), 5);
  EXPECT_EQ(e.coeff(LV(0)), -2);
  EXPECT_EQ(e.coeff(G(0)), 0);
  EXPECT_EQ(e.coeff(P(1)), 0);  // same id as a grid var, different kind
  EXPECT_TRUE(e.uses(VarKind::Grid));
  EXPECT_TRUE(e.uses(VarKind::Loop));
  EXPECT_FALSE(e.uses(VarKind::ProgramId));
  EXPECT_FALSE(AffineExpr(3).uses(VarKind::Grid));
}

TEST(IrAffineExpr, SingleGridVar) {
  EXPECT_EQ(AffineExpr(4).single_grid_var(), -1);
  EXPECT_EQ(lv(0).single_grid_var(), -1);
  EXPECT_EQ(g(2).single_grid_var(), 2);
  EXPECT_EQ((g(1, 3) + lv(0) + pid(0) + 7).single_grid_var(), 1);
  EXPECT_EQ((g(0) + g(1)).single_grid_var(), -1);
  EXPECT_EQ((g(0) + g(1) - g(1)).single_grid_var(), 0);
}

TEST(IrAffineExpr, SubstituteGrid) {
  AffineExpr e = g(0, 2) + g(1, 3) + lv(0) + 1;
  AffineExpr r = e.substitute_grid({g(1) + 5, g(0, 4)});
  // 2*(i1 + 5) + 3*(4*i0) + L0 + 1
  EXPECT_EQ(r, g(0, 12) + g(1, 2) + lv(0) + 11);

  // Grid vars past the substitution list and non-grid vars are kept.
  AffineExpr partial = (g(0) + g(2) + pid(0)).substitute_grid({AffineExpr(10)});
  EXPECT_EQ(partial, g(2) + pid(0) + 10);

  // Substitution can cancel terms.
  EXPECT_EQ((g(0) - g(1)).substitute_grid({g(2), g(2)}), AffineExpr(0));

  // Empty substitution is the identity.
  EXPECT_EQ(e.substitute_grid({}), e);

  // Substitution may introduce loop vars (view of a loop-indexed tile).
  EXPECT_EQ(g(0).substitute_grid({g(0) + lv(1, 128)}), g(0) + lv(1, 128));
}

TEST(IrAffineExpr, ShiftGrid) {
  AffineExpr e = g(0) + g(1, 2) + lv(0) + pid(0) + 3;
  EXPECT_EQ(e.shift_grid(2), g(2) + g(3, 2) + lv(0) + pid(0) + 3);
  EXPECT_EQ(e.shift_grid(0), e);
  EXPECT_EQ(AffineExpr(5).shift_grid(3), AffineExpr(5));
  EXPECT_EQ(e.shift_grid(2).shift_grid(-2), e);
}

TEST(IrAffineExpr, DropBroadcastGrid) {
  AffineExpr e = g(0) + g(1, 3) + g(2) + lv(0) + 4;
  // i0 is broadcast (size 1); i1 is not; i2 is past the shape and kept.
  EXPECT_EQ(e.drop_broadcast_grid({1, 5}), g(1, 3) + g(2) + lv(0) + 4);
  EXPECT_EQ(e.drop_broadcast_grid({}), e);
  EXPECT_EQ(e.drop_broadcast_grid({1, 1, 1}), lv(0) + 4);
}

TEST(IrAffineExpr, Eval) {
  AffineExpr e = g(0, 3) + g(1) + lv(0, 128) + pid(0, 500) - 7;
  auto value = [](Var v) -> int64_t {
    switch (v.kind) {
      case VarKind::Grid: return v.id == 0 ? 2 : 10;
      case VarKind::Loop: return 3;
      case VarKind::ProgramId: return 1;
    }
    return 0;
  };
  EXPECT_EQ(e.eval(value), 3 * 2 + 10 + 128 * 3 + 500 - 7);
  EXPECT_EQ(AffineExpr(-4).eval([](Var) -> int64_t { return 99; }), -4);
}

TEST(IrAffineExpr, Str) {
  EXPECT_EQ(AffineExpr().str(), "0");
  EXPECT_EQ(AffineExpr(-5).str(), "-5");
  EXPECT_EQ(AffineExpr(12).str(), "12");
  EXPECT_EQ(g(0).str(), "i0");
  EXPECT_EQ(g(0, -1).str(), "-i0");
  EXPECT_EQ(g(0, -3).str(), "-3*i0");
  EXPECT_EQ((g(0, 3) + lv(0, 128) + 5).str(), "3*i0 + 128*L0 + 5");
  EXPECT_EQ((g(0, -2) - g(1) - 7).str(), "-2*i0 - i1 - 7");
  EXPECT_EQ((g(0) - lv(2, 3)).str(), "i0 - 3*L2");
  EXPECT_EQ((g(1) + pid(1) + pid(0, 4)).str(), "i1 + 4*pid0 + pid1");
  EXPECT_EQ(default_var_name(G(7)), "i7");
  EXPECT_EQ(default_var_name(LV(2)), "L2");
  EXPECT_EQ(default_var_name(P(1)), "pid1");

  auto names = [](Var v) -> std::string {
    return v.kind == VarKind::Loop ? "k" + std::to_string(v.id) : default_var_name(v);
  };
  EXPECT_EQ((g(0) + lv(1, 2) - 1).str(names), "i0 + 2*k1 - 1");
}

// Quasi-affine terms: floor(num / den) with den > 0, `%` as x - den*floor(x / den).
TEST(IrAffineExpr, FloorDivisionSimplifies) {
  // Multiples of the divisor leave the division; constants evaluate.
  EXPECT_EQ(AffineExpr::floordiv(g(0, 4) + lv(0, 6) + 8, 2), g(0, 2) + lv(0, 3) + 4);
  EXPECT_EQ(AffineExpr::floordiv(AffineExpr(-7), 2), AffineExpr(-4));
  EXPECT_EQ(AffineExpr::mod(AffineExpr(-7), 3), AffineExpr(2));
  EXPECT_EQ(AffineExpr::floordiv(lv(0) + 2, 2), AffineExpr::floordiv(lv(0), 2) + 1);
  // (i + 2) % 2 is i % 2; nested divisions fold into one.
  EXPECT_EQ(AffineExpr::mod(lv(0) + 2, 2), AffineExpr::mod(lv(0), 2));
  EXPECT_EQ(AffineExpr::floordiv(AffineExpr::floordiv(lv(0), 2), 3), AffineExpr::floordiv(lv(0), 6));
  EXPECT_EQ(AffineExpr::floordiv(g(1), 1), g(1));
  // Sums of equal divisions merge, and cancel to nothing.
  AffineExpr q = AffineExpr::floordiv(g(0), 4);
  EXPECT_EQ((q + q).divs().size(), 1u);
  EXPECT_TRUE((q - q).is_constant());
  EXPECT_FALSE(q.is_affine());
  EXPECT_TRUE(q.uses(VarKind::Grid));
  EXPECT_EQ(q.coeff(G(0)), 0);  // not a linear coefficient
  EXPECT_EQ(q.vars(), (std::vector<Var>{G(0)}));
  EXPECT_EQ(q.single_grid_var(), 0);
}

TEST(IrAffineExpr, FloorDivisionEvalAndStr) {
  AffineExpr m = AffineExpr::mod(lv(0) + g(1, 3), 5);
  for (int64_t l : {-6, -1, 0, 4, 9})
    for (int64_t i : {0, 1, 7}) {
      int64_t x = l + 3 * i, r = ((x % 5) + 5) % 5;
      EXPECT_EQ(m.eval([&](Var v) { return v.kind == VarKind::Loop ? l : i; }), r) << l << " " << i;
    }
  EXPECT_EQ(AffineExpr::mod(lv(0), 2).str(), "L0 - 2*((L0) // 2)");
  EXPECT_EQ((AffineExpr::floordiv(g(0), 64) + 1).str(), "((i0) // 64) + 1");
}

TEST(IrAffineExpr, FloorDivisionSubstitutes) {
  AffineExpr e = AffineExpr::floordiv(g(0) + g(1, 2), 4);
  // i0 -> 4*i1, i1 -> 2: floor((4*i1 + 4) / 4) = i1 + 1, affine again.
  EXPECT_EQ(e.substitute_grid({g(1, 4), AffineExpr(2)}), g(1) + 1);
  EXPECT_EQ(e.shift_grid(1), AffineExpr::floordiv(g(1) + g(2, 2), 4));
  EXPECT_EQ(e.drop_broadcast_grid({1, 8}), AffineExpr::floordiv(g(1, 2), 4));
}

TEST(IrAffineExpr, BoundsKeepModuloTight) {
  auto range = [](int64_t hi) { return [hi](Var) { return std::pair<int64_t, int64_t>{0, hi}; }; };
  // i % 64 over [0, 255] is [0, 63], not the interval sum [-192, 255].
  EXPECT_EQ(AffineExpr::mod(g(0), 64).bounds(range(255)), (std::pair<int64_t, int64_t>{0, 63}));
  // 2*(i % 48) + i // 48 over [0, 95] is [0, 95].
  AffineExpr mix = AffineExpr::mod(g(0), 48) * 2 + AffineExpr::floordiv(g(0), 48);
  EXPECT_EQ(mix.bounds(range(95)), (std::pair<int64_t, int64_t>{0, 95}));
  // Within one period the remainder is exact.
  EXPECT_EQ(AffineExpr::mod(g(0) + 8, 64).bounds(range(15)), (std::pair<int64_t, int64_t>{8, 23}));
  EXPECT_EQ(AffineExpr::floordiv(g(0), 4).bounds(range(15)), (std::pair<int64_t, int64_t>{0, 3}));
  // Divisions that are constant over the ranges fold away.
  AffineExpr f = (AffineExpr::floordiv(g(0), 128) + lv(0)).fold_constant_divs(
      [](Var v) -> AffineExpr::OptRange {
        if (v.kind != VarKind::Grid) return std::nullopt;
        return std::pair<int64_t, int64_t>{0, 127};
      });
  EXPECT_EQ(f, lv(0));
}

// ---------------------------------------------------------------- DType

TEST(IrDType, Info) {
  struct Want {
    DType t;
    const char* name;
    int size;
    bool is_float, is_signed;
    int lanes = 1;
    int min_nc_version = 0;
  };
  const Want want[] = {
      {DType::float32, "float32", 4, true, true},
      {DType::float16, "float16", 2, true, true},
      {DType::bfloat16, "bfloat16", 2, true, true},
      {DType::tfloat32, "tfloat32", 4, true, true},
      {DType::float8_e4m3, "float8_e4m3", 1, true, true},
      {DType::float8_e5m2, "float8_e5m2", 1, true, true},
      {DType::int8, "int8", 1, false, true},
      {DType::int16, "int16", 2, false, true},
      {DType::int32, "int32", 4, false, true},
      {DType::uint8, "uint8", 1, false, false},
      {DType::uint16, "uint16", 2, false, false},
      {DType::uint32, "uint32", 4, false, false},
      {DType::bool_, "bool", 1, false, false},
      {DType::float8_e4m3fn_x4, "float8_e4m3fn_x4", 4, true, true, 4},
      {DType::float8_e5m2_x4, "float8_e5m2_x4", 4, true, true, 4},
      {DType::float4_e2m1fn_x4, "float4_e2m1fn_x4", 2, true, true, 4},
      {DType::float8_e4m3fn, "float8_e4m3fn", 1, true, true, 1, 4},
      {DType::float8_e8m0fnu, "float8_e8m0fnu", 1, true, false, 1, 4},
      {DType::int64, "int64", 8, false, true},
      {DType::uint64, "uint64", 8, false, false},
  };
  ASSERT_EQ(std::size(want), static_cast<size_t>(kNumDTypes));
  for (const Want& w : want) {
    SCOPED_TRACE(w.name);
    EXPECT_EQ(name(w.t), w.name);
    EXPECT_EQ(size_of(w.t), w.size);
    EXPECT_EQ(is_float(w.t), w.is_float);
    EXPECT_EQ(is_integer(w.t), !w.is_float);
    EXPECT_EQ(info(w.t).is_signed, w.is_signed);
    EXPECT_EQ(info(w.t).lanes, w.lanes);
    EXPECT_EQ(is_packed(w.t), w.lanes > 1);
    EXPECT_EQ(min_nc_version(w.t), w.min_nc_version);
    EXPECT_EQ(is_wide(w.t), w.size == 8);
  }
  EXPECT_EQ(lane_max_exponent(DType::float8_e4m3fn_x4), 8);
  EXPECT_EQ(lane_max_exponent(DType::float8_e5m2_x4), 15);
  EXPECT_EQ(lane_max_exponent(DType::float4_e2m1fn_x4), 2);
}

TEST(IrDType, FromName) {
  for (int i = 0; i < kNumDTypes; ++i) {
    DType t = static_cast<DType>(i);
    EXPECT_EQ(dtype_from_name(name(t)), t) << name(t);
  }
  EXPECT_EQ(dtype_from_name("bool_"), DType::bool_);
  EXPECT_EQ(dtype_from_name("bool"), DType::bool_);
  EXPECT_EQ(dtype_from_name("float8_e4m3"), DType::float8_e4m3);
  EXPECT_FALSE(dtype_from_name("float64").has_value());
  EXPECT_FALSE(dtype_from_name("uint128").has_value());
  EXPECT_FALSE(dtype_from_name("").has_value());
  EXPECT_FALSE(dtype_from_name("Float32").has_value());
}

// ---------------------------------------------------------------- AluOp

TEST(IrAluOp, Table) {
  EXPECT_EQ(name(AluOp::bypass), "bypass");
  EXPECT_EQ(info(AluOp::bypass).arity, 1);
  EXPECT_EQ(info(AluOp::add).arity, 2);
  EXPECT_EQ(info(AluOp::add).kind, AluKind::Arith);
  EXPECT_EQ(info(AluOp::greater_equal).kind, AluKind::Compare);
  EXPECT_EQ(info(AluOp::logical_not).arity, 1);
  EXPECT_EQ(info(AluOp::logical_not).kind, AluKind::Logical);
  EXPECT_EQ(info(AluOp::right_shift).kind, AluKind::Bitvec);
  EXPECT_EQ(info(AluOp::invert).arity, 1);
  EXPECT_EQ(info(AluOp::exp).kind, AluKind::Activation);
  EXPECT_EQ(info(AluOp::exp).arity, 1);
  EXPECT_EQ(name(AluOp::gelu_apprx_sigmoid), "gelu_apprx_sigmoid");
  EXPECT_EQ(name(AluOp::mish), "mish");
}

TEST(IrAluOp, FromNameRoundTripsEveryOp) {
  const int n = static_cast<int>(AluOp::mish) + 1;
  for (int i = 0; i < n; ++i) {
    AluOp op = static_cast<AluOp>(i);
    EXPECT_EQ(alu_op_from_name(name(op)), op) << name(op);
    EXPECT_TRUE(info(op).arity == 1 || info(op).arity == 2) << name(op);
  }
  EXPECT_EQ(alu_op_from_name("subtract"), AluOp::subtract);
  EXPECT_FALSE(alu_op_from_name("sub").has_value());
  EXPECT_FALSE(alu_op_from_name("").has_value());
  EXPECT_FALSE(alu_op_from_name("Add").has_value());
}

TEST(IrAluOp, NamesAreUnique) {
  const int n = static_cast<int>(AluOp::mish) + 1;
  std::map<std::string_view, int> seen;
  for (int i = 0; i < n; ++i) ++seen[name(static_cast<AluOp>(i))];
  EXPECT_EQ(seen.size(), static_cast<size_t>(n));
}

// ---------------------------------------------------------------- SourceLoc

TEST(IrSourceLoc, StrAndInterning) {
  EXPECT_EQ(SourceLoc{}.str(), "<unknown>");
  EXPECT_FALSE(SourceLoc{}.known());
  EXPECT_FALSE((SourceLoc{intern_file("a.py"), 0, 3}.known()));
  EXPECT_EQ((SourceLoc{intern_file("a.py"), 4, 0}.str()), "a.py:4");
  EXPECT_EQ((SourceLoc{intern_file("a.py"), 4, 9}.str()), "a.py:4:9");
  EXPECT_EQ(intern_file("x/y.py"), intern_file(std::string("x/y.py")));
  EXPECT_NE(intern_file("x/y.py"), intern_file("x/z.py"));
}

// ---------------------------------------------------------------- IR nodes

TEST(IrLoop, TripcountPositiveStride) {
  Loop l;
  auto tc = [&](int64_t lb, int64_t ub, int64_t st) {
    l.lb = lb;
    l.ub = ub;
    l.stride = st;
    return l.tripcount();
  };
  EXPECT_EQ(tc(0, 10, 1), 10);
  EXPECT_EQ(tc(0, 10, 3), 4);  // 0 3 6 9
  EXPECT_EQ(tc(0, 9, 3), 3);   // 0 3 6
  EXPECT_EQ(tc(-5, 5, 2), 5);  // -5 -3 -1 1 3
  EXPECT_EQ(tc(2, 3, 100), 1);
  EXPECT_EQ(tc(5, 5, 1), 0);   // empty
  EXPECT_EQ(tc(10, 0, 1), 0);  // empty: ub < lb
}

TEST(IrLoop, TripcountNegativeStride) {
  Loop l;
  auto tc = [&](int64_t lb, int64_t ub, int64_t st) {
    l.lb = lb;
    l.ub = ub;
    l.stride = st;
    return l.tripcount();
  };
  EXPECT_EQ(tc(10, 0, -1), 10);  // 10 .. 1
  EXPECT_EQ(tc(10, 0, -3), 4);   // 10 7 4 1
  EXPECT_EQ(tc(9, 0, -3), 3);    // 9 6 3
  EXPECT_EQ(tc(7, -1, -2), 4);   // 7 5 3 1
  EXPECT_EQ(tc(3, 3, -1), 0);    // empty
  EXPECT_EQ(tc(0, 10, -1), 0);   // empty: ub > lb
}

TEST(IrNodes, LoopTripCountIsExactAtTheEndsOfInt64) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max(), kMin = std::numeric_limits<int64_t>::min();
  // ub - lb + stride - 1 would overflow in each of these.
  EXPECT_EQ(ir::trip_count(0, kMax, 513), (kMax - 1) / 513 + 1);
  EXPECT_EQ(ir::trip_count(kMax - 10, kMax, 4), 3);  // kMax-10, kMax-6, kMax-2
  EXPECT_EQ(ir::trip_count(kMin, kMax, kMax), 3);     // kMin, -1, kMax - 1
  EXPECT_EQ(ir::trip_count(kMax, kMin, -4), int64_t{1} << 62);  // down by 4 over 2^64 - 1
  EXPECT_EQ(ir::trip_count(kMin, kMax, 1), kMax);     // 2^64 - 1 trips: saturates
  EXPECT_EQ(ir::trip_count(0, kMax, kMin + 1), 0);    // a negative stride over an increasing range
  EXPECT_EQ(ir::trip_count(kMax, kMin, kMin), 2);     // kMax, -1
}

TEST(IrNodes, Names) {
  EXPECT_STREQ(name(Memory::SharedHBM), "shared_hbm");
  EXPECT_STREQ(name(Memory::PrivateHBM), "private_hbm");
  EXPECT_STREQ(name(Memory::SBUF), "sbuf");
  EXPECT_STREQ(name(Memory::PSUM), "psum");
  EXPECT_STREQ(name(Role::Input), "input");
  EXPECT_STREQ(name(Role::Output), "output");
  EXPECT_STREQ(name(Role::Local), "local");
  EXPECT_STREQ(name(Opcode::Load), "load");
  EXPECT_STREQ(name(Opcode::TensorScalar), "tensor_scalar");
  EXPECT_STREQ(name(AxisType::Affine), "Affine");
  EXPECT_STREQ(name(AxisType::Sequential), "Sequential");
  EXPECT_TRUE(is_hbm(Memory::SharedHBM));
  EXPECT_TRUE(is_hbm(Memory::PrivateHBM));
  EXPECT_FALSE(is_hbm(Memory::SBUF));
  EXPECT_FALSE(is_hbm(Memory::PSUM));
}

TEST(IrNodes, SizesAndConstraintHolds) {
  TensorDecl t;
  t.shape = {4, 3, 2};
  EXPECT_EQ(t.num_elements(), 24);
  t.shape = {};
  EXPECT_EQ(t.num_elements(), 1);

  Kernel k;
  EXPECT_EQ(k.num_programs(), 1);
  k.grid = {2, 3};
  EXPECT_EQ(k.num_programs(), 6);

  EXPECT_TRUE(ge(g(0)).holds(0));
  EXPECT_TRUE(ge(g(0)).holds(5));
  EXPECT_FALSE(ge(g(0)).holds(-1));
  EXPECT_TRUE(eq(g(0)).holds(0));
  EXPECT_FALSE(eq(g(0)).holds(1));
}

TEST(IrNodes, KernelTensorLookup) {
  Kernel k = sample_kernel();
  EXPECT_EQ(k.tensor(2).name, "buf");
  EXPECT_THROW(k.tensor(99), std::out_of_range);
  EXPECT_EQ(k.num_axes, 1);
  ASSERT_EQ(k.body.size(), 2u);
  EXPECT_EQ(k.body[0]->kind, StmtKind::Instruction);
  EXPECT_EQ(k.body[1]->kind, StmtKind::Loop);
}

// ---------------------------------------------------------------- printer

TEST(IrPrinter, SampleKernelExactText) {
  const std::string want =
      "kernel tile_scale grid=[2]\n"
      "  tensor a: float32[1000, 512] shared_hbm input mutable  @ kernels/scale.py:3:16\n"
      "  tensor out: float32[1000, 512] shared_hbm output  @ kernels/scale.py:5:9\n"
      "  tensor buf: bfloat16[128, 512] sbuf local  @ kernels/scale.py:8:11\n"
      "  tensor ps: float32[128, 512] psum local\n"
      "  ps[i0, i1] = memset[dve](0) iter=[128, 512]  @ kernels/scale.py:6:5\n"
      "  for i in affine_range(0, 4, 1)  @ kernels/scale.py:7:3\n"
      "    buf[i0, i1] = load[dma](a[i0 + 128*i + 500*pid0, i1]) iter=[128, 512]"
      " mask=(i0 + 128*i <= 499)  @ kernels/scale.py:8:11\n"
      "    buf[i0, i1] = tensor_scalar[dve](buf[i0, i1]; multiply 2.5) iter=[128, 512]"
      "  @ kernels/scale.py:9:11\n"
      "    buf[i0, i1] = tensor_scalar[dve](buf[i0, i1]; reverse subtract 1) iter=[128, 512]"
      "  @ kernels/scale.py:10:11\n"
      "    ps[i0, i1] += tensor_tensor[dve](buf[i0, i1]; add buf[i0, i1]) iter=[128, 512]"
      "  @ kernels/scale.py:11:5\n"
      "    out[i0 + 128*i + 500*pid0, i1] = store[dma](ps[i0, i1]) iter=[128, 512]"
      " mask=(i0 + 128*i <= 499 & i1 >= 0)  @ kernels/scale.py:12:5\n";
  Kernel k = sample_kernel();
  EXPECT_EQ(print(k), want);
}

TEST(IrPrinter, WithoutLocations) {
  const std::string want =
      "kernel tile_scale grid=[2]\n"
      "  tensor a: float32[1000, 512] shared_hbm input mutable\n"
      "  tensor out: float32[1000, 512] shared_hbm output\n"
      "  tensor buf: bfloat16[128, 512] sbuf local\n"
      "  tensor ps: float32[128, 512] psum local\n"
      "  ps[i0, i1] = memset[dve](0) iter=[128, 512]\n"
      "  for i in affine_range(0, 4, 1)\n"
      "    buf[i0, i1] = load[dma](a[i0 + 128*i + 500*pid0, i1]) iter=[128, 512]"
      " mask=(i0 + 128*i <= 499)\n"
      "    buf[i0, i1] = tensor_scalar[dve](buf[i0, i1]; multiply 2.5) iter=[128, 512]\n"
      "    buf[i0, i1] = tensor_scalar[dve](buf[i0, i1]; reverse subtract 1) iter=[128, 512]\n"
      "    ps[i0, i1] += tensor_tensor[dve](buf[i0, i1]; add buf[i0, i1]) iter=[128, 512]\n"
      "    out[i0 + 128*i + 500*pid0, i1] = store[dma](ps[i0, i1]) iter=[128, 512]"
      " mask=(i0 + 128*i <= 499 & i1 >= 0)\n";
  Kernel k = sample_kernel();
  EXPECT_EQ(print(k, PrintOptions{false}), want);
}

TEST(IrPrinter, Deterministic) {
  Kernel a = sample_kernel();
  Kernel b = sample_kernel();
  EXPECT_EQ(print(a), print(a));
  EXPECT_EQ(print(a), print(b));
}

TEST(IrPrinter, NestedSequentialLoopWithDirectivesAndEqMask) {
  Kernel k;
  k.name = "nested";
  int x = add_tensor(k, "x", {8, 64}, DType::int32, Memory::PrivateHBM, Role::Input);
  int t = add_tensor(k, "t", {8, 16}, DType::float8_e5m2, Memory::SBUF, Role::Local);
  int y = add_tensor(k, "y", {8, 64}, DType::int32, Memory::SharedHBM, Role::Output);

  auto outer = loop(k, "r", 0, 4, 1, AxisType::Affine);
  auto inner = loop(k, "c", 7, -1, -2, AxisType::Sequential, at(20, 0, "n.py"));
  inner->attrs = {{"unroll", "2"}, {"mode", "fast"}};
  auto ld = inst(Opcode::Load, {8, 16}, acc(t, {g(0), g(1)}),
                 {acc(x, {g(0), g(1) + lv(0, 16) - lv(1)})}, at(21, 0, "n.py"));
  ld->predicate = {eq(AffineExpr(3) - g(0)), ge(g(1, -2) + lv(1) + 1)};
  inner->body.push_back(std::move(ld));
  auto cp = inst(Opcode::Copy, {8, 16}, acc(t, {g(0), g(1)}), {acc(t, {g(0), AffineExpr(0)})});
  inner->body.push_back(std::move(cp));
  outer->body.push_back(std::move(inner));
  auto st = inst(Opcode::Store, {8, 16}, acc(y, {g(0), g(1) + lv(0, 16)}), {acc(t, {g(0), g(1)})});
  outer->body.push_back(std::move(st));
  k.body.push_back(std::move(outer));

  const std::string want =
      "kernel nested\n"
      "  tensor x: int32[8, 64] private_hbm input\n"
      "  tensor t: float8_e5m2[8, 16] sbuf local\n"
      "  tensor y: int32[8, 64] shared_hbm output\n"
      "  for r in affine_range(0, 4, 1)\n"
      "    for c in sequential_range(7, -1, -2) unroll=2 mode=fast  @ n.py:20\n"
      "      t[i0, i1] = load[dma](x[i0, i1 + 16*r - c]) iter=[8, 16]"
      " mask=(i0 == 3 & 2*i1 - c <= 1)  @ n.py:21\n"
      "      t[i0, i1] = tensor_copy[dve](t[i0, 0]) iter=[8, 16]\n"
      "    y[i0, i1 + 16*r] = store[dma](t[i0, i1]) iter=[8, 16]\n";
  EXPECT_EQ(print(k), want);
  EXPECT_TRUE(verify(k).empty());
}

TEST(IrPrinter, EmptyKernelAndImmediateFormatting) {
  Kernel k;
  k.name = "empty";
  EXPECT_EQ(print(k), "kernel empty\n");

  int t = add_tensor(k, "t", {4}, DType::float32, Memory::SBUF, Role::Local);
  auto ms = inst(Opcode::Memset, {4}, acc(t, {g(0)}));
  ms->imms = {1e-9};
  k.body.push_back(std::move(ms));
  auto sc = inst(Opcode::TensorScalar, {4}, acc(t, {g(0)}), {acc(t, {g(0)})});
  sc->alu = AluOp::maximum;
  sc->imms = {-0.125};
  k.body.push_back(std::move(sc));
  auto pi = inst(Opcode::TensorScalar, {4}, acc(t, {g(0)}), {acc(t, {g(0)})});
  pi->alu = AluOp::divide;
  pi->imms = {3.14159265358979};
  pi->reverse = true;
  k.body.push_back(std::move(pi));
  EXPECT_EQ(print(k),
            "kernel empty\n"
            "  tensor t: float32[4] sbuf local\n"
            "  t[i0] = memset[dve](1e-09) iter=[4]\n"
            "  t[i0] = tensor_scalar[dve](t[i0]; maximum -0.125) iter=[4]\n"
            "  t[i0] = tensor_scalar[dve](t[i0]; reverse divide 3.14159265) iter=[4]\n");
}

TEST(IrPrinter, PrintConstraint) {
  EXPECT_EQ(print_constraint(ge(g(0) - 5)), "i0 >= 5");
  EXPECT_EQ(print_constraint(ge(g(0))), "i0 >= 0");
  EXPECT_EQ(print_constraint(ge(AffineExpr(5) - g(0))), "i0 <= 5");
  EXPECT_EQ(print_constraint(ge(g(0, -2) + g(1))), "2*i0 - i1 <= 0");
  EXPECT_EQ(print_constraint(ge(g(0) + lv(0, 128) - 100)), "i0 + 128*L0 >= 100");
  EXPECT_EQ(print_constraint(ge(g(1) + pid(0, -64) + 3)), "i1 - 64*pid0 >= -3");
  EXPECT_EQ(print_constraint(eq(g(0) - 3)), "i0 == 3");
  EXPECT_EQ(print_constraint(eq(AffineExpr(3) - g(0))), "i0 == 3");
  EXPECT_EQ(print_constraint(eq(g(0) + g(1, 2) - 3)), "i0 + 2*i1 == 3");
  EXPECT_EQ(print_constraint(eq(g(0, -1) - g(1))), "i0 + i1 == 0");
  // Variable-free constraints render against 0.
  EXPECT_EQ(print_constraint(ge(AffineExpr(5))), "0 >= -5");
  EXPECT_EQ(print_constraint(eq(AffineExpr(0))), "0 == 0");

  // Given the kernel, loop variables print with their loop's name; without it, as L<axis>.
  Kernel k = sample_kernel();
  EXPECT_EQ(print_constraint(ge(AffineExpr(499) - g(0) - lv(0, 128)), &k), "i0 + 128*i <= 499");
  EXPECT_EQ(print_constraint(ge(AffineExpr(499) - g(0) - lv(0, 128))), "i0 + 128*L0 <= 499");
}

// ---------------------------------------------------------------- verifier

TEST(IrVerifier, WellFormedKernelHasNoErrors) {
  Kernel k = sample_kernel();
  EXPECT_EQ(verify(k), std::vector<std::string>{});
  Kernel empty;
  EXPECT_EQ(verify(empty), std::vector<std::string>{});
}

// The first instruction of the first loop of the sample kernel (the Load).
Instruction& first_in_loop(Kernel& k) {
  auto& l = static_cast<Loop&>(*k.body[1]);
  return static_cast<Instruction&>(*l.body[0]);
}
Instruction& nth_in_loop(Kernel& k, size_t n) {
  auto& l = static_cast<Loop&>(*k.body[1]);
  return static_cast<Instruction&>(*l.body.at(n));
}

using Errors = std::vector<std::string>;

TEST(IrVerifier, TensorIdMismatch) {
  Kernel k = sample_kernel();
  k.tensors[3].id = 7;
  EXPECT_EQ(verify(k), (Errors{"tensor ps has id 7"}));
}

TEST(IrVerifier, NonPositiveTensorDimension) {
  Kernel k = sample_kernel();
  k.tensors[3].shape = {128, 0};
  EXPECT_EQ(verify(k), (Errors{"tensor ps has a non-positive dimension"}));
}

TEST(IrVerifier, UnknownInputAndOutputTensor) {
  Kernel k = sample_kernel();
  k.inputs.push_back(9);
  k.outputs.push_back(-1);
  EXPECT_EQ(verify(k), (Errors{"input refers to unknown tensor 9",
                               "output refers to unknown tensor -1"}));
}

TEST(IrVerifier, AccessToUnknownTensor) {
  Kernel k = sample_kernel();
  first_in_loop(k).srcs[0].tensor = 42;
  EXPECT_EQ(verify(k), (Errors{"load at kernels/scale.py:8:11 src: unknown tensor"}));

  Kernel k2 = sample_kernel();
  nth_in_loop(k2, 1).dst.tensor = -1;
  EXPECT_EQ(verify(k2), (Errors{"tensor_scalar at kernels/scale.py:9:11 dst: unknown tensor"}));
}

TEST(IrVerifier, AccessRankMismatch) {
  Kernel k = sample_kernel();
  first_in_loop(k).dst.index.pop_back();
  EXPECT_EQ(verify(k),
            (Errors{"load at kernels/scale.py:8:11 dst: access rank differs from tensor rank"}));
}

TEST(IrVerifier, GridCoordinateOutsideIterationSpace) {
  Kernel k = sample_kernel();
  first_in_loop(k).srcs[0].index[1] = g(2);
  EXPECT_EQ(verify(k), (Errors{"load at kernels/scale.py:8:11 src: grid coordinate outside the "
                               "iteration space"}));

  Kernel k2 = sample_kernel();
  first_in_loop(k2).predicate.push_back(ge(g(5)));
  EXPECT_EQ(verify(k2), (Errors{"load at kernels/scale.py:8:11 mask: grid coordinate outside the "
                                "iteration space"}));
}

TEST(IrVerifier, LoopVarUsedOutsideItsLoop) {
  Kernel k = sample_kernel();
  // The Memset precedes the loop.
  auto& ms = static_cast<Instruction&>(*k.body[0]);
  ms.dst.index[0] = g(0) + lv(0);
  EXPECT_EQ(verify(k),
            (Errors{"memset at kernels/scale.py:6:5 dst: loop variable used outside its loop"}));

  // A loop var that no loop defines.
  Kernel k2 = sample_kernel();
  first_in_loop(k2).srcs[0].index[0] = g(0) + lv(1);
  EXPECT_EQ(verify(k2),
            (Errors{"load at kernels/scale.py:8:11 src: loop variable used outside its loop"}));

  // After the loop closes, its var is out of scope again.
  Kernel k3 = sample_kernel();
  int ps = 3;
  auto after = inst(Opcode::Memset, {128, 512}, acc(ps, {g(0), g(1) + lv(0)}), {}, at(13, 3));
  after->imms = {1.0};
  k3.body.push_back(std::move(after));
  EXPECT_EQ(verify(k3),
            (Errors{"memset at kernels/scale.py:13:3 dst: loop variable used outside its loop"}));
}

TEST(IrVerifier, ProgramIdOutsideGrid) {
  Kernel k = sample_kernel();
  first_in_loop(k).srcs[0].index[0] = g(0) + pid(1);
  EXPECT_EQ(verify(k), (Errors{"load at kernels/scale.py:8:11 src: program id axis outside the "
                               "launch grid"}));

  Kernel k2 = sample_kernel();
  k2.grid.clear();  // one instance: no program id is valid
  EXPECT_EQ(verify(k2),
            (Errors{"load at kernels/scale.py:8:11 src: program id axis outside the launch grid",
                    "store at kernels/scale.py:12:5 dst: program id axis outside the launch grid"}));
}

TEST(IrVerifier, WrongNumberOfSources) {
  Kernel k = sample_kernel();
  nth_in_loop(k, 3).srcs.pop_back();  // TensorTensor with one source
  EXPECT_EQ(verify(k),
            (Errors{"tensor_tensor at kernels/scale.py:11:5: wrong number of source operands"}));

  Kernel k2 = sample_kernel();
  auto& ms = static_cast<Instruction&>(*k2.body[0]);
  ms.srcs.push_back(acc(2, {g(0), g(1)}));  // Memset takes none
  EXPECT_EQ(verify(k2),
            (Errors{"memset at kernels/scale.py:6:5: wrong number of source operands"}));
}

TEST(IrVerifier, MissingImmediate) {
  Kernel k = sample_kernel();
  nth_in_loop(k, 1).imms.clear();
  EXPECT_EQ(verify(k), (Errors{"tensor_scalar at kernels/scale.py:9:11: missing immediate"}));

  Kernel k2 = sample_kernel();
  static_cast<Instruction&>(*k2.body[0]).imms.clear();
  EXPECT_EQ(verify(k2), (Errors{"memset at kernels/scale.py:6:5: missing immediate"}));
}

// The verifier reads the table's operand forms: a pick (select, tensor_copy_predicated)
// and a gate (dropout) take an immediate for an absent last tile; a shuffle names the
// partitions of both its accesses.
TEST(IrVerifier, OperandFormsOfTheTable) {
  Kernel k;
  k.name = "forms";
  int t = add_tensor(k, "t", {128, 64}, DType::float32, Memory::SBUF, Role::Local);
  int p = add_tensor(k, "p", {128, 64}, DType::uint8, Memory::SBUF, Role::Local);
  const Access tile = acc(t, {g(0), g(1)}), pred = acc(p, {g(0), g(1)});
  k.body.push_back(inst(Opcode::CopyPredicated, {128, 64}, tile, {pred, tile}, at(4, 5)));
  k.body.push_back(inst(Opcode::Dropout, {128, 64}, tile, {tile}, at(5, 5)));
  k.body.push_back(inst(Opcode::StreamShuffle, {128, 64}, tile, {tile}, at(6, 5)));
  EXPECT_EQ(verify(k), (Errors{"tensor_copy_predicated at kernels/scale.py:4:5: missing immediate",
                               "dropout at kernels/scale.py:5:5: missing immediate",
                               "nc_stream_shuffle at kernels/scale.py:6:5: missing immediate",
                               "nc_stream_shuffle at kernels/scale.py:6:5: shuffle without the partitions of dst and src"}));
  auto& copy = static_cast<Instruction&>(*k.body[0]);
  copy.imms = {3.0};
  copy.reverse = true;
  static_cast<Instruction&>(*k.body[1]).imms = {0.5};
  auto& shuffle = static_cast<Instruction&>(*k.body[2]);
  shuffle.imms.assign(32, 255.0);
  shuffle.widths = {128, 128};
  EXPECT_EQ(verify(k), Errors{});
  const std::string text = print(k);
  EXPECT_NE(text.find("t[i0, i1] = tensor_copy_predicated[dve](p[i0, i1], t[i0, i1], 3; reverse_pred)"), std::string::npos)
      << text;
  EXPECT_NE(text.find("t[i0, i1] = dropout[dve](t[i0, i1], 0.5)"), std::string::npos) << text;
  EXPECT_NE(text.find("widths=[128, 128]"), std::string::npos) << text;
}

TEST(IrVerifier, NonPositiveIterationSpace) {
  Kernel k = sample_kernel();
  auto& in = nth_in_loop(k, 1);
  in.shape = {128, 0};
  in.loc = {};
  EXPECT_EQ(verify(k),
            (Errors{"tensor_scalar at <unknown>: iteration space has a non-positive dimension"}));
}

TEST(IrVerifier, StoreDestinationNotInHBM) {
  Kernel k = sample_kernel();
  nth_in_loop(k, 4).dst = acc(2, {g(0), g(1)});  // buf: SBUF
  EXPECT_EQ(verify(k), (Errors{"store at kernels/scale.py:12:5: store destination not in HBM"}));
}

TEST(IrVerifier, LoadDestinationInHBM) {
  Kernel k = sample_kernel();
  first_in_loop(k).dst = acc(1, {g(0), g(1)});  // out: shared HBM
  EXPECT_EQ(verify(k), (Errors{"load at kernels/scale.py:8:11: load destination in HBM"}));

  Kernel k2 = sample_kernel();
  k2.tensors[2].memory = Memory::PrivateHBM;  // buf moved to private HBM
  EXPECT_EQ(verify(k2), (Errors{"load at kernels/scale.py:8:11: load destination in HBM"}));
}

TEST(IrVerifier, DuplicateTensorNames) {
  Kernel k = sample_kernel();
  k.tensors[3].name = "buf";
  EXPECT_EQ(verify(k), (Errors{"tensor name buf is not unique"}));
}

TEST(IrVerifier, OutputNotInHBM) {
  Kernel k = sample_kernel();
  k.tensors[1].memory = Memory::SBUF;
  // The store into `out` is now also illegal.
  EXPECT_EQ(verify(k), (Errors{"output out is not an HBM tensor",
                               "store at kernels/scale.py:12:5: store destination not in HBM"}));
}

TEST(IrVerifier, ZeroStride) {
  Kernel k = sample_kernel();
  static_cast<Loop&>(*k.body[1]).stride = 0;
  EXPECT_EQ(verify(k), (Errors{"loop i has stride 0"}));
}

TEST(IrVerifier, LoopAxisOutOfRange) {
  Kernel k = sample_kernel();
  k.num_axes = 0;
  EXPECT_EQ(verify(k), (Errors{"loop i has axis out of range"}));
}

TEST(IrVerifier, ReusedAxis) {
  Kernel k = sample_kernel();
  auto again = std::make_unique<Loop>();
  again->axis = 0;
  again->name = "j";
  again->ub = 2;
  k.body.push_back(std::move(again));
  EXPECT_EQ(verify(k), (Errors{"loop axis 0 reused"}));
}

TEST(IrVerifier, ReportsEveryProblem) {
  Kernel k = sample_kernel();
  k.tensors[3].name = "a";
  static_cast<Loop&>(*k.body[1]).stride = 0;
  nth_in_loop(k, 1).imms.clear();
  EXPECT_EQ(verify(k), (Errors{"tensor name a is not unique", "loop i has stride 0",
                               "tensor_scalar at kernels/scale.py:9:11: missing immediate"}));
}

}  // namespace
}  // namespace nkic::ir
