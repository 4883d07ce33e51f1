"""The dicts traced code builds from keys known only at trace time (a variable, a
comprehension, dict(...)): the current API's dicts take string keys only (NKI_CURRENT_API.md
§2.2), checked when the dict is made; constant keys are the front end's static check."""
import ast

from ._core import core


def dict_keys(d, file, line, col):
    """The dict `d` made at file:line:col, checked in a current-API trace."""
    if core.current_api() and isinstance(d, dict):
        for k in d:
            if not isinstance(k, str):
                core.raise_unsupported_construct(f"a non-string dict key ({k!r})", "NKI dicts take string keys only",
                                                 file, line, col)
    return d


class DictKeys:
    """The rewriter's part that routes such dicts through the `__nki_dict__` hook (dict_keys);
    `filename` is the rewriter's."""

    def visit_Dict(self, node):
        self.generic_visit(node)
        if all(k is None or isinstance(k, ast.Constant) for k in node.keys):
            return node
        return self.checked_keys(node, node)

    def visit_DictComp(self, node):
        self.generic_visit(node)
        return self.checked_keys(node, node)

    def checked_keys(self, value, node):
        where = (ast.Constant(self.filename), ast.Constant(node.lineno), ast.Constant(node.col_offset + 1))
        call = ast.Call(func=ast.Name(id="__nki_dict__", ctx=ast.Load()), args=[value, *where], keywords=[])
        return ast.copy_location(call, node)
