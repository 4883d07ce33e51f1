"""The accepted Python subset (NKI_CURRENT_API.md §2.2, §2.3, §9.2) of a kernel body and
of the helpers it calls: constructs the compiler rejects are reported at their line,
before the function is traced. What only a value can tell (a dict key computed at trace
time) is checked where the value is made (nkic._rewrite_dicts).

Since nki 0.7 the kernel runs as Python (the tracer frontend, NKI_07_08_API.md §1.2): any
class may be used, and `is` and non-string dict keys have Python's meaning, each a warning
(warn_parser_frontend_construct). The parser frontend's rules of 0.3-0.6 are kept behind
parser_frontend_rules() (NKI 0.3-0.6); the signature rules, loop-variable writes and the legacy API stay errors."""
import ast
import builtins
import enum
import inspect

from nkic._core import core
from nkic import _rewrite, _rewrite_dicts

# (code object, its file, the NKI version served) checked (or not the user's code), unless the
# verdict depends on the version; the file too, as code objects of the same body in two files
# compare equal.
_checked = set()
_SURFACE = set()  # ids of the current package's API objects, filled at the first check
_CLASS_RULE = "derives from nl.NKIObject and nothing else (or is an Enum)"
# The legacy surface, whatever name a kernel imported it under (neuronxcc.nki.language is nkic.language).
_LEGACY_MODULES = ("neuronxcc", "nkic.language", "nkic.isa", "nkic.typing", "nkic.compiler")
# The served version's frontend (NKIC_NKI_VERSION): before nki 0.7 the parser frontend, whose rules
# make classes derive from nl.NKIObject only and `is` between values and non-string dict keys errors.
_TRACER_FRONTEND = "the tracer frontend's Python (any class, `is`, non-string dict keys)"


def parser_frontend_rules():
    return not core.accepts_form(_TRACER_FRONTEND)


def _key(code):
    return code, code.co_filename, core.nki_version()


def _fail(func, helper, node, what, hint):
    code = func.__code__
    core.raise_unsupported_construct(what, hint, code.co_filename, node.lineno, node.col_offset + 1,
                                     code.co_name if helper else "")


def _parser_frontend_rule(func, helper, node, what, hint, tracer_hint):
    """A rule of the parser frontend only: an error under its rules, else a warning."""
    if parser_frontend_rules():
        _fail(func, helper, node, what, hint)
    core.warn_parser_frontend_construct(what, tracer_hint, func.__code__.co_filename, node.lineno,
                                        node.col_offset + 1)


def non_string_key(k, file, line, col):
    """A dict key computed at trace time that is not a string (nkic._rewrite_dicts)."""
    what = f"a non-string dict key ({k!r})"
    if parser_frontend_rules():
        core.raise_unsupported_construct(what, "NKI dicts take string keys only", file, line, col)
    core.warn_parser_frontend_construct(what, _KEY_HINT, file, line, col)


_KEY_HINT = "the key works as in Python; use a string key to keep the kernel valid for nki 0.6 and before"


def _legacy_module(value):
    name = getattr(value, "__name__", "") if inspect.ismodule(value) else ""
    return any(name == m or name.startswith(m + ".") for m in _LEGACY_MODULES)


def _current_surface():
    """Every API object the current package exports (some are the legacy module's own objects)."""
    import nki
    from nki import collectives, isa, language, typing
    return {id(v) for m in (nki, collectives, isa, language, typing) for v in vars(m).values()}


def _legacy(value):
    """A legacy module, or an NKI API taken from one (`from neuronxcc.nki.language import exp`)."""
    if _legacy_module(value):
        return True
    if getattr(value, "nki_func", None) is None or id(value) in _SURFACE:
        return False
    return any(str(getattr(value, "__module__", "")).startswith(m) for m in _LEGACY_MODULES)


def _user_class(cls):
    """A class the kernel's author wrote (not Python's, a library's or nkic's own)."""
    try:
        path = inspect.getsourcefile(cls)
    except (TypeError, OSError):
        return False
    return path is not None and core.is_user_code_file(path) and not any(
        d in path for d in ("site-packages", "dist-packages"))


def _nki_class(cls):
    """NKIObject and nothing else (§2.2), an Enum, or an exception a kernel may raise."""
    from nki.language import NKIObject
    if issubclass(cls, (enum.Enum, BaseException)):
        return True
    return issubclass(cls, NKIObject) and all(
        k is object or issubclass(k, NKIObject) for k in cls.__mro__)


def _stored_names(fdef):
    """Every name `fdef` binds itself: its parameters and assignment targets (locals
    shadow the module's names)."""
    a = fdef.args
    names = {p.arg for p in a.posonlyargs + a.args + a.kwonlyargs}
    names.update(p.arg for p in (a.vararg, a.kwarg) if p is not None)
    for n in ast.walk(fdef):
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            names.add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n is not fdef:
            names.add(n.name)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            names.update((al.asname or al.name).split(".")[0] for al in n.names)
    return names


def _writes_to(body, name):
    """The first assignment in `body` (nested functions aside) that rebinds `name`; a
    nested loop reusing the name (`for _ in ...` twice) is a loop of its own."""
    stack = list(body)
    while stack:
        n = stack.pop(0)
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(n, (ast.For, ast.AsyncFor, ast.comprehension)):
            stack[:0] = [c for c in ast.iter_child_nodes(n) if c is not n.target]
            continue
        if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store):
            return n
        stack[:0] = list(ast.iter_child_nodes(n))
    return None


def _constant_key(k):
    if isinstance(k, ast.UnaryOp) and isinstance(k.operand, ast.Constant):
        return True
    if isinstance(k, ast.Tuple):
        return all(_constant_key(e) for e in k.elts)
    return isinstance(k, ast.Constant)


class _Walker(ast.NodeVisitor):
    def __init__(self, func, fdef, helper):
        self.func, self.helper = func, helper
        self.locals = _stored_names(fdef)
        code = func.__code__
        self.cells = dict(zip(code.co_freevars, func.__closure__ or ()))
        self.version_dependent = False  # a rule met whose verdict depends on the NKI version

    def fail(self, node, what, hint):
        _fail(self.func, self.helper, node, what, hint)

    def parser_frontend_rule(self, node, what, hint, tracer_hint):
        _parser_frontend_rule(self.func, self.helper, node, what, hint, tracer_hint)

    def _resolve(self, node):
        """The object a Name or module attribute chain of the body names, None when it
        is a local or cannot be known before tracing."""
        if isinstance(node, ast.Name):
            if node.id in self.locals:
                return None
            if node.id in self.cells:
                try:
                    return self.cells[node.id].cell_contents
                except ValueError:
                    return None
            return self.func.__globals__.get(node.id, getattr(builtins, node.id, None))
        if isinstance(node, ast.Attribute):
            owner = self._resolve(node.value)
            return getattr(owner, node.attr, None) if inspect.ismodule(owner) else None
        return None

    def visit_Compare(self, node):
        operands = [node.left] + node.comparators
        for i, op in enumerate(node.ops):
            # `x is None` is kept: it is structural for None, and the kernel library relies on it.
            none = any(isinstance(o, ast.Constant) and o.value is None for o in operands[i:i + 2])
            if isinstance(op, (ast.Is, ast.IsNot)) and not none:
                self.parser_frontend_rule(
                    node, "'is' / 'is not' between values",
                    "compare with == or != (NKI values compare structurally); only `x is None` is kept",
                    "it compares identity, as in Python; use == to keep the kernel valid for nki 0.6 and before")
        self.generic_visit(node)

    def visit_Dict(self, node):
        for k in node.keys:
            if k is not None and _constant_key(k) and not (isinstance(k, ast.Constant) and isinstance(k.value, str)):
                self.parser_frontend_rule(k, f"a non-string dict key ({ast.unparse(k)})",
                                          "NKI dicts take string keys only", _KEY_HINT)
                break  # the first one is reported
        self.generic_visit(node)

    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Load) and _legacy(self._resolve(node)):
            self.fail(node, f"the legacy neuronxcc.nki API ('{node.id}') inside a kernel",
                      "since nki 0.4 a kernel calls nki.language / nki.isa only: import nki.language as nl, "
                      "nki.isa as nisa (nkic migrate rewrites a legacy kernel)")

    def visit_Call(self, node):
        cls = self._resolve(node.func)
        if parser_frontend_rules() and isinstance(cls, type) and _user_class(cls) and not _nki_class(cls):
            self.fail(node, f"an instance of class '{cls.__name__}', which does not derive from nl.NKIObject",
                      f"a class a kernel uses {_CLASS_RULE}")
        self.generic_visit(node)

    def visit_ClassDef(self, node):
        for base in node.bases:
            cls = self._resolve(base)
            if parser_frontend_rules() and isinstance(cls, type) and not _nki_class(cls):
                self.fail(base, f"a class '{node.name}' deriving from '{cls.__name__}'",
                          f"a class a kernel defines {_CLASS_RULE}")
        self.generic_visit(node)

    def visit_AnnAssign(self, node):
        for child in (node.target, node.value):
            if child is not None:
                self.visit(child)

    def visit_For(self, node):
        targets = [n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)]
        for name in targets:
            write = _writes_to(node.body, name)
            if write is None:
                continue
            self.version_dependent = True
            if not core.accepts_form("a write to a loop variable inside its loop"):
                self.fail(write, f"a write to the loop variable '{name}' inside its loop",
                          "loop variables are read-only since nki 0.4: assign to another name (NKIC_NKI_VERSION=0.3 "
                          "runs the kernel as nki 0.3 did)")
        self.generic_visit(node)


def check(func, kernel=True):
    """Raises the first construct outside the subset in `func`: the kernel's own def,
    or (kernel=False) a helper it calls, when the trace is of the current API."""
    code = getattr(func, "__code__", None)
    if code is None or _key(code) in _checked:
        return
    if not core.is_user_code_file(code.co_filename):  # a library's helper: asked once
        _checked.add(_key(code))
        return
    fdef = _rewrite.parsed_def(func)
    if not _SURFACE:
        _SURFACE.update(_current_surface())
    if fdef is not None:
        if kernel and fdef.args.kwonlyargs:
            _fail(func, False, fdef.args.kwonlyargs[0], "a keyword-only parameter (after '*')",
                  "make it an ordinary parameter with a default")
        walker = _Walker(func, fdef, not kernel)
        for stmt in fdef.body:  # annotations and decorators are evaluated by Python, not compiled
            walker.visit(stmt)
        if walker.version_dependent:  # accepted by the version served: asked again next time
            return
    _checked.add(_key(code))


def check_helper(func):
    if core.current_api():
        check(func, kernel=False)


_rewrite.INLINE_CHECKS.append(check_helper)
_rewrite_dicts.KEY_CHECKS.append(non_string_key)
