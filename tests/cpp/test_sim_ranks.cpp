// The ranks of sim::simulate_ranks meeting at collectives (sim/Rendezvous.h): the data they
// exchange, a deadlock and mismatched sequences, on kernels built directly as IR.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ir/Diagnostic.h"
#include "ir/IR.h"
#include "sim/Simulator.h"
#include "sim_test_kernels.h"

namespace {

using namespace nkic;
using namespace nkic::sim_test;
using ir::DType;
using ir::Opcode;

// A collective over one flat [n] tensor per side (Grid coord 1 walks it), the world as one list.
ir::Instruction& collective(KernelBuilder& b, Opcode op, int dst, int src, int64_t n, int world, int line) {
  std::vector<double> imms = {0, static_cast<double>(world)};
  for (int r = 0; r < world; ++r) imms.push_back(r);
  ir::Instruction& in = b.emit(op, {1, n}, at(dst, {G(1)}), {at(src, {G(1)})}, ir::AluOp::add, imms);
  in.widths = {n, n};
  in.api = op == Opcode::CcAllReduce ? "ncc.all_reduce" : "ncc.all_to_all";
  in.loc.line = line;
  return in;
}

TEST(SimRanks, AllReduceSumsEveryRanksDataInFp32) {
  constexpr int world = 4;
  KernelBuilder b;
  int x = b.hbm_in("x", {8}, DType::float32);
  int out = b.hbm_out("out", {8}, DType::float32);
  collective(b, Opcode::CcAllReduce, out, x, 8, world, 1);
  std::vector<std::vector<float>> xs(world, std::vector<float>(8)), outs(world, std::vector<float>(8));
  std::vector<std::vector<void*>> bindings;
  for (int r = 0; r < world; ++r) {
    for (int i = 0; i < 8; ++i) xs[r][i] = static_cast<float>(r * 100 + i);
    bindings.push_back(bind(b.k, {{x, xs[r].data()}, {out, outs[r].data()}}));
  }
  sim::simulate_ranks(b.k, bindings);
  for (int r = 0; r < world; ++r)
    for (int i = 0; i < 8; ++i) EXPECT_EQ(outs[r][i], 600.0f + 4 * i) << "rank " << r << " element " << i;
}

TEST(SimRanks, AllToAllSendsPartJToRankJ) {
  constexpr int world = 2;
  KernelBuilder b;
  int x = b.hbm_in("x", {4}, DType::float32);
  int out = b.hbm_out("out", {4}, DType::float32);
  collective(b, Opcode::CcAllToAll, out, x, 4, world, 1);
  std::vector<float> x0 = {0, 1, 2, 3}, x1 = {10, 11, 12, 13}, o0(4), o1(4);
  sim::simulate_ranks(b.k, {bind(b.k, {{x, x0.data()}, {out, o0.data()}}), bind(b.k, {{x, x1.data()}, {out, o1.data()}})});
  EXPECT_EQ(o0, (std::vector<float>{0, 1, 10, 11}));
  EXPECT_EQ(o1, (std::vector<float>{2, 3, 12, 13}));
}

// Rank r runs the body of a loop bounded by its rank (read from the rank_id register) r times.
struct RankLoopKernel {
  KernelBuilder b;
  int x, out, reg;
  explicit RankLoopKernel(Opcode in_loop, Opcode after) {
    x = b.hbm_in("x", {4}, DType::float32);
    out = b.hbm_out("out", {4}, DType::float32);
    reg = b.tensor("reg", {1, 1}, DType::int32);
    ir::Instruction& id = b.emit(Opcode::RankId, {1, 1}, at(reg, {0, 0}));
    id.widths = {1};
    ir::Loop& l = b.loop(0, 0, 1, ir::AxisType::Sequential);
    l.dynamic_ub = at(reg, {0, 0});
    collective(b, in_loop, out, x, 4, 2, 10);
    b.block = &b.k.body;
    if (after != Opcode::RankId) collective(b, after, out, x, 4, 2, 20);
  }
  void run() {
    std::vector<float> xs(8), outs(8);
    sim::simulate_ranks(b.k, {bind(b.k, {{x, xs.data()}, {out, outs.data()}}),
                              bind(b.k, {{x, xs.data() + 4}, {out, outs.data() + 4}})});
  }
};

TEST(SimRanks, ARankWaitingForAFinishedRankIsADeadlock) {
  RankLoopKernel k(Opcode::CcAllReduce, Opcode::RankId);
  try {
    k.run();
    FAIL() << "no deadlock reported";
  } catch (const ir::NkiError& e) {
    EXPECT_EQ(e.diag().code, "err_collective_deadlock");
    EXPECT_EQ(e.diag().loc.line, 10);
    EXPECT_EQ(e.diag().message,
              "rank 1 waits at its collective #1, ncc.all_reduce at line 10, for the ranks of its replica-group list "
              "[0, 1], but rank 0 finished after 0 collective(s)");
  }
}

TEST(SimRanks, DifferentCollectivesAtOnePositionAreAMismatch) {
  RankLoopKernel k(Opcode::CcAllToAll, Opcode::CcAllReduce);
  try {
    k.run();
    FAIL() << "no mismatch reported";
  } catch (const ir::NkiError& e) {
    EXPECT_EQ(e.diag().code, "err_collective_mismatch");
    ASSERT_EQ(e.diag().notes.size(), 1u);
    // Whichever rank comes second reports at its own line, with a note at the other's.
    const bool rank1_second = e.diag().loc.line == 10;
    EXPECT_EQ(e.diag().notes[0].loc.line, rank1_second ? 20 : 10);
    EXPECT_NE(e.diag().message.find(rank1_second ? "rank 1's collective #1 is ncc.all_to_all at line 10, rank 0's "
                                                   "is ncc.all_reduce at line 20"
                                                 : "rank 0's collective #1 is ncc.all_reduce at line 20, rank 1's "
                                                   "is ncc.all_to_all at line 10"),
              std::string::npos)
        << e.diag().message;
  }
}

}  // namespace
