"""SPMD tensor add: each program instance adds one 128x512 tile (NKI tutorial style)."""
import numpy as np

from neuronxcc import nki
import neuronxcc.nki.language as nl


@nki.jit
def nki_tensor_add_kernel(a_input, b_input):
    c_output = nl.ndarray(a_input.shape, dtype=a_input.dtype, buffer=nl.shared_hbm)

    # Each program instance handles one 128x512 tile of the inputs.
    offset_i_x = nl.program_id(0) * 128
    offset_i_y = nl.program_id(1) * 512
    ix = offset_i_x + nl.arange(128)[:, None]
    iy = offset_i_y + nl.arange(512)[None, :]

    a_tile = nl.load(a_input[ix, iy])
    b_tile = nl.load(b_input[ix, iy])
    c_tile = a_tile + b_tile
    nl.store(c_output[ix, iy], value=c_tile)
    return c_output


GRID = (2, 4)


def make_inputs():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((256, 2048)).astype(np.float16)
    b = rng.standard_normal((256, 2048)).astype(np.float16)
    return a, b


def reference(a, b):
    return (a.astype(np.float32) + b.astype(np.float32)).astype(np.float16)


if __name__ == "__main__":
    a, b = make_inputs()
    out = nki.simulate_kernel(nki_tensor_add_kernel[GRID], a, b)
    assert np.array_equal(out, reference(a, b))
    print("tensor_add: ok")
