// The device scalars of nki 0.7/0.8 (codegen/Scalars.h): the sequencer ALU's integer
// semantics (ir::scalar_alu_value), the builders' instructions simulated, and their rules.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "codegen/Ops.h"
#include "codegen/Scalars.h"
#include "diagnostic_test_util.h"
#include "ir/Verifier.h"
#include "sim/Simulator.h"

namespace nkic::codegen {
namespace {

using ir::AluOp;
using ir::DType;
using ir::Memory;
using test_util::diagnostic_of;
constexpr int64_t kMin32 = std::numeric_limits<int32_t>::min(), kMax32 = std::numeric_limits<int32_t>::max();

TEST(ScalarAluValue, Int32ArithmeticWrapsInTwosComplement) {
  EXPECT_EQ(ir::scalar_alu_value(AluOp::multiply, 65536, 65536, 32), 0);
  EXPECT_EQ(ir::scalar_alu_value(AluOp::add, kMax32, 1, 32), kMin32);
  EXPECT_EQ(ir::scalar_alu_value(AluOp::subtract, kMin32, 1, 32), kMax32);
  EXPECT_EQ(ir::scalar_alu_value(AluOp::divide, kMin32, -1, 32), kMin32);
  EXPECT_EQ(ir::scalar_alu_value(AluOp::fmod, kMin32, -1, 32), 0);
}

TEST(ScalarAluValue, DivideTruncatesAndFmodTakesTheDividendsSign) {
  EXPECT_EQ(ir::scalar_alu_value(AluOp::divide, -17, 4, 32), -4);
  EXPECT_EQ(ir::scalar_alu_value(AluOp::fmod, -17, 4, 32), -1);
  EXPECT_EQ(ir::scalar_alu_value(AluOp::divide, 17, -4, 32), -4);
  EXPECT_EQ(ir::scalar_alu_value(AluOp::fmod, 17, -4, 32), 1);
}

TEST(ScalarAluValue, Int64IsExactAndComparisonsAreZeroOrOne) {
  const int64_t big = (int64_t{1} << 53) + 1;
  EXPECT_EQ(ir::scalar_alu_value(AluOp::add, big, 2, 64), big + 2);
  EXPECT_EQ(ir::scalar_alu_value(AluOp::multiply, int64_t{1} << 62, 4, 64), 0);
  EXPECT_EQ(ir::scalar_alu_value(AluOp::less, 3, 4, 32), 1);
  EXPECT_EQ(ir::scalar_alu_value(AluOp::greater_equal, 3, 4, 32), 0);
  EXPECT_EQ(ir::scalar_alu_value(AluOp::maximum, -3, 4, 32), 4);
}

struct ScalarKernel {
  KernelBuilder b{"k", sema::default_target()};
  types::TensorVal in32, in64, out32, out64;
  ScalarKernel() {
    in32 = b.full_view(b.add_tensor("a", {1, 1}, DType::int32, Memory::SharedHBM, ir::Role::Input));
    in64 = b.full_view(b.add_tensor("w", {1, 1}, DType::int64, Memory::SharedHBM, ir::Role::Input));
    out32 = b.full_view(b.add_tensor("o", {1, 1}, DType::int32, Memory::SharedHBM, ir::Role::Output));
    out64 = b.full_view(b.add_tensor("p", {1, 1}, DType::int64, Memory::SharedHBM, ir::Role::Output));
    b.kernel().inputs = {in32.tensor, in64.tensor};
    b.kernel().outputs = {out32.tensor, out64.tensor};
  }
};

TEST(ScalarBuilders, EmitOneInstructionEachAndSimulateExactly) {
  ScalarKernel k;
  KernelBuilder& b = k.b;
  b.requested_api = "nisa.scalar_alu";
  const types::TensorVal s = scalar_load(b, k.in32);
  const types::TensorVal sq = scalar_alu(b, s, s, AluOp::multiply);
  scalar_store(b, k.out32, scalar_alu(b, sq, kMax32, AluOp::add));
  const types::TensorVal w = scalar_load(b, k.in64);
  scalar_store(b, k.out64, scalar_alu(b, int64_t{3}, w, AluOp::multiply));
  EXPECT_EQ(b.kernel().body.size(), 7u);  // two loads, three ALU instructions, two stores
  EXPECT_EQ(ir::verify(b.kernel()), std::vector<std::string>{});
  int32_t a = 46341, o = 0;
  int64_t wv = (int64_t{1} << 60) + 5, p = 0;
  std::vector<void*> bind(b.kernel().tensors.size(), nullptr);
  bind[k.in32.tensor] = &a;
  bind[k.in64.tensor] = &wv;
  bind[k.out32.tensor] = &o;
  bind[k.out64.tensor] = &p;
  sim::simulate(b.kernel(), bind, {.check_uninitialized = true});
  EXPECT_EQ(o, static_cast<int32_t>(static_cast<uint32_t>(int64_t{46341} * 46341 + kMax32)));
  EXPECT_EQ(p, static_cast<int64_t>(static_cast<uint64_t>(wv) * 3));
}

TEST(ScalarBuilders, RejectWhatTheSequencerCannotDo) {
  ScalarKernel k;
  KernelBuilder& b = k.b;
  b.requested_api = "nisa.scalar_alu";
  const types::TensorVal w = scalar_load(b, k.in64);
  EXPECT_EQ(diagnostic_of([&] { scalar_alu(b, w, int64_t{2}, AluOp::divide); }).code, "err_scalar_int64_unsupported");
  EXPECT_EQ(diagnostic_of([&] { scalar_alu(b, w, scalar_load(b, k.in32), AluOp::add); }).code,
            "err_scalar_width_mismatch");
  EXPECT_EQ(diagnostic_of([&] { scalar_store(b, k.out32, w); }).code, "err_scalar_width_mismatch");
  EXPECT_EQ(diagnostic_of([&] { scalar_store(b, k.out32, int64_t{1}); }).code, "err_unexpected_type_of_operand");
  EXPECT_EQ(diagnostic_of([&] { check_scalar_32(b, w, "nl.fori_loop", "upper"); }).code,
            "err_scalar_int64_unsupported");
  const types::TensorVal u =
      b.full_view(b.add_tensor("u", {1, 1}, DType::uint32, Memory::SBUF, ir::Role::Local));
  const sema::Diagnostic d = diagnostic_of([&] { scalar_load(b, u); });
  EXPECT_EQ(d.code, "err_scalar_dtype");
  EXPECT_EQ(d.hint, "use the signed dtype of the same width, nl.int32");
}

TEST(ScalarBuilders, ComputeInstructionsRejectSixtyFourBitTiles) {
  ScalarKernel k;
  KernelBuilder& b = k.b;
  const types::TensorVal t = b.full_view(b.add_tensor("t", {1, 1}, DType::int64, Memory::SBUF, ir::Role::Local));
  auto copy = make_instruction(ir::Opcode::Copy, b, t, {1, 1});
  copy->srcs.push_back(access_for(b, t, {1, 1}));
  const sema::Diagnostic d = diagnostic_of([&] { b.emit(std::move(copy)); });
  EXPECT_EQ(d.code, "err_wide_dtype_compute");
  EXPECT_EQ(d.message, "'tensor_copy' cannot read or write 't' of dtype 'int64': no compute engine handles 64-bit "
                       "integers");
}

}  // namespace
}  // namespace nkic::codegen
