"""nki 0.2's builtin buffer names: a kernel allocates with `sbuf.view(dtype=, shape=)` (and
`psum`, `hbm`) without importing them, as the 0.2 compiler provided them. nki 0.3 replaced
them with nl.ndarray(shape, dtype, buffer=); the served version decides (NkiVersion.h)."""
from nkic._core import core
from ._api import api as _api
from . import language as nl


class BuiltinBuffer:
    """`sbuf`, `psum` or `hbm` of a 0.2 kernel."""
    __slots__ = ("name", "buffer")

    def __init__(self, name, buffer):
        self.name, self.buffer = name, buffer

    def __repr__(self):
        return self.name

    @_api("sbuf.view")
    def view(self, dtype, shape):
        """A new tensor of `shape` and `dtype` in this buffer."""
        core.check_versioned_form("the builtin buffer's .view(dtype=, shape=)")
        return nl.ndarray(shape, dtype, buffer=self.buffer)


# A 0.2 kernel's HBM tensors may be its outputs: shared HBM.
_NAMES = {b.name: b for b in (BuiltinBuffer("sbuf", nl.sbuf), BuiltinBuffer("psum", nl.psum),
                              BuiltinBuffer("hbm", nl.shared_hbm))}


def provide(func):
    """Makes the builtin names resolve in `func`'s module, unless it defines them itself."""
    scope = getattr(func, "__globals__", None)
    if isinstance(scope, dict):
        for name, buffer in _NAMES.items():
            scope.setdefault(name, buffer)
