"""nki.compiler (NKI 0.7/0.8): the CompileConfig and SpecializationConfig a kernel gives
@nki.jit(compile_config=..., specialization_config=...), and their enums. The fields and
their rules are the core's (src/sema/CompileConfig.h); this module only builds the objects."""
import enum

from nkic._core import core
from nkic._kernel import _unexpected


class _Opaque(enum.Enum):
    """An nki.compiler enum: its members' values are unpublished, so only their names show."""

    def __repr__(self):
        return f"{type(self).__name__}.{self.name}"


_ENUMS = {name: _Opaque(name, members, module=__name__, qualname=name)
          for name, members in core.compile_config_enums()}
Allocation = _ENUMS["Allocation"]
AllocationMode = _ENUMS["AllocationMode"]
SchedulingHeuristic = _ENUMS["SchedulingHeuristic"]
OptLevel = _ENUMS["OptLevel"]
AddressRotation = _ENUMS["AddressRotation"]

_FIELDS = tuple(core.compile_config_fields())


def _keywords_only(api, args, kwargs, known):
    if args:
        core.raise_unsupported_args(api, f"takes keyword arguments only, got {len(args)} positional")
    for name in kwargs:
        if name not in known:
            _unexpected(api, name, known)


class CompileConfig(core.CompileConfig):
    """How the compiler builds a kernel: CompileConfig(allocation=Allocation.LINEAR, prefetch_auto=True, ...).
    A field reads what was given, None when it was left to its default. Checked when made: an
    enum field takes only its nki.compiler enum (TypeError), and an option that needs NKI
    allocation or scheduling without it is a ValueError."""

    def __init__(self, *args, **fields):
        _keywords_only("nki.compiler.CompileConfig", args, fields, _FIELDS)
        super().__init__(fields)

    def __getattr__(self, name):
        if name not in _FIELDS:
            raise AttributeError(f"'CompileConfig' object has no attribute {name!r}")
        value = self.given(name)
        return getattr(_ENUMS[value[0]], value[1]) if isinstance(value, tuple) else value

    def __repr__(self):
        return self.repr()

    def __reduce__(self):
        # Pickled as the fields given (a sweep sends kernels to its workers by value).
        return _made, ({name: getattr(self, name) for name in _FIELDS if getattr(self, name) is not None},)


def _made(fields):
    return CompileConfig(**fields)


class SpecializationConfig:
    """SpecializationConfig(allow_nested_config_override=False): with True on the top-level kernel,
    a nested @nki.jit kernel whose compile config differs is inlined under the outer config with a
    warning instead of an error."""

    def __init__(self, *args, **fields):
        _keywords_only("nki.compiler.SpecializationConfig", args, fields, ("allow_nested_config_override",))
        self.allow_nested_config_override = core.specialization_config(
            fields.get("allow_nested_config_override", False))

    def __repr__(self):
        return f"SpecializationConfig(allow_nested_config_override={self.allow_nested_config_override})"
