"""neuronxcc.nki served by nkic: kernels written for neuronx-cc import unchanged."""
import sys
import types

import nkic
from nkic import (NKIError, baremetal, benchmark, dont_trace, jit, simulate_kernel, tensor,  # noqa: F401
                  trace)
from nkic._kernel import profile  # noqa: F401  (the decorator; nkic.profile is the prediction)
from nkic import compiler, isa, language, typing  # noqa: F401

for _name in ("language", "isa", "typing", "compiler"):
    sys.modules[__name__ + "." + _name] = getattr(nkic, _name)

# Submodules public kernels import names from: language.constants (sizeinbytes) and
# isa.constants (oob_mode, dge_mode).
for _sub, _names in (("language.constants", {"sizeinbytes": nkic._dtypes.sizeinbytes}),
                     ("isa.constants", {"oob_mode": nkic.isa.oob_mode, "dge_mode": nkic.isa.dge_mode})):
    _module = types.ModuleType(f"{__name__}.{_sub}")
    _module.__dict__.update(_names)
    sys.modules[_module.__name__] = _module
    # `import neuronxcc.nki.language.constants as c` reads it as an attribute of its parent.
    _parent, _leaf = _sub.split(".")
    setattr(getattr(nkic, _parent), _leaf, _module)
