"""No false rejection: every kernel of the repository's own kernel suite and
examples is legal on trn1 and on trn2.

Discovery convention (conftest-free):

* tests/kernels/test_*.py — a kernel is covered when the module's own tests
  trace it. The module's tests are run once, in a child pytest process, with
  nkic's TraceKernel.trace wrapped by a recorder: each distinct traced call
  (kernel, launch grid, argument shapes/dtypes and static arguments) is then
  re-traced with platform_target trn1 and trn2 and the verdict recorded. The
  kernels are therefore called exactly the way their module's tests call them
  (including each module's own make_inputs(...) arguments and SPMD grids). The
  outcome of the module's tests themselves is not judged here.
  Every module-level TraceKernel (an @nki.jit / @nki.trace object) of a module
  must have been traced at least once by that module's tests (kernels are
  identified by their function's name, so aliases such as
  `k_sim = nki.jit(mode="simulation")(k)` count as `k`).
  The kernels under tests/kernels are all meant to be legal: a kernel that
  demonstrates a rejection belongs in a tests/python error test instead.
* examples/*.py — each example defines one kernel and make_inputs(); it is
  checked with `bin/nkic check examples/X.py --target trn1,trn2`.
"""
import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
THIS_DIR = Path(__file__).resolve().parent
KERNEL_MODULES = sorted(p.name for p in (ROOT / "tests" / "kernels").glob("test_*.py"))
EXAMPLES = sorted(p.name for p in (ROOT / "examples").glob("*.py"))
TARGETS = ("trn1", "trn2")


# ---------------------------------------------------------------- recorder (runs in the child)

def _describe(value):
    import numpy as np
    if isinstance(value, np.ndarray):
        return f"{value.dtype}{list(value.shape)}"
    return repr(value)


def _record_main(out_path, paths):
    """Child entry point: run `paths` under pytest with TraceKernel.trace recorded."""
    import numpy as np  # noqa: F401
    import pytest as child_pytest

    from nkic import _kernel
    from nkic._core import core

    records = {}
    original = _kernel.TraceKernel.trace

    def verdict(kernel, target, grid, args, kwargs):
        saved = kernel.target
        kernel.target = target
        try:
            original(kernel, grid, args, kwargs)
            return "ok"
        except core.NKIError as e:
            return f"{e.code}: {e.message} at {e.file}:{e.line}:{e.col}"
        except Exception as e:  # noqa: BLE001 - any failure to trace is a rejection
            return f"{type(e).__name__}: {e}"
        finally:
            kernel.target = saved

    def recording_trace(self, grid, args, kwargs):
        try:
            return original(self, grid, args, kwargs)
        finally:
            try:
                module = os.path.realpath(inspect.getsourcefile(self.func) or "?")
            except TypeError:
                module = "?"
            key = json.dumps([module, self.__name__, repr(grid), [_describe(a) for a in args],
                              sorted((k, _describe(v)) for k, v in kwargs.items())])
            if key not in records and not core.trace_active():
                records[key] = {"module": module, "kernel": self.__name__, "call": key,
                                **{t: verdict(self, t, grid, args, kwargs) for t in TARGETS}}

    _kernel.TraceKernel.trace = recording_trace

    kernels = {}  # module path -> names of its module-level TraceKernels

    class Collector:
        def pytest_collection_modifyitems(self, items):
            for item in items:
                mod = getattr(item, "module", None)
                if mod is None:
                    continue
                path = os.path.realpath(mod.__file__)
                # Aliases (k_jit = nki.jit(k), k_sim = nki.jit(mode=...)(k)) share the function's name.
                kernels[path] = sorted({v.__name__ for v in vars(mod).values()
                                        if isinstance(v, _kernel.TraceKernel)
                                        and os.path.realpath(inspect.getsourcefile(v.func)) == path})

    child_pytest.main(["-q", "-p", "no:cacheprovider", "-o", "addopts=", "--rootdir", str(ROOT), *paths],
                      plugins=[Collector()])
    with open(out_path, "w") as f:
        json.dump({"records": list(records.values()), "kernels": kernels}, f)
    return 0


# ---------------------------------------------------------------- parent

@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    out = tmp_path_factory.mktemp("legal_suite") / "records.json"
    paths = [str(ROOT / "tests" / "kernels" / m) for m in KERNEL_MODULES]
    code = (f"import sys; sys.path.insert(0, {str(THIS_DIR)!r}); import test_sema_legal_suite as s; "
            f"sys.exit(s._record_main({str(out)!r}, {paths!r}))")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "python"), str(ROOT / "build" / "python")] +
                                        ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env.pop("NKIC_FRONTEND_DEBUG", None)
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, env=env,
                       timeout=300)
    assert out.exists(), r.stdout[-4000:] + r.stderr[-4000:]
    data = json.loads(out.read_text())
    data["log"] = r.stdout[-4000:] + r.stderr[-2000:]
    return data


def _module_records(recorded, module):
    path = os.path.realpath(ROOT / "tests" / "kernels" / module)
    return [r for r in recorded["records"] if r["module"] == path]


@pytest.mark.parametrize("module", KERNEL_MODULES)
def test_every_module_kernel_is_traced_by_its_tests(recorded, module):
    path = os.path.realpath(ROOT / "tests" / "kernels" / module)
    assert path in recorded["kernels"], f"{module} was not collected:\n{recorded['log']}"
    traced = {r["kernel"] for r in _module_records(recorded, module)}
    declared = set(recorded["kernels"][path])
    assert declared <= traced, f"kernels of {module} never traced by its tests: {sorted(declared - traced)}"


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("module", KERNEL_MODULES)
def test_kernel_suite_is_legal(recorded, module, target):
    records = _module_records(recorded, module)
    assert records, f"no kernel of {module} was traced:\n{recorded['log']}"
    rejected = [f"{r['call']}\n    -> {r[target]}" for r in records if r[target] != "ok"]
    assert not rejected, f"{len(rejected)} of {len(records)} traced calls rejected on {target}:\n" + \
        "\n".join(rejected)


@pytest.mark.parametrize("example", EXAMPLES)
def test_example_is_legal_on_trn1_and_trn2(example):
    env = dict(os.environ)
    env.pop("NKIC_FRONTEND_DEBUG", None)
    r = subprocess.run([str(ROOT / "bin" / "nkic"), "check", f"examples/{example}", "--target", ",".join(TARGETS)],
                       cwd=ROOT, capture_output=True, text=True, timeout=60, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines() == [f"{t}: ok" for t in TARGETS]
