// The ring permutes of nki.collectives through the C++ library: codegen::collective_permute_implicit
// and current_processing_rank_id build one instruction each, which sim::simulate_ranks runs with the
// ranks meeting at it; the channel rules are diagnostics.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "codegen/Collectives.h"
#include "codegen/KernelBuilder.h"
#include "diagnostic_test_util.h"
#include "ir/IR.h"
#include "sema/Target.h"
#include "sim/Simulator.h"

namespace nkic {
namespace {

using Groups = std::vector<std::vector<int64_t>>;
using Lists = std::vector<std::vector<types::TensorVal>>;

struct RingPermute : ::testing::Test {
  codegen::KernelBuilder b{"k", *sema::find_target("trn2")};
  types::TensorVal tensor(const std::string& name, ir::Role role, std::vector<int64_t> shape = {2, 4},
                          ir::DType dtype = ir::DType::float32) {
    const ir::Memory memory = role == ir::Role::Local ? ir::Memory::PrivateHBM : ir::Memory::SharedHBM;
    return b.full_view(b.add_tensor(name, std::move(shape), dtype, memory, role));
  }
  codegen::RingPermuteCall call(Lists srcs, Lists dsts, Groups groups, std::vector<int64_t> ids = {0}) {
    codegen::RingPermuteCall c;
    c.srcs = std::move(srcs);
    c.dsts = std::move(dsts);
    c.groups = std::move(groups);
    c.channel_ids = std::move(ids);
    return c;
  }
  const ir::Instruction& only_instruction() {
    EXPECT_EQ(b.kernel().body.size(), 1u);
    return static_cast<const ir::Instruction&>(*b.kernel().body.at(0));
  }
  // Runs the kernel on `world` ranks, element i of rank r's input t filled with `fill(r, t, i)`;
  // every rank's `out`.
  template <class Fill>
  std::vector<std::vector<float>> run(int world, const types::TensorVal& out, Fill fill) {
    const ir::Kernel& k = b.kernel();
    std::vector<std::vector<std::vector<float>>> data(world, std::vector<std::vector<float>>(k.tensors.size()));
    std::vector<std::vector<void*>> bindings(world);
    for (int r = 0; r < world; ++r)
      for (const ir::TensorDecl& t : k.tensors) {
        if (t.role == ir::Role::Local) {
          bindings[r].push_back(nullptr);
          continue;
        }
        int64_t n = 1;
        for (int64_t d : t.shape) n *= d;
        data[r][t.id].resize(n);
        for (int64_t i = 0; i < n; ++i) data[r][t.id][i] = t.role == ir::Role::Input ? fill(r, t.id, i) : 0;
        bindings[r].push_back(data[r][t.id].data());
      }
    sim::simulate_ranks(k, bindings);
    std::vector<std::vector<float>> outs;
    for (int r = 0; r < world; ++r) outs.push_back(data[r][out.tensor]);
    return outs;
  }
};

TEST_F(RingPermute, OneInstructionMovesEachRanksDataToItsSuccessorInTheList) {
  b.requested_api = "ncc.collective_permute_implicit";
  const types::TensorVal x = tensor("x", ir::Role::Input), out = tensor("out", ir::Role::Output);
  codegen::collective_permute_implicit(b, call({{x}}, {{out}}, {{0, 2, 1}}));
  EXPECT_EQ(only_instruction().opcode, ir::Opcode::CcPermuteImplicit);
  const auto outs = run(3, out, [](int r, int, int64_t i) { return static_cast<float>(10 * r + i); });
  const int from[] = {1, 2, 0};  // the ring 0 -> 2 -> 1 -> 0: each rank hears from the one before it
  for (int r = 0; r < 3; ++r)
    for (int64_t i = 0; i < 8; ++i) EXPECT_EQ(outs[r][i], 10.0f * from[r] + i) << "rank " << r;
}

TEST_F(RingPermute, TheReduceSendsOpOfItsTwoSources) {
  b.requested_api = "ncc.collective_permute_implicit_reduce";
  const types::TensorVal x = tensor("x", ir::Role::Input), y = tensor("y", ir::Role::Input);
  const types::TensorVal out = tensor("out", ir::Role::Output);
  codegen::RingPermuteCall c = call({{x}}, {{out}}, {{0, 1}, {2, 3}});
  c.srcs1 = {{y}};
  c.op = ir::AluOp::maximum;
  codegen::collective_permute_implicit(b, c);
  EXPECT_EQ(only_instruction().opcode, ir::Opcode::CcPermuteImplicitReduce);
  // x holds 10 r + i, y holds 100 - (10 r + i): rank r receives its list partner p's max of the two.
  const auto outs = run(4, out, [x](int r, int id, int64_t i) {
    const float v = static_cast<float>(10 * r + i);
    return id == x.tensor ? v : 100 - v;
  });
  const int partner[] = {1, 0, 3, 2};
  for (int r = 0; r < 4; ++r)
    for (int64_t i = 0; i < 8; ++i) {
      const float v = static_cast<float>(10 * partner[r] + i);
      EXPECT_EQ(outs[r][i], std::max(v, 100 - v)) << "rank " << r;
    }
}

TEST_F(RingPermute, TheProcessingRankIdStepsBackAlongTheList) {
  b.requested_api = "ncc.collective_permute_implicit_current_processing_rank_id";
  const types::TensorVal reg = b.full_view(b.add_tensor("reg", {1, 1}, ir::DType::int32, ir::Memory::SBUF,
                                                        ir::Role::Local));
  codegen::current_processing_rank_id(b, reg, 2, {{3, 0, 1, 2}}, 0);
  const ir::Instruction& in = only_instruction();
  EXPECT_EQ(in.opcode, ir::Opcode::CcProcessingRankId);
  EXPECT_EQ(in.imms, (std::vector<double>{2, 4, 3, 0, 1, 2}));  // the step, then the list
}

TEST_F(RingPermute, ChannelRulesAreDiagnostics) {
  b.requested_api = "ncc.collective_permute_implicit";
  const types::TensorVal x = tensor("x", ir::Role::Input), out = tensor("out", ir::Role::Output);
  auto message = [&](const codegen::RingPermuteCall& c) {
    const sema::Diagnostic d = test_util::diagnostic_of([&] { codegen::collective_permute_implicit(b, c); });
    EXPECT_EQ(d.code, "err_unsupported_args");
    return d.message;
  };
  EXPECT_NE(message(call({{x}, {x}}, {{out}, {out}}, {{0, 1}, {2, 3}}, {1, 0}))
                .find("channel_ids number the channels consecutively from 0: [0, 1] for 2 channel(s); got [1, 0]"),
            std::string::npos);
  EXPECT_NE(message(call({{x}, {x}, {x}}, {{out}, {out}, {out}}, {{0, 1}, {2, 3}}, {0, 1, 2}))
                .find("else at most 2; got 3 channels over 2 list(s)"),
            std::string::npos);
  EXPECT_NE(message(call({{x, x}}, {{out}}, {{0, 1}})).find("srcs_by_channel[0] holds 2"), std::string::npos);
  const types::TensorVal wide = tensor("wide", ir::Role::Output, {2, 8});
  EXPECT_NE(message(call({{x}}, {{wide}}, {{0, 1}})).find("got float32[2, 4] and float32[2, 8]"), std::string::npos);
  EXPECT_TRUE(b.kernel().body.empty());
}

}  // namespace
}  // namespace nkic
