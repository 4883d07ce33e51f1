"""Device scalars of nki 0.7/0.8 (NKI_07_08_API.md §2): an NkiScalar is one int32 or int64
computed on the device, kept in a [1, 1] SBUF tile that stands for its sequencer register
(codegen/Scalars.h). Its operators and nisa.scalar_alu each trace one scalar_alu
instruction; the rules (widths, wrap-around, what int64 lacks) are the core's."""
from nkic._core import core
from nkic._ops import op_name
from ._api import api as _api

_COMPARISONS = frozenset(("equal", "not_equal", "less", "less_equal", "greater", "greater_equal"))


class NkiScalar:
    """One integer computed on the device: from nisa.scalar_load, scalar arithmetic,
    nisa.scalar_alu or an nl.fori_loop index. Its width (`dtype`, nl.int32 or nl.int64) is
    fixed; int32 arithmetic wraps. Comparisons give an int32 scalar holding 1 or 0."""
    __slots__ = ("tile",)
    __array_ufunc__ = None  # numpy defers to the reflected operators (np.int32(2) * s)

    def __init__(self, tile):
        self.tile = tile

    @property
    def dtype(self):
        from . import language as nl
        return getattr(nl, core.tensor_info(self.tile)[1])

    def __repr__(self):
        return f"<NkiScalar {self.dtype}>"

    def __bool__(self):
        core.raise_scalar_condition()

    def __index__(self):
        core.raise_scalar_operator("int()")

    __int__ = __index__

    def nki_open_while(self):
        """`while scalar:` is a Python loop on a device value."""
        core.raise_scalar_condition()

    def __floordiv__(self, other):
        core.raise_scalar_operator("//")

    def __mod__(self, other):
        core.raise_scalar_operator("%")

    def __truediv__(self, other):
        core.raise_scalar_operator("/")

    __rfloordiv__, __rmod__, __rtruediv__ = __floordiv__, __mod__, __truediv__

    def __neg__(self):
        return _alu(0, self, "subtract")

    __hash__ = object.__hash__


def _operator(op, reflected):
    if reflected:
        return lambda self, other: _alu(other, self, op)
    return lambda self, other: _alu(self, other, op)


# The Python operators a scalar takes, each one scalar_alu op: arithmetic both ways round, the
# comparisons (an int32 0/1 scalar) as written.
for _name, _op in (("add", "add"), ("sub", "subtract"), ("mul", "multiply")):
    setattr(NkiScalar, f"__{_name}__", _operator(_op, False))
    setattr(NkiScalar, f"__r{_name}__", _operator(_op, True))
for _name, _op in (("lt", "less"), ("le", "less_equal"), ("gt", "greater"), ("ge", "greater_equal"),
                   ("eq", "equal"), ("ne", "not_equal")):
    setattr(NkiScalar, f"__{_name}__", _operator(_op, False))
del _name, _op

def _operand(x):
    if isinstance(x, core.NkiTensor):  # a tensor's element is a scalar only through scalar_load
        core.raise_unexpected_operand("scalar operand", "a tensor, expected an NkiScalar or an int (read a (1, 1) "
                                      "tensor with nisa.scalar_load)")
    return x.tile if isinstance(x, NkiScalar) else x


def _alu(a, b, op):
    r = core.scalar_alu(_operand(a), _operand(b), op)
    if isinstance(r, int):  # two ints: evaluated when traced
        return bool(r) if op in _COMPARISONS else r
    return NkiScalar(r)


@_api("nisa.scalar_load")
def scalar_load(src, name=None):
    """The one int32/int64 element of the (1, 1) SBUF or HBM tensor src, as an NkiScalar.
    New in nki 0.7."""
    core.check_versioned_form("nisa.scalar_load")
    return NkiScalar(core.scalar_load(src))


@_api("nisa.scalar_store")
def scalar_store(dst, value, name=None):
    """dst, a (1, 1) SBUF or HBM tensor of the scalar's width, = value (an NkiScalar).
    New in nki 0.7."""
    core.check_versioned_form("nisa.scalar_store")
    core.scalar_store(dst, _operand(value))


@_api("nisa.scalar_alu")
def scalar_alu(data1, data2, op, name=None):
    """data1 op data2, each an NkiScalar or an int: an NkiScalar, or when both are ints the
    value itself, computed when traced (a bool for a comparison). op: nl.add, nl.subtract,
    nl.multiply, nl.divide, nl.fmod, nl.maximum, nl.minimum or a comparison. New in nki 0.8."""
    core.check_versioned_form("nisa.scalar_alu")
    return _alu(data1, data2, op_name(op, "op"))
