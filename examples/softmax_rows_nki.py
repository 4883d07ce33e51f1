"""Row softmax in the current `nki` API over a number of rows that is not a multiple of 128:
the ragged last tile is a shorter slice of every operand (the current API has no masks). The
legacy twin, with masks, is softmax_rows.py."""
import numpy as np

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def softmax_kernel(x):
    n, d = x.shape
    out = nl.ndarray((n, d), dtype=x.dtype, buffer=nl.shared_hbm)
    pmax = nl.tile_size.pmax
    for start in range(0, n, pmax):  # a Python loop: each tile's row count is known when traced
        rows = min(pmax, n - start)
        t = nl.ndarray((pmax, d), dtype=nl.float32, buffer=nl.sbuf)
        row_max = nl.ndarray((pmax, 1), dtype=nl.float32, buffer=nl.sbuf)
        total = nl.ndarray((pmax, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=t[0:rows, :], src=x[start:start + rows, :])
        nisa.tensor_reduce(dst=row_max[0:rows, :], op=nl.maximum, data=t[0:rows, :], axis=1, negate=True)
        # exp(x - max), summed along the row by the same instruction.
        nisa.activation(dst=t[0:rows, :], op=nl.exp, data=t[0:rows, :], bias=row_max[0:rows, :],
                        reduce_op=nl.add, reduce_res=total[0:rows, :])
        nisa.reciprocal(dst=total[0:rows, :], data=total[0:rows, :])
        nisa.tensor_scalar(dst=t[0:rows, :], data=t[0:rows, :], op0=nl.multiply, operand0=total[0:rows, :])
        nisa.dma_copy(dst=out[start:start + rows, :], src=t[0:rows, :])
    return out


def make_inputs():
    return (np.random.default_rng(3).standard_normal((1000, 512)).astype(np.float32),)


def reference(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


TOLERANCE = 1e-5  # times max(1, max |reference|): fp32 sums in another order than numpy's

if __name__ == "__main__":
    (x,) = make_inputs()
    expected = reference(x)
    np.testing.assert_allclose(nki.simulate(softmax_kernel)(x), expected, rtol=0,
                               atol=TOLERANCE * max(1.0, np.abs(expected).max()))
    print("softmax_rows_nki: ok")
