"""Masked add over rows that are not a multiple of 128: one affine_range loop of
row tiles, the ragged last tile guarded by mask=(i_p < n)."""
import math

import numpy as np

from neuronxcc import nki
import neuronxcc.nki.language as nl


@nki.jit
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


def make_inputs(dtype=np.float32, n=1000, m=512):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((n, m)).astype(np.float32).astype(dtype)
    b = rng.standard_normal((n, m)).astype(np.float32).astype(dtype)
    return a, b


def reference(a, b):
    return (a.astype(np.float32) + b.astype(np.float32)).astype(a.dtype)


if __name__ == "__main__":
    a, b = make_inputs()
    out = nki.simulate_kernel(masked_add_kernel, a, b)
    assert np.array_equal(out, reference(a, b))
    print("masked_add: ok")
