// Tile grids (codegen/TileGrid.h) through the library API: grid geometry with clamped
// remainders, selection, regrouping, the packed on-chip layout and the access pattern of
// `.data`, and the rules each call checks.
#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "codegen/TileGrid.h"
#include "codegen/ViewMethods.h"
#include "diagnostic_test_util.h"
#include "sema/Target.h"

namespace nkic {
namespace {

using codegen::GridKey;
using codegen::TileGrid;
using Ints = std::vector<int64_t>;
using Pairs = std::vector<std::pair<int64_t, int64_t>>;

GridKey at(int64_t i) { return GridKey{false, i, {}, {}, {}}; }
GridKey all() { return GridKey{true, 0, {}, {}, {}}; }
GridKey range(std::optional<int64_t> lo, std::optional<int64_t> hi, std::optional<int64_t> step = {}) {
  return GridKey{true, 0, lo, hi, step};
}

struct Fixture : ::testing::Test {
  codegen::KernelBuilder b{"k", *sema::find_target("trn2")};
  types::TensorVal hbm(Ints shape) {
    return b.full_view(b.add_tensor("x", std::move(shape), ir::DType::float32, ir::Memory::SharedHBM, ir::Role::Input));
  }
  // The [step, count] pairs and start element of a grid's .data.
  std::pair<Pairs, int64_t> data(const TileGrid& g) {
    const codegen::ViewPattern p = codegen::view_pattern(b, codegen::grid_data(b, g), "test");
    return {p.pairs, p.offset.constant()};
  }
  TileGrid alloc(Ints tile, Ints elements, Ints block = {}) {
    return codegen::alloc_grid(b, tile, block, elements, ir::Memory::SBUF, ir::DType::float32, "buf");
  }
};

using TileGridTest = Fixture;

TEST_F(TileGridTest, RemainderTilesAreClampedToTheExtent) {
  const TileGrid g = codegen::grid_of(b, hbm({300, 700}), {128, 256}, {});
  EXPECT_EQ(codegen::grid_shape(g), (Ints{3, 3}));
  EXPECT_EQ(codegen::index_step_elements(g), (Ints{128, 256}));
  EXPECT_EQ(g.count, (Ints{300, 700}));
  EXPECT_TRUE(codegen::is_remainder(g));
  const TileGrid last = codegen::select(b, g, {at(2), at(2)});
  EXPECT_EQ(last.count, (Ints{44, 188}));
  EXPECT_TRUE(codegen::grid_shape(last).empty());
  EXPECT_TRUE(codegen::is_remainder(last));
  EXPECT_FALSE(codegen::is_remainder(codegen::select(b, g, {at(0), at(0)})));
}

TEST_F(TileGridTest, RowsColumnsAndNegativeIndices) {
  const TileGrid g = codegen::grid_of(b, hbm({300, 700}), {128, 256}, {});
  const TileGrid row = codegen::select(b, g, {at(-1), all()});
  EXPECT_EQ(codegen::grid_shape(row), (Ints{3}));
  EXPECT_EQ(row.count, (Ints{44, 700}));
  const TileGrid col = codegen::select(b, g, {all(), at(1)});
  EXPECT_EQ(codegen::grid_shape(col), (Ints{3}));
  EXPECT_EQ(col.count, (Ints{300, 256}));
  // Python's slice bounds: clamped, negative from the end.
  const TileGrid tail = codegen::select(b, g, {range(-2, 99)});
  EXPECT_EQ(codegen::grid_shape(tail), (Ints{2, 3}));
  EXPECT_EQ(tail.origin, (Ints{128, 0}));
  EXPECT_EQ(codegen::select(b, row, {at(1)}).count, (Ints{44, 256}));
}

TEST_F(TileGridTest, HbmDataIsAStridedViewOfTheRowMajorTensor) {
  const TileGrid g = codegen::grid_of(b, hbm({300, 700}), {128, 256}, {});
  const auto [pairs, start] = data(codegen::select(b, g, {at(1), at(2)}));
  EXPECT_EQ(pairs, (Pairs{{700, 128}, {1, 188}}));
  EXPECT_EQ(start, 128 * 700 + 512);
  EXPECT_TRUE(codegen::data_obstacle(b, codegen::select(b, g, {range(0, 2), range(1, 3)})).why.empty());
}

TEST_F(TileGridTest, LeadingDimsAreUntiledAndAnIntegerDropsTheSlab) {
  const TileGrid g = codegen::grid_of(b, hbm({4, 300, 700}), {128, 256}, {});
  EXPECT_EQ(codegen::grid_shape(g), (Ints{4, 3, 3}));
  EXPECT_EQ(codegen::index_step_elements(g), (Ints{1, 128, 256}));
  const TileGrid slab = codegen::select(b, g, {at(2)});
  EXPECT_EQ(codegen::grid_shape(slab), (Ints{3, 3}));
  EXPECT_EQ(slab.count, (Ints{1, 300, 700}));
  const auto [pairs, start] = data(codegen::select(b, slab, {at(1), at(1)}));
  EXPECT_EQ(pairs, (Pairs{{700, 128}, {1, 256}}));
  EXPECT_EQ(start, 2 * 300 * 700 + 128 * 700 + 256);
  // Regrouping keeps the chosen slab.
  EXPECT_EQ(codegen::grid_shape(codegen::regroup(b, slab, {}, {})), (Ints{3, 3}));
}

TEST_F(TileGridTest, BlocksCountTilesAndRegroupToTheirTiles) {
  const TileGrid g = codegen::grid_of(b, hbm({300, 700}), {128, 256}, {2, 2});
  EXPECT_TRUE(g.blocked());
  EXPECT_EQ(codegen::grid_shape(g), (Ints{2, 2}));
  EXPECT_EQ(codegen::index_step_elements(g), (Ints{256, 512}));
  const TileGrid corner = codegen::select(b, g, {at(1), at(1)});
  EXPECT_EQ(corner.count, (Ints{44, 188}));
  const TileGrid first = codegen::select(b, g, {at(0), at(1)});
  const TileGrid inner = codegen::regroup(b, first, {}, {});
  EXPECT_FALSE(inner.blocked());
  EXPECT_EQ(codegen::grid_shape(inner), (Ints{2, 1}));
  EXPECT_EQ(codegen::select(b, inner, {at(1), at(0)}).count, (Ints{128, 188}));
  EXPECT_EQ(codegen::grid_shape(codegen::regroup(b, g, {}, {1, 3})), (Ints{3, 1}));
}

TEST_F(TileGridTest, AnAllocationIsOneTensorOfFullSizeSlots) {
  const TileGrid g = alloc({128, 256}, {300, 700});
  EXPECT_EQ(b.tensor(g.storage.tensor).shape, (Ints{128, 9 * 256}));  // 9 slots, remainders full-size
  EXPECT_EQ(b.tensor(g.storage.tensor).memory, ir::Memory::SBUF);
  auto [row_pairs, row_start] = data(codegen::select(b, g, {at(1), all()}));
  EXPECT_EQ(row_pairs, (Pairs{{2304, 128}, {1, 700}}));  // a row of tiles is contiguous
  EXPECT_EQ(row_start, 3 * 256);
  auto [corner, corner_start] = data(codegen::select(b, g, {at(2), at(2)}));
  EXPECT_EQ(corner, (Pairs{{2304, 44}, {1, 188}}));
  EXPECT_EQ(corner_start, 8 * 256);
}

TEST_F(TileGridTest, HigherRankSlotsAreRowMajorWithinTheSlot) {
  const TileGrid g = alloc({128, 4, 64}, {128, 8, 128});
  EXPECT_EQ(b.tensor(g.storage.tensor).shape, (Ints{128, 4 * 256}));
  auto [pairs, start] = data(codegen::select(b, g, {at(0), at(1), at(1)}));
  EXPECT_EQ(pairs, (Pairs{{1024, 128}, {64, 4}, {1, 64}}));
  EXPECT_EQ(start, 3 * 256);
  EXPECT_NE(codegen::data_obstacle(b, codegen::select(b, g, {at(0), at(0), all()})).why.find("not adjacent"),
            std::string::npos);
  EXPECT_NE(codegen::data_obstacle(b, codegen::select(b, g, {at(0), all(), at(0)})).why.find("not adjacent"),
            std::string::npos);
}

TEST_F(TileGridTest, OnChipDataThatIsNotOneAccessPattern) {
  const TileGrid g = alloc({128, 256}, {300, 700});
  const codegen::DataObstacle rows = codegen::data_obstacle(b, g);
  EXPECT_EQ(rows.why, "it spans tile rows 0 to 2 of the partition dim, and on chip those rows lie side by side along "
                      "the free dim of the same partitions");
  EXPECT_EQ(rows.fix, "select one row of tiles (grid[i, :]) and move each row on its own");
  const sema::Diagnostic d = test_util::diagnostic_of([&] { codegen::grid_data(b, g); });
  EXPECT_EQ(d.code, "err_grid_data_not_representable");
  EXPECT_EQ(d.kind, sema::ErrorKind::Value);
  const TileGrid batched = alloc({128, 256}, {2, 128, 256});
  EXPECT_NE(codegen::data_obstacle(b, batched).why.find("leading (untiled) dim"), std::string::npos);
  auto [pairs, start] = data(codegen::select(b, batched, {at(1)}));
  EXPECT_EQ(pairs, (Pairs{{512, 128}, {1, 256}}));
  EXPECT_EQ(start, 256);
}

TEST_F(TileGridTest, ShapeAndIndexRules) {
  const types::TensorVal x = hbm({300, 700});
  auto code_of = [&](auto f) { return test_util::diagnostic_of(f); };
  sema::Diagnostic d = code_of([&] { codegen::grid_of(b, x, {128}, {}); });
  EXPECT_EQ(d.code, "err_grid_shape_invalid");
  EXPECT_EQ(d.kind, sema::ErrorKind::Value);
  EXPECT_EQ(code_of([&] { codegen::grid_of(b, x, {1, 128, 256}, {}); }).code, "err_grid_shape_invalid");
  EXPECT_EQ(code_of([&] { codegen::grid_of(b, x, {128, -1}, {}); }).code, "err_grid_shape_invalid");
  EXPECT_EQ(code_of([&] { codegen::grid_of(b, x, {128, 256}, {2}); }).code, "err_grid_shape_invalid");
  EXPECT_EQ(code_of([&] { alloc({256, 256}, {256, 256}); }).code, "err_grid_shape_invalid");
  d = code_of([&] {
    codegen::alloc_grid(b, {128, 256}, {}, {128, 256}, ir::Memory::SharedHBM, ir::DType::float32, "h");
  });
  EXPECT_EQ(d.code, "err_grid_buffer_unsupported");
  const TileGrid g = codegen::grid_of(b, x, {128, 256}, {});
  d = code_of([&] { codegen::select(b, g, {at(-4)}); });
  EXPECT_EQ(d.code, "err_grid_index");
  EXPECT_EQ(d.kind, sema::ErrorKind::Index);
  EXPECT_EQ(d.message, "index -4 is out of range for grid dim 0 of size 3");
  EXPECT_EQ(code_of([&] { codegen::select(b, g, {at(0), at(0), at(0)}); }).message,
            "too many indices: the grid has 2 dims, got 3");
  EXPECT_EQ(code_of([&] { codegen::select(b, g, {range(0, 3, 2)}); }).code, "err_grid_index");
  EXPECT_EQ(code_of([&] { codegen::select(b, g, {range(2, 2)}); }).code, "err_grid_index");
}

}  // namespace
}  // namespace nkic
