"""Masked add: one nl.affine_range loop over ceil(n/128) row tiles, the ragged last
tile guarded by mask=(i_p < n) on load, compute and store. Compute is fp32 with a
single rounding to the output dtype, so results equal numpy bit for bit."""
import math

import numpy as np
import pytest

from neuronxcc import nki
import neuronxcc.nki.language as nl


@nki.jit(mode="simulation")
def masked_add_kernel(a_input, b_input):
    n, m = a_input.shape
    out = nl.ndarray((n, m), dtype=a_input.dtype, buffer=nl.shared_hbm)
    i_f = nl.arange(m)[None, :]
    for p in nl.affine_range(math.ceil(n / nl.tile_size.pmax)):
        i_p = p * nl.tile_size.pmax + nl.arange(nl.tile_size.pmax)[:, None]
        a = nl.load(a_input[i_p, i_f], mask=(i_p < n))
        b = nl.load(b_input[i_p, i_f], mask=(i_p < n))
        c = nl.add(a, b, mask=(i_p < n))
        nl.store(out[i_p, i_f], value=c, mask=(i_p < n))
    return out


def make_inputs(n, m, dtype, seed=1):
    rng = np.random.default_rng(seed)
    a32 = rng.standard_normal((n, m)).astype(np.float32)
    b32 = rng.standard_normal((n, m)).astype(np.float32)
    return a32.astype(dtype), b32.astype(dtype)


def fp32_reference(a, b):
    return a.astype(np.float32) + b.astype(np.float32)


def bf16_ulp(x):
    """One bf16 ulp at each element of the float32 array x (8 significant bits)."""
    mag = np.abs(x.astype(np.float64))
    tiny = 2.0 ** -126
    exp = np.floor(np.log2(np.maximum(mag, tiny)))
    return np.exp2(np.maximum(exp, -126) - 7)


SHAPES = [
    pytest.param(1000, 512, id="n1000-ragged"),
    pytest.param(1024, 512, id="n1024-multiple-of-128"),
    pytest.param(100, 512, id="n100-less-than-128"),
    pytest.param(129, 64, id="n129-one-extra-row"),
]


@pytest.mark.parametrize("n,m", SHAPES)
def test_masked_add_fp32_exact(n, m):
    a, b = make_inputs(n, m, np.float32)
    out = masked_add_kernel(a, b)
    assert out.dtype == np.float32 and out.shape == (n, m)
    assert np.array_equal(out, a + b)


@pytest.mark.parametrize("n,m", SHAPES)
def test_masked_add_bf16_rounds_once(n, m):
    a, b = make_inputs(n, m, nl.bfloat16)
    assert a.dtype == nl.bfloat16
    out = masked_add_kernel(a, b)
    assert out.dtype == nl.bfloat16 and out.shape == (n, m)
    ref_fp32 = fp32_reference(a, b)
    # Within half a bf16 ulp of the exact fp32 sum (round to nearest)...
    diff = np.abs(out.astype(np.float32).astype(np.float64) - ref_fp32.astype(np.float64))
    assert np.all(diff <= 0.5 * bf16_ulp(ref_fp32))
    # ...and exactly the one rounding of the fp32 result.
    expected = ref_fp32.astype(nl.bfloat16)
    assert np.array_equal(out.view(np.uint16), expected.view(np.uint16))


def test_masked_add_with_uninitialized_read_check():
    # Masked-off rows of the last tile are neither loaded nor stored: no read of
    # memory that was never written.
    a, b = make_inputs(1000, 512, np.float32)
    out = nki.simulate_kernel(masked_add_kernel, a, b, check_uninitialized=True)
    assert np.array_equal(out, a + b)


def test_masked_add_ir_is_one_loop_with_affine_mask():
    a, b = make_inputs(1000, 512, np.float32)
    text = masked_add_kernel.trace(None, (a, b), {}).ir.text()
    assert text.count("for p in affine_range(0, 8, 1)") == 1
    assert text.count("affine_range") == 1
    # Every instruction in the body carries the same affine predicate.
    assert text.count("mask=(i0 + 128*p <= 999)") == 4


def test_masked_add_less_than_one_tile_has_no_loop_axis():
    a, b = make_inputs(100, 512, np.float32)
    ir = masked_add_kernel.trace(None, (a, b), {}).ir
    text = ir.text()
    assert "affine_range" not in text  # a one-trip loop is not a loop axis
    assert ir.num_instructions() == 4
    assert text.count("<= 99)") == 4
