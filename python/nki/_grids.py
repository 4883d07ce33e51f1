"""NKI 0.7's tile grids: nl.tiles, nl.blocks, nl.alloc_tiles, nl.alloc_blocks and the grid
classes, a thin surface over the core's grid (codegen/TileGrid), which holds every rule."""
from nkic._core import core
from nkic import _dtypes
from ._api import api as _api
from . import language as _nl


class NkiGrid:
    """A static selection of a tensor's elements grouped in tiles (NkiTileGrid) or in blocks of
    tiles (NkiBlockGrid). Made by nl.tiles, nl.blocks, nl.alloc_tiles and nl.alloc_blocks;
    indexing with ints and step-1 slices gives the same kind of grid; `.data` is the
    selection as one tensor view, usable as any nisa operand."""
    __slots__ = ("_grid",)

    def __init__(self, *args, **kwargs):
        core.raise_unsupported_args(type(self).__name__, "is made by nl.tiles, nl.blocks, nl.alloc_tiles or "
                                    "nl.alloc_blocks, not constructed")

    shape = property(lambda self: self._grid.shape, doc="grid coordinates per grid dim (tiles, or blocks)")
    tile_shape = property(lambda self: self._grid.tile_shape, doc="nominal elements per tile")
    block_shape = property(lambda self: self._grid.block_shape, doc="tiles per block (None for a tile grid)")
    element_shape = property(lambda self: self._grid.element_shape,
                             doc="elements the selection covers, per source dim (clamped at the boundary)")
    index_step_elements = property(lambda self: self._grid.index_step_elements,
                                   doc="source elements per grid-coordinate step, per grid dim")
    is_remainder = property(lambda self: self._grid.is_remainder,
                            doc="whether the selection holds a tile or block clamped at the boundary")
    is_data_representable = property(lambda self: self._grid.is_data_representable,
                                     doc="whether .data can express the selection as one access pattern")
    data = property(lambda self: core.grid_data(self._grid), doc="the selection as one tensor view")
    dtype = property(lambda self: self._grid.storage.dtype, doc="the dtype of the backing tensor")
    buffer = property(lambda self: self._grid.storage.buffer, doc="the buffer of the backing tensor")

    def __getitem__(self, key):
        return _wrap(core.grid_select(self._grid, key))

    def __repr__(self):
        return f"<{type(self).__name__} shape={self.shape} tile_shape={self.tile_shape}>"


class NkiTileGrid(NkiGrid):
    """A grid of tiles: its coordinates step over one tile of each tiled dim."""
    __slots__ = ()


class NkiBlockGrid(NkiGrid):
    """A grid of blocks of block_shape tiles; nl.tiles(block_selection) reaches its tiles."""
    __slots__ = ()


for _cls in (NkiGrid, NkiTileGrid, NkiBlockGrid):
    _cls.__module__ = "nki.language"  # their public home (nl.NkiTileGrid), in reprs and the type stubs


def _wrap(grid):
    out = object.__new__(NkiBlockGrid if grid.blocked else NkiTileGrid)
    out._grid = grid
    return out


_GRIDS = "the tile grids (nl.tiles, nl.blocks, nl.alloc_tiles, nl.alloc_blocks)"  # NKI 0.7+


def _core_of(source):
    core.check_versioned_form(_GRIDS)
    return source._grid if isinstance(source, NkiGrid) else source


@_api("nl.tiles")
def tiles(source, *, tile_shape=None):
    """`source` (a tensor or a grid) as a grid of tile_shape tiles over its trailing dims (a
    grid keeps its own tile_shape by default). A view: nothing is moved or allocated."""
    return _wrap(core.grid_of("nl.tiles", _core_of(source), tile_shape, None))


@_api("nl.blocks")
def blocks(source, *, tile_shape=None, block_shape):
    """`source` as a grid of blocks of block_shape tiles (counted per tiled dim). A view."""
    return _wrap(core.grid_of("nl.blocks", _core_of(source), tile_shape, block_shape))


def _alloc(api, tile_shape, block_shape, element_shape, buffer, dtype, address, name):
    core.check_versioned_form(_GRIDS)
    grid = core.grid_alloc(api, tile_shape, block_shape, element_shape, buffer, _dtypes.dtype_name(dtype), name or "")
    _nl._place(grid.storage, address, api)
    return _wrap(grid)


@_api("nl.alloc_tiles")
def alloc_tiles(*, tile_shape, element_shape, buffer, dtype, address=None, name=""):
    """One uninitialised on-chip allocation holding element_shape elements as a grid of
    tile_shape tiles: each tile a full-size slot, packed along the free dim."""
    return _alloc("nl.alloc_tiles", tile_shape, None, element_shape, buffer, dtype, address, name)


@_api("nl.alloc_blocks")
def alloc_blocks(*, tile_shape, block_shape, element_shape, buffer, dtype, address=None, name=""):
    """alloc_tiles's one allocation, seen as a grid of blocks of block_shape tiles."""
    return _alloc("nl.alloc_blocks", tile_shape, block_shape, element_shape, buffer, dtype, address, name)
