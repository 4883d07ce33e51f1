"""`nkic migrate` on files of older `nki` versions: the forms the newest version removed are
rewritten where that is mechanical (0.2's tensor_copy(dtype=), platform_target=, builtin
buffers and one-program launch grids; 0.6's nl.dynamic_range and `while reg:` loops), and the
migrated file runs under the newest version with the numbers the original gave under its own."""
import importlib.util
import os
import subprocess
import textwrap
from pathlib import Path

import numpy as np
import pytest

import nki

NKIC = str(Path(__file__).resolve().parents[2] / "bin" / "nkic")


def migrate(path, *args):
    env = {k: v for k, v in os.environ.items() if k != "NKIC_NKI_VERSION"}
    return subprocess.run([NKIC, "migrate", str(path), *args], capture_output=True, text=True, timeout=300, env=env)


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def load(path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


LOOPS_0_6 = '''\
    import nki
    import nki.isa as nisa
    import nki.language as nl

    N = 8


    @nki.jit
    def first_rows(data, n):
        out = nl.ndarray((1, N), dtype=nl.float32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=nl.zeros((1, N), dtype=nl.float32, buffer=nl.sbuf))
        n_sb = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
        nisa.dma_copy(dst=n_sb, src=n)
        ub = nisa.register_alloc()
        nisa.register_load(ub, n_sb)
        for i in nl.dynamic_range(1, ub):
            cell = nl.ndarray((1, 1), dtype=nl.float32, buffer=nl.sbuf)
            nisa.dma_copy(dst=cell, src=data.ap([[1, 1], [1, 1]], scalar_offset=i, indirect_dim=1))
            nisa.dma_copy(dst=out.ap([[1, 1], [1, 1]], scalar_offset=i, indirect_dim=1), src=cell)
        return out


    @nki.jit
    def count_down(data, count_input):
        val = nl.ndarray((1, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=val, src=data)
        acc = nl.zeros((1, 1), dtype=nl.float32, buffer=nl.sbuf)
        count_sb = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
        nisa.dma_copy(dst=count_sb, src=count_input)
        reg = nisa.register_alloc()
        nisa.register_load(reg, count_sb)
        while reg:
            nisa.tensor_tensor(dst=acc, data1=acc, data2=val, op=nl.add)
            nisa.tensor_scalar(dst=count_sb, data=count_sb, op0=nl.subtract, operand0=1)
            nisa.register_load(reg, count_sb)
        out = nl.ndarray((1, 1), dtype=nl.float32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=acc)
        return out
    '''


def test_runtime_loops_of_0_6_become_fori_loop_and_while_loop(tmp_path, monkeypatch):
    path = write(tmp_path, "loops06.py", LOOPS_0_6)
    out = tmp_path / "loops08.py"
    r = migrate(path, "-o", str(out))
    assert r.returncode == 0 and r.stderr == "", r.stderr
    lines = out.read_text().splitlines()
    body = lines.index("    def loop_body_i(i):")
    assert lines[body + 1] == "        cell = nl.ndarray((1, 1), dtype=nl.float32, buffer=nl.sbuf)"
    assert lines[body + 4] == "    nl.fori_loop(1, ub, loop_body_i)"
    body = lines.index("    def loop_body(reg):")
    assert lines[body + 4:body + 6] == ["        return reg", "    nl.while_loop(reg, loop_body)"]
    data = np.arange(1, 9, dtype=np.float32).reshape(1, 8)
    rows = np.where((np.arange(8) >= 1) & (np.arange(8) < 5), data, 0)
    monkeypatch.delenv("NKIC_NKI_VERSION", raising=False)
    new = load(out)
    np.testing.assert_array_equal(nki.simulate(new.first_rows)(data, np.array([[5]], np.int32)), rows)
    np.testing.assert_array_equal(nki.simulate(new.count_down)(np.array([[1.5]], np.float32),
                                                               np.array([[3]], np.int32)), [[4.5]])
    monkeypatch.setenv("NKIC_NKI_VERSION", "0.6")
    old = load(path)
    with pytest.warns(DeprecationWarning, match="nl.dynamic_range is deprecated since nki 0.6"):
        np.testing.assert_array_equal(nki.simulate(old.first_rows)(data, np.array([[5]], np.int32)), rows)


BETA2 = '''\
    import numpy as np
    import nki
    import nki.isa as nisa
    import nki.language as nl


    @nki.jit(platform_target="trn2")
    def scaled(a_input, result):
        a_tile = sbuf.view(dtype=a_input.dtype, shape=a_input.shape)
        nisa.dma_copy(dst=a_tile, src=a_input)
        acc = psum.view(dtype=nl.float32, shape=a_input.shape)
        nisa.tensor_scalar(dst=acc, data=a_tile, op0=nl.multiply, operand0=2.0)
        b_tile = sbuf.view(a_input.dtype, a_input.shape)
        nisa.tensor_copy(dst=b_tile, src=acc, dtype=a_input.dtype)
        nisa.dma_copy(dst=result, src=b_tile)
        return result


    def run(a):
        result = np.empty_like(a)
        scaled[(1,)](a, result)
        return result
    '''


def test_a_0_2_file_becomes_the_newest_api(tmp_path, monkeypatch):
    path = write(tmp_path, "beta2.py", BETA2)
    out = tmp_path / "newest.py"
    r = migrate(path, "-o", str(out))
    assert r.returncode == 0 and r.stderr == "", r.stderr
    text = out.read_text()
    assert "@nki.jit\ndef scaled" in text
    assert "    a_tile = nl.ndarray(a_input.shape, dtype=a_input.dtype, buffer=nl.sbuf)" in text
    assert "    acc = nl.ndarray(a_input.shape, dtype=nl.float32, buffer=nl.psum)" in text
    assert "    b_tile = nl.ndarray(a_input.shape, dtype=a_input.dtype, buffer=nl.sbuf)" in text
    assert "    nisa.tensor_copy(dst=b_tile, src=acc)" in text
    assert "    scaled(a, result)" in text
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    monkeypatch.setenv("NKI_SIMULATOR", "1")
    monkeypatch.delenv("NKIC_NKI_VERSION", raising=False)
    np.testing.assert_array_equal(load(out).run(a), a * 2)
    monkeypatch.setenv("NKIC_NKI_VERSION", "0.2")
    np.testing.assert_array_equal(load(path).run(a), a * 2)


def test_what_is_not_mechanical_is_marked(tmp_path):
    path = write(tmp_path, "kept.py", '''\
        import nki
        import nki.isa as nisa
        import nki.language as nl


        @nki.jit
        def last_index(data, n):
            ub = nisa.register_alloc(3)
            seen = None
            for i in nl.dynamic_range(ub):
                seen = i
            return data


        def run(k, a, r):
            return k[(2,)](a, r)
        ''')
    r = migrate(path)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    loop = ("    # nkic-migrate: nl.dynamic_range (removed in nki 0.7) cannot become nl.fori_loop mechanically: its "
            "body sets seen, which the code around it uses; keep loop state in tensors and rewrite it by hand")
    assert lines[lines.index("    for i in nl.dynamic_range(ub):") - 1] == loop
    grid = ("    # nkic-migrate: k[(2,)]: nki 0.2's launch grid (removed in nki 0.3) runs several programs; loop "
            "over them inside the kernel and call it once")
    assert lines[lines.index("    return k[(2,)](a, r)") - 1] == grid
    assert f"{path}:10: note: nkic-migrate: nl.dynamic_range (removed in nki 0.7)" in r.stderr
    assert f"{path}:16: note: nkic-migrate: k[(2,)]: nki 0.2's launch grid" in r.stderr


def test_check_is_for_legacy_files(tmp_path):
    path = write(tmp_path, "loops06.py", LOOPS_0_6)
    r = migrate(path, "--check")
    assert r.returncode == 3
    assert r.stderr.strip() == (f"nkic: error: --check compares legacy kernels with their migration; {path} is "
                                "written against the current nki API, whose older forms are rewritten unchecked")
