// Allocation (sema/Allocation.h) through the library API, on hand-built kernels: live ranges
// over loops, the peaks per memory with the tensors live there, and the verdict.
#include <gtest/gtest.h>

#include <memory>

#include "perf_test_util.h"
#include "sema/Allocation.h"

namespace nkic {
namespace {

using namespace perf_test;

const sema::Target& trn2() { return *sema::find_target("trn2"); }
std::string same(const std::string& name) { return name; }

// acc (PSUM, `acc_banks` banks) is written before a loop of 2 trips and read after it; the loop
// body declares `t` (PSUM, `t_banks` banks), written and read within an iteration.
ir::Kernel around_loop(int64_t acc_banks, int64_t t_banks) {
  ir::Kernel k;
  k.name = "around";
  const int x = add_tensor(k, "x", {128, 512}, Memory::SharedHBM, ir::Role::Input);
  const int acc = add_tensor(k, "acc", {128, 512 * acc_banks}, Memory::PSUM);
  const int t = add_tensor(k, "t", {128, 512 * t_banks}, Memory::PSUM);
  const int s = add_tensor(k, "s", {128, 512}, Memory::SBUF);
  k.tensors[t].alloc_axis = 0;
  k.body.push_back(inst(Opcode::Load, tile(s), {tile(x)}));
  k.body.push_back(inst(Opcode::TensorScalar, tile(acc), {tile(s)}));
  auto loop = std::make_unique<ir::Loop>();
  loop->axis = 0;
  loop->name = "i";
  loop->ub = 2;
  loop->body.push_back(inst(Opcode::TensorScalar, tile(t), {tile(s)}));
  loop->body.push_back(inst(Opcode::TensorTensor, tile(s), {tile(s), tile(t)}));
  k.body.push_back(std::move(loop));
  k.body.push_back(inst(Opcode::TensorTensor, tile(s), {tile(s), tile(acc)}));
  k.num_axes = 1;
  return k;
}

TEST(SemaAllocation, ATensorUsedAroundALoopIsLiveOverItsBody) {
  const ir::Kernel k = around_loop(2, 6);
  const std::vector<sema::LiveRange> live = sema::live_ranges(k);
  EXPECT_EQ(live[1].first, 1);  // acc: from its write over the loop body (2, 3) to its read
  EXPECT_EQ(live[1].last, 4);
  EXPECT_EQ(live[2].first, 2);  // t: within the iteration
  EXPECT_EQ(live[2].last, 3);
  EXPECT_EQ(live[0].first, 0);  // x (HBM) is accessed too; only on-chip tensors are allocated
}

TEST(SemaAllocation, PeaksNameTheLiveTensorsLargestFirst) {
  const ir::Kernel k = around_loop(2, 6);
  const std::vector<sema::MemoryPeak> peaks = sema::allocation_peaks(k, trn2());
  ASSERT_EQ(peaks.size(), 2u);
  const sema::MemoryPeak& psum = peaks[1];
  EXPECT_EQ(psum.memory, Memory::PSUM);
  EXPECT_EQ(psum.bytes, 8 * 2048);
  EXPECT_EQ(psum.capacity, 8 * 2048);
  EXPECT_EQ(psum.at, 2);
  EXPECT_EQ(psum.tensors, (std::vector<int>{2, 1}));
  EXPECT_FALSE(sema::check_allocation(k, trn2(), same).error.has_value());
}

TEST(SemaAllocation, NineBanksAreAnErrorAtThePeak) {
  const ir::Kernel k = around_loop(3, 6);
  const sema::AllocationVerdict v = sema::check_allocation(k, trn2(), same);
  ASSERT_TRUE(v.error.has_value());
  EXPECT_EQ(v.error->code, "err_psum_over_capacity");
  EXPECT_EQ(v.error->message,
            "PSUM needs 9 banks of 2048 bytes per partition live at once here, more than the 8 target 'trn2' has; "
            "live: 't' (12288 bytes), 'acc' (6144 bytes)");
  EXPECT_TRUE(v.warnings.empty());
}

TEST(SemaAllocation, SbufOverCapacityIsASpillWarning) {
  ir::Kernel k;
  const int x = add_tensor(k, "x", {128, 8192}, Memory::SharedHBM, ir::Role::Input);
  std::vector<int> tiles;
  for (int i = 0; i < 8; ++i) {
    tiles.push_back(add_tensor(k, "t", {128, 8192}, Memory::SBUF));
    k.body.push_back(inst(Opcode::Load, tile(tiles.back()), {tile(x)}, {128, 8192}));
  }
  for (int i = 1; i < 8; ++i)
    k.body.push_back(inst(Opcode::TensorTensor, tile(tiles[0]), {tile(tiles[0]), tile(tiles[i])}, {128, 8192}));
  const sema::AllocationVerdict v = sema::check_allocation(k, trn2(), same);
  EXPECT_FALSE(v.error.has_value());
  ASSERT_EQ(v.warnings.size(), 1u);
  EXPECT_EQ(v.warnings[0].code, "warn_sbuf_spill");
  EXPECT_EQ(v.warnings[0].message,
            "SBUF holds 262144 bytes per partition live here, more than the 212984 target 'trn2' has: the compiler "
            "spills 49160 bytes per partition to HBM and reloads them; live: 't' (32768 bytes each, 8 tiles)");
  // A kernel that placed its tiles itself is not reallocated.
  k.direct_allocation = true;
  EXPECT_TRUE(sema::check_allocation(k, trn2(), same).warnings.empty());
}

// w [4, 128, 512] (block-dim SBUF) loaded block by block in loop 0; then, with `reread`
// trips of loop 1 around loop 2 over the blocks, each block read (a loop of one trip reads
// every block once); with `in_load_loop`, each block is read right after its load instead.
ir::Kernel block_reads(int64_t reread, bool in_load_loop) {
  ir::Kernel k;
  k.name = "blocks";
  const int x = add_tensor(k, "x", {512, 512}, Memory::SharedHBM, ir::Role::Input);
  const int w = add_tensor(k, "w", {4, 128, 512}, Memory::SBUF);
  const int s = add_tensor(k, "s", {128, 512}, Memory::SBUF);
  k.tensors[w].partition_dim = 1;
  auto block = [&](int axis) {
    ir::Access a;
    a.tensor = w;
    a.index = {AffineExpr::var({ir::VarKind::Loop, axis}), AffineExpr::grid(0), AffineExpr::grid(1)};
    return a;
  };
  auto loop = [](int axis, int64_t trips) {
    auto l = std::make_unique<ir::Loop>();
    l->axis = axis;
    l->ub = trips;
    return l;
  };
  auto load = loop(0, 4);
  load->body.push_back(inst(Opcode::Load, block(0), {tile(x, 128, 0)}));
  if (in_load_loop) load->body.push_back(inst(Opcode::TensorTensor, tile(s), {tile(s), block(0)}));
  k.body.push_back(std::move(load));
  if (!in_load_loop) {
    auto outer = loop(1, reread), inner = loop(2, 4);
    inner->body.push_back(inst(Opcode::TensorTensor, tile(s), {tile(s), block(2)}));
    outer->body.push_back(std::move(inner));
    k.body.push_back(std::move(outer));
  }
  k.num_axes = 3;
  return k;
}

TEST(SemaAllocation, ALoopThatReadsEveryBlockAgainHoldsThemAll) {
  EXPECT_EQ(sema::held_blocks(block_reads(3, false))[1], 4);
  EXPECT_EQ(sema::held_blocks(block_reads(1, false))[1], 1);  // read once: streamed
  EXPECT_EQ(sema::held_blocks(block_reads(1, true))[1], 1);
  EXPECT_EQ(sema::held_blocks(block_reads(3, false))[2], 1);  // a plain tile
  // The live bytes count them: 4 blocks of 2 KiB and s where the loops read them.
  const std::vector<sema::MemoryPeak> held = sema::allocation_peaks(block_reads(3, false), trn2());
  EXPECT_EQ(held[0].bytes, 4 * 2048 + 2048);
  EXPECT_EQ(sema::allocation_peaks(block_reads(1, false), trn2())[0].bytes, 2048 + 2048);
}

}  // namespace
}  // namespace nkic
