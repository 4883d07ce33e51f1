"""nki (NKI 0.2-0.8, the standalone package) served by nkic: current kernels import it
unchanged, as the version NKIC_NKI_VERSION names (the newest by default) took them.
Kernels trace onto the same instruction builders and IR as neuronxcc.nki."""
import sys

from nkic import NKIError  # noqa: F401
from nkic._core import core as _core
from ._api import unavailable as _unavailable
from ._kernel import Kernel, jit, simulate  # noqa: F401
from ._ranks import execute, multi_rank_execute, multi_rank_simulate  # noqa: F401
from . import language, isa, typing, collectives, lnc, compiler, meta  # noqa: F401

# A dtype as kernels annotate it (nl.float32, np.float32, ...).
dtype = object

# The stub's entry points that have no meaning without hardware (NKI_CURRENT_API.md §1.1).
_WHY = "is not available in nki 0.3+; use nki.jit, nki.simulate(kernel)(...) or NKI_SIMULATOR=1"
baremetal, benchmark = _unavailable("nki.baremetal", _WHY), _unavailable("nki.benchmark", _WHY)
profile, simulate_kernel = _unavailable("nki.profile", _WHY), _unavailable("nki.simulate_kernel", _WHY)

# `import nki.isa.constants` (nkilib imports oob_mode from it).
sys.modules[__name__ + ".isa.constants"] = isa.constants


def __getattr__(name):
    # nki.__version__: the NKI version served ("0.8.0"), read from NKIC_NKI_VERSION when asked.
    if name == "__version__":
        return _core.nki_version()
    raise AttributeError(f"module 'nki' has no attribute {name!r}")
