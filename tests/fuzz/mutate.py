"""Deterministic generator of wrong NKI kernels.

The seeds are the kernels the project ships: examples/*.py, tests/kernels/*.py and the
```python blocks of docs/*.md, in both APIs: a quarter of the cases start from a kernel of
the current `nki` package (examples/*_nki.py, docs/current_api.md, ...), the rest from the
legacy `neuronxcc.nki` ones. A case is one seed with one to three AST-level mutations
applied inside its kernels (shapes, dtypes, buffers, indices, call arguments, huge
integers, recursion, ...) or at the places that launch them (argument types and counts,
grids). Case i of seed S depends only on (S, i) and the seed sources, so a failing case
can be regenerated from its number alone.

A case is a dict: id, base (where the seed comes from), mode ("main": run the file as
__main__; "test": run the module, then call test function `test` with its first
parametrization), mutations (one line each, with the original line number) and source.
"""
import ast
import random
import re
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "python"))
from test_docs import python_blocks  # noqa: E402  (the docs' own block extractor)

# Integers that sit on the edges nkic must guard: zero, negatives, partition and
# free-size limits, 32/64-bit wrap-around and integers no C++ integer can hold.
INTS = ["0", "-1", "1", "3", "127", "129", "513", "65536", "2**31", "2**32", "2**63 - 1",
        "2**63", "2**64", "-2**63 - 1", "10**30"]
# Values of the wrong kind for any argument.
VALUES = ["None", "2**63", "-2**63 - 1", "10**30", "-1", "1.5", "float('nan')", "'x'", "[]", "()",
          "{}", "object()", "lambda: 0", "True", "nl.sbuf", "np.zeros((2, 2))",
          "(lambda l: (l.append(l), l)[1])([])"]  # a list that contains itself
DTYPES = ["nl.int8", "nl.uint8", "nl.int32", "nl.uint32", "nl.float16", "nl.bfloat16", "nl.float32",
          "nl.float8_e4m3", "nl.float8_e5m2", "nl.bool_", "nl.tfloat32", "np.float64",
          "np.complex64", "np.int64", "np.object_", "'float32'", "'nonsense'", "None", "3",
          "nl.float32.min"]
BUFFERS = ["nl.sbuf", "nl.psum", "nl.hbm", "nl.shared_hbm", "nl.private_hbm", "None", "'sbuf'", "7",
           "nl.float32"]
INDICES = ["None", "...", "0", "-1", "2**63", "-2**63 - 1", "1.5", "'a'", "(0, 0, 0, 0)",
           "slice(None, None, 0)", "slice(0, 0)", "slice(None, None, -1)", "slice(0, 2**63, 2**63)",
           "[0, 1]", "nl.arange(128)", "nl.arange(128)[:, :]", "nl.arange(2**63)[:, None]",
           "nl.arange(0)[:, None]", "nl.arange(-5)[None, :]", "(nl.arange(128)[:, None], None)"]
# Arguments a kernel may be launched with instead of the right numpy arrays.
CALL_VALUES = ["None", "0", "2**63", "-1", "1.5", "'x'", "[1, 2]", "np.float64(1.0)",
               "np.zeros((0,), np.float32)", "np.zeros((128,), np.float64)",
               "np.ones((128, 512), np.complex64)", "np.ones((4, 4), object)",
               "np.ones((128, 512), np.float32)[:, ::2]", "np.ones((128, 512), np.float32).T",
               "np.ones((1,) * 30, np.float32)", "np.bool_(True)", "{'a': 1}",
               "np.ones((128, 512), '>f4')", "np.empty((0, 512), np.float32)",
               "np.array(2**63, dtype=object)", "np.ones((128, 64), np.float16)"]
CALL_WRAPS = ["{}.astype(np.float64)", "{}[None]", "{}.T", "{}[:1]", "{}.reshape(-1)",
              "{}.astype(np.int64)", "{}.view(np.uint8)", "[{}]"]
GRIDS = ["0", "-1", "2**63", "(1, 2, 3, 4)", "'x'", "1.5", "((2,),)", "(0, 2)", "(2**31, 2**31)", "None"]
RANGES = ["nl.affine_range", "nl.sequential_range", "nl.static_range", "range"]
BINOPS = [ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.MatMult,
          ast.LShift, ast.RShift, ast.BitAnd, ast.BitOr, ast.BitXor]
CMPOPS = [ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq]
# Kernel tests that take over a second unmutated (large matmuls): they would dominate the run.
SLOW_TESTS = {"test_blocked_random", "test_blocked_integers_exact", "test_tiled_random", "test_hoisted_random",
              "test_multi_psum_random_fp32", "test_multi_psum_integers_exact", "test_tiled_integers_exact",
              "test_blocked_accumulation_is_not_a_race", "test_hoisted_integers_exact",
              "test_psum_accumulation_in_affine_range_is_not_a_race"}
_LAUNCHERS = {"simulate_kernel", "baremetal", "benchmark", "profile"}
_API_MODULES = ("nl", "nisa", "nki")


def _expr(text):
    node = ast.parse(text, mode="eval").body
    if all(isinstance(n, (ast.Constant, ast.BinOp, ast.UnaryOp, ast.operator, ast.unaryop)) for n in ast.walk(node)):
        # 2**63 as one constant: a later mutation of its 63 must not make 2**2**32.
        return ast.Constant(eval(text))
    return node


def _line(node):
    """The node's line in the seed; nodes an earlier mutation made have none."""
    return getattr(node, "lineno", "?")


def _src(node):
    text = ast.unparse(node)
    return text if len(text) <= 60 else text[:57] + "..."


def _is_kernel(fn):
    """Kernels are the functions nki decorates (jit, trace, baremetal, ...)."""
    for d in fn.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) \
                and target.value.id == "nki" and target.attr != "dont_trace":
            return True
    return False


def _simulated(node):
    """The kernel expression of `nki.simulate(kernel)`, the current API's launcher, or None."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "simulate" \
            and node.args:
        return node.args[0]
    return None


def _api_call(node):
    """'nl.add' for a call of an nl/nisa/nki function, else None."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and isinstance(node.func.value, ast.Name) and node.func.value.id in _API_MODULES:
        return f"{node.func.value.id}.{node.func.attr}"
    return None


class _Seed:
    """One parsed seed: its kernels, the calls that launch them, its runnable tests."""

    def __init__(self, base, source, mode):
        self.base, self.source, self.mode = base, source, mode
        self.tree = ast.parse(source)
        top = [n for n in self.tree.body if isinstance(n, ast.FunctionDef)]
        self.tests = [f.name for f in top if mode == "test" and _runnable_test(f)]
        self.refs = _references(self.tree, top)
        nodes = list(ast.walk(self.tree))
        index = {id(n): i for i, n in enumerate(nodes)}
        kernels = [f for f in nodes if isinstance(f, ast.FunctionDef) and _is_kernel(f)]
        names = {k.name for k in kernels}
        # Launch sites: kernel(...), kernel[grid](...), nki.simulate_kernel(kernel, ...),
        # nki.simulate(kernel)(...), with the function they are in (None: module level).
        launches = []
        for fn in [f for f in nodes if isinstance(f, ast.FunctionDef) and not _is_kernel(f)] + [self.tree]:
            for node in (n for stmt in fn.body if not isinstance(stmt, ast.FunctionDef) for n in ast.walk(stmt)):
                f = getattr(node, "func", None) if isinstance(node, ast.Call) else None
                if isinstance(f, ast.Attribute) and f.attr in _LAUNCHERS or _simulated(f) is not None or \
                        isinstance(f, ast.Name) and f.id in names or \
                        isinstance(f, ast.Subscript) and isinstance(f.value, ast.Name) and f.value.id in names:
                    launches.append((index[id(node)], fn.name if isinstance(fn, ast.FunctionDef) else None))
        # Positions in ast.walk order: the same nodes of a fresh parse of the same source.
        self.kernel_at = [index[id(k)] for k in kernels]
        self.launch_at = launches

    def fresh(self):
        """A new tree of this seed to mutate: (tree, kernels, launches)."""
        tree = ast.parse(self.source)
        nodes = list(ast.walk(tree))
        return tree, [nodes[i] for i in self.kernel_at], [(nodes[i], owner) for i, owner in self.launch_at]


class _Case:
    """The tree being mutated, its kernels and launch sites, and a parent lookup."""

    def __init__(self, seed):
        self.tree, self.kernels, self.launches = seed.fresh()
        self.launched_from, self._parents = None, {}

    def parent(self, node):
        if node not in self._parents:  # new nodes from an earlier mutation: look again
            self._parents = {c: p for p in ast.walk(self.tree) for c in ast.iter_child_nodes(p)}
        return self._parents[node]


def _runnable_test(fn):
    """A test_* function whose arguments all come from @pytest.mark.parametrize."""
    if not fn.name.startswith("test_") or fn.name in SLOW_TESTS:
        return False
    given = set()
    for d in fn.decorator_list:
        if isinstance(d, ast.Call) and isinstance(d.func, ast.Attribute) and d.func.attr == "parametrize" \
                and d.args and isinstance(d.args[0], ast.Constant) and isinstance(d.args[0].value, str):
            given |= {a.strip() for a in d.args[0].value.split(",")}
        elif "fixture" in ast.unparse(d) or "skip" in ast.unparse(d):
            return False
    return {a.arg for a in fn.args.args} <= given


def _references(tree, top):
    """Names each top-level function mentions, through module-level assignments (KERNELS = [...])."""
    assigned = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign):
            for t in stmt.targets:
                if isinstance(t, ast.Name):
                    assigned[t.id] = {n.id for n in ast.walk(stmt.value) if isinstance(n, ast.Name)}
    refs = {}
    for fn in top:
        names = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)}
        for n in list(names):
            names |= assigned.get(n, set())
        refs[fn.name] = names
    return refs


def seeds():
    out = []
    for path in sorted((ROOT / "examples").glob("*.py")):
        out.append(_Seed(f"examples/{path.name}", path.read_text(), "main"))
    for path in sorted((ROOT / "tests" / "kernels").glob("test_*.py")):
        out.append(_Seed(f"tests/kernels/{path.name}", path.read_text(), "test"))
    for md in sorted((ROOT / "docs").glob("*.md")):
        for index, line, code in python_blocks(md):
            out.append(_Seed(f"docs/{md.name}:{line}", code, "main"))
    return [s for s in out if s.kernel_at and (s.mode == "main" or s.tests)]


# ---- mutation operators: each returns a description, or None when it does not apply.

def _nodes(kernel, kind):
    return [n for n in ast.walk(kernel) if isinstance(n, kind)]


def _replace(case, old, new):
    """Put `new` where `old` is in the tree."""
    parent = case.parent(old)
    for field, value in ast.iter_fields(parent):
        if value is old:
            setattr(parent, field, new)
            return
        if isinstance(value, list):
            for i, v in enumerate(value):
                if v is old:
                    value[i] = new
                    return
    raise AssertionError("node not found in its parent")


def m_int(rng, case, kernel):
    # Not an exponent: 2 ** 2**64 would hang Python itself, not nkic.
    consts = [n for n in _nodes(kernel, ast.Constant) if type(n.value) is int and not (
        isinstance(case.parent(n), ast.BinOp) and isinstance(case.parent(n).op, ast.Pow))]
    if not consts:
        return None
    node, new = rng.choice(consts), rng.choice(INTS)
    _replace(case, node, _expr(new))
    return f"int L{_line(node)}: {node.value} -> {new}"


def m_shape(rng, case, kernel):
    tuples = [n for n in _nodes(kernel, (ast.Tuple, ast.List)) if isinstance(n.ctx, ast.Load)
              and not isinstance(case.parent(n), ast.Subscript) and n.elts]
    if not tuples:
        return None
    node = rng.choice(tuples)
    before, op = _src(node), rng.randrange(4)
    if op == 0 and len(node.elts) > 1:
        del node.elts[rng.randrange(len(node.elts))]
    elif op == 1:
        node.elts.insert(rng.randrange(len(node.elts) + 1), _expr(rng.choice(INTS)))
    elif op == 2:
        node.elts[rng.randrange(len(node.elts))] = _expr(rng.choice(INTS + VALUES))
    else:
        node.elts = [_expr(rng.choice(INTS)) for _ in range(rng.choice([0, 5, 9]))]
    return f"shape L{_line(node)}: {before} -> {_src(node)}"


def m_dtype(rng, case, kernel):
    sites = [k.value for c in _nodes(kernel, ast.Call) for k in c.keywords if k.arg == "dtype"]
    sites += [n for n in _nodes(kernel, ast.Attribute) if n.attr == "dtype" or n.attr in
              {"float32", "bfloat16", "float16", "int32", "int8", "uint8", "bool_", "float8_e4m3"}]
    if not sites:
        return None
    node, new = rng.choice(sites), rng.choice(DTYPES)
    _replace(case, node, _expr(new))
    return f"dtype L{_line(node)}: {_src(node)} -> {new}"


def m_buffer(rng, case, kernel):
    calls = [c for c in _nodes(kernel, ast.Call) if _api_call(c) in
             {"nl.ndarray", "nl.zeros", "nl.ones", "nl.full", "nl.empty_like", "nl.zeros_like", "nl.load",
              "nl.copy", "nl.arange"} or any(k.arg == "buffer" for k in c.keywords)]
    if not calls:
        return None
    call = rng.choice(calls)
    kws = [k for k in call.keywords if k.arg == "buffer"]
    if kws and rng.random() < 0.3:
        call.keywords.remove(kws[0])
        return f"buffer L{_line(call)}: dropped from {_api_call(call)}"
    new = rng.choice(BUFFERS)
    if kws:
        kws[0].value = _expr(new)
    else:
        call.keywords.append(ast.keyword(arg="buffer", value=_expr(new)))
    return f"buffer L{_line(call)}: {_api_call(call)}(buffer={new})"


def m_index(rng, case, kernel):
    subs = [s for s in _nodes(kernel, ast.Subscript) if isinstance(s.ctx, ast.Load)]
    if not subs:
        return None
    node = rng.choice(subs)
    before = _src(node)
    elts = node.slice.elts if isinstance(node.slice, ast.Tuple) else None
    op = rng.randrange(4)
    if elts and op == 0 and len(elts) > 1:
        i = rng.randrange(len(elts))
        elts.insert(i, elts.pop(rng.randrange(len(elts))))
        if len(elts) > 1:
            elts[0], elts[-1] = elts[-1], elts[0]
    elif elts and op == 1:
        elts.insert(rng.randrange(len(elts) + 1), ast.Slice() if rng.random() < 0.5 else _expr(rng.choice(INDICES)))
    elif elts and op == 2:
        elts[rng.randrange(len(elts))] = _expr(rng.choice(INDICES))
    else:
        node.slice = _expr(rng.choice(INDICES))
    return f"index L{_line(node)}: {before} -> {_src(node)}"


def m_call_args(rng, case, kernel):
    calls = [c for c in _nodes(kernel, ast.Call) if _api_call(c)]
    if not calls:
        return None
    call = rng.choice(calls)
    name, op = _api_call(call), rng.randrange(5)
    if op == 0 and call.args:
        i = rng.randrange(len(call.args))
        del call.args[i]
        return f"args L{_line(call)}: {name} drops positional {i}"
    if op == 1 and call.keywords:
        k = call.keywords.pop(rng.randrange(len(call.keywords)))
        return f"args L{_line(call)}: {name} drops {k.arg}="
    if op == 2:
        call.args.append(_expr(rng.choice(VALUES)) if rng.random() < 0.7 or not call.args else call.args[0])
        return f"args L{_line(call)}: {name} gets extra positional {_src(call.args[-1])}"
    if op == 3:
        call.keywords.append(ast.keyword(arg=rng.choice(["bogus", "mask", "dtype", "axis", "name"]),
                                         value=_expr(rng.choice(VALUES))))
        if len({k.arg for k in call.keywords}) < len(call.keywords):
            call.keywords.pop()
            return None
        return f"args L{_line(call)}: {name}({call.keywords[-1].arg}={_src(call.keywords[-1].value)})"
    slots = [(call.args, i) for i in range(len(call.args))] + [(call.keywords, i) for i in range(len(call.keywords))]
    if not slots:
        return None
    where, i = rng.choice(slots)
    new = _expr(rng.choice(VALUES))
    if where is call.args:
        where[i] = new
    else:
        where[i].value = new
    return f"args L{_line(call)}: {name} argument -> {_src(new)}"


def m_api_swap(rng, case, kernel):
    calls = [c for c in _nodes(kernel, ast.Call) if _api_call(c) and _api_call(c)[:3] != "nki"]
    if not calls:
        return None
    call = rng.choice(calls)
    before, call.func.attr = _api_call(call), rng.choice(_api_names(call.func.value.id))
    return f"api L{_line(call)}: {before} -> {_api_call(call)}"


_API_NAMES = {}


def _api_names(module):
    """The functions of nl / nisa the seeds call, to swap one for another."""
    if module not in _API_NAMES:
        _API_NAMES[module] = sorted({name for s in _ALL_SEEDS
                                     for name in re.findall(rf"\b{module}\.(\w+)\(", s.source)})
    return _API_NAMES[module]


def m_recursion(rng, case, kernel):
    arg = kernel.args.args[0].arg if kernel.args.args else "0"
    body = rng.choice([
        f"def _fuzz_rec(x):\n    return _fuzz_rec(x)\n_fuzz_rec({arg})",
        f"def _fuzz_rec(x):\n    return _fuzz_rec(x + 1)\n_fuzz_rec({arg})",
        f"{kernel.name}({', '.join(a.arg for a in kernel.args.args)})",  # the kernel calls itself
        f"_fuzz_t = {arg}\nfor _ in range(3000):\n    _fuzz_t = (_fuzz_t, _fuzz_t)\nnl.ndarray(_fuzz_t, dtype=nl.float32)",
    ])
    stmts = ast.parse(body).body
    at = rng.randrange(len(kernel.body) + 1)
    kernel.body[at:at] = stmts
    return f"recursion L{_line(kernel)}: {kernel.name} runs `{body.splitlines()[-1]}`"


def m_stmt(rng, case, kernel):
    blocks = [n.body for n in ast.walk(kernel) if isinstance(n, (ast.FunctionDef, ast.For, ast.While, ast.If,
                                                                   ast.With)) and len(n.body) > 1]
    if not blocks:
        return None
    block = rng.choice(blocks)
    i, op = rng.randrange(len(block)), rng.randrange(3)
    line = _line(block[i])
    if op == 0:
        del block[i]
        return f"stmt L{line}: deleted"
    if op == 1:
        block.insert(i, ast.parse(ast.unparse(block[i])).body[0])
        return f"stmt L{line}: duplicated"
    j = (i + 1) % len(block)
    block[i], block[j] = block[j], block[i]
    return f"stmt L{line}: swapped with the next statement"


def m_loop(rng, case, kernel):
    loops = [f for f in _nodes(kernel, ast.For) if isinstance(f.iter, ast.Call)]
    if not loops:
        return None
    loop = rng.choice(loops)
    before = _src(loop.iter)
    if rng.random() < 0.5:
        loop.iter.func = _expr(rng.choice(RANGES))
    else:
        loop.iter.args = [_expr(rng.choice(INTS + ["1.5", "-5", "'3'", "None"])) for _ in range(rng.choice([1, 2, 3, 4]))]
    return f"loop L{_line(loop)}: {before} -> {_src(loop.iter)}"


def m_operator(rng, case, kernel):
    ops = _nodes(kernel, (ast.BinOp, ast.Compare))
    if not ops:
        return None
    node = rng.choice(ops)
    before = _src(node)
    if isinstance(node, ast.BinOp):
        if rng.random() < 0.6:
            node.op = rng.choice(BINOPS)()
        else:
            setattr(node, rng.choice(["left", "right"]), _expr(rng.choice(VALUES)))
    else:
        node.ops = [rng.choice(CMPOPS)() for _ in node.ops]
    return f"operator L{_line(node)}: {before} -> {_src(node)}"


def m_launch(rng, case, kernel):
    if not case.launches:
        return None
    call, case.launched_from = rng.choice(case.launches)
    op, before = rng.randrange(5), _src(call)
    skip = 1 if isinstance(call.func, ast.Attribute) and call.func.attr in _LAUNCHERS else 0
    if len(call.args) < skip:  # a launcher given its kernel by keyword, or by nothing
        return None
    args = call.args[skip:]
    grid = call.args[0] if skip else _simulated(call.func) or call.func
    if op == 0 and isinstance(grid, ast.Subscript):
        grid.slice = _expr(rng.choice(GRIDS))
    elif op == 1 and args:
        del call.args[skip + rng.randrange(len(args))]
    elif op == 2:
        call.args.append(_expr(rng.choice(CALL_VALUES)))
    elif op == 3 and args:
        i = skip + rng.randrange(len(args))
        call.args[i] = _expr(rng.choice(CALL_WRAPS).format(f"({ast.unparse(call.args[i])})"))
    elif args:
        call.args[skip + rng.randrange(len(args))] = _expr(rng.choice(CALL_VALUES))
    else:
        call.keywords.append(ast.keyword(arg="bogus", value=_expr("1")))
    return f"launch L{_line(call)}: {before} -> {_src(call)}"


OPERATORS = [m_int, m_shape, m_dtype, m_buffer, m_index, m_call_args, m_api_swap, m_recursion, m_stmt,
             m_loop, m_operator, m_launch]
_ALL_SEEDS, _CURRENT, _BIG, _DOCS = [], [], [], []
CURRENT_SHARE = 0.25  # of the cases: current-API seeds are fewer than the legacy ones, not less used


def _mutate(rng, seed):
    """(source, mutations, names of the top-level functions touched) or None."""
    fresh = _Case(seed)
    done, touched = [], set()
    for _ in range(rng.choice([1, 1, 2, 3])):
        for _attempt in range(8):
            kernel = rng.choice(fresh.kernels)
            op = rng.choice(OPERATORS)
            try:
                what = op(rng, fresh, kernel)
            except SyntaxError:  # a value that does not fit where it went, e.g. (*args).T
                what = None
            if what:
                done.append(what)
                touched.add(kernel.name)
                touched |= {fresh.launched_from} if op is m_launch and fresh.launched_from else set()
                break
    if not done:
        return None
    ast.fix_missing_locations(fresh.tree)
    source = ast.unparse(fresh.tree) + "\n"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "tuple indices must be integers": the point of the case
            compile(source, "<fuzz>", "exec")
    except (SyntaxError, ValueError):
        return None
    return source, done, touched


def generate(seed, count, start=0):
    """Cases start .. start+count-1 of the given seed."""
    if not _ALL_SEEDS:
        _ALL_SEEDS.extend(seeds())
        current = [s for s in _ALL_SEEDS if re.search(r"^\s*(import|from) nki\b", s.source, re.M)]
        _CURRENT.extend(current)
        _BIG.extend(s for s in _ALL_SEEDS if s not in current and not s.base.startswith("docs/"))
        _DOCS.extend(s for s in _ALL_SEEDS if s not in current and s.base.startswith("docs/"))
    cases = []
    for i in range(start, start + count):
        rng = random.Random(f"nkic-fuzz:{seed}:{i}")
        for _attempt in range(20):
            # Of the legacy ones, a third from the examples and kernel tests: fewer than the
            # docs' blocks but bigger.
            pick = rng.random()
            base = rng.choice(_CURRENT if pick < CURRENT_SHARE else _BIG if pick < 0.5 else _DOCS)
            made = _mutate(rng, base)
            if made:
                break
        source, mutations, touched = made
        case = {"id": i, "seed": seed, "base": base.base, "mode": base.mode, "mutations": mutations,
                "source": source}
        if base.mode == "test":
            hit = [t for t in base.tests if t in touched or base.refs[t] & touched]
            case["test"] = rng.choice(hit or base.tests)
        cases.append(case)
    return cases
