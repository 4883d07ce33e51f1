#include "codegen/TileGrid.h"

#include <algorithm>

#include "codegen/AccessPattern.h"
#include "codegen/Ops.h"
#include "codegen/ViewMethods.h"
#include "sema/ErrorCatalog.h"

namespace nkic::codegen {

namespace {

std::string tuple_str(const std::vector<int64_t>& v) {
  std::string out = "(";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + std::to_string(v[i]);
  return out + (v.size() == 1 ? ",)" : ")");
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

std::string dims(size_t n) { return std::to_string(n) + (n == 1 ? " dim" : " dims"); }

size_t live_rank(const TileGrid& g) {
  size_t n = 0;
  for (bool d : g.dropped) n += !d;
  return n;
}

// Per source dim, the elements one grid coordinate steps over (0: a dropped dim), and whether
// the dim is tiled (one of the trailing dims tile_shape applies to).
struct Steps {
  std::vector<int64_t> step;
  std::vector<bool> tiled;
};

Steps steps_of(const TileGrid& g) {
  Steps s{std::vector<int64_t>(g.extent.size(), 0), std::vector<bool>(g.extent.size(), false)};
  size_t k = g.tile_shape.size();
  for (size_t d = g.extent.size(); d-- > 0;) {
    if (g.dropped[d]) continue;
    if (k == 0) {
      s.step[d] = 1;
      continue;
    }
    --k;
    s.step[d] = g.tile_shape[k] * (g.blocked() ? g.block_shape[k] : 1);
    s.tiled[d] = true;
  }
  return s;
}

void check_positive(KernelBuilder& b, const std::string& api, const char* what, const std::vector<int64_t>& shape) {
  for (int64_t v : shape)
    if (v <= 0)
      b.fail(sema::err_grid_shape_invalid(api, std::string(what) + " entries are positive, got " + tuple_str(shape)));
}

// The tile and block shapes of a grid over `rank` (not dropped) source dims.
void check_grouping(KernelBuilder& b, const std::string& api, const std::vector<int64_t>& tile,
                    const std::vector<int64_t>& block, size_t rank) {
  if (tile.size() < 2)
    b.fail(sema::err_grid_shape_invalid(api, "tile_shape " + tuple_str(tile) +
                                                 " has fewer than 2 dims: a tile has a partition dim and free dims"));
  if (tile.size() > rank)
    b.fail(sema::err_grid_shape_invalid(api, "tile_shape " + tuple_str(tile) + " has " + dims(tile.size()) +
                                                 ", more than the " + dims(rank) + " of the source"));
  check_positive(b, api, "tile_shape", tile);
  if (block.empty()) return;
  if (block.size() != tile.size())
    b.fail(sema::err_grid_shape_invalid(api, "block_shape " + tuple_str(block) + " has " +
                                                 dims(block.size()) + "; it counts tiles along each of the " +
                                                 dims(tile.size()) + " of tile_shape"));
  check_positive(b, api, "block_shape", block);
  for (size_t k = 0; k < tile.size(); ++k)
    if (tile[k] > (int64_t{1} << 62) / block[k])
      b.fail(sema::err_grid_shape_invalid(api, "blocks of " + tuple_str(block) + " tiles of " + tuple_str(tile) +
                                                   " are too large"));
}

// On chip a view's dim 0 is its partition dim, which a tile must cover (not a leading dim).
void check_on_chip_rank(KernelBuilder& b, const std::string& api, const TileGrid& g) {
  if (!g.slot.empty() || ir::is_hbm(b.tensor(g.storage.tensor).memory) || g.tile_shape.size() == live_rank(g)) return;
  b.fail(sema::err_grid_shape_invalid(api, "tile_shape " + tuple_str(g.tile_shape) + " covers " +
                                               std::to_string(g.tile_shape.size()) + " of the " + dims(live_rank(g)) +
                                               " of an on-chip source; on chip a tile covers every dim (dim 0 is the "
                                               "partition dim)"));
}

}  // namespace

TileGrid grid_of(KernelBuilder& b, const types::TensorVal& source, const std::vector<int64_t>& tile_shape,
                 const std::vector<int64_t>& block_shape) {
  const std::string api = b.api();
  b.check_live(source);
  if (tile_shape.empty())
    b.fail(sema::err_grid_shape_invalid(api, "a tensor source needs tile_shape= (only a grid source has its own)"));
  view_pattern(b, source, api);  // a strided view: an indirect one has no static elements
  check_grouping(b, api, tile_shape, block_shape, source.shape.size());
  TileGrid g;
  g.storage = source;
  g.extent = g.count = source.shape;
  g.origin.assign(g.extent.size(), 0);
  g.dropped.assign(g.extent.size(), false);
  g.fixed = g.dropped;
  g.tile_shape = tile_shape;
  g.block_shape = block_shape;
  check_on_chip_rank(b, api, g);
  return g;
}

TileGrid regroup(KernelBuilder& b, const TileGrid& g, std::vector<int64_t> tile_shape,
                 const std::vector<int64_t>& block_shape) {
  const std::string api = b.api();
  b.check_live(g.storage);
  if (tile_shape.empty()) tile_shape = g.tile_shape;
  check_grouping(b, api, tile_shape, block_shape, live_rank(g));
  TileGrid out = g;
  out.fixed.assign(g.extent.size(), false);
  out.tile_shape = std::move(tile_shape);
  out.block_shape = block_shape;
  check_on_chip_rank(b, api, out);
  return out;
}

TileGrid alloc_grid(KernelBuilder& b, const std::vector<int64_t>& tile_shape, const std::vector<int64_t>& block_shape,
                    const std::vector<int64_t>& element_shape, ir::Memory memory, ir::DType dtype,
                    const std::string& name) {
  const std::string api = b.api();
  if (memory != ir::Memory::SBUF && memory != ir::Memory::PSUM)
    b.fail(sema::err_grid_buffer_unsupported(api, ir::name(memory)));
  check_positive(b, api, "element_shape", element_shape);
  check_grouping(b, api, tile_shape, block_shape, element_shape.size());
  const int64_t partitions = memory == ir::Memory::PSUM ? b.target().psum_num_partitions
                                                        : b.target().statebuf_num_partitions;
  if (tile_shape[0] > partitions)
    b.fail(sema::err_grid_shape_invalid(api, "tile_shape " + tuple_str(tile_shape) + " spans " +
                                                 std::to_string(tile_shape[0]) + " partitions; " +
                                                 std::string(ir::name(memory)) + " has " + std::to_string(partitions)));
  // One full-size slot per tile of the grid, leading dims included (remainders are not shrunk).
  const size_t lead = element_shape.size() - tile_shape.size();
  double slots = 1, slot_elems = 1;
  for (size_t d = 0; d < element_shape.size(); ++d)
    slots *= d < lead ? element_shape[d] : ceil_div(element_shape[d], tile_shape[d - lead]);
  for (size_t k = 1; k < tile_shape.size(); ++k) slot_elems *= tile_shape[k];
  if (slots * slot_elems * tile_shape[0] > static_cast<double>(int64_t{1} << 48))
    b.fail(sema::err_grid_shape_invalid(api, "element_shape " + tuple_str(element_shape) +
                                                 " in tiles of " + tuple_str(tile_shape) + " is too large to allocate"));
  const auto free = static_cast<int64_t>(slots * slot_elems);
  TileGrid g;
  g.storage = alloc_tensor(b, b.tensor_name(name, "tiles"), {tile_shape[0], free}, dtype, memory);
  g.extent = g.count = element_shape;
  g.slot = tile_shape;
  g.origin.assign(g.extent.size(), 0);
  g.dropped.assign(g.extent.size(), false);
  g.fixed = g.dropped;
  g.tile_shape = tile_shape;
  g.block_shape = block_shape;
  return g;
}

TileGrid select(KernelBuilder& b, const TileGrid& g, const std::vector<GridKey>& key) {
  b.check_live(g.storage);
  const Steps s = steps_of(g);
  std::vector<size_t> grid_dims;  // as source dims
  for (size_t d = 0; d < g.extent.size(); ++d)
    if (!g.dropped[d] && !g.fixed[d]) grid_dims.push_back(d);
  if (key.size() > grid_dims.size())
    b.fail(sema::err_grid_index("too many indices: the grid has " + dims(grid_dims.size()) + ", got " +
                                std::to_string(key.size())));
  TileGrid out = g;
  for (size_t i = 0; i < key.size(); ++i) {
    const size_t d = grid_dims[i];
    const int64_t step = s.step[d], n = ceil_div(g.count[d], step);
    const GridKey& k = key[i];
    if (!k.is_slice) {
      const int64_t at = k.index < 0 ? k.index + n : k.index;
      if (at < 0 || at >= n)
        b.fail(sema::err_grid_index("index " + std::to_string(k.index) + " is out of range for grid dim " +
                                    std::to_string(i) + " of size " + std::to_string(n)));
      out.origin[d] += at * step;
      out.count[d] = std::min(step, g.count[d] - at * step);
      (s.tiled[d] ? out.fixed : out.dropped)[d] = true;
      continue;
    }
    if (k.step && *k.step != 1)
      b.fail(sema::err_grid_index("slice step " + std::to_string(*k.step) + " on grid dim " + std::to_string(i) +
                                  ": a grid selection takes consecutive coordinates (step 1)"));
    auto bound = [n](std::optional<int64_t> v, int64_t dflt) {
      if (!v) return dflt;
      return std::clamp(*v < 0 ? *v + n : *v, int64_t{0}, n);
    };
    const int64_t lo = bound(k.start, 0), hi = bound(k.stop, n);
    if (hi <= lo)
      b.fail(sema::err_grid_index("slice " + std::to_string(lo) + ":" + std::to_string(hi) +
                                  " selects no coordinate of grid dim " + std::to_string(i) + " (size " +
                                  std::to_string(n) + ")"));
    out.origin[d] += lo * step;
    out.count[d] = std::min(g.count[d] - lo * step, (hi - lo) * step);
  }
  return out;
}

std::vector<int64_t> grid_shape(const TileGrid& g) {
  const Steps s = steps_of(g);
  std::vector<int64_t> out;
  for (size_t d = 0; d < g.extent.size(); ++d)
    if (!g.dropped[d] && !g.fixed[d]) out.push_back(ceil_div(g.count[d], s.step[d]));
  return out;
}

std::vector<int64_t> index_step_elements(const TileGrid& g) {
  const Steps s = steps_of(g);
  std::vector<int64_t> out;
  for (size_t d = 0; d < g.extent.size(); ++d)
    if (!g.dropped[d] && !g.fixed[d]) out.push_back(s.step[d]);
  return out;
}

bool is_remainder(const TileGrid& g) {
  const Steps s = steps_of(g);
  for (size_t d = 0; d < g.extent.size(); ++d)
    if (s.tiled[d] && g.count[d] % s.step[d] != 0) return true;
  return false;
}

namespace {

// The access pattern of a packed selection over its allocation (P, free): [step, count]
// pairs, partition pair first, and the start element; or why there is none.
struct PackedPattern {
  std::vector<std::pair<int64_t, int64_t>> pairs;
  int64_t start = 0;
  DataObstacle obstacle;
};

PackedPattern packed_pattern(const KernelBuilder& b, const TileGrid& g) {
  PackedPattern p;
  const size_t rank = g.extent.size(), lead = rank - g.slot.size();
  const int64_t free = b.tensor(g.storage.tensor).shape.at(1);
  std::vector<int64_t> slots_after(rank, 1);  // slots one step of the dim skips, row-major
  for (size_t d = rank; d-- > 1;)
    slots_after[d - 1] = slots_after[d] * (d < lead ? g.extent[d] : ceil_div(g.extent[d], g.slot[d - lead]));
  int64_t slot_elems = 1;
  for (size_t k = 1; k < g.slot.size(); ++k) slot_elems *= g.slot[k];
  int64_t partition = 0, offset = 0;
  for (size_t d = 0; d < rank; ++d) {
    const int64_t o = g.origin[d], n = g.count[d];
    if (d < lead) {
      if (!g.dropped[d]) {
        p.obstacle = {"dim " + std::to_string(d) + " of the allocation is a leading (untiled) dim that is still "
                      "selected; on chip a tile's data has the tile's dims only",
                      "index the leading dims away with integers first (grid[b] or grid[b, ...])"};
        return p;
      }
      offset += o * slots_after[d] * slot_elems;
      continue;
    }
    const size_t k = d - lead;
    const int64_t size = g.slot[k], first = o / size, last = (o + n - 1) / size;
    int64_t elem_step = 1;  // elements of a slot one step of this dim skips
    for (size_t j = k + 1; j < g.slot.size(); ++j) elem_step *= g.slot[j];
    if (k == 0) {
      if (first != last) {
        p.obstacle = {"it spans tile rows " + std::to_string(first) + " to " + std::to_string(last) +
                          " of the partition dim, and on chip those rows lie side by side along the free dim of "
                          "the same partitions",
                      "select one row of tiles (grid[i, :]) and move each row on its own"};
        return p;
      }
      partition = o % size;
      offset += first * slots_after[d] * slot_elems;
      p.pairs.push_back({free, n});
      continue;
    }
    // Across tiles a free dim is one stride only where its slots follow each other: the
    // first free dim, when every later dim has one tile.
    if (first != last && !(k == 1 && slots_after[d] == 1)) {
      p.obstacle = {"its tiles along dim " + std::to_string(d) + " are not adjacent in the allocation (tiles are "
                        "packed along the free dim in row-major grid order)",
                    "select one tile along dim " + std::to_string(d) + " at a time"};
      return p;
    }
    offset += first * slots_after[d] * slot_elems + (o % size) * elem_step;
    p.pairs.push_back({elem_step, n});
  }
  p.start = partition * free + offset;
  return p;
}

}  // namespace

DataObstacle data_obstacle(const KernelBuilder& b, const TileGrid& g) {
  if (g.slot.empty()) return {};  // a strided view's selection is a strided view
  return packed_pattern(b, g).obstacle;
}

types::TensorVal grid_data(KernelBuilder& b, const TileGrid& g) {
  b.check_live(g.storage);
  if (!g.slot.empty()) {
    const PackedPattern p = packed_pattern(b, g);
    if (!p.obstacle.why.empty()) b.fail(sema::err_grid_data_not_representable(p.obstacle.why, p.obstacle.fix));
    return ap_view(b, g.storage, p.pairs, ir::AffineExpr(p.start));
  }
  const ViewPattern v = view_pattern(b, g.storage, b.api());
  std::vector<std::pair<int64_t, int64_t>> pairs;
  ir::AffineExpr start = v.offset;
  for (size_t d = 0; d < g.extent.size(); ++d) {
    start = start + v.pairs[d].first * g.origin[d];
    if (!g.dropped[d]) pairs.push_back({v.pairs[d].first, g.count[d]});
  }
  return ap_view(b, g.storage, pairs, start);
}

}  // namespace nkic::codegen
