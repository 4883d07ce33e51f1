"""The compiled core (_nkic), with a clear message when it has not been built."""
try:
    import _nkic as core  # noqa: F401
except ImportError as e:  # pragma: no cover - only without a build
    raise ImportError(
        "nkic's C++ core (_nkic) is not built or not on sys.path; run scripts/setup.sh "
        "and put build/python on PYTHONPATH (bin/nkic does both)") from e

import os as _os
import sysconfig as _sysconfig

# Diagnostics raised outside traced code point at the innermost frame outside these.
_here = _os.path.dirname(_os.path.abspath(__file__))
core.set_internal_dirs([_here + _os.sep, _os.path.join(_os.path.dirname(_here), "neuronxcc") + _os.sep,
                        _os.path.join(_os.path.dirname(_here), "nki") + _os.sep,
                        _sysconfig.get_paths()["stdlib"] + _os.sep])
