"""Row softmax over a row count that is not a multiple of 128 (1000 x 512).

One nl.affine_range loop over ceil(n/128) row tiles; the last tile has only
1000 - 7*128 = 104 valid rows, so every instruction (load, max, subtract, exp,
sum, reciprocal, multiply, store) carries mask=(i_p < n) (NKI_API.md §6).
Written twice: by hand (max-subtracted exp / row sum) and with nl.softmax
(compute_dtype=nl.float32, cast once to the output dtype).

Tolerances (fp32): each output is exp(x - max) * (1 / sum). exp and reciprocal
are computed in fp32 (a few ulp each) and the row sum of d = 512 terms in an
undocumented order (relative error <= d * 2^-24 ~ 3e-5 worst case, all terms
positive); so rtol = 4e-5 against a float64 reference (atol 0: every output is
> 1e-12 here). bf16 inputs/outputs: the fp32 result is rounded once to bf16,
which adds 2^-8 relative; rtol = 2^-8 + 4e-5.
"""
import math

import numpy as np
import pytest

from neuronxcc import nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa  # noqa: F401


@nki.jit
def softmax_manual_kernel(x):
    n, d = x.shape
    out = nl.ndarray((n, d), dtype=x.dtype, buffer=nl.shared_hbm)
    i_f = nl.arange(d)[None, :]
    for t in nl.affine_range(math.ceil(n / nl.tile_size.pmax)):
        i_p = t * nl.tile_size.pmax + nl.arange(nl.tile_size.pmax)[:, None]
        valid = i_p < n
        tile = nl.load(x[i_p, i_f], mask=valid)
        row_max = nl.max(tile, axis=[1], keepdims=True, mask=valid)
        shifted = nl.subtract(tile, row_max, mask=valid, dtype=nl.float32)
        e = nl.exp(shifted, mask=valid)
        row_sum = nl.sum(e, axis=[1], keepdims=True, mask=valid)
        inv = nl.reciprocal(row_sum, mask=valid)
        y = nl.multiply(e, inv, mask=valid, dtype=x.dtype)
        nl.store(out[i_p, i_f], value=y, mask=valid)
    return out


@nki.jit
def softmax_builtin_kernel(x):
    n, d = x.shape
    out = nl.ndarray((n, d), dtype=x.dtype, buffer=nl.shared_hbm)
    i_f = nl.arange(d)[None, :]
    for t in nl.affine_range(math.ceil(n / nl.tile_size.pmax)):
        i_p = t * nl.tile_size.pmax + nl.arange(nl.tile_size.pmax)[:, None]
        tile = nl.load(x[i_p, i_f], mask=(i_p < n))
        # compute_dtype sets both the internal and the returned dtype (NKI docs:
        # "dtype and compute_dtype behave the same"), so a bf16 input would be
        # computed in bf16 without it; compute in fp32 and cast once at the end.
        y = nl.softmax(tile, axis=[1], compute_dtype=nl.float32, mask=(i_p < n))
        nl.store(out[i_p, i_f], value=nl.copy(y, dtype=x.dtype, mask=(i_p < n)), mask=(i_p < n))
    return out


def reference(x):
    x64 = x.astype(np.float64)
    e = np.exp(x64 - x64.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def make_input(n, d, dtype, seed=0):
    rng = np.random.default_rng(seed)
    return (2.0 * rng.standard_normal((n, d))).astype(np.float32).astype(dtype)


KERNELS = [pytest.param(softmax_manual_kernel, id="manual"), pytest.param(softmax_builtin_kernel, id="nl.softmax")]
SHAPES = [pytest.param(1000, 512, id="1000x512"), pytest.param(128, 64, id="128x64"),
          pytest.param(77, 300, id="77x300"), pytest.param(257, 128, id="257x128")]


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("n,d", SHAPES)
def test_softmax_fp32(kernel, n, d):
    x = make_input(n, d, np.float32)
    out = nki.simulate_kernel(kernel, x)
    assert out.shape == (n, d) and out.dtype == np.float32
    np.testing.assert_allclose(out, reference(x), rtol=4e-5, atol=0)


@pytest.mark.parametrize("kernel", KERNELS)
def test_softmax_bf16(kernel):
    x = make_input(1000, 512, nl.bfloat16, seed=1)
    out = nki.simulate_kernel(kernel, x)
    assert out.dtype == nl.bfloat16
    np.testing.assert_allclose(out.astype(np.float64), reference(x), rtol=2.0 ** -8 + 4e-5, atol=0)


@pytest.mark.parametrize("kernel", KERNELS)
def test_softmax_masked_rows_never_read(kernel):
    # check_uninitialized: any instruction reading a row of the ragged tile that
    # was never loaded (masked off) would be reported by the simulator.
    x = make_input(1000, 512, np.float32, seed=2)
    out = nki.simulate_kernel(kernel, x, check_uninitialized=True)
    np.testing.assert_allclose(out, reference(x), rtol=4e-5, atol=0)


def test_softmax_large_logits_are_stable():
    # Row max subtraction keeps exp in range: logits around +-80 would overflow
    # exp in fp32 (e^89 > fp32 max) without it.
    x = make_input(200, 256, np.float32, seed=3) * 40.0
    out = nki.simulate_kernel(softmax_manual_kernel, x)
    assert np.all(np.isfinite(out))
    ref = reference(x)
    np.testing.assert_allclose(out, ref, rtol=4e-5, atol=1e-30)
