"""The dtypes of the current API. NKI 0.3+ spells a dtype as its name (NKI_CURRENT_API.md
§7.6: `DType` is a string alias): str() of one is the name, and it equals the name, the same
dtype, and the numpy type that stores it; numpy reads it as that type (its `.dtype`)."""
import numpy as np

from nkic._core import core
from nkic import _dtypes


class DType:
    __slots__ = ("name", "nki_dtype_name")

    def __init__(self, name):
        self.name = name
        self.nki_dtype_name = name  # how nkic's dtype_name() and the core's nl.ndarray recognise it

    @property
    def dtype(self):
        return _dtypes.numpy_dtype(self.name)

    @property
    def itemsize(self):
        return self.dtype.itemsize

    def __str__(self):
        return self.name

    __repr__ = __str__

    def __eq__(self, other):
        if isinstance(other, (DType, str)):
            return self.name == str(other)
        if isinstance(other, (type, np.dtype, _dtypes._StoredDType)):
            try:
                return _dtypes.dtype_name(other) == self.name
            except core.NKIError:
                return False
        return NotImplemented

    def __hash__(self):
        return hash(self.name)

    def _order(self, other, compare):
        return compare(self.name, str(other)) if isinstance(other, (DType, str)) else NotImplemented

    # Ordered as the names they are (sorted() of a dtype list works as it does on strings).
    def __lt__(self, other):
        return self._order(other, str.__lt__)

    def __le__(self, other):
        return self._order(other, str.__le__)

    def __gt__(self, other):
        return self._order(other, str.__gt__)

    def __ge__(self, other):
        return self._order(other, str.__ge__)

    def __call__(self, value):
        """nl.float32(1.5): a numpy scalar of the type (as np.float32(1.5))."""
        return self.dtype.type(value)


NAMES = tuple(name for name, _ in core.dtypes())  # the core's dtype table (ir/DType.h)
BY_NAME = {n: DType(n) for n in NAMES}

_legacy_dtype = core.NkiTensor.dtype


def _tensor_dtype(t):
    """A tile's dtype: its name in a current-API kernel, the legacy numpy type otherwise."""
    if core.current_api():
        name = core.tensor_info(t)[1]
        if name in BY_NAME:
            return BY_NAME[name]
    return _legacy_dtype.fget(t)


core.NkiTensor.dtype = property(_tensor_dtype)
