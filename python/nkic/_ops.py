"""Operators as values (DESIGN.md): nl.add, np.add, np.max, nl.exp, np.copy, ...
passed as op= all map, through this one table, to the core's AluOp names."""
import numpy as np

from ._core import core

_NUMPY = {
    np.add: "add", np.subtract: "subtract", np.multiply: "multiply", np.divide: "divide",
    np.true_divide: "divide", np.power: "power", np.maximum: "maximum", np.minimum: "minimum",
    np.max: "maximum", np.amax: "maximum", np.min: "minimum", np.amin: "minimum", np.fmax: "maximum",
    np.fmin: "minimum", np.mod: "mod", np.fmod: "fmod", np.equal: "equal", np.not_equal: "not_equal",
    np.greater: "greater", np.greater_equal: "greater_equal", np.less: "less", np.less_equal: "less_equal",
    np.logical_and: "logical_and", np.logical_or: "logical_or", np.logical_xor: "logical_xor",
    np.logical_not: "logical_not", np.bitwise_and: "bitwise_and", np.bitwise_or: "bitwise_or",
    np.bitwise_xor: "bitwise_xor", np.left_shift: "left_shift", np.right_shift: "right_shift",
    np.invert: "invert", np.abs: "abs", np.absolute: "abs", np.negative: "negative", np.sign: "sign",
    np.trunc: "trunc", np.floor: "floor", np.ceil: "ceil", np.exp: "exp", np.log: "log", np.sin: "sin",
    np.cos: "cos", np.tan: "tan", np.tanh: "tanh", np.arctan: "arctan", np.sqrt: "sqrt", np.square: "square",
    np.reciprocal: "reciprocal", np.copy: "bypass", np.sum: "add", np.prod: "multiply",
}
# nl APIs whose name differs from the AluOp they compute.
_NL_ALIASES = {"copy": "bypass", "max": "maximum", "min": "minimum", "sum": "add", "prod": "multiply",
               "all": "logical_and"}


def nki_api(name):
    """Marks a function as the NKI API `name`: the tracer's dispatcher treats a
    call to it as an op builder (seed 000 gate 1)."""
    def mark(fn):
        fn.nki_func = name
        return fn
    return mark


def op_name(op, slot="op"):
    """The AluOp name of an operator value (nl.*, numpy ufunc or function, or a name).
    None is an error for the required op argument `slot`, or None when `slot` is None."""
    if op is None:
        if slot is None:
            return None
        core.raise_operand_cannot_be_none(slot)
    if isinstance(op, str):
        return op
    marker = getattr(op, "nki_func", None)
    if isinstance(marker, str):
        name = marker.rsplit(".", 1)[-1]
        return _NL_ALIASES.get(name, name)
    try:
        return _NUMPY[op]
    except (KeyError, TypeError):
        core.raise_unsupported_op(getattr(op, "__name__", repr(op)))
