// The ISA builders of codegen/Ops.h through their destination, continued (see
// test_builders.cpp): the row instructions, iota and the selects, the gathers, memset,
// load_transpose2d and dropout. Dst::fresh() allocates the result, Dst::into(view)
// writes the caller's view.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "builder_test_kernel.h"
#include "types/MaskAlgebra.h"

namespace nkic::builder_test {
namespace {

using types::IndexVal;

// Row p holds a permutation of 0..63: its top 8 (63..56) sit at j = (v - p) * 45 mod 64 (37 * 45 = 1 mod 64).
float perm(int p, int j) { return static_cast<float>((j * 37 + p) % 64); }
int perm_at(int p, int v) { return (((v - p) % 64 + 64) % 64) * 45 % 64; }

// The partition index [n, 1] and the free index [1, m] of nl.arange.
IndexVal ip(int64_t n) { return types::reshape_index(types::arange(0, n), {0, -1}); }
IndexVal jf(int64_t m) { return types::reshape_index(types::arange(0, m), {-1, 0}); }
// a * ka + b * kb + c
IndexVal lin(const IndexVal& a, int64_t ka, const IndexVal& b, int64_t kb, int64_t c = 0) {
  using types::IndexOp;
  const IndexVal s = types::index_binop(IndexOp::add, types::index_binop(IndexOp::mul, a, types::index_constant(ka)),
                                        types::index_binop(IndexOp::mul, b, types::index_constant(kb)));
  return types::index_binop(IndexOp::add, s, types::index_constant(c));
}

TEST(BuildersRows, TensorTensorScanFreshFromANumber) {
  Built k;
  const TensorVal x = k.load(k.a);
  k.b.requested_api = "nisa.tensor_tensor_scan";
  // r[i] = max(x[i], r[i-1]) + x[i] from r[-1] = 1.
  k.store(codegen::tensor_tensor_scan(k.b, Dst::fresh(), x, x, number(1.0), {AluOp::maximum, std::nullopt},
                                      {AluOp::add, std::nullopt}, {}));
  const std::vector<std::string> lines = k.lines();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1],
            "tensor_tensor_scan[i0, i1] = tensor_tensor_scan[dve](a_tile[i0, i1], a_tile[i0, i1], 1; maximum; add) "
            "iter=[128, 64] widths=[64, 64, 64]");
  const std::vector<float> out = k.run(small);
  for (int p = 0; p < 128; p += 3) {
    float r = 1.0f;
    for (int j = 0; j < 64; ++j)
      ASSERT_EQ(out[p * 64 + j], r = std::max(small(p, j), r) + small(p, j)) << p << ", " << j;
  }
}

TEST(BuildersRows, TensorTensorScanIntoAColumnSlice) {
  Built k;
  const TensorVal x = k.load(k.a), y = k.load(k.bias), d = k.filled("d", {128, 64}, 0.5);
  k.b.current_api = true;
  k.b.requested_api = "nisa.tensor_tensor_scan";
  // r[i] = (x[i] + r[i-1]) - x[i + 32] from r[-1] = b.
  codegen::tensor_tensor_scan(k.b, Dst::into(k.cols(d, 16, 48)), k.cols(x, 0, 32), k.cols(x, 32, 64), Value(y),
                              {AluOp::add, std::nullopt}, {AluOp::subtract, std::nullopt}, {});
  k.store(d);
  const std::vector<std::string> lines = k.lines();
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[3],
            "d[i0, i1 + 16] = tensor_tensor_scan[dve](a_tile[i0, i1], a_tile[i0, i1 + 32], b_tile[i0, 0]; add; "
            "subtract) iter=[128, 32] widths=[32, 32, 32, 1]");
  const std::vector<float> out = k.run(small);
  for (int p = 0; p < 128; p += 3) {
    float r = static_cast<float>(p) / 8.0f;
    for (int j = 0; j < 64; ++j) {
      if (j >= 16 && j < 48) r = (small(p, j - 16) + r) - small(p, j + 16);
      ASSERT_EQ(out[p * 64 + j], j >= 16 && j < 48 ? r : 0.5f) << p << ", " << j;
    }
  }
}

// Row p: p + (j % 8); the even positions hold p + {0, 2, 4, 6}, the odd ones p + {1, 3, 5, 7},
// 32 each: per half [count 32, mean, 32 * variance 5 = 160]; over the row mean p + 3.5, variance 5.25.
float octave(int p, int j) { return static_cast<float>(p + j % 8); }

TEST(BuildersRows, BnStatsFreshThenBnAggrIntoAUnitDimView) {
  Built k(8);
  const TensorVal x = k.load(k.a), mv = k.sbuf("mv", {128, 1, 2});
  k.b.requested_api = "nisa.bn_stats";
  const TensorVal st = codegen::bn_stats(k.b, Dst::fresh(), x, {});
  k.b.current_api = true;
  k.b.requested_api = "nisa.bn_aggr";
  codegen::bn_aggr(k.b, Dst::into(mv), st, {});
  k.store(st);
  k.store(codegen::reshape_view(k.b, mv, {128, 2}), 0, 6);
  const std::vector<std::string> lines = k.lines();
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[1], "bn_stats[i0, i1] = bn_stats[dve](a_tile[i0, i1]) iter=[128, 64] widths=[6, 64]");
  EXPECT_EQ(lines[2], "mv[i0, 0, i1] = bn_aggr[dve](bn_stats[i0, i1]) iter=[128, 6] widths=[2, 6]");
  const std::vector<float> out = k.run(octave);
  for (int p = 0; p < 128; ++p) {
    const float q = static_cast<float>(p);
    EXPECT_EQ(std::vector<float>(out.begin() + p * 8, out.begin() + p * 8 + 8),
              (std::vector<float>{32, q + 3, 160, 32, q + 4, 160, q + 3.5f, 5.25f}))
        << p;
  }
}

// Each half of the row into its own columns of one tile; bn_aggr folds the four groups.
TEST(BuildersRows, BnStatsIntoColumnSlicesThenBnAggrFresh) {
  Built k(2);
  const TensorVal x = k.load(k.a), d = k.sbuf("d", {128, 12});
  k.b.current_api = true;
  k.b.requested_api = "nisa.bn_stats";
  codegen::bn_stats(k.b, Dst::into(k.cols(d, 0, 6)), k.cols(x, 0, 32), {});
  codegen::bn_stats(k.b, Dst::into(k.cols(d, 6, 12)), k.cols(x, 32, 64), {});
  k.b.current_api = false;
  k.b.requested_api = "nisa.bn_aggr";
  k.store(codegen::bn_aggr(k.b, Dst::fresh(), d, {}));
  const std::vector<std::string> lines = k.lines();
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[1], "d[i0, i1] = bn_stats[dve](a_tile[i0, i1]) iter=[128, 32] widths=[6, 32]");
  EXPECT_EQ(lines[2], "d[i0, i1 + 6] = bn_stats[dve](a_tile[i0, i1 + 32]) iter=[128, 32] widths=[6, 32]");
  EXPECT_EQ(lines[3], "bn_aggr[i0, i1] = bn_aggr[dve](d[i0, i1]) iter=[128, 12] widths=[2, 12]");
  // Row p: the first half p + j % 4 (j < 32), the second p + 4 + j % 4: mean p + 3.5, variance 1.25 + 4.
  const auto f = [](int p, int j) { return static_cast<float>(p + j % 4 + (j >= 32 ? 4 : 0)); };
  const std::vector<float> out = k.run(f);
  for (int p = 0; p < 128; ++p) {
    EXPECT_EQ(out[p * 2], static_cast<float>(p) + 3.5f) << p;
    EXPECT_NEAR(out[p * 2 + 1], 5.25f, 1e-5f) << p;
  }
}

// max8 into columns 4..12 of a zeroed [128, 16] tile; nc_find_index8 fresh reads them.
TEST(BuildersRows, Max8IntoAColumnSliceThenFindIndex8Fresh) {
  Built k(24);
  const TensorVal x = k.load(k.a), d = k.filled("d", {128, 16}, 0.0);
  k.b.current_api = true;
  k.b.requested_api = "nisa.max8";
  codegen::max8(k.b, Dst::into(k.cols(d, 4, 12)), x, {});
  k.b.current_api = false;
  k.b.requested_api = "nisa.nc_find_index8";
  const TensorVal at = codegen::find_index8(k.b, Dst::fresh(), x, k.cols(d, 4, 12), {});
  EXPECT_EQ(k.b.tensor(at.tensor).dtype, DType::uint32);
  k.store(d);
  k.store(at, 0, 16);  // converted to fp32 by the store
  const std::vector<std::string> lines = k.lines();
  ASSERT_EQ(lines.size(), 6u);
  EXPECT_EQ(lines[2], "d[i0, i1 + 4] = max8[dve](a_tile[i0, i1]) iter=[128, 64] widths=[8, 64]");
  EXPECT_EQ(lines[3],
            "find_index8[i0, i1] = nc_find_index8[dve](a_tile[i0, i1], d[i0, i1 + 4]) iter=[128, 64] "
            "widths=[8, 64, 8]");
  const std::vector<float> out = k.run(perm);
  for (int p = 0; p < 128; ++p)
    for (int c = 0; c < 16; ++c) {
      ASSERT_EQ(out[p * 24 + c], c >= 4 && c < 12 ? static_cast<float>(67 - c) : 0.0f) << p << ", " << c;
      if (c < 8) {
        ASSERT_EQ(out[p * 24 + 16 + c], static_cast<float>(perm_at(p, 63 - c))) << p << ", " << c;
      }
    }
}

// nc_find_index8 into a uint32 [128, 2, 4] tile: eight positions per partition, walked flat.
TEST(BuildersRows, Max8FreshThenFindIndex8IntoADstOfAnotherFreeShape) {
  Built k(8, DType::uint32);
  const TensorVal x = k.load(k.a), d = k.sbuf("d", {128, 2, 4}, DType::uint32);
  k.b.requested_api = "nisa.max8";
  const TensorVal m = codegen::max8(k.b, Dst::fresh(), x, {});
  k.b.current_api = true;
  k.b.requested_api = "nisa.nc_find_index8";
  codegen::find_index8(k.b, Dst::into(d), x, m, {});
  k.store(codegen::reshape_view(k.b, d, {128, 8}));
  const std::vector<std::string> lines = k.lines();
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[1], "max8[i0, i1] = max8[dve](a_tile[i0, i1]) iter=[128, 64] widths=[8, 64]");
  EXPECT_EQ(k.root_written(lines[2]), "d");  // d walked as [128, 8] rows
  EXPECT_EQ(rhs(lines[2]), " = nc_find_index8[dve](a_tile[i0, i1], max8[i0, i1]) iter=[128, 64] widths=[8, 64, 8]");
  const std::vector<float> raw = k.run(perm);
  std::vector<uint32_t> idx(raw.size());
  std::memcpy(idx.data(), raw.data(), raw.size() * sizeof(float));
  for (int p = 0; p < 128; ++p)
    for (int r = 0; r < 8; ++r) ASSERT_EQ(idx[p * 8 + r], static_cast<uint32_t>(perm_at(p, 63 - r))) << p << ", " << r;
}

// The top 8 of each row replaced by -1, their positions into dst_idx.
TEST(BuildersRows, MatchReplace8FreshWithItsPositions) {
  Built k(72);
  const TensorVal x = k.load(k.a), idx = k.sbuf("idx", {128, 8}, DType::uint32);
  k.b.requested_api = "nisa.max8";
  const TensorVal m = codegen::max8(k.b, Dst::fresh(), x, {});
  k.b.requested_api = "nisa.nc_match_replace8";
  k.store(codegen::match_replace8(k.b, Dst::fresh(), x, m, -1.0, &idx, {}));
  k.store(idx, 0, 64);
  const std::vector<std::string> lines = k.lines();
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[2],
            "match_replace8[i0, i1], idx[i0, i1] = nc_match_replace8[dve](a_tile[i0, i1], max8[i0, i1], -1) "
            "iter=[128, 64] widths=[64, 8, 64, 8]");
  const std::vector<float> out = k.run(perm);
  for (int p = 0; p < 128; ++p) {
    for (int j = 0; j < 64; ++j) ASSERT_EQ(out[p * 72 + j], perm(p, j) >= 56 ? -1.0f : perm(p, j)) << p << ", " << j;
    for (int r = 0; r < 8; ++r)
      ASSERT_EQ(out[p * 72 + 64 + r], static_cast<float>(perm_at(p, 63 - r))) << p << ", " << r;
  }
}

// In place: the data's own tile is the dst.
TEST(BuildersRows, MatchReplace8IntoTheDataTile) {
  Built k;
  const TensorVal x = k.load(k.a);
  k.b.requested_api = "nisa.max8";
  const TensorVal m = codegen::max8(k.b, Dst::fresh(), x, {});
  k.b.current_api = true;
  k.b.requested_api = "nisa.nc_match_replace8";
  codegen::match_replace8(k.b, Dst::into(x), x, m, 100.0, nullptr, {});
  k.store(x);
  const std::vector<std::string> lines = k.lines();
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[2],
            "a_tile[i0, i1] = nc_match_replace8[dve](a_tile[i0, i1], max8[i0, i1], 100) iter=[128, 64] "
            "widths=[64, 64, 8]");
  const std::vector<float> out = k.run(perm);
  for (int p = 0; p < 128; ++p)
    for (int j = 0; j < 64; ++j) ASSERT_EQ(out[p * 64 + j], perm(p, j) >= 56 ? 100.0f : perm(p, j)) << p << ", " << j;
}

// Row p: runs of 4 equal ids (j / 4 + 1); odd rows end in padding (id 0) from j = 56.
float segment(int p, int j) { return p % 2 == 1 && j >= 56 ? 0.0f : static_cast<float>(j / 4 + 1); }

void expect_bounds(const std::vector<float>& out) {
  for (int p = 0; p < 128; ++p)
    for (int j = 0; j < 64; ++j) {
      const bool pad = segment(p, j) == 0.0f;
      ASSERT_EQ(out[p * 128 + j], pad ? 64.0f : static_cast<float>(j / 4 * 4)) << p << ", " << j;
      ASSERT_EQ(out[p * 128 + 64 + j], pad ? -1.0f : static_cast<float>(j / 4 * 4 + 4)) << p << ", " << j;
    }
}

TEST(BuildersRows, SequenceBoundsFresh) {
  Built k(128);
  const TensorVal ids = k.load(k.a);
  k.b.requested_api = "nisa.sequence_bounds";
  const TensorVal sb = codegen::sequence_bounds(k.b, Dst::fresh(), ids, {});
  EXPECT_EQ(sb.shape, (std::vector<int64_t>{128, 2, 64}));
  k.store(codegen::reshape_view(k.b, sb, {128, 128}));
  const std::vector<std::string> lines = k.lines();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(k.root_written(lines[1]), k.b.tensor(sb.tensor).name);  // the [128, 2, 64] tile walked as [128, 128] rows
  EXPECT_EQ(rhs(lines[1]), " = sequence_bounds[pool](a_tile[i0, i1]) iter=[128, 64] widths=[128, 64]");
  expect_bounds(k.run(segment));
}

// A [128, 128] dst for the [128, 2, 64] result: starts then ends along each partition.
TEST(BuildersRows, SequenceBoundsIntoADstOfAnotherFreeShape) {
  Built k(128);
  const TensorVal ids = k.load(k.a), d = k.sbuf("d", {128, 128});
  k.b.requested_api = "nisa.sequence_bounds";
  codegen::sequence_bounds(k.b, Dst::into(d), ids, {});
  k.store(d);
  const std::vector<std::string> lines = k.lines();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(k.root_written(lines[1]), "d");
  EXPECT_EQ(rhs(lines[1]), " = sequence_bounds[pool](a_tile[i0, i1]) iter=[128, 64] widths=[128, 64]");
  expect_bounds(k.run(segment));
}

TEST(BuildersIndex, IotaFresh) {
  Built k(64, DType::int32);
  k.b.requested_api = "nisa.iota";
  k.store(codegen::iota(k.b, Dst::fresh(), lin(ip(128), 64, jf(64), 1, -100), DType::int32, {}));
  const std::vector<std::string> lines = k.lines();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "iota[i0, i1] = iota[pool](64*i0 + i1 - 100) iter=[128, 64]");
  const std::vector<float> raw = k.run(small);
  std::vector<int32_t> out(raw.size());
  std::memcpy(out.data(), raw.data(), raw.size() * sizeof(float));
  for (int p = 0; p < 128; ++p)
    for (int j = 0; j < 64; ++j) ASSERT_EQ(out[p * 64 + j], p * 64 + j - 100) << p << ", " << j;
}

// Into columns 8..24 of an fp32 tile: the values take the dst's dtype, the other columns stay.
TEST(BuildersIndex, IotaIntoAColumnSlice) {
  Built k;
  const TensorVal d = k.filled("d", {128, 64}, -1.0);
  k.b.current_api = true;
  k.b.requested_api = "nisa.iota";
  codegen::iota(k.b, Dst::into(k.cols(d, 8, 24)), lin(ip(128), -1, jf(16), 2), DType::int32, {});
  k.store(d);
  const std::vector<std::string> lines = k.lines();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1], "d[i0, i1 + 8] = iota[pool](-i0 + 2*i1) iter=[128, 16]");
  const std::vector<float> out = k.run(small);
  for (int p = 0; p < 128; ++p)
    for (int j = 0; j < 64; ++j)
      ASSERT_EQ(out[p * 64 + j], j >= 8 && j < 24 ? static_cast<float>(2 * (j - 8) - p) : -1.0f) << p << ", " << j;
}

TEST(BuildersIndex, AffineSelectFresh) {
  Built k;
  const TensorVal x = k.load(k.a);
  k.b.requested_api = "nisa.affine_select";
  const types::MaskVal lower = types::compare_index(types::CmpOp::ge, ip(128), jf(64));  // p >= j
  k.store(codegen::affine_select(k.b, Dst::fresh(), lower, x, -5.0, {}));
  const std::vector<std::string> lines = k.lines();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1],
            "affine_select[i0, i1] = affine_select[pool](a_tile[i0, i1], -5) if (i0 - i1 >= 0) iter=[128, 64]");
  const std::vector<float> out = k.run(small);
  for (int p = 0; p < 128; ++p)
    for (int j = 0; j < 64; ++j) ASSERT_EQ(out[p * 64 + j], p >= j ? small(p, j) : -5.0f) << p << ", " << j;
}

TEST(BuildersIndex, AffineSelectIntoADstOfAnotherFreeShape) {
  Built k;
  const TensorVal x = k.load(k.a), d = k.sbuf("d", {128, 4, 16});
  k.b.current_api = true;
  k.b.requested_api = "nisa.affine_select";
  const types::MaskVal band =
      types::compare_index(types::CmpOp::lt, lin(ip(128), 1, jf(64), -1), types::index_constant(0));
  codegen::affine_select(k.b, Dst::into(d), band, x, 9.0, {});  // p - j < 0
  k.store(codegen::reshape_view(k.b, d, {128, 64}));
  const std::vector<std::string> lines = k.lines();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(k.root_written(lines[1]), "d");
  EXPECT_EQ(rhs(lines[1]), " = affine_select[pool](a_tile[i0, i1], 9) if (i0 - i1 <= -1) iter=[128, 64]");
  const std::vector<float> out = k.run(small);
  for (int p = 0; p < 128; ++p)
    for (int j = 0; j < 64; ++j) ASSERT_EQ(out[p * 64 + j], p < j ? small(p, j) : 9.0f) << p << ", " << j;
}

// Position j + 4 in [10, b[p]) keeps the data; elsewhere -7.
TEST(BuildersIndex, RangeSelectFresh) {
  Built k;
  const TensorVal x = k.load(k.a), y = k.load(k.bias);
  k.b.requested_api = "nisa.range_select";
  k.store(codegen::range_select(k.b, Dst::fresh(), x, {AluOp::greater_equal, number(10.0)}, {AluOp::less, Value(y)}, 4,
                                -7.0, {}, {}));
  const std::vector<std::string> lines = k.lines();
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[2],
            "range_select[i0, i1] = range_select[dve](a_tile[i0, i1], -7, i1 + 4; greater_equal 10; "
            "less b_tile[i0, 0]) iter=[128, 64]");
  const std::vector<float> out = k.run(small);
  for (int p = 0; p < 128; ++p)
    for (int j = 0; j < 64; ++j) {
      const bool in = j + 4 >= 10 && static_cast<float>(j + 4) < static_cast<float>(p) / 8.0f;
      ASSERT_EQ(out[p * 64 + j], in ? small(p, j) : -7.0f) << p << ", " << j;
    }
}

// The current API fills with FP32_MIN; the accumulator keeps each row's maximum.
TEST(BuildersIndex, RangeSelectIntoWithTheRowMaximum) {
  Built k(65);
  const TensorVal x = k.load(k.a), d = k.sbuf("d", {128, 64}), s = k.sbuf("s", {128, 1});
  const float lowest = std::numeric_limits<float>::lowest();
  k.b.current_api = true;
  k.b.requested_api = "nisa.range_select";
  codegen::range_select(k.b, Dst::into(d), x, {AluOp::greater, number(3.0)}, {AluOp::less_equal, number(40.0)}, 0,
                        lowest, {ir::AccCmd::reset_reduce, AluOp::maximum, &s}, {});
  k.store(d);
  k.store(s, 0, 64);
  const std::vector<std::string> lines = k.lines();
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[1],
            "d[i0, i1], reduce_accumulator[i0, 0], s[i0, 0] = range_select[dve](a_tile[i0, i1], -3.40282347e+38, i1; "
            "greater 3; less_equal 40; reset_reduce maximum) iter=[128, 64]");
  const auto f = [](int p, int j) { return static_cast<float>((p * 7 + j * 13) % 53); };
  const std::vector<float> out = k.run(f);
  for (int p = 0; p < 128; ++p) {
    float m = lowest;
    for (int j = 0; j < 64; ++j) {
      const bool in = j > 3 && j <= 40;
      if (in) m = std::max(m, f(p, j));
      ASSERT_EQ(out[p * 65 + j], in ? f(p, j) : lowest) << p << ", " << j;
    }
    ASSERT_EQ(out[p * 65 + 64], m) << p;
  }
}

TEST(BuildersGather, GatherFlattenedFreshReversesEachRow) {
  Built k;
  const TensorVal x = k.load(k.a);
  k.b.requested_api = "nisa.iota";
  const TensorVal rev = codegen::iota(k.b, Dst::fresh(), lin(ip(128), 0, jf(64), -1, 63), DType::int32, {});
  k.b.requested_api = "nl.gather_flattened";
  k.store(codegen::gather_flattened(k.b, Dst::fresh(), x, rev, {}));
  const std::vector<std::string> lines = k.lines();
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[2], "gather[i0, i1] = tensor_copy[dve](a_tile.1[i0, iota[i0, i1]]) iter=[128, 64]");
  const std::vector<float> out = k.run(small);
  for (int p = 0; p < 128; ++p)
    for (int j = 0; j < 64; ++j) ASSERT_EQ(out[p * 64 + j], small(p, 63 - j)) << p << ", " << j;
}

// Data [128, 2, 32] read as its flat rows; positions 3j + 1 into columns 8..24.
TEST(BuildersGather, GatherFlattenedIntoAColumnSlice) {
  Built k;
  const TensorVal x = k.load(k.a), d = k.filled("d", {128, 64}, 0.25);
  k.b.requested_api = "nisa.iota";
  const TensorVal at = codegen::iota(k.b, Dst::fresh(), lin(ip(128), 0, jf(16), 3, 1), DType::int32, {});
  k.b.current_api = true;
  k.b.requested_api = "nisa.nc_n_gather";
  codegen::gather_flattened(k.b, Dst::into(k.cols(d, 8, 24)), codegen::reshape_view(k.b, x, {128, 2, 32}), at, {});
  k.store(d);
  const std::vector<std::string> lines = k.lines();
  ASSERT_EQ(lines.size(), 5u);
  // Given its dst, the gather is nisa.nc_n_gather, a GpSimd instruction (the ISA reference).
  EXPECT_EQ(lines[3], "d[i0, i1 + 8] = tensor_copy[pool](a_tile.1.1[i0, iota[i0, i1]]) iter=[128, 16]");
  const auto f = [](int p, int j) { return static_cast<float>(p * 64 + j); };
  const std::vector<float> out = k.run(f);
  for (int p = 0; p < 128; ++p)
    for (int j = 0; j < 64; ++j)
      ASSERT_EQ(out[p * 64 + j], j >= 8 && j < 24 ? f(p, 3 * (j - 8) + 1) : 0.25f) << p << ", " << j;
}

// 32 partitions (two GpSimd cores), uint16 index[p, c] = p + 16c: index v of core q is
// index[16q + v % 16, v / 16] = 16q + v, and gathers 2 elements from there:
// result[p, r, i, e] = src[p, 16 (p / 16) + 16 r + i + e], flat position 32r + 2i + e.
// A printed instruction without its engine ("= tensor_copy[dve](" -> "= tensor_copy(").
std::string without_engine(std::string line) {
  const size_t at = line.find('[', line.find(" = ")), end = line.find("](", at);
  return line.erase(at, end + 1 - at);
}

float local_src(int p, int j) { return static_cast<float>(p * 64 + j); }
float local_want(int p, int flat) { return local_src(p, 16 * (p / 16) + flat / 2 + flat % 2); }

TEST(BuildersGather, LocalGatherFresh) {
  Built k;
  const TensorVal x = k.load(k.a);
  k.b.requested_api = "nisa.iota";
  const TensorVal idx = codegen::iota(k.b, Dst::fresh(), lin(ip(32), 1, jf(2), 16), DType::uint16, {});
  k.b.requested_api = "nisa.local_gather";
  const TensorVal g = codegen::local_gather(k.b, Dst::fresh(), k.view(x, {0, 32}, {0, 64}), idx, 2, 32, {});
  EXPECT_EQ(g.shape, (std::vector<int64_t>{32, 2, 16, 2}));
  k.store(codegen::reshape_view(k.b, g, {32, 64}));
  const std::vector<std::string> lines = k.lines();
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(without_engine(lines[2]),
            "local_gather[16*i0 + i1, i2, i3, i4] = tensor_copy(a_tile[16*i0 + i1, iota[16*i0 + i3, i2] + i4]) "
            "iter=[2, 16, 2, 16, 2] mask=(16*i2 + i3 <= 31)");
  const std::vector<float> out = k.run(local_src);
  for (int p = 0; p < 32; ++p)
    for (int q = 0; q < 64; ++q) ASSERT_EQ(out[p * 64 + q], local_want(p, q)) << p << ", " << q;
}

// Into columns 32..96 of a [32, 128] tile, 24 valid indices: flat positions 48.. are not written.
TEST(BuildersGather, LocalGatherIntoAColumnSliceWritesTheValidIndicesOnly) {
  Built k(128);
  const TensorVal x = k.load(k.a), d = k.filled("d", {32, 128}, -3.0);
  k.b.requested_api = "nisa.iota";
  const TensorVal idx = codegen::iota(k.b, Dst::fresh(), lin(ip(32), 1, jf(2), 16), DType::uint16, {});
  k.b.current_api = true;
  k.b.requested_api = "nisa.local_gather";
  codegen::local_gather(k.b, Dst::into(k.cols(d, 32, 96)), k.view(x, {0, 32}, {0, 64}), idx, 2, 24, {});
  k.store(d);
  const std::vector<std::string> lines = k.lines();
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(without_engine(lines[3]),
            "d[16*i0 + i1, 32*i2 + 2*i3 + i4 + 32] = tensor_copy(a_tile[16*i0 + i1, iota[16*i0 + i3, i2] + i4]) "
            "iter=[2, 16, 2, 16, 2] mask=(16*i2 + i3 <= 23)");
  const std::vector<float> out = k.run(local_src);
  for (int p = 0; p < 32; ++p)
    for (int c = 0; c < 128; ++c)
      ASSERT_EQ(out[p * 128 + c], c >= 32 && c < 32 + 48 ? local_want(p, c - 32) : -3.0f) << p << ", " << c;
}

// nisa.local_gather is a GpSimd instruction (each of its cores serves 16 partitions).
TEST(BuildersGather, LocalGatherRunsOnGpSimd) {
  Built k;
  const TensorVal x = k.load(k.a);
  k.b.requested_api = "nisa.iota";
  const TensorVal idx = codegen::iota(k.b, Dst::fresh(), lin(ip(32), 1, jf(2), 16), DType::uint16, {});
  k.b.requested_api = "nisa.local_gather";
  codegen::local_gather(k.b, Dst::fresh(), k.view(x, {0, 32}, {0, 64}), idx, 2, 32, {});
  const std::vector<std::string> lines = k.lines();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_NE(lines[2].find(" = tensor_copy[pool]("), std::string::npos) << lines[2];
}

TEST(BuildersMemory, MemsetFresh) {
  Built k;
  k.b.requested_api = "nisa.memset";
  const TensorVal t = codegen::memset(k.b, Dst::fresh(), {128, 64}, 2.5, false, DType::float32);
  EXPECT_EQ(k.b.tensor(t.tensor).memory, Memory::SBUF);
  k.store(t);
  const std::vector<std::string> lines = k.lines();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "t[i0, i1] = memset[dve](2.5) iter=[128, 64]");
  const std::vector<float> out = k.run(small);
  for (int i = 0; i < 128 * 64; ++i) ASSERT_EQ(out[i], 2.5f) << i;
}

// Columns 8..24 of a loaded tile: the loaded values stay in the other columns.
TEST(BuildersMemory, MemsetIntoAColumnSliceOfALoadedTile) {
  Built k;
  const TensorVal x = k.load(k.a);
  k.b.current_api = true;
  k.b.requested_api = "nisa.memset";
  codegen::memset(k.b, Dst::into(k.cols(x, 8, 24)), {}, 3.0, true, DType::int32);
  k.store(x);
  const std::vector<std::string> lines = k.lines();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1], "a_tile[i0, i1 + 8] = memset[dve](3) iter=[128, 16]");
  const std::vector<float> out = k.run(small);
  for (int p = 0; p < 128; ++p)
    for (int j = 0; j < 64; ++j) ASSERT_EQ(out[p * 64 + j], j >= 8 && j < 24 ? 3.0f : small(p, j)) << p << ", " << j;
}

TEST(BuildersMemory, LoadTranspose2dFresh) {
  Built k(128);
  k.b.requested_api = "nl.load_transpose2d";
  const TensorVal t = codegen::load_transpose2d(k.b, Dst::fresh(), k.a, {});
  EXPECT_EQ(t.shape, (std::vector<int64_t>{64, 128}));
  k.store(t);
  const std::vector<std::string> lines = k.lines();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "a_T[i1, i0] = load[dma](a[i0, i1]) iter=[128, 64]");
  const std::vector<float> out = k.run(small);
  for (int r = 0; r < 64; ++r)
    for (int c = 0; c < 128; ++c) ASSERT_EQ(out[r * 128 + c], small(c, r)) << r << ", " << c;
}

// a[0:32, :] transposed into columns 32..64 of a [64, 128] tile.
TEST(BuildersMemory, LoadTranspose2dIntoAColumnSlice) {
  Built k(128);
  const TensorVal d = k.filled("d", {64, 128}, -2.0);
  k.b.current_api = true;
  k.b.requested_api = "nisa.dma_transpose";
  codegen::load_transpose2d(k.b, Dst::into(k.cols(d, 32, 64)), k.view(k.a, {0, 32}, {0, 64}), {});
  k.store(d);
  const std::vector<std::string> lines = k.lines();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1], "d[i1, i0 + 32] = load[dma](a[i0, i1]) iter=[32, 64]");
  const std::vector<float> out = k.run(small);
  for (int r = 0; r < 64; ++r)
    for (int c = 0; c < 128; ++c)
      ASSERT_EQ(out[r * 128 + c], c >= 32 && c < 64 ? small(c - 32, r) : -2.0f) << r << ", " << c;
}

// Rate 0: every uniform [0, 1) draw is >= 0, every element is kept.
TEST(BuildersMemory, DropoutFreshAtRateZeroIsTheIdentity) {
  Built k;
  const TensorVal x = k.load(k.a);
  k.b.requested_api = "nisa.dropout";
  k.store(codegen::dropout(k.b, Dst::fresh(), x, number(0.0), {}));
  const std::vector<std::string> lines = k.lines();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1], "dropout[i0, i1] = dropout[dve](a_tile[i0, i1], 0) iter=[128, 64]");
  const auto f = [](int p, int j) { return 1.0f + static_cast<float>(p * 64 + j); };
  const std::vector<float> out = k.run(f);
  for (int p = 0; p < 128; ++p)
    for (int j = 0; j < 64; ++j) ASSERT_EQ(out[p * 64 + j], f(p, j)) << p << ", " << j;
}

// Rate 1 drops every element of the slice; the rest of the tile keeps its values.
TEST(BuildersMemory, DropoutIntoAColumnSliceAtRateOne) {
  Built k;
  const TensorVal x = k.load(k.a), d = k.filled("d", {128, 64}, 6.0);
  k.b.current_api = true;
  k.b.requested_api = "nisa.dropout";
  codegen::dropout(k.b, Dst::into(k.cols(d, 8, 24)), k.cols(x, 0, 16), number(1.0), {});
  k.store(d);
  const std::vector<std::string> lines = k.lines();
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[2], "d[i0, i1 + 8] = dropout[dve](a_tile[i0, i1], 1) iter=[128, 16]");
  const std::vector<float> out = k.run([](int, int) { return 1.0f; });
  for (int p = 0; p < 128; ++p)
    for (int j = 0; j < 64; ++j) ASSERT_EQ(out[p * 64 + j], j >= 8 && j < 24 ? 0.0f : 6.0f) << p << ", " << j;
}

TEST(BuildersErrors, MemsetOfAFractionIntoAnIntegerView) {
  Built k;
  const TensorVal d = k.sbuf("d", {128, 64}, DType::int32);
  k.b.current_api = true;
  k.b.requested_api = "nisa.memset";
  EXPECT_EQ(diag_code([&] { codegen::memset(k.b, Dst::into(k.cols(d, 0, 8)), {}, 7.5, false, DType::float32); }),
            "err_memset_value_dtype");
  EXPECT_EQ(k.lines().size(), 0u);
}

// The current API's accumulator instructions check a given dst holds the data's rows.
TEST(BuildersErrors, ExponentialIntoADstOfOtherRows) {
  Built k(64, DType::float32, trn3());
  const TensorVal x = k.load(k.a), d = k.sbuf("d", {128, 32}), e = k.sbuf("e", {64, 64});
  k.b.current_api = true;
  k.b.requested_api = "nisa.exponential";
  EXPECT_EQ(diag_code([&] { codegen::exponential(k.b, Dst::into(d), x, number(0.0), {}); }), "err_tile_shape_mismatch");
  EXPECT_EQ(diag_code([&] { codegen::exponential(k.b, Dst::into(e), x, number(0.0), {}); }),
            "err_num_partition_mismatch");
  EXPECT_EQ(k.lines().size(), 1u);
}

}  // namespace
}  // namespace nkic::builder_test
