"""Which target a kernel is traced for. Without one named (--target, platform_target=,
nkic.profile(target=)) every command and API takes NEURON_PLATFORM_TARGET_OVERRIDE, else
nkic's default target; `check` and `--target all` cover the targets the kernel's API supports.
The targets and their facts are the core's (src/sema/Target)."""
import os

from ._core import core

# NEURON_PLATFORM_TARGET_OVERRIDE's generation spellings (NKI_CURRENT_API.md §1.4) -> nkic's names.
_SPELLINGS = {"gen2": "trn1", "gen3": "trn2", "gen4": "trn3"}


def names():
    """Every target nkic knows."""
    return list(core.target_names())


def default_target():
    value = os.environ.get("NEURON_PLATFORM_TARGET_OVERRIDE", "").strip().lower()
    if not value:
        return core.default_target()
    return _SPELLINGS.get(value, value)


def api_targets(kernel):
    """The targets the kernel's API supports (current nki: trn2, trn3; legacy: trn1, inf2, trn2)."""
    return list(core.api_targets(kernel.current_api))


def covered(kernel, spec):
    """The targets of a --target list for `check` and `sweep` ("trn1,trn2"); 'all' or, for
    `check`, no list: the kernel's API's."""
    if spec in (None, "all"):
        return api_targets(kernel)
    return [t.strip() for t in spec.split(",") if t.strip()]
