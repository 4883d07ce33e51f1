// The Target's published figures as the cost model applies them, on one-instruction
// kernels whose time is worked out by hand (sema/Target.cpp, docs/performance.md).
#include <gtest/gtest.h>

#include "perf/CostModel.h"
#include "perf_test_util.h"

namespace nkic {
namespace {

using namespace perf_test;

// One Tensor-Engine transpose of a [128, 128] tile of `dt` into PSUM.
ir::Kernel pe_transpose(DType dt) {
  ir::Kernel k;
  k.name = "transpose";
  const int x = add_tensor(k, "x", {128, 128}, Memory::SBUF, ir::Role::Local, dt);
  const int y = add_tensor(k, "y", {128, 128}, Memory::PSUM, ir::Role::Local, dt);
  k.body.push_back(inst(Opcode::Transpose, tile(y), {tile(x)}, {128, 128}));
  return k;
}

TEST(TargetFigures, AnFp32TransposeTakesHalfTheFp32MatmulTimeFromNeuronCoreV3) {
  // max(N, 64) cycles for N = 128 partitions; FP32 4x on NC-v2, 2x in NC-v3's transpose mode
  // ("2x speedup in FP32 transpose", the trn2 architecture guide).
  EXPECT_NEAR(perf::predict(pe_transpose(DType::float32), trn1()).latency, 128 * 4 / 2.8, 1e-9);
  for (const char* name : {"trn2", "trn3"}) {
    const sema::Target& t = *sema::find_target(name);
    EXPECT_NEAR(perf::predict(pe_transpose(DType::float32), t).latency, 128 * 2 / 2.4, 1e-9) << name;
    EXPECT_NEAR(perf::predict(pe_transpose(DType::bfloat16), t).latency, 128 / 2.4, 1e-9) << name;
    EXPECT_EQ(t.cost.fp32_cycle_factor, 4) << name;  // 20 FP32 against 79 BF16 dense TFLOPS per core
  }
}

// One instruction `op` writing a [128, 512] fp32 SBUF tile from `srcs` (each [128, 512] in
// SBUF or, where `psum` says so, PSUM; the last one the destination itself when `dst_last`).
ir::Kernel one(Opcode op, std::vector<bool> psum, bool dst_last = false) {
  ir::Kernel k;
  k.name = "one";
  const int y = add_tensor(k, "y", {128, 512}, Memory::SBUF);
  std::vector<ir::Access> srcs;
  for (size_t i = 0; i < psum.size(); ++i)
    srcs.push_back(tile(add_tensor(k, "x" + std::to_string(i), {128, 512}, psum[i] ? Memory::PSUM : Memory::SBUF)));
  if (dst_last) srcs.push_back(tile(y));
  k.body.push_back(inst(op, tile(y), std::move(srcs)));
  return k;
}

TEST(InstructionFacts, IotaAndAffineSelectPayTheGpSimdStartOf150Cycles) {
  // 150 + N GpSimd cycles (the nki.isa reference), N = 512, at trn1's 1.4 GHz.
  EXPECT_NEAR(perf::predict(one(Opcode::Iota, {}), trn1()).latency, (512 + 150) / 1.4, 1e-9);
  EXPECT_NEAR(perf::predict(one(Opcode::AffineSelect, {false}), trn1()).latency, (512 + 150) / 1.4, 1e-9);
  // Another GpSimd instruction keeps the Target's fixed cost.
  ir::Kernel copy = one(Opcode::Copy, {false});
  static_cast<ir::Instruction&>(*copy.body[0]).engine = ir::Engine::pool;
  EXPECT_NEAR(perf::predict(copy, trn1()).latency, (512 + trn1().cost.pool.fixed_cycles) / 1.4, 1e-9);
}

TEST(InstructionFacts, TensorCopyPredicatedStreamsItsSourceAndPredicateNotTheKeptDestination) {
  // 2N with src and predicate in SBUF, N with one of them in PSUM; plus the Vector Engine's
  // fixed cost, at trn1's 1.12 GHz.
  const double fixed = trn1().cost.dve.fixed_cycles;
  EXPECT_NEAR(perf::predict(one(Opcode::CopyPredicated, {false, false}, true), trn1()).latency,
              (2 * 512 + fixed) / 1.12, 1e-9);
  EXPECT_NEAR(perf::predict(one(Opcode::CopyPredicated, {false, true}, true), trn1()).latency, (512 + fixed) / 1.12,
              1e-9);
}

TEST(InstructionFacts, SmallVectorInstructionsIssueEveryMinIiCycles) {
  // Two independent tensor_scalar of 8 fp32 per partition: the second issues MIN_II (64) cycles
  // after the first, and its result is ready its 8 cycles and the 100-cycle fixed cost later.
  ir::Kernel k;
  k.name = "two";
  for (int i = 0; i < 2; ++i) {
    const int x = add_tensor(k, "x" + std::to_string(i), {128, 8}, Memory::SBUF);
    const int y = add_tensor(k, "y" + std::to_string(i), {128, 8}, Memory::SBUF);
    k.body.push_back(inst(Opcode::TensorScalar, tile(y), {tile(x)}, {128, 8}));
  }
  const sema::EngineFigures& dve = trn1().cost.dve;
  EXPECT_EQ(dve.min_ii(), 64);
  EXPECT_NEAR(perf::predict(k, trn1()).latency, (64 + 8 + dve.fixed_cycles) / dve.clock_ghz, 1e-9);
  // The Scalar Engine's measured interval is its fixed cost (264 cycles).
  EXPECT_EQ(trn1().cost.act.min_ii(), trn1().cost.act.fixed_cycles);
}

TEST(InstructionFacts, BnAggrTakes13CyclesPerStatisticsTriple) {
  // max(MIN_II, 13 * (N / 3)) Vector cycles for N = 48 elements of bn_stats results per partition.
  ir::Kernel k;
  k.name = "aggr";
  const int x = add_tensor(k, "x", {128, 48}, Memory::SBUF), y = add_tensor(k, "y", {128, 2}, Memory::SBUF);
  ir::Access out = tile(y);
  out.index[1] = AffineExpr(0);
  k.body.push_back(inst(Opcode::BnAggr, out, {tile(x)}, {128, 48}));
  EXPECT_NEAR(perf::predict(k, trn1()).latency, (13.0 * 48 / 3 + trn1().cost.dve.fixed_cycles) / 1.12, 1e-9);
}

TEST(InstructionFacts, ReciprocalTakes8VectorCyclesPerElementInACurrentApiKernel) {
  // max(MIN_II, 8 * N) Vector cycles for N = 512, where another activation streams N; a legacy
  // kernel's reciprocal streams N too (neuronx-cc's measured kernels do not pay 8N).
  auto activation = [](ir::AluOp op, ir::Engine engine, bool current_api = true) {
    ir::Kernel k;
    k.name = "one";
    k.current_api = current_api;
    const int x = add_tensor(k, "x", {128, 512}, Memory::SBUF), y = add_tensor(k, "y", {128, 512}, Memory::SBUF);
    auto in = inst(Opcode::Activation, tile(y), {tile(x)});
    in->alu = op;
    in->engine = engine;
    k.body.push_back(std::move(in));
    return k;
  };
  const sema::EngineFigures& dve = trn1().cost.dve;
  EXPECT_NEAR(perf::predict(activation(ir::AluOp::reciprocal, ir::Engine::dve), trn1()).latency,
              (8.0 * 512 / dve.elems_per_cycle + dve.fixed_cycles) / dve.clock_ghz, 1e-9);
  EXPECT_NEAR(perf::predict(activation(ir::AluOp::reciprocal, ir::Engine::dve, false), trn1()).latency,
              (512 / dve.elems_per_cycle + dve.fixed_cycles) / dve.clock_ghz, 1e-9);
  const sema::EngineFigures& act = trn1().cost.act;
  EXPECT_NEAR(perf::predict(activation(ir::AluOp::exp, ir::Engine::act), trn1()).latency,
              (512 / act.elems_per_cycle + act.fixed_cycles) / act.clock_ghz, 1e-9);
}

}  // namespace
}  // namespace nkic
