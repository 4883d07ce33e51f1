"""The simulator's opt-in checks (uninitialized values, affine_range races): a run's
explicit check_uninitialized= / check_races=, else the NKIC_SIM_CHECKS environment
variable, for scripts that cannot pass them."""
import os

from ._core import core

ENV = "NKIC_SIM_CHECKS"
_NAMES = {"uninitialized": (True, False), "races": (False, True), "all": (True, True), "none": (False, False)}


def _from_env():
    value = os.environ.get(ENV, "").strip()
    uninit = races = False
    for word in filter(None, (w.strip().lower() for w in value.split(","))):
        if word not in _NAMES:
            core.raise_unsupported_args(ENV, f"expects a comma-separated list of {', '.join(_NAMES)}; got {value!r}")
        u, r = _NAMES[word]
        uninit, races = uninit or u, races or r
    return uninit, races


def resolve(api, check_uninitialized=None, check_races=None):
    """(check_uninitialized, check_races) for a run of `api`: each given value (a bool), or the
    environment's."""
    for name, value in (("check_uninitialized", check_uninitialized), ("check_races", check_races)):
        if value is not None and not isinstance(value, bool):
            core.raise_unsupported_args(api, f"{name} must be True or False, got {value!r}")
    env_uninit, env_races = _from_env()
    return (env_uninit if check_uninitialized is None else check_uninitialized,
            env_races if check_races is None else check_races)
