"""Shared by the NKI-library tests: where the library checkout is, the fixture that
puts it on sys.path with the simulator selected, and small numpy helpers."""
import importlib
import os
import sys
import types

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


def module_past_torch(name):
    """nkilib.<name>, whose package's __init__ imports the library's torch reference (torch is
    not installed): the package is registered bare, with its directory only."""
    package = "nkilib." + name.rpartition(".")[0]
    if package not in sys.modules:
        parent, _, leaf = package.rpartition(".")
        bare = types.ModuleType(package)
        bare.__path__ = [os.path.join(os.path.dirname(importlib.import_module(parent).__file__), leaf)]
        sys.modules[package] = bare
    return importlib.import_module("nkilib." + name)


def rand(*shape, seed=0, scale=1.0):
    return (np.random.default_rng(seed).random(shape, dtype=np.float32) * scale).astype(np.float32)


def rmsnorm(x, gamma):
    return x / np.sqrt((x ** 2).mean(axis=-1, keepdims=True) + 1e-6) * gamma
