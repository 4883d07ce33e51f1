"""trnsci/trnfft's NKI kernels (trnfft/nki/*.py), run unchanged under `import nki` against
numpy. The checkout is NKIC_TRNFFT (default /tmp/corpus/trnfft); without it the tests are
skipped. trnfft's host code imports torch, which is not installed here: the kernels' modules
are imported with an empty stand-in for it (no kernel touches torch)."""
import importlib
import os
import sys
import types

import numpy as np
import pytest

TRNFFT = os.environ.get("NKIC_TRNFFT", "/tmp/corpus/trnfft")
pytestmark = pytest.mark.skipif(not os.path.isdir(os.path.join(TRNFFT, "trnfft", "nki")), reason="no trnfft checkout")


def _stand_in(name, **attrs):
    module = types.ModuleType(name)
    module.__dict__.update(attrs)
    return module


@pytest.fixture(scope="module")
def trnfft():
    saved = {k: v for k, v in sys.modules.items() if k == "torch" or k.startswith(("torch.", "trnfft"))}
    nn = _stand_in("torch.nn", Module=object, functional=_stand_in("torch.nn.functional"))
    torch = _stand_in("torch", Tensor=type("Tensor", (), {}), dtype=type("dtype", (), {}), nn=nn,
                      autograd=_stand_in("torch.autograd", Function=object),
                      float32="float32", float64="float64", bfloat16="bfloat16", complex64="complex64")
    sys.modules.update({"torch": torch, "torch.nn": nn, "torch.nn.functional": nn.functional,
                        "torch.autograd": torch.autograd})
    # The packages bare (their __init__ imports the torch front end), with their directories.
    for name, path in (("trnfft", "trnfft"), ("trnfft.nki", "trnfft/nki")):
        sys.modules[name] = _stand_in(name, __path__=[os.path.join(TRNFFT, path)])
    os.environ["NKI_SIMULATOR"] = "1"
    yield types.SimpleNamespace(**{m: importlib.import_module("trnfft.nki." + m)
                                   for m in ("dispatch", "butterfly", "stockham")})
    for k in [k for k in sys.modules if k == "torch" or k.startswith(("torch.", "trnfft"))]:
        del sys.modules[k]
    sys.modules.update(saved)


def randn(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def assert_complex(re, im, want, rtol):
    scale = np.abs(want).max()
    np.testing.assert_allclose(re, want.real, atol=rtol * scale)
    np.testing.assert_allclose(im, want.imag, atol=rtol * scale)


@pytest.mark.parametrize("kahan", [False, True])
@pytest.mark.parametrize("batch,n,stage", [(2, 16, 0), (2, 16, 3), (64, 8, 0), (2, 8, 1)])
def test_butterfly_stage(trnfft, kahan, batch, n, stage):
    import nki
    m = 1 << (stage + 1)
    half, groups = m // 2, batch * (n // m)
    xr, xi, tr, ti = randn(batch, n), randn(batch, n, seed=1), randn(groups, half, seed=2), randn(groups, half, seed=3)
    kernel = trnfft.butterfly.butterfly_stage_kernel_kahan if kahan else trnfft.butterfly.butterfly_stage_kernel
    re, im = nki.simulate(kernel)(xr, xi, tr, ti, n, stage)
    x = (xr + 1j * xi).reshape(groups, m)
    even, odd, t = x[:, :half], x[:, half:], tr + 1j * ti
    assert_complex(re, im, np.concatenate([even + t * odd, even - t * odd], axis=1).reshape(batch, n), 1e-6)


@pytest.mark.parametrize("groups", [16, 256])
def test_stockham_radix4_stage(trnfft, groups):
    import nki
    xr, xi, tr, ti = (randn(groups, 4, seed=s) for s in range(4))
    re, im = nki.simulate(trnfft.stockham.stockham_radix4_stage_kernel)(xr, xi, tr, ti)
    assert_complex(re, im, np.fft.fft((xr + 1j * xi) * (tr + 1j * ti), axis=1), 1e-6)


@pytest.mark.parametrize("groups", [8, 256])
def test_stockham_radix8_w8(trnfft, groups):
    import nki
    ar, ai = randn(groups, 8), randn(groups, 8, seed=1)
    w = np.exp(-2j * np.pi * np.outer(np.arange(8), np.arange(8)) / 8)
    re, im = nki.simulate(trnfft.stockham.stockham_radix8_w8_kernel)(ar, ai, w.real.astype(np.float32),
                                                                     w.imag.astype(np.float32))
    assert_complex(re, im, (ar + 1j * ai) @ w, 1e-6)


@pytest.mark.parametrize("m,k,n", [(128, 128, 128), (256, 256, 512)])
def test_complex_gemm(trnfft, m, k, n):
    import nki
    ar, ai, br, bi = randn(m, k), randn(m, k, seed=1), randn(k, n, seed=2), randn(k, n, seed=3)
    re, im = nki.simulate(trnfft.dispatch._complex_gemm_kernel)(ar, ai, br, bi)
    assert_complex(re, im, (ar + 1j * ai) @ (br + 1j * bi), 1e-6)


def test_complex_gemm_bf16(trnfft):
    import nki
    import nki.language as nl
    ar, ai, br, bi = (randn(*s, seed=i).astype(nl.bfloat16) for i, s in enumerate([(128, 64)] * 2 + [(64, 64)] * 2))
    re, im = nki.simulate(trnfft.dispatch._complex_gemm_kernel_bf16)(ar, ai, br, bi)
    assert re.dtype == np.float32
    f = lambda t: t.astype(np.float32)  # noqa: E731
    assert_complex(re, im, (f(ar) + 1j * f(ai)) @ (f(br) + 1j * f(bi)), 1e-6)


@pytest.mark.parametrize("m,k_in,k_out", [(128, 128, 128), (256, 256, 512)])
def test_complex_linear(trnfft, m, k_in, k_out):
    import nki
    xr, xi, wr, wi = randn(m, k_in), randn(m, k_in, seed=1), randn(k_out, k_in, seed=2), randn(k_out, k_in, seed=3)
    re, im = nki.simulate(trnfft.dispatch._complex_linear_kernel)(xr, xi, wr, wi)
    assert_complex(re, im, (xr + 1j * xi) @ (wr + 1j * wi).T, 1e-6)


@pytest.mark.parametrize("shape", [(128, 4), (256, 64)])
def test_complex_multiply(trnfft, shape):
    import nki
    ar, ai, br, bi = (randn(*shape, seed=s) for s in range(4))
    re, im = nki.simulate(trnfft.dispatch._complex_mul_kernel)(ar, ai, br, bi)
    assert_complex(re, im, (ar + 1j * ai) * (br + 1j * bi), 0)
