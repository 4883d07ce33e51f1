"""A diagnostic's hint is written for the API of the kernel that raised it: every catalogued
code's hint, read in the legacy neuronxcc.nki API and in the current nki API, names only the
nl.* / nisa.* / nt.* calls and keywords that API has, and only that API's docs page; and the
hints the kernels below meet (a matmul over its size limit, an uninitialized read, dma_copy from
PSUM, a misspelt op=, a destination of the wrong size, an access out of bounds) say what to do in
their API."""
import re
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_docs_catalog import CODES  # noqa: E402

import nki  # noqa: E402
import nki.isa as nisa  # noqa: E402
import nki.language as nl  # noqa: E402
import nki.typing as nt  # noqa: E402
import neuronxcc.nki.isa as lnisa  # noqa: E402
import neuronxcc.nki.language as lnl  # noqa: E402
import neuronxcc.nki.typing as lnt  # noqa: E402
from neuronxcc import nki as lnki  # noqa: E402
from nkic._core import core  # noqa: E402

MODULES = {
    "legacy": {"nl": lnl, "nisa": lnisa, "nt": lnt, "nki": lnki},
    "current": {"nl": nl, "nisa": nisa, "nt": nt, "nki": nki},
}
DOCS = {"legacy": "docs/language.md", "current": "docs/current_api.md"}
# Keywords the current API removed (NKI_CURRENT_API.md: masks are gone since 0.1).
REMOVED_KEYWORDS = {"current": {"mask"}, "legacy": set()}
_NAME = re.compile(r"\b(nl|nisa|nt|nki)\.(\w+)")
_KEYWORD = re.compile(r"\b(\w+)=")


def provides(api, module, name):
    """The API has `module.name` and it is not a stub that refuses (nki's removed nl.arange)."""
    obj = getattr(MODULES[api][module], name, None)
    return obj is not None and "unavailable.<locals>" not in getattr(obj, "__qualname__", "")


def foreign_names(api, hint):
    """What `hint` names that `api` lacks."""
    bad = [f"{m}.{n}" for m, n in _NAME.findall(hint) if not provides(api, m, n)]
    bad += [f"{k}=" for k in _KEYWORD.findall(hint) if k in REMOVED_KEYWORDS[api]]
    other = DOCS["current" if api == "legacy" else "legacy"]
    return bad + ([other] if other in hint else [])


def test_the_check_knows_each_apis_names():
    # The check itself: it must tell the two APIs apart where they differ.
    assert foreign_names("current", "index with nl.arange(n)[:, None] or restrict it with mask=(i < n)") == [
        "nl.arange", "mask="]
    assert foreign_names("legacy", "loop with nl.while_loop; see docs/current_api.md") == [
        "nl.while_loop", "docs/current_api.md"]
    assert foreign_names("current", "copy with nisa.tensor_copy; see docs/current_api.md") == []


def test_the_hint_table_holds_only_codes_nkic_has():
    assert set(core.hinted_codes()) <= CODES


@pytest.mark.parametrize("api", ["legacy", "current"])
@pytest.mark.parametrize("code", sorted(CODES))
def test_every_codes_hint_names_only_its_apis_calls(code, api):
    hint = core.hint_for(code, api == "current")
    assert not foreign_names(api, hint), f"{code}'s {api} hint names {foreign_names(api, hint)}: {hint!r}"
    if "docs/" in hint:
        assert DOCS[api] in hint


def test_unsupported_args_points_at_each_apis_signatures():
    assert core.hint_for("err_unsupported_args", False) == (
        "see the API's signature in docs/language.md; keyword-only arguments must be named")
    assert core.hint_for("err_unsupported_args", True) == (
        "see the API's signature in docs/current_api.md; nisa calls take the destination first (dst=) and "
        "keyword-only arguments must be named")


# --- the hints kernels meet -------------------------------------------------------------

A = np.ones((128, 128), np.float32)
B = np.ones((128, 1024), np.float32)


def raised(run):
    with pytest.raises(nki.NKIError) as info:
        run()
    return info.value


@pytest.fixture
def trn2(monkeypatch):
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn2")


def test_matmul_over_its_size_limit_says_how_to_tile(trn2):
    @nki.jit
    def wide(a, b):
        out = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.shared_hbm)
        x = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
        y = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=x, src=a)
        nisa.dma_copy(dst=y, src=b)
        p = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.psum)
        nisa.nc_matmul(dst=p, stationary=x, moving=y)
        return out

    @lnki.jit(platform_target="trn2")
    def wide_legacy(a, b):
        out = lnl.ndarray((128, 1024), dtype=lnl.float32, buffer=lnl.shared_hbm)
        lnl.store(out, value=lnisa.nc_matmul(lnl.load(a), lnl.load(b)))
        return out

    for e in (raised(lambda: nki.simulate(wide)(A, B)), raised(lambda: lnki.simulate_kernel(wide_legacy, A, B))):
        assert e.code == "err_size_of_dimension_exceed_arch_limit"
        assert e.hint == ("split the matmul into tiles of at most 512 along this dimension and loop over them, "
                          "accumulating the products in PSUM")


def test_uninitialized_read_hint_per_api(trn2):
    @nki.jit
    def half(a):
        out = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=t[:, 0:64], src=a[:, 0:64])
        nisa.dma_copy(dst=out, src=t)
        return out

    @lnki.jit
    def half_legacy(a):
        out = lnl.ndarray((128, 128), dtype=lnl.float32, buffer=lnl.shared_hbm)
        t = lnl.ndarray((128, 128), dtype=lnl.float32, buffer=lnl.sbuf)
        t[:, 0:64] = lnl.load(a[:, 0:64])
        lnl.store(out, value=t)
        return out

    from nkic import _kernel
    traced = half.trace(None, (A,), {})
    current = raised(lambda: _kernel.simulate_traced(traced, [A], check_uninitialized=True))
    legacy = raised(lambda: lnki.simulate_kernel(half_legacy, A, check_uninitialized=True))
    assert current.code == legacy.code == "err_read_uninitialized_memory"
    assert current.hint == ("write every element the result depends on: fill the tile first (nisa.memset), or cut "
                            "the slices to the elements that were written")
    assert legacy.hint == ("write every element the result depends on: fill the tile first (nl.zeros, nisa.memset), "
                           "or mask the instructions (mask=) to the elements that were written")
    assert isinstance(current, nisa.NkiValidationError) and not isinstance(legacy, nisa.NkiValidationError)


def test_dma_copy_from_psum_says_tensor_copy_to_sbuf_first(trn2):
    @nki.jit
    def from_psum(a):
        out = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
        p = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.psum)
        nisa.memset(dst=p, value=0.0)
        nisa.dma_copy(dst=out, src=p)
        return out

    e = raised(lambda: nki.simulate(from_psum)(A))
    assert e.code == "err_unsupported_memory"
    assert e.hint == ("DMA does not reach PSUM: copy the tile to SBUF first with nisa.tensor_copy, then move the "
                      "SBUF tile")


def test_op_is_answered_with_op0(trn2):
    @nki.jit
    def add_one(a):
        out = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a)
        nisa.tensor_scalar(dst=t, data=t, op=nl.add, operand0=1.0)
        nisa.dma_copy(dst=out, src=t)
        return out

    e = raised(lambda: nki.simulate(add_one)(A))
    assert (e.code, e.message) == ("err_unsupported_args", "unsupported arguments to 'nisa.tensor_scalar': unexpected "
                                   "keyword argument 'op'; did you mean 'op0'?")
    assert "docs/current_api.md" in e.hint


@pytest.mark.parametrize("copy", ["tensor_copy", "nc_transpose"])
def test_a_destination_of_the_wrong_size_is_not_told_to_broadcast(trn2, copy):
    @nki.jit
    def narrow(a):
        out = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a[:, 0:64])
        u = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.psum if copy == "nc_transpose" else nl.sbuf)
        getattr(nisa, copy)(dst=u, **({"data": t} if copy == "nc_transpose" else {"src": t}))
        return out

    e = raised(lambda: nki.simulate(narrow)(A))
    assert e.code == "err_tile_shape_mismatch"
    assert e.hint == "the destination must have as many elements per partition as the result; size it to the result"


def test_out_of_bounds_in_the_current_api_is_not_told_to_mask(trn2):
    @nki.jit
    def shifted(a):
        out = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a[:, 64:192])
        nisa.dma_copy(dst=out, src=t)
        return out

    e = raised(lambda: nki.simulate(shifted)(A))
    assert e.code == "err_tensor_access_out_of_bound"
    assert e.hint == "cut the slice to the tensor's size (e.g. t[i * 128:min((i + 1) * 128, n)])"


# --- every documented failing example -----------------------------------------------------

# Runs every failing example of docs/errors.md in a process of its own (the examples share
# kernel names and texts with test_docs' runs) and prints (line, api, code, hint) for each.
_RUN_EXAMPLES = """
import json, re, runpy, sys, tempfile, warnings
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from test_docs import ROOT, expected_raise, python_blocks
import nki
rows = []
for _, line, body in python_blocks(ROOT / "docs" / "errors.md"):
    if not (expected_raise(body) or "").startswith("err_"):
        continue
    api = "current" if re.search(r"^import nki\\b", body, re.M) else "legacy"
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        script = Path(tmp) / f"example_{line}.py"
        script.write_text(body)
        try:
            runpy.run_path(str(script), run_name="__main__")
            rows.append((line, api, None, None))
        except nki.NKIError as e:
            rows.append((line, api, e.code, e.hint or ""))
print(json.dumps(rows))
"""


def test_each_documented_diagnostic_hints_in_its_kernels_api():
    """docs/errors.md raises every code nkic can raise: the hint each one carries (the
    builder's own or the table's) names only what the example's API has."""
    import json
    import os
    import subprocess
    here = Path(__file__).resolve().parent
    root = here.parents[1]
    env = {**os.environ, "PYTHONPATH": f"{root / 'python'}{os.pathsep}{root / 'build' / 'python'}"}
    p = subprocess.run([sys.executable, "-c", _RUN_EXAMPLES, str(here)], capture_output=True, text=True, env=env,
                       timeout=600)
    assert p.returncode == 0, p.stderr
    rows = json.loads(p.stdout.splitlines()[-1])
    assert len(rows) > 90 and {api for _, api, _, _ in rows} == {"legacy", "current"}
    assert all(code is not None for _, _, code, _ in rows), [line for line, _, code, _ in rows if code is None]
    wrong = [(line, code, hint) for line, api, code, hint in rows if foreign_names(api, hint)]
    assert not wrong, f"hints naming what their kernel's API lacks: {wrong}"
