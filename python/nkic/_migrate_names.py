"""How a legacy file names nki, nki.language and nki.isa for `nkic migrate`: the aliases
it imports, the module paths it may call through (`nki.isa.X`, `neuronxcc.nki.language.X`),
and its decorators. A mixin of _migrate.Migration (self.tree, self.seg, self.nl, ...)."""
import ast

DROP = object()  # a rendered statement or decorator that disappears with its line
# What the current nki.jit takes of the legacy decorators' keywords.
_JIT_KEEPS = ("additional_compile_opt", "experimental_flags", "show_compiler_tb", "debug_kernel",
              "enable_out_of_bound_check")


def dotted(node):
    """'a.b.c' for a chain of attributes on a name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join([node.id] + parts[::-1]) if isinstance(node, ast.Name) else None


def kw(call, name):
    return next((k.value for k in call.keywords if k.arg == name), None)


class Names:
    """The naming rules of a Migration."""

    def _aliases(self):
        """The names the file gives nki.language and nki.isa (the first one is what new
        code writes), nki's, and the module paths that stand for the first two."""
        nl, nisa = [], []
        for n in ast.walk(self.tree):
            if isinstance(n, ast.Import):
                for a in n.names:
                    if a.name.endswith("nki.language"):
                        nl.append(a.asname or a.name)
                    elif a.name.endswith("nki.isa"):
                        nisa.append(a.asname or a.name)
        nl, nisa, nki = nl + ["nl"], nisa + ["nisa"], ["nki"]
        # nl.X and nisa.X spelled through a module path (`nki.isa.X`, `neuronxcc.nki.isa.X`)
        paths = {id(nl): {f"{n}.language" for n in nki} | {"neuronxcc.nki.language"},
                 id(nisa): {f"{n}.isa" for n in nki} | {"neuronxcc.nki.isa"}}
        return nl, nisa, nki, paths

    def _par_dim(self, node):
        """`nl.par_dim(...)`, or `par_dim(...)` imported from nki.language."""
        if not isinstance(node, ast.Call):
            return False
        if isinstance(node.func, ast.Name):
            return node.func.id == "par_dim" and any(
                isinstance(n, ast.ImportFrom) and (n.module or "").endswith("nki.language")
                and any(a.name == "par_dim" and (a.asname or a.name) == "par_dim" for a in n.names)
                for n in ast.walk(self.tree))
        return self._is(node, self.nl, "par_dim")

    def _is(self, call, names, attr=None):
        f = call.func if isinstance(call, ast.Call) else call
        if not isinstance(f, ast.Attribute) or (attr is not None and f.attr != attr):
            return False
        if isinstance(f.value, ast.Name):
            return f.value.id in names
        return dotted(f.value) in self.paths.get(id(names), ())

    def _func(self, call):
        """The called function as the migrated file writes it: a module path (`nki.isa.X`,
        `neuronxcc.nki.language.X`) becomes the file's alias (`nisa.X`, `nl.X`)."""
        f = call.func
        if isinstance(f.value, ast.Name):
            return self.seg(f)
        if self._is(call, self.nisa):
            self.uses_nisa = True
            return f"{self._nisa_alias()}.{f.attr}"
        return f"{self.nl[0]}.{f.attr}"

    def _nisa_alias(self):
        return self.nisa[0]

    def _decorator(self, d):
        """A legacy decorator in the current API: `@nki.trace` / `nki.jit(mode="trace")`
        helpers become plain functions; `@nki.baremetal(...)` kernels `@nki.jit`; the
        `nki.compiler` scheduling directives go (the current API has none of them); of the
        keywords, what nki.jit takes stays."""
        call = d if isinstance(d, ast.Call) else None
        target = call.func if call else d
        path = dotted(target) or ""
        if any(path.startswith(f"{n}.compiler.") for n in self.nki):
            return DROP
        if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                and target.value.id in self.nki):
            return None
        if target.attr == "trace":
            return DROP
        if target.attr not in ("jit", "baremetal"):
            return None
        jit = f"{target.value.id}.jit"
        if call is None:
            return jit
        mode = kw(call, "mode")
        if isinstance(mode, ast.Constant) and mode.value == "trace":
            return DROP
        kept = [self.seg(a) for a in call.args] + [self.seg(k) for k in call.keywords if k.arg in _JIT_KEEPS]
        return jit + (f"({', '.join(kept)})" if kept else "")

