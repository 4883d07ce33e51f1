// Simulator kernels beyond elementwise ops: TensorReduce, Matmul, Select,
// AffineSelect and Iota, on kernels built directly as IR.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <vector>

#include "ir/IR.h"
#include "sim/Numerics.h"
#include "sim/Simulator.h"
#include "sim_test_kernels.h"

namespace {

using namespace nkic;
using namespace nkic::sim_test;
using ir::AluOp;
using ir::DType;
using ir::Memory;
using ir::Opcode;

// ---- TensorReduce -----------------------------------------------------------

// keepdims-style: dst [P, 1] indexed (i0, 0); the sum adds in row-major order in fp32.
TEST(SimReduce, SumOverFreeAxisAddsSequentiallyInFp32) {
  constexpr int64_t P = 8, F = 3000;  // longer than one compute chunk
  KernelBuilder b;
  int x = b.hbm_in("x", {P, F}, DType::float32);
  int out = b.hbm_out("out", {P, 1}, DType::float32);
  int out16 = b.hbm_out("out16", {P, 1}, DType::bfloat16);
  b.emit(Opcode::TensorReduce, {P, F}, at(out, {G(0), 0}), {at2(x)}, AluOp::add);
  b.emit(Opcode::TensorReduce, {P, F}, at(out16, {G(0), 0}), {at2(x)}, AluOp::add);
  std::vector<float> vx(P * F), vo(P);
  std::vector<uint16_t> v16(P);
  for (int64_t i = 0; i < P * F; ++i) vx[i] = std::sin(0.7f * i) * (1 + i % 13) + 1e-3f * i;
  sim::simulate(b.k, bind(b.k, {{x, vx.data()}, {out, vo.data()}, {out16, v16.data()}}),
                {.check_uninitialized = true});
  for (int64_t r = 0; r < P; ++r) {
    float sum = vx[r * F];
    for (int64_t c = 1; c < F; ++c) sum += vx[r * F + c];
    EXPECT_EQ(vo[r], sum) << "row " << r;
    EXPECT_EQ(v16[r], sim::float_to_bf16(sum)) << "row " << r;
  }
}

// dst [1, F] omits the partition coord: each row folds elementwise into dst.
TEST(SimReduce, OverPartitionAxisFoldsRowsInOrder) {
  constexpr int64_t P = 5, F = 7;
  KernelBuilder b;
  int x = b.hbm_in("x", {P, F}, DType::float32);
  int mx = b.hbm_out("mx", {1, F}, DType::float32);
  int sub = b.hbm_out("sub", {1, F}, DType::float32);
  b.emit(Opcode::TensorReduce, {P, F}, at(mx, {0, G(1)}), {at2(x)}, AluOp::maximum);
  b.emit(Opcode::TensorReduce, {P, F}, at(sub, {0, G(1)}), {at2(x)}, AluOp::subtract);
  std::vector<float> vx(P * F), vm(F), vs(F);
  for (int64_t i = 0; i < P * F; ++i) vx[i] = static_cast<float>((i * 37) % 11) - 5.0f;
  vx[2 * F + 3] = NAN;
  sim::simulate(b.k, bind(b.k, {{x, vx.data()}, {mx, vm.data()}, {sub, vs.data()}}));
  for (int64_t c = 0; c < F; ++c) {
    float m = vx[c], s = vx[c];
    for (int64_t r = 1; r < P; ++r) {
      m = std::max(m, vx[r * F + c]);
      s -= vx[r * F + c];
    }
    if (c == 3) {
      EXPECT_TRUE(std::isnan(vm[c]));
      EXPECT_TRUE(std::isnan(vs[c]));
    } else {
      EXPECT_EQ(vm[c], m) << c;
      EXPECT_EQ(vs[c], s) << c;  // x0 - x1 - x2 ...
    }
  }
}

TEST(SimReduce, AccumulateStartsFromDstAndNegateNegatesTheFold) {
  KernelBuilder b;
  int x = b.hbm_in("x", {2, 4}, DType::float32);
  int acc = b.hbm_out("acc", {2, 1}, DType::float32);
  int neg = b.hbm_out("neg", {2, 1}, DType::float32);
  int both = b.hbm_out("both", {2, 1}, DType::float32);
  b.emit(Opcode::TensorReduce, {2, 4}, at(acc, {G(0), 0}), {at2(x)}, AluOp::subtract).accumulate =
      true;
  b.emit(Opcode::TensorReduce, {2, 4}, at(neg, {G(0), 0}), {at2(x)}, AluOp::add).negate = true;
  ir::Instruction& in =
      b.emit(Opcode::TensorReduce, {2, 4}, at(both, {G(0), 0}), {at2(x)}, AluOp::maximum);
  in.accumulate = true;
  in.negate = true;
  std::vector<float> vx = {1, 2, 3, 4, -1, -2, -3, -4};
  std::vector<float> va = {100, 200}, vn = {7, 7}, vb = {2.5f, -10};
  sim::simulate(b.k,
                bind(b.k, {{x, vx.data()}, {acc, va.data()}, {neg, vn.data()}, {both, vb.data()}}));
  EXPECT_EQ(va, (std::vector<float>{100 - 1 - 2 - 3 - 4, 200 + 1 + 2 + 3 + 4}));
  EXPECT_EQ(vn, (std::vector<float>{-10, 10}));
  EXPECT_EQ(vb, (std::vector<float>{-4, 1}));  // -max(2.5, 1..4), -max(-10, -1..-4)
}

TEST(SimReduce, MaskedPointsDoNotContributeAndEmptyRowsStayUntouched) {
  constexpr int64_t P = 6, F = 10;
  KernelBuilder b;
  int x = b.hbm_in("x", {P, F}, DType::float32);
  int box = b.hbm_out("box", {P, 1}, DType::float32);
  int tri = b.hbm_out("tri", {P, 1}, DType::float32);
  // Rows below 4, columns from 2: rows 4 and 5 keep their value.
  b.emit(Opcode::TensorReduce, {P, F}, at(box, {G(0), 0}), {at2(x)}, AluOp::add).predicate = {
      ge(AffineExpr(3) - G(0)), ge(G(1) - 2)};
  // Columns up to the row: a multi-var constraint.
  b.emit(Opcode::TensorReduce, {P, F}, at(tri, {G(0), 0}), {at2(x)}, AluOp::multiply).predicate = {
      ge(G(0) - G(1))};
  std::vector<float> vx(P * F), vbox(P, -1.0f), vtri(P, -1.0f);
  for (int64_t i = 0; i < P * F; ++i) vx[i] = 1.0f + static_cast<float>(i % 7) / 4;
  sim::simulate(b.k, bind(b.k, {{x, vx.data()}, {box, vbox.data()}, {tri, vtri.data()}}));
  for (int64_t r = 0; r < P; ++r) {
    float s = vx[r * F + 2], p = vx[r * F];
    for (int64_t c = 3; c < F; ++c) s += vx[r * F + c];
    for (int64_t c = 1; c <= r; ++c) p *= vx[r * F + c];
    EXPECT_EQ(vbox[r], r < 4 ? s : -1.0f) << r;
    EXPECT_EQ(vtri[r], p) << r;
  }
}

// Bitwise folds work on the integers' bits (values beyond fp32's exact range).
TEST(SimReduce, BitvecFoldsAreExactIntegers) {
  KernelBuilder b;
  int x = b.hbm_in("x", {2, 3}, DType::int32);
  int u = b.hbm_in("u", {1, 4}, DType::uint8);
  int o_or = b.hbm_out("o_or", {2, 1}, DType::int32);
  int o_and = b.hbm_out("o_and", {2, 1}, DType::int32);
  int o_xor = b.hbm_out("o_xor", {1, 1}, DType::uint8);
  int o_xacc = b.hbm_out("o_xacc", {1, 1}, DType::uint8);
  b.emit(Opcode::TensorReduce, {2, 3}, at(o_or, {G(0), 0}), {at2(x)}, AluOp::bitwise_or);
  b.emit(Opcode::TensorReduce, {2, 3}, at(o_and, {G(0), 0}), {at2(x)}, AluOp::bitwise_and);
  b.emit(Opcode::TensorReduce, {1, 4}, at(o_xor, {0, 0}), {at2(u)}, AluOp::bitwise_xor);
  b.emit(Opcode::TensorReduce, {1, 4}, at(o_xacc, {0, 0}), {at2(u)}, AluOp::bitwise_xor)
      .accumulate = true;
  std::vector<int32_t> vx = {0x01000001, 0x00000010, 0x40000000, -1, 0x7ffffffe, -0x10000};
  std::vector<uint8_t> vu = {0x81, 0x03, 0xf0, 0x0f};
  std::vector<int32_t> vor(2), vand(2);
  std::vector<uint8_t> vxor(1), vxacc = {0xff};
  sim::simulate(b.k, bind(b.k, {{x, vx.data()},
                                {u, vu.data()},
                                {o_or, vor.data()},
                                {o_and, vand.data()},
                                {o_xor, vxor.data()},
                                {o_xacc, vxacc.data()}}));
  EXPECT_EQ(vor, (std::vector<int32_t>{0x41000011, -1}));
  EXPECT_EQ(vand, (std::vector<int32_t>{0, 0x7fff0000}));
  EXPECT_EQ(vxor[0], 0x81 ^ 0x03 ^ 0xf0 ^ 0x0f);
  EXPECT_EQ(vxacc[0], 0xff ^ 0x81 ^ 0x03 ^ 0xf0 ^ 0x0f);
}

TEST(SimReduce, LogicalFoldsOnTruthValues) {
  KernelBuilder b;
  int x = b.hbm_in("x", {4, 3}, DType::float32);
  int all = b.hbm_out("all", {4, 1}, DType::float32);
  int any = b.hbm_out("any", {4, 1}, DType::bool_);
  b.emit(Opcode::TensorReduce, {4, 3}, at(all, {G(0), 0}), {at2(x)}, AluOp::logical_and);
  b.emit(Opcode::TensorReduce, {4, 3}, at(any, {G(0), 0}), {at2(x)}, AluOp::logical_or);
  std::vector<float> vx = {5, -2, 0.5f, 0, 0, 0, NAN, 3, 1, 0, 7, 0};
  std::vector<float> vall(4);
  std::vector<uint8_t> vany(4);
  sim::simulate(b.k, bind(b.k, {{x, vx.data()}, {all, vall.data()}, {any, vany.data()}}));
  EXPECT_EQ(vall, (std::vector<float>{1, 0, 1, 0}));
  EXPECT_EQ(vany, (std::vector<uint8_t>{1, 0, 1, 1}));
}

TEST(SimReduce, RejectsOpsThatDoNotFold) {
  KernelBuilder b;
  int x = b.tensor("x", {2, 4}, DType::float32);
  int o = b.tensor("o", {2, 1}, DType::float32);
  b.emit(Opcode::TensorReduce, {2, 4}, at(o, {G(0), 0}), {at2(x)}, AluOp::divide);
  EXPECT_THROW(sim::simulate(b.k, {}), std::invalid_argument);
}

// ---- Matmul -------------------------------------------------------------------

// stationary [K, M] and moving [K, N] loaded from HBM, dst [M, N] in PSUM.
struct MatmulKernel {
  KernelBuilder b;
  int s, v, out, ps;
  MatmulKernel(int64_t K, int64_t M, int64_t N, DType in_dt) {
    s = b.hbm_in("s", {K, M}, in_dt);
    v = b.hbm_in("v", {K, N}, in_dt);
    out = b.hbm_out("out", {M, N}, DType::float32);
    ps = b.tensor("ps", {M, N}, DType::float32, Memory::PSUM);
  }
  ir::Instruction& matmul(int64_t K, int64_t M, int64_t N) {
    return b.emit(Opcode::Matmul, {K, M, N}, at(ps, {G(1), G(2)}),
                  {at(s, {G(0), G(1)}), at(v, {G(0), G(2)})});
  }
  void store(int64_t M, int64_t N) { b.emit(Opcode::Store, {M, N}, at2(out), {at2(ps)}); }
};

TEST(SimMatmul, Fp32MatchesSequentialFloatReferenceExactly) {
  constexpr int64_t K = 128, M = 128, N = 512;
  MatmulKernel mk(K, M, N, DType::float32);
  mk.matmul(K, M, N);
  mk.store(M, N);
  std::vector<float> vs(K * M), vv(K * N), vo(M * N);
  for (int64_t i = 0; i < K * M; ++i) vs[i] = std::sin(0.37f * i) * 3;
  for (int64_t i = 0; i < K * N; ++i) vv[i] = std::cos(0.011f * i) * (1 + i % 5);
  auto binds = bind(mk.b.k, {{mk.s, vs.data()}, {mk.v, vv.data()}, {mk.out, vo.data()}});
  sim::simulate(mk.b.k, binds);

  double worst = 0;
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      float f = 0.0f;
      double d = 0.0, mag = 0.0;
      for (int64_t k = 0; k < K; ++k) {
        const float prod = vs[k * M + m] * vv[k * N + n];
        f += prod;
        d += static_cast<double>(vs[k * M + m]) * vv[k * N + n];
        mag += std::fabs(static_cast<double>(vs[k * M + m]) * vv[k * N + n]);
      }
      ASSERT_EQ(vo[m * N + n], f) << m << "," << n;
      worst = std::max(worst, std::fabs(vo[m * N + n] - d) / mag);
    }
  EXPECT_LT(worst, 1e-5);

  // Timed on its own: one instruction over the whole [K, M, N] space.
  MatmulKernel only(K, M, N, DType::float32);
  only.matmul(K, M, N);
  auto only_binds = bind(only.b.k, {{only.s, vs.data()}, {only.v, vv.data()}});
  sim::simulate(only.b.k, only_binds);
  double best = 1e9;
  for (int rep = 0; rep < 5; ++rep) {
    auto t0 = std::chrono::steady_clock::now();
    sim::simulate(only.b.k, only_binds);
    best = std::min(
        best,
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::printf("[ timing ] matmul 128x128x512 fp32: %.3f ms\n", best);
  EXPECT_LT(best, 50.0);  // well under 1 ms on a current x86-64; loose for slow CI machines
}

TEST(SimMatmul, Bf16InputsAccumulateIntoPsumAcrossALoop) {
  constexpr int64_t K = 32, M = 8, N = 24, T = 3;
  KernelBuilder b;
  int s = b.hbm_in("s", {T * K, M}, DType::bfloat16);
  int v = b.hbm_in("v", {T * K, N}, DType::bfloat16);
  int out = b.hbm_out("out", {M, N}, DType::bfloat16);
  int ps = b.tensor("ps", {M, N}, DType::float32, Memory::PSUM);
  b.emit(Opcode::Memset, {M, N}, at2(ps), {}, AluOp::bypass, {0.25});
  ir::Block* body = &b.k.body;
  b.loop(0, T);
  b.emit(Opcode::Matmul, {K, M, N}, at(ps, {G(1), G(2)}),
         {at(s, {L(0) * K + G(0), G(1)}), at(v, {L(0) * K + G(0), G(2)})})
      .accumulate = true;
  b.block = body;
  b.emit(Opcode::Store, {M, N}, at2(out), {at2(ps)});
  std::vector<uint16_t> vs(T * K * M), vv(T * K * N), vo(M * N);
  for (size_t i = 0; i < vs.size(); ++i) vs[i] = sim::float_to_bf16(std::sin(1.3f * i));
  for (size_t i = 0; i < vv.size(); ++i) vv[i] = sim::float_to_bf16(std::cos(0.7f * i) * 2);
  sim::simulate(b.k, bind(b.k, {{s, vs.data()}, {v, vv.data()}, {out, vo.data()}}),
                {.check_uninitialized = true, .check_races = true});
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      float acc = 0.25f;
      for (int64_t t = 0; t < T; ++t) {
        float sum = 0.0f;
        for (int64_t k = 0; k < K; ++k) {
          const int64_t kk = t * K + k;
          sum += sim::bf16_to_float(vs[kk * M + m]) * sim::bf16_to_float(vv[kk * N + n]);
        }
        acc += sum;  // PSUM adds each matmul's sum
      }
      ASSERT_EQ(vo[m * N + n], sim::float_to_bf16(acc)) << m << "," << n;
    }
}

// Reference: the masked-in products of each (m, n), in increasing k, onto `init`.
std::vector<float> masked_reference(const std::vector<float>& vs, const std::vector<float>& vv,
                                    int64_t K, int64_t M, int64_t N, float init,
                                    bool (*keep)(int64_t, int64_t, int64_t)) {
  std::vector<float> r(M * N, init);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      float sum = 0.0f;
      bool any = false;
      for (int64_t k = 0; k < K; ++k)
        if (keep(k, m, n)) {
          sum += vs[k * M + m] * vv[k * N + n];
          any = true;
        }
      if (any) r[m * N + n] = sum;
    }
  return r;
}

TEST(SimMatmul, MasksRestrictEachCoordinate) {
  constexpr int64_t K = 20, M = 9, N = 21;
  struct Case {
    ir::Predicate mask;
    bool (*keep)(int64_t, int64_t, int64_t);
    int64_t inf_k, inf_m;  // a masked-out stationary element: inf * 0 must not show as NaN
  };
  const Case cases[] = {
      // Single-var constraints: a box.
      {{ge(AffineExpr(11) - G(0)), ge(G(1) - 2), ge(AffineExpr(16) - G(2)), ge(G(2) - 3)},
       [](int64_t k, int64_t m, int64_t n) { return k <= 11 && m >= 2 && n <= 16 && n >= 3; },
       15,
       3},
      // Multi-var: causal over (k, m), and a band over (m, n) leaving (m, n) untouched.
      {{ge(G(0) - G(1)), ge(AffineExpr(4) - G(2) + G(1)), ge(G(2) - G(1))},
       [](int64_t k, int64_t m, int64_t n) { return k >= m && n - m <= 4 && n >= m; },
       0,
       5},
  };
  for (const Case& c : cases) {
    std::vector<float> vs(K * M), vv(K * N);
    for (int64_t i = 0; i < K * M; ++i) vs[i] = static_cast<float>(i % 9) - 4;
    for (int64_t i = 0; i < K * N; ++i) vv[i] = static_cast<float>(i % 7) * 0.5f;
    vs[c.inf_k * M + c.inf_m] = INFINITY;
    MatmulKernel mk(K, M, N, DType::float32);
    mk.b.emit(Opcode::Memset, {M, N}, at2(mk.ps), {}, AluOp::bypass, {-3.0});
    mk.matmul(K, M, N).predicate = c.mask;
    mk.store(M, N);
    std::vector<float> vo(M * N);
    sim::simulate(mk.b.k,
                  bind(mk.b.k, {{mk.s, vs.data()}, {mk.v, vv.data()}, {mk.out, vo.data()}}));
    EXPECT_EQ(vo, masked_reference(vs, vv, K, M, N, -3.0f, c.keep));
  }
}

// A transposed stationary read (x[i1, i0]) and a moving tile wider than one panel.
TEST(SimMatmul, StridedOperandsAndRaggedPanels) {
  constexpr int64_t K = 7, M = 5, N = 19;
  KernelBuilder b;
  int x = b.hbm_in("x", {M, K}, DType::float16);
  int y = b.hbm_in("y", {K, N}, DType::float32);
  int out = b.hbm_out("out", {M, N}, DType::float32);
  b.emit(Opcode::Matmul, {K, M, N}, at(out, {G(1), G(2)}),
         {at(x, {G(1), G(0)}), at(y, {G(0), G(2)})});
  std::vector<uint16_t> vx(M * K);
  std::vector<float> vy(K * N), vo(M * N);
  for (size_t i = 0; i < vx.size(); ++i) vx[i] = sim::float_to_fp16(0.3f * i - 2);
  for (size_t i = 0; i < vy.size(); ++i) vy[i] = 1.0f / (1 + i);
  sim::simulate(b.k, bind(b.k, {{x, vx.data()}, {y, vy.data()}, {out, vo.data()}}));
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      float sum = 0.0f;
      for (int64_t k = 0; k < K; ++k) sum += sim::fp16_to_float(vx[m * K + k]) * vy[k * N + n];
      EXPECT_EQ(vo[m * N + n], sum);
    }
}

TEST(SimMatmul, RejectsOperandsOnTheWrongCoordinates) {
  KernelBuilder b;
  int s = b.tensor("s", {4, 4}, DType::float32);
  int v = b.tensor("v", {4, 4}, DType::float32);
  int o = b.tensor("o", {4, 4}, DType::float32, Memory::PSUM);
  b.emit(Opcode::Matmul, {4, 4, 4}, at(o, {G(1), G(2)}),
         {at(s, {G(0), G(2)}), at(v, {G(0), G(2)})});
  EXPECT_THROW(sim::simulate(b.k, {}), std::invalid_argument);
}

// ---- Select, AffineSelect, Iota ---------------------------------------------

TEST(SimSelect, TensorOrImmediateOnFalse) {
  KernelBuilder b;
  int c = b.hbm_in("c", {6}, DType::float32);
  int x = b.hbm_in("x", {6}, DType::int32);
  int y = b.hbm_in("y", {6}, DType::int32);
  int o3 = b.hbm_out("o3", {6}, DType::int32);
  int o2 = b.hbm_out("o2", {6}, DType::bfloat16);
  auto g = [](int t) { return at(t, {G(0)}); };
  b.emit(Opcode::Select, {6}, g(o3), {g(c), g(x), g(y)});
  b.emit(Opcode::Select, {6}, g(o2), {g(c), g(x)}, AluOp::bypass, {-0.5});
  std::vector<float> vc = {1, 0, -2, NAN, 0, 0.25f};
  // Beyond fp32's exact integers: the all-integer select is exact.
  std::vector<int32_t> vx = {16777217, 2, 3, 4, 5, 6}, vy = {-1, -16777217, -3, -4, -5, -6};
  std::vector<int32_t> v3(6);
  std::vector<uint16_t> v2(6);
  sim::simulate(
      b.k,
      bind(b.k,
           {{c, vc.data()}, {x, vx.data()}, {y, vy.data()}, {o3, v3.data()}, {o2, v2.data()}}));
  EXPECT_EQ(v3, (std::vector<int32_t>{16777217, -16777217, 3, 4, -5, 6}));
  const float expect2[] = {16777216, -0.5f, 3, 4, -0.5f, 6};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(v2[i], sim::float_to_bf16(expect2[i])) << i;
}

// cond false writes the immediate; the predicate's masked-out points stay untouched.
TEST(SimSelect, AffineSelectConditionVersusPredicate) {
  constexpr int64_t R = 6, F = 8;
  KernelBuilder b;
  b.k.grid = {2};
  int x = b.hbm_in("x", {R, F}, DType::float32);
  int out = b.hbm_out("out", {2, R, F}, DType::float32);
  int t = b.tensor("t", {R, F}, DType::float32);
  b.emit(Opcode::Memset, {R, F}, at2(t), {}, AluOp::bypass, {7.0});
  ir::Instruction& in =
      b.emit(Opcode::AffineSelect, {R, F}, at2(t), {at2(x)}, AluOp::bypass, {-1e9});
  in.cond = {ge(G(0) - G(1) + P(0))};  // causal, shifted by the program id
  in.predicate = {ge(AffineExpr(F - 2) - G(1))};
  b.emit(Opcode::Store, {R, F}, at(out, {P(0), G(0), G(1)}), {at2(t)});
  std::vector<float> vx(R * F), vo(2 * R * F);
  for (int64_t i = 0; i < R * F; ++i) vx[i] = static_cast<float>(i);
  sim::simulate(b.k, bind(b.k, {{x, vx.data()}, {out, vo.data()}}), {.check_uninitialized = true});
  for (int64_t pid = 0; pid < 2; ++pid)
    for (int64_t r = 0; r < R; ++r)
      for (int64_t c = 0; c < F; ++c) {
        const float expect = c > F - 2 ? 7.0f : r - c + pid >= 0 ? vx[r * F + c] : -1e9f;
        ASSERT_EQ(vo[(pid * R + r) * F + c], expect) << pid << "," << r << "," << c;
      }
}

TEST(SimIota, ExactValuesRoundOnceOnStore) {
  KernelBuilder b;
  int i32 = b.hbm_out("i32", {2, 4, 3}, DType::int32);
  int f32 = b.hbm_out("f32", {2, 4, 3}, DType::float32);
  int bf = b.hbm_out("bf", {2, 4, 3}, DType::bfloat16);
  int i8 = b.hbm_out("i8", {2, 4, 3}, DType::int8);
  b.loop(0, 2);
  const AffineExpr value =
      G(0) * 16777216 + G(1) * 100 - 150 + L(0) * 3;  // beyond fp32's exact range
  for (int t : {i32, f32, bf, i8}) {
    ir::Instruction& in = b.emit(Opcode::Iota, {4, 3}, at(t, {L(0), G(0), G(1)}));
    in.value = value;
  }
  std::vector<int32_t> v32(24);
  std::vector<float> vf(24);
  std::vector<uint16_t> vb(24);
  std::vector<int8_t> v8(24);
  sim::simulate(b.k,
                bind(b.k, {{i32, v32.data()}, {f32, vf.data()}, {bf, vb.data()}, {i8, v8.data()}}));
  for (int64_t l = 0; l < 2; ++l)
    for (int64_t r = 0; r < 4; ++r)
      for (int64_t c = 0; c < 3; ++c) {
        const int64_t i = (l * 4 + r) * 3 + c;
        const int64_t v = r * 16777216 + c * 100 - 150 + l * 3;
        EXPECT_EQ(v32[i], v);
        EXPECT_EQ(vf[i], static_cast<float>(v));
        EXPECT_EQ(vb[i], sim::float_to_bf16(static_cast<float>(v)));  // as store_element rounds
        EXPECT_EQ(v8[i], std::clamp<int64_t>(v, -128, 127));
      }
}

}  // namespace
