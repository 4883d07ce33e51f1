// The ISA builders of codegen/Ops.h through their destination (codegen/Destination.h):
// Dst::fresh() (the legacy API: a new tile, returned) and Dst::into(view) (the current
// API: the caller's view written in place, fitted to the result's shape). Each test
// checks the one IR instruction per ISA instruction and the simulated values.
// Here the elementwise, accumulator, reduce, matmul and transpose builders and
// NeuronCore-v4's accumulator instructions; the row, index, gather and memory builders
// are in test_builders_rows.cpp.
#include <algorithm>
#include <cmath>

#include "builder_test_kernel.h"

namespace nkic::builder_test {
namespace {

using codegen::Accumulate;
using codegen::PipelineStep;

TEST(BuildersElementwise, TensorTensorFreshBroadcastsAColumn) {
  Built k;
  const TensorVal x = k.load(k.a), y = k.load(k.bias);
  k.b.requested_api = "nisa.tensor_tensor";
  const Value r = codegen::tensor_tensor(k.b, Dst::fresh(), AluOp::subtract, x, y, ir::Engine::none, {});
  k.store(std::get<TensorVal>(r));
  const std::vector<std::string> lines = k.lines();
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[2], "subtract[i0, i1] = tensor_tensor[dve](a_tile[i0, i1]; subtract b_tile[i0, 0]) iter=[128, 64]");
  const std::vector<float> out = k.run(small);
  for (int p = 0; p < 128; p += 5)
    for (int j = 0; j < 64; ++j)
      ASSERT_EQ(out[p * 64 + j], small(p, j) - static_cast<float>(p) / 8.0f) << p << ", " << j;
}

// Columns 8..24 of a [128, 64] tile: the instruction writes them, the rest keeps the memset.
TEST(BuildersElementwise, TensorTensorIntoAColumnSliceKeepsTheOtherColumns) {
  Built k;
  const TensorVal x = k.load(k.a), d = k.filled("d", {128, 64}, 5.0);
  k.b.current_api = true;
  k.b.requested_api = "nisa.tensor_tensor";
  codegen::tensor_tensor(k.b, Dst::into(k.cols(d, 8, 24)), AluOp::multiply, k.cols(x, 0, 16), k.cols(x, 16, 32),
                         ir::Engine::none, {});
  k.store(d);
  const std::vector<std::string> lines = k.lines();
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[2],
            "d[i0, i1 + 8] = tensor_tensor[dve](a_tile[i0, i1]; multiply a_tile[i0, i1 + 16]) iter=[128, 16]");
  const std::vector<float> out = k.run(small);
  for (int p = 0; p < 128; p += 3)
    for (int j = 0; j < 64; ++j) {
      const float want = j >= 8 && j < 24 ? small(p, j - 8) * small(p, j + 8) : 5.0f;
      ASSERT_EQ(out[p * 64 + j], want) << p << ", " << j;
    }
}

TEST(BuildersElementwise, TensorScalarFreshFusesTwoStages) {
  Built k;
  const TensorVal x = k.load(k.a);
  k.b.requested_api = "nisa.tensor_scalar";
  k.store(codegen::tensor_scalar(k.b, Dst::fresh(), x, {{AluOp::add, number(1.0)}, {AluOp::multiply, number(3.0)}}, {},
                                 {}));
  const std::vector<std::string> lines = k.lines();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1], "tensor_scalar[i0, i1] = tensor_scalar[dve](a_tile[i0, i1]; add 1; multiply 3) iter=[128, 64]");
  const std::vector<float> out = k.run(small);
  for (int p = 0; p < 128; p += 7)
    for (int j = 0; j < 64; ++j) ASSERT_EQ(out[p * 64 + j], (small(p, j) + 1.0f) * 3.0f);
}

// A [128, 2, 32] dst for a [128, 64] result: the same partitions and elements per
// partition, written in the order the engine walks them (row-major).
TEST(BuildersElementwise, TensorScalarIntoADstOfAnotherFreeShape) {
  Built k;
  const TensorVal x = k.load(k.a), d = k.sbuf("d", {128, 2, 32});
  k.b.current_api = true;
  k.b.requested_api = "nisa.tensor_scalar";
  codegen::tensor_scalar(k.b, Dst::into(d), x, {{AluOp::subtract, number(4.0), true}}, {}, {});
  k.store(codegen::reshape_view(k.b, d, {128, 64}));
  const std::vector<std::string> lines = k.lines();
  ASSERT_EQ(lines.size(), 3u);
  // It writes d re-viewed as [128, 64] (a reshape of d's bytes).
  EXPECT_EQ(k.root_written(lines[1]), "d");
  EXPECT_EQ(rhs(lines[1]), " = tensor_scalar[dve](a_tile[i0, i1]; reverse subtract 4) iter=[128, 64]");
  const std::vector<float> out = k.run(small);
  for (int p = 0; p < 128; p += 7)
    for (int j = 0; j < 64; ++j) ASSERT_EQ(out[p * 64 + j], 4.0f - small(p, j)) << p << ", " << j;
}

TEST(BuildersElementwise, ScalarTensorTensorFresh) {
  Built k;
  const TensorVal x = k.load(k.a), y = k.load(k.bias);
  k.b.requested_api = "nisa.scalar_tensor_tensor";
  // (x - b) * x
  k.store(codegen::scalar_tensor_tensor(k.b, Dst::fresh(), x, {AluOp::subtract, Value(y)}, {AluOp::multiply, Value(x)},
                                        {}));
  const std::vector<std::string> lines = k.lines();
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[2],
            "scalar_tensor_tensor[i0, i1] = scalar_tensor_tensor[dve](a_tile[i0, i1]; subtract b_tile[i0, 0]; "
            "multiply a_tile[i0, i1]) iter=[128, 64]");
  const std::vector<float> out = k.run(small);
  for (int p = 0; p < 128; p += 7)
    for (int j = 0; j < 64; ++j)
      ASSERT_EQ(out[p * 64 + j], (small(p, j) - static_cast<float>(p) / 8.0f) * small(p, j)) << p << ", " << j;
}

TEST(BuildersElementwise, ScalarTensorTensorIntoAFullTile) {
  Built k;
  const TensorVal x = k.load(k.a), d = k.sbuf("d", {128, 64});
  k.b.current_api = true;
  k.b.requested_api = "nisa.scalar_tensor_tensor";
  // x + (x * 2): the second stage reversed.
  codegen::scalar_tensor_tensor(k.b, Dst::into(d), x, {AluOp::multiply, number(2.0)}, {AluOp::add, Value(x), true}, {});
  k.store(d);
  const std::vector<std::string> lines = k.lines();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1],
            "d[i0, i1] = scalar_tensor_tensor[dve](a_tile[i0, i1]; multiply 2; reverse add a_tile[i0, i1]) "
            "iter=[128, 64]");
  const std::vector<float> out = k.run(small);
  for (int p = 0; p < 128; p += 7)
    for (int j = 0; j < 64; ++j) ASSERT_EQ(out[p * 64 + j], 3.0f * small(p, j)) << p << ", " << j;
}

TEST(BuildersElementwise, TensorCopyFreshOnGpSimd) {
  Built k;
  const TensorVal x = k.load(k.a);
  k.b.requested_api = "nisa.tensor_copy";
  k.store(codegen::tensor_copy(k.b, Dst::fresh(), x, ir::Engine::pool, {}));
  const std::vector<std::string> lines = k.lines();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1], "tensor_copy[i0, i1] = tensor_copy[pool](a_tile[i0, i1]) iter=[128, 64]");
  const std::vector<float> out = k.run(small);
  for (int p = 0; p < 128; ++p)
    for (int j = 0; j < 64; ++j) ASSERT_EQ(out[p * 64 + j], small(p, j));
}

// A [128, 1, 64] dst for a [128, 64] result: equal up to unit dims.
TEST(BuildersElementwise, TensorCopyIntoAViewWithAUnitDim) {
  Built k;
  const TensorVal x = k.load(k.a), d = k.sbuf("d", {128, 1, 64});
  k.b.current_api = true;
  k.b.requested_api = "nisa.tensor_copy";
  codegen::tensor_copy(k.b, Dst::into(d), x, ir::Engine::none, {});
  k.store(codegen::reshape_view(k.b, d, {128, 64}));
  const std::vector<std::string> lines = k.lines();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1], "d[i0, 0, i1] = tensor_copy[dve](a_tile[i0, i1]) iter=[128, 64]");
  const std::vector<float> out = k.run(small);
  for (int p = 0; p < 128; ++p)
    for (int j = 0; j < 64; ++j) ASSERT_EQ(out[p * 64 + j], small(p, j));
}

TEST(BuildersElementwise, PipelineFreshOnTheEngineItNames) {
  Built k;
  const TensorVal x = k.load(k.a);
  k.b.requested_api = "nisa.tensor_scalar";
  k.store(codegen::isa_pipeline(k.b, Dst::fresh(), ir::Opcode::TensorScalar, x,
                                {{AluOp::maximum, number(0.0)}, {AluOp::subtract, number(0.5)}}, {}, ir::Engine::pool));
  const std::vector<std::string> lines = k.lines();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1],
            "tensor_scalar[i0, i1] = tensor_scalar[pool](a_tile[i0, i1]; maximum 0; subtract 0.5) iter=[128, 64]");
  const std::vector<float> out = k.run(small);
  for (int p = 0; p < 128; ++p)
    for (int j = 0; j < 64; ++j) ASSERT_EQ(out[p * 64 + j], std::max(small(p, j), 0.0f) - 0.5f) << p << ", " << j;
}

// isa_pipeline into partitions 64..128 of a tile, from partitions 0..64 of the data.
TEST(BuildersElementwise, PipelineIntoAPartitionSlice) {
  Built k;
  const TensorVal x = k.load(k.a), d = k.filled("d", {128, 64}, -1.0);
  k.b.current_api = true;
  k.b.requested_api = "nisa.activation";
  codegen::isa_pipeline(k.b, Dst::into(k.view(d, {64, 128}, {0, 64})), ir::Opcode::Activation,
                        k.view(x, {0, 64}, {0, 64}), {{AluOp::add, number(0.5)}, {AluOp::square, std::nullopt}}, {});
  k.store(d);
  const std::vector<std::string> lines = k.lines();
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[2], "d[i0 + 64, i1] = activation[act](a_tile[i0, i1]; add 0.5; square) iter=[64, 64]");
  const std::vector<float> out = k.run(small);
  for (int p = 0; p < 128; p += 3)
    for (int j = 0; j < 64; ++j) {
      const float v = small(p - 64, j) + 0.5f;
      ASSERT_EQ(out[p * 64 + j], p >= 64 ? v * v : -1.0f) << p << ", " << j;
    }
}

TEST(BuildersAccumulate, ActivationFreshWithScaleAndBias) {
  Built k;
  const TensorVal x = k.load(k.a), y = k.load(k.bias);
  k.b.requested_api = "nisa.activation";
  k.store(codegen::activation(k.b, Dst::fresh(), AluOp::relu, x, Value(y), number(2.0), {}, {}));
  const std::vector<std::string> lines = k.lines();
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[2],
            "activation[i0, i1] = activation[act](a_tile[i0, i1]; multiply 2; add b_tile[i0, 0]; relu) iter=[128, 64]");
  const std::vector<float> out = k.run(small);
  for (int p = 0; p < 128; p += 5)
    for (int j = 0; j < 64; ++j)
      ASSERT_EQ(out[p * 64 + j], std::max(0.0f, 2.0f * small(p, j) + static_cast<float>(p) / 8.0f)) << p << ", " << j;
}

// reduce_res with an idle reduce_cmd: the fold starts afresh (reset_reduce).
TEST(BuildersAccumulate, ActivationIntoADstWithItsRowSums) {
  Built k(1);
  const TensorVal x = k.load(k.a), d = k.sbuf("d", {128, 64}), res = k.sbuf("s", {128, 1});
  k.b.current_api = true;
  k.b.requested_api = "nisa.activation";
  codegen::activation(k.b, Dst::into(d), AluOp::abs, x, std::nullopt, number(1.0), {ir::AccCmd::none, AluOp::add, &res},
                      {});
  k.store(res);
  const std::vector<std::string> lines = k.lines();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1],
            "d[i0, i1], reduce_accumulator[i0, 0], s[i0, 0] = activation[act](a_tile[i0, i1]; abs; reset_reduce add) "
            "iter=[128, 64]");
  const std::vector<float> out = k.run(small);
  for (int p = 0; p < 128; ++p) {
    float sum = 0.0f;
    for (int j = 0; j < 64; ++j) sum += std::abs(small(p, j));
    ASSERT_EQ(out[p], sum) << p;
  }
}

TEST(BuildersReduce, ReduceFreshFoldsTheFreeAxis) {
  Built k(1);
  const TensorVal x = k.load(k.a);
  k.b.requested_api = "nisa.tensor_reduce";
  k.store(codegen::reduce(k.b, Dst::fresh(), AluOp::add, x, {1}, false, {}));
  const std::vector<std::string> lines = k.lines();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1], "add[i0, 0] = tensor_reduce[dve](a_tile[i0, i1]; add) iter=[128, 64]");
  const std::vector<float> out = k.run(small);
  for (int p = 0; p < 128; ++p) {
    float sum = 0.0f;
    for (int j = 0; j < 64; ++j) sum += small(p, j);
    ASSERT_EQ(out[p], sum) << p;
  }
}

// Into column 2 of a [128, 4] tile, negated: the other columns keep their zeros.
TEST(BuildersReduce, ReduceIntoOneColumnOfATile) {
  Built k(4);
  const TensorVal x = k.load(k.a), d = k.filled("d", {128, 4}, 0.0);
  k.b.current_api = true;
  k.b.requested_api = "nisa.tensor_reduce";
  codegen::reduce(k.b, Dst::into(k.cols(d, 2, 3)), AluOp::maximum, x, {1}, true, {}, true);
  k.store(d);
  const std::vector<std::string> lines = k.lines();
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[2], "d[i0, 2] = tensor_reduce[dve](a_tile[i0, i1]; maximum) negate iter=[128, 64]");
  const auto f = [](int p, int j) { return static_cast<float>((p * 7 + j * 3) % 61); };
  const std::vector<float> out = k.run(f);
  for (int p = 0; p < 128; ++p) {
    float m = -1e30f;
    for (int j = 0; j < 64; ++j) m = std::max(m, f(p, j));
    ASSERT_EQ(std::vector<float>(out.begin() + p * 4, out.begin() + p * 4 + 4), (std::vector<float>{0, 0, -m, 0})) << p;
  }
}

TEST(BuildersReduce, PartitionReduceFresh) {
  Built k;
  const TensorVal x = k.load(k.a);
  k.b.requested_api = "nisa.tensor_partition_reduce";
  const TensorVal r = codegen::partition_reduce(k.b, Dst::fresh(), AluOp::add, x, {});
  EXPECT_EQ(r.shape, (std::vector<int64_t>{1, 64}));
  k.store(r);
  const std::vector<std::string> lines = k.lines();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1], "add[0, i1] = tensor_reduce[pool](a_tile[i0, i1]; add) iter=[128, 64]");
  const std::vector<float> out = k.run(small);
  for (int j = 0; j < 64; ++j) {
    float sum = 0.0f;
    for (int p = 0; p < 128; ++p) sum += small(p, j);
    ASSERT_EQ(out[j], sum) << j;
  }
}

// Into row 2 of a [4, 64] tile: rows 0, 1 and 3 keep their values.
TEST(BuildersReduce, PartitionReduceIntoOneRowOfATile) {
  Built k;
  // Row 32: a one-partition access starts at a quadrant's first partition (sema/Partitions.h).
  const TensorVal x = k.load(k.a), d = k.filled("d", {64, 64}, 7.0);
  k.b.current_api = true;
  k.b.requested_api = "nisa.tensor_partition_reduce";
  codegen::partition_reduce(k.b, Dst::into(k.view(d, {32, 33}, {0, 64})), AluOp::maximum, x, {});
  k.store(d);
  const std::vector<std::string> lines = k.lines();
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[2], "d[32, i1] = tensor_reduce[pool](a_tile[i0, i1]; maximum) iter=[128, 64]");
  const auto f = [](int p, int j) { return static_cast<float>((p * 5 + j * 11) % 97) - 40.0f; };
  const std::vector<float> out = k.run(f);
  for (int j = 0; j < 64; ++j) {
    float m = -1e30f;
    for (int p = 0; p < 128; ++p) m = std::max(m, f(p, j));
    for (int r = 0; r < 64; ++r) ASSERT_EQ(out[r * 64 + j], r == 32 ? m : 7.0f) << r << ", " << j;
  }
}

// x.T @ x by hand: [64, 64].
std::vector<float> gram(float (*f)(int, int)) {
  std::vector<float> g(64 * 64, 0.0f);
  for (int m = 0; m < 64; ++m)
    for (int n = 0; n < 64; ++n)
      for (int p = 0; p < 128; ++p) g[m * 64 + n] += f(p, m) * f(p, n);
  return g;
}

TEST(BuildersMatmul, NcMatmulFreshIsOnePsumTile) {
  Built k;
  const TensorVal x = k.load(k.a);
  k.b.requested_api = "nisa.nc_matmul";
  const TensorVal r = codegen::nc_matmul(k.b, Dst::fresh(), x, x, {});
  EXPECT_EQ(k.b.tensor(r.tensor).memory, Memory::PSUM);
  EXPECT_EQ(k.b.tensor(r.tensor).dtype, DType::float32);
  k.b.requested_api = "nisa.tensor_copy";
  k.store(codegen::tensor_copy(k.b, Dst::fresh(), r, ir::Engine::none, {}));
  const std::vector<std::string> lines = k.lines();
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[1], "matmul[i1, i2] = nc_matmul[pe](a_tile[i0, i1], a_tile[i0, i2]) iter=[128, 64, 64]");
  const std::vector<float> out = k.run(small), g = gram(small);
  for (int m = 0; m < 64; ++m)
    for (int n = 0; n < 64; ++n) ASSERT_EQ(out[m * 64 + n], g[m * 64 + n]) << m << ", " << n;
}

// Into a PSUM view, accumulate=None: a matmul whose elements an earlier one wrote
// accumulates, the first write of other elements overwrites.
TEST(BuildersMatmul, NisaNcMatmulIntoPsumInfersAccumulation) {
  Built k(128);
  const TensorVal x = k.load(k.a), acc = k.sbuf("acc", {64, 128}, DType::float32, Memory::PSUM);
  k.b.current_api = true;
  k.b.requested_api = "nisa.nc_matmul";
  for (auto [f0, f1] : {std::pair{0, 64}, std::pair{0, 64}, std::pair{64, 128}})
    codegen::nisa_nc_matmul(k.b, Dst::into(k.cols(acc, f0, f1)), x, x, {}, false, false, {});
  k.b.requested_api = "nisa.tensor_copy";
  k.store(codegen::tensor_copy(k.b, Dst::fresh(), acc, ir::Engine::none, {}));
  const std::vector<std::string> lines = k.lines();
  ASSERT_EQ(lines.size(), 6u);
  EXPECT_EQ(lines[1], "acc[i1, i2] = nc_matmul[pe](a_tile[i0, i1], a_tile[i0, i2]) iter=[128, 64, 64]");
  EXPECT_EQ(lines[2], "acc[i1, i2] += nc_matmul[pe](a_tile[i0, i1], a_tile[i0, i2]) iter=[128, 64, 64]");
  EXPECT_EQ(lines[3], "acc[i1, i2 + 64] = nc_matmul[pe](a_tile[i0, i1], a_tile[i0, i2]) iter=[128, 64, 64]");
  const std::vector<float> out = k.run(small), g = gram(small);
  for (int m = 0; m < 64; ++m)
    for (int n = 0; n < 64; ++n) {
      ASSERT_EQ(out[m * 128 + n], 2.0f * g[m * 64 + n]) << m << ", " << n;
      ASSERT_EQ(out[m * 128 + 64 + n], g[m * 64 + n]) << m << ", " << n;
    }
}

// A PSUM dst [64, 2, 32] for the [64, 64] product (the same partitions and elements per
// partition, which Dst accepts): the second matmul into the same elements accumulates.
TEST(BuildersMatmul, NisaNcMatmulIntoAPsumViewOfAnotherFreeShapeAccumulates) {
  Built k;
  const TensorVal x = k.load(k.a), acc = k.sbuf("acc", {64, 2, 32}, DType::float32, Memory::PSUM);
  k.b.current_api = true;
  k.b.requested_api = "nisa.nc_matmul";
  for (int i = 0; i < 2; ++i) codegen::nisa_nc_matmul(k.b, Dst::into(acc), x, x, {}, false, false, {});
  k.b.requested_api = "nisa.tensor_copy";
  k.store(codegen::tensor_copy(k.b, Dst::fresh(), codegen::reshape_view(k.b, acc, {64, 64}), ir::Engine::none, {}));
  const std::vector<std::string> lines = k.lines();
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_NE(lines[1].find(" = nc_matmul[pe]("), std::string::npos) << lines[1];
  EXPECT_NE(lines[2].find(" += nc_matmul[pe]("), std::string::npos) << lines[2];
  const std::vector<float> out = k.run(small), g = gram(small);
  for (int m = 0; m < 64; ++m)
    for (int n = 0; n < 64; ++n) ASSERT_EQ(out[m * 64 + n], 2.0f * g[m * 64 + n]) << m << ", " << n;
}

TEST(BuildersTranspose, NcTransposeFreshOnTheTensorEngine) {
  Built k(128);
  const TensorVal x = k.load(k.a);
  k.b.requested_api = "nisa.nc_transpose";
  const TensorVal t = codegen::nc_transpose(k.b, Dst::fresh(), x, ir::Engine::none, {});
  EXPECT_EQ(t.shape, (std::vector<int64_t>{64, 128}));
  k.store(t);
  const std::vector<std::string> lines = k.lines();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1], "transpose[i1, i0] = nc_transpose[pe](a_tile[i0, i1]) iter=[128, 64]");
  const std::vector<float> out = k.run(small);
  for (int r = 0; r < 64; ++r)
    for (int c = 0; c < 128; ++c) ASSERT_EQ(out[r * 128 + c], small(c, r)) << r << ", " << c;
}

// data [128, 2, 32] flattened to [128, 64], transposed into a [64, 128] tile.
TEST(BuildersTranspose, NcTransposeIntoATileOfFlattenedData) {
  Built k(128);
  const TensorVal x = k.load(k.a), d = k.sbuf("d", {64, 128});
  k.b.current_api = true;
  k.b.requested_api = "nisa.nc_transpose";
  codegen::nc_transpose(k.b, Dst::into(d), codegen::reshape_view(k.b, x, {128, 2, 32}), ir::Engine::none, {});
  k.store(d);
  const std::vector<std::string> lines = k.lines();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1], "d[i1, i0] = nc_transpose[pe](a_tile.1.1[i0, i1]) iter=[128, 64]");
  const std::vector<float> out = k.run(small);
  for (int r = 0; r < 64; ++r)
    for (int c = 0; c < 128; ++c) ASSERT_EQ(out[r * 128 + c], small(c, r)) << r << ", " << c;
}

TEST(BuildersTranspose, NcTransposeFreshOnTheVectorEngine) {
  Built k(32);
  const TensorVal x = k.load(k.a);
  k.b.requested_api = "nisa.nc_transpose";
  const TensorVal t = codegen::nc_transpose(k.b, Dst::fresh(), k.view(x, {0, 16}, {0, 32}), ir::Engine::dve, {});
  EXPECT_EQ(t.shape, (std::vector<int64_t>{32, 16}));
  k.store(t);
  const std::vector<std::string> lines = k.lines();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1], "transpose[i1, i0] = tensor_copy[dve](a_tile[i0, i1]) iter=[16, 32]");
  const std::vector<float> out = k.run(small);
  for (int r = 0; r < 32; ++r)
    for (int c = 0; c < 16; ++c) ASSERT_EQ(out[r * 32 + c], small(c, r)) << r << ", " << c;
}

// Into columns 16..48 of a [32, 64] tile: one 32 x 32 block, the other columns kept.
TEST(BuildersTranspose, NcTransposeOnTheVectorEngineIntoAColumnSlice) {
  Built k;
  const TensorVal x = k.load(k.a), d = k.filled("d", {32, 64}, 3.0);
  k.b.current_api = true;
  k.b.requested_api = "nisa.nc_transpose";
  codegen::nc_transpose(k.b, Dst::into(k.cols(d, 16, 48)), k.view(x, {0, 32}, {0, 32}), ir::Engine::dve, {});
  k.store(d);
  const std::vector<std::string> lines = k.lines();
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[2], "d[i1, i0 + 16] = tensor_copy[dve](a_tile[i0, i1]) iter=[32, 32]");
  const std::vector<float> out = k.run(small);
  for (int r = 0; r < 32; ++r)
    for (int c = 0; c < 64; ++c)
      ASSERT_EQ(out[r * 64 + c], c >= 16 && c < 48 ? small(c - 16, r) : 3.0f) << r << ", " << c;
}

// NeuronCore-v4's accumulator instructions (trn3).
TEST(BuildersCurrent, ExponentialFresh) {
  Built k(64, DType::float32, trn3());
  const TensorVal x = k.load(k.a);
  k.b.requested_api = "nisa.exponential";
  k.store(codegen::exponential(k.b, Dst::fresh(), x, number(1.0), {}));
  const std::vector<std::string> lines = k.lines();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1], "exponential[i0, i1] = exponential[dve](a_tile[i0, i1]; subtract 1; exp) iter=[128, 64]");
  const std::vector<float> out = k.run(small);
  for (int p = 0; p < 128; p += 3)
    for (int j = 0; j < 64; ++j) {
      const float want = std::exp(small(p, j) - 1.0f);
      ASSERT_NEAR(out[p * 64 + j], want, 1e-6f * want) << p << ", " << j;
    }
}

// Into columns 16..48 of a tile, with each row's sum in s.
TEST(BuildersCurrent, ExponentialIntoAColumnSliceWithTheRowSum) {
  Built k(65, DType::float32, trn3());
  const TensorVal x = k.load(k.a), y = k.load(k.bias), d = k.filled("d", {128, 64}, 0.0), s = k.sbuf("s", {128, 1});
  k.b.current_api = true;
  k.b.requested_api = "nisa.exponential";
  codegen::exponential(k.b, Dst::into(k.cols(d, 16, 48)), k.cols(x, 32, 64), Value(y),
                       {ir::AccCmd::none, AluOp::add, &s});
  k.store(d);
  k.store(s, 0, 64);
  const std::vector<std::string> lines = k.lines();
  ASSERT_EQ(lines.size(), 6u);
  EXPECT_EQ(lines[3],
            "d[i0, i1 + 16], reduce_accumulator[i0, 0], s[i0, 0] = exponential[dve](a_tile[i0, i1 + 32]; "
            "subtract b_tile[i0, 0]; exp; reset_reduce add) iter=[128, 32]");
  const std::vector<float> out = k.run(small);
  for (int p = 0; p < 128; ++p) {
    float sum = 0.0f;
    for (int j = 0; j < 64; ++j) {
      const float want = j >= 16 && j < 48 ? std::exp(small(p, j + 16) - static_cast<float>(p) / 8.0f) : 0.0f;
      sum += want;
      ASSERT_NEAR(out[p * 65 + j], want, 1e-6f * want) << p << ", " << j;
    }
    ASSERT_NEAR(out[p * 65 + 64], sum, 1e-5f * sum) << p;
  }
}

TEST(BuildersCurrent, Activate2Fresh) {
  Built k(64, DType::float32, trn3());
  const TensorVal x = k.load(k.a);
  k.b.requested_api = "nisa.activate2";
  // relu(x * 2 - 1)
  k.store(codegen::activate2(k.b, Dst::fresh(), AluOp::relu, x, {AluOp::multiply, number(2.0)},
                             {AluOp::subtract, number(1.0)}, number(0.0), {}));
  const std::vector<std::string> lines = k.lines();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1],
            "activate2[i0, i1] = activate2[act](a_tile[i0, i1]; multiply 2; subtract 1; relu) iter=[128, 64]");
  const std::vector<float> out = k.run(small);
  for (int p = 0; p < 128; ++p)
    for (int j = 0; j < 64; ++j)
      ASSERT_EQ(out[p * 64 + j], std::max(0.0f, small(p, j) * 2.0f - 1.0f)) << p << ", " << j;
}

// |x + b| into a tile, each row's maximum in s (a [P, 1] tile immediate, op1 bypass).
TEST(BuildersCurrent, Activate2IntoWithATileImmediateAndTheRowMaximum) {
  Built k(65, DType::float32, trn3());
  const TensorVal x = k.load(k.a), y = k.load(k.bias), d = k.sbuf("d", {128, 64}), s = k.sbuf("s", {128, 1});
  k.b.current_api = true;
  k.b.requested_api = "nisa.activate2";
  codegen::activate2(k.b, Dst::into(d), AluOp::abs, x, {AluOp::add, Value(y)}, {AluOp::bypass, std::nullopt},
                     number(0.0), {ir::AccCmd::none, AluOp::maximum, &s});
  k.store(d);
  k.store(s, 0, 64);
  const std::vector<std::string> lines = k.lines();
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[2],
            "d[i0, i1], reduce_accumulator[i0, 0], s[i0, 0] = activate2[act](a_tile[i0, i1]; add b_tile[i0, 0]; abs; "
            "reset_reduce maximum) iter=[128, 64]");
  const std::vector<float> out = k.run(small);
  for (int p = 0; p < 128; ++p) {
    float m = 0.0f;
    for (int j = 0; j < 64; ++j) {
      const float v = std::abs(small(p, j) + static_cast<float>(p) / 8.0f);
      m = std::max(m, v);
      ASSERT_EQ(out[p * 65 + j], v) << p << ", " << j;
    }
    ASSERT_EQ(out[p * 65 + 64], m) << p;
  }
}

TEST(BuildersCurrent, TensorScalarReduceFresh) {
  Built k(65, DType::float32, trn3());
  const TensorVal x = k.load(k.a), s = k.sbuf("s", {128, 1});
  k.b.requested_api = "nisa.tensor_scalar_reduce";
  k.store(codegen::tensor_scalar_reduce(k.b, Dst::fresh(), x, {AluOp::multiply, number(2.0)}, std::nullopt,
                                        {ir::AccCmd::reset_reduce, AluOp::add, &s}),
          0, 0);
  k.store(s, 0, 64);
  const std::vector<std::string> lines = k.lines();
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[1],
            "tensor_scalar[i0, i1], reduce_accumulator[i0, 0], s[i0, 0] = tensor_scalar[dve](a_tile[i0, i1]; "
            "multiply 2; reset_reduce add) iter=[128, 64]");
  const std::vector<float> out = k.run(small);
  for (int p = 0; p < 128; ++p) {
    float sum = 0.0f;
    for (int j = 0; j < 64; ++j) {
      sum += 2.0f * small(p, j);
      ASSERT_EQ(out[p * 65 + j], 2.0f * small(p, j)) << p << ", " << j;
    }
    ASSERT_EQ(out[p * 65 + 64], sum) << p;
  }
}

// load_reduce from 20, maximum, negated into s; the result into columns 32..64.
TEST(BuildersCurrent, TensorScalarReduceIntoAColumnSliceNegated) {
  Built k(65, DType::float32, trn3());
  const TensorVal x = k.load(k.a), d = k.filled("d", {128, 64}, 9.0), s = k.sbuf("s", {128, 1});
  k.b.current_api = true;
  k.b.requested_api = "nisa.tensor_scalar_reduce";
  Accumulate acc{ir::AccCmd::load_reduce, AluOp::maximum, &s};
  acc.negate_res = true;
  codegen::tensor_scalar_reduce(k.b, Dst::into(k.cols(d, 32, 64)), k.cols(x, 0, 32), {AluOp::subtract, number(1.0)},
                                number(20.0), acc);
  k.store(d);
  k.store(s, 0, 64);
  const std::vector<std::string> lines = k.lines();
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[2],
            "d[i0, i1 + 32], reduce_accumulator[i0, 0], s[i0, 0] = tensor_scalar[dve](a_tile[i0, i1]; subtract 1; "
            "load_reduce maximum from 20) negate iter=[128, 32]");
  const auto f = [](int p, int j) { return static_cast<float>((p * 7 + j * 3) % 61 - 30); };
  const std::vector<float> out = k.run(f);
  for (int p = 0; p < 128; ++p) {
    float m = 20.0f;
    for (int j = 0; j < 64; ++j) {
      if (j < 32) m = std::max(m, f(p, j) - 1.0f);
      ASSERT_EQ(out[p * 65 + j], j >= 32 ? f(p, j - 32) - 1.0f : 9.0f) << p << ", " << j;
    }
    ASSERT_EQ(out[p * 65 + 64], -m) << p;
  }
}

TEST(BuildersErrors, DstOfOtherPartitionsIsATileShapeMismatch) {
  Built k;
  const TensorVal x = k.load(k.a), d = k.sbuf("d", {64, 128}), e = k.sbuf("e", {128, 64});
  k.b.current_api = true;
  k.b.requested_api = "nisa.tensor_copy";
  // The same 8192 elements, on 64 partitions instead of 128.
  EXPECT_EQ(diag_code([&] { codegen::tensor_copy(k.b, Dst::into(d), x, ir::Engine::none, {}); }),
            "err_tile_shape_mismatch");
  k.b.requested_api = "nisa.tensor_scalar";
  // 128 partitions but 32 elements per partition for a 64-wide result.
  EXPECT_EQ(diag_code([&] {
              codegen::tensor_scalar(k.b, Dst::into(k.cols(e, 0, 32)), x, {{AluOp::add, number(1.0)}}, {}, {});
            }),
            "err_tile_shape_mismatch");
  EXPECT_EQ(k.lines().size(), 1u);  // neither emitted an instruction
}

TEST(BuildersErrors, MatmulIntoAnSbufViewIsUnsupportedMemory) {
  Built k;
  const TensorVal x = k.load(k.a), d = k.sbuf("d", {64, 64});
  k.b.current_api = true;
  k.b.requested_api = "nisa.nc_matmul";
  EXPECT_EQ(diag_code([&] { codegen::nisa_nc_matmul(k.b, Dst::into(d), x, x, {}, false, false, {}); }),
            "err_unsupported_memory");
  EXPECT_EQ(k.lines().size(), 1u);
}

}  // namespace
}  // namespace nkic::builder_test
