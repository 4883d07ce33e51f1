// Simulator tests: kernels built directly as IR, results checked against
// references computed here (with sim/Numerics for the rounding).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "ir/IR.h"
#include "sim/Numerics.h"
#include "sim/Simulator.h"

namespace {

using namespace nkic;
using ir::AffineExpr;
using ir::AluOp;
using ir::CmpKind;
using ir::DType;
using ir::Memory;
using ir::Opcode;
using ir::Role;
using sim::SimError;

AffineExpr G(int k) { return AffineExpr::grid(k); }
AffineExpr L(int axis) { return AffineExpr::var({ir::VarKind::Loop, axis}); }
AffineExpr P(int axis) { return AffineExpr::var({ir::VarKind::ProgramId, axis}); }

// Kernel under construction; instructions go into `block` (the body by default).
struct KB {
  ir::Kernel k;
  ir::Block* block = &k.body;

  int tensor(const std::string& name, std::vector<int64_t> shape, DType dt, Memory mem = Memory::SBUF,
             Role role = Role::Local) {
    ir::TensorDecl t;
    t.id = static_cast<int>(k.tensors.size());
    t.name = name;
    t.shape = std::move(shape);
    t.dtype = dt;
    t.memory = mem;
    t.role = role;
    k.tensors.push_back(t);
    if (role == Role::Input) k.inputs.push_back(t.id);
    if (role == Role::Output) k.outputs.push_back(t.id);
    return t.id;
  }
  int hbm_in(const std::string& n, std::vector<int64_t> s, DType dt) {
    return tensor(n, std::move(s), dt, Memory::SharedHBM, Role::Input);
  }
  int hbm_out(const std::string& n, std::vector<int64_t> s, DType dt) {
    return tensor(n, std::move(s), dt, Memory::SharedHBM, Role::Output);
  }

  ir::Instruction& emit(Opcode oc, std::vector<int64_t> shape, ir::Access dst, std::vector<ir::Access> srcs = {},
                        AluOp alu = AluOp::bypass, std::vector<double> imms = {}) {
    auto in = std::make_unique<ir::Instruction>();
    in->opcode = oc;
    in->shape = std::move(shape);
    in->dst = std::move(dst);
    in->srcs = std::move(srcs);
    in->alu = alu;
    in->imms = std::move(imms);
    ir::Instruction& ref = *in;
    block->push_back(std::move(in));
    return ref;
  }
  // Opens a loop: later instructions go into its body until the caller restores `block`.
  ir::Loop& loop(int64_t lb, int64_t ub, int64_t stride = 1, ir::AxisType type = ir::AxisType::Affine) {
    auto l = std::make_unique<ir::Loop>();
    l->axis = k.num_axes++;
    l->name = "L" + std::to_string(l->axis);
    l->lb = lb;
    l->ub = ub;
    l->stride = stride;
    l->type = type;
    ir::Loop& ref = *l;
    block->push_back(std::move(l));
    block = &ref.body;
    return ref;
  }
};

ir::Access at(int t, std::vector<AffineExpr> idx) { return {t, std::move(idx)}; }
ir::Access at2(int t) { return at(t, {G(0), G(1)}); }
ir::Constraint ge(AffineExpr e) { return {std::move(e), CmpKind::Ge}; }
ir::Constraint eq(AffineExpr e) { return {std::move(e), CmpKind::Eq}; }

// Bindings for the listed (tensor id, memory) pairs; the rest are simulator-owned.
std::vector<void*> bind(const ir::Kernel& k, std::initializer_list<std::pair<int, void*>> b) {
  std::vector<void*> v(k.tensors.size(), nullptr);
  for (auto [id, p] : b) v[id] = p;
  return v;
}

// ---------------------------------------------------------------------------

TEST(Sim, SpmdAddFp16WithProgramIds) {
  KB b;
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
  KB b;
  int x = b.hbm_in("x", {n, cols}, DType::float32);
  int out = b.hbm_out("out", {1024, cols}, DType::float32);
  int t = b.tensor("t", {128, cols}, DType::float32);
  int u = b.tensor("u", {128, cols}, DType::float32);
  b.loop(0, 8);
  AffineExpr row = L(0) * 128 + G(0);
  ir::Predicate mask = {ge(AffineExpr(n - 1) - row)};
  b.emit(Opcode::Load, {128, cols}, at2(t), {at(x, {row, G(1)})}).predicate = mask;
  b.emit(Opcode::TensorScalar, {128, cols}, at2(u), {at2(t)}, AluOp::multiply, {3.0}).predicate = mask;
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
  KB b;
  int src = b.hbm_in("src", {64, 64}, DType::float32);
  int tri = b.hbm_out("tri", {64, 64}, DType::float32);
  int shifted = b.hbm_out("shifted", {64, 64}, DType::float32);
  b.emit(Opcode::Memset, {64, 64}, at2(tri), {}, AluOp::bypass, {1.0}).predicate = {ge(G(1) - G(0))};
  // src[i0, i1 - i0] is out of bounds over the box but not where i1 >= i0.
  b.emit(Opcode::Copy, {64, 64}, at2(shifted), {at(src, {G(0), G(1) - G(0)})}).predicate = {ge(G(1) - G(0))};

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
  } catch (const SimError& e) {
    EXPECT_EQ(e.code, "err_tensor_access_out_of_bound");
    EXPECT_STREQ(e.what(),
                 "Out-of-bound access for tensor `src` on dimension 1: index range [-1, 63] exceed "
                 "dimension size of 64");
  }
}

TEST(Sim, EqConstraints) {
  KB b;
  int out = b.hbm_out("out", {8, 16}, DType::float32);
  b.emit(Opcode::Memset, {8, 16}, at2(out), {}, AluOp::bypass, {0.0});
  b.emit(Opcode::Memset, {8, 16}, at2(out), {}, AluOp::bypass, {1.0}).predicate = {eq(G(1) - 3)};
  b.emit(Opcode::Memset, {8, 16}, at2(out), {}, AluOp::bypass, {2.0}).predicate = {eq(G(0) - G(1))};
  b.emit(Opcode::Memset, {8, 16}, at2(out), {}, AluOp::bypass, {4.0}).predicate = {eq(G(0) * 2 - 5)};
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
  KB b;
  int x = b.hbm_in("x", {4, 8}, DType::float32);
  int out = b.hbm_out("out", {1, 8}, DType::float32);
  int out16 = b.hbm_out("out16", {1, 8}, DType::bfloat16);
  int acc = b.tensor("acc", {1, 8}, DType::float32, Memory::PSUM);
  int acc16 = b.tensor("acc16", {1, 8}, DType::bfloat16, Memory::PSUM);
  b.emit(Opcode::Memset, {1, 8}, at2(acc), {}, AluOp::bypass, {0.5});
  b.emit(Opcode::Memset, {1, 8}, at2(acc16), {}, AluOp::bypass, {1.0});
  ir::Block* body = &b.k.body;
  b.loop(0, 4);
  b.emit(Opcode::TensorScalar, {1, 8}, at2(acc), {at(x, {L(0), G(1)})}, AluOp::multiply, {2.0}).accumulate = true;
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
  KB b;
  int x = b.hbm_in("x", {1, 4}, DType::float32);
  int o1 = b.hbm_out("o1", {1, 4}, DType::float32);
  int o2 = b.hbm_out("o2", {1, 4}, DType::float32);
  int o3 = b.hbm_out("o3", {1, 4}, DType::float32);
  b.emit(Opcode::TensorScalar, {1, 4}, at2(o1), {at2(x)}, AluOp::subtract, {10.0});
  b.emit(Opcode::TensorScalar, {1, 4}, at2(o2), {at2(x)}, AluOp::subtract, {10.0}).reverse = true;
  b.emit(Opcode::TensorScalar, {1, 4}, at2(o3), {at2(x)}, AluOp::divide, {1.0}).reverse = true;
  std::vector<float> vx = {1, 2, 4, -8}, v1(4), v2(4), v3(4);
  sim::simulate(b.k, bind(b.k, {{x, vx.data()}, {o1, v1.data()}, {o2, v2.data()}, {o3, v3.data()}}));
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(v1[i], vx[i] - 10.0f);
    EXPECT_EQ(v2[i], 10.0f - vx[i]);
    EXPECT_EQ(v3[i], 1.0f / vx[i]);
  }
}

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
      return 0.5 * (1 + std::erf(a / std::sqrt(2.0))) + a * std::exp(-a * a / 2) / std::sqrt(2 * M_PI);
    case AluOp::gelu_apprx_tanh:
      return 0.5 * a * (1 + std::tanh(std::sqrt(2 / M_PI) * (a + 0.044715 * a * a * a)));
    case AluOp::gelu_apprx_sigmoid: return a * sigmoid_ref(1.702 * a);
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
// dtype `dt` output; unary ops go through TensorScalar (immediate unused).
template <class T>
std::vector<T> run_alu(AluOp op, DType dt, const std::vector<T>& va, const std::vector<T>& vb) {
  const int64_t n = static_cast<int64_t>(va.size());
  KB b;
  int x = b.hbm_in("x", {n}, dt);
  int y = b.hbm_in("y", {n}, dt);
  int o = b.hbm_out("o", {n}, dt);
  if (ir::info(op).arity == 2)
    b.emit(Opcode::TensorTensor, {n}, at(o, {G(0)}), {at(x, {G(0)}), at(y, {G(0)})}, op);
  else
    b.emit(Opcode::TensorScalar, {n}, at(o, {G(0)}), {at(x, {G(0)})}, op, {0.0});
  std::vector<T> vo(n);
  sim::simulate(b.k, bind(b.k, {{x, const_cast<T*>(va.data())}, {y, const_cast<T*>(vb.data())}, {o, vo.data()}}));
  return vo;
}

TEST(Sim, EveryAluOpMatchesReference) {
  const std::vector<float> fa = {-2.5f, -1.0f, -0.5f, 0.0f, 0.25f, 0.5f, 1.0f, 1.5f,
                                 2.0f,  3.0f,  7.5f,  -7.0f, 0.1f, -0.3f, 4.0f, 10.0f};
  const std::vector<float> fb = {1.5f, 2.0f, -3.0f, 1.0f, 0.5f, -2.0f, 3.0f, 2.5f,
                                 -1.0f, 4.0f, 2.0f, 3.0f, -0.7f, 0.2f, 2.0f, -3.0f};
  const std::vector<int32_t> ia = {-8, -1, 0, 1, 5, 0x7fffffff, -2147483647 - 1, 12345, 255, 7, -100, 3};
  const std::vector<int32_t> ib = {1, 31, 0, 3, 2, 1, 4, 7, 8, 0, 5, 30};
  // mish is the last op of NKIC_ALU_OPS; ops without a reference fail in float_ref.
  for (int i = 0; i <= static_cast<int>(AluOp::mish); ++i) {
    const auto op = static_cast<AluOp>(i);
    if (ir::info(op).kind == ir::AluKind::Bitvec) {
      std::vector<int32_t> out = run_alu(op, DType::int32, ia, ib);
      for (size_t j = 0; j < ia.size(); ++j)
        EXPECT_EQ(out[j], bitvec_ref(op, ia[j], ib[j])) << ir::name(op) << "(" << ia[j] << ", " << ib[j] << ")";
      continue;
    }
    std::vector<float> out = run_alu(op, DType::float32, fa, fb);
    for (size_t j = 0; j < fa.size(); ++j) {
      double ref = float_ref(op, fa[j], fb[j]);
      SCOPED_TRACE(std::string(ir::name(op)) + "(" + std::to_string(fa[j]) + ", " + std::to_string(fb[j]) + ")");
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

TEST(Sim, ModSignConventions) {
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

TEST(Sim, IntegerPathIsExactAndSaturates) {
  const std::vector<int32_t> a = {16777217, 2147483647, -2147483647, 7, -7, 1 << 20};
  const std::vector<int32_t> b = {2, 1, -5, 2, 2, 1 << 20};
  EXPECT_EQ(run_alu(AluOp::add, DType::int32, a, b),
            (std::vector<int32_t>{16777219, 2147483647, -2147483647 - 1, 9, -5, 1 << 21}));
  EXPECT_EQ(run_alu(AluOp::multiply, DType::int32, a, b)[5], 2147483647);
  // Division rounds the exact quotient once, to nearest-even.
  EXPECT_EQ(run_alu(AluOp::divide, DType::int32, a, b)[3], 4);
  EXPECT_EQ(run_alu(AluOp::divide, DType::int32, a, b)[4], -4);

  const std::vector<int8_t> c = {100, -100, 50, -128};
  const std::vector<int8_t> d = {100, 100, 20, 1};
  EXPECT_EQ(run_alu(AluOp::add, DType::int8, c, d), (std::vector<int8_t>{127, 0, 70, -127}));
  EXPECT_EQ(run_alu(AluOp::subtract, DType::int8, c, d), (std::vector<int8_t>{0, -128, 30, -128}));
  EXPECT_EQ(run_alu(AluOp::multiply, DType::int8, c, d), (std::vector<int8_t>{127, -128, 127, -128}));

  // Float to integer stores round to nearest-even and saturate; NaN becomes 0.
  KB k;
  int x = k.hbm_in("x", {6}, DType::float32);
  int o = k.hbm_out("o", {6}, DType::int8);
  k.emit(Opcode::Copy, {6}, at(o, {G(0)}), {at(x, {G(0)})});
  std::vector<float> vx = {2.5f, 3.5f, -2.5f, 300.0f, -1e9f, NAN};
  std::vector<int8_t> vo(6);
  sim::simulate(k.k, bind(k.k, {{x, vx.data()}, {o, vo.data()}}));
  EXPECT_EQ(vo, (std::vector<int8_t>{2, 4, -2, 127, -128, 0}));
}

TEST(Sim, BitwiseOpsWrapInOperandFormat) {
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

TEST(Sim, BoolResultsAndOperands) {
  KB k;
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
  sim::simulate(k.k, bind(k.k, {{x, vx.data()}, {y, vy.data()}, {lt, vlt.data()}, {nz, vnz.data()},
                                 {both, vboth.data()}, {sum, vsum.data()}}));
  EXPECT_EQ(vlt, (std::vector<uint8_t>{1, 0, 1, 1, 0}));
  EXPECT_EQ(vnz, (std::vector<uint8_t>{0, 1, 1, 1, 1}));
  EXPECT_EQ(vboth, (std::vector<uint8_t>{0, 0, 1, 1, 0}));
  EXPECT_EQ(vsum, (std::vector<int32_t>{1, 1, 2, 2, 1}));
}

// ---- diagnostics ------------------------------------------------------------

TEST(Sim, OutOfBoundAccessThrowsWithNkiMessage) {
  KB b;
  int x = b.hbm_in("x", {128, 4000}, DType::float32);
  int t = b.tensor("t", {128, 4096}, DType::float32);
  ir::Instruction& ld = b.emit(Opcode::Load, {128, 4096}, at2(t), {at2(x)});
  ld.loc = {ir::intern_file("kernel.py"), 42, 9};
  std::vector<float> vx(128 * 4000, 1.0f);
  try {
    sim::simulate(b.k, bind(b.k, {{x, vx.data()}}));
    FAIL() << "expected SimError";
  } catch (const SimError& e) {
    EXPECT_EQ(e.code, "err_tensor_access_out_of_bound");
    EXPECT_STREQ(e.what(),
                 "Out-of-bound access for tensor `x` on dimension 1: index range [0, 4095] exceed "
                 "dimension size of 4000");
    EXPECT_EQ(e.loc.line, 42);
    EXPECT_EQ(e.loc.col, 9);
  }
  // The mask that fixes it.
  ld.predicate = {ge(AffineExpr(3999) - G(1))};
  EXPECT_NO_THROW(sim::simulate(b.k, bind(b.k, {{x, vx.data()}})));
}

TEST(Sim, UninitializedReadDetection) {
  KB b;
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
    FAIL() << "expected SimError";
  } catch (const SimError& e) {
    EXPECT_EQ(e.code, "err_read_uninitialized_memory");
    EXPECT_NE(std::string(e.what()).find("tensor `t`"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("[64, 0]"), std::string::npos) << e.what();
  }

  // Written in full, but only by instance 0: instance 1 starts fresh.
  set.predicate = {eq(P(0))};
  try {
    sim::simulate(b.k, bind(b.k, {{out, vo.data()}}), {.check_uninitialized = true});
    FAIL() << "expected SimError";
  } catch (const SimError& e) {
    EXPECT_EQ(e.code, "err_read_uninitialized_memory");
  }
  set.predicate.clear();
  EXPECT_NO_THROW(sim::simulate(b.k, bind(b.k, {{out, vo.data()}}), {.check_uninitialized = true}));
}

TEST(Sim, MalformedKernelIsRejected) {
  KB b;
  int t = b.tensor("t", {4}, DType::float32);
  b.emit(Opcode::Copy, {4}, at(t, {G(0)}), {at(t, {G(0), G(1)})});
  EXPECT_THROW(sim::simulate(b.k, {}), std::invalid_argument);
}

// ---- control flow and layout ------------------------------------------------

TEST(Sim, SequentialLoopWithNegativeStride) {
  KB b;
  int digits = b.hbm_in("digits", {8}, DType::float32);
  int out = b.hbm_out("out", {1}, DType::float32);
  int acc = b.tensor("acc", {1}, DType::float32);
  b.emit(Opcode::Memset, {1}, at(acc, {G(0)}), {}, AluOp::bypass, {0.0});
  ir::Block* body = &b.k.body;
  b.loop(7, -1, -2, ir::AxisType::Sequential);
  b.emit(Opcode::TensorScalar, {1}, at(acc, {G(0)}), {at(acc, {G(0)})}, AluOp::multiply, {10.0});
  b.emit(Opcode::TensorTensor, {1}, at(acc, {G(0)}), {at(acc, {G(0)}), at(digits, {L(0)})}, AluOp::add);
  b.block = body;
  b.emit(Opcode::Store, {1}, at(out, {G(0)}), {at(acc, {G(0)})});
  std::vector<float> vd = {0, 1, 2, 3, 4, 5, 6, 7}, vo(1);
  sim::simulate(b.k, bind(b.k, {{digits, vd.data()}, {out, vo.data()}}), {.check_uninitialized = true});
  EXPECT_EQ(vo[0], 7531.0f);  // iterations 7, 5, 3, 1 in that order
}

TEST(Sim, Bf16StoreRoundsTiesToEven) {
  KB b;
  int x = b.hbm_in("x", {6}, DType::float32);
  int o = b.hbm_out("o", {6}, DType::bfloat16);
  int t = b.tensor("t", {6}, DType::float32);
  b.emit(Opcode::Load, {6}, at(t, {G(0)}), {at(x, {G(0)})});
  b.emit(Opcode::Store, {6}, at(o, {G(0)}), {at(t, {G(0)})});
  const float ulp = std::ldexp(1.0f, -7);  // bf16 spacing in [1, 2)
  std::vector<float> vx = {1 + ulp / 2, 1 + 3 * ulp / 2, 1 + ulp / 2 + std::ldexp(1.0f, -20),
                           -(1 + ulp / 2), 3.4e38f, 1.0f};
  std::vector<uint16_t> vo(6);
  sim::simulate(b.k, bind(b.k, {{x, vx.data()}, {o, vo.data()}}));
  EXPECT_EQ(vo, (std::vector<uint16_t>{0x3f80, 0x3f82, 0x3f81, 0xbf80, 0x7f80, 0x3f80}));
}

// The simulator's inlined bf16 codec must agree with sim/Numerics bit for bit.
TEST(Sim, Bf16ConversionsMatchNumerics) {
  const uint32_t lows[] = {0x0000, 0x0001, 0x7fff, 0x8000, 0x8001, 0xffff};
  const int64_t n = 65536 * std::size(lows);
  KB b;
  int x = b.hbm_in("x", {n}, DType::float32);
  int o = b.hbm_out("o", {n}, DType::bfloat16);
  int back = b.hbm_out("back", {n}, DType::float32);
  b.emit(Opcode::Copy, {n}, at(o, {G(0)}), {at(x, {G(0)})});
  b.emit(Opcode::Copy, {n}, at(back, {G(0)}), {at(o, {G(0)})});
  std::vector<float> vx(n), vback(n);
  std::vector<uint16_t> vo(n);
  for (uint32_t hi = 0; hi < 65536; ++hi)
    for (size_t l = 0; l < std::size(lows); ++l) vx[hi * std::size(lows) + l] = std::bit_cast<float>(hi << 16 | lows[l]);
  sim::simulate(b.k, bind(b.k, {{x, vx.data()}, {o, vo.data()}, {back, vback.data()}}));
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(vo[i], sim::float_to_bf16(vx[i])) << std::hex << std::bit_cast<uint32_t>(vx[i]);
    ASSERT_EQ(std::bit_cast<uint32_t>(vback[i]), std::bit_cast<uint32_t>(sim::bf16_to_float(vo[i])));
  }
}

TEST(Sim, TransposeBroadcastAndInPlaceShift) {
  KB b;
  int x = b.hbm_in("x", {4, 6}, DType::float32);
  int bias = b.hbm_in("bias", {4}, DType::float32);
  int xt = b.hbm_out("xt", {6, 4}, DType::float32);
  int xb = b.hbm_out("xb", {4, 6}, DType::float32);
  int sh = b.hbm_out("sh", {8}, DType::float32);
  b.emit(Opcode::Copy, {4, 6}, at(xt, {G(1), G(0)}), {at2(x)});
  b.emit(Opcode::TensorTensor, {4, 6}, at2(xb), {at2(x), at(bias, {G(0)})}, AluOp::add);
  // sh[i+1] = sh[i] reads the whole source before writing, as one tile op does.
  b.emit(Opcode::Copy, {7}, at(sh, {G(0) + 1}), {at(sh, {G(0)})});
  std::vector<float> vx(24), vb = {100, 200, 300, 400}, vt(24), vxb(24), vs = {0, 1, 2, 3, 4, 5, 6, 7};
  for (int i = 0; i < 24; ++i) vx[i] = static_cast<float>(i);
  sim::simulate(b.k, bind(b.k, {{x, vx.data()}, {bias, vb.data()}, {xt, vt.data()}, {xb, vxb.data()},
                                 {sh, vs.data()}}));
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
  KB b;
  int x = b.hbm_in("x", {n}, DType::float32);
  int o = b.hbm_out("o", {n}, DType::float32);
  b.emit(Opcode::TensorTensor, {n - 1}, at(o, {G(0) + 1}), {at(x, {G(0)}), at(x, {G(0) + 1})}, AluOp::add);
  std::vector<float> buf(n);
  for (int64_t i = 0; i < n; ++i) buf[i] = static_cast<float>(i);
  sim::simulate(b.k, bind(b.k, {{x, buf.data()}, {o, buf.data()}}));
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(buf[i], i == 0 ? 0.0f : static_cast<float>(2 * i - 1)) << i;
}

TEST(Sim, LargeTileAndNarrowFormats) {
  constexpr int64_t P = 128, F = 512;
  KB b;
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

}  // namespace
