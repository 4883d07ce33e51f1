"""Kernel parameter type hints (seed 004's canonicalizer): annotations must be
resolved type objects, and Union/Optional flatten into the admissible types."""
import inspect
import typing


def canonicalize_type_hint(x):
    """A type hint as a resolved object; a string (forward reference, or any hint
    under `from __future__ import annotations`) is rejected."""
    assert not isinstance(x, str), "Unexpected str in typehint"
    return x


def enumerate_all_types(annotation):
    """The flat list of concrete types an annotation admits ([] when absent)."""
    annotation = canonicalize_type_hint(annotation)
    if annotation is inspect.Parameter.empty:
        return []
    if typing.get_origin(annotation) is typing.Union:
        return [t for arg in typing.get_args(annotation) for t in enumerate_all_types(arg)]
    return [annotation]


def is_mutable(annotation):
    """Whether a parameter is annotated nt.mutable_tensor (alone or in a Union)."""
    return any(getattr(t, "_nki_mutable", False) for t in enumerate_all_types(annotation))
