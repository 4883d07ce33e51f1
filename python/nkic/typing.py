"""nki.typing (nt): kernel annotations. They are classes, so they compose with
typing.Union / Optional like any type hint."""


class tensor:
    """nt.tensor[128, 512]: an annotation checked against the value's shape."""
    shape = None

    def __class_getitem__(cls, shape):
        shape = shape if isinstance(shape, tuple) else (shape,)
        name = f"{cls.__name__}[{', '.join(str(d) for d in shape)}]"
        return type(name, (cls,), {"shape": shape, "__module__": cls.__module__})


class mutable_tensor(tensor):
    """nt.mutable_tensor: a kernel input the kernel may write (and must return)."""
    _nki_mutable = True
