"""nki.typing (nt): tensor[...] shape annotations of kernel parameters (mutable_tensor
stays importable: current kernels may write any input)."""
from nkic.typing import mutable_tensor, tensor  # noqa: F401
