"""Language basics, each simulated and compared exactly with numpy: slicing with
nl.ds and plain slices over a loop variable, tile arithmetic with Python and numpy
scalars, nl.add/subtract/multiply, nl.zeros + `t[...] =`, `acc +=` accumulation in
an affine_range, exact int32 add, 2-D ragged masks, nl.num_programs, and fp16
rounding of a product. IR structure is checked through TraceKernel.trace."""
import math
import operator
import re

import numpy as np
import pytest

from neuronxcc import nki
import neuronxcc.nki.language as nl

RNG = np.random.default_rng(7)


def randn(shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(np.float32).astype(dtype)


def ir_text(kernel, *args, grid=None, **kwargs):
    return kernel.trace(grid, args, kwargs).ir.text(False)


# ---------------------------------------------------------------- slicing

@nki.jit
def copy_ds_kernel(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for j in nl.affine_range(a.shape[1] // 512):
        t = nl.load(a[0:128, nl.ds(512 * j, 512)])
        nl.store(out[0:128, nl.ds(512 * j, 512)], value=t)
    return out


@nki.jit
def copy_slices_kernel(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for j in nl.affine_range(a.shape[1] // 512):
        t = nl.load(a[0:128, 512 * j:512 * (j + 1)])
        nl.store(out[0:128, 512 * j:512 * (j + 1)], value=t)
    return out


@nki.jit
def copy_ds_rows_kernel(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(a.shape[0] // 128):
        t = nl.load(a[nl.ds(i * 128, 128), :])
        nl.store(out[nl.ds(i * 128, 128), :], value=t)
    return out


SLICING = [
    pytest.param(copy_ds_kernel, (128, 2048), "j", "i1 + 512*j", id="ds-free-dim"),
    pytest.param(copy_slices_kernel, (128, 2048), "j", "i1 + 512*j", id="slices-free-dim"),
    pytest.param(copy_ds_rows_kernel, (512, 256), "i", "i0 + 128*i", id="ds-partition-dim"),
]


@pytest.mark.parametrize("kernel,shape,var,access", SLICING)
def test_slicing_with_loop_variable(kernel, shape, var, access):
    a = randn(shape)
    out = kernel(a)
    assert np.array_equal(out, a)
    text = ir_text(kernel, a)
    trips = max(shape[1] // 512, 1) if var == "j" else shape[0] // 128
    assert text.count(f"for {var} in affine_range(0, {trips}, 1)") == 1
    assert text.count("load[dma](") == 1 and text.count("store[dma](") == 1
    assert access in text


# ---------------------------------------------------------------- scalars

@nki.jit
def unary_kernel(a, fn):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    nl.store(out, value=fn(t))
    return out


f32 = np.float32
SCALAR_OPS = [
    pytest.param(lambda t: f32(2) * t, lambda x: f32(2) * x, id="np.float32*tile"),
    pytest.param(lambda t: t * np.int32(3), lambda x: x * f32(3), id="tile*np.int32"),
    pytest.param(lambda t: t * 0.5, lambda x: x * f32(0.5), id="tile*float"),
    pytest.param(lambda t: 3 * t, lambda x: f32(3) * x, id="int*tile"),
    pytest.param(lambda t: t + 1.25, lambda x: x + f32(1.25), id="tile+float"),
    pytest.param(lambda t: np.float32(0.75) + t, lambda x: f32(0.75) + x, id="np.float32+tile"),
    pytest.param(lambda t: t - 2, lambda x: x - f32(2), id="tile-int"),
    pytest.param(lambda t: 2 - t, lambda x: f32(2) - x, id="int-tile"),
    pytest.param(lambda t: np.float32(1.5) - t, lambda x: f32(1.5) - x, id="np.float32-tile"),
    pytest.param(lambda t: t - np.float32(0.25), lambda x: x - f32(0.25), id="tile-np.float32"),
]


@pytest.mark.parametrize("fn,ref", SCALAR_OPS)
def test_tile_scalar_arithmetic_fp32(fn, ref):
    a = randn((128, 512))
    out = unary_kernel(a, fn=fn)
    expected = ref(a)
    assert expected.dtype == np.float32
    assert out.dtype == np.float32
    assert np.array_equal(out, expected)


def test_numpy_scalar_on_left_reaches_nkic_operator():
    # np.float32(2) * tile must not be evaluated by numpy (element by element or as an
    # object array): it is one tensor-scalar instruction.
    a = randn((128, 512))
    text = ir_text(unary_kernel, a, fn=lambda t: np.float32(2) * t)
    ops = [l for l in text.splitlines() if "tensor_scalar[dve](" in l or "tensor_tensor[dve](" in l]
    assert len(ops) == 1
    assert "load[dma](" in text and text.count("store[dma](") == 1


@pytest.mark.parametrize("fn,ref", [
    pytest.param(lambda t: t * np.int32(3), lambda x: x * 3, id="tile*np.int32"),
    pytest.param(lambda t: t + 7, lambda x: x + 7, id="tile+int"),
    pytest.param(lambda t: 100 - t, lambda x: 100 - x, id="int-tile"),
])
def test_tile_scalar_arithmetic_int32(fn, ref):
    a = RNG.integers(-1000, 1000, (128, 512)).astype(np.int32)
    out = unary_kernel(a, fn=fn)
    assert out.dtype == np.int32
    assert np.array_equal(out, ref(a).astype(np.int32))


# ---------------------------------------------------------------- binary ops

@nki.jit
def binary_kernel(a, b, fn):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=fn(nl.load(a), nl.load(b)))
    return out


BINARY = [
    pytest.param(nl.add, np.add, id="nl.add"),
    pytest.param(nl.subtract, np.subtract, id="nl.subtract"),
    pytest.param(nl.multiply, np.multiply, id="nl.multiply"),
    pytest.param(operator.add, np.add, id="+"),
    pytest.param(operator.sub, np.subtract, id="-"),
    pytest.param(operator.mul, np.multiply, id="*"),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float16, nl.bfloat16], ids=["f32", "f16", "bf16"])
@pytest.mark.parametrize("fn,npfn", BINARY)
def test_binary_ops_round_once(fn, npfn, dtype):
    a, b = randn((128, 512), dtype), randn((128, 512), dtype)
    out = binary_kernel(a, b, fn=fn)
    assert out.dtype == dtype
    expected = npfn(a.astype(np.float32), b.astype(np.float32)).astype(dtype)
    assert np.array_equal(out.view(np.uint8), expected.view(np.uint8))


@pytest.mark.parametrize("fn", [nl.add, operator.add], ids=["nl.add", "+"])
def test_int32_add_is_exact(fn):
    # Values far beyond 2**24: an fp32 add would lose the low bits.
    a = RNG.integers(-2**30, 2**30, (128, 512)).astype(np.int32)
    b = RNG.integers(-2**30, 2**30, (128, 512)).astype(np.int32)
    a[0, :4] = [2**30 + 1, -2**30 - 1, 16777217, 123456789]
    b[0, :4] = [2**30 - 3, -2**30 + 1, 1, 987654321]  # sums stay within int32
    out = binary_kernel(a, b, fn=fn)
    assert out.dtype == np.int32
    assert np.array_equal(out, a + b)


@pytest.mark.parametrize("scale", [1.0, 200.0, 1e-3], ids=["normal", "overflow", "subnormal"])
def test_fp16_product_rounds_like_numpy(scale):
    a = (randn((128, 512)) * np.float32(scale)).astype(np.float16)
    b = (randn((128, 512)) * np.float32(scale)).astype(np.float16)
    with np.errstate(over="ignore"):
        expected = (a.astype(np.float32) * b.astype(np.float32)).astype(np.float16)
    out = binary_kernel(a, b, fn=operator.mul)
    assert out.dtype == np.float16
    assert np.array_equal(out.view(np.uint16), expected.view(np.uint16))
    if scale == 200.0:
        assert np.isinf(expected).any()
    if scale == 1e-3:
        assert ((expected != 0) & (np.abs(expected) < np.float16(6.104e-05))).any()


# ---------------------------------------------------------------- zeros, assignment, accumulation

@nki.jit
def zeros_assign_kernel(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.zeros(a.shape, dtype=a.dtype)
    t[...] = nl.load(a)
    u = nl.zeros(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    u[...] = nl.multiply(t, t)
    nl.store(out, value=u)
    return out


def test_zeros_then_assign():
    a = randn((128, 512))
    out = zeros_assign_kernel(a)
    assert np.array_equal(out, a * a)
    text = ir_text(zeros_assign_kernel, a)
    assert "memset[dve](0)" in text


@nki.jit
def zeros_partial_assign_kernel(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.zeros(a.shape, dtype=a.dtype)
    t[0:64, 0:256] = nl.load(a[0:64, 0:256])
    nl.store(out, value=t)
    return out


def test_zeros_then_partial_assign():
    a = randn((128, 512))
    expected = np.zeros_like(a)
    expected[:64, :256] = a[:64, :256]
    assert np.array_equal(zeros_partial_assign_kernel(a), expected)


@nki.jit
def accumulate_kernel(a):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.zeros((128, 512), dtype=nl.float32)
    for j in nl.affine_range(a.shape[1] // 512):
        acc += nl.load(a[0:128, nl.ds(512 * j, 512)])
    nl.store(out, value=acc)
    return out


@pytest.mark.parametrize("k", [1, 2, 5])
def test_accumulate_in_affine_range(k):
    a = randn((128, 512 * k))
    expected = np.zeros((128, 512), np.float32)
    for j in range(k):  # the loop order: fp32 adds in iteration order
        expected = expected + a[:, 512 * j:512 * (j + 1)]
    out = accumulate_kernel(a)
    assert np.array_equal(out, expected)
    text = ir_text(accumulate_kernel, a)
    if k > 1:
        assert text.count(f"for j in affine_range(0, {k}, 1)") == 1
        loop = text.index("for j in")
        assert "acc[i0, i1] +=" in text[loop:]
    else:
        assert "affine_range" not in text


# ---------------------------------------------------------------- masks

@nki.jit
def masked_scale_2d_kernel(a):
    n, m = a.shape
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for p in nl.affine_range(math.ceil(n / 128)):
        for q in nl.affine_range(math.ceil(m / 512)):
            i_p = p * 128 + nl.arange(128)[:, None]
            i_f = q * 512 + nl.arange(512)[None, :]
            t = nl.load(a[i_p, i_f], mask=(i_p < n) & (i_f < m))
            u = nl.multiply(t, 3.0, mask=(i_p < n) & (i_f < m))
            nl.store(out[i_p, i_f], value=u, mask=(i_p < n) & (i_f < m))
    return out


@pytest.mark.parametrize("shape", [(300, 700), (128, 512), (50, 100), (257, 1025)])
def test_2d_ragged_mask(shape):
    a = randn(shape)
    out = nki.simulate_kernel(masked_scale_2d_kernel, a, check_uninitialized=True)
    assert np.array_equal(out, a * f32(3))


def test_2d_ragged_mask_ir():
    a = randn((300, 700))
    text = ir_text(masked_scale_2d_kernel, a)
    assert text.count("for p in affine_range(0, 3, 1)") == 1
    assert text.count("for q in affine_range(0, 2, 1)") == 1
    masks = re.findall(r"mask=\(([^)]*)\)", text)
    assert len(masks) == 3
    for m in masks:
        assert "i0 + 128*p <= 299" in m and "i1 + 512*q <= 699" in m


@nki.jit
def masked_rows_cols_kernel(a, n, m):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(512)[None, :]
    z = nl.zeros((128, 512), dtype=a.dtype)
    nl.store(out[i_p, i_f], value=z)
    t = nl.load(a[i_p, i_f], mask=(i_p < n) & (i_f < m))
    nl.store(out[i_p, i_f], value=t, mask=(i_p < n) & (i_f < m))
    return out


@pytest.mark.parametrize("n,m", [(64, 256), (1, 1), (128, 512), (100, 3)])
def test_mask_on_rows_and_columns(n, m):
    a = randn((128, 512))
    expected = np.zeros_like(a)
    expected[:n, :m] = a[:n, :m]
    out = nki.simulate_kernel(masked_rows_cols_kernel, a, n=n, m=m)
    assert np.array_equal(out, expected)


# ---------------------------------------------------------------- SPMD

@nki.jit
def num_programs_kernel(a):
    g0 = nl.num_programs(0)
    g1 = nl.num_programs(1)
    out = nl.ndarray((128, 4 * g0 * g1), dtype=nl.int32, buffer=nl.shared_hbm)
    col = (nl.program_id(0) * g1 + nl.program_id(1)) * 4
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(4)[None, :]
    vals = nl.full((128, 4), g0 * 1000 + g1 * 100 + nl.num_programs(), dtype=nl.int32)
    nl.store(out[i_p, col + i_f], value=vals)
    return out


@pytest.mark.parametrize("grid", [(3, 5), (1, 2), (4, 1)])
def test_num_programs(grid):
    g0, g1 = grid
    a = np.zeros((1, 1), np.float32)
    out = num_programs_kernel[grid](a)
    assert out.shape == (128, 4 * g0 * g1)
    # Every program wrote its own 4 columns with the grid's sizes.
    assert np.all(out == g0 * 1000 + g1 * 100 + g0 * g1)
    text = ir_text(num_programs_kernel, a, grid=grid)
    assert f"grid=[{g0}, {g1}]" in text
