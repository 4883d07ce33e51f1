"""nkic as a package: `pip wheel --no-build-isolation` builds a wheel offline (here from the
CMake build this suite runs against, NKIC_CMAKE_BUILD_DIR), and installed into a fresh venv
(--system-site-packages, for Debian's numpy) it works from any directory: the `nkic`
command and its version, `import nkic, neuronxcc.nki`, a shipped example, the pytest plugin's
entry point, and mypy over the examples with the shipped stubs."""
import importlib.util
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import _nkic
import nkic

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(_nkic.__file__).resolve().parents[1]  # the CMake tree whose build/python holds _nkic

pytestmark = pytest.mark.skipif(
    not (BUILD / "CMakeCache.txt").exists() or importlib.util.find_spec("pip") is None
    or importlib.util.find_spec("wheel") is None,
    reason="needs a CMake build tree and Debian's python3-pip / python3-wheel")


def run(cmd, cwd, env=None, ok=True):
    e = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "NKIC_FRONTEND_DEBUG")}
    e.update(env or {})
    r = subprocess.run([str(c) for c in cmd], cwd=cwd, env=e, capture_output=True, text=True, timeout=600)
    if ok:
        assert r.returncode == 0, f"{cmd}: {r.stdout}\n{r.stderr}"
    return r


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    run([sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "--no-index", "-w", out, ROOT],
        cwd=out, env={"NKIC_CMAKE_BUILD_DIR": str(BUILD)})
    [whl] = out.glob("nkic-*.whl")
    return whl


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory):
    where = tmp_path_factory.mktemp("venv")
    run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", where / "env"], cwd=where)
    run([where / "env/bin/python", "-m", "pip", "install", "--no-index", "--no-deps", wheel], cwd=where)
    return where / "env"


def test_wheel_contents(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert wheel.name.startswith(f"nkic-{nkic.__version__}-cp3")
    assert any(n.startswith("_nkic.") and n.endswith(".so") for n in names)
    for f in ("nkic/cli.py", "nkic/py.typed", "nkic/language.pyi", "nkic/isa.pyi", "nkic/_tile.pyi",
              "neuronxcc/nki/__init__.py", "neuronxcc/nki/language.pyi", "neuronxcc/py.typed",
              "nki/py.typed", "nki/language.pyi", "nki/isa.pyi"):
        assert f in names, f
    info = f"nkic-{nkic.__version__}.dist-info/"
    assert {info + "LICENSE", info + "NOTICE"} <= set(names)
    entry_points = zipfile.ZipFile(wheel).read(info + "entry_points.txt").decode()
    assert "nkic = nkic.cli:main" in entry_points
    assert "[pytest11]" in entry_points and "nkic = nkic.pytest_plugin" in entry_points
    metadata = zipfile.ZipFile(wheel).read(info + "METADATA").decode()
    assert f"Version: {nkic.__version__}" in metadata and "License: Apache-2.0" in metadata


def test_installed_command_works_anywhere(venv, tmp_path):
    assert run([venv / "bin/nkic", "--version"], cwd=tmp_path).stdout.strip() == f"nkic {nkic.__version__}"
    code = ("import importlib.metadata, nkic, neuronxcc.nki, neuronxcc.nki.language as nl; "
            "print(nkic.__file__); print(importlib.metadata.version('nkic'))")
    where, version = run([venv / "bin/python", "-c", code], cwd=tmp_path).stdout.split()
    assert where.startswith(str(venv)) and version == nkic.__version__
    example = tmp_path / "tensor_add.py"
    example.write_text((ROOT / "examples" / "tensor_add.py").read_text())
    r = run([venv / "bin/nkic", "run", example.name], cwd=tmp_path)
    assert " ok" in r.stdout and "MISMATCH" not in r.stdout


def test_installed_pytest_plugin_is_registered(venv, tmp_path):
    r = run([venv / "bin/python", "-m", "pytest", "--help"], cwd=tmp_path)
    assert "--nkic-target" in r.stdout


def test_mypy_checks_the_examples_with_the_stubs(venv, tmp_path):
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("Debian's python3-mypy is not installed")
    mypy = [venv / "bin/python", "-m", "mypy", "--check-untyped-defs", "--no-incremental"]
    r = run(mypy + [ROOT / "examples"], cwd=tmp_path, ok=False)
    assert r.returncode == 0, r.stdout
    bad = tmp_path / "bad.py"
    bad.write_text("import neuronxcc.nki.language as nl\n"
                   "import neuronxcc.nki.isa as nisa\n\n"
                   "def k(x):\n"
                   "    t = nl.lod(x)\n"
                   "    y = nl.exp(nl.load(x), 3)\n"
                   "    nl.store(x, value=nisa.nc_transpose(y)).shape\n")
    r = run(mypy + [bad], cwd=tmp_path, ok=False)
    assert r.returncode == 1
    assert 'bad.py:5: error: Module has no attribute "lod"; maybe "load"?' in r.stdout
    assert 'bad.py:6: error: Too many positional arguments for "exp"' in r.stdout
    assert 'bad.py:7: error: "store" does not return a value' in r.stdout
