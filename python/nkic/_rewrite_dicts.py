"""The dicts traced code builds from keys known only at trace time (a variable, a
comprehension, dict(...), `d[k] = v`): the current API's parser frontend took string keys
only (NKI_CURRENT_API.md §2.2), so a non-string key goes to the front end's KEY_CHECKS when
the dict is made or stored into; constant keys of a display are the front end's static check."""
import ast
import copy

from ._core import core


KEY_CHECKS = []  # (key, file, line, col) of a non-string key in a current-API trace (nki._subset)


def _check_key(k, file, line, col):
    if not isinstance(k, str):
        for check in KEY_CHECKS:
            check(k, file, line, col)


def dict_keys(d, file, line, col):
    """The dict `d` made at file:line:col, checked in a current-API trace."""
    if core.current_api() and isinstance(d, dict):
        for k in d:
            if not isinstance(k, str):  # the first one is reported
                _check_key(k, file, line, col)
                break
    return d


def stored_key(d, k, file, line, col):
    """The key of `d[k] = v` at file:line:col: checked when `d` is a dict of a current-API trace."""
    if isinstance(d, dict) and core.current_api():
        _check_key(k, file, line, col)
    return k


def _plain_owner(node):
    """A name, or attributes of one (`self.table`)."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


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

    def checked_store(self, node):
        """`owner[key] = v`, the owner a name or its attributes (read again for the check) and the
        key without slices (a tensor's slices are never a dict's key), stores through the
        `__nki_dict_key__` hook (stored_key)."""
        for target in node.targets:
            if not isinstance(target, ast.Subscript) or not _plain_owner(target.value):
                continue
            if any(isinstance(n, ast.Slice) for n in ast.walk(target.slice)):
                continue
            where = (ast.Constant(self.filename), ast.Constant(target.lineno), ast.Constant(target.col_offset + 1))
            owner = copy.deepcopy(target.value)  # read again: a subscript's object is loaded
            call = ast.Call(func=ast.Name(id="__nki_dict_key__", ctx=ast.Load()), args=[owner, target.slice, *where],
                            keywords=[])
            target.slice = ast.copy_location(call, target.slice)
            ast.fix_missing_locations(target)

    def checked_keys(self, value, node):
        where = (ast.Constant(self.filename), ast.Constant(node.lineno), ast.Constant(node.col_offset + 1))
        call = ast.Call(func=ast.Name(id="__nki_dict__", ctx=ast.Load()), args=[value, *where], keywords=[])
        return ast.copy_location(call, node)
