"""nki (NKI 0.3-0.6, the standalone package) served by nkic: current kernels import it
unchanged. Kernels trace onto the same instruction builders and IR as neuronxcc.nki."""
import sys

from nkic import NKIError  # noqa: F401
from . import _kernel
from ._kernel import Kernel, jit, simulate  # noqa: F401
from . import language, isa, typing, collectives, meta  # noqa: F401

# A dtype as kernels annotate it (nl.float32, np.float32, ...).
dtype = object

# The stub's entry points that have no meaning without hardware (NKI_CURRENT_API.md §1.1).
baremetal = _kernel.not_available("nki.baremetal")
benchmark = _kernel.not_available("nki.benchmark")
profile = _kernel.not_available("nki.profile")
simulate_kernel = _kernel.not_available("nki.simulate_kernel")

# `import nki.isa.constants` (nkilib imports oob_mode from it).
sys.modules[__name__ + ".isa.constants"] = isa.constants
