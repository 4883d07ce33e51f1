"""nisa.tensor_scalar / nisa.tensor_tensor on row tiles.

  * affine_kernel: (x * s0) + s1 with compile-time scalars, and with per-row
    [128, 1] operand tiles (broadcast along the free dim);
  * reverse_kernel: reverse0=True swaps the operand order: s0 - x, s0 / x
    (divide), and max(x, s0) followed by reverse1 subtract: s1 - max(x, s0);
  * bitvec_kernel: int32 (x & mask) >> shift and x << 1 | 1 with bitwise ops
    (right_shift is a logical shift, NKI_API.md §3.2);
  * tensor_tensor_kernel: elementwise subtract / multiply / maximum of two tiles.

Exactness: every op is an fp32 (or int32 bit) operation with the result rounded
to fp32 after each op (engines compute in fp32, NKI_API.md §1.6), which is exactly
what numpy float32 arithmetic does op by op, so results are compared bit for bit
(divide included: IEEE division is correctly rounded in both).
"""
import numpy as np
import pytest

from neuronxcc import nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def affine_kernel(x, s, s0, s1):
    n, d = x.shape
    out_const = nl.ndarray((n, d), dtype=x.dtype, buffer=nl.shared_hbm)
    out_tile = nl.ndarray((n, d), dtype=x.dtype, buffer=nl.shared_hbm)
    i_f = nl.arange(d)[None, :]
    i_0 = nl.arange(1)[None, :]
    for t in nl.affine_range(n // 128):
        i_p = t * 128 + nl.arange(128)[:, None]
        tile = nl.load(x[i_p, i_f])
        nl.store(out_const[i_p, i_f], value=nisa.tensor_scalar(tile, np.multiply, s0, op1=np.add, operand1=s1))
        scale = nl.load(s[i_p, i_0])          # [128, 1]
        shift = nl.load(s[i_p, i_0 + 1])      # [128, 1]
        nl.store(out_tile[i_p, i_f],
                 value=nisa.tensor_scalar(data=tile, op0=nl.multiply, operand0=scale, op1=nl.add, operand1=shift))
    return out_const, out_tile


@nki.jit
def reverse_kernel(x, s0, s1):
    n, d = x.shape
    sub = nl.ndarray((n, d), dtype=x.dtype, buffer=nl.shared_hbm)
    div = nl.ndarray((n, d), dtype=x.dtype, buffer=nl.shared_hbm)
    clamp = nl.ndarray((n, d), dtype=x.dtype, buffer=nl.shared_hbm)
    tile = nl.load(x)
    nl.store(sub, value=nisa.tensor_scalar(tile, np.subtract, s0, reverse0=True))
    nl.store(div, value=nisa.tensor_scalar(tile, np.divide, s0, reverse0=True))
    nl.store(clamp, value=nisa.tensor_scalar(tile, np.maximum, s0, op1=np.subtract, operand1=s1, reverse1=True))
    return sub, div, clamp


@nki.jit
def bitvec_kernel(x, mask_bits, shift):
    n, d = x.shape
    a = nl.ndarray((n, d), dtype=x.dtype, buffer=nl.shared_hbm)
    b = nl.ndarray((n, d), dtype=x.dtype, buffer=nl.shared_hbm)
    tile = nl.load(x)
    nl.store(a, value=nisa.tensor_scalar(tile, np.bitwise_and, mask_bits, op1=np.right_shift, operand1=shift))
    nl.store(b, value=nisa.tensor_scalar(tile, nl.left_shift, 1, op1=nl.bitwise_or, operand1=1))
    return a, b


@nki.jit
def tensor_tensor_kernel(x, y):
    n, d = x.shape
    outs = (nl.ndarray((n, d), dtype=x.dtype, buffer=nl.shared_hbm),
            nl.ndarray((n, d), dtype=x.dtype, buffer=nl.shared_hbm),
            nl.ndarray((n, d), dtype=x.dtype, buffer=nl.shared_hbm))
    a = nl.load(x)
    b = nl.load(y)
    nl.store(outs[0], value=nisa.tensor_tensor(a, b, np.subtract))
    nl.store(outs[1], value=nisa.tensor_tensor(a, b, op=nl.multiply))
    nl.store(outs[2], value=nisa.tensor_tensor(data1=a, data2=b, op=np.maximum))
    return outs


def rand(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def test_affine_scalar_and_tile_operands():
    x = rand((256, 200), 0)
    s = rand((256, 2), 1)
    out_const, out_tile = nki.simulate_kernel(affine_kernel, x, s, 1.7, -0.3)
    f = np.float32
    assert np.array_equal(out_const, x * f(1.7) + f(-0.3))
    assert np.array_equal(out_tile, x * s[:, :1] + s[:, 1:])


def test_reverse_operands():
    x = rand((128, 64), 2)
    sub, div, clamp = nki.simulate_kernel(reverse_kernel, x, 0.25, 2.0)
    f = np.float32
    assert np.array_equal(sub, f(0.25) - x)
    assert np.array_equal(div, f(0.25) / x)
    assert np.array_equal(clamp, f(2.0) - np.maximum(x, f(0.25)))


def test_bitvec_int32():
    rng = np.random.default_rng(3)
    x = rng.integers(-2 ** 31, 2 ** 31, size=(128, 96), dtype=np.int64).astype(np.int32)
    a, b = nki.simulate_kernel(bitvec_kernel, x, 0x7FF0F0F0, 3)
    assert a.dtype == np.int32 and b.dtype == np.int32
    ux = x.view(np.uint32)
    assert np.array_equal(a.view(np.uint32), (ux & np.uint32(0x7FF0F0F0)) >> np.uint32(3))
    assert np.array_equal(b.view(np.uint32), (ux << np.uint32(1)) | np.uint32(1))


def test_bitvec_logical_right_shift_of_negative():
    # right_shift is logical: the sign bit is not replicated.
    x = np.full((128, 8), -16, np.int32)
    a, _ = nki.simulate_kernel(bitvec_kernel, x, -1, 2)
    assert np.array_equal(a.view(np.uint32), np.full((128, 8), 0xFFFFFFF0 >> 2, np.uint32))


@pytest.mark.parametrize("dtype", [np.float32, nl.bfloat16], ids=["fp32", "bf16"])
def test_tensor_tensor(dtype):
    x = rand((128, 300), 4).astype(dtype)
    y = rand((128, 300), 5).astype(dtype)
    sub, mul, mx = nki.simulate_kernel(tensor_tensor_kernel, x, y)
    x32, y32 = x.astype(np.float32), y.astype(np.float32)
    for got, ref in ((sub, x32 - y32), (mul, x32 * y32), (mx, np.maximum(x32, y32))):
        assert got.dtype == np.dtype(dtype)
        assert np.array_equal(got.view(np.uint8), ref.astype(dtype).view(np.uint8))
