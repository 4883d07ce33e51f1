"""nki.typing (nt): tensor[...] shape annotations of kernel parameters."""
from nkic.typing import tensor  # noqa: F401
