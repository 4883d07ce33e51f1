"""nl.* math: elementwise operators, comparisons, reductions, matmul and the
composite APIs (softmax, rms_norm, mean, var), all built on the core's op builders."""

from ._core import core
from . import _dtypes
from ._dtypes import bool_
from ._ops import nki_api as _api, op_name as _op_name

def _elementwise(op, *operands, mask=None, dtype=None):
    return core.elementwise(op, operands, mask, None if dtype is None else _dtypes.dtype_name(dtype))


def _unary(name, op=None):
    def fn(x, *, dtype=None, mask=None, **kwargs):
        return _elementwise(op or name, x, mask=mask, dtype=dtype)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"nl.{name}(x): the ALU op {op or name} of each element of x, as a new tile (in `dtype` "
                  f"when given); x may be a number.")
    fn.nki_func = "nl." + name
    fn.nki_native = "elementwise:" + (op or name)  # the dispatcher runs fn's plain calls in the core
    return fn


def _binary(name, op=None):
    def fn(x, y, *, dtype=None, mask=None, **kwargs):
        return _elementwise(op or name, x, y, mask=mask, dtype=dtype)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"nl.{name}(x, y): the ALU op {op or name} of x and y element by element, as a new tile (in "
                  f"`dtype` when given); either may be a number.")
    fn.nki_func = "nl." + name
    fn.nki_native = "elementwise:" + (op or name)  # the dispatcher runs fn's plain calls in the core
    return fn


# One nl function per ALU op of the core's table (ir/AluOp.h): the one-operand activations and
# bit inversion, the two-operand arithmetic and bitvec ops (mod and fmod, which take dtype
# positionally, below), and the comparisons and logical ops (_comparison).
_ALU_OPS = core.alu_ops()
_UNARY = [n for n, arity, kind in _ALU_OPS if arity == 1 and kind in ("Activation", "Bitvec")]
_BINARY = [n for n, arity, kind in _ALU_OPS if arity == 2 and kind in ("Arith", "Bitvec") and n not in ("mod", "fmod")]
COMPARISONS = [n for n, arity, kind in _ALU_OPS if arity == 2 and kind in ("Compare", "Logical")]
for _n in _UNARY:
    globals()[_n] = _unary(_n)
for _n in _BINARY:
    globals()[_n] = _binary(_n)
copy = _unary("copy", "bypass")


@_api("nl.mod")
def mod(x, y, dtype=None, mask=None, **kwargs):
    """x mod y element by element (the result takes y's sign), as a new tile."""
    return _elementwise("mod", x, y, mask=mask, dtype=dtype)


@_api("nl.fmod")
def fmod(x, y, dtype=None, mask=None, **kwargs):
    """x fmod y element by element (the result takes x's sign), as a new tile."""
    return _elementwise("fmod", x, y, mask=mask, dtype=dtype)


def _dtype_arg(dtype):
    return None if dtype is None else _dtypes.dtype_name(dtype)


def _axes(axis):
    return [core.int_arg(a, "axis") for a in axis] if isinstance(axis, (tuple, list)) else [core.int_arg(axis, "axis")]


def _reduction(name, op):
    def fn(x, axis, *, dtype=None, mask=None, keepdims=False, **kwargs):
        return core.reduce(None, "nl." + name, op, x, _axes(axis), keepdims, False, mask, _dtype_arg(dtype))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"nl.{name}(x, axis): x reduced with {op} along the free axis or axes `axis`, as a new tile "
                  f"(keepdims keeps them as size 1).")
    fn.nki_func = "nl." + name
    return fn


sum = _reduction("sum", "add")  # noqa: A001
max = _reduction("max", "maximum")  # noqa: A001
min = _reduction("min", "minimum")  # noqa: A001
prod = _reduction("prod", "multiply")


@_api("nl.all")
def all(x, axis, *, dtype=bool_, mask=None, **kwargs):  # noqa: A001
    """Whether every element along the free axis or axes `axis` is nonzero, as a new tile."""
    return core.reduce(None, "nl.all", "logical_and", x, _axes(axis), False, False, mask, _dtype_arg(dtype))


@_api("nl.mean")
def mean(x, axis, *, dtype=None, mask=None, keepdims=False, **kwargs):
    """The mean of x along the free axis or axes `axis`, as a new tile."""
    return core.mean(x, _axes(axis), bool(keepdims), mask, _dtype_arg(dtype))


@_api("nl.var")
def var(x, axis, *, dtype=None, mask=None, **kwargs):
    """The (population) variance of x along the free axis or axes `axis`, as a new tile."""
    return core.var(x, _axes(axis), mask, _dtype_arg(dtype))


@_api("nl.softmax")
def softmax(x, axis, *, dtype=None, compute_dtype=None, mask=None, **kwargs):
    """The softmax of x along the free axis `axis`, as a new tile."""
    return core.softmax(x, _axes(axis), _dtype_arg(compute_dtype), mask, _dtype_arg(dtype))


@_api("nl.rms_norm")
def rms_norm(x, w, axis, n, epsilon=1e-06, *, dtype=None, compute_dtype=None, mask=None, **kwargs):
    """x / sqrt(mean(x**2 over `axis`, of n elements) + epsilon) * w, as a new tile."""
    return core.rms_norm(x, w, _axes(axis), float(n), float(epsilon), _dtype_arg(compute_dtype), mask,
                         _dtype_arg(dtype))


@_api("nl.matmul")
def matmul(x, y, *, transpose_x=False, mask=None, **kwargs):
    """x @ y on the Tensor Engine (x.T @ y with transpose_x=True), as a new tile."""
    return core.matmul(x, y, bool(transpose_x), mask)


@_api("nl.transpose")
def transpose(x, *, dtype=None, mask=None, **kwargs):
    """x with its partition and free dimension swapped, as a new tile."""
    return core.transpose("nl.transpose", x, mask, _dtype_arg(dtype))


@_api("nl.where")
def where(condition, x, y, *, dtype=None, mask=None, **kwargs):
    """x where condition is nonzero, else y, element by element, as a new tile."""
    return core.where(condition, x, y, mask, _dtype_arg(dtype))


def _comparison(name):
    def fn(x, y, *, dtype=bool_, mask=None, **kwargs):
        return _elementwise(name, x, y, mask=mask, dtype=dtype)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"nl.{name}(x, y): {name} of x and y element by element, 1 or 0 in a new tile of `dtype`."
    fn.nki_func = "nl." + name
    return fn


for _n in COMPARISONS:
    globals()[_n] = _comparison(_n)


@_api("nl.logical_not")
def logical_not(x, *, dtype=bool_, mask=None, **kwargs):
    """1 where x is zero, else 0, as a new tile."""
    return _elementwise("logical_not", x, mask=mask, dtype=dtype)


class _LoopReduce:
    """What nl.loop_reduce returns: assigned into a destination, it folds x into
    it across the iterations of the loops (the first iteration of their nest writes x)."""
    __slots__ = ("x", "op", "loop_vars", "mask", "dtype")

    def __init__(self, x, op, loop_vars, mask, dtype):
        self.x, self.op, self.loop_vars, self.mask, self.dtype = x, op, loop_vars, mask, dtype

    def store_in(self, dst):
        x = self.x if self.dtype is None else core.elementwise("bypass", (self.x,), self.mask, _dtype_arg(self.dtype))
        # A one-iteration loop has no axis: its index is a plain int, always in its first iteration.
        loop_vars = [v for v in self.loop_vars if not isinstance(v, int)]
        if not loop_vars:
            dst[...] = x
            return
        core.loop_reduce(dst, x, self.op, loop_vars, self.mask)


@_api("nl.loop_reduce")
def loop_reduce(x, op, loop_indices, *, dtype=None, mask=None, **kwargs):
    indices = loop_indices if isinstance(loop_indices, (tuple, list)) else (loop_indices,)
    return _LoopReduce(x, _op_name(op), list(indices), mask, dtype)
