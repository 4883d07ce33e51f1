"""nkic migrate: legacy neuronxcc.nki files rewritten into the current nki API. The
shipped examples and self-written kernels of every rewritten idiom migrate and simulate
to the same numbers (--check); what cannot be rewritten is marked at its line; the exit
codes are those of the other commands. The nki-samples tutorials run when a checkout of
the public corpus is present (they are copied to a temporary folder with a
make_inputs() appended, never into the repository)."""
import ast
import os
import subprocess
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NKIC = str(ROOT / "bin" / "nkic")
EXAMPLES = ["tensor_add", "masked_add", "matmul_tiled", "softmax_rows", "causal_attention"]
TUTORIALS = Path("/tmp/corpus/nki-samples/src/nki_samples/tutorials")
LEGACY = ("neuronxcc", "nl.arange", "nl.mgrid", "mask=", "par_dim", "simulate_kernel", "nki.trace",
          "platform_target")


def code(text):
    """The program text without docstrings and comments (which may mention legacy names)."""
    tree = ast.parse(text)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            node.body = body[1:] or [ast.Pass()]
    return ast.unparse(tree)


def nkic(*args, cwd=ROOT, env=None):
    return subprocess.run([NKIC, *args], cwd=cwd, capture_output=True, text=True, timeout=300,
                          env={**os.environ, **(env or {})})


def migrate(path, *args, **kw):
    return nkic("migrate", str(path), *args, **kw)


@pytest.mark.parametrize("name", EXAMPLES)
def test_examples_migrate_and_match(name, tmp_path):
    out = tmp_path / f"{name}.py"
    r = migrate(f"examples/{name}.py", "--check", "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert "bitwise equal" in r.stderr
    text = code(out.read_text())
    for legacy in LEGACY:
        assert legacy not in text, legacy
    # the migrated file is an ordinary current-API kernel file: its reference() still holds
    run = nkic("run", str(out), "-q")
    assert run.returncode == 0, run.stdout + run.stderr


def test_untouched_code_keeps_its_text(tmp_path):
    out = tmp_path / "softmax_rows.py"
    assert migrate("examples/softmax_rows.py", "-o", str(out)).returncode == 0
    old, new = (ROOT / "examples/softmax_rows.py").read_text().splitlines(), out.read_text().splitlines()
    tail = old[old.index("def make_inputs():"):]
    assert new[new.index("def make_inputs():"):] == [line.replace("nki.simulate_kernel(softmax_kernel, x)",
                                                                    "nki.simulate(softmax_kernel)(x)")
                                                       for line in tail]
    assert old[0] == new[0] and "    n, d = x.shape" in new


MIX = '''\
    import numpy as np

    import neuronxcc.nki as nki
    import neuronxcc.nki.isa as nisa
    import neuronxcc.nki.language as nl


    def scale_rows(t, s):
        return nisa.tensor_scalar(t, np.multiply, s, dtype=nl.float32)


    @nki.trace
    def plus_one(t):
        return nl.add(t, 1.0)


    @nki.jit(mode="trace")
    def twice(t):
        return nl.multiply(t, 2.0)


    @nki.jit(platform_target="trn2")
    def mix_kernel(x, w):
        out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
        i = nl.mgrid[0:128, 0:512]
        i_p, i_k = nl.mgrid[0:128, 0:128]
        xt = nl.load(x[i.p, i.x])           # a comment that stays
        scaled = scale_rows(xt, 2.0)
        blocks = nl.ndarray((2, nl.par_dim(128), 128), dtype=w.dtype, buffer=nl.sbuf)
        for b in nl.affine_range(2):
            blocks[b, i_p, i_k] = nl.load(w[b * 128 + i_p, i_k])
        acc = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.psum)
        for b in nl.affine_range(2):
            acc += nisa.nc_matmul(blocks[b, i_p, i_k], xt[i.p, i.x])
        again = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
        for b in nl.affine_range(2):
            again[...] = nisa.nc_matmul(blocks[b, i_p, i_k], xt[i.p, i.x])
        again[...] += nisa.nc_matmul(blocks[0, i_p, i_k], xt[i.p, i.x])
        res = nisa.tensor_tensor(plus_one(nl.copy(acc)), twice(nl.copy(again)), op=nl.add)
        nl.store(out[i.p, i.x], value=nl.add(res, scaled))
        return out


    def make_inputs():
        rng = np.random.default_rng(7)
        return (rng.standard_normal((128, 512)).astype(np.float32),
                rng.standard_normal((256, 128)).astype(np.float32))
'''


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def test_every_idiom_of_a_self_written_kernel(tmp_path):
    path = write(tmp_path, "mix.py", MIX)
    r = migrate(path, "--check")
    assert r.returncode == 0, r.stderr
    assert "mix_kernel output 0 (float32[128, 512]): bitwise equal" in r.stderr
    text = r.stdout
    for legacy in LEGACY + ("dtype=nl.float32)", "np.multiply", "@nki.jit(", "+="):
        assert legacy not in text, legacy
    lines = text.splitlines()
    # helpers are plain functions; the kernel's decorator loses platform_target=
    assert lines[lines.index("def plus_one(t):") - 1] == "" and "@nki.jit" in lines[lines.index(
        "def mix_kernel(x, w):") - 1]
    assert "    result = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)" in lines
    assert "    nisa.tensor_scalar(result, t, nl.multiply, s)" in lines
    assert "    return result" in lines
    assert "    xt = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)" in lines
    assert "    nisa.dma_copy(dst=xt, src=x[:128, :512])           # a comment that stays" in lines
    assert "    blocks = nl.ndarray((128, 2, 128), dtype=w.dtype, buffer=nl.sbuf)" in lines
    assert "        nisa.dma_copy(dst=blocks[:128, b, :128], src=w[b * 128:b * 128 + 128, :128])" in lines
    # a PSUM tile zeroed for `+=` is allocated only: the first matmul overwrites it
    assert "    acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)" in lines
    assert "        nisa.nc_matmul(acc, blocks[:128, b, :128], xt[:128, :512])" in lines
    assert "        nisa.nc_matmul(again[...], blocks[:128, b, :128], xt[:128, :512], accumulate=False)" in lines
    assert "    nisa.nc_matmul(again[...], blocks[:128, 0, :128], xt[:128, :512], accumulate=True)" in lines
    assert "    res = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)" in lines
    assert "    nisa.dma_copy(dst=out[:128, :512], src=nl.add(res, scaled))" in lines


def test_access_patterns_masks_and_spmd_grids(tmp_path):
    path = write(tmp_path, "grid.py", '''\
        import numpy as np
        from neuronxcc import nki
        import neuronxcc.nki.language as nl


        @nki.jit
        def swap_kernel(a):
            p, f = a.shape
            out = nl.ndarray((p, f), dtype=a.dtype, buffer=nl.shared_hbm)
            t = nl.load(a)
            i0, i1, i2 = nl.mgrid[0:p, 0:4, 0:f // 4]
            s = nl.ndarray((p, f), dtype=a.dtype)
            s[i0, i2 * 4 + i1] = nl.copy(t[i0, i1 * (f // 4) + i2])
            nl.store(out, value=s)
            return out


        @nki.jit
        def rows_kernel(a):
            n, m = a.shape
            out = nl.ndarray((n, m), dtype=a.dtype, buffer=nl.shared_hbm)
            i_f = nl.arange(m)[None, :]
            r = nl.program_id(0) * 128 + nl.arange(128)[:, None]
            x = nl.load(a[r, i_f], mask=(r < n))
            nl.store(out[r, i_f], value=nl.exp(x, mask=(r < n)), mask=(r < n))
            return out
        ''')
    swap = migrate(f"{path}::swap_kernel", "--arg", "a=f32[16,32]", "--check")
    assert swap.returncode == 0, swap.stderr
    assert ("    nisa.tensor_copy(dst=s.ap([[s.shape[1], p], [1, 4], [4, f // 4]], offset=0), "
            "src=t.ap([[t.shape[1], p], [f // 4, 4], [1, f // 4]], offset=0))") in swap.stdout.splitlines()
    rows = migrate(f"{path}::rows_kernel", "--arg", "a=f32[300,64]", "--grid", "3", "--check")
    assert rows.returncode == 0, rows.stderr
    lines = rows.stdout.splitlines()
    assert "def rows_kernel(a, spmd_grid=(3,)):" in lines
    assert "    for spmd_0 in nl.affine_range(spmd_grid[0]):" in lines
    assert ("        nisa.dma_copy(dst=x[0:min(128, n - (spmd_0 * 128))], "
            "src=a[spmd_0 * 128:min(spmd_0 * 128 + 128, n), :m])") in lines
    assert "        nisa.dma_copy(dst=out[spmd_0 * 128:min(spmd_0 * 128 + 128, n), :m], " \
           "src=nl.exp(x[0:min(128, n - (spmd_0 * 128))])[0:min(128, n - (spmd_0 * 128))])" in lines


def test_what_cannot_be_rewritten_is_marked(tmp_path):
    path = write(tmp_path, "marked.py", '''\
        import numpy as np
        import neuronxcc.nki as nki
        import neuronxcc.nki.isa as nisa
        import neuronxcc.nki.language as nl


        @nki.jit
        def fill_kernel(a):
            out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
            z = nisa.memset((128, 64), 1.0, nl.float32)
            i_p = nl.arange(128)[:, None]
            i_f = nl.arange(64)[None, :]
            t = nl.load(a[i_p, i_f], mask=(i_p >= 2))
            nl.store(out, value=nl.add(z, t))
            return out


        def make_inputs():
            return (np.ones((128, 64), np.float32),)
        ''')
    r = migrate(path)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    memset = "    # nkic-migrate: nisa.memset: the current signature takes a destination and a pattern; " \
             "rewrite it by hand"
    assert lines[lines.index("    z = nisa.memset((128, 64), 1.0, nl.float32)") - 1] == memset
    assert "    # nkic-migrate: a mask other than `index < bound` (combined with &)" in lines
    assert f"{path}:10: note: nkic-migrate: nisa.memset: the current signature" in r.stderr
    assert f"{path}:13: note: nkic-migrate: a mask other than `index < bound`" in r.stderr


def test_untraced_destinations_are_marked(tmp_path):
    path = write(tmp_path, "untraced.py", '''\
        import neuronxcc.nki as nki
        import neuronxcc.nki.isa as nisa
        import neuronxcc.nki.language as nl


        @nki.jit
        def recip_kernel(a):
            out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
            t = nl.load(a)
            r = nisa.reciprocal(t)
            nl.store(out, value=r)
            return out
        ''')
    r = migrate(path)
    assert r.returncode == 0, r.stderr
    assert f"{path}:10: note: nkic-migrate: nisa.reciprocal: its result shape is not known" in r.stderr
    traced = migrate(path, "--arg", "a=f32[128,32]", "--check")
    assert traced.returncode == 0, traced.stderr
    assert "    r = nl.ndarray(t.shape, dtype=t.dtype, buffer=nl.sbuf)" in traced.stdout.splitlines()


def test_a_kernel_that_is_not_a_function_of_its_inputs_mismatches(tmp_path):
    path = write(tmp_path, "impure.py", '''\
        import numpy as np
        import neuronxcc.nki as nki
        import neuronxcc.nki.language as nl


        @nki.jit
        def noisy_kernel(a):
            out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
            nl.store(out, value=nl.add(nl.load(a), float(np.random.rand())))
            return out
        ''')
    r = migrate(path, "--arg", "a=f32[128,32]", "--check", "-o", str(tmp_path / "out.py"))
    assert r.returncode == 1, r.stderr
    assert "noisy_kernel output 0 (float32[128, 32]): MISMATCH: max abs error" in r.stderr
    assert (tmp_path / "out.py").exists()


def test_exit_codes(tmp_path):
    bad = write(tmp_path, "bad.py", '''\
        import neuronxcc.nki as nki
        import neuronxcc.nki.language as nl


        @nki.jit
        def bad_kernel(a):
            out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
            nl.store(out, value=nl.load(a[0:256, :]))
            return out
        ''')
    r = migrate(bad, "--arg", "a=f32[128,32]")
    assert r.returncode == 2 and f"{bad}:8:" in r.stderr and "error: [err_" in r.stderr
    missing = migrate(tmp_path / "nope.py")
    assert missing.returncode == 3 and "no such file" in missing.stderr
    no_inputs = migrate(bad, "--check")
    assert no_inputs.returncode == 3 and "--check needs inputs" in no_inputs.stderr
    two = write(tmp_path, "two.py", MIX.replace("def make_inputs", "def unused"))
    assert "--arg needs one kernel" in migrate(two, "--arg", "x=f32[128,512]").stderr


def _tutorial(tmp_path, rel, inputs):
    """A copy of the tutorial file with make_inputs() appended, in tmp_path."""
    src = (TUTORIALS / rel).read_text()
    path = tmp_path / Path(rel).name
    path.write_text(src + "\n\ndef make_inputs():\n    import numpy as np\n    rng = np.random.default_rng(0)\n"
                    f"    return {inputs}\n")
    return path


F32 = "rng.random({}).astype(np.float32)"
CORPUS = [
    ("tensor_addition/tensor_addition_nki_kernels.py", "nki_tensor_add_kernel_",
     "(rng.random((256, 1024)).astype(np.float16), rng.random((256, 1024)).astype(np.float16))", "2,2"),
    ("transpose2d/transpose2d_nki_kernels.py", "tensor_transpose2D_kernel_",
     "(np.arange(60, dtype=np.int8).reshape(5, 12), (3, 4))", None),
    ("average_pool2d/average_pool2d_nki_kernels.py", "tensor_avgpool_kernel",
     "(np.arange(72, dtype=np.float16).reshape(2, 6, 6), 2)", None),
    ("rmsnorm/rmsnorm_nki_kernels.py", "nki_rmsnorm_kernel", f"({F32.format('(300, 512)')}, {F32.format(512)})",
     None),
    ("softmax/softmax_nki_kernels.py", "nki_softmax_kernel", f"({F32.format('(300, 512)')},)", None),
    # both layernorms take the same inputs: migrated and checked together
    ("layernorm/layernorm_nki_kernel.py", None,
     f"({F32.format('(300, 700)')}, 1e-5, {F32.format(700)}, {F32.format(700)})", None),
] + [
    ("matrix_multiplication/matrix_multiplication_nki_kernels.py", k,
     f"({F32.format('(128, 64)' if k == 'nki_matmul_basic_' else '(256, 256)')}, "
     f"{F32.format('(128, 512)' if k == 'nki_matmul_basic_' else '(256, 1024)')}"
     f"{', 2, 2, 2' if k == 'nki_matmul_fully_optimized_' else ''})", None)
    for k in ("nki_matmul_basic_", "nki_matmul_tiled_", "nki_matmul_hoist_load_",
              "nki_matmul_block_free_dimension_", "nki_matmul_fully_optimized_")]


@pytest.mark.skipif(not TUTORIALS.is_dir(), reason="no nki-samples checkout at /tmp/corpus/nki-samples")
@pytest.mark.parametrize("rel,kernel,inputs,grid", CORPUS, ids=[c[1] or Path(c[0]).stem for c in CORPUS])
def test_nki_samples_tutorials(rel, kernel, inputs, grid, tmp_path):
    stub = tmp_path / "stub" / "torch_xla" / "core"  # softmax imports torch_xla for its caller only
    stub.mkdir(parents=True)
    for f in (stub.parent / "__init__.py", stub / "__init__.py", stub / "xla_model.py"):
        f.write_text("")
    path = _tutorial(tmp_path, rel, inputs)
    args = ["--grid", grid] if grid else []
    r = migrate(f"{path}::{kernel}" if kernel else path, "--check", "-o", str(tmp_path / "migrated.py"), *args,
                env={"PYTHONPATH": str(tmp_path / "stub")})
    assert r.returncode == 0, r.stderr
    checked = [line for line in r.stderr.splitlines() if " output 0 " in line]
    assert len(checked) == (1 if kernel else 2) and all(line.endswith("bitwise equal") for line in checked)
    assert "nkic-migrate:" not in r.stderr
    text = code((tmp_path / "migrated.py").read_text())
    for legacy in ("neuronxcc", "nl.arange", "nl.mgrid", "mask=", "par_dim"):
        assert legacy not in text, legacy


def test_new_code_uses_the_files_own_module_names(tmp_path):
    path = write(tmp_path, "aliases.py", '''\
        from neuronxcc import nki as knl
        import neuronxcc.nki.language as language


        @knl.jit
        def copy_kernel(a):
            out = language.ndarray(a.shape, dtype=a.dtype, buffer=language.shared_hbm)
            language.store(out, value=language.load(a))
            t = language.load(a)
            return out
        ''')
    r = migrate(path, "--arg", "a=f32[128,32]", "--check")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[:3] == ["import nki as knl", "import nki.language as language", "import nki.isa as nisa"]
    assert "    t = language.ndarray(a.shape, dtype=a.dtype, buffer=language.sbuf)" in lines
    assert "    nisa.dma_copy(dst=out, src=language.load(a))" in lines


def test_a_block_selected_by_its_leading_index_keeps_every_partition(tmp_path):
    path = write(tmp_path, "blocks.py", '''\
        import neuronxcc.nki as nki
        import neuronxcc.nki.language as nl


        @nki.jit
        def pick_kernel(a):
            out = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.shared_hbm)
            tiles = nl.ndarray((2, nl.par_dim(128), 64), dtype=a.dtype, buffer=nl.sbuf)
            for b in nl.affine_range(2):
                tiles[b] = nl.load(a[b * 128:(b + 1) * 128, :])
            nl.store(out, value=nl.copy(tiles[1]))
            return out
        ''')
    r = migrate(path, "--arg", "a=f32[256,64]", "--check")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert "        nisa.dma_copy(dst=tiles[:, b], src=a[b * 128:(b + 1) * 128, :])" in lines
    assert "    nisa.dma_copy(dst=out, src=nl.copy(tiles[:, 1]))" in lines
