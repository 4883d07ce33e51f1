"""Loop iterators (seed 003): static_range unrolls at trace time; affine_range
and sequential_range defer to one loop axis whose body is traced once; a
builtin range() becomes sequential_range unless the kernel asks to unroll it."""
import operator

from ._core import core


def normalize_range_args(*args):
    """range-like arguments -> (lb, ub, stride, tripcount)."""
    if not 1 <= len(args) <= 3:
        raise TypeError(f"expected 1 to 3 range arguments, got {len(args)}")
    try:
        vals = [operator.index(a) for a in args]
    except TypeError:
        raise TypeError("loop bounds must be Python integers known at trace time") from None
    if len(vals) == 1:
        lb, ub, stride = 0, vals[0], 1
    elif len(vals) == 2:
        lb, ub, stride = vals[0], vals[1], 1
    else:
        lb, ub, stride = vals
    if stride == 0:
        raise ValueError("range() arg 3 must not be zero")
    return lb, ub, stride, len(range(lb, ub, stride))


def _deferred(lb, ub, stride, tripcount, sequential, name):
    if tripcount == 0:
        return
    if tripcount == 1:  # the trivial loop: no axis, the variable is just lb
        yield lb
        return
    var = core.open_loop(name, lb, ub, stride, sequential)
    try:
        yield var
    finally:
        core.close_loop()


class _DeferredRange:
    """What nl.affine_range / nl.sequential_range return: one loop axis."""
    __slots__ = ("bounds", "sequential")

    def __init__(self, args, sequential):
        self.bounds = normalize_range_args(*args)
        self.sequential = sequential

    def iterate(self, name):
        return _deferred(*self.bounds, self.sequential, name)

    def __iter__(self):
        return self.iterate("")


class _StaticRange:
    """What nl.static_range returns: concrete ints, body replayed per iteration."""
    __slots__ = ("range",)

    def __init__(self, args):
        lb, ub, stride, _ = normalize_range_args(*args)
        self.range = range(lb, ub, stride)

    def __iter__(self):
        return iter(self.range)

    def __len__(self):
        return len(self.range)


def affine_range(*args, **kwargs):
    return _DeferredRange(args, sequential=False)


def sequential_range(*args, **kwargs):
    return _DeferredRange(args, sequential=True)


def static_range(*args):
    return _StaticRange(args)


def for_hook(iterable, name):
    """Where the AST pre-pass sends every `for` loop of traced code."""
    if isinstance(iterable, _DeferredRange):
        return iterable.iterate(name)
    if type(iterable) is range and core.trace_active():
        if core.unroll_builtin_range():
            return iterable
        return _deferred(iterable.start, iterable.stop, iterable.step, len(iterable), True, name)
    return iterable
