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
        core.deprecate_register_api("nisa.VirtualRegister")
        return x.tile
    if isinstance(x, NkiScalar):
        core.check_scalar_32(x.tile, "nl.fori_loop", what)
        return x.tile
    return core.int_arg(x, what, "nl.fori_loop")


def _open_counted(lower, upper, step):
    """A device loop from a scalar lower bound: it counts (upper - lower + step - 1) / step
    trips from 0 (the division truncates, so no trips when upper <= lower), and its index
    is lower + trip * step. Returns the index tile, or None."""
    span = _alu(upper, NkiScalar(lower), "subtract") if isinstance(upper, int) else \
        _alu(NkiScalar(upper), NkiScalar(lower), "subtract")
    trips = _alu(span + (step - 1), step, "divide") if step > 1 else span
    trip = core.open_loop("", 0, trips.tile, 1, True, [])
    index = NkiScalar(_loop_register(trip))
    if step > 1:
        index = index * step
    return (index + NkiScalar(lower)).tile


@_api("nl.fori_loop")
def fori_loop(lower, upper, body_fun, step=1, unroll=False):
    """A device loop: body_fun(i) runs for i = lower, lower + step, ... below upper. The
    bounds are ints, NkiScalars or (deprecated) registers; i is an NkiScalar, or a
    VirtualRegister when a bound is one. unroll=True: the compiler unrolls it, so the
    bounds are ints known when traced; the body is still traced once."""
    core.require_unrolled("a register")  # run-time state: a loop around it unrolls
    _body(body_fun, "nl.fori_loop")
    _check_step(step, "nl.fori_loop")
    if unroll:
        if not (_is_int(lower) and _is_int(upper)):
            bad = lower if not _is_int(lower) else upper
            core.raise_unsupported_args("nl.fori_loop", "unroll=True unrolls the loop when compiled: its bounds are "
                                        f"ints known when traced, got a {type(bad).__name__}")
        var = _open_static(int(lower), int(upper), step, [("unroll", "true")])
        index_tile = None if var is None else _loop_register(var)
    else:
        registers = isinstance(lower, VirtualRegister) or isinstance(upper, VirtualRegister)
        lo, hi = _bound(lower, "lower"), _bound(upper, "upper")
        if isinstance(lo, int):
            var = _open_static(lo, hi, step, []) if isinstance(hi, int) else core.open_loop("", lo, hi, step, True, [])
            index_tile = None if var is None else _loop_register(var)
        else:
            index_tile = _open_counted(lo, hi, step)
        if registers and index_tile is not None:
            try:
                body_fun(VirtualRegister._of(index_tile))
            finally:
                core.close_loop()
            return
    if index_tile is None:
        return
    try:
        body_fun(NkiScalar(index_tile))
    finally:
        core.close_loop()
    return


@_api("nl.while_loop")
def while_loop(init, body_fun):
    """A device loop: while the condition (init, then what body_fun returns) is nonzero,
    body_fun runs with it. The condition is an int32 NkiScalar or (deprecated) a register;
    body_fun takes and returns one of the same kind."""
    core.require_unrolled("a register")  # run-time state: a loop around it unrolls
    # The body gets the condition by value, in a register of the loop's own; the value
    # it returns is copied there for the next test.
    _body(body_fun, "nl.while_loop")
    if isinstance(init, NkiScalar):
        core.check_scalar_32(init.tile, "nl.while_loop", "init")
        cur = VirtualRegister._of(_tile())
        scalar_store(cur.tile, init)
        close = _open_tested_while(cur)
        after = body_fun(NkiScalar(cur.tile))
        if after is not None and not (isinstance(after, NkiScalar) and after.tile is cur.tile):
            if not isinstance(after, NkiScalar):
                core.raise_unexpected_operand("nl.while_loop body_fun result", f"'{type(after).__name__}', "
                                              "expected an NkiScalar (the next condition)")
            core.check_scalar_32(after.tile, "nl.while_loop", "body_fun's result")
            scalar_store(cur.tile, after)
        close(cur)
        return
    if not isinstance(init, VirtualRegister):
        core.raise_unexpected_operand("nl.while_loop init", f"'{type(init).__name__}', expected an NkiScalar or a "
                                      "VirtualRegister")
    core.deprecate_register_api("nisa.VirtualRegister")
    cur = VirtualRegister._of(_tile())
    _fill(cur, init)
    close = _open_tested_while(cur)
    after = body_fun(cur)
    if after is not None and after is not cur:
        if not isinstance(after, VirtualRegister):
            core.raise_unexpected_operand("nl.while_loop body_fun result", f"'{type(after).__name__}', expected a "
                                          "VirtualRegister")
        _fill(cur, after)
    close(cur)
    return


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
    device (both branches are traced, one runs)."""
    _body(then_fn, "nl.if_else", "then_fn")
    if else_fn is not None:
        _body(else_fn, "nl.if_else", "else_fn")
    if isinstance(cond, NkiScalar):
        core.require_unrolled("a register")  # run-time state: a loop around it unrolls
        core.check_scalar_32(cond.tile, "nl.if_else", "cond")
        _branch(cond != 0, then_fn, "then")
        if else_fn is not None:
            _branch(cond == 0, else_fn, "else")
        return
    if not isinstance(cond, (numbers.Integral, np.bool_)):
        core.raise_unexpected_operand("nl.if_else cond", f"'{type(cond).__name__}', expected a Python bool or int "
                                      "(decided when traced) or an int32 NkiScalar (decided on the device)")
    if cond:
        then_fn()
    elif else_fn is not None:
        else_fn()
    return
