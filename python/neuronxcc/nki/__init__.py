"""neuronxcc.nki served by nkic: kernels written for neuronx-cc import unchanged."""
import sys
import types

import nkic
from nkic import (NKIError, baremetal, benchmark, dont_trace, jit, profile, simulate_kernel, tensor,  # noqa: F401
                  trace)
from nkic import compiler, isa, language, typing  # noqa: F401

for _name in ("language", "isa", "typing", "compiler"):
    sys.modules[__name__ + "." + _name] = getattr(nkic, _name)

# The one private submodule public kernels import: language.constants.sizeinbytes.
_constants = types.ModuleType(__name__ + ".language.constants")
_constants.sizeinbytes = nkic._dtypes.sizeinbytes
sys.modules[_constants.__name__] = _constants
