// What decided a prediction (perf/Explain.h, Profile::decided_by): the critical path split by
// engine, DMA and waiting, and the figures behind its largest part, on hand-built kernels.
#include <gtest/gtest.h>

#include "perf/CostModel.h"
#include "perf/Explain.h"
#include "perf_test_util.h"

namespace nkic {
namespace {

using namespace perf_test;

TEST(DecidedBy, NamesThePartsLargestFirstAndTheFiguresOfTheLargest) {
  perf::CriticalShares s;
  s.total = 10000;
  s.track[static_cast<int>(perf::Track::dve)] = 6000;
  s.track[static_cast<int>(perf::Track::dma)] = 1000;
  s.at_floor[static_cast<int>(perf::Track::dve)] = 6000;
  EXPECT_EQ(perf::decided_by(s, trn1()),
            "critical path 10.000 us: 60 % Vector Engine, 30 % waiting on fixed latencies, 10 % DMA queues; the "
            "Vector Engine runs at 1.12 GHz; 100 % of its time there is instructions too small to fill its 64-cycle "
            "minimum interval (MIN_II)");
  // Streaming, with a tenth of it at the floor.
  s.at_floor[static_cast<int>(perf::Track::dve)] = 600;
  EXPECT_EQ(perf::decided_by(s, trn1()),
            "critical path 10.000 us: 60 % Vector Engine, 30 % waiting on fixed latencies, 10 % DMA queues; the "
            "Vector Engine runs at 1.12 GHz, 1 element per partition per cycle (10 % of its time there at its "
            "64-cycle minimum interval (MIN_II))");
  // Parts under half a percent are left out; waiting names the fixed latencies.
  perf::CriticalShares w;
  w.total = 2000;
  w.track[static_cast<int>(perf::Track::pe)] = 5;
  w.track[static_cast<int>(perf::Track::dma)] = 700;
  EXPECT_EQ(perf::decided_by(w, trn1()),
            "critical path 2.000 us: 65 % waiting on fixed latencies, 35 % DMA queues; waiting is the DMA fixed "
            "latency (1300 ns per transfer) and the engines' fixed cost before a result is read (100 Vector, 264 "
            "Scalar cycles)");
  EXPECT_EQ(perf::decided_by(perf::CriticalShares{}, trn1()), "");
}

TEST(DecidedBy, ALoadIsItsQueueTimeAfterTheFixedLatency) {
  // One [128, 2048] fp32 load: 16 queues of 8 partitions, one 8 KiB run per partition.
  ir::Kernel k;
  k.name = "load";
  const int a = add_tensor(k, "a", {128, 2048}, Memory::SharedHBM, ir::Role::Input);
  const int t = add_tensor(k, "t", {128, 2048}, Memory::SBUF);
  k.body.push_back(inst(Opcode::Load, tile(t), {tile(a)}, {128, 2048}));
  const sema::CostFigures& f = trn1().cost;
  const double queue = 8 * (2048 * 4 + f.dma_buffer_overhead_bytes) / f.dma_queue_bytes_per_ns;
  const perf::Profile p = perf::predict(k, trn1());
  ASSERT_NEAR(p.latency, f.dma_fixed_latency_ns + queue, 1e-6);
  char head[64];
  std::snprintf(head, sizeof head, "critical path %.3f us: %.0f %% DMA queues, %.0f %% waiting", p.latency / 1e3,
                100 * queue / p.latency, 100 * f.dma_fixed_latency_ns / p.latency);
  EXPECT_EQ(p.decided_by, std::string(head) +
                              " on fixed latencies; the DMA queues move runs of 8192 B on average, each paying 512 B "
                              "of buffer overhead, at 17 B/ns per queue (16 queues)");
}

TEST(DecidedBy, AChainOfOneColumnAddsIsTheVectorEnginesMinimumInterval) {
  // t = t + 1, four times, on a [128, 1] tile already in SBUF: each add waits for the last.
  ir::Kernel k;
  k.name = "chain";
  const int t = add_tensor(k, "t", {128, 1}, Memory::SBUF);
  for (int i = 0; i < 4; ++i) k.body.push_back(inst(Opcode::TensorScalar, tile(t), {tile(t)}, {128, 1}));
  const perf::Profile p = perf::predict(k, trn1());
  EXPECT_EQ(p.decided_by.substr(p.decided_by.find(';')),
            "; the Vector Engine runs at 1.12 GHz; 100 % of its time there is instructions too small to fill its "
            "64-cycle minimum interval (MIN_II)");
  EXPECT_EQ(p.decided_by.find("critical path"), 0u);
}

TEST(DecidedBy, AnInstructionFillingAnEarlierGapDoesNotCutThePath) {
  // x = load(a) ([128, 64]); y = x + 1 waits for it, leaving the Vector Engine idle until then;
  // w = w + 1 ([128, 1], ready at once) fills that gap; v = v + 1 ([128, 4096], too long for
  // the gap) waits for y to leave the engine. The path is v, y, the load: w is off it.
  ir::Kernel k;
  k.name = "gap";
  static const std::string file = "gap.py";
  const int a = add_tensor(k, "a", {128, 64}, Memory::SharedHBM, ir::Role::Input);
  const int x = add_tensor(k, "x", {128, 64}, Memory::SBUF), y = add_tensor(k, "y", {128, 64}, Memory::SBUF);
  const int w = add_tensor(k, "w", {128, 1}, Memory::SBUF), v = add_tensor(k, "v", {128, 4096}, Memory::SBUF);
  auto at_line = [&](std::unique_ptr<ir::Instruction> in, int line) {
    in->loc = {&file, line, 0};
    k.body.push_back(std::move(in));
  };
  at_line(inst(Opcode::Load, tile(x), {tile(a)}, {128, 64}), 1);
  at_line(inst(Opcode::TensorScalar, tile(y), {tile(x)}, {128, 64}), 2);
  at_line(inst(Opcode::TensorScalar, tile(w), {tile(w)}, {128, 1}), 3);
  at_line(inst(Opcode::TensorScalar, tile(v), {tile(v)}, {128, 4096}), 4);
  const perf::Profile p = perf::predict(k, trn1());
  double critical[5] = {};
  for (const perf::LineCost& l : p.lines) critical[l.loc.line] = l.critical;
  EXPECT_GT(critical[1], 0);
  EXPECT_GT(critical[2], 0);
  EXPECT_EQ(critical[3], 0);
  EXPECT_NEAR(critical[1] + critical[2] + critical[4] + trn1().cost.dma_fixed_latency_ns, p.latency, 1e-6);
}

}  // namespace
}  // namespace nkic
