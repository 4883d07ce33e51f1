"""SPMD tensor add (NKI tutorial style): each program instance of a [2, 4] grid adds
one 128x512 fp16 tile of two 256x2048 inputs. The simulator must agree exactly with
numpy computing in fp32 and rounding once to fp16."""
import numpy as np
import pytest

from neuronxcc import nki
import neuronxcc.nki.language as nl

GRID = (2, 4)
SHAPE = (256, 2048)


def tensor_add_kernel(a_input, b_input):
    c_output = nl.ndarray(a_input.shape, dtype=a_input.dtype, buffer=nl.shared_hbm)

    offset_i_x = nl.program_id(0) * 128
    offset_i_y = nl.program_id(1) * 512
    ix = offset_i_x + nl.arange(128)[:, None]
    iy = offset_i_y + nl.arange(512)[None, :]

    a_tile = nl.load(a_input[ix, iy])
    b_tile = nl.load(b_input[ix, iy])
    c_tile = a_tile + b_tile
    nl.store(c_output[ix, iy], value=c_tile)
    return c_output


tensor_add_jit = nki.jit(tensor_add_kernel)
tensor_add_sim = nki.jit(mode="simulation")(tensor_add_kernel)
tensor_add_baremetal = nki.baremetal(tensor_add_kernel)


@pytest.fixture(scope="module")
def inputs():
    rng = np.random.default_rng(0)
    a = rng.standard_normal(SHAPE).astype(np.float16)
    b = rng.standard_normal(SHAPE).astype(np.float16)
    ref = (a.astype(np.float32) + b.astype(np.float32)).astype(np.float16)
    return a, b, ref


def assert_bits_equal(out, ref):
    assert isinstance(out, np.ndarray)
    assert out.dtype == ref.dtype and out.shape == ref.shape
    assert np.array_equal(out.view(np.uint16), ref.view(np.uint16))


def test_simulate_kernel_with_grid(inputs):
    a, b, ref = inputs
    assert_bits_equal(nki.simulate_kernel(tensor_add_jit[GRID], a, b), ref)


def test_simulate_kernel_with_grid_subscript_tuple(inputs):
    a, b, ref = inputs
    assert_bits_equal(nki.simulate_kernel(tensor_add_jit[2, 4], a, b), ref)


def test_single_program_grid_on_one_tile(inputs):
    a, b, ref = inputs
    small_a, small_b = a[:128, :512].copy(), b[:128, :512].copy()
    out = nki.simulate_kernel(tensor_add_jit[1, 1], small_a, small_b)
    assert_bits_equal(out, ref[:128, :512])


def test_jit_simulation_mode_launch(inputs):
    a, b, ref = inputs
    assert_bits_equal(tensor_add_sim[2, 4](a, b), ref)


def test_baremetal_runs_simulator_with_notice(inputs, capsys):
    a, b, ref = inputs
    out = tensor_add_baremetal[2, 4](a, b)
    assert_bits_equal(out, ref)
    err = capsys.readouterr().err
    assert "simulator" in err


def test_inputs_are_not_modified(inputs):
    a, b, _ = inputs
    a0, b0 = a.copy(), b.copy()
    tensor_add_sim[2, 4](a, b)
    assert np.array_equal(a, a0) and np.array_equal(b, b0)


def test_ir_has_grid_and_one_instance_body(inputs):
    a, b, _ = inputs
    ir = tensor_add_jit.trace(GRID, (a, b), {}).ir
    assert list(ir.grid) == [2, 4]
    assert ir.num_instructions() == 4  # load, load, add, store: traced once, not per program
    text = ir.text()
    assert "grid=[2, 4]" in text
    assert text.count("load[dma](") == 2 and text.count("store[dma](") == 1
    # The access pattern is affine in the program ids.
    assert "128*pid0" in text and "512*pid1" in text
    assert [tuple(i[1]) for i in ir.inputs] == [SHAPE, SHAPE]
    assert [(tuple(o[1]), o[2]) for o in ir.outputs] == [(SHAPE, "float16")]
