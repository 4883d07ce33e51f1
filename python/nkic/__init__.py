"""nkic: an open, hardware-free front-end for NKI kernels (trace, check, simulate)."""
from ._version import __version__  # noqa: F401
from ._core import core as _core
from ._kernel import (TraceKernel, baremetal, benchmark, dont_trace, jit, set_option,  # noqa: F401
                      simulate_kernel, trace)
from ._profile import ProfileResult, profile  # noqa: F401
from ._sweep import sweep  # noqa: F401
from . import language, isa, typing, compiler  # noqa: F401

NKIError = _core.NKIError
NKISyntaxError = _core.NKISyntaxError
NKIValueError = _core.NKIValueError
NKITypeError = _core.NKITypeError
NKIIndexError = _core.NKIIndexError
NKIRuntimeError = _core.NKIRuntimeError
tensor = _core.NkiTensor
