// What the cost model assumes of neuronx-cc's instruction scheduling, on hand-built
// kernels: a transfer fills a DMA queue's idle gap (streaming through it when it is longer),
// and an affine loop's later iterations hide a dependent chain's fixed result latency on one
// engine.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>

#include "perf/CostModel.h"
#include "perf_test_util.h"

namespace nkic {
namespace {

using namespace perf_test;

// load x; y = x + 1 (Vector Engine); store y; and, with `extra`, an independent load z of
// `z_cols` fp32 columns.
perf::Profile load_compute_store(bool extra, int64_t z_cols = 512) {
  ir::Kernel k;
  k.name = "gap";
  const int a = add_tensor(k, "a", {128, 512}, Memory::SharedHBM, ir::Role::Input);
  const int b = add_tensor(k, "b", {128, z_cols}, Memory::SharedHBM, ir::Role::Input);
  const int out = add_tensor(k, "out", {128, 512}, Memory::SharedHBM, ir::Role::Output);
  const int x = add_tensor(k, "x", {128, 512}, Memory::SBUF), y = add_tensor(k, "y", {128, 512}, Memory::SBUF);
  const int z = add_tensor(k, "z", {128, z_cols}, Memory::SBUF);
  k.body.push_back(inst(Opcode::Load, tile(x), {tile(a)}));
  k.body.push_back(inst(Opcode::TensorScalar, tile(y), {tile(x)}));
  k.body.push_back(inst(Opcode::Store, tile(out), {tile(y)}));
  if (extra) k.body.push_back(inst(Opcode::Load, tile(z), {tile(b)}, {128, z_cols}));
  return perf::predict(k, trn1());
}

TEST(CostModelReordering, ALaterIndependentTransferFillsTheGapAQueueLeftWaiting) {
  const sema::CostFigures& f = trn1().cost;
  const double dma = (128 * 2048.0 + 128 * f.dma_buffer_overhead_bytes) / 16 / f.dma_queue_bytes_per_ns;
  const double alone = 2 * (f.dma_fixed_latency_ns + dma) + stream_latency(f.dve, 1);
  EXPECT_NEAR(load_compute_store(false).latency, alone, 1e-6);
  // The store waits for the Vector Engine and its fixed latency: its queues are idle after
  // the first load for longer than the second load takes, so that load goes there.
  ASSERT_LT(dma, f.dma_fixed_latency_ns);
  const perf::Profile p = load_compute_store(true);
  EXPECT_NEAR(p.latency, alone, 1e-6);
  double z_start = -1;
  for (const perf::Slice& s : p.slices)
    if (s.track == perf::kComputeTracks && s.opcode == Opcode::Load && s.start > 0) z_start = s.start;
  EXPECT_NEAR(z_start, f.dma_fixed_latency_ns + dma, 1e-6);
}

TEST(CostModelReordering, ATransferLongerThanTheGapStreamsThroughItAndAroundTheNextTransfer) {
  // z (8 KiB per partition) is ready when x's load leaves the queues idle until the store, for
  // less time than z takes: the queue's engine interleaves rings, so z moves its bytes in that
  // gap, then in the queue time after the store, and ends one gap earlier than behind the store.
  const sema::CostFigures& f = trn1().cost;
  auto per_queue = [&f](double bytes) { return 128 * (bytes + f.dma_buffer_overhead_bytes) / 16 / f.dma_queue_bytes_per_ns; };
  const double dx = per_queue(2048), dz = per_queue(8192), gap = f.dma_fixed_latency_ns + stream_latency(f.dve, 1);
  ASSERT_GT(dz, gap);
  const perf::Profile p = load_compute_store(true, 2048);
  const double store_end = 2 * f.dma_fixed_latency_ns + 2 * dx + stream_latency(f.dve, 1);
  EXPECT_NEAR(p.latency, f.dma_fixed_latency_ns + 2 * dx + dz, 1e-6);
  EXPECT_LT(p.latency, store_end + dz);
  std::vector<std::pair<double, double>> z_pieces;
  for (const perf::Slice& s : p.slices)
    if (s.track == perf::kComputeTracks && s.opcode == Opcode::Load && s.start > f.dma_fixed_latency_ns)
      z_pieces.emplace_back(s.start, s.start + s.duration);
  ASSERT_EQ(z_pieces.size(), 2u);
  EXPECT_NEAR(z_pieces[0].first, f.dma_fixed_latency_ns + dx, 1e-6);
  EXPECT_NEAR(z_pieces[0].second, store_end - dx, 1e-6);
  EXPECT_NEAR(z_pieces[1].first, store_end, 1e-6);
  EXPECT_NEAR(z_pieces[1].second - z_pieces[1].first + z_pieces[0].second - z_pieces[0].first, dz, 1e-6);
}

TEST(CostModelReordering, AnEngineRemembersItsSixteenLatestIdleGaps) {
  // 18 loads, each followed by y_i = x_i + 1 on the Vector Engine, leave it 18 idle gaps (before
  // y_0, and between each y and the next load's end); z = c + 1, ready at once, goes into the
  // earliest gap the engine still remembers: the third, after y_1, as the two oldest are gone.
  ir::Kernel k;
  k.name = "gaps";
  const int c = add_tensor(k, "c", {128, 64}, Memory::SBUF), z = add_tensor(k, "z", {128, 64}, Memory::SBUF);
  for (int i = 0; i < 18; ++i) {
    const std::string n = std::to_string(i);
    const int a = add_tensor(k, "a" + n, {128, 512}, Memory::SharedHBM, ir::Role::Input);
    const int x = add_tensor(k, "x" + n, {128, 512}, Memory::SBUF), y = add_tensor(k, "y" + n, {128, 512}, Memory::SBUF);
    k.body.push_back(inst(Opcode::Load, tile(x), {tile(a)}));
    k.body.push_back(inst(Opcode::TensorScalar, tile(y), {tile(x)}));
  }
  k.body.push_back(inst(Opcode::TensorScalar, tile(z), {tile(c)}, {128, 64}));
  const perf::Profile p = perf::predict(k, trn1());
  std::vector<std::pair<double, double>> dve;
  for (const perf::Slice& s : p.slices)
    if (s.track == static_cast<int>(perf::Track::dve)) dve.emplace_back(s.start, s.start + s.duration);
  ASSERT_EQ(dve.size(), 19u);
  std::sort(dve.begin(), dve.end());
  // y_0, y_1, then z in the gap after y_1, before y_2.
  EXPECT_GT(dve[0].first, 0);
  EXPECT_NEAR(dve[2].first, dve[1].second, 1e-6);
  EXPECT_LT(dve[2].second, dve[3].first);
  EXPECT_NEAR(dve[2].second - dve[2].first, 64 / trn1().cost.dve.clock_ghz, 1e-6);
}

// for i in range(2): t = x[i] + 1; u = t + 1 (both on the Vector Engine), t and u fresh per iteration.
perf::Profile chain_loop(ir::AxisType type) {
  ir::Kernel k;
  k.name = "chain";
  const int x = add_tensor(k, "x", {256, 512}, Memory::SBUF);
  const int t = add_tensor(k, "t", {128, 512}, Memory::SBUF), u = add_tensor(k, "u", {128, 512}, Memory::SBUF);
  k.tensors[t].alloc_axis = k.tensors[u].alloc_axis = 0;
  auto loop = std::make_unique<ir::Loop>();
  loop->axis = 0;
  loop->name = "i";
  loop->ub = 2;
  loop->type = type;
  loop->body.push_back(inst(Opcode::TensorScalar, tile(t), {tile(x, 128, 0)}));
  loop->body.push_back(inst(Opcode::TensorScalar, tile(u), {tile(t)}));
  k.body.push_back(std::move(loop));
  k.num_axes = 1;
  return perf::predict(k, trn1());
}

TEST(CostModelReordering, ADependentChainPaysTheFixedLatencyInAnyLoop) {
  // Each dependent instruction waits for its producer's result (stream + fixed), in an affine
  // loop as in a sequential one: the mamba profiles' Vector-Engine time has the fixed cost of
  // every instruction of its chains, whose state loop is affine.
  const sema::EngineFigures& e = trn1().cost.dve;
  const double stream = 512 / e.clock_ghz, fixed = e.fixed_cycles / e.clock_ghz;
  for (ir::AxisType type : {ir::AxisType::Sequential, ir::AxisType::Affine}) {
    const perf::Profile p = chain_loop(type);
    EXPECT_NEAR(p.latency, 4 * stream + 3 * fixed, 1e-6);
    EXPECT_NEAR(p.engines[2].busy, 4 * stream, 1e-6);
  }
}

// 300 single-column copies on the Vector Engine write x's columns 0..149 and 1000..1149 in
// turn; then z = exp(c) on the Scalar Engine writes x's column 500. More writes than the model
// remembers regions of one tile: the oldest merge into their nearest neighbours, so column 500,
// between the two runs, was never written and the exp waits for none of the copies.
TEST(CostModelReordering, ManyWritesOfOneTileMergeWithTheirNeighboursNotAcrossTheTile) {
  ir::Kernel k;
  k.name = "columns";
  const int a = add_tensor(k, "a", {128, 300}, Memory::SBUF), c = add_tensor(k, "c", {128, 1}, Memory::SBUF);
  const int x = add_tensor(k, "x", {128, 2048}, Memory::SBUF);
  auto column = [](int t, int64_t col) {
    ir::Access v = tile(t);
    v.index[1] = AffineExpr::grid(1) + AffineExpr(col);
    return v;
  };
  for (int64_t i = 0; i < 300; ++i)
    k.body.push_back(inst(Opcode::Copy, column(x, i % 2 ? 1000 + i / 2 : i / 2), {column(a, i)}, {128, 1}));
  auto exp = inst(Opcode::Activation, column(x, 500), {tile(c)}, {128, 1});
  exp->alu = ir::AluOp::exp;
  exp->engine = ir::Engine::act;
  k.body.push_back(std::move(exp));
  const perf::Profile p = perf::predict(k, trn1());
  double exp_start = -1, copies_end = 0;
  for (const perf::Slice& s : p.slices)
    if (s.opcode == Opcode::Activation) exp_start = s.start;
    else copies_end = std::max(copies_end, s.start + s.duration);
  EXPECT_EQ(exp_start, 0);
  EXPECT_GT(copies_end, 0);
}

// for i in loop(2): buf[(i + 1) % 2] = x + 1 (Vector Engine); y = exp(buf[i % 2]) (Scalar Engine),
// the loop sequential or affine.
perf::Profile ping_pong(ir::AxisType type) {
  ir::Kernel k;
  k.name = "ping_pong";
  const int x = add_tensor(k, "x", {128, 512}, Memory::SBUF), y = add_tensor(k, "y", {128, 512}, Memory::SBUF);
  const int buf = add_tensor(k, "buf", {2, 128, 512}, Memory::SBUF);
  k.tensors[buf].partition_dim = 1;
  auto block = [&](int64_t shift) {
    ir::Access a;
    a.tensor = buf;
    const AffineExpr i = AffineExpr::var({ir::VarKind::Loop, 0}, 1);
    a.index = {AffineExpr::mod(i + AffineExpr(shift), 2), AffineExpr::grid(0), AffineExpr::grid(1)};
    return a;
  };
  auto loop = std::make_unique<ir::Loop>();
  loop->axis = 0;
  loop->name = "i";
  loop->ub = 2;
  loop->type = type;
  loop->body.push_back(inst(Opcode::TensorScalar, block(1), {tile(x)}));
  loop->body.push_back(inst(Opcode::Activation, tile(y), {block(0)}));
  k.body.push_back(std::move(loop));
  k.num_axes = 1;
  return perf::predict(k, trn1());
}

TEST(CostModelReordering, ASequentialLoopsModuloPickedBlocksAreNotToldApart) {
  // In a sequential_range loop the compiler keeps, `i % 2` is computed at run time, and the
  // write of one block and the read of the other are ordered as if both touched every block:
  // W(0), then exp(0) after its result, W(1) after exp's, exp(1) after W(1)'s.
  const sema::CostFigures& f = trn1().cost;
  const double write = stream_latency(f.dve, 1), exp = stream_latency(f.act, 1);
  const perf::Profile kept = ping_pong(ir::AxisType::Sequential);
  EXPECT_NEAR(kept.latency, 2 * (write + exp), 1e-6);
  EXPECT_TRUE(std::any_of(kept.notes.begin(), kept.notes.end(), [](const std::string& s) {
    return s.rfind("2 instruction(s) (the first at ?) pick an on-chip block by a floor division or modulo of a "
                   "sequential_range counter", 0) == 0;
  }));
  // An affine loop's i is known to the compiler: exp(0) reads the block W(0) does not write and
  // runs at once; exp(1) waits only for exp(0), which wrote y before it.
  const perf::Profile affine = ping_pong(ir::AxisType::Affine);
  EXPECT_NEAR(affine.latency, 2 * exp, 1e-6);
  EXPECT_TRUE(std::none_of(affine.notes.begin(), affine.notes.end(),
                           [](const std::string& s) { return s.find("sequential_range counter") != std::string::npos; }));
}

// y = x * 2 and w = z * 2, independent [128, 512] fp32 tensor_scalars; `engine` names their
// engine (none: the compiler's choice) and `op` is their ALU op.
perf::Profile two_scalings(ir::Engine engine, ir::AluOp op) {
  ir::Kernel k;
  k.name = "scalings";
  const int x = add_tensor(k, "x", {128, 512}, Memory::SBUF), y = add_tensor(k, "y", {128, 512}, Memory::SBUF);
  const int z = add_tensor(k, "z", {128, 512}, Memory::SBUF), w = add_tensor(k, "w", {128, 512}, Memory::SBUF);
  for (auto [dst, src] : {std::pair{y, x}, std::pair{w, z}}) {
    auto in = inst(Opcode::TensorScalar, tile(dst), {tile(src)});
    in->engine = engine;
    in->alu = op;
    k.body.push_back(std::move(in));
  }
  return perf::predict(k, trn1());
}

TEST(CostModelReordering, ATensorScalarNamingNoEngineRunsWhereItFinishesFirst) {
  // Both engines are free for the first: the Vector Engine finishes it first ((512 + 100)
  // cycles at 1.12 GHz against (512 + 264) at 1.4 GHz). The second would wait for the Vector
  // Engine's interval; the Scalar Engine finishes it first.
  const sema::CostFigures& f = trn1().cost;
  const double dve = stream_latency(f.dve, 1), act = stream_latency(f.act, 1), dve_interval = 512 / f.dve.clock_ghz;
  ASSERT_LT(dve, act);
  ASSERT_LT(act, dve_interval + dve);
  const perf::Profile chosen = two_scalings(ir::Engine::none, ir::AluOp::multiply);
  EXPECT_NEAR(chosen.latency, act, 1e-6);
  EXPECT_EQ(chosen.engines[1].instructions, 1);  // the Scalar Engine
  EXPECT_EQ(chosen.engines[2].instructions, 1);  // the Vector Engine
  EXPECT_TRUE(std::any_of(chosen.notes.begin(), chosen.notes.end(), [](const std::string& s) {
    return s == "1 tensor_scalar instruction(s) that name no engine (the first at ?) run on the Scalar Engine "
                "where it finishes them first, as the compiler chooses";
  }));
  // Named, or an op the Scalar Engine's tensor_scalar does not run: both on the Vector Engine.
  for (const perf::Profile& p : {two_scalings(ir::Engine::dve, ir::AluOp::multiply),
                                 two_scalings(ir::Engine::none, ir::AluOp::subtract)}) {
    EXPECT_NEAR(p.latency, dve_interval + dve, 1e-6);
    EXPECT_EQ(p.engines[2].instructions, 2);
    EXPECT_TRUE(p.notes.empty());
  }
}

}  // namespace
}  // namespace nkic
