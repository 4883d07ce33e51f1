// Tile grids of NKI 0.7 (nl.tiles, nl.blocks, nl.alloc_tiles, nl.alloc_blocks): the
// elements of a tensor seen as a grid of tiles, or of blocks of tiles, and static
// selections of that grid. A grid emits nothing; its `.data` is one access pattern over
// the selected elements (ap_view), usable as any instruction's operand.
//
// Geometry (NKI_07_08_API.md §4.3). tile_shape (two dims or more) applies to the trailing
// dims of the source; the leading dims stay untiled, one element per grid step. Along a
// tiled dim the grid has ceil(extent / step) coordinates, the last clamped to the extent.
// An integer index takes a coordinate away: on a tiled dim until the selection is
// regrouped (nl.tiles(sel) restores it), on a leading dim for good (the slab is chosen).
//
// Where the elements live. nl.tiles/nl.blocks of a tensor view address the view's own
// elements (HBM: a strided view of the row-major tensor; on chip: the tensor's layout).
// An allocation packs its tiles into one (P, slots * prod(F)) tensor for a tile (P, F...):
// one full-size slot per tile of the grid, remainder tiles included, in row-major grid
// order along the free dim. Blocks do not change that order.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "codegen/KernelBuilder.h"
#include "types/Values.h"

namespace nkic::codegen {

struct TileGrid {
  types::TensorVal storage;       // the view (or, packed, the allocation) the elements live in
  std::vector<int64_t> extent;    // the source's element shape
  std::vector<int64_t> slot;      // packed: the allocation's tile shape; empty: `storage` has shape `extent`
  // The selection, per source dim: its first element and element count; `dropped`: a leading
  // dim an integer chose one slab of; `fixed`: a tiled dim an integer chose one tile (or block) of.
  std::vector<int64_t> origin, count;
  std::vector<bool> dropped, fixed;
  std::vector<int64_t> tile_shape, block_shape;  // block_shape empty: a tile grid
  bool blocked() const { return !block_shape.empty(); }
};

// nl.tiles (block_shape empty) / nl.blocks of a tensor view.
TileGrid grid_of(KernelBuilder& b, const types::TensorVal& source, const std::vector<int64_t>& tile_shape,
                 const std::vector<int64_t>& block_shape);
// nl.tiles / nl.blocks of a grid: its selection regrouped; an empty tile_shape keeps the grid's.
TileGrid regroup(KernelBuilder& b, const TileGrid& g, std::vector<int64_t> tile_shape,
                 const std::vector<int64_t>& block_shape);
// nl.alloc_tiles / nl.alloc_blocks: one uninitialised allocation in `memory` (SBUF or PSUM)
// of `dtype` (as stored), packed as above.
TileGrid alloc_grid(KernelBuilder& b, const std::vector<int64_t>& tile_shape, const std::vector<int64_t>& block_shape,
                    const std::vector<int64_t>& element_shape, ir::Memory memory, ir::DType dtype,
                    const std::string& name);

// One item of grid[key]: an integer, or a slice (Python's bounds, step 1 only).
struct GridKey {
  bool is_slice = false;
  int64_t index = 0;
  std::optional<int64_t> start, stop, step;
};
TileGrid select(KernelBuilder& b, const TileGrid& g, const std::vector<GridKey>& key);

// The attributes: grid coordinates and source elements per coordinate step, per grid dim;
// the selected elements per source dim; whether the selection is clamped at the boundary.
std::vector<int64_t> grid_shape(const TileGrid& g);
std::vector<int64_t> index_step_elements(const TileGrid& g);
bool is_remainder(const TileGrid& g);
// Why `.data` cannot describe the selection as one access pattern, and how to select
// instead; both empty when it can.
struct DataObstacle {
  std::string why, fix;
};
DataObstacle data_obstacle(const KernelBuilder& b, const TileGrid& g);
// `.data`: the selection as one view, of the element shape without the dropped dims;
// err_grid_data_not_representable when it cannot be one.
types::TensorVal grid_data(KernelBuilder& b, const TileGrid& g);

}  // namespace nkic::codegen
