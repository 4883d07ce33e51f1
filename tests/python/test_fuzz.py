"""Fuzzing: wrong kernels end in a result or a clean diagnostic, never anything else.

tests/fuzz/mutate.py derives wrong kernels from the shipped ones (examples, tests/kernels,
docs); tests/fuzz/worker.py runs each in a forked child with a timeout and an
address-space limit and classifies how it ended. This test runs a fixed slice of one
seed; tests/fuzz/run.py runs thousands (`--cases 3000 --seed 1`) and prints the counts.

KNOWN_FAILURES lists the failure patterns that are open defects: each entry is a regular
expression over a failure's signature ("class: detail") and what is wrong. The test
tolerates those and fails on any other failure; remove an entry when its defect is fixed
(`run.py --cases 3000 --seed 1` then no longer prints its pattern).
"""
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "fuzz"))
import mutate  # noqa: E402
import runner  # noqa: E402

SEED = 1
CASES = 250

# Open defects the fuzzer finds (seen in `run.py --cases 3000 --seed 1`), one entry per cause.
KNOWN_FAILURES = {
    # nl.arange(128)[:, :] (more slices than axes) overflows a heap buffer in the binding's key
    # parsing (reshape_index) and crashes the process (under ASan: its report).
    r"^signal: (SIGSEGV in python/nkic/_kernel.py:trace|ASan [\w-]+ in nkic::types::reshape_index)$":
        "index with more slices than the tensor has axes segfaults in the index key parsing",
    # Integers outside int64 (2**63, -2**63 - 1, 10**30) or non-integers given where the binding
    # declares int / List[int]: pybind11 rejects the call with its own text.
    r"^pybind_text: incompatible function arguments in (full|ndarray|normalize_range_args|arange|reduce"
    r"|program_id|all_reduce|reshape_view|raise_annotation_shape_mismatch|trace_begin)\(\)$":
        "huge or non-integer values reach int-typed binding arguments (no err_* range check)",
    r"^pybind_text: (SystemError( in \w+\(\))?|Unable to cast)$":
        "a huge integer in an index, operand or slice step: the binding raises a diagnostic while a "
        "conversion error is pending (SystemError) or fails to cast",
    # Python surface helpers convert with int()/len()/.shape before checking the value.
    r"^bare_exception: (TypeError|ValueError|IndexError|AttributeError) at python/nkic/(language|isa).py:"
    r"(_whole|_shape|shared_identity_matrix|arange|zeros_like|empty_like|random_seed|__init__|__getitem__"
    r"|<listcomp>)$":
        "non-integer shape elements / wrong argument kinds hit int() or attribute access in nkic.language",
    r"^bare_exception: TypeError at python/nkic/(_kernel.py:trace|_rewrite.py:inline_function)$":
        "nki.jit with a non-callable extra argument, or a launch argument shadowing a helper: bare TypeError",
    # A kernel that calls itself while it is being traced, and unbounded recursion in a kernel.
    r"^bare_exception: ValueError at python/nkic/_rewrite.py:rewritten$":
        "a jitted kernel calling itself during its trace: ValueError 'tuple.index(x): x not in tuple'",
    r"^bare_exception: RecursionError at python/nkic/_rewrite.py:(rewritten|hoist)$":
        "unbounded recursion in a kernel ends in a RecursionError inside nkic's frames, not a diagnostic",
    # Size limits: an output of 2**32 x 128 elements is allocated by the simulator (MemoryError)
    # instead of being rejected; a zero or negative extent reaches the simulator's verifier.
    r"^(memory: MemoryError|signal: ASan allocation-size-too-big in an unknown function)$": "huge HBM tensors are allocated instead of rejected with a size diagnostic",
    r"^cxx_text: err_internal: internal error$":
        "non-positive iteration extent (nl.arange(-5), huge loop bounds) reaches the simulator as "
        "'malformed kernel ... iteration space has a non-positive dimension'",
}


def _known(sig):
    return next((p for p in KNOWN_FAILURES if re.search(p, sig)), None)


@pytest.fixture(scope="module")
def results():
    return runner.run_cases(mutate.generate(SEED, CASES), jobs=2)


def test_fuzz_cases_end_in_a_result_or_a_diagnostic(results):
    failures = [r for r in results if r["outcome"] in runner.FAILURES]
    new = [r for r in failures if not _known(runner.signature(r))]
    assert not new, f"{len(new)} of {len(results)} fuzz cases failed:\n\n" + "\n\n".join(
        runner.describe(r) for r in new)


def test_fuzz_cases_are_mostly_real_kernels(results):
    # A generator whose mutants all die on a NameError would test nothing.
    c = runner.counts(results)
    assert c["diagnostic"] >= len(results) // 4, c
    assert c["ok"] >= len(results) // 20, c


def test_fuzz_generator_is_deterministic():
    a, b = mutate.generate(SEED, 20, start=7), mutate.generate(SEED, 20, start=7)
    assert [c["source"] for c in a] == [c["source"] for c in b]
    assert mutate.generate(SEED, 1, start=9)[0]["source"] == a[2]["source"]
    assert mutate.generate(SEED + 1, 1, start=7)[0]["source"] != a[0]["source"]


KERNEL = """
import numpy as np
from neuronxcc import nki
import neuronxcc.nki.language as nl

@nki.jit
def k(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.load(a){extra})
    return out

nki.simulate_kernel(k, np.ones((128, 64), np.float32))
"""
# Hand-written cases, one per outcome class the worker tells apart.
CLASSES = [
    (KERNEL.format(extra=""), "ok", ""),
    (KERNEL.format(extra="[None]"), "diagnostic", r"^err_"),
    ("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n", "signal", r"^SIGSEGV"),
    ("while True:\n    pass\n", "timeout", r""),
    ("b = bytearray(2 << 30)\n", "memory", r"MemoryError"),
    ("raise ValueError('mine')\n", "user_error", r"^ValueError$"),
    ("import nkic\nraise nkic.NKIError('no code')\n", "missing_location", r"without an err_\* code"),
    ("import os\nos._exit(3)\n", "exit", r"exit status 3"),
    # An exception raised inside nkic's own Python files is a bare exception.
    ("from nkic import cli\ncli.main(123)\n", "bare_exception", r"^TypeError at python/nkic/cli.py:main$"),
]


@pytest.fixture(scope="module")
def class_results():
    cases = [{"id": i, "seed": 0, "base": "hand-written", "mode": "main", "mutations": [], "source": src}
             for i, (src, _, _) in enumerate(CLASSES)]
    return runner.run_cases(cases, jobs=1, timeout=3, mem_mb=1024)


@pytest.mark.parametrize("index", range(len(CLASSES)), ids=[c[1] for c in CLASSES])
def test_fuzz_outcome_classes(class_results, index):
    _, outcome, detail = CLASSES[index]
    if runner.UNDER_ASAN and outcome in ("signal", "memory"):
        pytest.skip("ASan turns a SIGSEGV into its report and abort, and replaces the memory limit")
    r = class_results[index]
    assert r["outcome"] == outcome and re.search(detail, r["detail"]), runner.describe(r)


def test_fuzz_run_script_prints_the_counts():
    p = subprocess.run([sys.executable, str(ROOT / "tests" / "fuzz" / "run.py"), "--cases", "3", "--seed",
                        str(SEED)], capture_output=True, text=True, timeout=120)
    assert "3 cases of seed 1" in p.stdout, p.stdout + p.stderr
    assert re.search(r"^  (ok|diagnostic|user_error) +\d+$", p.stdout, re.M), p.stdout
