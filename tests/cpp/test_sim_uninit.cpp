// The uninitialized-value check (SimOptions::check_uninitialized): a value
// computed from memory nothing wrote is an error where it reaches an output, a
// loop bound or an address, and a warning at the reading line when it is dropped.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ir/IR.h"
#include "sim/Simulator.h"
#include "sim_test_kernels.h"

namespace {

using namespace nkic;
using namespace nkic::sim_test;
using ir::AluOp;
using ir::DType;
using ir::Memory;
using ir::NkiError;
using ir::Opcode;

constexpr int64_t P = 8, F = 4, kRows = 5;  // a ragged tile: rows kRows.. are never loaded

void at_line(ir::Instruction& in, int line) { in.loc = {ir::intern_file("kernel.py"), line, 5}; }

// Runs with the check; the warnings it reports land in `warnings`.
void run_checked(const ir::Kernel& k, const std::vector<void*>& binds, std::vector<ir::Diagnostic>& warnings) {
  sim::SimOptions opts{.check_uninitialized = true};
  opts.warning = [&warnings](const ir::Diagnostic& d) { warnings.push_back(d); };
  sim::simulate(k, binds, opts);
}

// The ragged-tile pattern of the softmax/rmsnorm tutorials: a masked load, a
// row reduction and an elementwise op over the whole tile, a masked store.
struct RaggedRows {
  KernelBuilder b;
  int x, out, tile, sum, scaled;
  ir::Instruction* store;
  RaggedRows() {
    x = b.hbm_in("x", {kRows, F}, DType::float32);
    out = b.hbm_out("out", {kRows, F}, DType::float32);
    tile = b.tensor("tile", {P, F}, DType::float32);
    sum = b.tensor("sum", {P, 1}, DType::float32);
    scaled = b.tensor("scaled", {P, F}, DType::float32);
    ir::Instruction& load = b.emit(Opcode::Load, {P, F}, at2(tile), {at2(x)});
    load.predicate = {ge(AffineExpr(kRows - 1) - G(0))};
    at_line(load, 3);
    at_line(b.emit(Opcode::TensorReduce, {P, F}, at(sum, {G(0), 0}), {at2(tile)}, AluOp::add), 4);
    at_line(b.emit(Opcode::TensorTensor, {P, F}, at2(scaled), {at2(tile), at(sum, {G(0), 0})}, AluOp::multiply), 5);
    store = &b.emit(Opcode::Store, {P, F}, at2(out), {at2(scaled)});
    store->predicate = {ge(AffineExpr(kRows - 1) - G(0))};
    at_line(*store, 6);
  }
};

TEST(SimUninit, RowsAMaskedStoreDropsGiveOneWarningAtTheRead) {
  RaggedRows k;
  std::vector<float> vx(kRows * F), vo(kRows * F);
  for (size_t i = 0; i < vx.size(); ++i) vx[i] = static_cast<float>(i % 7);
  std::vector<ir::Diagnostic> warnings;
  run_checked(k.b.k, bind(k.b.k, {{k.x, vx.data()}, {k.out, vo.data()}}), warnings);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].code, "warn_uninitialized_value_dropped");
  EXPECT_EQ(warnings[0].message,
            "this instruction reads element [5, 0] of tensor `tile`, which was never written in this program "
            "instance; no output, branch or address uses what is computed from it, so the results do not depend on it");
  EXPECT_EQ(warnings[0].loc.line, 4);
  for (int64_t r = 0; r < kRows; ++r) {
    float s = 0.0f;
    for (int64_t c = 0; c < F; ++c) s += vx[r * F + c];
    for (int64_t c = 0; c < F; ++c) ASSERT_EQ(vo[r * F + c], vx[r * F + c] * s) << r << "," << c;
  }
}

TEST(SimUninit, AnUninitializedValueReachingAnOutputIsAnErrorAtTheWrite) {
  RaggedRows k;
  k.store->predicate.clear();  // the store now writes rows the load never wrote
  k.b.k.tensors[k.out].shape = {P, F};
  std::vector<float> vx(kRows * F, 1.0f), vo(P * F);
  std::vector<ir::Diagnostic> warnings;
  try {
    run_checked(k.b.k, bind(k.b.k, {{k.x, vx.data()}, {k.out, vo.data()}}), warnings);
    FAIL() << "expected err_read_uninitialized_memory";
  } catch (const NkiError& e) {
    const ir::Diagnostic& d = e.diag();
    EXPECT_EQ(d.code, "err_read_uninitialized_memory");
    EXPECT_EQ(d.message,
              "Read of uninitialized memory reaches an output: element [5, 0] of tensor `out` is computed from "
              "element [5, 0] of tensor `tile`, which was never written in this program instance (read at line 4)");
    EXPECT_EQ(d.loc.line, 6);
    ASSERT_EQ(d.notes.size(), 1u);
    EXPECT_EQ(d.notes[0].loc.line, 4);
    EXPECT_EQ(d.notes[0].message, "the uninitialized value is read here");
  }
  EXPECT_TRUE(warnings.empty());
}

// A matmul contracts over the partitions: one unwritten row reaches every product.
TEST(SimUninit, AMatmulOverAnUnwrittenRowPoisonsEveryProduct) {
  KernelBuilder b;
  constexpr int64_t K = 4, M = 2, N = 3;
  int x = b.hbm_in("x", {K, M}, DType::float32);
  int y = b.hbm_in("y", {K, N}, DType::float32);
  int out = b.hbm_out("out", {M, N}, DType::float32);
  int s = b.tensor("s", {K, M}, DType::float32);
  int v = b.tensor("v", {K, N}, DType::float32);
  int ps = b.tensor("ps", {M, N}, DType::float32, Memory::PSUM);
  ir::Instruction& ld = b.emit(Opcode::Load, {K, M}, at2(s), {at2(x)});
  ld.predicate = {ge(AffineExpr(K - 2) - G(0))};  // row K-1 of s stays unwritten
  b.emit(Opcode::Load, {K, N}, at2(v), {at2(y)});
  at_line(b.emit(Opcode::Matmul, {K, M, N}, at(ps, {G(1), G(2)}), {at(s, {G(0), G(1)}), at(v, {G(0), G(2)})}), 7);
  ir::Instruction& st = b.emit(Opcode::Store, {1, 1}, at(out, {G(0) + M - 1, G(1) + N - 1}), {at(ps, {G(0) + M - 1, G(1) + N - 1})});
  at_line(st, 8);
  std::vector<float> vx(K * M, 1.0f), vy(K * N, 1.0f), vo(M * N);
  std::vector<ir::Diagnostic> warnings;
  try {
    run_checked(b.k, bind(b.k, {{x, vx.data()}, {y, vy.data()}, {out, vo.data()}}), warnings);
    FAIL() << "expected err_read_uninitialized_memory";
  } catch (const NkiError& e) {
    EXPECT_EQ(e.diag().message,
              "Read of uninitialized memory reaches an output: element [1, 2] of tensor `out` is computed from "
              "element [3, 0] of tensor `s`, which was never written in this program instance (read at line 7)");
    EXPECT_EQ(e.diag().loc.line, 8);
  }
}

// A value read as a loop bound or an address steers the kernel: never dropped.
TEST(SimUninit, AnUninitializedLoopBoundOrAddressIsAnError) {
  for (bool address : {false, true}) {
    KernelBuilder b;
    int out = b.hbm_out("out", {4, F}, DType::float32);
    int n = b.tensor("n", {1, 2}, DType::int32);
    int row = b.tensor("row", {1, F}, DType::float32);
    ir::Instruction& set = b.emit(Opcode::Memset, {1, 1}, at(n, {G(0), G(1)}), {}, AluOp::bypass, {2.0});
    at_line(set, 2);  // writes n[0, 0]; n[0, 1] stays unwritten
    at_line(b.emit(Opcode::Memset, {1, F}, at2(row), {}, AluOp::bypass, {1.0}), 3);
    if (address) {
      ir::Access dst = at(out, {AffineExpr(0), G(1)});
      dst.indirect.push_back({0, at(n, {AffineExpr(0), AffineExpr(1)}), 1});
      at_line(b.emit(Opcode::Store, {1, F}, dst, {at2(row)}), 9);
    } else {
      ir::Loop& l = b.loop(0, 4);
      l.loc = {ir::intern_file("kernel.py"), 9, 5};
      l.dynamic_ub = at(n, {AffineExpr(0), AffineExpr(1)});
      b.emit(Opcode::Store, {1, F}, at(out, {L(0), G(1)}), {at2(row)});
    }
    std::vector<float> vo(4 * F);
    std::vector<ir::Diagnostic> warnings;
    try {
      run_checked(b.k, bind(b.k, {{out, vo.data()}}), warnings);
      FAIL() << "expected err_read_uninitialized_memory";
    } catch (const NkiError& e) {
      EXPECT_EQ(e.diag().code, "err_read_uninitialized_memory");
      EXPECT_EQ(e.diag().message, std::string("Read of uninitialized memory: element [0, 1] of tensor `n` is used as ") +
                                      (address ? "an address" : "a loop bound") +
                                      " but was never written in this program instance");
      EXPECT_EQ(e.diag().loc.line, 9);
    }
  }
}

// An index computed from memory nothing wrote names where its value came from.
TEST(SimUninit, APoisonedAddressNamesItsOrigin) {
  KernelBuilder b;
  int out = b.hbm_out("out", {4, F}, DType::float32);
  int raw = b.tensor("raw", {1, 2}, DType::int32);
  int n = b.tensor("n", {1, 2}, DType::int32);
  int row = b.tensor("row", {1, F}, DType::float32);
  at_line(b.emit(Opcode::Memset, {1, 1}, at(raw, {G(0), G(1)}), {}, AluOp::bypass, {2.0}), 2);
  at_line(b.emit(Opcode::TensorScalar, {1, 2}, at2(n), {at2(raw)}, AluOp::add, {1.0}), 3);  // n[0, 1] from raw[0, 1]
  at_line(b.emit(Opcode::Memset, {1, F}, at2(row), {}, AluOp::bypass, {1.0}), 4);
  ir::Access dst = at(out, {AffineExpr(0), G(1)});
  dst.indirect.push_back({0, at(n, {AffineExpr(0), AffineExpr(1)}), 1});
  at_line(b.emit(Opcode::Store, {1, F}, dst, {at2(row)}), 9);
  std::vector<float> vo(4 * F);
  std::vector<ir::Diagnostic> warnings;
  try {
    run_checked(b.k, bind(b.k, {{out, vo.data()}}), warnings);
    FAIL() << "expected err_read_uninitialized_memory";
  } catch (const NkiError& e) {
    EXPECT_EQ(e.diag().message,
              "Read of uninitialized memory: element [0, 1] of tensor `n` is used as an address but is computed "
              "from element [0, 1] of tensor `raw`, which was never written in this program instance (read at line 3)");
    EXPECT_EQ(e.diag().loc.line, 9);
  }
}

// Each partition of a row instruction (here a scan) depends on that partition alone.
TEST(SimUninit, RowInstructionsPoisonOnlyTheirOwnPartition) {
  KernelBuilder b;
  int x = b.hbm_in("x", {kRows, F}, DType::float32);
  int out = b.hbm_out("out", {kRows, F}, DType::float32);
  int t = b.tensor("t", {P, F}, DType::float32);
  int s = b.tensor("s", {P, F}, DType::float32);
  ir::Instruction& ld = b.emit(Opcode::Load, {P, F}, at2(t), {at2(x)});
  ld.predicate = {ge(AffineExpr(kRows - 1) - G(0))};
  ir::Instruction& scan = b.emit(Opcode::TensorTensorScan, {P, F}, at2(s), {at2(t), at2(t)}, AluOp::multiply);
  scan.steps = {{AluOp::multiply, -1}, {AluOp::add, 1}};
  scan.imms = {0.0};
  scan.widths = {F, F, F};
  at_line(scan, 4);
  ir::Instruction& st = b.emit(Opcode::Store, {P, F}, at2(out), {at2(s)});
  st.predicate = {ge(AffineExpr(kRows - 1) - G(0))};
  std::vector<float> vx(kRows * F, 0.5f), vo(kRows * F);
  std::vector<ir::Diagnostic> warnings;
  run_checked(b.k, bind(b.k, {{x, vx.data()}, {out, vo.data()}}), warnings);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].loc.line, 4);
  for (float v : vo) EXPECT_FALSE(std::isnan(v));
}

}  // namespace
