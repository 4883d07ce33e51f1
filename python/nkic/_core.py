"""The compiled core (_nkic), with a clear message when it has not been built."""
try:
    import _nkic as core  # noqa: F401
except ImportError as e:  # pragma: no cover - only without a build
    raise ImportError(
        "nkic's C++ core (_nkic) is not built or not on sys.path; run scripts/setup.sh "
        "and put build/python on PYTHONPATH (bin/nkic does both)") from e
