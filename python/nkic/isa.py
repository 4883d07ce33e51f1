"""nki.isa (nisa): the instruction-level surface."""
import enum

from ._core import core
from .language import _api


class nc_version(enum.IntEnum):
    gen2 = 2
    gen3 = 3
    gen4 = 4


class engine(enum.IntEnum):
    unknown = 0
    tensor = 1
    scalar = 2
    gpsimd = 3
    vector = 5
    sync = 6


unknown_engine, tensor_engine, scalar_engine = engine.unknown, engine.tensor, engine.scalar
gpsimd_engine, vector_engine, dma_engine = engine.gpsimd, engine.vector, engine.sync


@_api("nisa.get_nc_version")
def get_nc_version():
    return nc_version(core.nc_version())
