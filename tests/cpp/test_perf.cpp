// The cost model (perf/) on small hand-built schedules whose timing follows
// from the Target's figures by hand: one DMA, two engines overlapping, a
// dependent chain, and a loop of identical iterations costed without unrolling.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>

#include "ir/Diagnostic.h"
#include "perf/CostModel.h"
#include "perf/Report.h"
#include "sema/Target.h"
#include "perf_test_util.h"

namespace nkic {
namespace {

using namespace perf_test;

TEST(CostModel, OneDmaPaysItsFixedLatencyAndItsQueueTime) {
  ir::Kernel k;
  k.name = "load";
  int in = add_tensor(k, "a", {128, 512}, Memory::SharedHBM, ir::Role::Input);
  int sb = add_tensor(k, "t", {128, 512}, Memory::SBUF);
  k.body.push_back(inst(Opcode::Load, tile(sb), {tile(in)}));
  const sema::CostFigures& f = trn1().cost;
  perf::Profile p = perf::predict(k, trn1());
  // 128 partitions of 2 KiB: 128 DMA buffers over the 16 queues.
  const double bytes = 128 * 512 * 4.0, per_queue = (bytes + 128 * f.dma_buffer_overhead_bytes) / 16 / f.dma_queue_bytes_per_ns;
  EXPECT_NEAR(p.latency, f.dma_fixed_latency_ns + per_queue, 1e-6);
  EXPECT_EQ(p.dma_bytes, 128 * 512 * 4);
  EXPECT_NEAR(p.engines[4].busy, 16 * per_queue, 1e-6);
  EXPECT_EQ(p.engines[4].instructions, 1);
  int dma_slices = 0;
  for (const perf::Slice& s : p.slices) dma_slices += s.track >= perf::kComputeTracks;
  EXPECT_EQ(dma_slices, 16);  // one per queue
}

TEST(CostModel, ADmaTakesOneQueuePerEightPartitions) {
  // A [4, 4096] bf16 load (32 KiB): one queue, as measured on trn2 (about 23 B/ns on one engine).
  const sema::Target& t2 = *sema::find_target("trn2");
  ir::Kernel k;
  k.name = "narrow";
  int in = add_tensor(k, "a", {4, 4096}, Memory::SharedHBM, ir::Role::Input, DType::bfloat16);
  int sb = add_tensor(k, "t", {4, 4096}, Memory::SBUF, ir::Role::Local, DType::bfloat16);
  k.body.push_back(inst(Opcode::Load, tile(sb), {tile(in)}, {4, 4096}));
  perf::Profile p = perf::predict(k, t2);
  const sema::CostFigures& f = t2.cost;
  const double queue_time = (4 * 4096 * 2 + 4 * f.dma_buffer_overhead_bytes) / f.dma_queue_bytes_per_ns;
  EXPECT_NEAR(p.latency, f.dma_fixed_latency_ns + queue_time, 1e-6);
  EXPECT_NEAR(p.engines[4].busy, queue_time, 1e-6);
}

// x[i1, i0] = load(a[i0, i1]): a [512, 128] HBM tensor into a [128, 512] tile, transposed.
perf::Profile transposed_load(const sema::Target& t) {
  ir::Kernel k;
  k.name = "transpose";
  int in = add_tensor(k, "a", {512, 128}, Memory::SharedHBM, ir::Role::Input);
  int sb = add_tensor(k, "x", {128, 512}, Memory::SBUF);
  k.body.push_back(inst(Opcode::Load, ir::Access{sb, {AffineExpr::grid(1), AffineExpr::grid(0)}, {}}, {tile(in)},
                        {512, 128}));
  return perf::predict(k, t);
}

TEST(CostModel, ADmaTransposeRunsOnTheTransposingHardwareOrElementWise) {
  const double bytes = 512 * 128 * 4.0;
  // trn2: all 16 queues at 90 % of their bandwidth (the architecture guide's figure).
  const sema::Target& t2 = *sema::find_target("trn2");
  const sema::CostFigures& f2 = t2.cost;
  EXPECT_NEAR(transposed_load(t2).latency,
              f2.dma_fixed_latency_ns + bytes / (f2.dma_transpose_efficiency * 16 * f2.dma_queue_bytes_per_ns), 1e-6);
  // trn1 publishes no figure: the lowest published one (50 %).
  const sema::CostFigures& f1 = trn1().cost;
  EXPECT_NEAR(transposed_load(trn1()).latency, f1.dma_fixed_latency_ns + bytes / (0.5 * 16 * f1.dma_queue_bytes_per_ns),
              1e-6);
  // A transposing store (SBUF to HBM) has no transposing hardware: every element is a buffer.
  ir::Kernel k;
  k.name = "store_t";
  int sb = add_tensor(k, "x", {128, 512}, Memory::SBUF);
  int out = add_tensor(k, "out", {512, 128}, Memory::SharedHBM, ir::Role::Output);
  k.body.push_back(inst(Opcode::Store, tile(out), {ir::Access{sb, {AffineExpr::grid(1), AffineExpr::grid(0)}, {}}},
                        {512, 128}));
  const double per_queue = (bytes + 512 * 128 * f2.dma_buffer_overhead_bytes) / 16 / f2.dma_queue_bytes_per_ns;
  EXPECT_NEAR(perf::predict(k, t2).latency, f2.dma_fixed_latency_ns + per_queue, 1e-6);
}

TEST(CostModel, IndependentEnginesOverlapAndDependentOnesChain) {
  const sema::CostFigures& f = trn1().cost;
  const double dve = stream_latency(f.dve, 1), act = stream_latency(f.act, 1);
  {
    ir::Kernel k;
    k.name = "overlap";
    int a = add_tensor(k, "a", {128, 512}, Memory::SBUF), b = add_tensor(k, "b", {128, 512}, Memory::SBUF);
    int c = add_tensor(k, "c", {128, 512}, Memory::SBUF), d = add_tensor(k, "d", {128, 512}, Memory::SBUF);
    k.body.push_back(inst(Opcode::TensorScalar, tile(c), {tile(a)}));
    k.body.push_back(inst(Opcode::Activation, tile(d), {tile(b)}));
    perf::Profile p = perf::predict(k, trn1());
    EXPECT_NEAR(p.latency, std::max(dve, act), 1e-6);
    // Busy for the initiation interval (512 elements outlast the fixed cost), done a fixed cost later.
    EXPECT_NEAR(p.engines[2].busy, 512.0 / f.dve.clock_ghz, 1e-6);
    EXPECT_NEAR(p.engines[1].busy, 512.0 / f.act.clock_ghz, 1e-6);
  }
  {
    ir::Kernel k;
    k.name = "chain";
    int a = add_tensor(k, "a", {128, 512}, Memory::SBUF), c = add_tensor(k, "c", {128, 512}, Memory::SBUF);
    int d = add_tensor(k, "d", {128, 512}, Memory::SBUF);
    k.body.push_back(inst(Opcode::TensorScalar, tile(c), {tile(a)}));
    k.body.push_back(inst(Opcode::Activation, tile(d), {tile(c)}));
    perf::Profile p = perf::predict(k, trn1());
    EXPECT_NEAR(p.latency, dve + act, 1e-6);
    ASSERT_EQ(p.critical_path.size(), 2u);
    EXPECT_EQ(p.critical_path[0].opcode, Opcode::Activation);
    EXPECT_EQ(p.critical_path[1].opcode, Opcode::TensorScalar);
  }
}

TEST(CostModel, AnExplicitEdgeMakesIndependentEnginesChain) {
  const sema::CostFigures& f = trn1().cost;
  const double dve = stream_latency(f.dve, 1), act = stream_latency(f.act, 1);
  // depends_on / with_schedule / no_reorder: the Scalar Engine waits for the Vector Engine's end.
  for (bool edge : {false, true}) {
    ir::Kernel k;
    k.name = "edge";
    int a = add_tensor(k, "a", {128, 512}, Memory::SBUF), b = add_tensor(k, "b", {128, 512}, Memory::SBUF);
    int c = add_tensor(k, "c", {128, 512}, Memory::SBUF), d = add_tensor(k, "d", {128, 512}, Memory::SBUF);
    auto first = inst(Opcode::TensorScalar, tile(c), {tile(a)});
    first->id = 7;
    auto second = inst(Opcode::Activation, tile(d), {tile(b)});
    second->id = 8;
    if (edge) second->after = {7};
    k.body.push_back(std::move(first));
    k.body.push_back(std::move(second));
    perf::Profile p = perf::predict(k, trn1());
    EXPECT_NEAR(p.latency, edge ? dve + act : std::max(dve, act), 1e-6) << edge;
  }
}

// A Vector-Engine and a Scalar-Engine instruction, each reading a PSUM tile.
perf::Profile psum_readers(const sema::Target& t, bool same_tile) {
  ir::Kernel k;
  k.name = "psum";
  int a = add_tensor(k, "a", {128, 512}, Memory::PSUM);
  int b = same_tile ? a : add_tensor(k, "b", {128, 512}, Memory::PSUM);
  int c = add_tensor(k, "c", {128, 512}, Memory::SBUF), d = add_tensor(k, "d", {128, 512}, Memory::SBUF);
  k.body.push_back(inst(Opcode::TensorScalar, tile(c), {tile(a)}));
  k.body.push_back(inst(Opcode::Activation, tile(d), {tile(b)}));
  return perf::predict(k, t);
}

TEST(CostModel, TheVectorAndScalarEnginesShareThePsumPortOnNcV2AndOneBankLater) {
  const sema::Target& t2 = *sema::find_target("trn2");
  const double dve1 = stream_latency(trn1().cost.dve, 1), act1 = stream_latency(trn1().cost.act, 1);
  const double dve2 = stream_latency(t2.cost.dve, 1), act2 = stream_latency(t2.cost.act, 1);
  // NC-v2: the Scalar Engine streams PSUM once the Vector Engine's interval has passed.
  EXPECT_NEAR(psum_readers(trn1(), false).latency, 512.0 / trn1().cost.dve.clock_ghz + act1, 1e-6);
  EXPECT_GT(psum_readers(trn1(), false).latency, std::max(dve1, act1));
  // NC-v3: different banks overlap, one bank does not.
  EXPECT_NEAR(psum_readers(t2, false).latency, std::max(dve2, act2), 1e-6);
  EXPECT_NEAR(psum_readers(t2, true).latency, 512.0 / 2 / t2.cost.dve.clock_ghz + act2, 1e-6);
}

TEST(CostModel, AWriteWaitsForTheReadsOfWhatItOverwrites) {
  // The Scalar Engine reads a; the Vector Engine's memset of a waits until that read is done (WAR).
  ir::Kernel k;
  k.name = "war";
  int a = add_tensor(k, "a", {128, 512}, Memory::SBUF), d = add_tensor(k, "d", {128, 512}, Memory::SBUF);
  k.body.push_back(inst(Opcode::Activation, tile(d), {tile(a)}));
  auto zero = inst(Opcode::Memset, tile(a), {});
  zero->imms = {0.0};
  k.body.push_back(std::move(zero));
  const sema::CostFigures& f = trn1().cost;
  EXPECT_NEAR(perf::predict(k, trn1()).latency, stream_latency(f.act, 1) + stream_latency(f.dve, 1), 1e-6);
}

TEST(CostModel, TwoInputsTakeTwiceTheVectorEngineTime) {
  ir::Kernel k;
  k.name = "tt";
  int a = add_tensor(k, "a", {128, 512}, Memory::SBUF), b = add_tensor(k, "b", {128, 512}, Memory::SBUF);
  int c = add_tensor(k, "c", {128, 512}, Memory::SBUF);
  k.body.push_back(inst(Opcode::TensorTensor, tile(c), {tile(a), tile(b)}));
  EXPECT_NEAR(perf::predict(k, trn1()).latency, stream_latency(trn1().cost.dve, 2), 1e-6);
}

// c = tensor_tensor(a, b) on [128, width] fp32 with b as the IR holds it (`b_index`).
double tensor_tensor_latency(Memory b_memory, std::vector<int64_t> b_shape, AffineExpr b_partition, int64_t width) {
  ir::Kernel k;
  k.name = "tt";
  int a = add_tensor(k, "a", {128, width}, Memory::SBUF), b = add_tensor(k, "b", std::move(b_shape), b_memory);
  int c = add_tensor(k, "c", {128, width}, Memory::SBUF);
  ir::Access rhs = tile(b);
  rhs.index[0] = std::move(b_partition);
  k.body.push_back(inst(Opcode::TensorTensor, tile(c), {tile(a), rhs}, {128, width}));
  return perf::predict(k, trn1()).latency;
}

TEST(CostModel, TensorTensorReadsAnSbufAndAPsumInputAtOnce) {
  const sema::EngineFigures& dve = trn1().cost.dve;
  EXPECT_NEAR(tensor_tensor_latency(Memory::PSUM, {128, 512}, AffineExpr::grid(0), 512), stream_latency(dve, 1), 1e-6);
  EXPECT_NEAR(tensor_tensor_latency(Memory::SBUF, {128, 512}, AffineExpr::grid(0), 512), stream_latency(dve, 2), 1e-6);
}

TEST(CostModel, APartitionBroadcastIsATensorEngineMatmulReadFromPsumWhenItIsOneMatmulsOutput) {
  // b[0, i1] for every partition: first a Tensor-Engine matmul of a ones column with the fp32
  // row, one per PSUM bank (512 elements) at the fp32 rate (4 cycles per column on NC-v2);
  // the Vector Engine then reads it from PSUM up to one bank, assembled in SBUF beyond it.
  const sema::EngineFigures& dve = trn1().cost.dve;
  const double bank = 512.0 * 4 / trn1().cost.pe.clock_ghz;
  EXPECT_NEAR(tensor_tensor_latency(Memory::SBUF, {1, 512}, AffineExpr(0), 512), bank + stream_latency(dve, 1), 1e-6);
  EXPECT_NEAR(tensor_tensor_latency(Memory::SBUF, {1, 1024}, AffineExpr(0), 1024),
              2 * bank + (1024.0 * 2 + dve.fixed_cycles) / dve.clock_ghz, 1e-6);
  // A per-partition operand (b[i0, i1]) is no broadcast, nor one whose partitions a free
  // coordinate walks (b[i1, i1], as a transpose reads its source): no Tensor-Engine time.
  EXPECT_NEAR(tensor_tensor_latency(Memory::SBUF, {128, 512}, AffineExpr::grid(0), 512), stream_latency(dve, 2), 1e-6);
  EXPECT_NEAR(tensor_tensor_latency(Memory::SBUF, {512, 512}, AffineExpr::grid(1), 512), stream_latency(dve, 2), 1e-6);
}

// c += a as a Vector-Engine copy that accumulates.
double accumulate_latency(Memory a_memory, Memory c_memory) {
  ir::Kernel k;
  k.name = "acc";
  int a = add_tensor(k, "a", {128, 512}, a_memory), c = add_tensor(k, "c", {128, 512}, c_memory);
  auto copy = inst(Opcode::Copy, tile(c), {tile(a)});
  copy->accumulate = true;
  k.body.push_back(std::move(copy));
  return perf::predict(k, trn1()).latency;
}

TEST(CostModel, AnAccumulatingWriteToSbufReadsItsDestinationAndPsumAccumulatesInPlace) {
  const sema::EngineFigures& dve = trn1().cost.dve;
  EXPECT_NEAR(accumulate_latency(Memory::SBUF, Memory::SBUF), stream_latency(dve, 2), 1e-6);
  EXPECT_NEAR(accumulate_latency(Memory::PSUM, Memory::SBUF), stream_latency(dve, 1), 1e-6);
  EXPECT_NEAR(accumulate_latency(Memory::SBUF, Memory::PSUM), stream_latency(dve, 1), 1e-6);
}

TEST(CostModel, MatmulIssuesEveryMaxOfNAnd64Cycles) {
  for (int64_t n : {32, 512}) {
    ir::Kernel k;
    k.name = "mm";
    int s = add_tensor(k, "s", {128, 128}, Memory::SBUF, ir::Role::Local, DType::bfloat16);
    int m = add_tensor(k, "m", {128, n}, Memory::SBUF, ir::Role::Local, DType::bfloat16);
    int ps = add_tensor(k, "p", {128, n}, Memory::PSUM);
    auto in = inst(Opcode::Matmul, ir::Access{ps, {AffineExpr::grid(1), AffineExpr::grid(2)}, {}},
                   {ir::Access{s, {AffineExpr::grid(0), AffineExpr::grid(1)}, {}},
                    ir::Access{m, {AffineExpr::grid(0), AffineExpr::grid(2)}, {}}},
                   {128, 128, n});
    k.body.push_back(std::move(in));
    perf::Profile p = perf::predict(k, trn1());
    EXPECT_NEAR(p.latency, std::max<double>(n, 64) / trn1().cost.pe.clock_ghz, 1e-9) << n;
    EXPECT_NEAR(p.hfu, 1.0 * n / std::max<double>(n, 64), 1e-9) << n;  // a lone matmul uses the whole array
  }
}

// A loop of `n` iterations, each loading its own rows and storing them back.
ir::Kernel copy_loop(int64_t n, bool unrolled) {
  ir::Kernel k;
  k.name = "copy";
  k.current_api = true;  // its compiler keeps one transfer per iteration (perf/Coalescing.h)
  int in = add_tensor(k, "a", {128 * n, 512}, Memory::SharedHBM, ir::Role::Input);
  int out = add_tensor(k, "out", {128 * n, 512}, Memory::SharedHBM, ir::Role::Output);
  auto body = [&](ir::Block& b, int t, int64_t i, int var) {
    auto row = [&](int tensor) {
      ir::Access a = tile(tensor, 128, var);
      if (var < 0) a.index[0] = a.index[0] + AffineExpr(128 * i);
      return a;
    };
    b.push_back(inst(Opcode::Load, tile(t), {row(in)}));
    b.push_back(inst(Opcode::Store, row(out), {tile(t)}));
  };
  if (unrolled) {
    for (int64_t i = 0; i < n; ++i) body(k.body, add_tensor(k, "t" + std::to_string(i), {128, 512}, Memory::SBUF), i, -1);
  } else {
    auto loop = std::make_unique<ir::Loop>();
    loop->axis = 0;
    loop->name = "i";
    loop->ub = n;
    int t = add_tensor(k, "t", {128, 512}, Memory::SBUF);
    k.tensors[t].alloc_axis = 0;
    body(loop->body, t, 0, 0);
    k.body.push_back(std::move(loop));
    k.num_axes = 1;
  }
  return k;
}

TEST(CostModel, ALoopOfIdenticalIterationsCostsAsItsUnrolledCopyWithoutSchedulingEachOne) {
  for (const char* target : {"trn1", "trn2", "trn3"}) {
    const sema::Target& t = *sema::find_target(target);
    perf::Profile looped = perf::predict(copy_loop(400, false), t);
    perf::Profile unrolled = perf::predict(copy_loop(400, true), t);
    EXPECT_NEAR(looped.latency, unrolled.latency, 1e-6 * unrolled.latency) << target;
    EXPECT_EQ(looped.instructions, 800) << target;
    // Loads settle into the gaps the stores leave over the first iterations, and the 2 KiB
    // tile goes once through each of the buffers the SBUF holds (perf/Buffers.h); then the
    // iterations repeat every one (trn1, trn2) or few (trn3) iterations.
    const int64_t buffers = t.statebuf_par_size_in_bytes / (512 * 4);
    EXPECT_LT(looped.instructions_scheduled, 2 * buffers + 120) << target;
    EXPECT_EQ(unrolled.instructions_scheduled, 800) << target;
    EXPECT_NEAR(looped.engines[4].busy, unrolled.engines[4].busy, 1e-6 * unrolled.engines[4].busy) << target;
    // Linear in the trip count once the pipeline is full.
    const double l1 = perf::predict(copy_loop(1000, false), t).latency, l2 = perf::predict(copy_loop(2000, false), t).latency;
    const double l3 = perf::predict(copy_loop(3000, false), t).latency;
    EXPECT_NEAR(l3 - l2, l2 - l1, 1e-6 * l3) << target;
  }
}

// A steady stretch on the timeline repeats the slices of the period before it: its
// instructions drawn again `repeat` times, `period` apart, add up to the engine's busy time.
TEST(CostModel, ASteadyStretchNamesThePeriodItRepeats) {
  for (const char* target : {"trn1", "trn2", "trn3"}) {
    const perf::Profile p = perf::predict(copy_loop(400, false), *sema::find_target(target));
    std::vector<double> busy(perf::kComputeTracks + 1, 0.0);
    auto engine = [&](int track) { return std::min(track % p.tracks_per_core(), perf::kComputeTracks); };
    int stretches = 0;
    for (const perf::Slice& s : p.slices) {
      if (s.repeat == 1) {
        busy[engine(s.track)] += s.duration;
        continue;
      }
      ++stretches;
      EXPECT_NEAR(s.period * static_cast<double>(s.repeat), s.duration, 1e-9 * s.duration) << target;
      ASSERT_LT(s.pattern_begin, s.pattern_end) << target;
      double period_busy = 0;
      for (int64_t i = s.pattern_begin; i < s.pattern_end; ++i) {
        const perf::Slice& q = p.slices[static_cast<size_t>(i)];
        EXPECT_EQ(q.repeat, 1) << target;
        if (q.track == s.track) period_busy += q.duration;
      }
      EXPECT_GT(period_busy, 0) << target;
      busy[engine(s.track)] += period_busy * static_cast<double>(s.repeat);
      EXPECT_DOUBLE_EQ(perf::busy_within(p, s), period_busy * static_cast<double>(s.repeat)) << target;
    }
    EXPECT_GT(stretches, 0) << target;
    for (const perf::EngineUse& e : p.engines)
      EXPECT_NEAR(busy[static_cast<int>(e.track)], e.busy, 1e-9 * std::max(e.busy, 1.0)) << target << " " << perf::name(e.track);
  }
}

// for i in range(n): t = load(a); u = exp(t); v = load(b[i]); w = u + v; store(out[i], w)
// t and u are the same in every iteration: costed once, as neuronx-cc hoists
// them. `reads_loop_value` makes the activation read v instead, so it stays.
ir::Kernel invariant_loop(int64_t n, bool reads_loop_value) {
  ir::Kernel k;
  k.name = "invariant";
  int a = add_tensor(k, "a", {128, 512}, Memory::SharedHBM, ir::Role::Input);
  int b = add_tensor(k, "b", {128 * n, 512}, Memory::SharedHBM, ir::Role::Input);
  int out = add_tensor(k, "out", {128 * n, 512}, Memory::SharedHBM, ir::Role::Output);
  int t = add_tensor(k, "t", {128, 512}, Memory::SBUF), u = add_tensor(k, "u", {128, 512}, Memory::SBUF);
  int v = add_tensor(k, "v", {128, 512}, Memory::SBUF), w = add_tensor(k, "w", {128, 512}, Memory::SBUF);
  auto loop = std::make_unique<ir::Loop>();
  loop->axis = 0;
  loop->ub = n;
  ir::Block& body = loop->body;
  body.push_back(inst(Opcode::Load, tile(t), {tile(a)}));
  body.push_back(inst(Opcode::Load, tile(v), {tile(b, 128, 0)}));
  body.push_back(inst(Opcode::Activation, tile(u), {tile(reads_loop_value ? v : t)}));
  body.push_back(inst(Opcode::TensorTensor, tile(w), {tile(u), tile(v)}));
  body.push_back(inst(Opcode::Store, tile(out, 128, 0), {tile(w)}));
  k.body.push_back(std::move(loop));
  k.num_axes = 1;
  return k;
}

TEST(CostModel, AnInstructionWhoseOperandsDoNotChangeAcrossItsLoopIsCostedOnce) {
  const int64_t n = 50;
  perf::Profile hoisted = perf::predict(invariant_loop(n, false), trn1());
  EXPECT_EQ(hoisted.engines[1].instructions, 1);  // the activation
  EXPECT_EQ(hoisted.engines[2].instructions, n);  // the add reads v, loaded in every iteration
  EXPECT_EQ(hoisted.engines[4].instructions, 1 + 2 * n);
  EXPECT_TRUE(std::any_of(hoisted.notes.begin(), hoisted.notes.end(), [](const std::string& s) {
    return s.rfind("2 instruction(s) whose operands do not change across their loop's iterations", 0) == 0;
  }));
  perf::Profile kept = perf::predict(invariant_loop(n, true), trn1());
  EXPECT_EQ(kept.engines[1].instructions, n);
  EXPECT_EQ(kept.engines[4].instructions, 1 + 2 * n);  // the load of a still runs once
  EXPECT_NEAR(kept.engines[1].busy, n * hoisted.engines[1].busy, 1e-9 * kept.engines[1].busy);
  EXPECT_GT(kept.latency, hoisted.latency);
}

// for i in range(0, ub, 513): t = load(a[128 i + p, f], mask=128 i + p < 300); store(out[...], t, same mask)
// Only i = 0 has a row under 300.
ir::Kernel masked_tail(int64_t ub) {
  ir::Kernel k;
  k.name = "masked_tail";
  int a = add_tensor(k, "a", {300, 512}, Memory::SharedHBM, ir::Role::Input);
  int out = add_tensor(k, "out", {300, 512}, Memory::SharedHBM, ir::Role::Output);
  int t = add_tensor(k, "t", {128, 512}, Memory::SBUF);
  auto loop = std::make_unique<ir::Loop>();
  loop->axis = 0;
  loop->ub = ub;
  loop->stride = 513;
  const ir::Predicate rows_under_300{
      {AffineExpr(299) - AffineExpr::var({ir::VarKind::Loop, 0}, 128) - AffineExpr::grid(0), ir::CmpKind::Ge}};
  auto load = inst(Opcode::Load, tile(t), {tile(a, 128, 0)});
  auto store = inst(Opcode::Store, tile(out, 128, 0), {tile(t)});
  load->predicate = store->predicate = rows_under_300;
  loop->body.push_back(std::move(load));
  loop->body.push_back(std::move(store));
  k.body.push_back(std::move(loop));
  k.num_axes = 1;
  return k;
}

TEST(CostModel, TripsWhoseInstructionsAreAllMaskedOffAreNotWalked) {
  // 1.8e16 trips, of which the first alone has work: predicted as the one-trip loop, at once.
  const perf::Profile huge = perf::predict(masked_tail(std::numeric_limits<int64_t>::max()), trn1());
  const perf::Profile one = perf::predict(masked_tail(1), trn1());
  EXPECT_EQ(huge.engines[4].instructions, 2);
  EXPECT_DOUBLE_EQ(huge.latency, one.latency);
  EXPECT_GT(one.latency, 0);
}

// A loop of n trips whose every instruction is loop-invariant: t = load(a); u = exp(t).
ir::Kernel all_invariant(int64_t n) {
  ir::Kernel k;
  k.name = "all_invariant";
  int a = add_tensor(k, "a", {128, 512}, Memory::SharedHBM, ir::Role::Input);
  int t = add_tensor(k, "t", {128, 512}, Memory::SBUF), u = add_tensor(k, "u", {128, 512}, Memory::SBUF);
  auto loop = std::make_unique<ir::Loop>();
  loop->axis = 0;
  loop->ub = n;
  loop->body.push_back(inst(Opcode::Load, tile(t), {tile(a)}));
  loop->body.push_back(inst(Opcode::Activation, tile(u), {tile(t)}));
  k.body.push_back(std::move(loop));
  k.num_axes = 1;
  return k;
}

TEST(CostModel, LaterTripsThatAddNothingAreRepeatedWithoutBeingWalked) {
  // After the first trip every instruction is hoisted: 10^15 trips cost what 3 do.
  const perf::Profile huge = perf::predict(all_invariant(1'000'000'000'000'000), trn1());
  EXPECT_EQ(huge.engines[1].instructions, 1);
  EXPECT_DOUBLE_EQ(huge.latency, perf::predict(all_invariant(3), trn1()).latency);
}

TEST(CostModel, ATargetWithoutFiguresIsADiagnostic) {
  try {
    perf::predict(copy_loop(2, false), *sema::find_target("inf1"));
    FAIL() << "expected err_no_cost_figures";
  } catch (const ir::NkiError& e) {
    EXPECT_EQ(e.diag().code, "err_no_cost_figures");
    EXPECT_EQ(e.diag().message, "no published engine and DMA figures for target 'inf1': nkic cannot predict its latency");
  }
}

TEST(CostModel, TraceJsonHasOneTrackPerEngineAndQueueAndTheSourceLine) {
  ir::Kernel k = copy_loop(3, false);
  static const std::string file = "kernel.py";
  for (auto& s : static_cast<ir::Loop&>(*k.body[0]).body) static_cast<ir::Instruction&>(*s).loc = {&file, 7, 3};
  const std::string json = perf::trace_json(perf::predict(k, trn1()));
  for (const char* track : {"\"pe\"", "\"act\"", "\"dve\"", "\"pool\"", "\"dma0\"", "\"dma15\""})
    EXPECT_NE(json.find(std::string("\"args\":{\"name\":") + track), std::string::npos) << track;
  EXPECT_NE(json.find("\"source\":\"kernel.py:7:3\",\"line\":7"), std::string::npos);
  EXPECT_NE(json.find("\"ph\":\"X\""), std::string::npos);
  const std::string html = perf::html_report(perf::predict(k, trn1()));
  EXPECT_NE(html.find("id=\"nkic-data\""), std::string::npos);
  EXPECT_EQ(html.find("</script>", html.find("id=\"nkic-data\"")), html.find("</script>\n<script>"));
}

}  // namespace
}  // namespace nkic
