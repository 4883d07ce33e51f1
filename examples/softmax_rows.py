"""Row softmax over a number of rows that is not a multiple of 128: the ragged
last tile is masked on load, compute and store."""
import math

import numpy as np

from neuronxcc import nki
import neuronxcc.nki.language as nl


@nki.jit
def softmax_kernel(x):
    n, d = x.shape
    out = nl.ndarray((n, d), dtype=x.dtype, buffer=nl.shared_hbm)
    i_f = nl.arange(d)[None, :]
    for t in nl.affine_range(math.ceil(n / nl.tile_size.pmax)):
        i_p = t * nl.tile_size.pmax + nl.arange(nl.tile_size.pmax)[:, None]
        rows = nl.load(x[i_p, i_f], mask=(i_p < n))
        row_max = nl.max(rows, axis=1, keepdims=True, mask=(i_p < n))
        e = nl.exp(nl.subtract(rows, row_max, mask=(i_p < n)), mask=(i_p < n))
        total = nl.sum(e, axis=1, keepdims=True, mask=(i_p < n))
        nl.store(out[i_p, i_f], value=nl.divide(e, total, mask=(i_p < n)), mask=(i_p < n))
    return out


def make_inputs():
    return (np.random.default_rng(3).standard_normal((1000, 512)).astype(np.float32),)


def reference(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


if __name__ == "__main__":
    (x,) = make_inputs()
    np.testing.assert_allclose(nki.simulate_kernel(softmax_kernel, x), reference(x), rtol=1e-5, atol=1e-6)
    print("softmax_rows: ok")
