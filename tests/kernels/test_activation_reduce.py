"""Softmax rows with the scalar engine's fused activation + reduction
(NKI_API.md §3.4): one instruction computes e = exp(x * 1 + bias) with
bias = -rowmax, and sums e along the free axis into a [128, 1] reduce_res tile.

  * activation_reduce_kernel: nisa.activation_reduce(op=nl.exp, data=x,
    reduce_op=np.add, reduce_res=row_sum, bias=neg_max);
  * activation_reset_reduce_kernel: the 2.24 spelling
    nisa.activation(op=nl.exp, data=x, bias=neg_max, reduce_op=np.add,
    reduce_res=row_sum, reduce_cmd=nisa.reduce_cmd.reset_reduce).
Then y = e * (1 / row_sum). Rows are ragged (n = 300, mask=(i_p < n)).

Tolerance (fp32): as in test_softmax_ragged.py, exp / reciprocal in fp32 and a
d-term positive sum in an undocumented order: rtol = 4e-5 against float64.
"""
import math

import numpy as np
import pytest

from neuronxcc import nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def activation_reduce_kernel(x):
    n, d = x.shape
    out = nl.ndarray((n, d), dtype=x.dtype, buffer=nl.shared_hbm)
    i_f = nl.arange(d)[None, :]
    for t in nl.affine_range(math.ceil(n / 128)):
        i_p = t * 128 + nl.arange(128)[:, None]
        valid = i_p < n
        tile = nl.load(x[i_p, i_f], mask=valid)
        neg_max = nisa.tensor_reduce(np.max, tile, axis=[1], keepdims=True, negate=True, mask=valid)
        row_sum = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        e = nisa.activation_reduce(op=nl.exp, data=tile, reduce_op=np.add, reduce_res=row_sum, bias=neg_max,
                                   mask=valid)
        y = nl.multiply(e, nl.reciprocal(row_sum, mask=valid), mask=valid)
        nl.store(out[i_p, i_f], value=y, mask=valid)
    return out


@nki.jit
def activation_reset_reduce_kernel(x):
    n, d = x.shape
    out = nl.ndarray((n, d), dtype=x.dtype, buffer=nl.shared_hbm)
    i_f = nl.arange(d)[None, :]
    for t in nl.affine_range(math.ceil(n / 128)):
        i_p = t * 128 + nl.arange(128)[:, None]
        valid = i_p < n
        tile = nl.load(x[i_p, i_f], mask=valid)
        neg_max = nisa.tensor_reduce(np.max, tile, axis=[1], keepdims=True, negate=True, mask=valid)
        row_sum = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        e = nisa.activation(op=nl.exp, data=tile, bias=neg_max, reduce_op=np.add, reduce_res=row_sum,
                            reduce_cmd=nisa.reduce_cmd.reset_reduce, mask=valid)
        y = nl.multiply(e, nl.reciprocal(row_sum, mask=valid), mask=valid)
        nl.store(out[i_p, i_f], value=y, mask=valid)
    return out


def reference(x):
    x64 = x.astype(np.float64)
    e = np.exp(x64 - x64.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("kernel", [pytest.param(activation_reduce_kernel, id="activation_reduce"),
                                    pytest.param(activation_reset_reduce_kernel, id="activation-reset_reduce")])
def test_softmax_with_fused_reduce(kernel):
    x = (2 * np.random.default_rng(0).standard_normal((300, 256))).astype(np.float32)
    out = nki.simulate_kernel(kernel, x)
    np.testing.assert_allclose(out, reference(x), rtol=4e-5, atol=0)


@pytest.mark.parametrize("kernel", [pytest.param(activation_reduce_kernel, id="activation_reduce"),
                                    pytest.param(activation_reset_reduce_kernel, id="activation-reset_reduce")])
def test_fused_reduce_ragged_tile_is_not_a_race(kernel):
    # Iterations of the row loop are independent: each writes and reads only its
    # own rows (the reduction into row_sum is under the same mask as everything
    # else). check_races must not report a loop-carried dependency, and no
    # instruction may read a row that was never written.
    x = (2 * np.random.default_rng(1).standard_normal((300, 256))).astype(np.float32)
    out = nki.simulate_kernel(kernel, x, check_races=True, check_uninitialized=True)
    np.testing.assert_allclose(out, reference(x), rtol=4e-5, atol=0)
