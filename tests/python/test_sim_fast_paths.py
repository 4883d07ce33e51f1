"""The simulator's block and row paths give what the point-by-point definitions give:
blocked copies for transposes and column loads, affine_select's kept run per row,
the reduce accumulator folded a row at a time under masks, and a masked `+=` of a
matmul accumulating in PSUM as one instruction."""
import numpy as np
import pytest

import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa

from nki_test_util import simulate, trace_ir

RNG = np.random.default_rng(11)


def masked_accumulation(a, b):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.psum)
    for i in nl.affine_range(4):
        acc[:, :] += nisa.nc_matmul(nl.load(a[i]), nl.load(b[i]), mask=(i >= 1))
    nl.store(out, acc)
    return out


def test_a_masked_matmul_accumulates_in_psum_as_one_instruction():
    a = RNG.standard_normal((4, 128, 128)).astype(np.float32)
    b = RNG.standard_normal((4, 128, 512)).astype(np.float32)
    ir = trace_ir(masked_accumulation, a, b)
    assert "tensor_copy" not in ir, ir
    assert [l.strip() for l in ir.splitlines() if "nc_matmul" in l] == [
        "acc[i1, i2] += nc_matmul[pe](a_tile[i0, i1], b_tile[i0, i2]) iter=[128, 128, 512] mask=(i >= 1)"], ir
    want = sum(a[i].T.astype(np.float64) @ b[i] for i in range(1, 4))
    np.testing.assert_allclose(simulate(masked_accumulation, a, b), want, rtol=1e-4, atol=1e-3)


def transposes(x):
    p, f = x.shape
    out = nl.ndarray((f, p), dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(out, nisa.nc_transpose(nl.load(x)))
    return out


@pytest.mark.parametrize("shape", [(128, 128), (37, 53), (16, 100), (100, 16)])
@pytest.mark.parametrize("dtype", [np.float32, nl.bfloat16, np.float16])
def test_nc_transpose_moves_every_element(shape, dtype):
    x = RNG.standard_normal(shape).astype(dtype)
    got = simulate(transposes, x)
    assert got.dtype == x.dtype and got.tobytes() == np.ascontiguousarray(x.T).tobytes()


def column_load(x):
    """A load that walks the HBM tensor down its columns, and a store that writes them back."""
    out = nl.ndarray((x.shape[1], x.shape[0]), dtype=x.dtype, buffer=nl.shared_hbm)
    back = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    ip, jf = nl.mgrid[0:x.shape[1], 0:x.shape[0]]
    t = nl.load(x[jf, ip])
    nl.store(out, t)
    nl.store(back[jf, ip], t)
    return out, back


@pytest.mark.parametrize("dtype", [np.float32, np.int8, nl.bfloat16])
def test_a_load_of_columns_and_its_store(dtype):
    x = (RNG.standard_normal((70, 90)) * 50).astype(dtype)
    out, back = simulate(column_load, x)
    assert out.tobytes() == np.ascontiguousarray(x.T).tobytes()
    assert back.tobytes() == x.tobytes()


def selects(x):
    out = nl.ndarray((3, 128, 200), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(x)
    iq, ik = nl.mgrid[0:128, 0:200]
    for i in nl.affine_range(2):
        nl.store(out[i], nisa.affine_select(pred=(i * 64 + iq >= ik), on_true_tile=t, on_false_value=-9984.0,
                                            dtype=nl.float32))
    nl.store(out[2], nisa.affine_select(pred=(150 - 2 * iq - ik >= 0), on_true_tile=t, on_false_value=0.5,
                                        dtype=nl.float32))
    return out


def test_affine_select_keeps_the_points_its_predicate_holds_at():
    x = RNG.standard_normal((128, 200)).astype(np.float32)
    q, k = np.mgrid[0:128, 0:200]
    got = simulate(selects, x)
    np.testing.assert_array_equal(got[0], np.where(q >= k, x, np.float32(-9984.0)))
    np.testing.assert_array_equal(got[1], np.where(64 + q >= k, x, np.float32(-9984.0)))
    np.testing.assert_array_equal(got[2], np.where(150 - 2 * q - k >= 0, x, np.float32(0.5)))


def masked_reduce(x):
    out = nl.ndarray((128, 66), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(x)
    ip, jf = nl.mgrid[0:128, 0:64]
    s = nl.ndarray((128, 1), dtype=nl.float32)
    m = nl.ndarray((128, 1), dtype=nl.float32)
    e = nisa.activation_reduce(op=nl.exp, data=t[ip, jf], reduce_op=np.add, reduce_res=s, mask=(jf < ip - 20))
    nisa.activation_reduce(op=nl.copy, data=t[ip, jf], reduce_op=np.max, reduce_res=m, mask=(ip + jf >= 100))
    nl.store(out[ip, jf], value=e, mask=(jf < ip - 20))
    nl.store(out[:, 64:65], value=s)
    nl.store(out[:, 65:66], value=m)
    return out


def test_the_reduce_accumulator_folds_only_the_points_the_mask_keeps():
    x = RNG.standard_normal((128, 64)).astype(np.float32)
    got = simulate(masked_reduce, x)
    p, j = np.mgrid[0:128, 0:64]
    for row in range(128):
        kept = j[row] < row - 20
        if kept.any():  # a partition no point reaches keeps its register's old value
            e = got[row, :64][kept]
            np.testing.assert_allclose(e, np.exp(x[row][kept]), rtol=1e-6)
            want = np.float32(0)
            for v in e:  # in order, in fp32, as the engine adds
                want = np.float32(want + v)
            assert got[row, 64] == want, row
        kept = p[row] + j[row] >= 100
        if kept.any():
            assert got[row, 65] == x[row][kept].max(), row
