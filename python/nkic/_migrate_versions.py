"""`nkic migrate`'s second pass: the forms of older `nki` versions that the newest one removed
(docs/current_api.md#which-nki), rewritten where the rewrite is mechanical: nki 0.2's
`tensor_copy(dtype=)`, `platform_target=`, builtin `sbuf.view(...)` and one-program
`kernel[(1,)]` launches; 0.6's `for i in nl.dynamic_range(...)` and `while reg:` loops, whose
bodies become the functions nl.fori_loop and nl.while_loop call. Anything else is kept and
marked, as the legacy rules do."""
import ast

from ._migrate import Migration
from ._migrate_index import Unsupported
from ._migrate_names import dotted

# 0.2's builtin buffers and the nl buffer each allocates in.
_BUILTIN_BUFFERS = {"sbuf": "sbuf", "psum": "psum", "hbm": "shared_hbm"}
_LEAVES = (ast.Break, ast.Continue, ast.Return, ast.Yield, ast.YieldFrom)


class NewestApi(Migration):
    """One current-API file: render() gives it with the removed forms rewritten."""

    def __init__(self, source):
        super().__init__(source)
        self.parents = {id(c): n for n in ast.walk(self.tree) for c in ast.iter_child_nodes(n)}
        self.used = {n.id for n in ast.walk(self.tree) if isinstance(n, ast.Name)}
        self.assigned = {n.id for n in ast.walk(self.tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}

    def rewrite(self, node):
        try:
            if isinstance(node, ast.For):
                return self._dynamic_range(node)
            if isinstance(node, ast.While):
                return self._while_register(node)
            if isinstance(node, ast.Call):
                return self._call(node)
        except Unsupported as e:
            if isinstance(node, ast.stmt):
                return self.mark(node, str(e))
            raise
        return None

    # --- runtime loops (removed in 0.7) ----------------------------------------------------
    def _dynamic_range(self, node):
        it = node.iter
        if not (isinstance(it, ast.Call) and self._is(it, self.nl, "dynamic_range")):
            return None
        if it.keywords or not 1 <= len(it.args) <= 3 or not isinstance(node.target, ast.Name):
            raise Unsupported("nl.dynamic_range (removed in nki 0.7) with keywords or a tuple target: rewrite it "
                              "as nl.fori_loop(lower, upper, body) by hand")
        args = [self.render(a) for a in it.args]
        lower, upper = (["0"] + args)[-2:] if len(args) == 1 else args[:2]
        step = f", step={args[2]}" if len(args) == 3 else ""
        name = self._fresh(f"loop_body_{node.target.id}")
        body = self._body(node, "nl.dynamic_range", "nl.fori_loop")
        return self.lines(node, f"def {name}({node.target.id}):" + body,
                          f"{self.nl[0]}.fori_loop({lower}, {upper}, {name}{step})")

    def _while_register(self, node):
        reg = node.test
        if not (isinstance(reg, ast.Name) and reg.id in self._registers(node)):
            return None
        name = self._fresh("loop_body")
        body = self._body(node, "`while reg:`", "nl.while_loop")
        inner = " " * (node.body[0].col_offset)
        return self.lines(node, f"def {name}({reg.id}):" + body + f"\n{inner}return {reg.id}",
                          f"{self.nl[0]}.while_loop({reg.id}, {name})")

    def _registers(self, node):
        """Names the enclosing function binds to nisa.register_alloc(...)."""
        return {t.id for n in ast.walk(self._scope(node)) if isinstance(n, ast.Assign)
                and isinstance(n.value, ast.Call) and self._is(n.value, self.nisa, "register_alloc")
                for t in n.targets if isinstance(t, ast.Name)}

    def _scope(self, node):
        while not isinstance(node, (ast.FunctionDef, ast.Module)):
            node = self.parents[id(node)]
        return node

    def _body(self, loop, form, instead):
        """The loop's body, rendered, as the body of a function at the loop's indentation (a
        function's names are its own: state the code after the loop reads must not be set in it)."""
        why = f"{form} (removed in nki 0.7) cannot become {instead} mechanically: "
        if loop.orelse or loop.body[0].lineno == loop.lineno:
            raise Unsupported(why + "it has an else clause or a one-line body; rewrite it by hand")
        inner = [n for s in loop.body for n in ast.walk(s)]
        if any(isinstance(n, _LEAVES) for n in inner):
            raise Unsupported(why + "its body leaves the loop (break, continue, return); rewrite it by hand")
        inside = {id(n) for n in ast.walk(loop)}
        stored = {n.id for n in inner if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        read = {n.id for n in ast.walk(self._scope(loop)) if isinstance(n, ast.Name) and id(n) not in inside}
        shared = sorted(stored & read)
        if shared:
            raise Unsupported(why + f"its body sets {', '.join(shared)}, which the code around it uses; keep loop "
                              "state in tensors and rewrite it by hand")
        start, _ = self.span(loop)
        first = self._line_starts[loop.body[0].lineno - 1]
        return "\n" + self.splice(loop)[first - start:]

    def _fresh(self, name):
        while name in self.used:
            name += "_"
        self.used.add(name)
        return name

    # --- nki 0.2's calls (removed in 0.3) -----------------------------------------------------
    def _call(self, node):
        if self._is(node, self.nisa, "tensor_copy") and any(k.arg == "dtype" for k in node.keywords):
            return self._without(node, "dtype")  # the destination's dtype decides
        if (dotted(node.func) or "") in {f"{n}.jit" for n in self.nki} and any(
                k.arg == "platform_target" for k in node.keywords):
            return self._without(node, "platform_target")  # NEURON_PLATFORM_TARGET_OVERRIDE names it
        f = node.func
        if isinstance(f, ast.Subscript) and isinstance(f.slice, ast.Tuple):
            sizes = f.slice.elts
            if not all(isinstance(s, ast.Constant) and s.value == 1 for s in sizes):
                raise Unsupported(f"{self.seg(f)}: nki 0.2's launch grid (removed in nki 0.3) runs several "
                                  "programs; loop over them inside the kernel and call it once")
            return f"{self.render(f.value)}({self._arguments(node)})"
        if isinstance(f, ast.Attribute) and f.attr == "view" and isinstance(f.value, ast.Name) \
                and f.value.id in _BUILTIN_BUFFERS and f.value.id not in self.assigned:
            given = {k.arg: self.render(k.value) for k in node.keywords}
            given.update(zip(("dtype", "shape"), (self.render(a) for a in node.args)))
            if set(given) != {"dtype", "shape"}:
                raise Unsupported(f"{self.seg(node)}: rewrite it as nl.ndarray(shape, dtype, buffer=...) by hand")
            nl = self.nl[0]
            return f"{nl}.ndarray({given['shape']}, dtype={given['dtype']}, buffer={nl}.{_BUILTIN_BUFFERS[f.value.id]})"
        return None

    def _without(self, call, keyword):
        rest = self._arguments(call, keyword)
        if not rest and isinstance(self.parents[id(call)], ast.FunctionDef):
            return self.render(call.func)  # `@nki.jit(platform_target=...)` becomes `@nki.jit`
        return f"{self.render(call.func)}({rest})"

    def _arguments(self, call, drop=None):
        return ", ".join([self.render(a) for a in call.args] +
                         [self.render(k) for k in call.keywords if k.arg != drop])


def migrate_to_newest(source):
    """(text, notes) of a current-API file with the removed forms rewritten."""
    m = NewestApi(source)
    return m.result(), m.notes
