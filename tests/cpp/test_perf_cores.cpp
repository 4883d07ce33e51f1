// The cost model on a kernel[n] launch (ir::Kernel::core_spans): each physical core runs
// on its own engines and DMA queues, and the cores wait for each other only at sync points.
#include <gtest/gtest.h>

#include <string>

#include "perf/CostModel.h"
#include "perf/Report.h"
#include "perf_test_util.h"

namespace nkic {
namespace {

using namespace perf_test;

const sema::Target& trn2() { return *sema::find_target("trn2"); }

// Core c loads rows [64c, 64c + 64) of `a`, runs `ops` dependent Vector-Engine
// instructions on them and stores them to the same rows of `out`.
void core_work(ir::Kernel& k, int a, int out, int c, int ops) {
  const int t = add_tensor(k, "t" + std::to_string(c), {64, 512}, Memory::SBUF);
  const size_t first = k.body.size();
  auto rows = [c](int tensor) {
    ir::Access x = tile(tensor);
    x.index[0] = x.index[0] + AffineExpr(int64_t{64} * c);
    return x;
  };
  k.body.push_back(inst(Opcode::Load, tile(t), {rows(a)}, {64, 512}));
  for (int i = 0; i < ops; ++i) k.body.push_back(inst(Opcode::TensorScalar, tile(t), {tile(t)}, {64, 512}));
  k.body.push_back(inst(Opcode::Store, rows(out), {tile(t)}, {64, 512}));
  k.core_spans.push_back({first, k.body.size(), c, 0});
}

ir::Kernel two_cores(int ops0, int ops1) {
  ir::Kernel k;
  k.name = "lnc";
  k.physical_cores = 2;
  const int a = add_tensor(k, "a", {128, 512}, Memory::SharedHBM, ir::Role::Input);
  const int out = add_tensor(k, "out", {128, 512}, Memory::SharedHBM, ir::Role::Output);
  core_work(k, a, out, 0, ops0);
  core_work(k, a, out, 1, ops1);
  return k;
}

// One core's load, `ops` dependent [64, 512] fp32 Vector-Engine instructions and store on trn2.
double one_core(int ops) {
  const sema::CostFigures& f = trn2().cost;
  // 64 partitions of 2 KiB: 8 queues of 8 buffers each.
  const double dma = f.dma_fixed_latency_ns + (64 * 2048.0 + 64 * f.dma_buffer_overhead_bytes) / 8 / f.dma_queue_bytes_per_ns;
  return 2 * dma + ops * stream_latency(f.dve, 1);
}

TEST(CostModelCores, TwoCoresWithEqualIndependentWorkTakeTheTimeOfOne) {
  const perf::Profile p = perf::predict(two_cores(3, 3), trn2());
  EXPECT_NEAR(p.latency, one_core(3), 1e-6);
  EXPECT_EQ(p.cores, 2);
  EXPECT_EQ(p.engines[2].instructions, 6);
  // Each core's busy time counts; the percentages are of both cores.
  EXPECT_NEAR(p.engines[2].busy, 6 * 512.0 / 2 / trn2().cost.dve.clock_ghz, 1e-6);
  // The timeline has a track per engine and queue of each core.
  bool core1_dve = false;
  for (const perf::Slice& s : p.slices) core1_dve |= perf::track_name(p, s.track) == "core1.dve";
  EXPECT_TRUE(core1_dve);
  EXPECT_EQ(perf::track_name(p, 0), "core0.pe");
  EXPECT_EQ(perf::track_name(p, p.tracks_per_core() + perf::kComputeTracks + 15), "core1.dma15");
  // Unequal work: the slower core sets the latency.
  EXPECT_NEAR(perf::predict(two_cores(1, 4), trn2()).latency, one_core(4), 1e-6);
}

TEST(CostModelCores, ABarrierMakesCoreOneWaitForCoreZerosSlowerSegment) {
  // Segment 0: core 0 runs 4 instructions, core 1 one; after the barrier core 1 runs one more.
  ir::Kernel k = two_cores(4, 1);
  const int t1 = k.tensors.back().id;  // core 1's tile
  const int u = add_tensor(k, "u", {64, 512}, Memory::SBUF);
  const size_t first = k.body.size();
  k.body.push_back(inst(Opcode::TensorScalar, tile(u), {tile(t1)}, {64, 512}));
  k.core_spans.push_back({first, k.body.size(), 1, 1});
  const double after = stream_latency(trn2().cost.dve, 1);
  const perf::Profile p = perf::predict(k, trn2());
  EXPECT_NEAR(p.latency, one_core(4) + after, 1e-6);
  // The critical path runs back through core 0's store.
  ASSERT_GE(p.critical_path.size(), 2u);
  EXPECT_EQ(perf::track_name(p, p.critical_path[0].track), "core1.dve");
  EXPECT_EQ(p.critical_path[1].opcode, Opcode::Store);
  EXPECT_LT(p.critical_path[1].track, p.tracks_per_core());
  // Without the barrier core 1's last instruction follows its own work only.
  k.core_spans.back().segment = 0;
  EXPECT_NEAR(perf::predict(k, trn2()).latency, one_core(4), 1e-6);
}

TEST(CostModelCores, AnExchangeRunsOnTheSendersQueuesAndTheReceiverWaitsForIt) {
  // Segment 0: each core fills its tile; the exchange copies core 0's tile into core 1's
  // `in1`; core 1 then reads it.
  ir::Kernel k;
  k.name = "sendrecv";
  k.physical_cores = 2;
  const int t0 = add_tensor(k, "t0", {64, 512}, Memory::SBUF), t1 = add_tensor(k, "t1", {64, 512}, Memory::SBUF);
  const int in1 = add_tensor(k, "in1", {64, 512}, Memory::SBUF), u = add_tensor(k, "u", {64, 512}, Memory::SBUF);
  for (int c = 0; c < 2; ++c) {
    auto fill = inst(Opcode::Memset, tile(c ? t1 : t0), {}, {64, 512});
    fill->imms = {1.0};
    k.body.push_back(std::move(fill));
    k.core_spans.push_back({k.body.size() - 1, k.body.size(), c, 0});
  }
  k.body.push_back(inst(Opcode::Load, tile(in1), {tile(t0)}, {64, 512}));  // an SBUF-to-SBUF DMA
  k.core_spans.push_back({k.body.size() - 1, k.body.size(), -1, 1});
  k.body.push_back(inst(Opcode::TensorScalar, tile(u), {tile(in1), tile(t1)}, {64, 512}));
  k.core_spans.push_back({k.body.size() - 1, k.body.size(), 1, 1});
  const sema::CostFigures& f = trn2().cost;
  const double fill = stream_latency(f.dve, 1);  // a memset streams at the rate of one operand
  const double dma = f.dma_fixed_latency_ns + (64 * 2048.0 + 64 * f.dma_buffer_overhead_bytes) / 8 / f.dma_queue_bytes_per_ns;
  const perf::Profile p = perf::predict(k, trn2());
  EXPECT_NEAR(p.latency, fill + dma + stream_latency(f.dve, 2), 1e-6);
  bool on_core0_queue = false;
  for (const perf::Slice& s : p.slices) on_core0_queue |= perf::track_name(p, s.track) == "core0.dma0";
  EXPECT_TRUE(on_core0_queue);
}

}  // namespace
}  // namespace nkic
