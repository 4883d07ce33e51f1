// The instruction table (ir/Isa.h) and what derives from it: one IR instruction
// per ISA call from the codegen builders, the printer's name[engine] form, and
// the native executors of the fused pipelines and the row instructions.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "codegen/Indexing.h"
#include "codegen/KernelBuilder.h"
#include "codegen/Ops.h"
#include "ir/IRPrinter.h"
#include "ir/Verifier.h"
#include "sema/Diagnostic.h"
#include "sema/OpTable.h"
#include "sema/Target.h"
#include "sim/Simulator.h"
#include "builder_test_kernel.h"

namespace nkic {
namespace {

using builder_test::Built;
using builder_test::number;
using builder_test::trn3;
using codegen::KernelBuilder;
using codegen::OpArgs;
using codegen::PipelineStep;
using ir::AluOp;
using ir::DType;
using ir::Memory;
using types::TensorVal;
using types::Value;

TEST(IsaTable, EveryOpcodeHasANameAnEngineAndRoundTrips) {
  for (int i = 0; i <= static_cast<int>(ir::Opcode::MatmulMx); ++i) {
    const auto op = static_cast<ir::Opcode>(i);
    const ir::OpcodeInfo& info = ir::info(op);
    ASSERT_NE(std::string(info.name), "");
    EXPECT_NE(info.engine, ir::Engine::none) << info.name;
    EXPECT_LE(info.min_srcs, info.max_srcs) << info.name;
    EXPECT_EQ(ir::opcode_from_name(info.name), op) << info.name;
  }
  EXPECT_EQ(ir::opcode_from_name("no_such_instruction"), std::nullopt);
  EXPECT_EQ(ir::info(ir::Opcode::Activation).engine, ir::Engine::act);
  EXPECT_EQ(ir::info(ir::Opcode::Matmul).engine, ir::Engine::pe);
  EXPECT_EQ(ir::info(ir::Opcode::Load).engine, ir::Engine::dma);
  EXPECT_EQ(ir::info(ir::Opcode::Iota).engine, ir::Engine::pool);
  EXPECT_EQ(ir::info(ir::Opcode::TensorTensorScan).exec, ir::Exec::Row);
  EXPECT_EQ(ir::engine_from_nki(3), ir::Engine::pool);
  EXPECT_EQ(ir::engine_from_nki(6), ir::Engine::dma);
  EXPECT_EQ(ir::engine_from_nki(0), ir::Engine::none);
}


TEST(IsaBuilders, ActivationWithScaleAndBiasIsOneScalarEngineInstruction) {
  Built k;
  const TensorVal x = k.load(k.a), y = k.load(k.bias);
  k.b.requested_api = "nisa.activation";
  const TensorVal act = codegen::isa_pipeline(
      k.b, codegen::Dst::fresh(), ir::Opcode::Activation, x,
      {{AluOp::multiply, number(0.5)}, {AluOp::add, Value(y)}, {AluOp::exp, std::nullopt}}, {});
  k.store(act);
  const std::vector<std::string> lines = k.lines();
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[2], "activation[i0, i1] = activation[act](a_tile[i0, i1]; multiply 0.5; add b_tile[i0, 0]; exp) "
                      "iter=[128, 64]");
  const std::vector<float> out = k.run([](int p, int j) { return static_cast<float>(j - p) / 64.0f; });
  for (int p = 0; p < 128; p += 7)
    for (int j = 0; j < 64; j += 5) {
      const float x0 = static_cast<float>(j - p) / 64.0f;
      EXPECT_FLOAT_EQ(out[p * 64 + j], std::exp(x0 * 0.5f + static_cast<float>(p) / 8.0f));
    }
}

TEST(IsaBuilders, TensorScalarTwoOpsWithReverseIsOneVectorEngineInstruction) {
  Built k;
  const TensorVal x = k.load(k.a);
  k.b.requested_api = "nisa.tensor_scalar";
  const TensorVal ts = codegen::isa_pipeline(
      k.b, codegen::Dst::fresh(), ir::Opcode::TensorScalar, x, {{AluOp::subtract, number(10.0), true}, {AluOp::multiply, number(0.25)}}, {});
  k.store(ts);
  EXPECT_EQ(k.lines()[1],
            "tensor_scalar[i0, i1] = tensor_scalar[dve](a_tile[i0, i1]; reverse subtract 10; multiply 0.25) "
            "iter=[128, 64]");
  const std::vector<float> out = k.run([](int p, int j) { return static_cast<float>(p + j); });
  for (int p = 0; p < 128; p += 9)
    for (int j = 0; j < 64; j += 3) EXPECT_EQ(out[p * 64 + j], (10.0f - static_cast<float>(p + j)) * 0.25f);
}

TEST(IsaBuilders, PipelineDiagnostics) {
  Built k;
  const TensorVal x = k.load(k.a);
  k.b.requested_api = "nisa.tensor_scalar";
  try {
    codegen::isa_pipeline(k.b, codegen::Dst::fresh(), ir::Opcode::TensorScalar, x, {{AluOp::add, std::nullopt}}, {});
    ADD_FAILURE() << "a two-operand op without its operand was accepted";
  } catch (const sema::NkiError& e) {
    EXPECT_EQ(e.diag().code, "err_instruction_unsupported_op");
  }
  try {
    codegen::isa_pipeline(k.b, codegen::Dst::fresh(), ir::Opcode::TensorScalar, x, {{AluOp::bitwise_and, number(3)}},
                          {});
    ADD_FAILURE() << "a bitvec op on fp32 data was accepted";
  } catch (const sema::NkiError& e) {
    EXPECT_EQ(e.diag().code, "err_bitvec_operand_must_be_integer");
  }
}

TEST(IsaRows, ScanIsOneInstructionWalkingColumnsInOrder) {
  Built k;
  const TensorVal x = k.load(k.a), y = k.load(k.bias);
  k.b.requested_api = "nisa.tensor_tensor_scan";
  // r[i] = (x[i] * r[i-1]) + x[i] from r[-1] = y (a [P, 1] tile).
  const TensorVal sc = codegen::tensor_tensor_scan(k.b, codegen::Dst::fresh(), x, x, Value(y), {AluOp::multiply, std::nullopt},
                                                   {AluOp::add, std::nullopt}, {});
  k.store(sc);
  const std::vector<std::string> lines = k.lines();
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[2],
            "tensor_tensor_scan[i0, i1] = tensor_tensor_scan[dve](a_tile[i0, i1], a_tile[i0, i1], b_tile[i0, 0]; "
            "multiply; add) iter=[128, 64] widths=[64, 64, 64, 1]");
  const auto f = [](int p, int j) { return 0.5f + 0.01f * static_cast<float>((p * 7 + j) % 13); };
  const std::vector<float> out = k.run(f);
  for (int p = 0; p < 128; p += 11) {
    float r = static_cast<float>(p) / 8.0f;
    for (int j = 0; j < 64; ++j) {
      r = f(p, j) * r + f(p, j);
      ASSERT_EQ(out[p * 64 + j], r) << p << ", " << j;
    }
  }
}

TEST(IsaRows, Max8AndFindIndex8) {
  Built k(8, DType::uint32);
  const TensorVal x = k.load(k.a);
  k.b.requested_api = "nisa.max8";
  const TensorVal m = codegen::max8(k.b, codegen::Dst::fresh(), x, {});
  k.b.requested_api = "nisa.nc_find_index8";
  const TensorVal at = codegen::find_index8(k.b, codegen::Dst::fresh(), x, m, {});
  k.store(at);
  EXPECT_EQ(k.lines().size(), 4u);
  // Row p holds (j * 37 + p) % 64, a permutation: the top 8 are 63..56, at the
  // positions j with j * 37 = v - p (mod 64); 37 * 45 = 1 (mod 64).
  const std::vector<float> out = k.run([](int p, int j) { return static_cast<float>((j * 37 + p) % 64); });
  const auto* idx = reinterpret_cast<const uint32_t*>(out.data());
  for (int p = 0; p < 128; p += 13)
    for (int r = 0; r < 8; ++r) {
      const int v = 63 - r;
      const uint32_t expect = static_cast<uint32_t>((((v - p) % 64 + 64) % 64) * 45 % 64);
      ASSERT_EQ(idx[p * 8 + r], expect) << p << ", " << r;
    }
}

TEST(IsaRows, BnStatsThenBnAggrGiveMeanAndVariance) {
  Built k(2);
  const TensorVal x = k.load(k.a);
  k.b.requested_api = "nisa.bn_stats";
  const TensorVal st = codegen::bn_stats(k.b, codegen::Dst::fresh(), x, {});
  k.b.requested_api = "nisa.bn_aggr";
  const TensorVal mv = codegen::bn_aggr(k.b, codegen::Dst::fresh(), st, {});
  k.store(mv);
  EXPECT_EQ(k.lines().size(), 4u);
  const auto f = [](int p, int j) { return static_cast<float>(j % 8) + static_cast<float>(p); };
  const std::vector<float> out = k.run(f);
  // Row p: values p + (0..7), each 8 times: mean p + 3.5, variance 5.25.
  for (int p = 0; p < 128; p += 17) {
    EXPECT_FLOAT_EQ(out[p * 2], static_cast<float>(p) + 3.5f);
    EXPECT_NEAR(out[p * 2 + 1], 5.25f, 1e-4f);
  }
}

TEST(IsaRows, SequenceBoundsIsOneInstruction) {
  Built k(128);
  const TensorVal ids = k.load(k.a);
  k.b.requested_api = "nisa.sequence_bounds";
  const TensorVal sb = codegen::sequence_bounds(k.b, codegen::Dst::fresh(), ids, {});
  EXPECT_EQ(k.b.tensor(sb.tensor).shape, (std::vector<int64_t>{128, 2, 64}));
  k.store(codegen::reshape_view(k.b, sb, {128, 128}));
  EXPECT_EQ(k.lines().size(), 3u);
  // Row p: runs of 4 equal ids (j / 4 + 1), except the padding id 0 at j >= 60 when p is even.
  const auto id = [](int p, int j) { return p % 2 == 0 && j >= 60 ? 0.0f : static_cast<float>(j / 4 + 1); };
  const std::vector<float> out = k.run(id);
  for (int p = 0; p < 128; p += 5)
    for (int j = 0; j < 64; ++j) {
      const bool pad = id(p, j) == 0.0f;
      ASSERT_EQ(out[p * 128 + j], pad ? 64.0f : static_cast<float>(j / 4 * 4)) << p << ", " << j;
      ASSERT_EQ(out[p * 128 + 64 + j], pad ? -1.0f : static_cast<float>(j / 4 * 4 + 4)) << p << ", " << j;
    }
}

TEST(IsaRows, OperandsMustWalkTheDataRows) {
  Built k;
  const TensorVal x = k.load(k.a), y = k.load(k.bias);
  k.b.requested_api = "nisa.tensor_tensor_scan";
  try {
    codegen::tensor_tensor_scan(k.b, codegen::Dst::fresh(), x, y, number(0.0), {AluOp::multiply, std::nullopt}, {AluOp::add, std::nullopt},
                                {});
    ADD_FAILURE() << "a data1 of another width was accepted";
  } catch (const sema::NkiError& e) {
    EXPECT_EQ(e.diag().code, "err_tile_shape_mismatch");
  }
}

// The current API's instructions, on NeuronCore-v4 (trn3).

TensorVal sbuf_tile(Built& k, const char* name, std::vector<int64_t> shape, DType dtype = DType::float32) {
  return codegen::alloc_tensor(k.b, name, std::move(shape), dtype, Memory::SBUF);
}

TEST(IsaCurrent, ExponentialIsOneVectorInstructionFoldingIntoTheAccumulator) {
  Built k(1, DType::float32, trn3());
  const TensorVal x = k.load(k.a), y = k.load(k.bias);
  const TensorVal dst = sbuf_tile(k, "e", {128, 64}), res = sbuf_tile(k, "s", {128, 1});
  k.b.requested_api = "nisa.exponential";
  codegen::exponential(k.b, codegen::Dst::into(dst), x, Value(y), {ir::AccCmd::load_reduce, AluOp::add, &res, 2.0});
  k.store(res);
  const std::vector<std::string> lines = k.lines();
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_NE(lines[2].find("= exponential[dve](a_tile[i0, i1]; subtract b_tile[i0, 0]; exp; load_reduce add from 2)"),
            std::string::npos)
      << lines[2];
  const auto f = [](int p, int j) { return 0.01f * static_cast<float>((p * 3 + j) % 17); };
  const std::vector<float> out = k.run(f);
  for (int p = 0; p < 128; p += 9) {
    float sum = 0.0f;
    for (int j = 0; j < 64; ++j) sum += std::exp(f(p, j) - static_cast<float>(p) / 8.0f);
    EXPECT_NEAR(out[p], 2.0f + sum, 1e-5f * (2.0f + sum)) << p;
  }
}

TEST(IsaCurrent, ExponentialNeedsNeuronCoreV4ForItsApi) {
  Built k;  // trn2
  const TensorVal x = k.load(k.a);
  k.b.requested_api = "nisa.exponential";
  try {
    sema::assert_nc_version(k.b.target(), sema::op_spec(k.b.api()).min_nc_version, k.b.api(), k.b.raiser());
    ADD_FAILURE() << "nisa.exponential was accepted on NeuronCore-v3";
  } catch (const sema::NkiError& e) {
    EXPECT_EQ(e.diag().code, "err_min_arch_support_for_inst");
  }
}

TEST(IsaCurrent, CumulativeScansEachRowAndLeavesTheLastValueInTheAccumulator) {
  Built k;
  const TensorVal x = k.load(k.a);
  const TensorVal d1 = sbuf_tile(k, "c1", {128, 64}), d2 = sbuf_tile(k, "c2", {128, 64});
  k.b.requested_api = "nisa.tensor_scalar_cumulative";
  codegen::tensor_scalar_cumulative(k.b, d1, x, {AluOp::multiply, number(2.0)}, AluOp::add, std::nullopt,
                                    ir::AccCmd::reset_reduce);
  // reduce: the second scan starts from the first one's last value.
  const TensorVal c = codegen::tensor_scalar_cumulative(k.b, d2, x, {AluOp::subtract, number(1.0), true},
                                                        AluOp::maximum, std::nullopt, ir::AccCmd::reduce);
  k.store(c);
  const std::vector<std::string> lines = k.lines();
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_NE(lines[2].find("tensor_scalar_cumulative[dve](a_tile[i0, i1]; reverse subtract 1; reduce maximum)"),
            std::string::npos)
      << lines[2];
  const auto f = [](int p, int j) { return 0.25f * static_cast<float>((p + j * 5) % 11) - 1.0f; };
  const std::vector<float> out = k.run(f);
  for (int p = 0; p < 128; p += 7) {
    float reg = 0.0f;
    for (int j = 0; j < 64; ++j) reg = f(p, j) * 2.0f + reg;
    for (int j = 0; j < 64; ++j) {
      reg = std::max(1.0f - f(p, j), reg);
      ASSERT_EQ(out[p * 64 + j], reg) << p << ", " << j;
    }
  }
}

TEST(IsaCurrent, NonzeroWithCountWritesEachGpSimdCoresFirstPartitionExactly) {
  Built k(65, DType::int32, trn3());
  const TensorVal x = k.load(k.a);
  k.b.requested_api = "nisa.memset";
  const TensorVal dst = codegen::full(k.b, "nz", {128, 65}, DType::int32, Memory::SBUF, 0.0);
  k.b.requested_api = "nisa.nonzero_with_count";
  // Written into dst (the current API's destination passing): the other partitions keep their zeros.
  // An offset past fp32's exact integers: the indices are written as integers.
  codegen::nonzero_with_count(k.b, dst, x, (1 << 24) + 1, -3);
  k.store(dst);
  const auto f = [](int p, int j) { return (p + j) % 3 == 0 ? 1.0f : 0.0f; };
  const std::vector<float> raw = k.run(f);
  const auto* out = reinterpret_cast<const int32_t*>(raw.data());
  for (int p = 0; p < 128; ++p) {
    std::vector<int32_t> expect(65, 0);
    if (p % 16 == 0) {
      int n = 0;
      for (int j = 0; j < 64; ++j)
        if (f(p, j) != 0.0f) expect[n++] = (1 << 24) + 1 + j;
      for (int j = n; j < 64; ++j) expect[j] = -3;
      expect[64] = n;
    }
    ASSERT_EQ(std::vector<int32_t>(out + p * 65, out + p * 65 + 65), expect) << p;
  }
}

TEST(IsaCurrent, RngDrawsEachPartitionsXorwowStreamFromTheStateSet) {
  Built k(64, DType::uint32, trn3());
  k.b.requested_api = "nisa.memset";
  const TensorVal words = codegen::full(k.b, "w", {128, 6}, DType::uint32, Memory::SBUF, 7.0);
  const TensorVal bits = codegen::full(k.b, "r", {128, 64}, DType::uint32, Memory::SBUF, 0.0);
  k.b.requested_api = "nisa.rand_set_state";
  codegen::rand_set_state(k.b, words, ir::Engine::pool);
  k.b.requested_api = "nisa.rng";
  codegen::rng(k.b, bits, ir::Engine::pool);
  k.store(bits);
  const std::string text = ir::print(k.b.kernel(), {.show_locations = false});
  EXPECT_NE(text.find("  rand_set_state[pool](w[i0, i1]) iter=[128, 6]\n  r[i0, i1] = rng[pool]() iter=[128, 64]\n"),
            std::string::npos)
      << text;
  const std::vector<float> raw = k.run([](int, int) { return 0.0f; });
  const auto* out = reinterpret_cast<const uint32_t*>(raw.data());
  // Marsaglia's xorwow from x0..x4 = 7 and the Weyl counter d = 7.
  uint32_t x[5] = {7, 7, 7, 7, 7}, d = 7;
  for (int j = 0; j < 64; ++j) {
    uint32_t t = x[4];
    const uint32_t s = x[0];
    x[4] = x[3], x[3] = x[2], x[2] = x[1], x[1] = s;
    t ^= t >> 2;
    t ^= t << 1;
    t ^= s ^ (s << 4);
    x[0] = t;
    d += 362437u;
    for (int p = 0; p < 128; p += 31) ASSERT_EQ(out[p * 64 + j], t + d) << p << ", " << j;
  }
}

// nl.softmax lowers in C++ to the instructions neuronx-cc emits for it: a max fold, the
// shifted exp, a sum fold and the divide; the result matches a direct computation.
TEST(IsaComposites, SoftmaxIsMaxExpSumDivide) {
  Built k;
  const TensorVal x = k.load(k.a);
  k.b.requested_api = "nl.softmax";
  k.store(codegen::softmax(k.b, x, {1}, std::nullopt, {}));
  std::vector<std::string> ops;  // "dst = name[engine](...)": the names
  for (const std::string& l : k.lines()) {
    const size_t name = l.find(" = ") + 3;
    ops.push_back(l.substr(name, l.find('[', name) - name));
  }
  EXPECT_EQ(ops, (std::vector<std::string>{"load", "tensor_reduce", "tensor_tensor", "activation", "tensor_reduce",
                                           "tensor_tensor", "store"}));
  const auto f = [](int p, int j) { return 0.05f * static_cast<float>((p * 7 + j) % 23) - 0.5f; };
  const std::vector<float> out = k.run(f);
  for (int p = 0; p < 128; p += 13) {
    float m = -1e30f, s = 0.0f;
    for (int j = 0; j < 64; ++j) m = std::max(m, f(p, j));
    for (int j = 0; j < 64; ++j) s += std::exp(f(p, j) - m);
    for (int j = 0; j < 64; j += 9) EXPECT_NEAR(out[p * 64 + j], std::exp(f(p, j) - m) / s, 1e-6f) << p << " " << j;
  }
}

}  // namespace
}  // namespace nkic
