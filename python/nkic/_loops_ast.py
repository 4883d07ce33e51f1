"""What the AST pre-pass knows about a `for` loop before it runs: whether its body
could be traced once with a symbolic variable (current-API loops, _loops.SymbolicLoop)
and which of the names it assigns the code around it can see. A body with Python
control flow of its own, stores that escape it (`x[k] = ...`, `obj.f = ...`, global),
f-strings or nested definitions is never traced symbolically."""
import ast

# Statements and expressions that make a loop body iteration-dependent or let it act
# on Python state the speculation cannot take back.
_REJECTED = (ast.Break, ast.Continue, ast.Return, ast.Yield, ast.YieldFrom, ast.Await, ast.Global, ast.Nonlocal,
             ast.Delete, ast.Try, ast.With, ast.AsyncWith, ast.While, ast.Raise, ast.JoinedStr, ast.FunctionDef,
             ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.Import, ast.ImportFrom, ast.AsyncFor, ast.Match)
# Names that read a frame's variables by name: liveness cannot be known.
_DYNAMIC = frozenset({"locals", "vars", "eval", "exec", "globals"})


def _escaping_store(tree):
    """A store or delete through a subscript, an attribute or a starred target, or a global statement."""
    for n in ast.walk(tree):
        if isinstance(n, (ast.Subscript, ast.Attribute, ast.Starred)) and isinstance(n.ctx, (ast.Store, ast.Del)):
            return True
        if isinstance(n, (ast.Global, ast.Nonlocal)):
            return True
    return False


def pure(fdef):
    """A helper whose calls may run inside a symbolic loop body: it changes nothing but its own locals."""
    return not _escaping_store(fdef)


def _stored_names(body):
    """Names a body binds in its function's scope (a comprehension's targets are its own)."""
    own = set()
    for n in ast.walk(ast.Module(body=body, type_ignores=[])):
        if isinstance(n, ast.comprehension):
            own.update(t.id for t in ast.walk(n.target) if isinstance(t, ast.Name))
    names = set()
    for n in ast.walk(ast.Module(body=body, type_ignores=[])):
        if isinstance(n, ast.NamedExpr):
            names.add(n.target.id)
        elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.id not in own:
            names.add(n.id)
    return names


def _loads(tree, name):
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) for n in ast.walk(tree))


def _binds(target, name):
    if isinstance(target, ast.Name):
        return target.id == name
    return isinstance(target, (ast.Tuple, ast.List)) and any(_binds(t, name) for t in target.elts)


def _kills(stmt, name):
    """`stmt` rebinds `name` unconditionally without reading it."""
    if isinstance(stmt, ast.Assign):
        return any(_binds(t, name) for t in stmt.targets) and not _loads(stmt.value, name)
    if isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
        return _binds(stmt.target, name) and not _loads(stmt.value, name)
    return False


def _live(sequences, name):
    """`name` may be read, before being rebound, along the statement sequences run next."""
    for seq in sequences:
        for stmt in seq:
            if _reads_first(stmt, name):
                return True
            if _kills(stmt, name):
                return False
    return False


def _reads_first(stmt, name):
    """`stmt` may read `name` before rebinding it (a loop or if whose blocks rebind it
    first reads it only through its header)."""
    if isinstance(stmt, ast.For):
        body_reads = not _binds(stmt.target, name) and _live([stmt.body], name)  # the target binds it first
        return _loads(stmt.iter, name) or body_reads or _live([stmt.orelse], name)
    if isinstance(stmt, ast.If):
        return _loads(stmt.test, name) or _live([stmt.body], name) or _live([stmt.orelse], name)
    return _loads(stmt, name)


def _blocks(stmt):
    for field in ("body", "orelse", "finalbody"):
        block = getattr(stmt, field, None)
        if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
            yield block
    for h in getattr(stmt, "handlers", ()):
        yield h.body


# CPython compiles at most 20 nested blocks; the pre-pass adds some (a `with` per if
# arm, a `try` per symbolic loop): deeper loops stay plain.
_MAX_BLOCKS = 16


def _weight(stmt):
    """The blocks the rewritten `stmt` opens: if + with, for + try, try + with, ..."""
    if isinstance(stmt, (ast.If, ast.For, ast.While, ast.Try, ast.AsyncFor)):
        return 2
    return 1 if isinstance(stmt, (ast.With, ast.AsyncWith)) else 0


def _depth(block):
    return max((_weight(s) + max((_depth(b) for b in _blocks(s)), default=0) for s in block), default=0)


def plan(fdef):
    """{id(for node): (assigned names, checked names)} for the loops of `fdef` (not of its
    nested defs) whose body may be traced symbolically. Checked names are those the code
    after the loop, or the body's next iteration, may read: rebinding one unrolls the loop."""
    if any(isinstance(n, ast.Name) and n.id in _DYNAMIC for n in ast.walk(fdef)):
        return {}
    closure_reads = set()
    for n in ast.walk(fdef):
        if n is not fdef and isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            closure_reads.update(m.id for m in ast.walk(n) if isinstance(m, ast.Name))
    declared = {name for n in ast.walk(fdef) if isinstance(n, (ast.Global, ast.Nonlocal)) for name in n.names}
    plans = {}

    def visit(block, after, depth):
        # `after`: the statement sequences that run once `block` is done, innermost first;
        # `depth`: the blocks the rewritten code has open around `block`.
        for i, stmt in enumerate(block):
            rest = [block[i + 1:]] + after
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            if isinstance(stmt, ast.For) and depth + _weight(stmt) + _depth(stmt.body) <= _MAX_BLOCKS:
                candidate = _candidate(stmt, rest, closure_reads, declared)
                if candidate is not None:
                    plans[id(stmt)] = candidate
            loop = isinstance(stmt, (ast.For, ast.While, ast.AsyncFor))
            for inner in _blocks(stmt):
                visit(inner, ([stmt.body] if loop else []) + rest, depth + _weight(stmt))

    visit(fdef.body, [], 0)
    return plans


def _candidate(loop, after, closure_reads, declared):
    if loop.orelse or not isinstance(loop.target, ast.Name):
        return None
    body = ast.Module(body=loop.body, type_ignores=[])
    if any(isinstance(n, _REJECTED) for n in ast.walk(body)) or _escaping_store(body):
        return None
    assigned = _stored_names(loop.body) | {loop.target.id}
    if assigned & declared:
        return None
    target = loop.target.id
    checked = {n for n in assigned
               if n in closure_reads or _live(after, n) or (n != target and _live([loop.body], n))}
    return tuple(sorted(assigned)), tuple(sorted(checked))
