"""The target a current-API kernel runs on: NEURON_PLATFORM_TARGET_OVERRIDE (NKI_CURRENT_API.md
§1.4), read by nki.jit when it traces and by nl.tile_size outside a trace."""
import os

# NEURON_PLATFORM_TARGET_OVERRIDE spellings -> nkic target names.
_TARGETS = {"trn1": "trn1", "inf2": "trn1", "gen2": "trn1", "trn2": "trn2", "gen3": "trn2", "trn3": "trn3",
            "gen4": "trn3"}
# Without the variable the official simulator models the newest chip.
_DEFAULT_TARGET = "trn3"


def target():
    value = os.environ.get("NEURON_PLATFORM_TARGET_OVERRIDE", "")
    if not value:
        return _DEFAULT_TARGET
    return _TARGETS.get(value.strip().lower(), value)
