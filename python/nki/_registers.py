"""Registers and runtime loops of the current API (NKI_CURRENT_API.md §5.2-5.4). A
VirtualRegister holds a [1, 1] int32 SBUF tile (codegen/Registers.h); the register
instructions are the copies, memsets and iotas that fill it, and the runtime loops are
the core's loop axes: a register upper bound is read when the loop starts, a while
condition after each trip."""
from nkic._core import core
from nkic import _loops
from ._api import api as _api


class VirtualRegister:
    """A runtime 32-bit scalar: a loop bound, a while condition, an .ap(scalar_offset=)."""
    __slots__ = ("tile",)

    def __init__(self, tile):
        self.tile = tile

    def __repr__(self):
        return "<VirtualRegister>"

    def __bool__(self):
        core.raise_unsupported_args("VirtualRegister", "holds a run-time value, which Python cannot test; loop on it "
                                    "with nl.while_loop(reg, body)")

    def _python_value(self, *args):
        core.raise_unsupported_args("VirtualRegister", "holds a run-time value: Python arithmetic on it is not "
                                    "possible; use it as .ap(scalar_offset=reg) or copy it with nisa.register_store")

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __index__ = __int__ = _python_value

    def nki_open_while(self):
        """`while reg:` (0.2-0.6; deprecated in 0.6, removed in 0.7): the body runs while the
        register is nonzero, tested before each trip; the body updates it (register_load).
        Returns the closer."""
        core.check_versioned_form("`while reg:`")
        return _open_tested_while(self)


def _modules():
    from . import isa, language  # the package's own modules, which import this one
    return language, isa


def _tile():
    nl, _ = _modules()
    return nl.ndarray((1, 1), nl.int32, buffer=nl.sbuf)


def _register(value, what, api):
    if not isinstance(value, VirtualRegister):
        core.raise_unexpected_operand(f"{api} {what}", f"'{type(value).__name__}', expected a VirtualRegister "
                                      "(nisa.register_alloc())")
    return value


def _fill(reg, value):
    """reg <- value: an int immediate, or another register."""
    _, nisa = _modules()
    if isinstance(value, VirtualRegister):
        nisa.tensor_copy(dst=reg.tile, src=value.tile)
    else:
        nisa.memset(dst=reg.tile, value=value)


@_api("nisa.register_alloc")
def register_alloc(x=None):
    """A new VirtualRegister (a runtime 32-bit scalar), set to the int `x` when given."""
    core.require_unrolled("a register")  # run-time state: a loop around it unrolls
    reg = VirtualRegister(_tile())
    if x is not None:
        if isinstance(x, bool) or not isinstance(x, int):
            core.raise_unexpected_operand("nisa.register_alloc x", f"'{type(x).__name__}', expected None or an int")
        _fill(reg, x)
    return reg


@_api("nisa.register_move")
def register_move(dst, src):
    """dst (a register) = src, an int immediate or another register."""
    core.require_unrolled("a register")  # run-time state: a loop around it unrolls
    _fill(_register(dst, "dst", "nisa.register_move"), src)


@_api("nisa.register_load")
def register_load(dst, src):
    """dst (a register) = the one value of the [1, 1] tile src."""
    core.require_unrolled("a register")  # run-time state: a loop around it unrolls
    reg = _register(dst, "dst", "nisa.register_load")
    core.check_register_operand(src, "nisa.register_load", "src")
    _copy(reg.tile, src if tuple(src.shape) == (1, 1) else src.reshape((1, 1)))


@_api("nisa.register_store")
def register_store(dst, src):
    """dst (a [1, 1] tile) = the value of the register src."""
    core.require_unrolled("a register")  # run-time state: a loop around it unrolls
    reg = _register(src, "src", "nisa.register_store")
    core.check_register_operand(dst, "nisa.register_store", "dst")
    _copy(dst if tuple(dst.shape) == (1, 1) else dst.reshape((1, 1)), reg.tile)


def _copy(dst, src):
    """One element between a register's tile and SBUF (a Vector copy) or HBM (a DMA)."""
    _, nisa = _modules()
    if core.tensor_info(dst)[2] == "sbuf" and core.tensor_info(src)[2] == "sbuf":
        nisa.tensor_copy(dst=dst, src=src)
    else:
        nisa.dma_copy(dst=dst, src=src)


def _loop_register(var):
    """The loop variable as a register: an iota writing its value at every trip."""
    _, nisa = _modules()
    reg = VirtualRegister(_tile())
    nisa.iota(dst=reg.tile, pattern=[[0, 1]], offset=var)
    return reg


def _open(lower, upper, step, api):
    if isinstance(lower, VirtualRegister):
        core.raise_unsupported_args(api, "nkic takes a register upper bound only; the lower bound is an int")
    if isinstance(step, bool) or not isinstance(step, int) or step < 1:
        core.raise_unsupported_args(api, f"step is a positive int known at compile time, got {step!r}")
    lower = core.int_arg(lower, "lower", api)
    if isinstance(upper, VirtualRegister):
        return core.open_loop("", lower, upper.tile, step, True, [])
    upper = core.int_arg(upper, "upper", api)
    if lower >= upper:
        return None
    return core.open_loop("", lower, upper, step, True, [])


def _body(body_fun, api):
    if not callable(body_fun):
        core.raise_unexpected_operand(f"{api} body_fun", f"'{type(body_fun).__name__}', expected a function")
    return body_fun


@_api("nl.fori_loop")
def fori_loop(lower, upper, body_fun, step=1):
    """A device loop: body_fun(i) runs for i = lower, lower + step, ... below upper, i a register
    (bounds ints or registers). New in nki 0.6."""
    core.check_versioned_form("nl.fori_loop")
    core.require_unrolled("a register")  # run-time state: a loop around it unrolls
    core.runtime_loop_begins()
    _body(body_fun, "nl.fori_loop")
    var = _open(lower, upper, step, "nl.fori_loop")
    if var is None:
        return None
    try:
        body_fun(_loop_register(var))
    finally:
        core.close_loop()
    return None


def _open_tested_while(cond):
    """A device loop tested before each trip: a 0/1 guard loop (cond != 0) around the core's
    do-while, whose entry is unconditional. Returns close(reg): reg is the condition after a trip."""
    nl, nisa = _modules()
    guard = VirtualRegister(_tile())
    nisa.tensor_scalar(dst=guard.tile, data=cond.tile, op0=nl.not_equal, operand0=0)
    core.open_loop("", 0, guard.tile, 1, True, [])
    entry = VirtualRegister(_tile())
    nisa.memset(dst=entry.tile, value=1)
    core.open_while_loop(entry.tile)

    def close(after):
        core.close_while_loop(after.tile)
        core.close_loop()
    return close


@_api("nl.while_loop")
def while_loop(init, body_fun):
    """A device loop: while the register holding `init` is nonzero, it is replaced by body_fun's
    result (body_fun takes and returns a register). New in nki 0.6."""
    core.check_versioned_form("nl.while_loop")
    core.require_unrolled("a register")  # run-time state: a loop around it unrolls
    # The body gets the condition by value, in a register of the loop's own; the register
    # it returns is copied there for the next test.
    _body(body_fun, "nl.while_loop")
    cur = VirtualRegister(_tile())
    _fill(cur, _register(init, "init", "nl.while_loop"))
    close = _open_tested_while(cur)
    after = body_fun(cur)
    if after is not None and after is not cur:
        _fill(cur, _register(after, "body_fun result", "nl.while_loop"))
    close(cur)
    return None


def dynamic_range(start, stop=None, step=1):
    """nki 0.2-0.6 (deprecated in 0.6, removed in 0.7: use nl.fori_loop): a device loop over
    range(start, stop, step), its variable a register."""
    core.check_versioned_form("nl.dynamic_range")  # at the call, before the loop is entered
    return _dynamic_loop(start, stop, step)


def _dynamic_loop(start, stop, step):
    core.require_unrolled("a register")  # run-time state: a loop around it unrolls
    if stop is None:
        start, stop = 0, start
    var = _open(start, stop, step, "nl.dynamic_range")
    if var is None:
        return
    stack = _loops._deferred_stack()
    stack.append(None)
    try:
        yield _loop_register(var)
    finally:
        stack.pop()
        core.close_loop()


dynamic_range.nki_func = "nl.dynamic_range"
