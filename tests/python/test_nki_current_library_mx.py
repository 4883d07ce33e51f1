"""The microscaling (MX) kernels of AWS's NKI library run unchanged under `import nki` on
NeuronCore-v4 (trn3, the default target), at small shapes, against numpy references of
the OCP formats (tests/python/mx_reference.py): the offline-quantized operands are
packed words passed as the library's x4 dtypes (words.view("float8_e4m3fn_x4")), their
block scales uint8 arrays."""
import importlib

import numpy as np
import pytest

import nki.language as nl
from mx_reference import FORMATS, dequant, quantize_ref, scale_rows, unpack
from nki_library_util import SRC, _library, kernel, rmsnorm  # noqa: F401  (_library: the autouse fixture)

pytestmark = pytest.mark.skipif(SRC is None, reason="no nki-library checkout")

E4M3FN_X4 = "float8_e4m3fn_x4"


def shuffle_4h(x):
    """The library's is_h_dim_4h_transposed layout: [..., H//512, 128, 4] -> [..., 4, H//512, 128]."""
    *outer, h = x.shape
    return x.reshape(*outer, h // 512, 128, 4).swapaxes(-1, -2).swapaxes(-2, -3).reshape(*outer, h)


def quantize_rows(x, name=E4M3FN_X4):
    """quantize_mx of each row of x [T, H] in blocks of 32 consecutive values, dequantized."""
    t, h = x.shape
    src = x.astype(np.float32).reshape(t, h // 4, 4).transpose(1, 0, 2).reshape(h // 4, 4 * t)
    codes, scales = quantize_ref(name, src)
    return dequant(name, codes, scales).reshape(h // 4, t, 4).transpose(1, 0, 2).reshape(t, h)


def offline_weights(h, cols, seed, name=E4M3FN_X4):
    """Random finite lane codes of a [H, cols] weight packed along H (four rows to a word),
    with one uint8 scale per 32 rows: (words [H//4, cols] as the x4 dtype, scales [H//32,
    cols], the dequantized weight [H, cols])."""
    rng = np.random.default_rng(seed)
    values = FORMATS[name][0]
    codes = rng.choice(np.flatnonzero(np.isfinite(values)), size=(h, cols))
    scales = rng.integers(118, 128, size=(h // 32, cols)).astype(np.uint8)
    words = sum(codes.reshape(h // 4, 4, cols)[:, j].astype(np.uint32) << (8 * j) for j in range(4)).astype(np.uint32)
    weight = values[codes] * np.repeat(2.0 ** (scales.astype(np.float64) - 127), 32, axis=0)
    return words.view(name), scales, weight


# QKV projection for token generation, MX path (qkv_tkg with QuantizationType.MX).


@pytest.mark.parametrize("norm", [False, True])
def test_qkv_tkg_mx(norm):
    import nki
    types = importlib.import_module("nkilib.core.utils.common_types")
    b, s, h, i = 1, 4, 512, 256
    rng = np.random.default_rng(1)
    hidden = rng.standard_normal((b, s, h)).astype(nl.bfloat16)
    gamma = (rng.random((1, h)) + 0.5).astype(nl.bfloat16)
    words, scales, weight = offline_weights(h, i, seed=2)
    out = nki.jit(kernel("core.qkv.qkv_tkg", "qkv_tkg"))(
        shuffle_4h(hidden), words, norm_w=shuffle_4h(gamma) if norm else None, qkv_w_scale=scales,
        norm_type=types.NormType.RMS_NORM if norm else types.NormType.NO_NORM,
        quantization_type=types.QuantizationType.MX, is_h_dim_4h_transposed=True)
    x = hidden.reshape(b * s, h).astype(np.float32)
    if norm:
        x = rmsnorm(x, gamma.astype(np.float32)).astype(nl.bfloat16)
    want = quantize_rows(x) @ weight
    assert out.shape == (b, s, i) and out.dtype == np.dtype(nl.bfloat16)
    tol = 2e-2 if norm else 8e-3  # bf16 output; with RMSNorm a bf16 rounding may move a quantized code
    np.testing.assert_allclose(out.reshape(b * s, i).astype(np.float64), want, rtol=tol, atol=tol * np.abs(want).max())


# The swizzled bf16 load and MXFP8 quantization of experimental/mxfp_subkernels.


@pytest.mark.parametrize("k", [512, 1024])
def test_mxfp_load_swizzles_and_quantizes(k):
    load = kernel("experimental.mxfp_subkernels.mxfp_load_utils", "mxfp_load_performance_wrapper")
    x = (np.random.default_rng(k).standard_normal((128, k)) * 4).astype(nl.bfloat16)
    x[3, 32:64] = 0  # a block of zeros takes scale 0
    data, scale = load(x)
    assert data.shape == scale.shape == (128, k // 4) and data.dtype == np.uint32 and scale.dtype == np.uint8
    for kb in range(k // 512):
        # The block's quantize_mx source: partition c, free 4m + j holds x[m, 512 kb + 4c + j]
        # (each row's 32 consecutive values are one scale block).
        src = x[:, 512 * kb:512 * (kb + 1)].astype(np.float32).reshape(128, 128, 4).transpose(1, 0, 2).reshape(128, 512)
        codes, scales = quantize_ref(E4M3FN_X4, src)
        cols = slice(128 * kb, 128 * (kb + 1))
        np.testing.assert_array_equal(unpack(E4M3FN_X4, data[:, cols]), codes)
        for row, want in scale_rows(scales).items():
            np.testing.assert_array_equal(scale[row, cols], want, err_msg=f"scale row {row}")
