"""The current API's signatures: keyword parsing only. Each API is marked for the
tracer's dispatcher and rejects unknown keywords as nki 0.2+ does (unexpected
keyword argument), with the closest name suggested."""
import enum
import functools
import inspect

from nkic._core import core
from nkic._kernel import _unexpected
from . import _schedule


def api(name):
    """Marks `fn` as the NKI API `name`, checking its keyword arguments."""
    def mark(fn):
        params = inspect.signature(fn).parameters
        known = frozenset(params)
        takes_any = any(p.kind is p.VAR_KEYWORD for p in params.values())

        instruction = name.startswith("nisa.")

        @functools.wraps(fn)
        def call(*args, **kwargs):
            if not takes_any:
                for k in kwargs:
                    if k not in known:
                        _unexpected(name, k, known)
            if instruction:  # every nisa call returns an NkiInstruction (§5.6)
                return _schedule.traced(lambda: fn(*args, **kwargs), kwargs.get("name"))
            return fn(*args, **kwargs)
        call.nki_func = name
        return call
    return mark


def enum_arg(value, enum_type, what, ints=False):
    """An enum argument: a member of `enum_type`; raw integers are rejected since 0.3,
    except where `ints` (the newest kernel library passes dge_mode as its 0.3 number)."""
    if isinstance(value, enum_type):
        return value
    if isinstance(value, enum.Enum) and type(value).__name__ == enum_type.__name__:
        return enum_type(value.value)  # the same enum of the legacy surface
    if ints and isinstance(value, int) and not isinstance(value, bool):
        if value in {m.value for m in enum_type}:
            return enum_type(value)
        numbers = ", ".join(f"{m.name}={m.value}" for m in enum_type)
        core.raise_unexpected_operand(what, f"{value!r}; nisa.{enum_type.__name__} numbers are {numbers}")
    core.raise_unexpected_operand(what, f"{value!r}; since nki 0.3 it is a member of nisa.{enum_type.__name__} "
                                  f"(e.g. nisa.{enum_type.__name__}.{next(iter(enum_type)).name}), not a raw value")


def unavailable(name, why):
    """An API of the package nkic does not provide: calling it is err_unsupported_args saying why."""
    def refuse(*args, **kwargs):
        core.raise_unsupported_args(name, why)
    refuse.nki_func = name
    refuse.__name__ = name.rsplit(".", 1)[-1]
    return refuse
