// The cost model's buffer allocation (perf/Buffers.h), on hand-built kernels: a loop tile
// rotates through the physical buffers the SBUF capacity holds, so an iteration's writes
// wait for the iteration that last used the buffer they reuse; a footprint over the
// capacity with one buffer per tile pays a spill and a reload.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>

#include "perf/Buffers.h"
#include "perf/CostModel.h"
#include "perf_test_util.h"

namespace nkic {
namespace {

using namespace perf_test;

constexpr int64_t kRows = 8;  // one DMA queue per transfer (8 partitions each)

// for i in affine_range(3): t = load(a[i]); t = t + 1; store(out[i], t) -- t, declared in the
// loop body, is [8, free] fp32: `free` sets how many of its buffers the SBUF holds.
perf::Profile rotating_loop(int64_t free, bool direct_allocation = false) {
  ir::Kernel k;
  k.name = "rotate";
  k.direct_allocation = direct_allocation;
  const int a = add_tensor(k, "a", {3 * kRows, free}, Memory::SharedHBM, ir::Role::Input);
  const int out = add_tensor(k, "out", {3 * kRows, free}, Memory::SharedHBM, ir::Role::Output);
  const int t = add_tensor(k, "t", {kRows, free}, Memory::SBUF);
  k.tensors[t].alloc_axis = 0;
  auto loop = std::make_unique<ir::Loop>();
  loop->axis = 0;
  loop->name = "i";
  loop->ub = 3;
  loop->body.push_back(inst(Opcode::Load, tile(t), {tile(a, kRows, 0)}, {kRows, free}));
  loop->body.push_back(inst(Opcode::TensorScalar, tile(t), {tile(t)}, {kRows, free}));
  loop->body.push_back(inst(Opcode::Store, tile(out, kRows, 0), {tile(t)}, {kRows, free}));
  k.body.push_back(std::move(loop));
  k.num_axes = 1;
  return perf::predict(k, trn1());
}

std::vector<double> load_starts(const perf::Profile& p) {
  std::vector<double> starts;
  for (const perf::Slice& s : p.slices)
    if (s.opcode == Opcode::Load) starts.push_back(s.start);
  std::sort(starts.begin(), starts.end());
  return starts;
}

// One queue's time for an [8, free] fp32 transfer: its bytes plus one buffer overhead per partition.
double queue_time(int64_t free) {
  const sema::CostFigures& f = trn1().cost;
  return kRows * (free * 4.0 + f.dma_buffer_overhead_bytes) / f.dma_queue_bytes_per_ns;
}

TEST(CostModelBuffers, ATileInTwoBuffersLetsTheNextLoadOverlapButNotTheOneAfter) {
  const sema::CostFigures& f = trn1().cost;
  // 64 KiB per partition: two buffers fit in trn1's 176 KiB, three do not.
  const int64_t free = 16384;
  ASSERT_LE(2 * free * 4, trn1().statebuf_par_size_in_bytes);
  ASSERT_GT(3 * free * 4, trn1().statebuf_par_size_in_bytes);
  const double fixed = f.dma_fixed_latency_ns, dma = queue_time(free);
  const double add_latency = (free / f.dve.elems_per_cycle + f.dve.fixed_cycles) / f.dve.clock_ghz;
  const perf::Profile p = rotating_loop(free);
  const std::vector<double> starts = load_starts(p);
  ASSERT_EQ(starts.size(), 3u);
  // Load 1 takes the second buffer: it starts with load 0, on another queue.
  EXPECT_NEAR(starts[0], fixed, 1e-6);
  EXPECT_NEAR(starts[1], fixed, 1e-6);
  // Load 2 takes load 0's buffer back: it waits for store 0, the buffer's last read, which
  // waited for load 0 and the add.
  const double store0_end = fixed + dma + add_latency + fixed + dma;
  EXPECT_NEAR(starts[2], store0_end + fixed, 1e-6);
  EXPECT_EQ(p.notes.end(), std::find_if(p.notes.begin(), p.notes.end(), [](const std::string& n) {
              return n.find("spilled") != std::string::npos;
            }));
}

TEST(CostModelBuffers, ATileWithABufferPerIterationNeverWaitsForOne) {
  // 32 KiB per partition: five buffers fit, and the loop allocates the tile three times.
  const std::vector<double> starts = load_starts(rotating_loop(8192));
  ASSERT_EQ(starts.size(), 3u);
  for (double s : starts) EXPECT_NEAR(s, trn1().cost.dma_fixed_latency_ns, 1e-6);
}

TEST(CostModelBuffers, AKernelThatPlacesItsTilesItselfKeepsAFreshTilePerIteration) {
  // ncc.sbuf.mod_alloc chose the buffers; the IR does not say how many, so none are waited for.
  const std::vector<double> starts = load_starts(rotating_loop(16384, true));
  ASSERT_EQ(starts.size(), 3u);
  for (double s : starts) EXPECT_NEAR(s, trn1().cost.dma_fixed_latency_ns, 1e-6);
}

// t0 = load(a[0]); store(out[0], t0); t1 = ...; t2 = ... -- three unrolled [8, free] fp32 tiles,
// each dead before the next is loaded: the ring allocation gives each the bytes past the last.
perf::Profile unrolled_tiles(int64_t free) {
  ir::Kernel k;
  k.name = "ring";
  const int a = add_tensor(k, "a", {3 * kRows, free}, Memory::SharedHBM, ir::Role::Input);
  const int out = add_tensor(k, "out", {3 * kRows, free}, Memory::SharedHBM, ir::Role::Output);
  for (int i = 0; i < 3; ++i) {
    const int t = add_tensor(k, "t" + std::to_string(i), {kRows, free}, Memory::SBUF);
    k.body.push_back(inst(Opcode::Load, tile(t), {tile(a, kRows, -1)}, {kRows, free}));
    k.body.push_back(inst(Opcode::Store, tile(out, kRows, -1), {tile(t)}, {kRows, free}));
  }
  return perf::predict(k, trn1());
}

TEST(CostModelBuffers, AnUnrolledTileThatWrapsAroundTheSbufWaitsForTheTileWhoseBytesItTakes) {
  const sema::CostFigures& f = trn1().cost;
  // 64 KiB per partition: t0 and t1 fit side by side; t2 wraps around onto t0's bytes.
  const int64_t free = 16384;
  ASSERT_GT(3 * free * 4, trn1().statebuf_par_size_in_bytes);
  const double fixed = f.dma_fixed_latency_ns, dma = queue_time(free);
  const std::vector<double> starts = load_starts(unrolled_tiles(free));
  ASSERT_EQ(starts.size(), 3u);
  EXPECT_NEAR(starts[0], fixed, 1e-6);
  EXPECT_NEAR(starts[1], fixed, 1e-6);  // its own bytes: on another queue, at once
  // Load 2 writes t0's bytes: it waits for store 0, their last read, after load 0.
  EXPECT_NEAR(starts[2], fixed + dma + fixed + dma + fixed, 1e-6);
}

TEST(CostModelBuffers, UnrolledTilesThatFitTheSbufTogetherNeverWait) {
  const std::vector<double> starts = load_starts(unrolled_tiles(8192));  // 3 x 32 KiB fit
  ASSERT_EQ(starts.size(), 3u);
  for (double s : starts) EXPECT_NEAR(s, trn1().cost.dma_fixed_latency_ns, 1e-6);
}

// t = load(a[0]); store(out[0], t); t = load(a[1]); store(out[1], t) -- one [8, free] fp32 tile
// outside any loop, written whole twice (`cols` < free: the second load writes only its first cols).
perf::Profile tile_written_twice(int64_t free, int64_t cols) {
  ir::Kernel k;
  k.name = "rename";
  const int a = add_tensor(k, "a", {2 * kRows, free}, Memory::SharedHBM, ir::Role::Input);
  const int out = add_tensor(k, "out", {2 * kRows, free}, Memory::SharedHBM, ir::Role::Output);
  const int t = add_tensor(k, "t", {kRows, free}, Memory::SBUF);
  k.body.push_back(inst(Opcode::Load, tile(t), {tile(a, kRows, -1)}, {kRows, free}));
  k.body.push_back(inst(Opcode::Store, tile(out, kRows, -1), {tile(t)}, {kRows, free}));
  k.body.push_back(inst(Opcode::Load, tile(t), {tile(a, kRows, -1)}, {kRows, cols}));
  k.body.push_back(inst(Opcode::Store, tile(out, kRows, -1), {tile(t)}, {kRows, cols}));
  return perf::predict(k, trn1());
}

TEST(CostModelBuffers, AWholeOverwriteOfATileStartsANewLiveRangeInAnotherBuffer) {
  // 32 KiB per partition: a second buffer fits, so the second load does not wait for store 0.
  const std::vector<double> starts = load_starts(tile_written_twice(8192, 8192));
  ASSERT_EQ(starts.size(), 2u);
  for (double s : starts) EXPECT_NEAR(s, trn1().cost.dma_fixed_latency_ns, 1e-6);
}

TEST(CostModelBuffers, AnOverwriteWithoutRoomForAnotherBufferOrOfPartOfTheTileWaitsForItsReaders) {
  const sema::CostFigures& f = trn1().cost;
  const double fixed = f.dma_fixed_latency_ns;
  // 96 KiB per partition: two buffers do not fit trn1's 176 KiB.
  const int64_t big = 24576;
  ASSERT_GT(2 * big * 4, trn1().statebuf_par_size_in_bytes);
  std::vector<double> starts = load_starts(tile_written_twice(big, big));
  ASSERT_EQ(starts.size(), 2u);
  EXPECT_NEAR(starts[1], fixed + queue_time(big) + fixed + queue_time(big) + fixed, 1e-6);
  // Half the tile rewritten: its other half is still the first load's, so no new live range.
  starts = load_starts(tile_written_twice(8192, 4096));
  ASSERT_EQ(starts.size(), 2u);
  EXPECT_NEAR(starts[1], fixed + queue_time(8192) + fixed + queue_time(8192) + fixed, 1e-6);
}

// t = load(a) (both blocks); store(out, t[1]); t[1] = load(a[0]); store(out, t[1]) -- a block-dim
// tile [2, 8, free] whose block 1 is written whole again (`cols` < free: only its first cols).
perf::Profile block_written_twice(int64_t free, int64_t cols) {
  ir::Kernel k;
  k.name = "rename_block";
  const int a = add_tensor(k, "a", {2 * kRows, free}, Memory::SharedHBM, ir::Role::Input);
  const int out = add_tensor(k, "out", {kRows, free}, Memory::SharedHBM, ir::Role::Output);
  const int t = add_tensor(k, "t", {2, kRows, free}, Memory::SBUF);
  k.tensors[t].partition_dim = 1;
  auto block = [&](int64_t b) {
    ir::Access v;
    v.tensor = t;
    v.index = {AffineExpr(b), AffineExpr::grid(0), AffineExpr::grid(1)};
    return v;
  };
  ir::Access whole, rows;
  whole.tensor = t;
  whole.index = {AffineExpr::grid(0), AffineExpr::grid(1), AffineExpr::grid(2)};
  rows.tensor = a;
  rows.index = {AffineExpr::grid(0) * kRows + AffineExpr::grid(1), AffineExpr::grid(2)};
  k.body.push_back(inst(Opcode::Load, whole, {rows}, {2, kRows, free}));
  k.body.push_back(inst(Opcode::Store, tile(out), {block(1)}, {kRows, free}));
  k.body.push_back(inst(Opcode::Load, block(1), {tile(a, kRows, -1)}, {kRows, cols}));
  k.body.push_back(inst(Opcode::Store, tile(out), {block(1)}, {kRows, cols}));
  return perf::predict(k, trn1());
}

TEST(CostModelBuffers, AWholeOverwriteOfOneBlockStartsANewLiveRangeOfThatBlock) {
  const double fixed = trn1().cost.dma_fixed_latency_ns;
  // Block 1 rewritten whole: it waits neither for the store reading it nor for the first load,
  // whose write covered both blocks.
  std::vector<double> starts = load_starts(block_written_twice(4096, 4096));
  ASSERT_EQ(starts.size(), 2u);
  for (double s : starts) EXPECT_NEAR(s, fixed, 1e-6);
  // Half of block 1 rewritten: its other half is still the first load's, so it waits for the
  // store, after the first load (both blocks' rows on one queue: 8 partitions).
  starts = load_starts(block_written_twice(4096, 2048));
  ASSERT_EQ(starts.size(), 2u);
  EXPECT_NEAR(starts[1], fixed + 2 * queue_time(4096) + fixed + queue_time(4096) + fixed, 1e-6);
}

// x = load(a); y = load(b); z = x + y; store(out, z): three [128, free] fp32 tiles live at the add
// (which adds their first `cols` columns only, when cols > 0).
perf::Profile three_tiles(int64_t free, bool direct_allocation = false, int64_t cols = 0) {
  ir::Kernel k;
  k.name = "spill";
  k.direct_allocation = direct_allocation;
  const int a = add_tensor(k, "a", {128, free}, Memory::SharedHBM, ir::Role::Input);
  const int b = add_tensor(k, "b", {128, free}, Memory::SharedHBM, ir::Role::Input);
  const int out = add_tensor(k, "out", {128, free}, Memory::SharedHBM, ir::Role::Output);
  const int x = add_tensor(k, "x", {128, free}, Memory::SBUF), y = add_tensor(k, "y", {128, free}, Memory::SBUF);
  const int z = add_tensor(k, "z", {128, free}, Memory::SBUF);
  k.body.push_back(inst(Opcode::Load, tile(x), {tile(a)}, {128, free}));
  k.body.push_back(inst(Opcode::Load, tile(y), {tile(b)}, {128, free}));
  static const std::string file = "spill.py";
  auto add = inst(Opcode::TensorTensor, tile(z), {tile(x), tile(y)}, {128, cols > 0 ? cols : free});
  add->loc = {&file, 7, 0};
  k.body.push_back(std::move(add));
  k.body.push_back(inst(Opcode::Store, tile(out), {tile(z)}, {128, free}));
  return perf::predict(k, trn1());
}

TEST(CostModelBuffers, AFootprintOverTheCapacityPaysASpillAndAReloadOfTheExcess) {
  const sema::CostFigures& f = trn1().cost;
  const int64_t free = 16384, capacity = trn1().statebuf_par_size_in_bytes;
  const int64_t excess = 3 * free * 4 - capacity;  // per partition, at the add
  ASSERT_GT(excess, 0);
  const double fixed = f.dma_fixed_latency_ns;
  // Every transfer spans 128 partitions: all 16 queues, 8 partitions (buffers) each.
  auto transfer = [&](double bytes_per_partition) {
    return 8 * (bytes_per_partition + f.dma_buffer_overhead_bytes) / f.dma_queue_bytes_per_ns;
  };
  const double tile = transfer(free * 4.0), spill = transfer(static_cast<double>(excess));
  const double add_latency = (2.0 * free / f.dve.elems_per_cycle + f.dve.fixed_cycles) / f.dve.clock_ghz;
  // The loads share the queues one after the other; the add waits for the excess to go out
  // to HBM and come back, each leg after the fixed latency; then the store.
  const double fits = fixed + 2 * tile + add_latency + fixed + tile;
  const perf::Profile p = three_tiles(free);
  EXPECT_NEAR(p.latency, fits + 2 * (fixed + spill), 1e-6);
  EXPECT_EQ(p.dma_bytes, 3 * 128 * free * 4 + 2 * 128 * excess);  // two loads and a store, the excess twice
  const std::string note = "keeps " + std::to_string(3 * free * 4) + " bytes per partition of SBUF live at " +
                           "spill.py:7, more than the " + std::to_string(capacity) +
                           " the target has: the excess, up to what the instruction there touches, is spilled to HBM"
                           " and reloaded there, again whenever the program passes it reading other tiles";
  EXPECT_NE(p.notes.end(), std::find_if(p.notes.begin(), p.notes.end(), [&](const std::string& n) {
              return n.find(note) != std::string::npos;
            })) << ::testing::PrintToString(p.notes);
  // A kernel that places its tiles itself is not spilled by the model.
  EXPECT_NEAR(three_tiles(free, true).latency, fits, 1e-6);
}

TEST(CostModelBuffers, ASpillMovesNoMoreThanTheInstructionAtThePeakTouches) {
  // The add reads 8 columns of x and y and writes 8 of z: 96 bytes per partition go out and
  // come back, not the whole excess.
  const sema::CostFigures& f = trn1().cost;
  const int64_t free = 16384, cols = 8, touched = 3 * cols * 4;
  ASSERT_LT(touched, 3 * free * 4 - trn1().statebuf_par_size_in_bytes);
  const double fixed = f.dma_fixed_latency_ns;
  auto transfer = [&](double bytes_per_partition) {
    return 8 * (bytes_per_partition + f.dma_buffer_overhead_bytes) / f.dma_queue_bytes_per_ns;
  };
  const double add_latency = (2.0 * cols / f.dve.elems_per_cycle + f.dve.fixed_cycles) / f.dve.clock_ghz;
  const perf::Profile p = three_tiles(free, false, cols);
  EXPECT_NEAR(p.latency, fixed + 2 * transfer(free * 4.0) + 2 * (fixed + transfer(touched)) + add_latency + fixed +
                             transfer(free * 4.0),
              1e-6);
  EXPECT_EQ(p.dma_bytes, 3 * 128 * free * 4 + 2 * 128 * touched);
}

// x = load(a) (two blocks); y = load(b); for i in affine_range(2): for j in affine_range(4):
// z[i][:, j-th 8 columns] = x[i][:, same] + y[:, same]; store(out, z). x and z are [2, 128, free]
// block tiles, y is [128, free]: a block of x, y and a block of z live at the add (each block is
// a tile of its own, as the legality check's allocation counts it).
perf::Profile add_over_block_columns(int64_t free) {
  ir::Kernel k;
  k.name = "columns";
  constexpr int64_t cols = 8;
  const int a = add_tensor(k, "a", {2 * 128, free}, Memory::SharedHBM, ir::Role::Input);
  const int b = add_tensor(k, "b", {128, free}, Memory::SharedHBM, ir::Role::Input);
  const int out = add_tensor(k, "out", {2 * 128, free}, Memory::SharedHBM, ir::Role::Output);
  const int x = add_tensor(k, "x", {2, 128, free}, Memory::SBUF), y = add_tensor(k, "y", {128, free}, Memory::SBUF);
  const int z = add_tensor(k, "z", {2, 128, free}, Memory::SBUF);
  k.tensors[x].partition_dim = k.tensors[z].partition_dim = 1;
  auto access = [](int tensor, std::vector<AffineExpr> index) {
    ir::Access v;
    v.tensor = tensor;
    v.index = std::move(index);
    return v;
  };
  const AffineExpr i = AffineExpr::var({ir::VarKind::Loop, 0}, 1), j = AffineExpr::var({ir::VarKind::Loop, 1}, cols);
  const std::vector<AffineExpr> blocks{AffineExpr::grid(0), AffineExpr::grid(1), AffineExpr::grid(2)};
  const std::vector<AffineExpr> rows{AffineExpr::grid(0) * 128 + AffineExpr::grid(1), AffineExpr::grid(2)};
  k.body.push_back(inst(Opcode::Load, access(x, blocks), {access(a, rows)}, {2, 128, free}));
  k.body.push_back(inst(Opcode::Load, tile(y), {tile(b)}, {128, free}));
  auto inner = std::make_unique<ir::Loop>();
  inner->axis = 1;
  inner->name = "j";
  inner->ub = 4;
  const std::vector<AffineExpr> col{i, AffineExpr::grid(0), j + AffineExpr::grid(1)};
  static const std::string file = "columns.py";
  auto add = inst(Opcode::TensorTensor, access(z, col), {access(x, col), access(y, {AffineExpr::grid(0), j + AffineExpr::grid(1)})},
                  {128, cols});
  add->loc = {&file, 9, 0};
  inner->body.push_back(std::move(add));
  auto outer = std::make_unique<ir::Loop>();
  outer->axis = 0;
  outer->name = "i";
  outer->ub = 2;
  outer->body.push_back(std::move(inner));
  k.body.push_back(std::move(outer));
  k.body.push_back(inst(Opcode::Store, access(out, rows), {access(z, blocks)}, {2, 128, free}));
  k.num_axes = 2;
  return perf::predict(k, trn1());
}

TEST(CostModelBuffers, ASpillReloadsTheTilesAnInstructionReadsOncePerChangeOfThoseTiles) {
  // The excess is reloaded when the add first reads block 0 of x, and again for block 1; while
  // it reads further columns of the same blocks they stay in SBUF. Each reload moves what the
  // add touches (8 columns of x, y and z, fp32), out and back.
  const int64_t free = 16384, touched = 3 * 8 * 4;
  ASSERT_GT(3 * free * 4, trn1().statebuf_par_size_in_bytes);
  const perf::Profile p = add_over_block_columns(free);
  EXPECT_EQ(p.dma_bytes, 5 * 128 * free * 4 + 2 * 2 * 128 * touched);
  EXPECT_EQ(p.sbuf_peak_bytes, 3 * free * 4);
}

TEST(CostModelBuffers, ABlockTileOverTheCapacityWhoseBlocksFitOneAtATimeIsNotSpilled) {
  // The same kernel with 12288 columns: x and z hold 96 KiB per partition each, more than the
  // capacity together with y, but a block of each and y take 144 KiB: nothing is spilled.
  const int64_t free = 12288;
  ASSERT_GT(5 * free * 4, trn1().statebuf_par_size_in_bytes);
  ASSERT_LE(3 * free * 4, trn1().statebuf_par_size_in_bytes);
  const perf::Profile p = add_over_block_columns(free);
  EXPECT_EQ(p.dma_bytes, 5 * 128 * free * 4);
  EXPECT_EQ(p.sbuf_peak_bytes, 3 * free * 4);
  for (const std::string& n : p.notes) EXPECT_EQ(n.find("spilled"), std::string::npos) << n;
}

// x = load(a); y = load(b); for i in affine_range(2): z = x + y; v = load(c[i]); w = z + v;
// store(out[i], w). The first add is the same in both iterations (neuronx-cc hoists it) and is
// where x, y and z are live.
// The instructions of `b` in program order, loop bodies in place (the cost model's sites).
void sites_of(const ir::Block& b, std::vector<const ir::Instruction*>& out) {
  for (const ir::StmtPtr& s : b)
    if (s->kind == ir::StmtKind::Instruction) out.push_back(static_cast<const ir::Instruction*>(s.get()));
    else sites_of(static_cast<const ir::Loop&>(*s).body, out);
}

// x, y = load(a), load(b); for i in affine_range(2): z = x + y; v = load(c[i]); w = z + v;
// store(out[i], w). Every tile is [128, free] fp32; z, v and w are declared in the loop, and
// z = x + y is loop-invariant.
ir::Kernel invariant_in_loop(int64_t free) {
  ir::Kernel k;
  k.name = "invariant";
  const int a = add_tensor(k, "a", {128, free}, Memory::SharedHBM, ir::Role::Input);
  const int b = add_tensor(k, "b", {128, free}, Memory::SharedHBM, ir::Role::Input);
  const int c = add_tensor(k, "c", {2 * 128, free}, Memory::SharedHBM, ir::Role::Input);
  const int out = add_tensor(k, "out", {2 * 128, free}, Memory::SharedHBM, ir::Role::Output);
  const int x = add_tensor(k, "x", {128, free}, Memory::SBUF), y = add_tensor(k, "y", {128, free}, Memory::SBUF);
  const int z = add_tensor(k, "z", {128, free}, Memory::SBUF), v = add_tensor(k, "v", {128, free}, Memory::SBUF);
  const int w = add_tensor(k, "w", {128, free}, Memory::SBUF);
  k.tensors[z].alloc_axis = k.tensors[v].alloc_axis = k.tensors[w].alloc_axis = 0;
  k.body.push_back(inst(Opcode::Load, tile(x), {tile(a)}, {128, free}));
  k.body.push_back(inst(Opcode::Load, tile(y), {tile(b)}, {128, free}));
  auto loop = std::make_unique<ir::Loop>();
  loop->axis = 0;
  loop->name = "i";
  loop->ub = 2;
  loop->body.push_back(inst(Opcode::TensorTensor, tile(z), {tile(x), tile(y)}, {128, free}));
  loop->body.push_back(inst(Opcode::Load, tile(v), {tile(c, 128, 0)}, {128, free}));
  loop->body.push_back(inst(Opcode::TensorTensor, tile(w), {tile(z), tile(v)}, {128, free}));
  loop->body.push_back(inst(Opcode::Store, tile(out, 128, 0), {tile(w)}, {128, free}));
  k.body.push_back(std::move(loop));
  k.num_axes = 1;
  return k;
}

bool has_note(const perf::Profile& p, const std::string& text) {
  return std::any_of(p.notes.begin(), p.notes.end(), [&](const std::string& n) { return n.find(text) != std::string::npos; });
}

TEST(CostModelBuffers, ALoopInvariantResultThatFitsIsHeldOverItsLoopAndComputedOnce) {
  const int64_t free = 4096, tile_bytes = free * 4;  // 16 KiB per partition
  const ir::Kernel k = invariant_in_loop(free);
  const perf::Profile p = perf::predict(k, trn1());
  EXPECT_EQ(p.engines[2].instructions, 3);  // the first add once, the second twice
  EXPECT_TRUE(has_note(p, "1 instruction(s) whose operands do not change"));
  EXPECT_FALSE(has_note(p, "loop-invariant instruction(s) are costed in every iteration"));
  // x and y are read once, before the loop's later iterations; z is held over the loop: three
  // tiles at most are live (x, y, z at the first add; z, v, w at the second). z keeps its one
  // buffer while v and w get one per iteration.
  std::vector<const ir::Instruction*> sites;
  sites_of(k.body, sites);
  const perf::BufferPlan plan = perf::plan_buffers(k, trn1(), sites, {-1, -1, 0, -1, -1, -1});
  EXPECT_EQ(plan.sbuf_peak, 3 * tile_bytes);
  EXPECT_EQ(plan.hoisted[2], 0);
  EXPECT_EQ(plan.recomputed, 0);
  EXPECT_EQ(plan.count[6], 1);  // z
  EXPECT_EQ(plan.count[7], 2);  // v
  // Not hoisted, the add reads x and y in every iteration: they are live over the loop too.
  EXPECT_EQ(perf::plan_buffers(k, trn1(), sites).sbuf_peak, 5 * tile_bytes);
  // NKI allocation's MAX_REUSE mode: least memory, so every loop tile keeps one buffer.
  EXPECT_EQ(perf::plan_buffers(k, trn1(), sites, {-1, -1, 0, -1, -1, -1}, {true, 0}).count[7], 1);
  // A prefetch ring takes its bytes out of the SBUF the plan fills.
  EXPECT_EQ(perf::plan_buffers(k, trn1(), sites, {}, {false, 4096}).sbuf_capacity,
            trn1().statebuf_par_size_in_bytes - 4096);
}

TEST(CostModelBuffers, ALoopInvariantInstructionInALoopThatDoesNotFitRunsInEveryIteration) {
  // 64 KiB per partition a tile: z, v and w alone are more than trn1's 176 KiB, so holding z
  // over the loop would spill; the add runs in both iterations and x and y stay live over the
  // loop, five tiles at the second add.
  const int64_t free = 16384, capacity = trn1().statebuf_par_size_in_bytes;
  ASSERT_GT(3 * free * 4, capacity);
  const int64_t excess = 5 * free * 4 - capacity;
  const perf::Profile p = perf::predict(invariant_in_loop(free), trn1());
  EXPECT_EQ(p.engines[2].instructions, 4);
  EXPECT_TRUE(has_note(p, "1 loop-invariant instruction(s) are costed in every iteration: their loop's tiles do not"
                          " fit on chip with the result held over the loop"));
  EXPECT_FALSE(has_note(p, "whose operands do not change"));
  // Four loads, two stores, and the excess out and back in each iteration.
  EXPECT_EQ(p.dma_bytes, 6 * 128 * free * 4 + 2 * 2 * 128 * excess);
}

TEST(CostModelBuffers, APsumTileTakesWholeBanksAndRotatesThroughThoseThatFit) {
  // for i in affine_range(6): p = x + 1 (into PSUM, [128, 600] fp32: 2400 B, two banks);
  // s = p + 1 (SBUF, 2400 B). x is declared outside the loop.
  ir::Kernel k;
  k.name = "banks";
  const int x = add_tensor(k, "x", {128, 600}, Memory::SBUF);
  const int ps = add_tensor(k, "p", {128, 600}, Memory::PSUM), sb = add_tensor(k, "s", {128, 600}, Memory::SBUF);
  k.tensors[ps].alloc_axis = k.tensors[sb].alloc_axis = 0;
  auto loop = std::make_unique<ir::Loop>();
  loop->axis = 0;
  loop->name = "i";
  loop->ub = 6;
  loop->body.push_back(inst(Opcode::TensorScalar, tile(ps), {tile(x)}, {128, 600}));
  loop->body.push_back(inst(Opcode::TensorScalar, tile(sb), {tile(ps)}, {128, 600}));
  k.body.push_back(std::move(loop));
  k.num_axes = 1;
  std::vector<const ir::Instruction*> order;
  sites_of(k.body, order);
  const sema::Target& t = trn1();
  const perf::BufferPlan plan = perf::plan_buffers(k, t, order);
  const int64_t bank = t.psum_par_size_in_bytes;
  ASSERT_LT(2400, 2 * bank);
  EXPECT_EQ(plan.psum_peak, 2 * bank);
  EXPECT_EQ(plan.psum_capacity, t.psum_num_banks * bank);
  EXPECT_EQ(plan.count[ps], t.psum_num_banks / 2);  // 8 banks: 4 buffers of 2
  EXPECT_EQ(plan.count[sb], 6);                      // one per iteration: the loop has 6
  EXPECT_EQ(plan.count[x], 0);                       // declared outside every loop
  EXPECT_EQ(plan.sbuf_peak, 4800);  // x is read in every iteration: live over the loop, with s
  EXPECT_EQ(plan.spill_site, -1);
}

TEST(CostModelBuffers, EachPhysicalCoreHoldsItsOwnTilesInItsOwnSbuf) {
  // kernel[2]: core c loads half c of `a` into its tile t_c (two thirds of an SBUF) and stores
  // it back; the cores' statements interleave in program order.
  const sema::Target& t = trn1();
  const int64_t free = t.statebuf_par_size_in_bytes * 2 / 3 / 4;
  ir::Kernel k;
  k.name = "halves";
  const int a = add_tensor(k, "a", {256, free}, Memory::SharedHBM, ir::Role::Input);
  const int out = add_tensor(k, "out", {256, free}, Memory::SharedHBM, ir::Role::Output);
  const int tiles[2] = {add_tensor(k, "t0", {128, free}, Memory::SBUF), add_tensor(k, "t1", {128, free}, Memory::SBUF)};
  auto half = [&](int tensor, int c) {
    ir::Access h = tile(tensor);
    h.index[0] = h.index[0] + AffineExpr(128 * c);
    return h;
  };
  for (int c = 0; c < 2; ++c) k.body.push_back(inst(Opcode::Load, tile(tiles[c]), {half(a, c)}, {128, free}));
  for (int c = 0; c < 2; ++c) k.body.push_back(inst(Opcode::Store, half(out, c), {tile(tiles[c])}, {128, free}));
  for (size_t i = 0; i < 4; ++i) k.core_spans.push_back({i, i + 1, static_cast<int>(i % 2), 0});
  k.physical_cores = 2;
  std::vector<const ir::Instruction*> order;
  sites_of(k.body, order);
  const perf::BufferPlan plan = perf::plan_buffers(k, t, order);
  EXPECT_EQ(plan.sbuf_peak, free * 4);
  EXPECT_EQ(plan.spill_site, -1);
  // On one core both tiles are in its SBUF at the second load: over the capacity.
  k.core_spans.clear();
  k.physical_cores = 1;
  const perf::BufferPlan one = perf::plan_buffers(k, t, order);
  EXPECT_EQ(one.sbuf_peak, 2 * free * 4);
  EXPECT_EQ(one.spill_site, 1);
  EXPECT_EQ(one.spill_bytes, 2 * free * 4 - t.statebuf_par_size_in_bytes);
}

}  // namespace
}  // namespace nkic
