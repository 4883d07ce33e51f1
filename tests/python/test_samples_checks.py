"""Every nki-samples tutorial and contributed kernel (the public corpus at
/tmp/corpus/nki-samples, commit fc5c69f; skipped without it) simulates with the
uninitialized-value and race checks on and no error. The ragged-tile kernels (a last tile
of 250 rows, a 448-row pooling, a channel count below 128) compute on rows their masked
loads never wrote and their masked stores drop: one warning, at a line of the kernel's
file, and no NaN in the outputs. mamba and the contributed matmul accumulate into SBUF
across affine_range iterations: no race. The kernel files are read where they are; their
host-side imports (torch, torch_xla, ...) are stubbed for the load."""
import os
import sys
import types
import warnings
from pathlib import Path

import numpy as np
import pytest

from neuronxcc import nki
import neuronxcc.nki.language as nl

SAMPLES = Path("/tmp/corpus/nki-samples")
TUT = "src/nki_samples/tutorials/"
HOST_MODULES = ("torch", "torch.nn", "torch.nn.functional", "torch.profiler", "torch_xla", "torch_xla.core",
                "torch_xla.core.xla_model", "torch_neuronx", "loguru", "transformers", "transformers.models",
                "transformers.models.llama", "transformers.models.llama.modeling_llama")
pytestmark = pytest.mark.skipif(not SAMPLES.is_dir(), reason="no nki-samples checkout at /tmp/corpus/nki-samples")


class _HostStub(types.ModuleType):
    """A host-side module the kernel files import but their kernels never use."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _HostStub(name)


def f32(*shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).random(shape).astype(dtype)


def attention_inputs(seqlen):
    return tuple((f32(128, seqlen, seed=s) - 0.5) * 2 for s in range(3))


MATMUL = TUT + "matrix_multiplication/matrix_multiplication_nki_kernels.py"
# (id, file, kernel, launch grid, inputs, ragged: warns of dropped rows)
CASES = [
    ("tensor_add", TUT + "tensor_addition/tensor_addition_nki_kernels.py", "nki_tensor_add_kernel_", (2, 2),
     lambda: (f32(256, 1024, dtype=np.float16), f32(256, 1024, dtype=np.float16, seed=1)), False),
    ("spmd_tensor_add", TUT + "tensor_addition/spmd_tensor_addition_nki_kernels.py", "nki_tensor_add_kernel_",
     (2, 2), lambda: (f32(256, 1024, dtype=np.float16), f32(256, 1024, dtype=np.float16, seed=1)), False),
    ("spmd_multiple_nc_tensor_add", TUT + "tensor_addition/spmd_multiple_nc_tensor_addition_nki_kernels.py",
     "nki_tensor_add_kernel_", (nl.spmd_dim(2, nl.nc(2)), 4),
     lambda: (f32(512, 2048, dtype=np.float16), f32(512, 2048, dtype=np.float16, seed=1)), False),
    ("transpose2d", TUT + "transpose2d/transpose2d_nki_kernels.py", "tensor_transpose2D_kernel_", None,
     lambda: (np.arange(60, dtype=np.int8).reshape(5, 12), (3, 4)), False),
    ("average_pool2d", TUT + "average_pool2d/average_pool2d_nki_kernels.py", "tensor_avgpool_kernel", None,
     lambda: (f32(2, 6, 6, dtype=np.float16), 2), False),
    ("rmsnorm_250_rows", TUT + "rmsnorm/rmsnorm_nki_kernels.py", "nki_rmsnorm_kernel", None,
     lambda: (f32(250, 512), f32(512, seed=1)), True),
    ("softmax_250_rows", TUT + "softmax/softmax_nki_kernels.py", "nki_softmax_kernel", None,
     lambda: (f32(250, 512),), True),
    ("layernorm_v1_250_rows", TUT + "layernorm/layernorm_nki_kernel.py", "nki_layernorm_kernel_v1", None,
     lambda: (f32(250, 512), 1e-5, f32(512, seed=1), f32(512, seed=2)), True),
    ("layernorm_v2_250_rows", TUT + "layernorm/layernorm_nki_kernel.py", "nki_layernorm_kernel_v2", None,
     lambda: (f32(250, 512), 1e-5, f32(512, seed=1), f32(512, seed=2)), True),
    ("matmul_basic", MATMUL, "nki_matmul_basic_", None, lambda: (f32(128, 64), f32(128, 512, seed=1)), False),
] + [
    (f"matmul_{name}", MATMUL, f"nki_matmul_{name}_", None,
     lambda extra=extra: (f32(256, 256), f32(256, 1024, seed=1), *extra), False)
    for name, extra in (("tiled", ()), ("hoist_load", ()), ("block_free_dimension", ()),
                        ("fully_optimized", (2, 2, 2)))
] + [
    (f"mamba_{v}", TUT + "fused_mamba/mamba_nki_kernels.py", f"mamba_{v}", None,
     lambda: (f32(1, 256, 512), f32(1, 256, 512, seed=1), -f32(256, 16, seed=2), f32(1, 16, 512, seed=3),
              f32(1, 16, 512, seed=4)), False)
    for v in ("v1", "v2", "v3")
] + [
    ("sd_attention", TUT + "sd_attention/sd_attention_nki_kernels.py", "fused_self_attn_for_SD_small_head_size",
     None, lambda: tuple(f32(4096, 64, dtype=nl.bfloat16, seed=s) for s in range(3)), False),
    ("rotary_200_rows", TUT + "rotary/rotary_nki_kernels.py", "nki_apply_rotary_embedding", (1, 2),
     lambda: (f32(1, 2, 200, 64), f32(1, 2, 200, 64, seed=1), f32(1, 200, 64, seed=2), f32(1, 200, 64, seed=3)),
     True),
] + [
    (f"attn_fwd_{v}", TUT + "attention_fwd_performance/attention_kernels.py", f"attn_fwd_{v}", None,
     lambda v=v: attention_inputs(128 if v in ("v1", "v2") else 1024), False)
    for v in ("v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v8a", "v9", "v10", "v11")
] + [
    ("contributed_matmul", "contributed/matmul.py", "matmul", None,
     lambda: (f32(2048, 512, dtype=np.float16), f32(2048, 2048, dtype=np.float16, seed=1)), False),
    ("contributed_maxpooling_448", "contributed/maxpooling.py", "max_pooling_2d_stride_1", None,
     lambda: (f32(448, 448), 3), True),
    ("contributed_bilinear_64_channels", "contributed/interpolate_bilinear_fwd.py", "interpolate_bilinear_2x_fwd",
     None, lambda: (f32(1, 64, 32, 32),), True),
    ("contributed_trilinear_64_channels", "contributed/interpolate_trilinear_fwd.py",
     "interpolate_trilinear_2x_fwd", None, lambda: (f32(1, 64, 8, 8, 8),), True),
]


@pytest.fixture(scope="module")
def load(request):
    """Loads a kernel file of the corpus once (by path) with its host-side imports stubbed."""
    saved = {name: sys.modules.get(name) for name in HOST_MODULES}
    for name in HOST_MODULES:
        sys.modules[name] = _HostStub(name)
    loaded = {}

    def module(rel):
        if rel not in loaded:
            path = str(SAMPLES / rel)
            sys.path.insert(0, os.path.dirname(path))  # sibling imports of the tutorials
            mod = types.ModuleType(Path(rel).stem)
            mod.__file__ = path
            with open(path) as f:
                exec(compile(f.read(), path, "exec"), mod.__dict__)
            loaded[rel] = mod
        return loaded[rel]

    yield module
    for name, mod in saved.items():
        if mod is None:
            sys.modules.pop(name, None)
        else:
            sys.modules[name] = mod


@pytest.mark.parametrize("rel,kernel,grid,inputs,ragged", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_simulates_with_both_checks_and_no_false_error(load, rel, kernel, grid, inputs, ragged):
    k = getattr(load(rel), kernel)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        outs = nki.simulate_kernel(k[grid] if grid else k, *inputs(), check_uninitialized=True, check_races=True)
    dropped = [w for w in record if str(w.message).startswith("[warn_uninitialized_value_dropped]")]
    assert len(dropped) == (1 if ragged else 0), [str(w.message) for w in dropped]
    assert all(w.filename == str(SAMPLES / rel) for w in dropped)
    for out in outs if isinstance(outs, tuple) else (outs,):
        if out is not None and np.issubdtype(out.dtype, np.floating):
            assert not np.isnan(out.astype(np.float32)).any()
