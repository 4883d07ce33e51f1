// Simulator tests: SPMD instances, loops, masks, access patterns and the
// diagnostics, on kernels built directly as IR.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
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
using ir::NkiError;

TEST(Sim, SpmdAddFp16WithProgramIds) {
  KernelBuilder b;
  b.k.grid = {2, 4};
  int a = b.hbm_in("a", {128, 64}, DType::float16);
  int c = b.hbm_in("b", {128, 64}, DType::float16);
  int out = b.hbm_out("out", {128, 64}, DType::float16);
  int sa = b.tensor("sa", {16, 64}, DType::float32);
  int sb = b.tensor("sb", {16, 64}, DType::float32);
  int sc = b.tensor("sc", {16, 64}, DType::float32);
  AffineExpr row = P(0) * 64 + P(1) * 16 + G(0);
  b.emit(Opcode::Load, {16, 64}, at2(sa), {at(a, {row, G(1)})});
  b.emit(Opcode::Load, {16, 64}, at2(sb), {at(c, {row, G(1)})});
  b.emit(Opcode::TensorTensor, {16, 64}, at2(sc), {at2(sa), at2(sb)}, AluOp::add);
  b.emit(Opcode::Store, {16, 64}, at(out, {row, G(1)}), {at2(sc)});

  std::vector<uint16_t> va(128 * 64), vb(128 * 64), vo(128 * 64, 0);
  for (size_t i = 0; i < va.size(); ++i) {
    va[i] = sim::float_to_fp16(std::sin(0.37f * i) * 100.0f);
    vb[i] = sim::float_to_fp16(std::cos(0.11f * i) * 3.3f);
  }
  sim::simulate(b.k, bind(b.k, {{a, va.data()}, {c, vb.data()}, {out, vo.data()}}),
                {.check_uninitialized = true});
  for (size_t i = 0; i < vo.size(); ++i) {
    float sum = sim::fp16_to_float(va[i]) + sim::fp16_to_float(vb[i]);
    ASSERT_EQ(vo[i], sim::float_to_fp16(sum)) << "element " << i;
  }
}

TEST(Sim, MaskedRaggedTilesInAffineLoop) {
  constexpr int64_t n = 1000, cols = 64;
  KernelBuilder b;
  int x = b.hbm_in("x", {n, cols}, DType::float32);
  int out = b.hbm_out("out", {1024, cols}, DType::float32);
  int t = b.tensor("t", {128, cols}, DType::float32);
  int u = b.tensor("u", {128, cols}, DType::float32);
  b.loop(0, 8);
  AffineExpr row = L(0) * 128 + G(0);
  ir::Predicate mask = {ge(AffineExpr(n - 1) - row)};
  b.emit(Opcode::Load, {128, cols}, at2(t), {at(x, {row, G(1)})}).predicate = mask;
  b.emit(Opcode::TensorScalar, {128, cols}, at2(u), {at2(t)}, AluOp::multiply, {3.0}).predicate =
      mask;
  b.emit(Opcode::Store, {128, cols}, at(out, {row, G(1)}), {at2(u)}).predicate = mask;

  std::vector<float> vx(n * cols), vo(1024 * cols, -7.0f);
  for (size_t i = 0; i < vx.size(); ++i) vx[i] = static_cast<float>(i % 977) * 0.5f;
  sim::simulate(b.k, bind(b.k, {{x, vx.data()}, {out, vo.data()}}), {.check_uninitialized = true});
  for (int64_t i = 0; i < 1024 * cols; ++i) {
    float expect = i < n * cols ? vx[i] * 3.0f : -7.0f;
    ASSERT_EQ(vo[i], expect) << "row " << i / cols;
  }
}

TEST(Sim, MultiGridVarConstraintCausalTriangle) {
  KernelBuilder b;
  int src = b.hbm_in("src", {64, 64}, DType::float32);
  int tri = b.hbm_out("tri", {64, 64}, DType::float32);
  int shifted = b.hbm_out("shifted", {64, 64}, DType::float32);
  b.emit(Opcode::Memset, {64, 64}, at2(tri), {}, AluOp::bypass, {1.0}).predicate = {
      ge(G(1) - G(0))};
  // src[i0, i1 - i0] is out of bounds over the box but not where i1 >= i0.
  b.emit(Opcode::Copy, {64, 64}, at2(shifted), {at(src, {G(0), G(1) - G(0)})}).predicate = {
      ge(G(1) - G(0))};

  std::vector<float> vs(64 * 64), vt(64 * 64, -1.0f), vh(64 * 64, -1.0f);
  for (size_t i = 0; i < vs.size(); ++i) vs[i] = static_cast<float>(i);
  sim::simulate(b.k, bind(b.k, {{src, vs.data()}, {tri, vt.data()}, {shifted, vh.data()}}));
  for (int r = 0; r < 64; ++r)
    for (int c = 0; c < 64; ++c) {
      ASSERT_EQ(vt[r * 64 + c], c >= r ? 1.0f : -1.0f);
      ASSERT_EQ(vh[r * 64 + c], c >= r ? vs[r * 64 + (c - r)] : -1.0f);
    }

  // One column further, the masked region includes index -1.
  b.k.body.pop_back();
  b.emit(Opcode::Copy, {64, 64}, at2(shifted), {at(src, {G(0), G(1) - G(0)})}).predicate = {
      ge(G(1) - G(0) + 1)};
  try {
    sim::simulate(b.k, bind(b.k, {{src, vs.data()}, {tri, vt.data()}, {shifted, vh.data()}}));
    FAIL() << "expected an out-of-bound error";
  } catch (const NkiError& e) {
    EXPECT_EQ(e.diag().code, "err_tensor_access_out_of_bound");
    EXPECT_STREQ(e.diag().message.c_str(),
                 "Out-of-bound access for tensor `src` on dimension 1: index range [-1, 63] exceed "
                 "dimension size of 64");
  }
}

TEST(Sim, EqConstraints) {
  KernelBuilder b;
  int out = b.hbm_out("out", {8, 16}, DType::float32);
  b.emit(Opcode::Memset, {8, 16}, at2(out), {}, AluOp::bypass, {0.0});
  b.emit(Opcode::Memset, {8, 16}, at2(out), {}, AluOp::bypass, {1.0}).predicate = {eq(G(1) - 3)};
  b.emit(Opcode::Memset, {8, 16}, at2(out), {}, AluOp::bypass, {2.0}).predicate = {eq(G(0) - G(1))};
  b.emit(Opcode::Memset, {8, 16}, at2(out), {}, AluOp::bypass, {4.0}).predicate = {
      eq(G(0) * 2 - 5)};
  b.loop(0, 8);
  b.emit(Opcode::Memset, {1, 16}, at(out, {L(0), G(1)}), {}, AluOp::bypass, {5.0}).predicate = {
      eq(L(0) - 6), ge(G(1) - 14)};

  std::vector<float> vo(8 * 16, -1.0f);
  sim::simulate(b.k, bind(b.k, {{out, vo.data()}}));
  for (int r = 0; r < 8; ++r)
    for (int c = 0; c < 16; ++c) {
      float expect = r == 6 && c >= 14 ? 5.0f : r == c ? 2.0f : c == 3 ? 1.0f : 0.0f;
      ASSERT_EQ(vo[r * 16 + c], expect) << r << "," << c;
    }
}

TEST(Sim, AccumulateRoundsOnceToDst) {
  KernelBuilder b;
  int x = b.hbm_in("x", {4, 8}, DType::float32);
  int out = b.hbm_out("out", {1, 8}, DType::float32);
  int out16 = b.hbm_out("out16", {1, 8}, DType::bfloat16);
  int acc = b.tensor("acc", {1, 8}, DType::float32, Memory::PSUM);
  int acc16 = b.tensor("acc16", {1, 8}, DType::bfloat16, Memory::PSUM);
  b.emit(Opcode::Memset, {1, 8}, at2(acc), {}, AluOp::bypass, {0.5});
  b.emit(Opcode::Memset, {1, 8}, at2(acc16), {}, AluOp::bypass, {1.0});
  ir::Block* body = &b.k.body;
  b.loop(0, 4);
  b.emit(Opcode::TensorScalar, {1, 8}, at2(acc), {at(x, {L(0), G(1)})}, AluOp::multiply, {2.0})
      .accumulate = true;
  b.emit(Opcode::Copy, {1, 8}, at2(acc16), {at(x, {L(0), G(1)})}).accumulate = true;
  b.block = body;
  b.emit(Opcode::Store, {1, 8}, at2(out), {at2(acc)});
  b.emit(Opcode::Store, {1, 8}, at2(out16), {at2(acc16)});

  std::vector<float> vx(32), vo(8);
  std::vector<uint16_t> v16(8);
  for (int i = 0; i < 32; ++i) vx[i] = 0.25f * i + 1.0f / 1024;
  sim::simulate(b.k, bind(b.k, {{x, vx.data()}, {out, vo.data()}, {out16, v16.data()}}),
                {.check_uninitialized = true});
  for (int c = 0; c < 8; ++c) {
    float sum = 0.5f;
    uint16_t s16 = sim::float_to_bf16(1.0f);
    for (int r = 0; r < 4; ++r) {
      sum += vx[r * 8 + c] * 2.0f;
      s16 = sim::float_to_bf16(sim::bf16_to_float(s16) + vx[r * 8 + c]);
    }
    EXPECT_EQ(vo[c], sum);
    EXPECT_EQ(v16[c], s16);
  }
}

TEST(Sim, TensorScalarReverse) {
  KernelBuilder b;
  int x = b.hbm_in("x", {1, 4}, DType::float32);
  int o1 = b.hbm_out("o1", {1, 4}, DType::float32);
  int o2 = b.hbm_out("o2", {1, 4}, DType::float32);
  int o3 = b.hbm_out("o3", {1, 4}, DType::float32);
  b.emit(Opcode::TensorScalar, {1, 4}, at2(o1), {at2(x)}, AluOp::subtract, {10.0});
  b.emit(Opcode::TensorScalar, {1, 4}, at2(o2), {at2(x)}, AluOp::subtract, {10.0}).reverse = true;
  b.emit(Opcode::TensorScalar, {1, 4}, at2(o3), {at2(x)}, AluOp::divide, {1.0}).reverse = true;
  std::vector<float> vx = {1, 2, 4, -8}, v1(4), v2(4), v3(4);
  sim::simulate(b.k,
                bind(b.k, {{x, vx.data()}, {o1, v1.data()}, {o2, v2.data()}, {o3, v3.data()}}));
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(v1[i], vx[i] - 10.0f);
    EXPECT_EQ(v2[i], 10.0f - vx[i]);
    EXPECT_EQ(v3[i], 1.0f / vx[i]);
  }
}

// ---- diagnostics ------------------------------------------------------------

TEST(Sim, OutOfBoundAccessThrowsWithNkiMessage) {
  KernelBuilder b;
  int x = b.hbm_in("x", {128, 4000}, DType::float32);
  int t = b.tensor("t", {128, 4096}, DType::float32);
  ir::Instruction& ld = b.emit(Opcode::Load, {128, 4096}, at2(t), {at2(x)});
  ld.loc = {ir::intern_file("kernel.py"), 42, 9};
  std::vector<float> vx(128 * 4000, 1.0f);
  try {
    sim::simulate(b.k, bind(b.k, {{x, vx.data()}}));
    FAIL() << "expected a simulation diagnostic";
  } catch (const NkiError& e) {
    EXPECT_EQ(e.diag().code, "err_tensor_access_out_of_bound");
    EXPECT_STREQ(e.diag().message.c_str(),
                 "Out-of-bound access for tensor `x` on dimension 1: index range [0, 4095] exceed "
                 "dimension size of 4000");
    EXPECT_EQ(e.diag().loc.line, 42);
    EXPECT_EQ(e.diag().loc.col, 9);
  }
  // The mask that fixes it.
  ld.predicate = {ge(AffineExpr(3999) - G(1))};
  EXPECT_NO_THROW(sim::simulate(b.k, bind(b.k, {{x, vx.data()}})));
}

TEST(Sim, UninitializedReadDetection) {
  KernelBuilder b;
  b.k.grid = {2};
  int out = b.hbm_out("out", {2, 128, 8}, DType::float32);
  int t = b.tensor("t", {128, 8}, DType::float32);
  ir::Instruction& set = b.emit(Opcode::Memset, {128, 8}, at2(t), {}, AluOp::bypass, {2.0});
  set.predicate = {ge(AffineExpr(63) - G(0))};
  b.emit(Opcode::Store, {128, 8}, at(out, {P(0), G(0), G(1)}), {at2(t)});
  std::vector<float> vo(2 * 128 * 8);

  // Unchecked, the unwritten half reads as the NaN fill.
  sim::simulate(b.k, bind(b.k, {{out, vo.data()}}));
  EXPECT_EQ(vo[0], 2.0f);
  EXPECT_TRUE(std::isnan(vo[64 * 8]));

  try {
    sim::simulate(b.k, bind(b.k, {{out, vo.data()}}), {.check_uninitialized = true});
    FAIL() << "expected a simulation diagnostic";
  } catch (const NkiError& e) {
    EXPECT_EQ(e.diag().code, "err_read_uninitialized_memory");
    EXPECT_NE(std::string(e.diag().message.c_str()).find("tensor `t`"), std::string::npos) << e.diag().message.c_str();
    EXPECT_NE(std::string(e.diag().message.c_str()).find("[64, 0]"), std::string::npos) << e.diag().message.c_str();
  }

  // Written in full, but only by instance 0: instance 1 starts fresh.
  set.predicate = {eq(P(0))};
  try {
    sim::simulate(b.k, bind(b.k, {{out, vo.data()}}), {.check_uninitialized = true});
    FAIL() << "expected a simulation diagnostic";
  } catch (const NkiError& e) {
    EXPECT_EQ(e.diag().code, "err_read_uninitialized_memory");
  }
  set.predicate.clear();
  EXPECT_NO_THROW(sim::simulate(b.k, bind(b.k, {{out, vo.data()}}), {.check_uninitialized = true}));
}

// Fresh memory is filled lazily, on first touch, and skipped when that first
// touch overwrites the whole tensor: what is never written still reads as NaN.
TEST(Sim, FreshMemoryPerInstanceWithLazyFill) {
  KernelBuilder b;
  b.k.grid = {2};
  int out = b.hbm_out("out", {2, 4, 8}, DType::float32);
  int out2 = b.hbm_out("out2", {2, 4, 8}, DType::float32);
  int t = b.tensor("t", {4, 8}, DType::float32);
  int u = b.tensor("u", {4, 8}, DType::float32);
  // Instance 0 writes all of t; instance 1 only rows 0 and 1.
  b.emit(Opcode::Memset, {4, 8}, at2(t), {}, AluOp::bypass, {1.0}).predicate = {eq(P(0))};
  b.emit(Opcode::Memset, {4, 8}, at2(t), {}, AluOp::bypass, {2.0}).predicate = {
      ge(P(0) - 1), ge(AffineExpr(1) - G(0))};
  b.emit(Opcode::Store, {4, 8}, at(out, {P(0), G(0), G(1)}), {at2(t)});
  // u's first touch reads it: in place, over all of it.
  b.emit(Opcode::TensorScalar, {4, 8}, at2(u), {at2(u)}, AluOp::add, {1.0});
  b.emit(Opcode::Store, {4, 8}, at(out2, {P(0), G(0), G(1)}), {at2(u)});
  std::vector<float> vo(64), vo2(64);
  sim::simulate(b.k, bind(b.k, {{out, vo.data()}, {out2, vo2.data()}}));
  for (int i = 0; i < 32; ++i) EXPECT_EQ(vo[i], 1.0f) << i;
  for (int i = 32; i < 48; ++i) EXPECT_EQ(vo[i], 2.0f) << i;
  for (int i = 48; i < 64; ++i) EXPECT_TRUE(std::isnan(vo[i])) << i;
  for (int i = 0; i < 64; ++i) EXPECT_TRUE(std::isnan(vo2[i])) << i;
}

// Fills and index writes have a destination and no source: the elementwise executor
// must read only the accesses an instruction has (under the asan preset, a read of a
// missing source access aborts). Each writes straight into HBM and into SBUF.
TEST(Sim, DestinationOnlyInstructionsReadNoSource) {
  KernelBuilder b;
  int filled = b.hbm_out("filled", {4, 8}, DType::float32);
  int counted = b.hbm_out("counted", {4, 8}, DType::int32);
  int via_sbuf = b.hbm_out("via_sbuf", {4, 8}, DType::bfloat16);
  int t = b.tensor("t", {4, 8}, DType::bfloat16);
  b.emit(Opcode::Memset, {4, 8}, at2(filled), {}, AluOp::bypass, {-3.5});
  b.emit(Opcode::Iota, {4, 8}, at2(counted)).value = G(0) * 8 + G(1);
  b.emit(Opcode::Memset, {4, 8}, at2(t), {}, AluOp::bypass, {1.25});
  b.emit(Opcode::Store, {4, 8}, at2(via_sbuf), {at2(t)});
  std::vector<float> vf(32);
  std::vector<int32_t> vi(32);
  std::vector<uint16_t> vb(32);
  sim::simulate(b.k, bind(b.k, {{filled, vf.data()}, {counted, vi.data()}, {via_sbuf, vb.data()}}));
  for (int i = 0; i < 32; ++i) {
    EXPECT_EQ(vf[i], -3.5f) << i;
    EXPECT_EQ(vi[i], i) << i;
    EXPECT_EQ(vb[i], sim::float_to_bf16(1.25f)) << i;
  }
}

TEST(Sim, MalformedKernelIsRejected) {
  KernelBuilder b;
  int t = b.tensor("t", {4}, DType::float32);
  b.emit(Opcode::Copy, {4}, at(t, {G(0)}), {at(t, {G(0), G(1)})});
  EXPECT_THROW(sim::simulate(b.k, {}), std::invalid_argument);

  // A unary op where the opcode takes two operands.
  KernelBuilder c;
  int u = c.tensor("u", {4}, DType::float32);
  c.emit(Opcode::TensorTensor, {4}, at(u, {G(0)}), {at(u, {G(0)}), at(u, {G(0)})}, AluOp::exp);
  EXPECT_THROW(sim::simulate(c.k, {}), std::invalid_argument);
}

// ---- control flow and layout ------------------------------------------------

TEST(Sim, SequentialLoopWithNegativeStride) {
  KernelBuilder b;
  int digits = b.hbm_in("digits", {8}, DType::float32);
  int out = b.hbm_out("out", {1}, DType::float32);
  int acc = b.tensor("acc", {1}, DType::float32);
  b.emit(Opcode::Memset, {1}, at(acc, {G(0)}), {}, AluOp::bypass, {0.0});
  ir::Block* body = &b.k.body;
  b.loop(7, -1, -2, ir::AxisType::Sequential);
  b.emit(Opcode::TensorScalar, {1}, at(acc, {G(0)}), {at(acc, {G(0)})}, AluOp::multiply, {10.0});
  b.emit(Opcode::TensorTensor, {1}, at(acc, {G(0)}), {at(acc, {G(0)}), at(digits, {L(0)})},
         AluOp::add);
  b.block = body;
  b.emit(Opcode::Store, {1}, at(out, {G(0)}), {at(acc, {G(0)})});
  std::vector<float> vd = {0, 1, 2, 3, 4, 5, 6, 7}, vo(1);
  sim::simulate(b.k, bind(b.k, {{digits, vd.data()}, {out, vo.data()}}),
                {.check_uninitialized = true});
  EXPECT_EQ(vo[0], 7531.0f);  // iterations 7, 5, 3, 1 in that order
}

TEST(Sim, TransposeBroadcastAndInPlaceShift) {
  KernelBuilder b;
  int x = b.hbm_in("x", {4, 6}, DType::float32);
  int bias = b.hbm_in("bias", {4}, DType::float32);
  int xt = b.hbm_out("xt", {6, 4}, DType::float32);
  int xb = b.hbm_out("xb", {4, 6}, DType::float32);
  int sh = b.hbm_out("sh", {8}, DType::float32);
  b.emit(Opcode::Copy, {4, 6}, at(xt, {G(1), G(0)}), {at2(x)});
  b.emit(Opcode::TensorTensor, {4, 6}, at2(xb), {at2(x), at(bias, {G(0)})}, AluOp::add);
  // sh[i+1] = sh[i] reads the whole source before writing, as one tile op does.
  b.emit(Opcode::Copy, {7}, at(sh, {G(0) + 1}), {at(sh, {G(0)})});
  std::vector<float> vx(24), vb = {100, 200, 300, 400}, vt(24), vxb(24),
                             vs = {0, 1, 2, 3, 4, 5, 6, 7};
  for (int i = 0; i < 24; ++i) vx[i] = static_cast<float>(i);
  sim::simulate(
      b.k,
      bind(
          b.k,
          {{x, vx.data()}, {bias, vb.data()}, {xt, vt.data()}, {xb, vxb.data()}, {sh, vs.data()}}));
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 6; ++c) {
      EXPECT_EQ(vt[c * 4 + r], vx[r * 6 + c]);
      EXPECT_EQ(vxb[r * 6 + c], vx[r * 6 + c] + vb[r]);
    }
  EXPECT_EQ(vs, (std::vector<float>{0, 0, 1, 2, 3, 4, 5, 6}));
}

// Longer than one compute chunk, so reading after writing would show.
TEST(Sim, BindingsSharingMemoryReadBeforeWrite) {
  constexpr int64_t n = 5000;
  KernelBuilder b;
  int x = b.hbm_in("x", {n}, DType::float32);
  int o = b.hbm_out("o", {n}, DType::float32);
  b.emit(Opcode::TensorTensor, {n - 1}, at(o, {G(0) + 1}), {at(x, {G(0)}), at(x, {G(0) + 1})},
         AluOp::add);
  std::vector<float> buf(n);
  for (int64_t i = 0; i < n; ++i) buf[i] = static_cast<float>(i);
  sim::simulate(b.k, bind(b.k, {{x, buf.data()}, {o, buf.data()}}));
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(buf[i], i == 0 ? 0.0f : static_cast<float>(2 * i - 1)) << i;
}

TEST(Sim, LargeTileAndNarrowFormats) {
  constexpr int64_t P = 128, F = 512;
  KernelBuilder b;
  int x = b.hbm_in("x", {P, F}, DType::bfloat16);
  int y = b.hbm_in("y", {P, F}, DType::float32);
  int o = b.hbm_out("o", {P, F}, DType::float8_e4m3);
  int s = b.tensor("s", {P, F}, DType::float32);
  b.emit(Opcode::TensorTensor, {P, F}, at2(s), {at2(x), at2(y)}, AluOp::multiply);
  b.emit(Opcode::Store, {P, F}, at2(o), {at2(s)});
  std::vector<uint16_t> vx(P * F);
  std::vector<float> vy(P * F);
  std::vector<uint8_t> vo(P * F);
  for (int64_t i = 0; i < P * F; ++i) {
    vx[i] = sim::float_to_bf16(std::sin(0.01f * i) * 8);
    vy[i] = std::cos(0.003f * i) * 4;
  }
  sim::simulate(b.k, bind(b.k, {{x, vx.data()}, {y, vy.data()}, {o, vo.data()}}));
  for (int64_t i = 0; i < P * F; ++i)
    ASSERT_EQ(vo[i], sim::float_to_fp8_e4m3(sim::bf16_to_float(vx[i]) * vy[i])) << i;
}

// Two chained collectives over a [2, 3] grid: the second consumes the first's
// result, so the replay needs three passes; inputs are restored between them.
TEST(Sim, AllReduceGroupsByProgramAxes) {
  KernelBuilder b;
  b.k.grid = {2, 3};
  int x = b.hbm_in("x", {6, 4}, DType::float32);
  int out = b.hbm_out("out", {6, 4}, DType::float32);
  int t = b.tensor("t", {1, 4}, DType::float32);
  int s = b.tensor("s", {1, 4}, DType::float32);
  int m = b.tensor("m", {1, 4}, DType::float32);
  AffineExpr row = P(0) * 3 + P(1);
  b.emit(Opcode::Load, {1, 4}, at2(t), {at(x, {row, G(1)})});
  b.emit(Opcode::AllReduce, {1, 4}, at2(s), {at2(t)}, AluOp::add, {1});
  b.emit(Opcode::AllReduce, {1, 4}, at2(m), {at2(s)}, AluOp::maximum, {0});
  b.emit(Opcode::Store, {1, 4}, at(out, {row, G(1)}), {at2(m)});

  std::vector<float> vx(24), vo(24, 0.0f);
  for (size_t i = 0; i < vx.size(); ++i) vx[i] = static_cast<float>((i * 7) % 11);
  sim::simulate(b.k, bind(b.k, {{x, vx.data()}, {out, vo.data()}}), {});
  for (int c = 0; c < 4; ++c) {
    float sums[2] = {0, 0};
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j) sums[i] += vx[(i * 3 + j) * 4 + c];
    for (int r = 0; r < 6; ++r) ASSERT_EQ(vo[r * 4 + c], std::max(sums[0], sums[1])) << r << "," << c;
  }
}

}  // namespace
