"""The type stubs of nl / nisa are what scripts/gen_stubs.py makes of the runtime modules
(a changed API without regenerated stubs fails here), and the packages are marked typed.
test_packaging.py type-checks the examples against them in an installed nkic."""
import os
import subprocess
import sys
from pathlib import Path

import _nkic
import nkic

ROOT = Path(__file__).resolve().parents[2]


def test_stubs_are_up_to_date():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(Path(nkic.__file__).parents[1]),
                                                        os.path.dirname(_nkic.__file__)]))
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_stubs.py"), "--check"], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr


def test_every_api_has_a_stub():
    import nkic.isa
    import nkic.language
    import nki.isa
    import nki.language
    for module, stub in ((nkic.language, "nkic/language.pyi"), (nkic.isa, "nkic/isa.pyi"),
                         (nki.language, "nki/language.pyi"), (nki.isa, "nki/isa.pyi")):
        text = (ROOT / "python" / stub).read_text()
        for name, value in vars(module).items():
            if hasattr(value, "nki_func") and not name.startswith("_"):
                assert f"def {name}(" in text or f"class {name}" in text or f" as {name}\n" in text, \
                    f"{stub} lacks {name}"


def test_the_current_apis_stubs_carry_each_docstring_and_the_instruction_handle():
    import nki.isa
    text = (ROOT / "python" / "nki" / "isa.pyi").read_text()
    assert (f'def dma_compute(dst: Any, srcs: Any, reduce_op: Any, scales: Any = ..., unique_indices: Any = ..., '
            f'oob_mode: Any = ..., name: Any = ...) -> NkiInstruction:\n    """{nki.isa.dma_compute.__doc__.strip()}"""\n'
            in text)
    assert "class NkiInstruction:\n    \"\"\"The instructions one nisa call traced.\"\"\"\n" \
           "    def depends_on(self, *others: Any) -> NkiInstruction: ...\n" in text
    lang = (ROOT / "python" / "nki" / "language.pyi").read_text()
    assert "class tile_size:\n" in lang and "    sbuf_fmax: int\n" in lang and "    psum_num_banks: int\n" in lang


def test_packages_are_marked_typed():
    for pkg in ("nkic", "neuronxcc", "nki"):
        assert (ROOT / "python" / pkg / "py.typed").exists()
    for name in ("language", "isa"):
        assert (ROOT / "python" / "neuronxcc" / "nki" / f"{name}.pyi").read_text().count(f"from nkic.{name} import *")


def test_every_api_of_the_current_package_has_a_docstring_in_its_stub():
    import inspect

    import nki.isa
    import nki.language
    for module, stub in ((nki.language, "nki/language.pyi"), (nki.isa, "nki/isa.pyi")):
        text = (ROOT / "python" / stub).read_text()
        for name, value in vars(module).items():
            if name.startswith("_") or not (inspect.isfunction(value) or hasattr(value, "nki_func")):
                continue
            assert (value.__doc__ or "").strip(), f"{module.__name__}.{name} has no docstring"
            if f"def {name}(" in text:
                after = text.split(f"def {name}(", 1)[1].split("\n", 2)
                assert after[1].lstrip().startswith('"""'), f"{stub}: {name} without its docstring"
