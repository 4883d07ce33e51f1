// Explicit scheduling edges on the builder (KernelBuilder::add_dependency, no_reorder): what
// the C++ library API records in Instruction::after and what it refuses. The Python tests
// reach the same checks through NkiInstruction.depends_on, with_schedule and nl.no_reorder.
#include <gtest/gtest.h>

#include "diagnostic_test_util.h"

#include <memory>
#include <vector>

#include "codegen/Ops.h"
#include "codegen/Range.h"
#include "sema/Diagnostic.h"
#include "trace/TraceContext.h"

namespace nkic::codegen {
namespace {

using test_util::diagnostic_of;

struct Trace {
  trace::TraceContext& ctx;
  types::TensorVal x, y;
  Trace() : ctx(trace::TraceContext::new_ctx(trace::TraceOptions{})) {
    KernelBuilder& b = ctx.builder();
    b.current_api = true;
    x = b.full_view(b.add_tensor("x", {128, 64}, ir::DType::float32, ir::Memory::SBUF, ir::Role::Local));
    y = b.full_view(b.add_tensor("y", {128, 64}, ir::DType::float32, ir::Memory::SBUF, ir::Role::Local));
  }
  ~Trace() { trace::TraceContext::clear(); }
  // y <- x, its id.
  int64_t copy() {
    KernelBuilder& b = ctx.builder();
    auto in = make_instruction(ir::Opcode::Copy, {128, 64});
    in->dst = access_for(b, y, {128, 64});
    in->srcs.push_back(access_for(b, x, {128, 64}));
    return b.emit(std::move(in)).id;
  }
};

TEST(Dependencies, AnEdgeIsRecordedOnceOnItsConsumer) {
  Trace t;
  KernelBuilder& b = t.ctx.builder();
  const int64_t p = t.copy(), c = t.copy();
  b.add_dependency(c, p);
  b.add_dependency(c, p);
  const auto& consumer = static_cast<const ir::Instruction&>(*b.insertion_block().back());
  EXPECT_EQ(consumer.id, c);
  EXPECT_EQ(consumer.after, std::vector<int64_t>{p});
}

TEST(Dependencies, NoReorderChainsEveryInstructionToTheOneBefore) {
  Trace t;
  KernelBuilder& b = t.ctx.builder();
  const int64_t before = t.copy();
  b.begin_no_reorder();
  const int64_t first = t.copy(), second = t.copy();
  b.end_no_reorder();
  t.copy();
  const ir::Block& body = b.insertion_block();
  auto after = [&](size_t i) { return static_cast<const ir::Instruction&>(*body[i]).after; };
  EXPECT_EQ(before, 0);
  EXPECT_TRUE(after(1).empty());  // the block's first instruction waits for nothing before it
  EXPECT_EQ(first, 1);
  EXPECT_EQ(after(2), std::vector<int64_t>{first});
  EXPECT_EQ(second, 2);
  EXPECT_TRUE(after(3).empty());  // after the block: no edge
}

TEST(Dependencies, AnUnknownInstructionOrAnEdgeOutOfARuntimeLoopIsRefused) {
  Trace t;
  KernelBuilder& b = t.ctx.builder();
  const int64_t outside = t.copy();
  sema::Diagnostic d = diagnostic_of([&] { b.add_dependency(outside, 99); });
  EXPECT_EQ(d.code, "err_unsupported_args");
  EXPECT_NE(d.message.find("the instruction is not one of this kernel's trace"), std::string::npos) << d.message;

  AxisBlockArgs loop;
  loop.loop_name_id = "i";
  loop.ub = 4;
  loop.dynamic_ub = access_for(b, t.x, {1, 1});
  b.create_affine_axis_block(loop);
  const int64_t inside = t.copy();
  b.close_loop();
  const int64_t after_loop = t.copy();
  b.add_dependency(inside, outside);  // into the runtime loop: allowed
  d = diagnostic_of([&] { b.add_dependency(after_loop, inside); });
  EXPECT_EQ(d.code, "err_unsupported_args");
  EXPECT_NE(d.message.find("an edge cannot leave a runtime loop"), std::string::npos) << d.message;
  EXPECT_EQ(d.hint, "make both instructions sit in the same loop, or the producer outside it");
}

}  // namespace
}  // namespace nkic::codegen
