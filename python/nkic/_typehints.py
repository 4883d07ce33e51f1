"""Kernel parameter type hints (seed 004's canonicalizer): annotations must be
resolved type objects, and Union/Optional flatten into the admissible types."""
import inspect
import typing

from ._core import core
from . import _rewrite


def check_param_hints(func, sig):
    """Seed 004 rejects a string hint (a forward reference, or any hint under
    `from __future__ import annotations`): "Unexpected str in typehint", here at
    the annotation's line."""
    for param in sig.parameters.values():
        if isinstance(param.annotation, str):
            file, line, col = _annotation_location(func, param.name)
            core.raise_string_type_hint(param.name, param.annotation, file, line, col)


def _annotation_location(func, name):
    """(file, line, column) of parameter `name`'s annotation, or of the `def`."""
    code = func.__code__
    fdef = _rewrite.parsed_def(func)
    if fdef is not None:
        a = fdef.args
        for arg in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg]:
            if arg is not None and arg.arg == name and arg.annotation is not None:
                return code.co_filename, arg.annotation.lineno, arg.annotation.col_offset + 1
    return code.co_filename, code.co_firstlineno, 1


def enumerate_all_types(annotation):
    """The flat list of concrete types an annotation admits ([] when absent)."""
    if annotation is inspect.Parameter.empty:
        return []
    if typing.get_origin(annotation) is typing.Union:
        return [t for arg in typing.get_args(annotation) for t in enumerate_all_types(arg)]
    return [annotation]


def is_mutable(annotation):
    """Whether a parameter is annotated nt.mutable_tensor (alone or in a Union)."""
    return any(getattr(t, "_nki_mutable", False) for t in enumerate_all_types(annotation))
