"""Device control flow of the current API (NKI_CURRENT_API.md §5.3, NKI_07_08_API.md §3):
nl.fori_loop, nl.while_loop and nl.if_else. Their bounds and conditions are ints,
VirtualRegisters or NkiScalars; a device loop is one of the core's loop axes, bounded by
a register tile read when it starts, and a device branch is such a loop of 0 or 1 trips."""
import numbers

import numpy as np

from nkic._core import core
from ._api import api as _api
from ._registers import VirtualRegister, _loop_register, _open_tested_while, _tile, _fill, _open_static, \
    _check_step
from ._scalars import NkiScalar, _alu, scalar_store


def _body(fn, api, what="body_fun"):
    if not callable(fn):
        core.raise_unexpected_operand(f"{api} {what}", f"'{type(fn).__name__}', expected a function")
    return fn


def _is_int(x):
    return isinstance(x, numbers.Integral) and not isinstance(x, bool)


def _bound(x, what):
    """A loop bound: an int, or the int32 tile of a register or a scalar."""
    if isinstance(x, VirtualRegister):
        core.check_versioned_form("nisa.VirtualRegister")
        return x.tile
    if isinstance(x, NkiScalar):
        core.check_scalar_32(x.tile, "nl.fori_loop", what)
        return x.tile
    return core.int_arg(x, what, "nl.fori_loop")


def _open_counted(lower, upper, step):
    """A device loop from a run-time lower bound: it counts (upper - lower + step - 1) / step
    trips from 0 (the division truncates, so no trips when upper <= lower), and its index
    is lower + trip * step. Returns the index tile."""
    span = _alu(upper if isinstance(upper, int) else NkiScalar(upper), NkiScalar(lower), "subtract")
    trips = _alu(span + (step - 1), step, "divide") if step > 1 else span
    trip = core.open_loop("", 0, trips.tile, 1, True, [])
    index = NkiScalar(_loop_register(trip))
    if step > 1:
        index = index * step
    return (index + NkiScalar(lower)).tile


def _open_fori(lower, upper, step, unroll):
    """Opens the loop; returns its index tile, or None when it has no trips (compile-time bounds)."""
    if unroll:
        if not (_is_int(lower) and _is_int(upper)):
            bad = lower if not _is_int(lower) else upper
            core.raise_unsupported_args("nl.fori_loop", "unroll=True unrolls the loop when compiled: its bounds are "
                                        f"ints known when traced, got a {type(bad).__name__}")
        var = _open_static(int(lower), int(upper), step, [("unroll", "true")])
        return None if var is None else _loop_register(var)
    lo, hi = _bound(lower, "lower"), _bound(upper, "upper")
    if not isinstance(lo, int):
        return _open_counted(lo, hi, step)
    var = _open_static(lo, hi, step, []) if isinstance(hi, int) else core.open_loop("", lo, hi, step, True, [])
    return None if var is None else _loop_register(var)


@_api("nl.fori_loop")
def fori_loop(lower, upper, body_fun, step=1, unroll=False):
    """A device loop: body_fun(i) runs for i = lower, lower + step, ... below upper. The
    bounds are ints, NkiScalars or (deprecated) registers; i is an NkiScalar, or a
    VirtualRegister when a bound is one. unroll=True: the compiler unrolls it, so the
    bounds are ints known when traced; the body is still traced once. New in nki 0.6."""
    core.check_versioned_form("nl.fori_loop")
    if unroll:
        core.check_versioned_form("nl.fori_loop(unroll=True)")
    core.require_unrolled("a register")  # run-time state: a loop around it unrolls
    core.runtime_loop_begins()
    _body(body_fun, "nl.fori_loop")
    _check_step(step, "nl.fori_loop")
    index = _open_fori(lower, upper, step, unroll)
    if index is None:
        return
    # Before nki 0.7 (and with a register bound) the index is a register.
    registers = isinstance(lower, VirtualRegister) or isinstance(upper, VirtualRegister) or \
        not core.accepts_form("nisa.NkiScalar")
    try:
        body_fun(VirtualRegister._of(index) if registers else NkiScalar(index))
    finally:
        core.close_loop()


@_api("nl.while_loop")
def while_loop(init, body_fun):
    """A device loop: while the condition (init, then what body_fun returns) is nonzero,
    body_fun runs with it. The condition is an int32 NkiScalar (nki 0.8+) or (deprecated) a
    register; body_fun takes and returns one of the same kind. New in nki 0.6."""
    core.check_versioned_form("nl.while_loop")
    core.require_unrolled("a register")  # run-time state: a loop around it unrolls
    _body(body_fun, "nl.while_loop")
    kind = type(init) if isinstance(init, (NkiScalar, VirtualRegister)) else None
    if kind is None:
        core.raise_unexpected_operand("nl.while_loop init", f"'{type(init).__name__}', expected an NkiScalar or a "
                                      "VirtualRegister")
    core.check_versioned_form("nisa.VirtualRegister" if kind is VirtualRegister
                              else "an NkiScalar nl.while_loop condition")
    # The body gets the condition by value, in a register of the loop's own; the value
    # it returns is copied there for the next test.
    cur = VirtualRegister._of(_tile())

    def set_condition(value, what):
        if kind is NkiScalar:
            core.check_scalar_32(value.tile, "nl.while_loop", what)
            scalar_store(cur.tile, value)
        else:
            _fill(cur, value)

    set_condition(init, "init")
    close = _open_tested_while(cur)
    after = body_fun(NkiScalar(cur.tile) if kind is NkiScalar else cur)
    if after is not None and getattr(after, "tile", None) is not cur.tile:
        if not isinstance(after, kind):
            core.raise_unexpected_operand("nl.while_loop body_fun result", f"'{type(after).__name__}', expected "
                                          f"{'an NkiScalar' if kind is NkiScalar else 'a VirtualRegister'} "
                                          "(the next condition)")
        set_condition(after, "body_fun's result")
    close(cur)


def _branch(flag, fn, which):
    """fn traced once inside a device loop of `flag` (0 or 1) trips, marked as the branch it is."""
    core.open_loop("", 0, flag.tile, 1, True, [("if_else", which)])
    try:
        fn()
    finally:
        core.close_loop()


@_api("nl.if_else")
def if_else(cond, then_fn, else_fn=None):
    """then_fn() when cond is nonzero, else else_fn() when given. A Python bool or int
    decides when traced (only that branch is traced); an int32 NkiScalar decides on the
    device (both branches are traced, one runs). New in nki 0.8."""
    core.check_versioned_form("nl.if_else")
    _body(then_fn, "nl.if_else", "then_fn")
    if else_fn is not None:
        _body(else_fn, "nl.if_else", "else_fn")
    if isinstance(cond, NkiScalar):
        core.require_unrolled("a register")  # run-time state: a loop around it unrolls
        core.check_scalar_32(cond.tile, "nl.if_else", "cond")
        else_trips = cond == 0 if else_fn is not None else None  # decided before either branch runs
        _branch(cond != 0, then_fn, "then")
        if else_trips is not None:
            _branch(else_trips, else_fn, "else")
        return
    if not isinstance(cond, (numbers.Integral, np.bool_)):
        core.raise_unexpected_operand("nl.if_else cond", f"'{type(cond).__name__}', expected a Python bool or int "
                                      "(decided when traced) or an int32 NkiScalar (decided on the device)")
    if cond:
        then_fn()
    elif else_fn is not None:
        else_fn()
