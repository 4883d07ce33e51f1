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

}  // namespace
}  // namespace nkic
