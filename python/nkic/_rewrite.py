"""The AST pre-pass: rewrites a kernel (or helper) so that every call site goes
through the tracer's dispatcher, every `if`/`while` condition through
eval_if_cnd, chained comparisons through compare_nary and `for` loops through
the loop hook, keeping the user's line and column numbers. Rewritten code is
cached per code object."""
import ast
import inspect
import itertools
import textwrap
import types
import warnings
import weakref

from ._core import core
from . import _loops, _loops_ast
from ._rewrite_dicts import DictKeys, dict_keys, stored_key

# Loop ids are unique across every rewritten function: a helper's loop must not
# share an id with the kernel loop it is called from.
_LOOP_IDS = itertools.count()
_BRANCH_IDS = itertools.count()
_CMP_NAMES = {ast.Eq: "eq", ast.NotEq: "ne", ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge",
              ast.In: "in", ast.NotIn: "not_in"}


class _Branch:
    """One `if` statement. A concrete condition picks one branch (eval_if_cnd);
    a predicate over loop variables traces both branches, each predicated
    (its body a StmtScope whose tensors die with it)."""
    __slots__ = ("cond", "predicated", "taken")

    def __init__(self, cond):
        self.cond = cond
        self.predicated = core.trace_active() and core.is_loop_predicate(cond)
        self.taken = None if self.predicated else core.eval_if_cnd(cond)

    def then(self):
        return self.predicated or self.taken

    def otherwise(self):
        return self.predicated or not self.taken

    def scope(self, negate):
        return _PredicatedScope(self.cond, negate) if self.predicated else _NO_SCOPE


class _PredicatedScope:
    __slots__ = ("cond", "negate")

    def __init__(self, cond, negate):
        self.cond = cond
        self.negate = negate

    def __enter__(self):
        core.push_predicated_scope(self.cond, self.negate)

    def __exit__(self, *exc):
        core.pop_predicated_scope()
        return False


class _NoScope:
    __slots__ = ()

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


_NO_SCOPE = _NoScope()


class _ExceptionBlock:
    """The body of a `try` is traced with the context's in_exception_block set."""
    __slots__ = ("saved",)

    def __enter__(self):
        self.saved = core.trace_active() and core.flags()["in_exception_block"]
        core.set_in_exception_block(True)

    def __exit__(self, *exc):
        core.set_in_exception_block(self.saved)
        return False


def ifexp_test(condition):
    """The test of `a if c else b`. A predicate over loop variables or program ids
    is an object NKI's tracer finds true (only `if` statements check for it), so
    the first branch is taken for every iteration, as neuronx-cc compiles it;
    public kernels rely on that (`state if i > 0 else 0` on a zeroed state)."""
    if core.trace_active() and core.is_scalar_predicate(condition):
        file, line, _ = core.user_location()
        warnings.warn_explicit(
            "the condition of this conditional expression is a predicate over loop variables or program ids; "
            "NKI takes its first branch for every iteration. For a per-iteration choice write an `if` statement "
            "or pass the predicate as mask=", UserWarning, file or "<kernel>", line or 0)
        return True
    return core.eval_if_cnd(condition)


def branch_return(branches, value):
    """`return` inside an if: a predicated if traces both branches, so leaving
    the function from one of them cannot be expressed."""
    if any(b.predicated for b in branches):
        core.raise_return_in_predicated_branch()
    return value


def _is_logical(v):
    # Scalar predicates and tile masks combine (the official examples write
    # `mask=(ix < n and iy < m)`); a tensor's truth value stays an error.
    return isinstance(v, core.Predicate)


def bool_and(first, *rest):
    """`and` over traced predicates and masks combines them (seed 001 logical_and);
    over plain values it is Python's `and`; tensors have no truth value."""
    acc = first
    for thunk in rest:
        if _is_logical(acc):
            acc = core.logical_and(acc, thunk())
        elif not core.truth(acc):
            return acc
        else:
            acc = thunk()
    return acc


def bool_or(first, *rest):
    acc = first
    for thunk in rest:
        if _is_logical(acc):
            acc = core.logical_or(acc, thunk())
        elif core.truth(acc):
            return acc
        else:
            acc = thunk()
    return acc


def bool_not(value):
    return core.logical_not(value) if _is_logical(value) else not value


def kernel_return(value):
    """`return value` in traced code: at kernel level the returned tensors become the
    kernel's outputs (an on-chip tile is stored into a new HBM output), checked here so
    the diagnostic points at the return line."""
    if core.trace_active() and core.at_kernel_level():
        return core.kernel_return(value)
    return value


def annotate(name, annotation, value, old):
    """`name: nt.tensor[shape] = value`: the annotation's shape is checked."""
    shape = getattr(annotation, "shape", None)
    if shape is not None and type(value) is core.NkiTensor and tuple(value.shape) != tuple(shape):
        core.raise_annotation_shape_mismatch(value, list(shape), name)
    return core.bind(name, value, old)


HOOKS = {
    "__nki_call__": core.call,
    "__nki_call_named__": core.call_named,
    "__nki_call_bound__": core.call_bound,
    "__nki_if__": core.eval_if_cnd,
    "__nki_ifexp__": ifexp_test,
    "__nki_cmp__": core.compare_nary,
    "__nki_cmp_trap__": lambda left, rest: core.raise_precedence_trap() if core.is_traced(left) else rest(),
    "__nki_for__": _loops.for_hook,
    "__nki_loop__": _loops.SymbolicLoop,
    "__nki_while__": _loops.WhileLoop,
    "__nki_break__": _loops.break_hook,
    "__nki_branch__": _Branch,
    "__nki_bind__": core.bind,  # `name = value`: the tensor takes the name; shadowing warns
    "__nki_exception_block__": _ExceptionBlock,
    "__nki_annotate__": annotate,
    "__nki_return__": kernel_return,
    "__nki_branch_return__": branch_return,
    "__nki_and__": bool_and,
    "__nki_or__": bool_or,
    "__nki_not__": bool_not,
    "__nki_dict__": dict_keys,
    "__nki_dict_key__": stored_key,
}


def _NO_ARGS():
    return ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[])


def _hook(name, node, *args):
    call = ast.Call(func=ast.Name(id=name, ctx=ast.Load()), args=list(args), keywords=[])
    return ast.copy_location(call, node)


def _located(tree, node):
    """Every node of `tree` at `node`'s position."""
    for n in ast.walk(tree):
        if "lineno" in n._attributes:
            ast.copy_location(n, node)
    return tree


def _previous(name, node):
    """`locals().get(name)`: what `name` holds before the assignment runs."""
    get = ast.Attribute(value=ast.Call(func=ast.Name(id="locals", ctx=ast.Load()), args=[], keywords=[]),
                        attr="get", ctx=ast.Load())
    return ast.copy_location(ast.Call(func=get, args=[ast.Constant(name)], keywords=[]), node)


class _Rewriter(DictKeys, ast.NodeTransformer):
    def __init__(self, filename):
        self.filename = filename  # where the hooked calls' locations are
        self.depth = 0  # nesting of function definitions; returns of depth 1 are hooked
        self.branches = []  # names of the enclosing if statements' branch objects
        self.loop_ids = []  # enclosing loops: an id per `for`, None per `while`
        self.declared_global = None  # names the current def declares global (None: a class body)
        self.plans = [{}]  # per enclosing def, its loops that may stay symbolic (_loops_ast.plan)

    def visit_FunctionDef(self, node):
        self.depth += 1
        saved = self.loop_ids, self.branches, self.declared_global
        self.loop_ids, self.branches = [], []  # a nested def starts outside any loop or if
        # Names declared global are not read as locals (nested defs' declarations count too: harmless).
        self.declared_global = {n for stmt in ast.walk(node) if isinstance(stmt, ast.Global) for n in stmt.names}
        self.plans.append(_loops_ast.plan(node))  # before the body is rewritten
        self.generic_visit(node)
        self.plans.pop()
        self.loop_ids, self.branches, self.declared_global = saved
        self.depth -= 1
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node):
        saved = self.declared_global
        self.declared_global = None  # a class body's names are not fast locals
        self.generic_visit(node)
        self.declared_global = saved
        return node

    def _bound(self, name, node, value):
        """`name = value` through the bind hook, which needs what `name` held
        before. A local is read directly (locals() would copy every local at
        each assignment); an unbound one reads as None."""
        if self.declared_global is None or name in self.declared_global:
            node.value = _hook("__nki_bind__", node, ast.Constant(name), value, _previous(name, node))
            return node
        old = "__nki_previous__"
        read = ast.Try(body=[ast.Assign(targets=[ast.Name(id=old, ctx=ast.Store())], value=ast.Name(id=name, ctx=ast.Load()))],
                       handlers=[ast.ExceptHandler(type=ast.Name(id="NameError", ctx=ast.Load()), name=None,
                                                   body=[ast.Assign(targets=[ast.Name(id=old, ctx=ast.Store())],
                                                                    value=ast.Constant(None))])],
                       orelse=[], finalbody=[])
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "__nki_call_named__":
            # `name = f(...)`: one hook makes the call and binds its result (the old value is read first).
            value.func.id = "__nki_call_bound__"
            value.args.insert(2, ast.copy_location(ast.Name(id=old, ctx=ast.Load()), node))
            node.value = value
        else:
            node.value = _hook("__nki_bind__", node, ast.Constant(name), value, ast.Name(id=old, ctx=ast.Load()))
        return [_located(read, node), node]

    def visit_Return(self, node):
        self.generic_visit(node)
        if self.branches:  # a return inside an if: legal only when the if is static
            names = ast.Tuple(elts=[ast.Name(id=b, ctx=ast.Load()) for b in self.branches], ctx=ast.Load())
            node.value = _hook("__nki_branch_return__", node, names, node.value or ast.Constant(None))
        if self.depth == 1 and node.value is not None:
            node.value = _hook("__nki_return__", node, node.value)
        return node

    def visit_BoolOp(self, node):
        # a and b and c -> __nki_and__(a, lambda: b, lambda: c): Python's short
        # circuit on plain values, seed 001's logical_and/or over masks.
        self.generic_visit(node)
        hook = "__nki_and__" if isinstance(node.op, ast.And) else "__nki_or__"
        thunks = [ast.copy_location(ast.Lambda(args=_NO_ARGS(), body=v), v) for v in node.values[1:]]
        return _hook(hook, node, node.values[0], *thunks)

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return _hook("__nki_not__", node, node.operand)
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id in HOOKS:
            return node
        # The call site goes down with the call: the core never reads it off Python's frames.
        loc = core.register_location(self.filename, node.lineno, node.col_offset + 1)
        call = ast.Call(func=ast.Name(id="__nki_call__", ctx=ast.Load()),
                        args=[ast.Constant(loc), node.func] + node.args, keywords=node.keywords)
        call = ast.copy_location(call, node)
        # dict(pairs) / dict(zip(...)): its keys are checked as a display's are.
        return self.checked_keys(call, node) if isinstance(node.func, ast.Name) and node.func.id == "dict" else call

    def visit_Assign(self, node):
        self.generic_visit(node)
        self.checked_store(node)
        if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
            return node
        name = node.targets[0].id
        value = node.value
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "__nki_call__":
            value.func.id = "__nki_call_named__"
            value.args.insert(1, ast.Constant(name))  # after the location
        if isinstance(value, (ast.Call, ast.BinOp, ast.UnaryOp, ast.Subscript)):
            return self._bound(name, node, value)
        return node

    def visit_AnnAssign(self, node):
        self.generic_visit(node)
        if node.value is None or not isinstance(node.target, ast.Name):
            return node
        name = node.target.id
        value = _hook("__nki_annotate__", node, ast.Constant(name), node.annotation, node.value,
                      _previous(name, node))
        return ast.copy_location(ast.Assign(targets=[node.target], value=value), node)

    def visit_If(self, node):
        # if c: A else: B  ->  br = __nki_branch__(c)
        #                      if br.then(): with br.scope(False): A
        #                      if br.otherwise(): with br.scope(True): B
        name = f"__nki_branch_{next(_BRANCH_IDS)}"
        self.branches.append(name)
        self.generic_visit(node)
        self.branches.pop()
        out = [ast.copy_location(ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())],
                                            value=_hook("__nki_branch__", node.test, node.test)), node)]

        def arm(method, negate, body):
            test = ast.Call(func=ast.Attribute(value=ast.Name(id=name, ctx=ast.Load()), attr=method, ctx=ast.Load()),
                            args=[], keywords=[])
            scope = ast.Call(func=ast.Attribute(value=ast.Name(id=name, ctx=ast.Load()), attr="scope",
                                                ctx=ast.Load()), args=[ast.Constant(negate)], keywords=[])
            with_ = ast.With(items=[ast.withitem(context_expr=scope)], body=body)
            return ast.copy_location(ast.If(test=ast.copy_location(test, node.test), body=[with_], orelse=[]), node)

        out.append(arm("then", False, node.body))
        if node.orelse:
            out.append(arm("otherwise", True, node.orelse))
        return out

    def visit_Try(self, node):
        self.generic_visit(node)
        item = ast.withitem(context_expr=_hook("__nki_exception_block__", node))
        node.body = [ast.copy_location(ast.With(items=[item], body=node.body), node)]
        return node

    def visit_IfExp(self, node):
        self.generic_visit(node)
        node.test = _hook("__nki_ifexp__", node.test, node.test)
        return node

    def visit_Compare(self, node):
        self.generic_visit(node)
        if len(node.ops) < 2 or any(type(op) not in _CMP_NAMES for op in node.ops):
            return node
        if any(isinstance(c, ast.BinOp) and isinstance(c.op, (ast.BitAnd, ast.BitOr)) for c in node.comparators[:-1]):
            # `i < M & j < K` parses as `i < (M & j) < K`: check the left operand before
            # evaluating the `&` so a traced index gets the precedence diagnostic.
            rest = ast.Lambda(args=ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[],
                                                 kw_defaults=[], kwarg=None, defaults=[]),
                              body=self._chain(node))
            return _hook("__nki_cmp_trap__", node, node.left, ast.copy_location(rest, node))
        return self._chain(node)

    def _chain(self, node):
        ops = ast.Tuple(elts=[ast.Constant(_CMP_NAMES[type(op)]) for op in node.ops], ctx=ast.Load())
        operands = ast.Tuple(elts=[node.left] + node.comparators, ctx=ast.Load())
        return _hook("__nki_cmp__", node, ops, operands)

    def visit_For(self, node):
        planned = self.plans[-1].get(id(node))
        self.loop_ids.append(next(_LOOP_IDS))
        self.generic_visit(node)
        loop_id = self.loop_ids.pop()
        name = node.target.id if isinstance(node.target, ast.Name) else ""
        if planned is None:
            node.iter = _hook("__nki_for__", node.iter, node.iter, ast.Constant(name), ast.Constant(loop_id))
            return node
        return self._symbolic_for(node, name, loop_id, *planned)

    def _symbolic_for(self, node, name, loop_id, assigned, checked):
        """for i in it: B  ->  L = __nki_loop__(it, ..., locals())
                               for i in L:
                                   if L.restore: <B's names get back their values>
                                   try: B
                                   except Exception: if not L.abandon(): raise
                                   else: if L.speculative: L.check(locals())
        (_loops.SymbolicLoop: B traced once symbolically, or unrolled)."""
        state = f"__nki_loop_{loop_id}"
        restore = "".join(f"    if {n!r} in {state}.saved: {n} = {state}.saved[{n!r}]\n"
                          f"    else:\n        try: del {n}\n        except NameError: pass\n"
                          for n in assigned if n != name)  # the target is the iteration's, bound already
        template = ast.parse(
            f"{state} = __nki_loop__(None, {name!r}, {loop_id}, {assigned!r}, {checked!r}, locals())\n"
            f"if {state}.restore:\n    pass\n{restore}"
            f"try: pass\n"
            f"except Exception:\n    if not {state}.abandon(): raise\n"
            f"else:\n    if {state}.speculative: {state}.check(locals())\n").body
        init, restore_if, guard = (_located(t, node) for t in template)
        _located(init.value, node.iter)  # the loop hook's diagnostics point at the iterable, as the plain hook's do
        init.value.args[0] = node.iter
        guard.body = node.body
        node.iter = ast.copy_location(ast.Name(id=state, ctx=ast.Load()), node.iter)
        node.body = [restore_if, guard]
        return [init, node]

    def visit_While(self, node):
        # while t: ... -> __nki_w = __nki_while__(id); while __nki_w.test(lambda: t): ...
        # (plain Python for plain conditions, a do-while loop axis for runtime ones)
        loop_id = next(_LOOP_IDS)
        self.loop_ids.append(loop_id)
        self.generic_visit(node)
        self.loop_ids.pop()
        state = f"__nki_while_{loop_id}"
        init = ast.Assign(targets=[ast.Name(id=state, ctx=ast.Store())],
                          value=_hook("__nki_while__", node, ast.Constant(loop_id)))
        test = ast.copy_location(ast.Lambda(args=_NO_ARGS(), body=node.test), node.test)
        node.test = ast.copy_location(
            ast.Call(func=ast.Attribute(value=ast.Name(id=state, ctx=ast.Load()), attr="test", ctx=ast.Load()),
                     args=[test], keywords=[]), node.test)
        return [ast.copy_location(init, node), node]

    def _loop_exit(self, node, statement):
        if not self.loop_ids or self.loop_ids[-1] is None:
            return node
        check = ast.Expr(value=_hook("__nki_break__", node, ast.Constant(self.loop_ids[-1]), ast.Constant(statement)))
        return [ast.copy_location(check, node), node]

    def visit_Break(self, node):
        return self._loop_exit(node, "break")

    def visit_Continue(self, node):
        return self._loop_exit(node, "continue")


def _shift_columns(tree, indent):
    if not indent:
        return
    for n in ast.walk(tree):
        if hasattr(n, "col_offset") and getattr(n, "lineno", None) is not None:
            n.col_offset += indent
            if getattr(n, "end_col_offset", None) is not None:
                n.end_col_offset += indent


_code_cache = {}   # original code object -> rewritten code object (or None)
_func_cache = weakref.WeakKeyDictionary()  # original function -> rewritten function
_impure_codes = set()  # rewritten helpers that store outside their locals: a symbolic loop body calling one unrolls
INLINE_CHECKS = []  # front-end checks a helper passes before it is inlined (nki: the accepted subset)


def parsed_def(func):
    """The `def` of `func` parsed from its source, at its lines and columns in the
    file (None without source, or for a lambda)."""
    try:
        lines, start = inspect.getsourcelines(func)
    except (OSError, TypeError):
        return None
    if func.__code__.co_name == "<lambda>":
        return None
    first = lines[0]
    indent = len(first) - len(first.lstrip())
    tree = ast.parse(textwrap.dedent("".join(lines)))
    fdef = tree.body[0]
    if not isinstance(fdef, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    ast.increment_lineno(tree, start - 1)
    _shift_columns(tree, indent)
    return fdef


def _rewrite_code(func):
    code = func.__code__
    if code in _code_cache:
        return _code_cache[code]
    rewritten = None
    fdef = parsed_def(func)
    if fdef is not None:
        pure = _loops_ast.pure(fdef)
        fdef.decorator_list = []
        fdef = _Rewriter(code.co_filename).visit(fdef)
        params = list(HOOKS) + [v for v in code.co_freevars if v not in HOOKS]
        factory = ast.FunctionDef(
            name="__nki_factory__",
            args=ast.arguments(posonlyargs=[], args=[ast.arg(arg=p) for p in params], vararg=None,
                               kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]),
            # The def would bind its own name in the factory, turning a recursive
            # call into a closure the original function has no cell for: keep it global.
            body=([ast.Global(names=[fdef.name])] if fdef.name not in params else []) +
                 [fdef, ast.Return(value=ast.Name(id=fdef.name, ctx=ast.Load()))],
            decorator_list=[], returns=None, type_comment=None)
        module = ast.Module(body=[factory], type_ignores=[])
        ast.fix_missing_locations(module)
        outer = compile(module, code.co_filename, "exec")
        factory_code = next(c for c in outer.co_consts if isinstance(c, types.CodeType))
        rewritten = next(c for c in factory_code.co_consts
                         if isinstance(c, types.CodeType) and c.co_name == fdef.name)
        core.register_user_code(rewritten)
        if not pure:
            _impure_codes.add(rewritten)
    _code_cache[code] = rewritten
    return rewritten


def rewritten(func):
    """`func` with its body rewritten for tracing (func itself if it has no source)."""
    hit = _func_cache.get(func)
    if hit is not None:
        return hit
    code = _rewrite_code(func)
    if code is None:
        new = func
    else:
        cells = []
        for name in code.co_freevars:
            if name in HOOKS:
                cells.append(types.CellType(HOOKS[name]))
            else:
                cells.append(func.__closure__[func.__code__.co_freevars.index(name)])
        new = types.FunctionType(code, func.__globals__, func.__name__, func.__defaults__, tuple(cells))
        new.__kwdefaults__ = func.__kwdefaults__
        new.__qualname__ = func.__qualname__  # Python's own messages name the user's function
    _func_cache[func] = new
    return new


def _target(func, args):
    """The Python function to inline for a callee, with its effective arguments."""
    if isinstance(func, types.MethodType):
        # A bound builtin (a C-level method such as a tile's __reduce_ex__) has no source: run it.
        if not isinstance(func.__func__, types.FunctionType):
            return None, args
        return func.__func__, (func.__self__,) + tuple(args)
    if isinstance(func, types.FunctionType):
        return func, tuple(args)
    call = getattr(type(func), "__call__", None)
    if isinstance(call, types.FunctionType):
        return call, (func,) + tuple(args)
    return None, args


def hoist(value, _seen=None):
    """Tensors a helper returns live on in the caller's scope."""
    if isinstance(value, core.NkiTensor):
        return core.hoist(value)
    if not isinstance(value, (tuple, list, dict)):
        return value
    # A container that holds itself is walked once: its copy holds the copy.
    seen = {} if _seen is None else _seen
    if id(value) in seen:
        return seen[id(value)]
    if isinstance(value, tuple):
        items = [hoist(v, seen) for v in value]
        return type(value)._make(items) if hasattr(value, "_fields") else tuple(items)  # keep NamedTuples
    out = [] if isinstance(value, list) else {}
    seen[id(value)] = out
    if isinstance(value, list):
        out.extend(hoist(v, seen) for v in value)
    else:
        out.update((k, hoist(v, seen)) for k, v in value.items())
    return out


def inline_function(func, args, kwargs):
    """Trace a user helper as if its body were written at the call site."""
    target, args = _target(func, args)
    if target is None:
        return func(*args, **kwargs)
    for check in INLINE_CHECKS:
        check(target)
    fn = rewritten(target)
    if fn is target or fn.__code__ in _impure_codes:
        core.require_unrolled("a helper that may change state outside its locals")
    core.push_function_scope(target.__name__)
    try:
        result = fn(*args, **kwargs)
    finally:
        core.pop_scope()
    return hoist(result)
