"""The accepted Python subset of a kernel body (NKI_CURRENT_API.md §2.3): constructs
the nki 0.3+ compiler rejects are reported at their line, before tracing."""
import ast

from nkic._core import core
from nkic import _rewrite

_checked = set()


def _fail(func, node, what, hint):
    code = func.__code__
    core.raise_unsupported_construct(what, hint, code.co_filename, node.lineno, node.col_offset + 1)


class _Walker(ast.NodeVisitor):
    def __init__(self, func):
        self.func = func

    def visit_Compare(self, node):
        operands = [node.left] + node.comparators
        for i, op in enumerate(node.ops):
            # `x is None` is kept: it is structural for None, and the kernel library relies on it.
            none = any(isinstance(o, ast.Constant) and o.value is None for o in operands[i:i + 2])
            if isinstance(op, (ast.Is, ast.IsNot)) and not none:
                _fail(self.func, node, "'is' / 'is not' between values",
                      "compare with == or != (NKI values compare structurally); only `x is None` is kept")
        self.generic_visit(node)

    def visit_Dict(self, node):
        for k in node.keys:
            if k is not None and not (isinstance(k, ast.Constant) and isinstance(k.value, str)):
                _fail(self.func, k, "a dict key that is not a string literal", "NKI dicts take string keys only")
        self.generic_visit(node)


def check(func):
    """Raises the first construct outside the subset in `func` (the kernel's own def)."""
    code = getattr(func, "__code__", None)
    if code is None or code in _checked:
        return
    fdef = _rewrite.parsed_def(func)
    if fdef is not None:
        if fdef.args.kwonlyargs:
            _fail(func, fdef.args.kwonlyargs[0], "a keyword-only parameter (after '*')",
                  "make it an ordinary parameter with a default")
        _Walker(func).visit(fdef)
    _checked.add(code)
