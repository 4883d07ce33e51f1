"""nki.typing (nt): kernel annotations."""


class _TensorType:
    """nt.tensor[128, 512]: an annotation checked against the value's shape."""

    def __init__(self, shape=None, dtype=None):
        self.shape = shape
        self.dtype = dtype

    def __getitem__(self, shape):
        return _TensorType(shape if isinstance(shape, tuple) else (shape,))

    def __repr__(self):
        return f"nt.tensor{list(self.shape) if self.shape else ''}"


class _MutableTensor(_TensorType):
    """nt.mutable_tensor: a kernel input the kernel may write (and must return)."""
    _nki_mutable = True

    def __repr__(self):
        return "nt.mutable_tensor"


tensor = _TensorType()
mutable_tensor = _MutableTensor()
