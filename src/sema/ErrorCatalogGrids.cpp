// The err_* builders of NKI 0.7's tile grids (nl.tiles, nl.blocks, nl.alloc_tiles,
// nl.alloc_blocks; codegen/TileGrid.h). The documented exception types are kept:
// TypeError for a wrong argument type, ValueError for a broken shape rule.
#include "sema/CatalogMake.h"
#include "sema/ErrorCatalog.h"

namespace nkic::sema {

using catalog::make;
using catalog::s;

Diagnostic err_grid_shape_not_ints(std::string_view api, std::string_view what, std::string_view got) {
  return make("err_grid_shape_not_ints",
              "'" + s(api) + "' takes " + s(what) + " as a tuple of Python ints, got " + s(got), ErrorKind::Type,
              "write the shape as a tuple of plain ints, e.g. (128, 512)");
}

Diagnostic err_grid_shape_invalid(std::string_view api, std::string_view why) {
  return make("err_grid_shape_invalid", "'" + s(api) + "': " + s(why), ErrorKind::Value);
}

Diagnostic err_grid_buffer_not_memory_region(std::string_view api, std::string_view got) {
  return make("err_grid_buffer_not_memory_region",
              "'" + s(api) + "' takes buffer= as an nl buffer (nl.sbuf, nl.psum), got " + s(got), ErrorKind::Type,
              "pass buffer=nl.sbuf or buffer=nl.psum, not a string");
}

Diagnostic err_grid_buffer_unsupported(std::string_view api, std::string_view buffer) {
  return make("err_grid_buffer_unsupported",
              "'" + s(api) + "' allocates on chip (nl.sbuf or nl.psum), not in '" + s(buffer) + "'", ErrorKind::Value,
              "for an HBM tensor, make it with nl.ndarray and view it as a grid with nl.tiles or nl.blocks");
}

Diagnostic err_grid_source(std::string_view api, std::string_view got) {
  return make("err_grid_source",
              "'" + s(api) + "' takes a tensor, an NkiTileGrid or an NkiBlockGrid as its source, got " + s(got),
              ErrorKind::Type);
}

Diagnostic err_grid_index(std::string_view why) { return make("err_grid_index", s(why), ErrorKind::Index); }

Diagnostic err_grid_data_not_representable(std::string_view why, std::string_view fix) {
  return make("err_grid_data_not_representable",
              "the grid selection is not one access pattern, so it has no .data: " + s(why), ErrorKind::Value, s(fix));
}

}  // namespace nkic::sema
