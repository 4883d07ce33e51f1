"""`nkic migrate`: rewrites a legacy `neuronxcc.nki` kernel file into the current `nki`
API. Source to source on Python's ast with exact positions: a node is re-emitted only
when a rule rewrites it (or something inside it), so untouched code keeps its text.
What the rules cannot express is kept and marked with a `# nkic-migrate:` comment.
The shapes, dtypes and buffers of results that become destinations come from tracing
the legacy kernel (_migrate_trace.Site, keyed by the call's line:col)."""
import ast

from . import _migrate_index as ix
from ._migrate_index import Unsupported
from ._migrate_names import DROP as _DROP, Names, dotted as _dotted, kw as _kw


class Note:
    """One construct left as written: the line (1-based) of the migrated file's input and why."""
    __slots__ = ("line", "message")

    def __init__(self, line, message):
        self.line, self.message = line, message

    def __repr__(self):
        return f"line {self.line}: {self.message}"


class Migration(Names):
    """One file: `render()` gives the migrated text; `notes` what stayed as written."""

    def __init__(self, source, sites=None, grids=None):
        self.src = source
        self.tree = ast.parse(source)
        self.sites = sites or {}
        self.grids = grids or {}
        self.notes = []
        self.uses_nisa = False
        self._line_starts = [0]
        for line in source.splitlines(keepends=True):
            self._line_starts.append(self._line_starts[-1] + len(line))
        self.nl, self.nisa, self.nki, self.paths = self._aliases()
        self.env = None
        self.mask = None
        self.blocks = {}      # tensor name -> position of its nl.par_dim (moved to the front)
        self.accumulators = set()  # names a matmul accumulates into with +=
        self.fresh = set()         # of those, the ones allocated here for it (nl.zeros in PSUM)
        self.shapes = {}      # name -> traced Site of the call it was assigned from
        self.spmd_kernels = self._spmd_kernels()
        self.statement_calls = {id(n.value) for n in ast.walk(self.tree) if isinstance(n, ast.Expr)}

    # --- positions and splicing -------------------------------------------------
    def _offset(self, line, col):
        start = self._line_starts[line - 1]
        text = self.src[start:self._line_starts[line] if line < len(self._line_starts) else len(self.src)]
        return start + len(text.encode()[:col].decode(errors="ignore"))

    def span(self, node):
        if isinstance(node, ast.Module):
            return 0, len(self.src)
        start = self._offset(node.lineno, node.col_offset)
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.decorator_list:
            d = node.decorator_list[0]
            start = self._offset(d.lineno, d.col_offset) - 1
        return start, self._offset(node.end_lineno, node.end_col_offset)

    def seg(self, node):
        s, e = self.span(node)
        return self.src[s:e]

    def _children(self, node):
        for child in ast.iter_child_nodes(node):
            if hasattr(child, "lineno") and hasattr(child, "end_col_offset"):
                yield child
            else:
                yield from self._children(child)

    def render(self, node):
        out = self.rewrite(node)
        if out is not None:
            return out
        try:
            return self.splice(node)
        except Unsupported as e:  # raised by a part: the innermost statement is marked
            if isinstance(node, ast.stmt):
                return self.mark(node, str(e))
            raise

    def splice(self, node, transform=None):
        start, end = self.span(node)
        parts, pos = [], start
        for child in sorted(self._children(node), key=lambda c: self.span(c)[0]):
            cs, ce = self.span(child)
            if cs < pos:
                continue
            text = self.render(child) if transform is None else transform(child)
            if text is _DROP:
                cs = self.src.rfind("\n", 0, cs) + 1
                nl_at = self.src.find("\n", ce)
                ce = len(self.src) if nl_at < 0 else nl_at + 1
                text = ""
            elif text == self.src[cs:ce]:
                continue
            parts += [self.src[pos:cs], text]
            pos = ce
        parts.append(self.src[pos:end])
        return "".join(parts)

    def indent(self, node):
        return " " * node.col_offset

    def lines(self, node, *texts):
        return ("\n" + self.indent(node)).join(texts)

    def mark(self, node, message):
        self.notes.append(Note(node.lineno, message))
        return self.lines(node, f"# nkic-migrate: {message}", self.seg(node))  # kept as written

    # --- module-level facts ---------------------------------------------------------
    def _spmd_kernels(self):
        return {f.name for f in ast.walk(self.tree) if isinstance(f, ast.FunctionDef)
                and any(self._is(c, self.nl, "program_id") or self._is(c, self.nl, "num_programs")
                        for c in ast.walk(f) if isinstance(c, ast.Call))}

    # --- rules -------------------------------------------------------------------------
    def rewrite(self, node):
        try:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                return self._import(node)
            if isinstance(node, ast.FunctionDef):
                return self._function(node)
            if isinstance(node, ast.stmt) and self.env is not None:
                return self._statement(node)
            if isinstance(node, ast.Subscript):
                return self._subscript(node)
            if isinstance(node, ast.Call):
                return self._call(node)
            if isinstance(node, ast.Attribute) and any((_dotted(node) or "").startswith(f"{n}.compiler.")
                                                       for n in self.nki):
                raise Unsupported(f"{self.seg(node)}: the current API has no nki.compiler allocation or "
                                  "scheduling directives (place a tensor with nl.ndarray(..., address=...), order "
                                  "instructions with nisa's depends_on); rewrite it by hand")
        except Unsupported as e:
            if isinstance(node, ast.stmt):
                return self.mark(node, str(e))
            raise
        return None

    def _import(self, node):
        if isinstance(node, ast.ImportFrom):
            if node.module == "neuronxcc" and [a.name for a in node.names] == ["nki"]:
                alias = node.names[0].asname
                return "import nki" + (f" as {alias}" if alias and alias != "nki" else "")
            if node.module and node.module.startswith("neuronxcc.nki"):
                return self.splice(node).replace(node.module, "nki" + node.module[len("neuronxcc.nki"):], 1)
            return None
        if any(a.name.startswith("neuronxcc.nki") for a in node.names):
            names = []
            for a in node.names:
                name = "nki" + a.name[len("neuronxcc.nki"):] if a.name.startswith("neuronxcc.nki") else a.name
                names.append(name + (f" as {a.asname}" if a.asname and a.asname != name else ""))
            return "import " + ", ".join(names)
        return None

    def _function(self, node):
        outer = (self.env, self.blocks, self.accumulators, self.shapes, self.fresh)
        self.env = ix.IndexEnv(self.render, self.nl)
        self.blocks, self.shapes, self.fresh = {}, {}, set()
        self.accumulators = self._accumulators(node)
        decorators = {id(d) for d in node.decorator_list}
        spmd = self._spmd(node) if node.name in self.spmd_kernels else {}

        def transform(child):
            if id(child) in decorators:
                text = self._decorator(child)
                return self.render(child) if text is None else text
            text = self.render(child)
            return spmd[id(child)](text) if id(child) in spmd and text is not _DROP else text
        try:
            return self.splice(node, transform)
        finally:
            self.env, self.blocks, self.accumulators, self.shapes, self.fresh = outer

    def _accumulators(self, fn):
        """Names a matmul accumulates into with `+=` (PSUM tiles the first write can overwrite)."""
        names = set()
        for n in ast.walk(fn):
            if isinstance(n, ast.AugAssign) and isinstance(n.op, ast.Add) and isinstance(n.value, ast.Call) \
                    and self._matmul(n.value):
                t = n.target.value if isinstance(n.target, ast.Subscript) else n.target
                if isinstance(t, ast.Name):
                    names.add(t.id)
        return names

    def _matmul(self, call):
        if self._is(call, self.nisa, "nc_matmul"):
            return True
        tx = _kw(call, "transpose_x")
        return self._is(call, self.nl, "matmul") and isinstance(tx, ast.Constant) and tx.value is True

    def _spmd(self, node):
        """A kernel launched on an SPMD grid: the current API has none (kernel[n] is the LNC
        count), so the kernel loops over the grid it was launched on, a new parameter
        `spmd_grid` whose default is the traced launch grid. Returns the per-child
        text transforms (child id -> function)."""
        grid = self.grids.get(node.name)
        axes = [c.args[0].value for c in ast.walk(node) if isinstance(c, ast.Call)
                and self._is(c, self.nl, "program_id") and c.args and isinstance(c.args[0], ast.Constant)]
        dims = len(grid) if grid else 1 + max(axes, default=0)
        default = "(" + ", ".join(str(g) for g in (grid or (1,) * dims)) + ("," if dims == 1 else "") + ")"
        out = {}
        params = node.args.args + node.args.defaults
        if params:
            last = max(params, key=lambda a: self.span(a)[1])
            out[id(last)] = lambda text: f"{text}, spmd_grid={default}"
        body = node.body
        first = next(i for i, s in enumerate(body) if any(
            isinstance(c, ast.Call) and (self._is(c, self.nl, "program_id") or self._is(c, self.nl, "num_programs"))
            for c in ast.walk(s)))
        stop = len(body) - 1 if isinstance(body[-1], ast.Return) else len(body)
        nl = self.nl[0]
        ind, depth = self.indent(body[first]), "    " * dims
        head = "".join(f"for spmd_{d} in {nl}.affine_range(spmd_grid[{d}]):\n{ind}{'    ' * (d + 1)}"
                       for d in range(dims))
        pending = [head]  # the loops open before the first statement that stays

        def wrap(text):
            opened, pending[:] = (pending[0] if pending else depth), []
            return opened + text.replace("\n", "\n" + depth)
        for i in range(first, stop):
            out[id(body[i])] = wrap
        return out

    def _statement(self, node):
        value = getattr(node, "value", None)
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, (ast.AnnAssign, ast.AugAssign)) else []
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and len(targets) == 1 and value is not None:
            if self.env.bind(targets[0], value):
                return _DROP
            if isinstance(value, ast.Call):
                out = self._assign_call(node, targets[0], value)
                if out is not None:
                    return out
                bounded = self._masked_target(targets[0], value)
                if bounded is not None:
                    return f"{bounded} = {self.render(value)}"
            if isinstance(targets[0], ast.Subscript):
                return self._assign_view(node, targets[0], value)
        if isinstance(node, ast.Return) and isinstance(value, ast.Call) and (
                self._is(value, self.nisa) or self._is(value, self.nl, "load")):
            return self._return_call(node, value)
        if isinstance(node, ast.AugAssign) and isinstance(value, ast.Call) and self._matmul(value):
            return self._accumulate(node, value)
        if isinstance(node, ast.Expr) and isinstance(value, ast.Call) and self._is(value, self.nl, "store"):
            return self._store(node, value)
        return None

    def _return_call(self, node, call):
        """`return nisa.op(...)`: the destination gets a name (one the function does not use)."""
        used = {n.id for n in ast.walk(self.tree) if isinstance(n, ast.Name)}
        name = next(n for n in ("result", "result_", "result__") if n not in used)
        text = self._assign_call(node, ast.Name(id=name, ctx=ast.Store()), call)
        return self.lines(node, text, f"return {name}")

    def _target_text(self, node, target):
        if not hasattr(target, "lineno"):
            return target.id
        if isinstance(node, ast.AnnAssign):
            return f"{self.render(target)}: {self.seg(node.annotation)}"
        return self.render(target)

    def _assign_call(self, node, target, call):
        if self._is(call, self.nl, "load"):
            return self._load(node, target, call)
        if self._is(call, self.nisa) and self._nisa_name(call) not in ("get_nc_version",):
            return self._isa(node, target, call)
        if isinstance(target, ast.Name):
            site = self.sites.get((call.lineno, call.col_offset + 1)) or self._broadcast(call)
            if site is not None:
                self.shapes[target.id] = site
            if (self._is(call, self.nl, "zeros") or self._is(call, self.nl, "ndarray")) and call.args:
                return self._allocation(node, target, call)
        return None

    def _assign_view(self, node, target, value):
        """`t[grid] = value` where the view became an access pattern (a call, which Python
        cannot assign to): a copy into it; `nl.copy(x)` copies x directly."""
        dst = self.render(target)
        if not dst.endswith(")"):
            return None
        if isinstance(value, ast.Call) and self._is(value, self.nl, "copy") and len(value.args) == 1 \
                and not value.keywords:
            src = self.render(value.args[0])
        else:
            src = self.render(value)
        self.uses_nisa = True
        return f"{self._nisa_alias()}.tensor_copy(dst={dst}, src={src})"

    def _broadcast(self, call):
        """`t.broadcast_to((P, F))` makes no tensor in the IR: its axes, from the literal shape
        (an expression counts as an axis longer than 1)."""
        if not (isinstance(call.func, ast.Attribute) and call.func.attr == "broadcast_to" and call.args
                and isinstance(call.args[0], ast.Tuple)):
            return None
        from ._migrate_trace import Site
        return Site(tuple(e.value if isinstance(e, ast.Constant) and isinstance(e.value, int) else 2
                          for e in call.args[0].elts), None, None)

    def _masked_target(self, target, call):
        """`t[...] = op(..., mask=m)` writes the masked part of t only."""
        if not (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name)
                and isinstance(target.slice, ast.Constant) and target.slice.value is Ellipsis
                and target.value.id in self.shapes and _kw(call, "mask") is not None):
            return None
        return ix.bounded_operand(target.value.id, self.shapes[target.value.id].shape, self._with_mask(call))

    def _nisa_name(self, call):
        return call.func.attr

    def _allocation(self, node, target, call):
        """Block dimensions (`nl.par_dim` not first) move to the front; a PSUM accumulator
        zeroed for `+=` matmuls is allocated only (the first matmul overwrites it)."""
        shape = call.args[0]
        text = None
        if isinstance(shape, ast.Tuple):
            pos = next((i for i, e in enumerate(shape.elts) if isinstance(e, ast.Call)
                        and self._par_dim(e)), None)
            if pos is not None:
                dims = [self.render(e.args[0] if i == pos else e) for i, e in enumerate(shape.elts)]
                dims.insert(0, dims.pop(pos))
                if pos:
                    self.blocks[target.id] = pos
                text = "(" + ", ".join(dims) + ")"
        buffer = _kw(call, "buffer")
        zeroed_psum = (self._is(call, self.nl, "zeros") and target.id in self.accumulators and buffer is not None
                       and self.seg(buffer).endswith("psum"))
        if text is None and not zeroed_psum:
            return None
        if zeroed_psum:
            self.fresh.add(target.id)
        func = f"{self.nl[0]}.ndarray" if zeroed_psum else self._func(call)
        rest = [self.render(a) for a in call.args[1:]] + [self.render(k) for k in call.keywords]
        return f"{self._target_text(node, target)} = {func}({', '.join([text or self.render(shape)] + rest)})"

    def _with_mask(self, call):
        m = _kw(call, "mask")
        return ix.Mask(self.env, m) if m is not None else None

    def _args(self, call, skip=("mask",), mask=None):
        """The call's arguments rendered (index subscripts converted, bounded by `mask`,
        and so are whole tiles of a masked computation)."""
        saved, self.mask = self.mask, mask
        try:
            pos = [self._operand(a, mask) for a in call.args]
            kws = {k.arg: self._operand(k.value, mask) for k in call.keywords if k.arg not in skip}
        finally:
            self.mask = saved
        return pos, kws

    def _operand(self, node, mask):
        site = self.shapes.get(node.id) if isinstance(node, ast.Name) else None
        if mask is None or site is None:
            return self.render(node)
        return ix.bounded_operand(node.id, site.shape, mask)

    def _grid_of(self, node):
        """(index elements, base) of `base[elements]`, or (None, None)."""
        if isinstance(node, ast.Subscript):
            elts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            return elts, node.value
        return None, None

    def _load(self, node, target, call):
        mask = self._with_mask(call)
        src_node = call.args[0] if call.args else _kw(call, "src")
        pos, kws = self._args(call, mask=mask)
        src = pos[0] if pos else kws.pop("src")
        dtype = kws.pop("dtype", None)
        self.uses_nisa = True
        copy = f"{self._nisa_alias()}.dma_copy"
        if not isinstance(target, ast.Name):
            return f"{copy}(dst={self._target_text(node, target)}, src={src})"
        elts, base = self._grid_of(src_node)
        shape = ix.grid_shape(self.env, elts) if elts else None
        site = self.sites.get((call.lineno, call.col_offset + 1))
        if shape is None and site is not None and elts and mask is None:
            src = self._unit_slices(base, elts, site) or src
        if shape is None:
            shape = f"{src}.shape"
        if dtype is None:
            root = base
            while isinstance(root, (ast.Call, ast.Attribute, ast.Subscript)):
                root = root.func if isinstance(root, ast.Call) else root.value
            dtype = f"{root.id if isinstance(root, ast.Name) else src}.dtype"
        if site is not None:
            self.shapes[target.id] = site
        dst = target.id
        if mask is not None and elts:
            dst = ix.bounded_tile(dst, ix.grid_vars(self.env, elts), mask)
        alloc = f"{self._target_text(node, target)} = {self.nl[0]}.ndarray({shape}, dtype={dtype}, " \
                f"buffer={self.nl[0]}.sbuf)"
        return self.lines(node, alloc, f"{copy}(dst={dst}, src={src})")

    def _unit_slices(self, base, elts, site):
        """`a[c:c + p, i]` as the legacy load traced it: an integer index the traced tile
        keeps as a dimension of 1 becomes the slice `i:i + 1` (a current-API integer index
        drops the dimension); the leading integer indices the tile drops stay. None when
        nothing changes."""
        plain = [i for i, e in enumerate(elts) if not isinstance(e, ast.Slice)
                 and not (isinstance(self.env.value(e), ix.Affine) and self.env.value(e).terms)]
        kept = len(site.shape) - (len(elts) - len(plain))
        if not 0 < kept <= len(plain):
            return None
        units = set(plain[len(plain) - kept:])
        parts = []
        for i, e in enumerate(elts):
            text = self.render(e)
            if i in units:
                bound = text if isinstance(e, (ast.Name, ast.Constant, ast.Attribute)) else f"({text})"
                text = f"{text}:{bound} + 1"
            parts.append(text)
        return f"{self.render(base)}[{', '.join(parts)}]"

    def _store(self, node, call):
        mask = self._with_mask(call)
        dst_node = call.args[0] if call.args else _kw(call, "dst")
        value_node = call.args[1] if len(call.args) > 1 else _kw(call, "value")
        saved, self.mask = self.mask, mask
        try:
            dst, value = self.render(dst_node), self.render(value_node)
        finally:
            self.mask = saved
        elts, _ = self._grid_of(dst_node)
        if mask is not None and elts:
            value = ix.bounded_tile(value if isinstance(value_node, (ast.Name, ast.Call)) else f"({value})",
                                    ix.grid_vars(self.env, elts), mask)
        self.uses_nisa = True
        return f"{self._nisa_alias()}.dma_copy(dst={dst}, src={value})"

    def _accumulate(self, node, call):
        """`acc += matmul(...)` -> `nc_matmul(acc, ...)`: a fresh accumulator (allocated for
        `+=`) lets the first write overwrite; otherwise accumulate=True."""
        pos, kws = self._args(call, skip=("mask", "transpose_x"), mask=self._with_mask(call))
        dst = self.render(node.target)
        base = node.target.value if isinstance(node.target, ast.Subscript) else node.target
        fresh = isinstance(base, ast.Name) and base.id in self.fresh
        args = [dst] + pos + [f"{k}={v}" for k, v in kws.items()] + ([] if fresh else ["accumulate=True"])
        self.uses_nisa = True
        return f"{self._nisa_alias()}.nc_matmul({', '.join(args)})"

    def _isa(self, node, target, call):
        """`x = nisa.op(...)` -> `x = nl.ndarray(...)` + `nisa.op(x, ...)`, the destination
        shaped as the traced result; `t[...] = nisa.op(...)` passes the view."""
        name = self._nisa_name(call)
        mask = self._with_mask(call)
        pos, kws = self._args(call, skip=("mask", "dtype"), mask=mask)
        nl = self.nl[0]  # numpy ufuncs and dtypes: the nl names of the same name
        pos = [f"{nl}.{a[3:]}" if a.startswith("np.") and a[3:].isidentifier() else a for a in pos]
        kws = {k: f"{nl}.{v[3:]}" if v.startswith("np.") and v[3:].isidentifier() else v for k, v in kws.items()}
        if name == "nc_matmul" and not isinstance(target, ast.Name):
            kws.setdefault("accumulate", "False")  # `t[...] = nc_matmul(...)` overwrites every time
        if name == "affine_select":
            pos, kws = self._affine_select(call, pos, kws)
        elif name in ("memset", "iota"):
            raise Unsupported(f"nisa.{name}: the current signature takes a destination and a pattern; "
                              "rewrite it by hand")
        if isinstance(target, ast.Name):
            site = self.sites.get((call.lineno, call.col_offset + 1))
            if site is None:
                raise Unsupported(f"nisa.{name}: its result shape is not known (the kernel was not traced "
                                  "here: give make_inputs() or --arg)")
            if not site.unique:
                raise Unsupported(f"nisa.{name}: its result shape differs between traced calls")
            self.shapes[target.id] = site
            shape, dtype = self._shape_of(call, site)
            dt = _kw(call, "dtype")
            dtype = self.render(dt) if dt is not None else dtype
            alloc = (f"{self._target_text(node, target)} = {self.nl[0]}.ndarray({shape}, dtype={dtype}, "
                     f"buffer={self.nl[0]}.{site.buffer})")
            dst = target.id
        else:
            alloc, dst = None, self._target_text(node, target)
        args = ([dst] + pos if pos else [f"dst={dst}"]) + [f"{k}={v}" for k, v in kws.items()]
        op = f"{self._func(call)}({', '.join(args)})"
        return self.lines(node, alloc, op) if alloc else op

    def _shape_of(self, call, site):
        """The destination's shape and dtype as source: an argument's when equal, else literals."""
        shape = "(" + ", ".join(str(d) for d in site.shape) + ("," if len(site.shape) == 1 else "") + ")"
        dtype = f"{self.nl[0]}.{site.dtype}"
        for a in list(call.args) + [k.value for k in call.keywords]:
            known = self.shapes.get(a.id) if isinstance(a, ast.Name) else None
            if known is not None and known.shape == site.shape:
                shape = f"{a.id}.shape"
                if known.dtype == site.dtype:
                    dtype = f"{a.id}.dtype"
                break
        return shape, dtype

    def _affine_select(self, call, pos, kws):
        pred = call.args[0] if call.args else _kw(call, "pred")
        pattern, cm, offset, cmp = ix.affine_select_args(self.env, pred)
        names = ("on_true_tile", "on_false_value")
        rest = pos[1:] + [kws.pop(n) for n in names if n in kws]
        kws.pop("pred", None)
        nl = self.nl[0]
        kws.update(cmp_op=f"{nl}.{cmp}", offset=offset)
        return [pattern, cm] + rest, kws

    def _subscript(self, node):
        elts, base = self._grid_of(node)
        text = ix.subscript(self.env, self.render(base), elts, self.mask) if self.env is not None else None
        if isinstance(base, ast.Name) and base.id in self.blocks:
            parts = self._elements(text) if text is not None else [self.render(e) for e in elts]
            p = self.blocks[base.id]
            if "..." in parts:
                raise Unsupported(f"`...` in a subscript of {base.id}, whose block dimensions move behind "
                                  "its partition dimension")
            parts.insert(0, parts.pop(p) if p < len(parts) else ":")  # fewer indices: all partitions
            return f"{base.id}[{', '.join(parts)}]"
        return text

    @staticmethod
    def _elements(text):
        inner = ast.parse(text, mode="eval").body.slice
        elts = inner.elts if isinstance(inner, ast.Tuple) else [inner]
        return [ast.get_source_segment(text, e) for e in elts]

    def _call(self, node):
        if self._par_dim(node):  # the shapes _allocation rewrites never get here
            raise Unsupported("nl.par_dim outside a literal shape tuple: the current API has no par_dim; write "
                              "the shape as a tuple with the partition dimension first")
        if self.env is not None and self._is(node, self.nisa) and id(node) not in self.statement_calls \
                and node.func.attr != "get_nc_version":
            raise Unsupported(f"nisa.{node.func.attr} inside an expression: a current-API ISA call writes its "
                              "result into a destination; assign it to a name first")
        if self._is(node, self.nki, "simulate_kernel") and node.args:
            k = node.args[0]
            grid = None
            if isinstance(k, ast.Subscript):
                k, grid = k.value, self.render(k.slice)
            rest = [self.render(a) for a in node.args[1:]] + [self.render(kw) for kw in node.keywords]
            if grid is not None:
                rest.append(f"spmd_grid={grid}")
            return f"{self.seg(node.func.value)}.simulate({self.render(k)})({', '.join(rest)})"
        if isinstance(node.func, ast.Subscript) and isinstance(node.func.value, ast.Name) \
                and node.func.value.id in self.spmd_kernels:
            grid = self.render(node.func.slice)
            args = [self.render(a) for a in node.args] + [self.render(k) for k in node.keywords]
            return f"{node.func.value.id}({', '.join(args + [f'spmd_grid=({grid})'])})"
        if self.env is not None and self._is(node, self.nl, "program_id"):
            return f"spmd_{self.seg(node.args[0]) if node.args else 0}"
        if self.env is not None and self._is(node, self.nl, "num_programs") and node.args:
            return f"spmd_grid[{self.seg(node.args[0])}]"
        if self.env is not None and _kw(node, "mask") is not None and (self._is(node, self.nl)
                                                                      or self._is(node, self.nisa)):
            pos, kws = self._args(node, mask=self._with_mask(node))
            return f"{self._func(node)}({', '.join(pos + [f'{k}={v}' for k, v in kws.items()])})"
        if isinstance(node.func, ast.Attribute) and not isinstance(node.func.value, ast.Name) and (
                self._is(node, self.nl) or self._is(node, self.nisa)):
            return self.splice(node).replace(self.seg(node.func), self._func(node), 1)
        return None

    def result(self):
        text = self.render(self.tree)
        if self.uses_nisa and not any(isinstance(n, ast.Import) and any(a.name.endswith("nki.isa")
                                                                        for a in n.names)
                                      for n in ast.walk(self.tree)):
            text = _add_import(text, f"import nki.isa as {self._nisa_alias()}")
        return text


def _add_import(text, line):
    """Adds `line` after the last top-level nki import."""
    lines = text.split("\n")
    at = max((i for i, s in enumerate(lines) if s.startswith(("import nki", "from nki"))), default=-1)
    lines.insert(at + 1, line)
    return "\n".join(lines)


def migrate_source(source, sites=None, grids=None):
    """(migrated text, notes). `sites` maps (line, col) of a legacy call to its traced
    result (_migrate_trace.Site); `grids` a kernel name to its SPMD launch grid."""
    m = Migration(source, sites, grids)
    return m.result(), m.notes
