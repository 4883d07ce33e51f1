"""pytest plugin for NKI kernel test suites. An installed nkic registers it (entry point
`nkic` in the `pytest11` group); from a source tree load it with `-p nkic.pytest_plugin`.

  --nkic-target trn1,trn2 | all   every test that uses `nkic_target` runs once per target
  nkic_target                     fixture: the target name of this run (default: nkic's default
                                  target, NEURON_PLATFORM_TARGET_OVERRIDE or trn2)
  nkic_assert_close               fixture (also `assert_close` here): compares a kernel's
                                  output(s) with the expected value(s) by `nkic run`'s rule and
                                  fails with the max abs/rel error and the worst element's index
"""
import pytest

from . import _targets
from ._compare import Comparison, as_tuple
from ._version import __version__


def pytest_addoption(parser):
    group = parser.getgroup("nkic", "NKI kernels on the nkic simulator")
    group.addoption("--nkic-target", dest="nkic_target", default=None, metavar="TARGETS",
                    help=f"comma-separated targets ({', '.join(_targets.names())}) or 'all' (every one) for "
                         "tests using the nkic_target fixture (default: NEURON_PLATFORM_TARGET_OVERRIDE, else trn2)")


def _run_targets(config):
    spec = config.getoption("nkic_target")
    if not spec:
        return [_targets.default_target()]
    known = _targets.names()
    if spec == "all":
        return known
    names = [t.strip() for t in spec.split(",") if t.strip()]
    unknown = [t for t in names if t not in known]
    if unknown or not names:
        raise pytest.UsageError(f"--nkic-target: unknown target {', '.join(unknown) or repr(spec)}; "
                                f"choose from {', '.join(known)} or 'all'")
    return names


def pytest_configure(config):
    _run_targets(config)  # a bad --nkic-target is a usage error before any test runs


def pytest_report_header(config):
    return f"nkic {__version__}, targets: {', '.join(_run_targets(config))}"


def pytest_generate_tests(metafunc):
    if "nkic_target" in metafunc.fixturenames:
        metafunc.parametrize("nkic_target", _run_targets(metafunc.config), indirect=True)


@pytest.fixture
def nkic_target(request):
    """The target this test runs on: pass it as `platform_target=` or set `kernel.target`."""
    return getattr(request, "param", None) or _targets.default_target()


def assert_close(actual, expected, tolerance=None):
    """Fails unless every output matches: |actual - expected| <= tolerance * max(1, max |expected|)
    (tolerance defaults to the output dtype's, as in `nkic run`). `actual` and `expected`
    are arrays or equally long tuples of arrays."""
    __tracebackhide__ = True
    actual, expected = as_tuple(actual), as_tuple(expected)
    if len(actual) != len(expected):
        pytest.fail(f"the kernel returns {len(actual)} output(s), but {len(expected)} were expected", pytrace=False)
    failures = []
    for i, (a, e) in enumerate(zip(actual, expected)):
        c = Comparison(a, e, tolerance)
        if not c.ok:
            nan = f", {c.nan_count} NaN" if c.nan_count else ""
            failures.append(f"output {i} ({c.dtype}{c.shape}{nan}): {c.summary()}")
    if failures:
        raise AssertionError("kernel output does not match the expected value:\n  " + "\n  ".join(failures))


@pytest.fixture
def nkic_assert_close():
    """assert_close, as a fixture for suites that do not import nkic directly."""
    return assert_close
