// Simulator numerics: every AluOp against a scalar reference, the integer and
// bitwise paths, bool, and rounding to narrow formats (via sim/Numerics).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
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
using ir::Opcode;

// ---- every AluOp against a scalar reference -------------------------------

double sigmoid_ref(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double softplus_ref(double x) { return std::log1p(std::exp(x)); }

// Reference for the float path, computed in double.
double float_ref(AluOp op, double a, double b) {
  switch (op) {
    case AluOp::bypass: return a;
    case AluOp::add: return a + b;
    case AluOp::subtract: return a - b;
    case AluOp::multiply: return a * b;
    case AluOp::divide: return a / b;
    case AluOp::maximum: return std::max(a, b);
    case AluOp::minimum: return std::min(a, b);
    case AluOp::abs_max: return std::fabs(a) > std::fabs(b) ? a : b;
    case AluOp::abs_min: return std::fabs(a) < std::fabs(b) ? a : b;
    case AluOp::prelu: return a < 0 ? a * b : a;
    case AluOp::power: return std::pow(a, b);
    case AluOp::mod: return a - b * std::floor(a / b);
    case AluOp::fmod: return std::fmod(a, b);
    case AluOp::equal: return a == b;
    case AluOp::not_equal: return a != b;
    case AluOp::greater: return a > b;
    case AluOp::greater_equal: return a >= b;
    case AluOp::less: return a < b;
    case AluOp::less_equal: return a <= b;
    case AluOp::logical_and: return a != 0 && b != 0;
    case AluOp::logical_or: return a != 0 || b != 0;
    case AluOp::logical_xor: return (a != 0) != (b != 0);
    case AluOp::logical_not: return a == 0;
    case AluOp::abs: return std::fabs(a);
    case AluOp::negative: return -a;
    case AluOp::sign: return a > 0 ? 1 : a < 0 ? -1 : 0;
    case AluOp::trunc: return std::trunc(a);
    case AluOp::floor: return std::floor(a);
    case AluOp::ceil: return std::ceil(a);
    case AluOp::exp: return std::exp(a);
    case AluOp::log: return std::log(a);
    case AluOp::sin: return std::sin(a);
    case AluOp::cos: return std::cos(a);
    case AluOp::tan: return std::tan(a);
    case AluOp::tanh: return std::tanh(a);
    case AluOp::arctan: return std::atan(a);
    case AluOp::sqrt: return std::sqrt(a);
    case AluOp::rsqrt: return 1 / std::sqrt(a);
    case AluOp::reciprocal: return 1 / a;
    case AluOp::square: return a * a;
    case AluOp::sigmoid: return sigmoid_ref(a);
    case AluOp::relu: return std::max(a, 0.0);
    case AluOp::gelu: return 0.5 * a * (1 + std::erf(a / std::sqrt(2.0)));
    case AluOp::gelu_dx:
      return 0.5 * (1 + std::erf(a / std::sqrt(2.0))) +
             a * std::exp(-a * a / 2) / std::sqrt(2 * M_PI);
    case AluOp::gelu_apprx_tanh:
      return 0.5 * a * (1 + std::tanh(std::sqrt(2 / M_PI) * (a + 0.044715 * a * a * a)));
    case AluOp::gelu_apprx_sigmoid: return a * sigmoid_ref(1.702 * a);
    case AluOp::gelu_apprx_sigmoid_dx: {
      const double s = sigmoid_ref(1.702 * a);
      return s + 1.702 * a * s * (1.0 - s);
    }
    case AluOp::silu: return a * sigmoid_ref(a);
    case AluOp::silu_dx: {
      double s = sigmoid_ref(a);
      return s * (1 + a * (1 - s));
    }
    case AluOp::erf: return std::erf(a);
    case AluOp::erf_dx: return 2 / std::sqrt(M_PI) * std::exp(-a * a);
    case AluOp::softplus: return softplus_ref(a);
    case AluOp::mish: return a * std::tanh(softplus_ref(a));
    default: ADD_FAILURE() << "no float reference for " << ir::name(op); return 0;
  }
}

// Reference for bitwise ops on int32 operands (results wrap to int32).
int64_t bitvec_ref(AluOp op, int32_t a, int32_t b) {
  uint32_t ua = static_cast<uint32_t>(a);
  switch (op) {
    case AluOp::bitwise_and: return a & b;
    case AluOp::bitwise_or: return a | b;
    case AluOp::bitwise_xor: return a ^ b;
    case AluOp::left_shift: return static_cast<int32_t>(ua << b);
    case AluOp::right_shift: return static_cast<int32_t>(ua >> b);
    case AluOp::invert: return ~a;
    default: ADD_FAILURE() << "no bitvec reference for " << ir::name(op); return 0;
  }
}

// Runs `op` elementwise over `a` (and `b` for binary ops) in dtype `dt` into a
// dtype `dt` output; unary ops are Activation instructions.
template <class T>
std::vector<T> run_alu(AluOp op, DType dt, const std::vector<T>& va, const std::vector<T>& vb) {
  const int64_t n = static_cast<int64_t>(va.size());
  KernelBuilder b;
  int x = b.hbm_in("x", {n}, dt);
  int y = b.hbm_in("y", {n}, dt);
  int o = b.hbm_out("o", {n}, dt);
  if (ir::info(op).arity == 2)
    b.emit(Opcode::TensorTensor, {n}, at(o, {G(0)}), {at(x, {G(0)}), at(y, {G(0)})}, op);
  else
    b.emit(Opcode::Activation, {n}, at(o, {G(0)}), {at(x, {G(0)})}, op);
  std::vector<T> vo(n);
  sim::simulate(
      b.k,
      bind(b.k, {{x, const_cast<T*>(va.data())}, {y, const_cast<T*>(vb.data())}, {o, vo.data()}}));
  return vo;
}

TEST(SimNumerics, EveryAluOpMatchesReference) {
  const std::vector<float> fa = {-2.5f, -1.0f, -0.5f, 0.0f,  0.25f, 0.5f,  1.0f, 1.5f,
                                 2.0f,  3.0f,  7.5f,  -7.0f, 0.1f,  -0.3f, 4.0f, 10.0f};
  const std::vector<float> fb = {1.5f,  2.0f, -3.0f, 1.0f, 0.5f,  -2.0f, 3.0f, 2.5f,
                                 -1.0f, 4.0f, 2.0f,  3.0f, -0.7f, 0.2f,  2.0f, -3.0f};
  const std::vector<int32_t> ia = {-8,    -1,  0, 1,    5, 0x7fffffff, -2147483647 - 1,
                                   12345, 255, 7, -100, 3};
  const std::vector<int32_t> ib = {1, 31, 0, 3, 2, 1, 4, 7, 8, 0, 5, 30};
  // mish is the last op of NKIC_ALU_OPS; ops without a reference fail in float_ref.
  for (int i = 0; i <= static_cast<int>(AluOp::mish); ++i) {
    const auto op = static_cast<AluOp>(i);
    if (ir::info(op).kind == ir::AluKind::Bitvec) {
      std::vector<int32_t> out = run_alu(op, DType::int32, ia, ib);
      for (size_t j = 0; j < ia.size(); ++j)
        EXPECT_EQ(out[j], bitvec_ref(op, ia[j], ib[j]))
            << ir::name(op) << "(" << ia[j] << ", " << ib[j] << ")";
      continue;
    }
    std::vector<float> out = run_alu(op, DType::float32, fa, fb);
    for (size_t j = 0; j < fa.size(); ++j) {
      double ref = float_ref(op, fa[j], fb[j]);
      SCOPED_TRACE(std::string(ir::name(op)) + "(" + std::to_string(fa[j]) + ", " +
                   std::to_string(fb[j]) + ")");
      if (std::isnan(ref)) {
        EXPECT_TRUE(std::isnan(out[j])) << out[j];
      } else if (std::isinf(ref)) {
        EXPECT_EQ(out[j], ref);
      } else {
        EXPECT_NEAR(out[j], ref, 2e-6 + 4e-6 * std::fabs(ref));
      }
    }
  }
}

TEST(SimNumerics, ModSignConventions) {
  const std::vector<float> a = {-7, 7, -7, 7, 5.5f};
  const std::vector<float> b = {3, -3, -3, 3, -2};
  std::vector<float> m = run_alu(AluOp::mod, DType::float32, a, b);
  std::vector<float> f = run_alu(AluOp::fmod, DType::float32, a, b);
  EXPECT_EQ(m, (std::vector<float>{2, -2, -1, 1, -0.5f}));
  EXPECT_EQ(f, (std::vector<float>{-1, 1, -1, 1, 1.5f}));
  const std::vector<int32_t> ia = {-7, 7, -7, 7};
  const std::vector<int32_t> ib = {3, -3, -3, 3};
  EXPECT_EQ(run_alu(AluOp::mod, DType::int32, ia, ib), (std::vector<int32_t>{2, -2, -1, 1}));
  EXPECT_EQ(run_alu(AluOp::fmod, DType::int32, ia, ib), (std::vector<int32_t>{-1, 1, -1, 1}));
}

TEST(SimNumerics, IntegerPathIsExactAndSaturates) {
  const std::vector<int32_t> a = {16777217, 2147483647, -2147483647, 7, -7, 1 << 20};
  const std::vector<int32_t> b = {2, 1, -5, 2, 2, 1 << 20};
  EXPECT_EQ(run_alu(AluOp::add, DType::int32, a, b),
            (std::vector<int32_t>{16777219, 2147483647, -2147483647 - 1, 9, -5, 1 << 21}));
  EXPECT_EQ(run_alu(AluOp::multiply, DType::int32, a, b)[5], 2147483647);
  // Division computes in fp32 and truncates the quotient into the integer result.
  EXPECT_EQ(run_alu(AluOp::divide, DType::int32, a, b)[3], 3);
  EXPECT_EQ(run_alu(AluOp::divide, DType::int32, a, b)[4], -3);

  const std::vector<int8_t> c = {100, -100, 50, -128};
  const std::vector<int8_t> d = {100, 100, 20, 1};
  EXPECT_EQ(run_alu(AluOp::add, DType::int8, c, d), (std::vector<int8_t>{127, 0, 70, -127}));
  EXPECT_EQ(run_alu(AluOp::subtract, DType::int8, c, d), (std::vector<int8_t>{0, -128, 30, -128}));
  EXPECT_EQ(run_alu(AluOp::multiply, DType::int8, c, d),
            (std::vector<int8_t>{127, -128, 127, -128}));

  // Float to integer stores truncate toward zero and saturate; NaN becomes 0.
  KernelBuilder k;
  int x = k.hbm_in("x", {6}, DType::float32);
  int o = k.hbm_out("o", {6}, DType::int8);
  k.emit(Opcode::Copy, {6}, at(o, {G(0)}), {at(x, {G(0)})});
  std::vector<float> vx = {2.5f, 3.5f, -2.5f, 300.0f, -1e9f, NAN};
  std::vector<int8_t> vo(6);
  sim::simulate(k.k, bind(k.k, {{x, vx.data()}, {o, vo.data()}}));
  EXPECT_EQ(vo, (std::vector<int8_t>{2, 3, -2, 127, -128, 0}));
}

TEST(SimNumerics, BitwiseOpsWrapInOperandFormat) {
  const std::vector<int8_t> a = {5, 1, -8, 0x0f};
  const std::vector<int8_t> b = {0, 7, 1, 0x3c};
  EXPECT_EQ(run_alu(AluOp::invert, DType::int8, a, b), (std::vector<int8_t>{-6, -2, 7, -16}));
  EXPECT_EQ(run_alu(AluOp::left_shift, DType::int8, a, b)[1], -128);
  EXPECT_EQ(run_alu(AluOp::right_shift, DType::int8, a, b)[2], 0x7c);  // logical: 0xf8 >> 1
  EXPECT_EQ(run_alu(AluOp::bitwise_and, DType::int8, a, b)[3], 0x0c);
  const std::vector<uint8_t> ua = {5, 0, 0x80};
  const std::vector<uint8_t> ub = {0, 0, 7};
  EXPECT_EQ(run_alu(AluOp::invert, DType::uint8, ua, ub), (std::vector<uint8_t>{250, 255, 0x7f}));
  EXPECT_EQ(run_alu(AluOp::right_shift, DType::uint8, ua, ub)[2], 1);
  // Shift counts outside the format give 0.
  const std::vector<int32_t> ia = {1, -1};
  const std::vector<int32_t> ib = {32, -1};
  EXPECT_EQ(run_alu(AluOp::left_shift, DType::int32, ia, ib), (std::vector<int32_t>{0, 0}));
}

TEST(SimNumerics, BoolResultsAndOperands) {
  KernelBuilder k;
  int x = k.hbm_in("x", {5}, DType::float32);
  int y = k.hbm_in("y", {5}, DType::float32);
  int lt = k.hbm_out("lt", {5}, DType::bool_);
  int nz = k.hbm_out("nz", {5}, DType::bool_);
  int both = k.hbm_out("both", {5}, DType::bool_);
  int sum = k.hbm_out("sum", {5}, DType::int32);
  auto g = [&](int t) { return at(t, {G(0)}); };
  k.emit(Opcode::TensorTensor, {5}, g(lt), {g(x), g(y)}, AluOp::less);
  k.emit(Opcode::Copy, {5}, g(nz), {g(x)});
  k.emit(Opcode::TensorTensor, {5}, g(both), {g(lt), g(nz)}, AluOp::logical_and);
  k.emit(Opcode::TensorTensor, {5}, g(sum), {g(lt), g(nz)}, AluOp::add);
  std::vector<float> vx = {0, 1, -2, 3, NAN}, vy = {1, 1, 0, 5, 0};
  std::vector<uint8_t> vlt(5), vnz(5), vboth(5);
  std::vector<int32_t> vsum(5);
  sim::simulate(k.k, bind(k.k, {{x, vx.data()},
                                {y, vy.data()},
                                {lt, vlt.data()},
                                {nz, vnz.data()},
                                {both, vboth.data()},
                                {sum, vsum.data()}}));
  EXPECT_EQ(vlt, (std::vector<uint8_t>{1, 0, 1, 1, 0}));
  EXPECT_EQ(vnz, (std::vector<uint8_t>{0, 1, 1, 1, 1}));
  EXPECT_EQ(vboth, (std::vector<uint8_t>{0, 0, 1, 1, 0}));
  EXPECT_EQ(vsum, (std::vector<int32_t>{1, 1, 2, 2, 1}));
}

TEST(SimNumerics, Bf16StoreRoundsTiesToEven) {
  KernelBuilder b;
  int x = b.hbm_in("x", {6}, DType::float32);
  int o = b.hbm_out("o", {6}, DType::bfloat16);
  int t = b.tensor("t", {6}, DType::float32);
  b.emit(Opcode::Load, {6}, at(t, {G(0)}), {at(x, {G(0)})});
  b.emit(Opcode::Store, {6}, at(o, {G(0)}), {at(t, {G(0)})});
  const float ulp = std::ldexp(1.0f, -7);  // bf16 spacing in [1, 2)
  std::vector<float> vx = {1 + ulp / 2,    1 + 3 * ulp / 2, 1 + ulp / 2 + std::ldexp(1.0f, -20),
                           -(1 + ulp / 2), 3.4e38f,         1.0f};
  std::vector<uint16_t> vo(6);
  sim::simulate(b.k, bind(b.k, {{x, vx.data()}, {o, vo.data()}}));
  EXPECT_EQ(vo, (std::vector<uint16_t>{0x3f80, 0x3f82, 0x3f81, 0xbf80, 0x7f80, 0x3f80}));
}

// The simulator's inlined bf16 codec must agree with sim/Numerics bit for bit.
TEST(SimNumerics, Bf16ConversionsMatchNumerics) {
  const uint32_t lows[] = {0x0000, 0x0001, 0x7fff, 0x8000, 0x8001, 0xffff};
  const int64_t n = 65536 * std::size(lows);
  KernelBuilder b;
  int x = b.hbm_in("x", {n}, DType::float32);
  int o = b.hbm_out("o", {n}, DType::bfloat16);
  int back = b.hbm_out("back", {n}, DType::float32);
  b.emit(Opcode::Copy, {n}, at(o, {G(0)}), {at(x, {G(0)})});
  b.emit(Opcode::Copy, {n}, at(back, {G(0)}), {at(o, {G(0)})});
  std::vector<float> vx(n), vback(n);
  std::vector<uint16_t> vo(n);
  for (uint32_t hi = 0; hi < 65536; ++hi)
    for (size_t l = 0; l < std::size(lows); ++l)
      vx[hi * std::size(lows) + l] = std::bit_cast<float>(hi << 16 | lows[l]);
  sim::simulate(b.k, bind(b.k, {{x, vx.data()}, {o, vo.data()}, {back, vback.data()}}));
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(vo[i], sim::float_to_bf16(vx[i])) << std::hex << std::bit_cast<uint32_t>(vx[i]);
    ASSERT_EQ(std::bit_cast<uint32_t>(vback[i]),
              std::bit_cast<uint32_t>(sim::bf16_to_float(vo[i])));
  }
}

}  // namespace
