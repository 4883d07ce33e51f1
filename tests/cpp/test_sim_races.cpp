// The affine-loop race check (SimOptions::check_races): loop-carried
// dependencies are reported, the standard correct patterns are not.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "ir/IR.h"
#include "sim/Simulator.h"
#include "sim_test_kernels.h"

namespace {

using namespace nkic;
using namespace nkic::sim_test;
using ir::AluOp;
using ir::AxisType;
using ir::DType;
using ir::Memory;
using ir::Opcode;
using ir::NkiError;

const sim::SimOptions kRaces{.check_uninitialized = true, .check_races = true};

ir::Loop& named_loop(KernelBuilder& b, const std::string& name, int64_t lb, int64_t ub,
                     int64_t stride = 1, AxisType type = AxisType::Affine, int line = 10) {
  ir::Loop& l = b.loop(lb, ub, stride, type);
  l.name = name;
  l.loc = {ir::intern_file("kernel.py"), line, 5};
  return l;
}

// Runs and returns the race error ("" when none).
std::string race_error(const ir::Kernel& k, const std::vector<void*>& binds, int* line = nullptr) {
  try {
    sim::simulate(k, binds, kRaces);
  } catch (const NkiError& e) {
    EXPECT_EQ(e.diag().code, "err_unexpected_output_dependencies") << e.diag().message.c_str();
    if (line) *line = e.diag().loc.line;
    return e.diag().message.c_str();
  }
  return "";
}

// acc = x[i] - acc, a TensorTensor writing back into an SBUF tile made outside
// the loop (no associative fold: the order of the iterations changes the result):
// iteration 1 reads what iteration 0 wrote.
struct RunningSum {
  KernelBuilder b;
  int x, out;
  explicit RunningSum(AxisType type) {
    x = b.hbm_in("x", {4, 8}, DType::float32);
    out = b.hbm_out("out", {1, 8}, DType::float32);
    int acc = b.tensor("acc", {1, 8}, DType::float32);
    b.emit(Opcode::Memset, {1, 8}, at2(acc), {}, AluOp::bypass, {0.0});
    ir::Block* body = b.block;
    named_loop(b, "i", 0, 4, 1, type);
    b.emit(Opcode::TensorTensor, {1, 8}, at2(acc), {at(x, {L(0), G(1)}), at2(acc)}, AluOp::subtract);
    b.block = body;
    b.emit(Opcode::Store, {1, 8}, at2(out), {at2(acc)});
  }
};

TEST(SimRaces, LoopCarriedDependencyThroughSbufTile) {
  std::vector<float> vx(32, 1.0f), vo(8);
  RunningSum affine(AxisType::Affine);
  auto binds = bind(affine.b.k, {{affine.x, vx.data()}, {affine.out, vo.data()}});
  int line = 0;
  EXPECT_EQ(race_error(affine.b.k, binds, &line),
            "iteration 1 of affine loop `i` reads tensor `acc` written by iteration 0 (element "
            "[0, 0]); a loop-carried dependency needs nl.sequential_range");
  EXPECT_EQ(line, 10);
  // Unchecked it runs; sequential_range is the fix.
  EXPECT_NO_THROW(sim::simulate(affine.b.k, binds));
  RunningSum seq(AxisType::Sequential);
  EXPECT_EQ(race_error(seq.b.k, bind(seq.b.k, {{seq.x, vx.data()}, {seq.out, vo.data()}})), "");
  EXPECT_EQ(vo, std::vector<float>(8, 0.0f));  // 1 - (1 - (1 - (1 - 0)))
}

TEST(SimRaces, EveryIterationWritingTheSameOutputElement) {
  for (AxisType type : {AxisType::Affine, AxisType::Sequential}) {
    KernelBuilder b;
    int x = b.hbm_in("x", {512, 64}, DType::float32);
    int out = b.hbm_out("out", {128, 64}, DType::float32);
    int t = b.tensor("t", {128, 64}, DType::float32);
    named_loop(b, "i", 2, 11, 3, type, 7);
    b.emit(Opcode::Load, {128, 64}, at2(t), {at(x, {L(0) * 32 + G(0), G(1)})});
    b.emit(Opcode::Store, {128, 64}, at(out, {G(0), G(1)}), {at2(t)});  // not indexed by i
    std::vector<float> vx(512 * 64), vo(128 * 64);
    int line = 0;
    const std::string err = race_error(b.k, bind(b.k, {{x, vx.data()}, {out, vo.data()}}), &line);
    if (type == AxisType::Sequential) {
      EXPECT_EQ(err, "");
      continue;
    }
    EXPECT_EQ(err,
              "iterations 2 and 5 of affine loop `i` both write tensor `out` (element [0, 0]); "
              "index the write by the loop variable or use nl.sequential_range");
    EXPECT_EQ(line, 7);
  }
}

// The standard affine_range patterns: a tile loaded in the body and stored to
// out[i*128 + ...], a loop-invariant tile from before the loop, PSUM
// accumulation into a buffer made outside the loop (through a matmul temp and
// directly), and nested affine loops with a per-iteration PSUM tile.
TEST(SimRaces, CorrectPatternsAreNotFlagged) {
  constexpr int64_t T = 4, R = 32, C = 16;
  KernelBuilder b;
  int x = b.hbm_in("x", {T * R, C}, DType::float32);
  int w = b.hbm_in("w", {R, C}, DType::float32);
  int y = b.hbm_out("y", {T * R, C}, DType::float32);
  int z = b.hbm_out("z", {C, C}, DType::float32);
  int zz = b.hbm_out("zz", {T, T, C, C}, DType::float32);
  int wt = b.tensor("wt", {R, C}, DType::float32);
  int acc = b.tensor("acc", {C, C}, DType::float32, Memory::PSUM);
  int acc2 = b.tensor("acc2", {C, C}, DType::float32, Memory::PSUM);
  int t = b.tensor("t", {R, C}, DType::float32);
  int u = b.tensor("u", {R, C}, DType::float32);
  int mm = b.tensor("mm", {C, C}, DType::float32, Memory::PSUM);
  int ps = b.tensor("ps", {C, C}, DType::float32, Memory::PSUM);
  int res = b.tensor("res", {C, C}, DType::float32);
  ir::Block* top = b.block;
  b.emit(Opcode::Load, {R, C}, at2(wt), {at2(w)});
  b.emit(Opcode::Memset, {C, C}, at2(acc), {}, AluOp::bypass, {0.0});
  b.emit(Opcode::Memset, {C, C}, at2(acc2), {}, AluOp::bypass, {0.0});
  named_loop(b, "i", 0, T);
  const AffineExpr row = L(0) * R + G(0);
  b.emit(Opcode::Load, {R, C}, at2(t), {at(x, {row, G(1)})});
  b.emit(Opcode::TensorTensor, {R, C}, at2(u), {at2(t), at2(wt)}, AluOp::multiply);
  b.emit(Opcode::Store, {R, C}, at(y, {row, G(1)}), {at2(u)});
  const std::vector<ir::Access> mm_srcs = {at(t, {G(0), G(1)}), at(u, {G(0), G(2)})};
  b.emit(Opcode::Matmul, {R, C, C}, at(mm, {G(1), G(2)}), mm_srcs);
  b.emit(Opcode::Copy, {C, C}, at2(acc), {at2(mm)}).accumulate = true;
  b.emit(Opcode::Matmul, {R, C, C}, at(acc2, {G(1), G(2)}), mm_srcs).accumulate = true;
  b.block = top;
  b.emit(Opcode::TensorTensor, {C, C}, at2(res), {at2(acc), at2(acc2)}, AluOp::add);
  b.emit(Opcode::Store, {C, C}, at2(z), {at2(res)});
  // Nested: zz[i2, j] = 1 + sum over k of x-tile k . wt, in a PSUM tile made in j's body.
  named_loop(b, "i2", 0, T);
  named_loop(b, "j", 0, T);
  ir::Block* jbody = b.block;
  b.emit(Opcode::Memset, {C, C}, at2(ps), {}, AluOp::bypass, {0.0});
  named_loop(b, "k", 0, T);
  b.emit(Opcode::Load, {R, C}, at2(t), {at(x, {L(3) * R + G(0), G(1)})});
  b.emit(Opcode::Matmul, {R, C, C}, at(ps, {G(1), G(2)}),
         {at(t, {G(0), G(1)}), at(wt, {G(0), G(2)})})
      .accumulate = true;
  b.block = jbody;
  b.emit(Opcode::TensorScalar, {C, C}, at2(res), {at2(ps)}, AluOp::add, {1.0});
  b.emit(Opcode::Store, {C, C}, at(zz, {L(1), L(2), G(0), G(1)}), {at2(res)});

  std::vector<float> vx(T * R * C), vw(R * C), vy(T * R * C), vz(C * C), vzz(T * T * C * C);
  for (size_t i = 0; i < vx.size(); ++i) vx[i] = static_cast<float>(i % 5) - 2;
  for (size_t i = 0; i < vw.size(); ++i) vw[i] = static_cast<float>(i % 3);
  EXPECT_EQ(
      race_error(
          b.k,
          bind(b.k,
               {{x, vx.data()}, {w, vw.data()}, {y, vy.data()}, {z, vz.data()}, {zz, vzz.data()}})),
      "");
  // PSUM adds each matmul's fp32 sum in loop order.
  auto psum = [&](const std::vector<float>& rhs, bool rhs_per_tile, int64_t m, int64_t n) {
    float total = 0.0f;
    for (int64_t k = 0; k < T; ++k) {
      float sum = 0.0f;
      for (int64_t r = 0; r < R; ++r) {
        const float a = vx[(k * R + r) * C + m];
        sum += a * rhs[(rhs_per_tile ? k * R * C : 0) + r * C + n];
      }
      total += sum;
    }
    return total;
  };
  for (int64_t m = 0; m < C; ++m)
    for (int64_t n = 0; n < C; ++n) {
      EXPECT_EQ(vz[m * C + n], 2 * psum(vy, true, m, n));
      for (int64_t ij = 0; ij < T * T; ++ij)
        ASSERT_EQ(vzz[(ij * C + m) * C + n], psum(vw, false, m, n) + 1.0f);
    }
  for (size_t i = 0; i < vy.size(); ++i) ASSERT_EQ(vy[i], vx[i] * vw[i % (R * C)]) << i;
}

// An on-chip tile made outside the loop and written in place by every
// iteration: fine while only the iterations use it (a body tile looks the
// same), a race once read after the loop.
TEST(SimRaces, OnChipTileWrittenByEveryIterationThenReadAfterTheLoop) {
  for (bool rewrite_first : {false, true}) {
    KernelBuilder b;
    b.k.grid = {2};  // each program instance runs the loop afresh
    int x = b.hbm_in("x", {4, 8}, DType::float32);
    int out = b.hbm_out("out", {4, 8}, DType::float32);
    int last = b.hbm_out("last", {1, 8}, DType::float32);
    int buf = b.tensor("buf", {1, 8}, DType::float32);
    ir::Block* top = b.block;
    named_loop(b, "i", 0, 4, 1, AxisType::Affine, 12);
    b.emit(Opcode::Load, {1, 8}, at2(buf), {at(x, {L(0), G(1)})});
    b.emit(Opcode::Store, {1, 8}, at(out, {L(0), G(1)}), {at2(buf)});
    b.block = top;
    if (rewrite_first) b.emit(Opcode::Memset, {1, 8}, at2(buf), {}, AluOp::bypass, {0.0});
    b.emit(Opcode::Store, {1, 8}, at2(last), {at2(buf)});
    std::vector<float> vx(32), vo(32), vl(8);
    int line = 0;
    const std::string err =
        race_error(b.k, bind(b.k, {{x, vx.data()}, {out, vo.data()}, {last, vl.data()}}), &line);
    if (rewrite_first) {
      EXPECT_EQ(err, "");
      continue;
    }
    EXPECT_EQ(err,
              "tensor `buf` (element [0, 0]) is read after several iterations of affine loop `i` "
              "wrote it, so its value depends on their order; index the write by the loop "
              "variable or use nl.sequential_range");
    EXPECT_EQ(line, 12);
  }
}

// Nested loops: the dependency is reported on the loop it crosses.
TEST(SimRaces, NestedLoopsReportTheLoopTheDependencyCrosses) {
  for (bool inner : {true, false}) {
    KernelBuilder b;
    int x = b.hbm_in("x", {4, 4, 8}, DType::float32);
    int out = b.hbm_out("out", {4, 8}, DType::float32);
    int acc = b.tensor("acc", {1, 8}, DType::float32);
    int row = b.tensor("row", {1, 8}, DType::float32);
    // acc is made in i's body (carried across j), or before the loop (carried across i).
    auto zero_acc = [&] { b.emit(Opcode::Memset, {1, 8}, at2(acc), {}, AluOp::bypass, {0.0}); };
    if (!inner) zero_acc();
    named_loop(b, "i", 0, 4, 1, AxisType::Affine, 3);
    ir::Block* ibody = b.block;
    if (inner) zero_acc();
    named_loop(b, "j", 0, 4, 1, inner ? AxisType::Affine : AxisType::Sequential, 4);
    b.emit(Opcode::Load, {1, 8}, at2(row), {at(x, {L(0), L(1), G(1)})});
    b.emit(Opcode::TensorTensor, {1, 8}, at2(acc), {at2(row), at2(acc)}, AluOp::subtract);
    b.block = ibody;
    b.emit(Opcode::Store, {1, 8}, at(out, {L(0), G(1)}), {at2(acc)});
    std::vector<float> vx(128), vo(32);
    int line = 0;
    const std::string err = race_error(b.k, bind(b.k, {{x, vx.data()}, {out, vo.data()}}), &line);
    if (inner) {
      EXPECT_EQ(err,
                "iteration 1 of affine loop `j` reads tensor `acc` written by iteration 0 "
                "(element [0, 0]); a loop-carried dependency needs nl.sequential_range");
      EXPECT_EQ(line, 4);
    } else {
      EXPECT_EQ(err,
                "iteration 1 of affine loop `i` reads tensor `acc` written by iteration 0 "
                "(element [0, 0]); a loop-carried dependency needs nl.sequential_range");
      EXPECT_EQ(line, 3);
    }
  }
}

// Associative reductions are not loop-carried dependencies (seed 003 §4.1): `+=`
// into SBUF, an add/max/min of a tile into its own operand, and the same op into
// a temporary copied straight back all commute across affine iterations.
TEST(SimRaces, AssociativeAccumulationIntoSbufIsNotARace) {
  enum Form { PlusEquals, OwnOperand, CopiedBack };
  for (Form form : {PlusEquals, OwnOperand, CopiedBack})
    for (AluOp op : {AluOp::add, AluOp::maximum, AluOp::minimum}) {
      if (form == PlusEquals && op != AluOp::add) continue;
      KernelBuilder b;
      int x = b.hbm_in("x", {4, 8}, DType::float32);
      int out = b.hbm_out("out", {1, 8}, DType::float32);
      int acc = b.tensor("acc", {1, 8}, DType::float32);
      int tmp = b.tensor("tmp", {1, 8}, DType::float32);
      int row = b.tensor("row", {1, 8}, DType::float32);
      b.emit(Opcode::Memset, {1, 8}, at2(acc), {}, AluOp::bypass, {0.0});
      ir::Block* body = b.block;
      named_loop(b, "i", 0, 4);
      b.emit(Opcode::Load, {1, 8}, at2(row), {at(x, {L(0), G(1)})});
      if (form == PlusEquals) {
        b.emit(Opcode::Copy, {1, 8}, at2(acc), {at2(row)}).accumulate = true;
      } else if (form == OwnOperand) {
        b.emit(Opcode::TensorTensor, {1, 8}, at2(acc), {at2(row), at2(acc)}, op);
      } else {
        b.emit(Opcode::TensorTensor, {1, 8}, at2(tmp), {at2(acc), at2(row)}, op);
        b.emit(Opcode::Copy, {1, 8}, at2(acc), {at2(tmp)});
      }
      b.block = body;
      b.emit(Opcode::Store, {1, 8}, at2(out), {at2(acc)});
      std::vector<float> vx(32), vo(8);
      for (size_t i = 0; i < vx.size(); ++i) vx[i] = static_cast<float>((i * 5) % 7) - 3;
      EXPECT_EQ(race_error(b.k, bind(b.k, {{x, vx.data()}, {out, vo.data()}})), "") << form << " " << ir::name(op);
      for (int c = 0; c < 8; ++c) {
        float want = 0.0f;
        for (int r = 0; r < 4; ++r)
          want = op == AluOp::add ? want + vx[r * 8 + c]
                 : op == AluOp::maximum ? std::max(want, vx[r * 8 + c]) : std::min(want, vx[r * 8 + c]);
        EXPECT_EQ(vo[c], want) << form << " " << ir::name(op) << " " << c;
      }
    }
}

// Accumulating writes commute, but a plain read of a partial sum other
// iterations contributed to depends on their order, in PSUM and SBUF alike.
TEST(SimRaces, ReadingAPartialSumInsideTheLoop) {
  for (Memory memory : {Memory::PSUM, Memory::SBUF}) {
    KernelBuilder b;
    int x = b.hbm_in("x", {4, 8}, DType::float32);
    int out = b.hbm_out("out", {4, 8}, DType::float32);
    int acc = b.tensor("acc", {1, 8}, DType::float32, memory);
    b.emit(Opcode::Memset, {1, 8}, at2(acc), {}, AluOp::bypass, {0.0});
    named_loop(b, "i", 0, 4);
    b.emit(Opcode::Copy, {1, 8}, at2(acc), {at(x, {L(0), G(1)})}).accumulate = true;
    b.emit(Opcode::Store, {1, 8}, at(out, {L(0), G(1)}), {at2(acc)});
    std::vector<float> vx(32), vo(32);
    EXPECT_EQ(race_error(b.k, bind(b.k, {{x, vx.data()}, {out, vo.data()}})),
              "iteration 1 of affine loop `i` reads tensor `acc` written by iteration 0 (element "
              "[0, 0]); a loop-carried dependency needs nl.sequential_range");
  }
}

}  // namespace
