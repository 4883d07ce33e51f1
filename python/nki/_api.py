"""The current API's signatures: keyword parsing only. Each API is marked for the
tracer's dispatcher, which calls it as it is: an unknown keyword is the dispatcher's
err_unsupported_args (unexpected keyword argument, the closest name suggested, as nki
0.2+ says), and what a nisa call emitted comes back from it as an NkiInstruction."""
import enum

from nkic._core import core


def api(name):
    """Marks `fn` as the NKI API `name` (a nisa.* one as an instruction)."""
    def mark(fn):
        fn.nki_func = name
        fn.nki_instruction = name.startswith(("nisa.", "ncc.", "nki.lnc."))
        return fn
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
    refuse.__doc__ = f"Not available: {name} {why}."
    return refuse
