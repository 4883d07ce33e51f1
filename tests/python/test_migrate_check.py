"""`nkic migrate --check` proves what it claims: it compares on seeded random inputs of each
argument's dtype (never all zero) and says what they were, with the uninitialized-value
check on in both versions; what it cannot rewrite keeps the kernel from being checked, with
the reason at the line. Module-path ISA calls, activation_reduce(dtype=), integer indices of
a load and scalar --arg values are covered here; the nki-samples tutorials, when a checkout
is present, either match or are refused at a line."""
import json
import os
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NKIC = str(ROOT / "bin" / "nkic")
TUTORIALS = Path("/tmp/corpus/nki-samples/src/nki_samples/tutorials")
SEEDED = "--arg (arrays of seeded random values, seed 0)"


def nkic(*args, env=None):
    return subprocess.run([NKIC, *args], capture_output=True, text=True, timeout=600,
                          env={**os.environ, **(env or {})})


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


SCALE = '''\
    import numpy as np
    from neuronxcc import nki
    import neuronxcc.nki.language as nl


    @nki.jit
    def scale(a, factor):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out, value=nl.multiply(nl.load(a), factor))
        return out
    '''


def test_check_says_what_it_compared_on_seeded_random_inputs(tmp_path):
    path = write(tmp_path, "scale.py", SCALE)
    r = nkic("migrate", str(path), "--arg", "a=bf16[128,64]", "--arg", "factor=0.5", "--check", "-o",
             str(tmp_path / "out.py"))
    assert r.returncode == 0, r.stderr
    assert r.stderr.splitlines() == [f"scale inputs from {SEEDED}: a: bfloat16[128, 64], factor = 0.5",
                                     "scale output 0 (bfloat16[128, 64]): bitwise equal"]
    machine = nkic("migrate", str(path), "--arg", "a=i32[128,64]", "--arg", "factor=2", "--check", "--json")
    report = json.loads(machine.stdout)
    assert report["inputs"] == {"scale": {"source": SEEDED, "values": ["a: int32[128, 64]", "factor = 2"],
                                          "all_zero": False}}
    assert report["check"][0]["bitwise"] and report["ok"]


def test_all_zero_inputs_from_the_file_are_called_out(tmp_path):
    path = write(tmp_path, "scale.py", SCALE + '''

    def make_inputs():
        return (np.zeros((128, 64), np.float32), 3.0)
    ''')
    r = nkic("migrate", str(path), "--check", "-o", str(tmp_path / "out.py"))
    assert r.returncode == 0, r.stderr
    assert r.stderr.splitlines()[0] == ("scale inputs from make_inputs(): a: float32[128, 64], factor = 3.0 "
                                        "(every input array is all zero: equal outputs prove little)")


@pytest.mark.parametrize("command", ["trace", "check", "run", "profile"])
def test_scalar_args_work_in_every_command(tmp_path, command):
    path = write(tmp_path, "scale.py", SCALE)
    r = nkic(command, f"{path}::scale", "--arg", "a=f32[128,64]", "--arg", "factor=2")
    assert r.returncode == 0, r.stderr
    bad = nkic(command, f"{path}::scale", "--arg", "a=f32[128,64]", "--arg", "factor=[2]")
    assert bad.returncode == 3
    assert bad.stderr.strip().endswith("cannot parse --arg 'factor=[2]': '[2]' is neither an array spec "
                                       "DTYPE[D0,D1,...] nor a number, True, False, None or a tuple of them")


def test_module_path_calls_and_activation_reduce_dtype_convert(tmp_path):
    path = write(tmp_path, "paths.py", '''\
        import numpy as np
        import neuronxcc
        from neuronxcc import nki
        import neuronxcc.nki.isa as nisa
        import neuronxcc.nki.language as nl


        @nki.jit
        def exp_sum(a, b):
            out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
            sums = nl.ndarray((a.shape[0], 1), dtype=nl.float32, buffer=nl.shared_hbm)
            x = nl.load(a)
            y = nki.isa.tensor_tensor(x, nl.load(b), op=np.add)
            z = neuronxcc.nki.isa.tensor_scalar(y, np.multiply, 0.5)
            s = nl.ndarray((a.shape[0], 1), dtype=nl.float32)
            e = nisa.activation_reduce(op=np.exp, data=z, reduce_op=np.add, reduce_res=s, dtype=nl.float32)
            nl.store(out, value=neuronxcc.nki.language.copy(e))
            nl.store(sums, value=s)
            return out, sums
        ''')
    out = tmp_path / "out.py"
    r = nkic("migrate", str(path), "--arg", "a=f32[128,64]", "--arg", "b=f32[128,64]", "--check", "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert r.stderr.splitlines()[1:] == ["exp_sum output 0 (float32[128, 64]): bitwise equal",
                                         "exp_sum output 1 (float32[128, 1]): bitwise equal"]
    lines = out.read_text().splitlines()
    assert "    nisa.tensor_tensor(y, x, nl.load(b), op=nl.add)" in lines
    assert "    nisa.tensor_scalar(z, y, nl.multiply, 0.5)" in lines
    assert "    e = nl.ndarray(z.shape, dtype=nl.float32, buffer=nl.sbuf)" in lines
    assert "    nisa.activation_reduce(dst=e, op=nl.exp, data=z, reduce_op=nl.add, reduce_res=s)" in lines
    assert "    nisa.dma_copy(dst=out, src=nl.copy(e))" in lines
    assert "neuronxcc.nki" not in out.read_text() and "nki.isa." not in out.read_text()


def test_an_integer_index_the_load_keeps_becomes_a_unit_slice(tmp_path):
    path = write(tmp_path, "column.py", '''\
        import numpy as np
        from neuronxcc import nki
        import neuronxcc.nki.language as nl


        @nki.jit
        def column(a):
            out = nl.ndarray((128, 4), dtype=a.dtype, buffer=nl.shared_hbm)
            for j in nl.affine_range(4):
                c = nl.load(a[0:128, j])
                nl.store(out[0:128, j:j + 1], value=c)
            return out
        ''')
    out = tmp_path / "out.py"
    r = nkic("migrate", str(path), "--arg", "a=f32[128,4]", "--check", "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert "        c = nl.ndarray(a[0:128, j:j + 1].shape, dtype=a.dtype, buffer=nl.sbuf)" in out.read_text()


def test_what_is_left_as_written_keeps_the_kernel_from_being_checked_at_its_line(tmp_path):
    path = write(tmp_path, "nested.py", '''\
        import numpy as np
        from neuronxcc import nki
        import neuronxcc.nki.isa as nisa
        import neuronxcc.nki.language as nl


        @nki.jit
        def nested(a):
            out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
            x = nl.load(a)
            nl.store(out, value=nl.multiply(x, nisa.nc_transpose(x)))
            return out
        ''')
    r = nkic("migrate", str(path), "--arg", "a=f32[128,128]", "--check", "-o", str(tmp_path / "out.py"))
    reason = ("nisa.nc_transpose inside an expression: a current-API ISA call writes its result into a "
              "destination; assign it to a name first")
    assert r.returncode == 2
    assert r.stderr.splitlines()[-2:] == [
        f"{path}:11: note: nkic-migrate: {reason}",
        f"{path}:11: error: nkic-migrate: nested is not checked: this line is left as written ({reason})"]
    report = json.loads(nkic("migrate", str(path), "--arg", "a=f32[128,128]", "--check", "--json").stdout)
    assert report["ok"] is False and report["refused"] == [{"kernel": "nested", "line": 11, "message": reason}]


def test_an_uninitialized_value_in_the_output_is_no_match(tmp_path):
    path = write(tmp_path, "half.py", '''\
        import numpy as np
        from neuronxcc import nki
        import neuronxcc.nki.language as nl


        @nki.jit
        def half(a):
            out = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.shared_hbm)
            t = nl.ndarray((128, 64), dtype=a.dtype)
            t[:, 0:32] = nl.load(a[:, 0:32])
            nl.store(out, value=t)
            return out
        ''')
    r = nkic("migrate", str(path), "--arg", "a=f32[128,64]", "--check", "-o", str(tmp_path / "out.py"))
    assert r.returncode == 2
    assert (f"{path}:11:5: error: [err_read_uninitialized_memory] Read of uninitialized memory reaches an output: "
            "element [0, 32] of tensor `out` is computed from element [0, 32] of tensor `t`") in r.stderr


F32 = "rng.random({}).astype(np.float32)"
MAMBA = (f"({F32.format('(1, 256, 512)')}, {F32.format('(1, 256, 512)')}, -{F32.format('(256, 16)')}, "
         f"{F32.format('(1, 16, 512)')}, {F32.format('(1, 16, 512)')})")
ATTENTION = "tuple(((rng.random((128, 128)) - 0.5) * 2).astype(np.float32) for _ in range(3))"
# The tutorials test_migrate.py does not run: (file, kernel, inputs, grid, the line of the refusal or None)
MORE_TUTORIALS = [
    ("tensor_addition/spmd_tensor_addition_nki_kernels.py", "nki_tensor_add_kernel_",
     "(rng.random((256, 1024)).astype(np.float16), rng.random((256, 1024)).astype(np.float16))", "2,2", None),
] + [("fused_mamba/mamba_nki_kernels.py", f"mamba_{v}", MAMBA, None, None) for v in ("v1", "v2", "v3")] + [
    ("sd_attention/sd_attention_nki_kernels.py", "fused_self_attn_for_SD_small_head_size",
     "tuple(rng.random((4096, 64)).astype(np.float32) for _ in range(3))", None,
     "nisa.nc_transpose inside an expression"),
    ("rotary/rotary_nki_kernels.py", "nki_apply_rotary_embedding",
     f"({F32.format('(1, 2, 200, 64)')}, {F32.format('(1, 2, 200, 64)')}, {F32.format('(1, 200, 64)')}, "
     f"{F32.format('(1, 200, 64)')})", "1,2", "nl.par_dim outside a literal shape tuple"),
    ("attention_fwd_performance/attention_kernels.py", "attn_fwd_v1", ATTENTION, None,
     "nki.compiler.sbuf.mod_alloc: the current API has no nki.compiler"),
]
HOST_STUBS = ("torch", "torch/nn", "torch/profiler", "torch_xla", "torch_xla/core", "torch_neuronx", "loguru",
              "transformers", "transformers/models", "transformers/models/llama")


@pytest.mark.skipif(not TUTORIALS.is_dir(), reason="no nki-samples checkout at /tmp/corpus/nki-samples")
@pytest.mark.parametrize("rel,kernel,inputs,grid,refusal", MORE_TUTORIALS, ids=[c[1] for c in MORE_TUTORIALS])
def test_every_tutorial_matches_or_is_refused_at_a_line(rel, kernel, inputs, grid, refusal, tmp_path):
    stub = tmp_path / "stub"  # host-side imports of the tutorial files, unused by the kernels
    for name in HOST_STUBS:
        (stub / name).mkdir(parents=True)
        (stub / name / "__init__.py").write_text("def __getattr__(name):\n    return None\n")
    (stub / "torch_xla/core/xla_model.py").write_text("")
    (stub / "transformers/models/llama/modeling_llama.py").write_text("apply_rotary_pos_emb = None\n")
    work = tmp_path / "tutorial"
    shutil.copytree(TUTORIALS / Path(rel).parent, work)
    path = work / Path(rel).name
    path.write_text(path.read_text() + "\n\ndef make_inputs():\n    import numpy as np\n"
                    f"    rng = np.random.default_rng(0)\n    return {inputs}\n")
    r = nkic("migrate", f"{path}::{kernel}", "--check", "-o", str(tmp_path / "migrated.py"),
             *(["--grid", grid] if grid else []), env={"PYTHONPATH": str(stub)})
    if refusal is None:
        assert r.returncode == 0, r.stderr
        assert [line for line in r.stderr.splitlines() if " output " in line] == [
            line for line in r.stderr.splitlines() if line.endswith("bitwise equal")]
        return
    assert r.returncode == 2, r.stderr
    refused = [line for line in r.stderr.splitlines() if f"error: nkic-migrate: {kernel} is not checked" in line]
    assert refused and all(line.startswith(f"{path}:") for line in refused), r.stderr
    assert refusal in refused[0]


def test_a_kernel_imported_from_another_file_is_checked_with_that_file(tmp_path):
    write(tmp_path, "kernels.py", SCALE)
    caller = write(tmp_path, "caller.py", '''\
        import numpy as np
        from kernels import scale


        def scale_twice(a):
            return scale(scale(a, 2.0), 2.0)


        def make_inputs():
            return (np.ones((128, 64), np.float32), 2.0)
        ''')
    r = nkic("migrate", str(caller), "--check", env={"PYTHONPATH": str(tmp_path)})
    assert r.returncode == 3
    assert r.stderr.strip() == (f"nkic: error: {caller} defines no legacy kernel; scale comes from another file: "
                                "migrate that file")
    assert nkic("migrate", str(caller), env={"PYTHONPATH": str(tmp_path)}).returncode == 0
