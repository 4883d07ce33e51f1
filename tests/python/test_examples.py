"""Every shipped example runs as scripts/run_examples.sh runs it (`nkic run`, then `nkic profile
--target trn2`) and as a plain script; the current-API examples (`*_nki.py`, `import nki`) stand
next to the legacy ones they mirror and compute the same outputs."""
import os
import re
import runpy
import subprocess
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(p.name for p in (ROOT / "examples").glob("*.py"))
CURRENT = [name for name in EXAMPLES if name.endswith("_nki.py")]


def nkic(*args):
    env = {k: v for k, v in os.environ.items() if k != "NKIC_FRONTEND_DEBUG"}
    return subprocess.run([str(ROOT / "bin" / "nkic"), *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, env=env)


@pytest.mark.parametrize("name", EXAMPLES)
def test_the_example_runs_as_run_examples_sh_runs_it(name):
    script = (ROOT / "scripts" / "run_examples.sh").read_text()
    assert "examples=(examples/*.py)" in script  # the script runs every example file
    run = nkic("run", f"examples/{name}")
    assert run.returncode == 0, run.stdout + run.stderr
    outputs = [line for line in run.stdout.splitlines() if line.strip().startswith("output ")]
    assert outputs and all(line.endswith(" ok") for line in outputs), run.stdout
    profile = nkic("profile", f"examples/{name}", "--target", "trn2")
    assert profile.returncode == 0, profile.stderr
    assert re.match(r"\w+ on trn2: [0-9.]+ us predicted\n", profile.stdout), profile.stdout


@pytest.mark.parametrize("name", CURRENT)
def test_a_current_api_example_runs_as_a_script(name, capsys, monkeypatch):
    monkeypatch.setenv("NKI_SIMULATOR", "1")
    runpy.run_path(str(ROOT / "examples" / name), run_name="__main__")
    assert capsys.readouterr().out == f"{name[:-3]}: ok\n"
    text = (ROOT / "examples" / name).read_text()
    assert "import nki\n" in text and "neuronxcc" not in text


def _load(name):
    return runpy.run_path(str(ROOT / "examples" / name), run_name=name[:-3])


@pytest.mark.parametrize("name", CURRENT)
def test_a_current_api_example_matches_its_legacy_twin(name, monkeypatch):
    monkeypatch.setenv("NKI_SIMULATOR", "1")
    twin = name.replace("_nki.py", ".py")
    assert twin in EXAMPLES
    current, legacy = _load(name), _load(twin)
    import nki
    from neuronxcc import nki as legacy_nki
    # The same computation on the same inputs (the current file's), in each API.
    inputs = current["make_inputs"]()
    got = nki.simulate(next(v for v in current.values() if isinstance(v, nki.Kernel)))(*inputs)
    kernel = next(v for k, v in legacy.items() if k.endswith("_kernel") or k == "kernel")
    grid = legacy.get("GRID")
    if grid is not None and twin == "tensor_add.py":
        grid = (inputs[0].shape[0] // 128, inputs[0].shape[1] // 512)  # one program per 128 x 512 tile
    want = legacy_nki.simulate_kernel(kernel[grid] if grid else kernel, *inputs)
    np.testing.assert_allclose(np.asarray(got, np.float32), np.asarray(want, np.float32), rtol=1e-5, atol=1e-5)


def test_the_readme_shows_the_current_api_first_and_the_legacy_one_too():
    readme = (ROOT / "README.md").read_text()
    current, legacy = readme.index("import nki\n"), readme.index("from neuronxcc import nki\n")
    assert current < legacy
    for name in CURRENT:
        assert f"examples/{name}" in readme, name
    assert "./scripts/run_examples.sh\n" in readme and "./scripts/test.sh\n" in readme


def test_the_readmes_python_examples_run(tmp_path, monkeypatch):
    monkeypatch.setenv("NKI_SIMULATOR", "1")
    blocks = re.findall(r"^```python\n(.*?)^```", (ROOT / "README.md").read_text(), re.S | re.M)
    assert len(blocks) == 2
    for i, code in enumerate(blocks):
        path = tmp_path / f"readme_{i}.py"  # a real file: the tracer reads kernel source
        path.write_text(code + "\nassert np.array_equal(out, a + a)\n")
        runpy.run_path(str(path), run_name="__main__")
