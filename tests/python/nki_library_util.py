"""Shared by the NKI-library tests: where the library checkout is, the fixture that
puts it on sys.path with the simulator selected, and small numpy helpers."""
import importlib
import os

import numpy as np
import pytest

LIBRARY = os.environ.get("NKIC_NKI_LIBRARY", "/tmp/corpus/nki-library")
SRC = os.path.join(LIBRARY, "src", "nkilib_src") if os.path.isdir(os.path.join(LIBRARY, "src", "nkilib_src")) else None


@pytest.fixture(autouse=True)
def _library(monkeypatch):
    monkeypatch.setenv("NKI_SIMULATOR", "1")
    monkeypatch.delenv("NEURON_PLATFORM_TARGET_OVERRIDE", raising=False)
    monkeypatch.syspath_prepend(SRC)


def kernel(module, name):
    return getattr(importlib.import_module("nkilib." + module), name)


def rand(*shape, seed=0, scale=1.0):
    return (np.random.default_rng(seed).random(shape, dtype=np.float32) * scale).astype(np.float32)


def rmsnorm(x, gamma):
    return x / np.sqrt((x ** 2).mean(axis=-1, keepdims=True) + 1e-6) * gamma
