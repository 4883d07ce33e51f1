"""Loop iterators (seed 003): static_range unrolls at trace time; affine_range
and sequential_range defer to one loop axis whose body is traced once; a
builtin range() becomes sequential_range unless the kernel asks to unroll it."""
import math
import os
import operator
import sys
import threading
import warnings

from ._core import core

# A static_range whose unrolled body emits more instructions than this warns.
UNROLL_WARNING_THRESHOLD = {"instructions": 10000}

# Ids (from the AST pre-pass) of the deferred loops being traced, innermost
# last; per thread, like the trace context itself.
_state = threading.local()


def _deferred_stack():
    stack = getattr(_state, "deferred", None)
    if stack is None:
        stack = _state.deferred = []
    return stack


def normalize_range_args(*args):
    """range-like arguments -> (lb, ub, stride, tripcount)."""
    vals = []
    for a in args:
        try:
            vals.append(core.int_arg(operator.index(a), "loop bound"))
        except core.NKIError:
            raise  # a symbolic index already says why it cannot be a Python int
        except TypeError:
            core.raise_invalid_range_args(f"loop bounds must be integers known at trace time, got {type(a).__name__}")
    return core.normalize_range_args(vals)


def _directives(kwargs):
    ds = kwargs.get("directives") or ()
    if not isinstance(ds, (list, tuple)):
        ds = (ds,)
    out = [(d.kind, d.value) for d in ds]
    if kwargs.get("precise_schedule"):
        out.append(("precise_schedule", "true"))
    return out


def _axis(lb, ub, stride, sequential, name, directives, loop_id):
    """One loop axis: the body between open and close is traced once. `ub` is an
    int, or a one-element tile read at run time (a DynamicAxis)."""
    var = core.open_loop(name, lb, ub, stride, sequential, directives)
    stack = _deferred_stack()
    stack.append(loop_id)
    try:
        yield var
    finally:
        stack.pop()
        core.close_loop()


def _deferred(lb, ub, stride, tripcount, sequential, name, directives, loop_id):
    if tripcount == 0:
        return ()
    if tripcount == 1:  # the trivial loop: no axis, the variable is just lb
        return (lb,)
    return _axis(lb, ub, stride, sequential, name, directives, loop_id)


class _DeferredRange:
    """What nl.affine_range / nl.sequential_range return: one loop axis. An upper
    bound held in a tile (read at run time) makes it a DynamicAxis."""
    __slots__ = ("bounds", "sequential", "directives", "runtime_ub")

    def __init__(self, args, kwargs, sequential):
        self.runtime_ub = None
        if args and isinstance(args[-1 if len(args) < 3 else 1], core.NkiTensor):
            ub_pos = 0 if len(args) == 1 else 1
            self.runtime_ub = args[ub_pos]
            lb = 0 if len(args) == 1 else operator.index(args[0])
            stride = operator.index(args[2]) if len(args) == 3 else 1
            self.bounds = (lb, None, stride, None)
        else:
            self.bounds = normalize_range_args(*args)
        self.sequential = sequential
        self.directives = _directives(kwargs)

    def iterate(self, name, loop_id=None):
        if self.runtime_ub is not None:
            lb, _, stride, _ = self.bounds
            return _axis(lb, self.runtime_ub, stride, self.sequential, name, self.directives, loop_id)
        return _deferred(*self.bounds, self.sequential, name, self.directives, loop_id)

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


def _trip_count(rng):
    """len(rng), which Python refuses for ranges longer than sys.maxsize."""
    try:
        return len(rng)
    except OverflowError:
        return sys.maxsize


def _unrolled(rng):
    """Iterates a static_range, warning at the loop when the unroll grows large."""
    core.check_unroll(_trip_count(rng))
    file, line, _ = core.user_location()
    start = core.num_instructions()
    yield from rng
    emitted = core.num_instructions() - start
    limit = UNROLL_WARNING_THRESHOLD["instructions"]
    # Current-API kernels unroll every loop by definition: the hint to keep an axis does not apply.
    if emitted > limit and not core.current_api():
        warnings.warn_explicit(
            f"static_range unrolled {len(rng)} iterations into {emitted} instructions (more than {limit}); "
            "nl.affine_range or nl.sequential_range keep one loop axis and trace the body once",
            UserWarning, file or "<kernel>", line or 0)


def affine_range(*args, **kwargs):
    return _DeferredRange(args, kwargs, sequential=False)


def sequential_range(*args, **kwargs):
    return _DeferredRange(args, kwargs, sequential=True)


def static_range(*args):
    return _StaticRange(args)


def for_hook(iterable, name, loop_id=None):
    """Where the AST pre-pass sends every `for` loop of traced code."""
    if isinstance(iterable, _DeferredRange):
        return iterable.iterate(name, loop_id)
    if not core.trace_active():
        return iterable
    if isinstance(iterable, _StaticRange):
        return _unrolled(iterable.range)
    if type(iterable) is range:
        if core.unroll_builtin_range():
            return _unrolled(iterable)
        # A helper's range is the helper's own Python (public kernels compute
        # compile-time ints in helpers with range, break and list lookups);
        # only the kernel body's range is a sequential_range axis.
        if not core.at_kernel_level():
            return iterable
        lb, ub, stride, tripcount = normalize_range_args(iterable.start, iterable.stop, iterable.step)
        return _deferred(lb, ub, stride, tripcount, True, name, [], loop_id)
    return iterable


class WhileLoop:
    """One execution of a `while` statement in traced code. A plain condition keeps
    Python's loop. A runtime one (a one-element tile, 2.25 do-while form) opens a
    loop axis entered unconditionally, traces the body once, and closes it with the
    condition's binding after the body, which the device tests after each iteration.
    A condition that opens its own device loop (a current-API register) is closed by it."""
    __slots__ = ("loop_id", "state", "close")

    def __init__(self, loop_id):
        self.loop_id, self.state, self.close = loop_id, "start", None

    def test(self, condition):
        if self.state == "static":
            return core.eval_if_cnd(condition())
        if self.state == "start":
            value = condition()
            opener = getattr(value, "nki_open_while", None)  # a register of the current API (`while reg:`)
            if opener is not None and core.trace_active():
                self.close = opener()
                _deferred_stack().append(self.loop_id)
                self.state = "body"
                return True
            runtime = core.trace_active() and isinstance(value, core.NkiTensor) and math.prod(value.shape) == 1
            if not runtime:  # plain values loop in Python; a whole tile has no truth value
                self.state = "static"
                return core.eval_if_cnd(value)
            core.open_while_loop(value)
            _deferred_stack().append(self.loop_id)
            self.state = "body"
            return True
        _deferred_stack().pop()  # the body has been traced: its condition closes the loop
        self.state = "done"
        if self.close is not None:
            self.close(condition())
        else:
            core.close_while_loop(condition())
        return False


def break_hook(loop_id, statement):
    """`break`/`continue` of loop `loop_id`: a deferred loop's body is traced once,
    so leaving it early has no meaning there."""
    stack = _deferred_stack()
    if stack and stack[-1] == loop_id and core.trace_active():
        core.raise_break_in_deferred_loop(statement)


# Set NKIC_UNROLL_LOOPS=1 to unroll every current-API loop (the reference the
# symbolic traces are compared against).
def _symbolic_allowed():
    return os.environ.get("NKIC_UNROLL_LOOPS", "") != "1" and not any(veto() for veto in SYMBOLIC_VETOES)


# Callables the current API adds: any true one keeps its loops unrolled (kernel[n]).
SYMBOLIC_VETOES = []
_UNBOUND = object()


def user_iter(iterable):
    """iter() of the kernel's own iterable, as its `for` would call it: an error here
    (iterating None) is the kernel's, reported at its loop."""
    return iter(iterable)


class SymbolicLoop:
    """A current-API compile-time loop (`range`, nl.affine_range, ...) whose body the AST
    pre-pass found free of Python control flow and stores that would escape it: its
    body is traced once, on speculation, with a symbolic variable into one sequential
    loop axis. Whatever needs the iterations apart (the variable as a Python int, a
    host call, a name live after the loop rebound, a warning, any error) abandons the
    speculation: the builder forgets the body, the body's names get back their values,
    and the loop unrolls as Python runs it. Any other loop is the plain loop hook's."""
    __slots__ = ("rng", "name", "loop_id", "saved", "checked", "state", "mark", "recorder", "it", "restore")

    def __init__(self, iterable, name, loop_id, assigned, checked, local_values):
        self.name, self.loop_id, self.checked = name, loop_id, checked
        # A copy: locals() is one dict the frame refreshes at each call.
        self.saved = {n: local_values[n] for n in assigned if n in local_values}
        self.restore, self.mark, self.recorder = False, None, None
        self.rng = None
        if core.trace_active() and core.current_api():
            if isinstance(iterable, _StaticRange):
                self.rng = iterable.range
            elif type(iterable) is range and core.unroll_builtin_range():
                self.rng = iterable
        fits = self.rng is not None and all(-2**63 <= v < 2**63 for v in (self.rng.start, self.rng.stop))
        if fits and _trip_count(self.rng) >= 2 and _symbolic_allowed():
            self.state = "start"
        else:
            self.state, self.it = "plain", user_iter(for_hook(iterable, name, loop_id))

    def __iter__(self):
        return self

    def __next__(self):
        if self.state == "start":
            self.state = "body"
            self.mark = core.begin_speculation()
            # A warning the body raises is the unrolled trace's to give, at its iteration.
            catcher = warnings.catch_warnings(record=True)
            self.recorder = (catcher, catcher.__enter__())
            warnings.simplefilter("always")
            r = self.rng
            return core.open_loop(self.name, r.start, r.stop, r.step, True, [])
        if self.state == "body":  # the body left without check(): it did not finish
            self.abandon()
        if self.state == "unroll":
            self.state, self.restore = "unrolled", True
            self.it = _unrolled(self.rng)
            return next(self.it)
        self.restore = False
        if self.state == "done":
            raise StopIteration
        return next(self.it)

    @property
    def speculative(self):
        return self.state == "body"

    def abandon(self):
        """The body raised (or needs the iterations apart): roll back and unroll. False when
        not speculating: the error is the kernel's."""
        if self.state != "body":
            self.it = None  # the error leaves the loop: a deferred axis closes now, not with the traceback
            return False
        self.recorder[0].__exit__(None, None, None)
        core.rollback_speculation(self.mark)
        self.state = "unroll"
        return True

    def check(self, local_values):
        """The body was traced once: keep the loop symbolic if nothing it did is seen apart
        from the IR (no warning, the checked names still hold what they held)."""
        if self.recorder[1] or any(self.saved.get(n, _UNBOUND) is not local_values.get(n, _UNBOUND)
                                         for n in self.checked):
            self.abandon()
            return
        self.recorder[0].__exit__(None, None, None)
        core.close_loop()
        core.commit_speculation(self.mark)
        self.state = "done"
