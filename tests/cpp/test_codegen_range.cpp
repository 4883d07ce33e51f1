// Range lowering (seed 003): codegen::normalize_range_args (range-like
// arguments -> lb, ub, stride, tripcount), extract_loop_directives (loop
// pragmas -> axis attrs) and KernelBuilder::create_affine_axis_block, the one
// place a deferred loop becomes an axis (Affine or Sequential attribute on the
// same Loop node; insert_before must be None; axes numbered in creation order).
#include <gtest/gtest.h>

#include "diagnostic_test_util.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "codegen/KernelBuilder.h"
#include "codegen/Range.h"
#include "ir/IR.h"
#include "ir/IRPrinter.h"
#include "sema/Diagnostic.h"
#include "sema/Target.h"

namespace nkic::codegen {
namespace {

using Attrs = std::vector<std::pair<std::string, std::string>>;

// Python's len(range(lb, ub, stride)), counted by stepping.
int64_t python_len(int64_t lb, int64_t ub, int64_t stride) {
  int64_t n = 0;
  if (stride > 0)
    for (int64_t v = lb; v < ub; v += stride) ++n;
  else
    for (int64_t v = lb; v > ub; v += stride) ++n;
  return n;
}

using test_util::diagnostic_of;

void expect_range(const RangeArgs& r, int64_t lb, int64_t ub, int64_t stride, int64_t tripcount) {
  EXPECT_EQ(r.lb, lb);
  EXPECT_EQ(r.ub, ub);
  EXPECT_EQ(r.stride, stride);
  EXPECT_EQ(r.tripcount, tripcount);
}

// ---------------------------------------------------------------- normalize_range_args

TEST(NormalizeRangeArgs, StopOnly) {
  expect_range(normalize_range_args({5}), 0, 5, 1, 5);
  expect_range(normalize_range_args({1}), 0, 1, 1, 1);
  expect_range(normalize_range_args({0}), 0, 0, 1, 0);
  expect_range(normalize_range_args({-3}), 0, -3, 1, 0);
}

TEST(NormalizeRangeArgs, StartStop) {
  expect_range(normalize_range_args({2, 6}), 2, 6, 1, 4);
  expect_range(normalize_range_args({-3, 2}), -3, 2, 1, 5);
  expect_range(normalize_range_args({3, 4}), 3, 4, 1, 1);
  expect_range(normalize_range_args({3, 3}), 3, 3, 1, 0);
  expect_range(normalize_range_args({6, 2}), 6, 2, 1, 0);
}

TEST(NormalizeRangeArgs, StartStopStep) {
  expect_range(normalize_range_args({1, 10, 3}), 1, 10, 3, 3);   // 1, 4, 7
  expect_range(normalize_range_args({0, 9, 3}), 0, 9, 3, 3);     // 0, 3, 6
  expect_range(normalize_range_args({0, 10, 3}), 0, 10, 3, 4);   // 0, 3, 6, 9
  expect_range(normalize_range_args({0, 7, 7}), 0, 7, 7, 1);
  expect_range(normalize_range_args({0, 7, 100}), 0, 7, 100, 1);
  expect_range(normalize_range_args({-3, 4, 2}), -3, 4, 2, 4);   // -3, -1, 1, 3
  expect_range(normalize_range_args({5, 1, 2}), 5, 1, 2, 0);
}

TEST(NormalizeRangeArgs, NegativeStep) {
  expect_range(normalize_range_args({6, 0, -2}), 6, 0, -2, 3);    // 6, 4, 2
  expect_range(normalize_range_args({7, 0, -2}), 7, 0, -2, 4);    // 7, 5, 3, 1
  expect_range(normalize_range_args({3, -1, -1}), 3, -1, -1, 4);  // 3, 2, 1, 0
  expect_range(normalize_range_args({10, -10, -7}), 10, -10, -7, 3);  // 10, 3, -4
  expect_range(normalize_range_args({0, 5, -1}), 0, 5, -1, 0);    // empty
  expect_range(normalize_range_args({2, 2, -1}), 2, 2, -1, 0);
  expect_range(normalize_range_args({2, 1, -5}), 2, 1, -5, 1);
}

TEST(NormalizeRangeArgs, TripcountMatchesPythonRangeLength) {
  for (int64_t lb = -7; lb <= 7; ++lb)
    for (int64_t ub = -7; ub <= 7; ++ub)
      for (int64_t stride : {-9, -4, -3, -2, -1, 1, 2, 3, 4, 9}) {
        RangeArgs r = normalize_range_args({lb, ub, stride});
        EXPECT_EQ(r.tripcount, python_len(lb, ub, stride)) << lb << ", " << ub << ", " << stride;
        EXPECT_EQ(r.lb, lb);
        EXPECT_EQ(r.ub, ub);
        EXPECT_EQ(r.stride, stride);
        // The IR's Loop computes the same tripcount from the same bounds.
        ir::Loop l;
        l.lb = lb;
        l.ub = ub;
        l.stride = stride;
        EXPECT_EQ(l.tripcount(), r.tripcount) << lb << ", " << ub << ", " << stride;
      }
}

TEST(NormalizeRangeArgs, LargeBounds) {
  expect_range(normalize_range_args({int64_t{1} << 40}), 0, int64_t{1} << 40, 1, int64_t{1} << 40);
  expect_range(normalize_range_args({0, 1000000, 128}), 0, 1000000, 128, 7813);
}

TEST(NormalizeRangeArgs, ZeroStepIsAnError) {
  for (std::vector<int64_t> args : {std::vector<int64_t>{0, 4, 0}, std::vector<int64_t>{5, 0, 0},
                                    std::vector<int64_t>{3, 3, 0}}) {
    sema::Diagnostic d = diagnostic_of([&] { normalize_range_args(args); });
    EXPECT_EQ(d.code, "err_invalid_range_args");
    EXPECT_EQ(d.message, "range() step must not be zero");
    EXPECT_EQ(d.kind, sema::ErrorKind::Value);  // Python: ValueError: range() arg 3 must not be zero
  }
}

TEST(NormalizeRangeArgs, WrongArgumentCountIsAnError) {
  for (std::vector<int64_t> args : {std::vector<int64_t>{}, std::vector<int64_t>{0, 1, 2, 3}}) {
    sema::Diagnostic d = diagnostic_of([&] { normalize_range_args(args); });
    EXPECT_EQ(d.code, "err_invalid_range_args");
    EXPECT_NE(d.message.find("expected 1 to 3 range arguments"), std::string::npos) << d.message;
    EXPECT_NE(d.message.find("got " + std::to_string(args.size())), std::string::npos) << d.message;
    EXPECT_EQ(d.kind, sema::ErrorKind::Type);  // Python: TypeError, as range() itself
  }
}

// ---------------------------------------------------------------- extract_loop_directives

TEST(ExtractLoopDirectives, NoneGivesNoAttrs) { EXPECT_TRUE(extract_loop_directives({}).empty()); }

TEST(ExtractLoopDirectives, SortedByKind) {
  Attrs a = extract_loop_directives({{"no_reorder", "true"}, {"multi_buffer", "2"}});
  EXPECT_EQ(a, (Attrs{{"multi_buffer", "2"}, {"no_reorder", "true"}}));
  Attrs b = extract_loop_directives({{"multi_buffer", "2"}, {"no_reorder", "true"}});
  EXPECT_EQ(a, b);  // the order the user wrote them in does not matter
  Attrs c = extract_loop_directives({{"pipeline_stages", "3"}, {"no_reorder", "true"}, {"multi_buffer", "4"}});
  EXPECT_EQ(c, (Attrs{{"multi_buffer", "4"}, {"no_reorder", "true"}, {"pipeline_stages", "3"}}));
}

TEST(ExtractLoopDirectives, DedupedByKindLastWins) {
  Attrs a = extract_loop_directives({{"multi_buffer", "2"}, {"no_reorder", "true"}, {"multi_buffer", "4"}});
  EXPECT_EQ(a, (Attrs{{"multi_buffer", "4"}, {"no_reorder", "true"}}));
  Attrs b = extract_loop_directives({{"no_reorder", "true"}, {"no_reorder", "true"}});
  EXPECT_EQ(b, (Attrs{{"no_reorder", "true"}}));
}

// ---------------------------------------------------------------- create_affine_axis_block

const std::string* kFile = ir::intern_file("kernels/loops.py");

struct Builder {
  KernelBuilder b{"k", sema::default_target()};
  int line = 1;
  Builder() {
    b.location_provider = [this] { return ir::SourceLoc{kFile, line, 5}; };
  }
  AxisBlockArgs args(std::string name, int64_t lb, int64_t ub, int64_t stride = 1,
                     ir::AxisType type = ir::AxisType::Affine, Attrs attrs = {}) {
    AxisBlockArgs a;
    a.loop_name_id = std::move(name);
    a.lb = lb;
    a.ub = ub;
    a.stride = stride;
    a.parent = b.innermost_loop();
    a.axis_type = type;
    a.attrs = std::move(attrs);
    return a;
  }
  // A Memset of t[g0, g1 + off*loopvar(axis)] (an instruction in the current block).
  void memset(int t, int axis, int64_t off, int64_t cols) {
    auto in = std::make_unique<ir::Instruction>();
    in->opcode = ir::Opcode::Memset;
    in->shape = {128, cols};
    in->dst.tensor = t;
    ir::AffineExpr col = ir::AffineExpr::grid(1);
    if (axis >= 0) col = col + ir::AffineExpr::var({ir::VarKind::Loop, axis}, off);
    in->dst.index = {ir::AffineExpr::grid(0), col};
    in->imms = {0.0};
    b.emit(std::move(in));
  }
};

const ir::Loop& as_loop(const ir::StmtPtr& s) {
  EXPECT_EQ(s->kind, ir::StmtKind::Loop);
  return static_cast<const ir::Loop&>(*s);
}

TEST(CreateAffineAxisBlock, OpensOneAxisWithTheRangeAndType) {
  Builder t;
  t.line = 12;
  ir::Loop& l = t.b.create_affine_axis_block(t.args("i", 2, 10, 3, ir::AxisType::Affine));
  EXPECT_EQ(l.axis, 0);
  EXPECT_EQ(l.name, "i");
  EXPECT_EQ(l.lb, 2);
  EXPECT_EQ(l.ub, 10);
  EXPECT_EQ(l.stride, 3);
  EXPECT_EQ(l.tripcount(), 3);
  EXPECT_EQ(l.type, ir::AxisType::Affine);
  EXPECT_TRUE(l.attrs.empty());
  EXPECT_TRUE(l.body.empty());
  EXPECT_EQ(l.loc.file, kFile);
  EXPECT_EQ(l.loc.line, 12);
  EXPECT_EQ(t.b.innermost_loop(), &l);
  EXPECT_TRUE(t.b.in_loop());
  EXPECT_EQ(t.b.kernel().num_axes, 1);
  ASSERT_EQ(t.b.kernel().body.size(), 1u);
  EXPECT_EQ(&as_loop(t.b.kernel().body[0]), &l);
  t.b.close_loop();
  EXPECT_EQ(t.b.innermost_loop(), nullptr);
  EXPECT_FALSE(t.b.in_loop());
}

TEST(CreateAffineAxisBlock, SequentialIsTheSameNodeWithAnotherAttribute) {
  Builder t;
  ir::Loop& a = t.b.create_affine_axis_block(t.args("i", 0, 4, 1, ir::AxisType::Affine));
  t.b.close_loop();
  ir::Loop& s = t.b.create_affine_axis_block(t.args("j", 0, 4, 1, ir::AxisType::Sequential));
  t.b.close_loop();
  EXPECT_EQ(a.kind, ir::StmtKind::Loop);
  EXPECT_EQ(s.kind, ir::StmtKind::Loop);
  EXPECT_EQ(a.type, ir::AxisType::Affine);
  EXPECT_EQ(s.type, ir::AxisType::Sequential);
  EXPECT_STREQ(ir::name(a.type), "Affine");
  EXPECT_STREQ(ir::name(s.type), "Sequential");
  std::string text = ir::print(t.b.kernel(), {false});
  EXPECT_NE(text.find("for i in affine_range(0, 4, 1)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("for j in sequential_range(0, 4, 1)\n"), std::string::npos) << text;
}

TEST(CreateAffineAxisBlock, AttrsAreCarriedAndPrinted) {
  Builder t;
  Attrs attrs = extract_loop_directives({{"no_reorder", "true"}, {"multi_buffer", "2"}});
  ir::Loop& l = t.b.create_affine_axis_block(t.args("i", 0, 8, 1, ir::AxisType::Affine, attrs));
  t.b.close_loop();
  EXPECT_EQ(l.attrs, (Attrs{{"multi_buffer", "2"}, {"no_reorder", "true"}}));
  std::string text = ir::print(t.b.kernel(), {false});
  EXPECT_NE(text.find("for i in affine_range(0, 8, 1) multi_buffer=2 no_reorder=true\n"), std::string::npos)
      << text;
}

TEST(CreateAffineAxisBlock, NegativeStrideIsKept) {
  Builder t;
  RangeArgs r = normalize_range_args({6, -2, -2});
  ir::Loop& l = t.b.create_affine_axis_block(t.args("i", r.lb, r.ub, r.stride));
  EXPECT_EQ(l.tripcount(), 4);  // 6, 4, 2, 0
  int x = t.b.add_tensor("x", {128, 8}, ir::DType::float32, ir::Memory::SBUF, ir::Role::Local);
  t.memset(x, l.axis, 1, 2);  // columns g1 + i, i in [0, 6]: 0..7, in bounds
  t.b.close_loop();
  std::string text = ir::print(t.b.kernel(), {false});
  EXPECT_NE(text.find("for i in affine_range(6, -2, -2)\n"), std::string::npos) << text;
}

TEST(CreateAffineAxisBlock, AxesAreNumberedInCreationOrderAndNamesAreUnique) {
  Builder t;
  ir::Loop& a = t.b.create_affine_axis_block(t.args("i", 0, 2));
  ir::Loop& b = t.b.create_affine_axis_block(t.args("j", 0, 3));
  t.b.close_loop();
  t.b.close_loop();
  ir::Loop& c = t.b.create_affine_axis_block(t.args("i", 0, 4));
  t.b.close_loop();
  ir::Loop& d = t.b.create_affine_axis_block(t.args("", 0, 5));
  t.b.close_loop();
  EXPECT_EQ(a.axis, 0);
  EXPECT_EQ(b.axis, 1);
  EXPECT_EQ(c.axis, 2);
  EXPECT_EQ(d.axis, 3);
  EXPECT_EQ(t.b.kernel().num_axes, 4);
  EXPECT_EQ(a.name, "i");
  EXPECT_EQ(b.name, "j");
  EXPECT_NE(c.name, "i");  // a second loop named i gets its own name
  EXPECT_EQ(c.name.rfind("i", 0), 0u) << c.name;
  EXPECT_FALSE(d.name.empty());  // an unnamed loop (no Name target) still has a name
  EXPECT_NE(d.name, a.name);
  EXPECT_NE(d.name, c.name);
}

TEST(CreateAffineAxisBlock, NestingAppendsToTheEnclosingBody) {
  Builder t;
  int x = t.b.add_tensor("x", {128, 64}, ir::DType::float32, ir::Memory::SBUF, ir::Role::Local);
  t.memset(x, -1, 0, 64);                                               // kernel level
  ir::Loop& outer = t.b.create_affine_axis_block(t.args("i", 0, 4));    // affine outer
  t.memset(x, outer.axis, 16, 16);                                      // in outer
  AxisBlockArgs ia = t.args("j", 0, 2, 1, ir::AxisType::Sequential);
  EXPECT_EQ(ia.parent, &outer);
  ir::Loop& inner = t.b.create_affine_axis_block(ia);                   // sequential inner
  EXPECT_EQ(t.b.innermost_loop(), &inner);
  t.memset(x, inner.axis, 8, 8);                                        // in inner
  t.memset(x, inner.axis, 8, 8);
  t.b.close_loop();
  EXPECT_EQ(t.b.innermost_loop(), &outer);
  t.memset(x, outer.axis, 16, 16);                                      // back in outer
  t.b.close_loop();
  EXPECT_EQ(t.b.innermost_loop(), nullptr);
  t.memset(x, -1, 0, 64);                                               // kernel level again
  EXPECT_EQ(t.b.num_instructions(), 6);

  const ir::Block& body = t.b.kernel().body;
  ASSERT_EQ(body.size(), 3u);
  EXPECT_EQ(body[0]->kind, ir::StmtKind::Instruction);
  EXPECT_EQ(&as_loop(body[1]), &outer);
  EXPECT_EQ(body[2]->kind, ir::StmtKind::Instruction);
  ASSERT_EQ(outer.body.size(), 3u);
  EXPECT_EQ(outer.body[0]->kind, ir::StmtKind::Instruction);
  EXPECT_EQ(&as_loop(outer.body[1]), &inner);
  EXPECT_EQ(outer.body[2]->kind, ir::StmtKind::Instruction);
  ASSERT_EQ(inner.body.size(), 2u);
  EXPECT_EQ(inner.type, ir::AxisType::Sequential);
  EXPECT_EQ(outer.type, ir::AxisType::Affine);

  std::string text = ir::print(t.b.kernel(), {false});
  size_t fo = text.find("\n  for i in affine_range(0, 4, 1)\n");
  size_t fi = text.find("\n    for j in sequential_range(0, 2, 1)\n");
  EXPECT_NE(fo, std::string::npos) << text;
  EXPECT_NE(fi, std::string::npos) << text;
  EXPECT_LT(fo, fi);
}

TEST(CreateAffineAxisBlock, InsertBeforeMustBeNone) {
  Builder t;
  t.line = 33;
  int x = t.b.add_tensor("x", {128, 64}, ir::DType::float32, ir::Memory::SBUF, ir::Role::Local);
  t.memset(x, -1, 0, 64);
  AxisBlockArgs a = t.args("i", 0, 4);
  a.insert_before = t.b.kernel().body[0].get();
  sema::Diagnostic d = diagnostic_of([&] { t.b.create_affine_axis_block(a); });
  EXPECT_EQ(d.message, "unexpected case in create affine axis block, insert before should be None");
  EXPECT_EQ(d.kind, sema::ErrorKind::Assertion);
  EXPECT_EQ(d.loc.file, kFile);
  EXPECT_EQ(d.loc.line, 33);
  // Nothing was created.
  EXPECT_EQ(t.b.kernel().num_axes, 0);
  EXPECT_EQ(t.b.kernel().body.size(), 1u);
  EXPECT_EQ(t.b.innermost_loop(), nullptr);
}

TEST(CreateAffineAxisBlock, ParentMustBeTheInnermostAxis) {
  Builder t;
  const std::string sentinel = "unexpected case in create affine axis block, insert before should be None";
  ir::Loop& outer = t.b.create_affine_axis_block(t.args("i", 0, 4));
  AxisBlockArgs a = t.args("j", 0, 2);
  a.parent = nullptr;  // claims kernel level while the builder is inside `i`
  EXPECT_EQ(diagnostic_of([&] { t.b.create_affine_axis_block(a); }).message, sentinel);
  EXPECT_EQ(t.b.kernel().num_axes, 1);
  EXPECT_TRUE(outer.body.empty());
  EXPECT_EQ(t.b.innermost_loop(), &outer);

  ir::Loop& inner = t.b.create_affine_axis_block(t.args("j", 0, 2));
  t.b.close_loop();
  AxisBlockArgs b = t.args("k", 0, 2);
  b.parent = &inner;  // a closed sibling is not the enclosing axis
  EXPECT_EQ(diagnostic_of([&] { t.b.create_affine_axis_block(b); }).message, sentinel);
  t.b.close_loop();

  AxisBlockArgs c = t.args("k", 0, 2);
  c.parent = &outer;  // kernel level again, but names a closed loop as parent
  EXPECT_EQ(diagnostic_of([&] { t.b.create_affine_axis_block(c); }).message, sentinel);
  EXPECT_EQ(t.b.kernel().num_axes, 2);
}

TEST(CreateAffineAxisBlock, LoopVariableRangeBoundsAccesses) {
  // The axis's [lb, ub) with its stride is the range the static bound check
  // gives the loop variable: t[g0, g1 + 16*i] with 16 columns and i < 4 fits
  // 64 columns; with i < 5 it does not.
  Builder t;
  int x = t.b.add_tensor("x", {128, 64}, ir::DType::float32, ir::Memory::SBUF, ir::Role::Local);
  ir::Loop& ok = t.b.create_affine_axis_block(t.args("i", 0, 4));
  t.memset(x, ok.axis, 16, 16);
  t.b.close_loop();
  ir::Loop& bad = t.b.create_affine_axis_block(t.args("j", 0, 5));
  sema::Diagnostic d = diagnostic_of([&] { t.memset(x, bad.axis, 16, 16); });
  EXPECT_EQ(d.code, "err_tensor_access_out_of_bound") << d.message;
  t.b.close_loop();
  ir::Loop& strided = t.b.create_affine_axis_block(t.args("k", 0, 5, 2));  // k = 0, 2, 4: columns up to 15 + 48
  t.memset(x, strided.axis, 12, 16);
  t.b.close_loop();
}

}  // namespace
}  // namespace nkic::codegen
