"""Kernels written for NKI 0.2 (Beta 2), run unchanged under NKIC_NKI_VERSION=0.2 against
numpy references written here (the mx ones with tests/python/mx_reference.py), and rejected
with the 0.3 migration hint at their own line under the newest version: the 0.2-era
tutorials of nki-samples (NKIC_NKI_SAMPLES, default /tmp/corpus/nki-samples-head) and
triton-viz's examples/nki_beta2 (NKIC_TRITON_VIZ, default /tmp/corpus/triton-viz). Each is
skipped without its checkout."""
import ast
import importlib.util
import os

import numpy as np
import pytest

import nki
import nki.language as nl
import nkic
from mx_reference import FORMATS, dequant, pack, quantize_ref

SAMPLES = os.environ.get("NKIC_NKI_SAMPLES", "/tmp/corpus/nki-samples-head")
TRITON_VIZ = os.environ.get("NKIC_TRITON_VIZ", "/tmp/corpus/triton-viz")
MATMUL = os.path.join(SAMPLES, "src/nki_samples/tutorials/matrix_multiplication/matrix_multiplication_nki_kernels.py")
BETA2 = os.path.join(TRITON_VIZ, "examples", "nki_beta2")
needs_samples = pytest.mark.skipif(not os.path.isfile(MATMUL), reason="no nki-samples checkout")
needs_triton_viz = pytest.mark.skipif(not os.path.isdir(BETA2), reason="no triton-viz checkout")


@pytest.fixture(autouse=True)
def _simulator(monkeypatch):
    monkeypatch.setenv("NKI_SIMULATOR", "1")
    monkeypatch.delenv("NEURON_PLATFORM_TARGET_OVERRIDE", raising=False)
    monkeypatch.delenv("NKIC_NKI_VERSION", raising=False)


def serve_0_2(monkeypatch):
    monkeypatch.setenv("NKIC_NKI_VERSION", "0.2")


def rand(*shape, seed=0):
    return np.random.default_rng(seed).random(shape, dtype=np.float32)


def line_of(path, text):
    """The 1-based line of the first occurrence of `text` in `path`."""
    with open(path) as f:
        return next(i for i, line in enumerate(f, 1) if text in line)


# --- nki-samples: the matrix multiplication tutorial (@nki.jit, tensor_copy(dtype=)) ---

def load_module(path):
    spec = importlib.util.spec_from_file_location("samples_" + os.path.basename(path)[:-3], path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@needs_samples
@pytest.mark.parametrize("name", ["nki_matmul_tiled_", "nki_matmul_hoist_load_", "nki_matmul_block_free_dimension_"])
def test_tutorial_matmul_runs_as_0_2(monkeypatch, name):
    serve_0_2(monkeypatch)
    m = load_module(MATMUL)
    lhs_t, rhs = rand(256, 256), rand(256, 1024, seed=1)
    np.testing.assert_allclose(getattr(m, name)(lhs_t, rhs), lhs_t.T @ rhs, rtol=1e-4)


@needs_samples
def test_tutorial_matmul_basic_and_fully_optimized_run_as_0_2(monkeypatch):
    serve_0_2(monkeypatch)
    m = load_module(MATMUL)
    lhs_t, rhs = rand(128, 64), rand(128, 512, seed=1)
    np.testing.assert_allclose(m.nki_matmul_basic_(lhs_t, rhs), lhs_t.T @ rhs, rtol=1e-4)
    lhs_t, rhs = rand(256, 256), rand(256, 1024, seed=2)
    out = m.nki_matmul_fully_optimized_(lhs_t, rhs, TILES_IN_BLOCK_M=2, TILES_IN_BLOCK_N=2, TILES_IN_BLOCK_K=2)
    np.testing.assert_allclose(out, lhs_t.T @ rhs, rtol=1e-4)


@needs_samples
def test_tutorial_matmul_is_rejected_at_its_tensor_copy_by_the_newest_version():
    m = load_module(MATMUL)
    with pytest.raises(nkic.NKIError) as info:
        m.nki_matmul_basic_(rand(128, 64), rand(128, 512, seed=1))
    e = info.value
    assert e.code == "err_removed_in_nki_version"
    assert e.message == "nisa.tensor_copy(dtype=) was removed in nki 0.3 (nkic serves nki 0.8)"
    assert e.file == MATMUL and e.line == line_of(MATMUL, "nisa.tensor_copy(dst=result_sbuf")
    assert "NKIC_NKI_VERSION=0.2 runs the kernel as nki 0.2 did" in e.hint


# --- nki-samples: the mxfp-matmul tutorial (@nki.jit(platform_target="trn3"), tensor_copy(dtype=)) ---

MXFP = os.path.join(os.path.dirname(os.path.dirname(MATMUL)), "mxfp-matmul")
MX = "float8_e4m3fn_x4"


def mx_kernels(monkeypatch):
    monkeypatch.syspath_prepend(MXFP)  # mx_kernels imports mx_kernel_utils beside it
    return load_module(os.path.join(MXFP, "mx_kernels.py"))


def mx_operand(k, cols, seed):
    """Random lane codes [K, 4 cols], their block scales [K/8, cols] (contiguous, as the tutorial
    passes them) and the packed words as the float32 array the tutorial hands the kernel."""
    rng = np.random.default_rng(seed)
    codes = rng.choice(np.flatnonzero(np.isfinite(FORMATS[MX][0])), size=(k, 4 * cols))
    scales = rng.integers(120, 134, size=(k // 8, cols))
    return codes, scales, pack(MX, codes).view(np.float32), scales.astype(np.uint8)


def mx_product(st_codes, st_scales, mv_codes, mv_scales):
    k, m, n = st_codes.shape[0], st_codes.shape[1] // 4, mv_codes.shape[1] // 4
    return np.einsum("pmj,pnj->mn", dequant(MX, st_codes, st_scales).reshape(k, m, 4),
                     dequant(MX, mv_codes, mv_scales).reshape(k, n, 4))


def assert_bf16_close(out, ref):
    """The kernels accumulate and return bf16."""
    np.testing.assert_allclose(out.astype(np.float32), ref, rtol=2e-2, atol=1e-2 * np.abs(ref).max())


@needs_samples
def test_tutorial_offline_quantized_mx_matmul_runs_as_0_2(monkeypatch):
    serve_0_2(monkeypatch)
    m = mx_kernels(monkeypatch)
    cs, ss, st, st_scale = mx_operand(128, 128, seed=1)
    cm, sm, mv, mv_scale = mx_operand(128, 512, seed=2)
    out = m.kernel_offline_quantized_mx_matmul(st, st_scale, mv, mv_scale, nl.float8_e4m3fn_x4)
    assert_bf16_close(out, mx_product(cs, ss, cm, sm))


@needs_samples
def test_tutorial_on_device_quantize_matmul_mx_runs_as_0_2(monkeypatch):
    serve_0_2(monkeypatch)
    m = mx_kernels(monkeypatch)
    cs, ss, st, st_scale = mx_operand(128, 128, seed=1)
    moving = np.random.default_rng(3).standard_normal((128, 2048)).astype(nl.bfloat16)
    out = m.kernel_on_device_quantize_matmul_mx(st, st_scale, moving, nl.float8_e4m3fn_x4, nl.float8_e4m3fn_x4)
    # 0.2 quantizes at the OCP sample scale, as the tutorial's own golden (mx_cpu_utils) does.
    assert_bf16_close(out, mx_product(cs, ss, *quantize_ref(MX, moving.astype(np.float32), twice=False)))


@needs_samples
@pytest.mark.parametrize("use_tensor_copy", [True, False])
def test_tutorial_copy_strided_quantize_matmul_mx_runs_as_0_2(monkeypatch, use_tensor_copy):
    serve_0_2(monkeypatch)
    m = mx_kernels(monkeypatch)
    rng = np.random.default_rng(4)
    st, mv = rng.standard_normal((512, 128)).astype(nl.bfloat16), rng.standard_normal((512, 512)).astype(nl.bfloat16)

    def on_chip(h):  # row j*128 + p of the [4*128, F] input is lane j of partition p
        return h.astype(np.float32).reshape(4, 128, -1).transpose(1, 2, 0).reshape(128, -1)

    out = m.kernel_copy_strided_quantize_matmul_mx(st, mv, nl.float8_e4m3fn_x4, use_tensor_copy=use_tensor_copy)
    assert_bf16_close(out, mx_product(*quantize_ref(MX, on_chip(st), twice=False),
                                      *quantize_ref(MX, on_chip(mv), twice=False)))


@needs_samples
def test_tutorial_mx_kernels_are_rejected_at_their_decorator_by_the_newest_version(monkeypatch):
    with pytest.raises(nkic.NKIError) as info:
        mx_kernels(monkeypatch)
    e = info.value
    path = os.path.join(MXFP, "mx_kernels.py")
    assert e.code == "err_removed_in_nki_version" and e.file == path
    assert e.line == line_of(path, '@nki.jit(platform_target="trn3")')
    assert e.message == "nki.jit(platform_target=) was removed in nki 0.3 (nkic serves nki 0.8)"


# --- triton-viz examples/nki_beta2: kernels launched as nki.jit(k, platform_target=)[grid] ---

def load_kernels(name):
    """The example's kernels, unchanged: its nki/numpy/math imports, constants and functions,
    compiled at their own lines (its demo code imports torch and triton_viz)."""
    path = os.path.join(BETA2, name + ".py")
    with open(path) as f:
        tree = ast.parse(f.read(), path)

    def kept(node):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [node.module] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
            return all(n.split(".")[0] in ("nki", "numpy", "math") for n in names)
        return isinstance(node, (ast.Assign, ast.FunctionDef))

    tree.body = [node for node in tree.body if kept(node)]
    scope = {"__name__": "beta2_" + name, "__file__": path}
    exec(compile(tree, path, "exec"), scope)
    return scope, path


def launch_0_2(kernel, *args):
    """As the example launches it on a device, with numpy arrays for tensors."""
    return nki.jit(kernel, platform_target="trn1")[(1,)](*args)


def softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def rotate_half(x):
    half = x.shape[-1] // 2
    return np.concatenate((-x[..., half:], x[..., :half]), axis=-1)


def attention(q, k, v):
    s = np.einsum("bhmd,bhnd->bhmn", q, k) / np.sqrt(q.shape[-1])
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    return np.einsum("bhmn,bhnd->bhmd", p / p.sum(axis=-1, keepdims=True), v)


def case_add():
    a, b = rand(4, 3), rand(4, 3, seed=1)
    return "nki_tensor_add_kernel", (a, b, np.empty_like(a)), [a + b], [2]


def case_matmul():
    lhs_t, rhs = rand(128, 128), rand(128, 512, seed=1)
    return "matmul_kernel", (lhs_t, rhs, np.empty((128, 512), np.float32)), [lhs_t.T @ rhs], [2]


def case_mlp():
    x_t, w1, w2 = rand(256, 256) - 0.5, rand(256, 256, seed=1) - 0.5, rand(256, 512, seed=2) - 0.5
    want = np.maximum(x_t.T @ w1, 0) @ w2
    return "mlp_kernel", (x_t, w1, w2, np.empty((256, 512), np.float32)), [want], [3]


def case_rmsnorm():
    x, gamma = rand(256, 128) * 4 - 2, rand(256, 128, seed=1) + 0.5
    want = x / np.sqrt((x * x).mean(axis=1, keepdims=True) + 1e-6) * gamma
    return "rmsnorm_kernel", (x, gamma, np.empty_like(x)), [want], [2]


def case_rope():
    q, k = rand(1, 4, 128, 64) * 2 - 1, rand(1, 4, 128, 64, seed=1) * 2 - 1
    angle = np.arange(128, dtype=np.float32)[:, None] * rand(1, 64, seed=2)
    cos, sin = np.cos(angle).astype(np.float32), np.sin(angle).astype(np.float32)
    want = [t * cos + rotate_half(t) * sin for t in (q, k)]
    return "rope_kernel", (q, k, cos, sin, np.empty_like(q), np.empty_like(k), 1, 4, 128, 64), want, [4, 5]


def case_softmax():
    x = rand(256, 64) * 6 - 3
    return "softmax_kernel", (x, np.empty_like(x)), [softmax(x)], [1]


def case_tiled_attention():
    q, k, v = rand(2, 2, 128, 128) - 0.5, rand(2, 2, 128, 128, seed=1) - 0.5, rand(2, 2, 128, 64, seed=2) - 0.5
    args = (q, k, v, np.empty((2, 2, 128, 64), np.float32), 2, 2, 2, 2, 128, 128, 128, 64)
    return "tiled_attention_kernel", args, [attention(q, k, v)], [3]


CASES = {"add": case_add, "matmul": case_matmul, "mlp": case_mlp, "rmsnorm": case_rmsnorm, "rope": case_rope,
         "softmax": case_softmax, "tiled_attention": case_tiled_attention}


@needs_triton_viz
@pytest.mark.parametrize("name", sorted(CASES))
def test_beta2_example_runs_as_0_2(monkeypatch, name):
    serve_0_2(monkeypatch)
    scope, _ = load_kernels(name)
    kernel, args, want, outputs = CASES[name]()
    launch_0_2(scope[kernel], *args)
    for index, expected in zip(outputs, want):  # written into the caller's arrays, as on the device
        np.testing.assert_allclose(args[index], expected, rtol=2e-5, atol=2e-5)


@needs_triton_viz
@pytest.mark.parametrize("name", sorted(set(CASES) - {"add"}))
def test_beta2_example_bodies_are_newest_api_too(name):
    """Only their launch (platform_target=, kernel[grid]) is 0.2's: called plainly, they run as 0.8."""
    scope, _ = load_kernels(name)
    kernel, args, want, outputs = CASES[name]()
    nki.simulate(scope[kernel])(*args)
    for index, expected in zip(outputs, want):
        np.testing.assert_allclose(args[index], expected, rtol=2e-5, atol=2e-5)


@needs_triton_viz
def test_beta2_builtin_buffers_are_rejected_at_their_line_by_the_newest_version():
    scope, path = load_kernels("add")
    kernel, args, _, _ = case_add()
    with pytest.raises(nkic.NKIError) as info:
        nki.simulate(scope[kernel])(*args)
    e = info.value
    assert e.code == "err_removed_in_nki_version"
    assert e.message == "the builtin buffer's .view(dtype=, shape=) was removed in nki 0.3 (nkic serves nki 0.8)"
    assert e.file == path and e.line == line_of(path, "a_tile = sbuf.view(")
    assert e.hint.startswith("use nl.ndarray(shape, dtype, buffer=nl.sbuf)")


@needs_triton_viz
def test_beta2_launch_is_rejected_by_the_newest_version():
    scope, _ = load_kernels("softmax")
    with pytest.raises(nkic.NKIError) as info:
        launch_0_2(scope["softmax_kernel"])
    assert info.value.code == "err_removed_in_nki_version"
    assert info.value.message == "nki.jit(platform_target=) was removed in nki 0.3 (nkic serves nki 0.8)"
