"""The SDK's current-API examples (aws-neuron-sdk nki/examples), run unchanged under
`import nki` against numpy references written here. They are read from a checkout
(NKIC_SDK_EXAMPLES, default /tmp/corpus/sdk/nki/examples) and skipped without one."""
import importlib.util
import os

import numpy as np
import pytest

EXAMPLES = os.environ.get("NKIC_SDK_EXAMPLES", "/tmp/corpus/sdk/nki/examples")
pytestmark = pytest.mark.skipif(not os.path.isdir(EXAMPLES), reason="no SDK examples checkout")


@pytest.fixture(autouse=True)
def _simulator(monkeypatch):
    monkeypatch.setenv("NKI_SIMULATOR", "1")
    # Some examples set NEURON_PLATFORM_TARGET_OVERRIDE when imported; setting it first makes
    # monkeypatch put back its absence afterwards, so the setting stays inside the test.
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "")
    monkeypatch.delenv("NEURON_PLATFORM_TARGET_OVERRIDE")


def load(rel):
    path = os.path.join(EXAMPLES, rel)
    spec = importlib.util.spec_from_file_location("sdk_" + os.path.basename(path)[:-3], path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def rand(*shape, seed=0):
    return np.random.default_rng(seed).random(shape, dtype=np.float32)


def test_getting_started():
    m = load("getting_started_baremetal.py")
    a, b = rand(4, 3).astype(np.float16), rand(4, 3, seed=1).astype(np.float16)
    np.testing.assert_array_equal(m.nki_tensor_add_kernel(a, b), a + b)


def test_tensor_addition():
    m = load("tensor_addition/tensor_addition_nki_kernels.py")  # sets NEURON_PLATFORM_TARGET_OVERRIDE=trn1
    a, b = rand(256, 1024), rand(256, 1024, seed=1)
    np.testing.assert_array_equal(m.nki_tensor_add(a, b), a + b)


def test_transpose2d():
    m = load("transpose2d/transpose2d_nki_kernels.py")
    p, x, y = 5, 3, 4
    a = np.arange(p * x * y, dtype=np.int8).reshape(p, x * y)
    want = a.reshape(p, x, y).transpose(0, 2, 1).reshape(p, x * y)
    np.testing.assert_array_equal(m.tensor_transpose2D_kernel_(a, (x, y)), want)


def test_average_pool():
    m = load("average_pool2d/average_pool2d_nki_kernels.py")
    x = np.arange(2 * 6 * 6, dtype=np.float16).reshape(2, 6, 6)
    want = x.astype(np.float32).reshape(2, 3, 2, 3, 2).mean(axis=(2, 4))
    np.testing.assert_array_equal(m.tensor_avgpool_kernel(x, 2), want.astype(np.float16))


@pytest.mark.parametrize("name", ["nki_matmul_tiled_", "nki_matmul_hoist_load_", "nki_matmul_block_free_dimension_"])
def test_matmul_tiled(name):
    m = load("matrix_multiplication/matrix_multiplication_nki_kernels.py")
    lhs_t, rhs = rand(256, 256), rand(256, 1024, seed=1)
    np.testing.assert_allclose(getattr(m, name)(lhs_t, rhs), lhs_t.T @ rhs, rtol=1e-4)


def test_matmul_basic_and_fully_optimized():
    m = load("matrix_multiplication/matrix_multiplication_nki_kernels.py")
    lhs_t, rhs = rand(128, 64), rand(128, 512, seed=1)
    np.testing.assert_allclose(m.nki_matmul_basic_(lhs_t, rhs), lhs_t.T @ rhs, rtol=1e-4)
    lhs_t, rhs = rand(256, 256), rand(256, 1024, seed=2)
    out = m.nki_matmul_fully_optimized_(lhs_t, rhs, TILES_IN_BLOCK_M=2, TILES_IN_BLOCK_N=2, TILES_IN_BLOCK_K=2)
    np.testing.assert_allclose(out, lhs_t.T @ rhs, rtol=1e-4)


def test_simulate_example():
    load("simulate/nki_simulate_example.py")  # asserts its own result


def mamba_reference(delta, u, a, b, c):
    delta_a = np.exp(delta[:, :, None, :] * a[None, :, :, None])
    delta_bu = (delta * u)[:, :, None, :] * b[:, None, :, :]
    h = np.zeros(delta_a.shape[:3], np.float32)
    out = np.zeros_like(delta_a)
    for t in range(delta.shape[2]):
        h = delta_a[..., t] * h + delta_bu[..., t]
        out[..., t] = h
    return (out * c[:, None, :, :]).sum(axis=2)


@pytest.mark.parametrize("name", ["mamba_v1", "mamba_v2", "mamba_v3"])
def test_fused_mamba(name):
    m = load("fused_mamba/mamba_nki_kernels.py")
    batch, channels, state, seq = 1, 256, 4, 512
    delta, u = rand(batch, channels, seq) * 0.1, rand(batch, channels, seq, seed=1)
    a = -rand(channels, state, seed=2)
    b, c = rand(batch, state, seq, seed=3), rand(batch, state, seq, seed=4)
    out = getattr(m, name)(delta, u, a, b, c)
    np.testing.assert_allclose(out, mamba_reference(delta, u, a, b, c), rtol=2e-3, atol=2e-3)
