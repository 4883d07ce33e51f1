"""Index algebra of `nkic migrate`: legacy `nl.arange` / `nl.mgrid` index grids and the
affine expressions over them, turned into current-API slices, `min()`-bounded slices
(masks) or `.ap()` access patterns. Works on source text: every size, offset and
coefficient stays the expression the user wrote."""
import ast


class Unsupported(Exception):
    """An index construct the migration cannot express; the message becomes the
    `# nkic-migrate:` comment at the statement."""


class Var:
    """One axis of an index grid: `nl.arange(size)` placed at `pos` of an `ndim`-axis grid."""
    __slots__ = ("size", "pos", "ndim")

    def __init__(self, size, pos, ndim):
        self.size, self.pos, self.ndim = size, pos, ndim


class Affine:
    """sum(coeff * var) + const; coefficients and const are source text (const may be None)."""
    __slots__ = ("terms", "const")

    def __init__(self, terms=(), const=None):
        self.terms, self.const = list(terms), const

    def plus(self, other):
        return Affine(self.terms + other.terms, _add(self.const, other.const))

    def scaled(self, factor):
        return Affine([(_mul(factor, c), v) for c, v in self.terms], None if self.const is None
                      else _mul(factor, self.const))


class Grid:
    """`nl.mgrid[...]` bound to one name: `.p`, `.x` and unpacking give its axes."""
    __slots__ = ("axes",)

    def __init__(self, axes):
        self.axes = axes


def _paren(text):
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        return f"({text})"
    return text if isinstance(node, (ast.Name, ast.Constant, ast.Attribute, ast.Subscript, ast.Call)) else f"({text})"


def _add(a, b):
    if a is None or a == "0":
        return b
    if b is None or b == "0":
        return a
    return f"{a} + {b}"


def _sub(a, b):
    return f"{a} - {_paren(b)}" if b not in (None, "0") else a


def _mul(a, b):
    if a == "1":
        return b
    if b == "1":
        return a
    return f"{_paren(a)} * {_paren(b)}"


def _is_nl(node, names, attr):
    """node is `nl.<attr>` for an alias in `names`."""
    return isinstance(node, ast.Attribute) and node.attr == attr and isinstance(node.value, ast.Name) \
        and node.value.id in names


class IndexEnv:
    """The index values of one kernel function: names bound to grids and affine
    expressions of them, in source order."""

    def __init__(self, render, nl_names):
        self.seg, self.nl_names, self.names = render, nl_names, {}

    def value(self, node):
        """The index value of an expression: Affine, Grid, or None for an ordinary value."""
        if isinstance(node, ast.Name):
            return self.names.get(node.id)
        if isinstance(node, ast.Attribute) and node.attr in ("p", "x"):
            grid = self.value(node.value)
            if isinstance(grid, Grid):
                return grid.axes[0 if node.attr == "p" else 1]
            return None
        if isinstance(node, ast.Subscript):
            if _is_nl(node.value, self.nl_names, "mgrid"):
                return self._mgrid(node.slice)
            inner = node.value
            if isinstance(inner, ast.Call) and _is_nl(inner.func, self.nl_names, "arange"):
                return self._arange(inner, node.slice)
            grid = self.value(node.value)
            if isinstance(grid, Grid) and isinstance(node.slice, ast.Constant):
                return grid.axes[node.slice.value]
            return None
        if isinstance(node, ast.Call) and _is_nl(node.func, self.nl_names, "arange"):
            return self._arange(node, None)
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult)):
            left, right = self.affine(node.left), self.affine(node.right)
            if not (left.terms or right.terms):
                return None
            if isinstance(node.op, ast.Add):
                return left.plus(right)
            if isinstance(node.op, ast.Sub):
                if right.terms:
                    return left.plus(right.scaled("-1"))
                return Affine(left.terms, _sub(left.const or "0", right.const))
            if left.terms and right.terms:
                raise Unsupported("a product of two index grids")
            return left.scaled(self.seg(node.right)) if left.terms else right.scaled(self.seg(node.left))
        return None

    def affine(self, node):
        """Any expression as an Affine (an ordinary value is a constant)."""
        v = self.value(node)
        if isinstance(v, Grid):
            raise Unsupported("an nl.mgrid used as a whole index")
        return v if v is not None else Affine((), self.seg(node))

    def _arange(self, call, slice_node):
        args = [self.seg(a) for a in call.args]
        if len(args) == 1:
            start, size = "0", args[0]
        elif len(args) == 2:
            start, size = args[0], _sub(args[1], args[0])
        else:
            raise Unsupported("nl.arange with a step")
        if slice_node is None:
            pos, ndim = 0, 1
        else:
            elts = slice_node.elts if isinstance(slice_node, ast.Tuple) else [slice_node]
            full = [i for i, e in enumerate(elts) if isinstance(e, ast.Slice)]
            if len(full) != 1 or not all(isinstance(e, (ast.Slice, ast.Constant)) for e in elts):
                raise Unsupported("an nl.arange subscript other than [:, None] / [None, :]")
            pos, ndim = full[0], len(elts)
        return Affine([("1", Var(size, pos, ndim))], None if start == "0" else start)

    def _mgrid(self, slice_node):
        elts = slice_node.elts if isinstance(slice_node, ast.Tuple) else [slice_node]
        axes = []
        for i, e in enumerate(elts):
            if not isinstance(e, ast.Slice) or e.step is not None:
                raise Unsupported("an nl.mgrid axis other than start:stop")
            start = "0" if e.lower is None else self.seg(e.lower)
            size = _sub(self.seg(e.upper), start)
            axes.append(Affine([("1", Var(size, i, len(elts)))], None if start == "0" else start))
        return Grid(axes)

    def bind(self, target, value_node):
        """Records `target = value`; True when the value is an index value (the
        statement then disappears from the migrated kernel)."""
        v = self.value(value_node)
        if v is None:
            return False
        if isinstance(target, ast.Name):
            self.names[target.id] = v
            return True
        if isinstance(target, ast.Tuple) and isinstance(v, Grid) and len(target.elts) == len(v.axes):
            for t, axis in zip(target.elts, v.axes):
                self.names[t.id] = axis
            return True
        raise Unsupported("an index grid bound to this target")


class Mask:
    """The bounds a legacy `mask=` puts on index axes: var -> (mask const, exclusive bound)."""

    def __init__(self, env, node):
        self.bounds, self.vars = {}, []
        self._add(env, node)

    def _add(self, env, node):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitAnd):
            self._add(env, node.left)
            self._add(env, node.right)
            return
        if not (isinstance(node, ast.Compare) and len(node.ops) == 1
                and isinstance(node.ops[0], (ast.Lt, ast.LtE))):
            raise Unsupported("a mask other than `index < bound` (combined with &)")
        left, right = env.affine(node.left), env.affine(node.comparators[0])
        if right.terms or len(left.terms) != 1 or left.terms[0][0] != "1":
            raise Unsupported("a mask bounding more than one index axis in one comparison")
        bound = right.const if isinstance(node.ops[0], ast.Lt) else f"{_paren(right.const)} + 1"
        self.bounds[id(left.terms[0][1])] = (left.const, bound)
        self.vars.append(left.terms[0][1])

    def size(self, var):
        """The axis length under the mask (source text), or None when unbounded."""
        if id(var) not in self.bounds:
            return None
        const, bound = self.bounds[id(var)]
        return f"min({var.size}, {_sub(bound, const)})"

    def stop(self, const, var):
        """The exclusive stop of `const + var` under the mask, or None when unbounded."""
        if id(var) not in self.bounds:
            return None
        mconst, bound = self.bounds[id(var)]
        if mconst == const:
            return f"min({_add(const, var.size)}, {bound})"
        return _add(const, self.size(var))


def bounded_operand(name, shape, mask):
    """A whole tile operand of a masked call, cut to the masked part of the axes it spans
    (its traced `shape` says which: an axis of size 1 is broadcast, not cut)."""
    parts = [":"] * len(shape)
    for var in mask.vars:
        if var.pos < len(shape) and shape[var.pos] > 1:
            parts[var.pos] = f"0:{mask.size(var)}"
    while parts and parts[-1] == ":":
        parts.pop()
    return f"{name}[{', '.join(parts)}]" if parts else name


def _strides(base, ndim):
    """Row-major element strides of `base`, as expressions of base.shape."""
    return [" * ".join(f"{base}.shape[{k}]" for k in range(j + 1, ndim)) or "1" for j in range(ndim)]


def subscript(env, base, elts, mask=None):
    """The current-API text of `base[elts]` (elts: ast nodes), or None when no element is
    an index expression (the subscript stays as written)."""
    values = [env.value(e) for e in elts]
    if not any(isinstance(v, Affine) and v.terms for v in values):
        if any(isinstance(v, Grid) for v in values):
            raise Unsupported("an nl.mgrid used as a whole index")
        return None
    affs = [v if isinstance(v, Affine) else None for v in values]
    seen, order, simple = set(), [], True
    for a in affs:
        if a is None or not a.terms:
            continue
        if len(a.terms) != 1 or id(a.terms[0][1]) in seen or not a.terms[0][0].lstrip("-").isdigit() \
                or int(a.terms[0][0]) < 1:
            simple = False
            break
        seen.add(id(a.terms[0][1]))
        order.append(a.terms[0][1].pos)
    if simple and order == sorted(order):
        parts = []
        for e, a in zip(elts, affs):
            if a is None or not a.terms:
                parts.append(env.seg(e))
                continue
            (coeff, var), start = a.terms[0], a.const or "0"
            if coeff == "1":
                stop = (mask.stop(a.const, var) if mask else None) or _add(start, var.size)
                parts.append(f"{'' if start == '0' else start}:{stop}")
            else:
                if mask and mask.size(var):
                    raise Unsupported("a mask on a strided index")
                parts.append(f"{'' if start == '0' else start}:{_add(start, _mul(coeff, _sub(var.size, '1')))} + 1"
                             f":{coeff}")
        return f"{base}[{', '.join(parts)}]"
    return _access_pattern(env, base, elts, affs, mask)


def _access_pattern(env, base, elts, affs, mask):
    """`base.ap([[step, count], ...], offset=...)` over the index grid's axes in grid order."""
    if mask and mask.bounds:
        raise Unsupported("a mask on an index that needs an access pattern")
    strides = _strides(base, len(elts))
    steps, sizes, offset = {}, {}, None
    for j, (e, a) in enumerate(zip(elts, affs)):
        if a is None:
            if isinstance(e, ast.Slice):
                raise Unsupported("a slice next to an index grid that needs an access pattern")
            a = Affine((), env.seg(e))
        for coeff, var in a.terms:
            steps[id(var)] = _add(steps.get(id(var)), _mul(coeff, strides[j]))
            sizes[id(var)] = var
        if a.const is not None:
            offset = _add(offset, _mul(a.const, strides[j]))
    axes = sorted(sizes.values(), key=lambda v: v.pos)
    pattern = ", ".join(f"[{steps[id(v)]}, {v.size}]" for v in axes)
    return f"{base}.ap([{pattern}], offset={offset or '0'})"


def grid_shape(env, elts, mask=None):
    """The tile shape (source text tuple) an index-grid subscript selects, in grid order;
    `mask` bounds the masked axes. None when no element is an index expression."""
    axes = grid_vars(env, elts)
    if not axes:
        return None
    dims = [(mask.size(v) if mask else None) or v.size for v in axes]
    return "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"


def bounded_tile(name, shape_vars, mask):
    """`name[0:size, ...]`: the part of a full tile a masked access covers."""
    parts = [f"0:{mask.size(v)}" if mask.size(v) else ":" for v in shape_vars]
    while parts and parts[-1] == ":":
        parts.pop()
    return f"{name}[{', '.join(parts)}]" if parts else name


def grid_vars(env, elts):
    """The index axes the elements use, in grid order."""
    axes = {}
    for e in elts:
        v = env.value(e)
        if isinstance(v, Affine):
            for _, var in v.terms:
                axes[id(var)] = var
    return sorted(axes.values(), key=lambda v: v.pos)


_CMP = {ast.Lt: "less", ast.LtE: "less_equal", ast.Gt: "greater", ast.GtE: "greater_equal", ast.Eq: "equal",
        ast.NotEq: "not_equal"}


def affine_select_args(env, pred):
    """(pattern, channel_multiplier, offset, cmp_op name) of a legacy affine_select
    predicate `A op B`: the value A - B compared with 0."""
    if not (isinstance(pred, ast.Compare) and len(pred.ops) == 1 and type(pred.ops[0]) in _CMP):
        raise Unsupported("an affine_select predicate other than one comparison")
    diff = env.affine(pred.left).plus(env.affine(pred.comparators[0]).scaled("-1"))
    partition, free = None, []
    for coeff, var in diff.terms:
        if var.pos == 0:
            partition = coeff
        else:
            free.append((var.pos, coeff, var.size))
    free.sort()
    pattern = "[" + ", ".join(f"[{c}, {s}]" for _, c, s in free) + "]"
    return pattern, partition or "0", diff.const or "0", _CMP[type(pred.ops[0])]
