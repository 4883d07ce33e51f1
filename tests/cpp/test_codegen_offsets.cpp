// Runtime offsets of on-chip views (codegen/AccessPattern): the view .ap(scalar_offset=)
// builds, and check_on_chip_offsets_lowered, the check after every current-API call
// that each such operand reached an instruction with its offset and that only copies
// take offsets varying by element. Every nisa lowering passes it (the Python tests run
// them); here instructions built by hand show what it refuses.
#include <gtest/gtest.h>

#include "diagnostic_test_util.h"

#include <memory>
#include <string>
#include <vector>

#include "codegen/AccessPattern.h"
#include "codegen/Ops.h"
#include "sema/Diagnostic.h"
#include "trace/TraceContext.h"

namespace nkic::codegen {
namespace {

struct Trace {
  trace::TraceContext& ctx;
  Trace() : ctx(trace::TraceContext::new_ctx(trace::TraceOptions{})) { ctx.builder().current_api = true; }
  ~Trace() { trace::TraceContext::clear(); }
};

using test_util::diagnostic_of;

struct Tiles {
  types::TensorVal x, r, y, window;
  explicit Tiles(KernelBuilder& b) {
    x = b.full_view(b.add_tensor("x", {128, 256}, ir::DType::float32, ir::Memory::SBUF, ir::Role::Local));
    r = b.full_view(b.add_tensor("r", {1, 1}, ir::DType::int32, ir::Memory::SBUF, ir::Role::Local));
    y = b.full_view(b.add_tensor("y", {128, 64}, ir::DType::float32, ir::Memory::SBUF, ir::Role::Local));
    window = ap_view(b, x, {{256, 128}, {1, 64}}, ir::AffineExpr(0), ApIndirect{r, false, 1});
  }
};

// dst <- op(src) on the [128, 64] grid.
void emit(KernelBuilder& b, ir::Opcode op, const types::TensorVal& dst, const ir::Access& src) {
  auto in = make_instruction(op, {128, 64});
  in->dst = access_for(b, dst, {128, 64});
  in->srcs.push_back(src);
  if (op == ir::Opcode::Activation) in->steps.push_back({ir::AluOp::exp, -1, 0.0, false});
  b.emit(std::move(in));
}

TEST(OnChipOffsets, TheViewReadsItsOffsetTileOnItsFreeDimInRows) {
  Trace t;
  KernelBuilder& b = t.ctx.builder();
  Tiles k(b);
  ASSERT_EQ(k.window.indirect.size(), 1u);
  EXPECT_EQ(k.window.indirect[0].dim, 1);
  EXPECT_EQ(k.window.indirect[0].step, 1);
  const ir::Access a = access_for(b, k.window, {128, 64});
  EXPECT_TRUE(a.index[1].is_affine());  // the offset is not folded into the index
  const size_t first = b.insertion_size();
  emit(b, ir::Opcode::Activation, k.y, a);
  check_on_chip_offsets_lowered(b, first, {k.window});  // reached: no diagnostic
}

TEST(OnChipOffsets, AnOperandWhoseOffsetNoInstructionReadsIsRefused) {
  Trace t;
  KernelBuilder& b = t.ctx.builder();
  Tiles k(b);
  const size_t first = b.insertion_size();
  emit(b, ir::Opcode::Activation, k.y, access_for(b, b.full_view(k.y.tensor), {128, 64}));
  const sema::Diagnostic d = diagnostic_of([&] { check_on_chip_offsets_lowered(b, first, {k.window}); });
  EXPECT_EQ(d.code, "err_indirect_indices_are_not_supported_with_nki_api");
  EXPECT_NE(d.hint.find("it cannot read or write the on-chip `x` at a runtime offset"), std::string::npos) << d.hint;
}

TEST(OnChipOffsets, OnlyCopiesTakeOffsetsThatVaryByElement) {
  Trace t;
  KernelBuilder& b = t.ctx.builder();
  Tiles k(b);
  ir::Access a = access_for(b, k.window, {128, 64});
  a.indirect[0].index.index[0] = ir::AffineExpr::grid(0);  // one offset per partition
  size_t first = b.insertion_size();
  emit(b, ir::Opcode::Copy, k.y, a);
  check_on_chip_offsets_lowered(b, first, {k.window});  // a copy walks point by point
  first = b.insertion_size();
  emit(b, ir::Opcode::Activation, k.y, a);
  const sema::Diagnostic d = diagnostic_of([&] { check_on_chip_offsets_lowered(b, first, {k.window}); });
  EXPECT_EQ(d.code, "err_indirect_indices_are_not_supported_with_nki_api");
  EXPECT_NE(d.hint.find("activation instruction takes one runtime offset for the whole access"), std::string::npos)
      << d.hint;
}

}  // namespace
}  // namespace nkic::codegen
