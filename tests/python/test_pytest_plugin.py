"""The pytest plugin (nkic.pytest_plugin) run by pytest's own pytester: --nkic-target
parametrizes the nkic_target fixture, a bad target is a usage error, and assert_close fails
with the max abs/rel error and the index of the worst element."""
import os

import pytest

import _nkic
import nkic

pytest_plugins = ["pytester"]

SUITE = """
import numpy as np
from neuronxcc import nki
import neuronxcc.nki.language as nl
from nkic.pytest_plugin import assert_close

@nki.jit
def add_one(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.add(nl.load(x), 1.0))
    return out

def test_on_target(nkic_target, nkic_assert_close):
    add_one.target = nkic_target
    x = np.zeros((128, 64), np.float32)
    nkic_assert_close(nki.simulate_kernel(add_one, x), x + 1)
    assert add_one.target in ("inf1", "trn1", "inf2", "trn2", "trn3")

def test_wrong_value():
    x = np.zeros((128, 64), np.float32)
    expected = x + 1
    expected[3, 17] = 3.0
    assert_close(nki.simulate_kernel(add_one, x), expected)
"""


@pytest.fixture(autouse=True)
def absolute_pythonpath(monkeypatch):
    """The inner pytest runs in its own directory: it finds this nkic by absolute paths."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([os.path.dirname(os.path.dirname(nkic.__file__)),
                                                      os.path.dirname(_nkic.__file__)]))


def run(pytester, *args):
    pytester.makepyfile(test_suite=SUITE)
    return pytester.runpytest_subprocess("-p", "nkic.pytest_plugin", "-v", *args)


def test_default_target_is_trn2(pytester):
    r = run(pytester, "-k", "on_target")
    r.assert_outcomes(passed=1)
    r.stdout.fnmatch_lines(["nkic *, targets: trn2", "*test_on_target?trn2? PASSED*"])


def test_default_target_follows_the_override(pytester, monkeypatch):
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn3")
    r = run(pytester, "-k", "on_target")
    r.assert_outcomes(passed=1)
    r.stdout.fnmatch_lines(["nkic *, targets: trn3", "*test_on_target?trn3? PASSED*"])


def test_targets_parametrize_the_fixture(pytester):
    r = run(pytester, "-k", "on_target", "--nkic-target", "trn1,trn3")
    r.assert_outcomes(passed=2)
    r.stdout.fnmatch_lines(["nkic *, targets: trn1, trn3", "*test_on_target?trn1? PASSED*",
                            "*test_on_target?trn3? PASSED*"])


def test_all_targets(pytester):
    run(pytester, "-k", "on_target", "--nkic-target", "all").assert_outcomes(passed=5)


def test_unknown_target_is_a_usage_error(pytester):
    r = run(pytester, "--nkic-target", "trn9")
    assert r.ret == pytest.ExitCode.USAGE_ERROR
    r.stderr.fnmatch_lines(["*--nkic-target: unknown target trn9; choose from inf1, trn1, inf2, trn2, trn3*"])


def test_assertion_names_the_worst_element(pytester):
    r = run(pytester, "-k", "wrong_value")
    r.assert_outcomes(failed=1)
    r.stdout.fnmatch_lines([
        "*kernel output does not match the expected value:*",
        "*output 0 (float32[[]128, 64[]]): max abs error 2, max rel error 0.667 at index (3, 17) "
        "(got 1, expected 3); tolerance 3e-05*",
    ])


def test_assert_close_checks_shape_count_and_nan():
    import numpy as np
    from nkic.pytest_plugin import assert_close

    a = np.ones((4, 4), np.float32)
    assert_close(a, a.copy())
    assert_close((a, a), (a, a))
    with pytest.raises(AssertionError, match=r"shape \[4, 4\], but the expected value has shape \[4, 2\]"):
        assert_close(a, a[:, :2])
    with pytest.raises(pytest.fail.Exception, match="the kernel returns 2 output"):
        assert_close((a, a), a)
    b = a.copy()
    b[1, 2] = np.nan
    with pytest.raises(AssertionError, match=r"1 NaN.*max abs error inf.*at index \(1, 2\) \(got nan, expected 1\)"):
        assert_close(b, a)
