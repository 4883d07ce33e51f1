// The engines' partition-start rule (sema/Partitions.h) on hand-made accesses: the
// partitions an access covers, the starts its loops give it, and the DMA exemption.
#include <gtest/gtest.h>

#include <optional>

#include "ir/IR.h"
#include "sema/Partitions.h"

namespace nkic {
namespace {

using ir::AffineExpr;
using ir::Var;
using ir::VarKind;

ir::TensorDecl sbuf_tile() {
  ir::TensorDecl t;
  t.name = "t";
  t.shape = {128, 64};
  t.memory = ir::Memory::SBUF;
  return t;
}

// An elementwise instruction over [rows, 64] reading t[partition, i1].
ir::Instruction copy_of(int64_t rows) {
  ir::Instruction in;
  in.opcode = ir::Opcode::Copy;
  in.shape = {rows, 64};
  return in;
}

ir::Access at(AffineExpr partition) {
  ir::Access a;
  a.tensor = 0;
  a.index = {std::move(partition), AffineExpr::grid(1)};
  return a;
}

const Var kLoop{VarKind::Loop, 0};

sema::VarLattice loop(int64_t first, int64_t step, int64_t count) {
  return [=](Var v) -> std::optional<sema::VarSteps> {
    if (v == kLoop) return sema::VarSteps{first, step, count};
    return std::nullopt;
  };
}

TEST(PartitionStart, AlignmentByPartitionCount) {
  EXPECT_EQ(sema::partition_start_alignment(1), 32);
  EXPECT_EQ(sema::partition_start_alignment(32), 32);
  EXPECT_EQ(sema::partition_start_alignment(33), 64);
  EXPECT_EQ(sema::partition_start_alignment(64), 64);
  EXPECT_EQ(sema::partition_start_alignment(65), 0);
}

TEST(PartitionStart, OnePartitionAtAConstantStart) {
  const ir::TensorDecl t = sbuf_tile();
  const auto bad = sema::partition_start_violation(copy_of(1), at(AffineExpr(1)), t, loop(0, 1, 1));
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->partitions, 1);
  EXPECT_EQ(bad->start, 1);
  EXPECT_EQ(bad->alignment, 32);
  EXPECT_FALSE(sema::partition_start_violation(copy_of(1), at(AffineExpr(96)), t, loop(0, 1, 1)));
}

TEST(PartitionStart, TheGridCoordinateGivesThePartitionCount) {
  const ir::TensorDecl t = sbuf_tile();
  // 64 partitions from 32: refused; from 64: allowed.
  const auto bad = sema::partition_start_violation(copy_of(64), at(AffineExpr::grid(0) + AffineExpr(32)), t, loop(0, 1, 1));
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->partitions, 64);
  EXPECT_EQ(bad->alignment, 64);
  EXPECT_FALSE(sema::partition_start_violation(copy_of(64), at(AffineExpr::grid(0) + AffineExpr(64)), t, loop(0, 1, 1)));
  // More than 64 partitions start at 0 only.
  EXPECT_TRUE(sema::partition_start_violation(copy_of(96), at(AffineExpr::grid(0) + AffineExpr(32)), t, loop(0, 1, 1)));
}

TEST(PartitionStart, EveryIterationOfALoopCounts) {
  const ir::TensorDecl t = sbuf_tile();
  const AffineExpr rows = AffineExpr::grid(0) + AffineExpr::var(kLoop, 1);
  // Loop values 0, 32, 64, 96: aligned; 0, 16, 32, ...: the second start is 16.
  EXPECT_FALSE(sema::partition_start_violation(copy_of(32), at(rows), t, loop(0, 32, 4)));
  const auto bad = sema::partition_start_violation(copy_of(32), at(rows), t, loop(0, 16, 8));
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->start, 16);
  // A loop of one iteration at 1 is a start of 1.
  EXPECT_EQ(sema::partition_start_violation(copy_of(32), at(rows), t, loop(1, 1, 1))->start, 1);
  // A loop known only at run time is not checked.
  EXPECT_FALSE(sema::partition_start_violation(copy_of(32), at(rows), t, [](Var) { return std::nullopt; }));
}

TEST(PartitionStart, DmaAndHbmAccessesAreFree) {
  ir::TensorDecl t = sbuf_tile();
  ir::Instruction dma = copy_of(1);
  dma.engine = ir::Engine::dma;
  EXPECT_FALSE(sema::partition_start_violation(dma, at(AffineExpr(5)), t, loop(0, 1, 1)));
  t.memory = ir::Memory::PrivateHBM;
  EXPECT_FALSE(sema::partition_start_violation(copy_of(1), at(AffineExpr(5)), t, loop(0, 1, 1)));
}

}  // namespace
}  // namespace nkic
