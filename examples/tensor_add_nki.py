"""Tensor add in the current `nki` API (NKI 0.3+): each 128-row tile is copied on chip with
nisa.dma_copy, added by one tensor_tensor instruction that writes its destination, and copied
back. The legacy twin is tensor_add.py."""
import numpy as np

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def tensor_add_kernel(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    rows = nl.tile_size.pmax
    for i in nl.affine_range(a.shape[0] // rows):
        x = nl.ndarray((rows, a.shape[1]), dtype=a.dtype, buffer=nl.sbuf)
        y = nl.ndarray((rows, a.shape[1]), dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=x, src=a[i * rows:(i + 1) * rows, :])
        nisa.dma_copy(dst=y, src=b[i * rows:(i + 1) * rows, :])
        nisa.tensor_tensor(dst=x, data1=x, data2=y, op=nl.add)
        nisa.dma_copy(dst=out[i * rows:(i + 1) * rows, :], src=x)
    return out


def make_inputs():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((512, 1024)).astype(np.float16)
    b = rng.standard_normal((512, 1024)).astype(np.float16)
    return a, b


def reference(a, b):
    return (a.astype(np.float32) + b.astype(np.float32)).astype(np.float16)


if __name__ == "__main__":
    a, b = make_inputs()
    assert np.array_equal(nki.simulate(tensor_add_kernel)(a, b), reference(a, b))
    print("tensor_add_nki: ok")
