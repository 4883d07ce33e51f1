"""nki.meta: nki.meta.tensor (formerly nki.tensor) is the kernel's tensor type."""
from nkic._core import core

tensor = core.NkiTensor
