"""Idioms of public NKI kernels that nkic must accept and compute exactly:
compile-time helpers looping with builtin range, one-element aranges broadcast
into larger grids, masks that no iteration satisfies, and loop variables added
to tiles."""
import numpy as np
import pytest

from neuronxcc import nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

X = np.random.default_rng(0).random((128, 512), dtype=np.float32)


def replication_factor(rep_from, rep_to):
    """A helper on Python ints: the largest i <= rep_from with i * rep_to <= 128."""
    for i in range(rep_from, 0, -1):
        if i * rep_to <= 128:
            return i
    return 1


def widths(n):
    total, cols = 0, []
    for i in range(n):
        cols.append(total)
        total += i + 1
    return total, cols


@nki.jit
def helper_ints(x):
    rep = replication_factor(3, 64)
    total, cols = widths(4)
    assert cols == [0, 1, 3, 6]
    out = nl.ndarray((128, rep + total), dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.load(x[:, 0:rep + total]))
    return out


def test_a_helpers_builtin_range_is_the_helpers_own_python():
    # The kernel body's range is a sequential_range axis; a helper's range loops
    # in Python, so break/return and Python-int results work there.
    out = helper_ints(X)
    assert out.shape == (128, 12) and np.array_equal(out, X[:, 0:12])


@nki.jit
def row_masked_store(x):
    out = nl.ndarray((1, 512), dtype=x.dtype, buffer=nl.shared_hbm)
    i_m = nl.arange(1)[None, :]   # a one-row index written free-style (tiled matmul with M = 1)
    i_n = nl.arange(512)[None, :]
    nl.store(out[i_m, i_n], value=nl.load(x[0:1, :]), mask=(i_m < 1))
    return out


def test_a_one_element_arange_is_its_start_wherever_it_is_broadcast():
    assert np.array_equal(row_masked_store(X), X[0:1, :])


@nki.jit
def carry_to_next_tile(x):
    n = x.shape[1] // 512
    out = nl.ndarray((128, 1), dtype=x.dtype, buffer=nl.shared_hbm)
    carry = nl.zeros((128, 1), dtype=nl.float32)
    for j in nl.sequential_range(n):
        carry[...] = nl.copy(nl.load(x[:, j * 512 + 511:j * 512 + 512]), mask=j + 1 < n)
    nl.store(out, value=carry)
    return out


@pytest.mark.parametrize("tiles", [1, 3])
def test_a_mask_no_iteration_satisfies_writes_nothing(tiles):
    x = np.random.default_rng(tiles).random((128, 512 * tiles), dtype=np.float32)
    want = np.zeros((128, 1), np.float32) if tiles == 1 else x[:, 512 * (tiles - 2) + 511:512 * (tiles - 2) + 512]
    assert np.array_equal(carry_to_next_tile(x), want)


@nki.jit
def shifted_static_mask(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    nl.store(out, value=t)
    i_p, i_f = nl.mgrid[0:128, 0:512]
    nl.store(out[i_p, i_f + 1000], value=t, mask=(i_f < 0))  # never true: not out of bounds either
    return out


def test_an_always_false_mask_accesses_nothing():
    assert np.array_equal(shifted_static_mask(X), X)


@nki.jit
def add_iteration_value(x):
    out = nl.ndarray((128, 3, 64), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x[:, 0:64])
    for i in nl.affine_range(3):
        nl.store(out[:, i, :], value=t + i * 8)   # a loop variable joins a tile as a tensor operand
    col = nl.arange(64)[None, :]
    u = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
    nl.store(u, value=t * col - col)               # so does an nl.arange index tile
    return out, u


def test_loop_variables_and_index_tiles_as_tensor_operands():
    out, u = add_iteration_value(X)
    x = X[:, 0:64]
    np.testing.assert_array_equal(out, np.stack([x, x + 8, x + 16], axis=1))
    col = np.arange(64, dtype=np.float32)
    np.testing.assert_array_equal(u, x * col - col)


@nki.jit
def single_iteration_operand_mask(a, b):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    at, bt = nl.load(a), nl.load(b)
    acc = nl.zeros((128, 512), nl.float32, buffer=nl.psum)
    for n in nl.affine_range(1):      # one iteration: n is the int 0 and `n < 2` the bool True
        acc[...] += nisa.nc_matmul(at, bt[n < 2])
    nl.store(out, value=nl.copy(acc))
    return out


def test_an_operand_mask_that_folded_to_a_python_bool():
    a = np.random.default_rng(1).random((128, 128), dtype=np.float32)
    np.testing.assert_allclose(single_iteration_operand_mask(a, X), a.T @ X, rtol=1e-4)


@nki.jit
def checks_argument_types(x):
    import neuronxcc.nki.typing as nt
    assert isinstance(x, nt.tensor) and isinstance(x, nt.tensor[128, 512]) and not isinstance(x, nt.tensor[128, 64])
    assert not isinstance(np.zeros(3), nt.tensor)
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.load(x))
    return out


def test_kernel_arguments_are_nt_tensor_instances():
    assert np.array_equal(checks_argument_types(X), X)


def test_constants_submodules_import_as_modules():
    import neuronxcc.nki.isa.constants as isa_constants
    import neuronxcc.nki.language.constants as constants
    assert constants.sizeinbytes(nl.bfloat16) == 2 and isa_constants.oob_mode is nisa.oob_mode


@nki.jit
def vector_add(a, b, bias):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    biased = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.shared_hbm)
    s = nl.add(nl.load(a), nl.load(b))            # 1-D vectors load as [128, 1] tiles
    assert s.shape == (128, 1)
    nl.store(out, value=s)
    nl.store(biased, value=nisa.tensor_scalar(nl.load(bias[0:128, 0:64]), np.add, nl.load(a[0:128])))
    return out, biased


def test_one_dimensional_vectors_move_as_column_tiles():
    a, b = X[:, 0].copy(), X[:, 1].copy()
    out, biased = vector_add(a, b, X)
    np.testing.assert_array_equal(out, a + b)
    np.testing.assert_array_equal(biased, X[:, 0:64] + a[:, None])


@nki.jit
def conv_like_matmul(w, img):
    out = nl.ndarray((128, 2, 3, 64), dtype=nl.float32, buffer=nl.shared_hbm)
    wt, it = nl.load(w), nl.load(img)
    acc = nl.zeros((128, 2, 3, 64), nl.float32, buffer=nl.psum)
    for r in nl.affine_range(2):
        acc[...] += nisa.nc_matmul(wt, it)       # moving [K, 2, 3, 64]: free dims flattened
    nl.store(out, value=nl.copy(acc))
    return out


def test_nc_matmul_moving_operand_with_several_free_dims():
    rng = np.random.default_rng(2)
    w = rng.random((128, 128), dtype=np.float32)
    img = rng.random((128, 2, 3, 64), dtype=np.float32)
    np.testing.assert_allclose(conv_like_matmul(w, img), 2 * np.einsum("km,kabn->mabn", w, img), rtol=1e-4)


@nki.jit
def predicated_across_ranks(x):
    out = nl.ndarray((2, 128, 2, 32), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(x[:, 0:64])                        # [128, 64]
    dst = nl.zeros((128, 2, 32), dtype=nl.float32)
    nisa.tensor_copy_predicated(src=t, dst=dst, predicate=nl.greater(t, 0.5))
    nl.store(out[0], value=dst)
    sel = nl.ndarray((128, 2, 32), dtype=nl.float32)
    nisa.select_reduce(dst=sel, predicate=nl.greater(t, 0.5), on_true=t, on_false=-1.0)
    nl.store(out[1], value=sel)
    return out


def test_predicated_copies_between_tiles_of_equal_free_size():
    got = predicated_across_ranks(X)
    x = X[:, 0:64]
    np.testing.assert_array_equal(got[0].reshape(128, 64), np.where(x > 0.5, x, 0.0))
    np.testing.assert_array_equal(got[1].reshape(128, 64), np.where(x > 0.5, x, -1.0))


@nki.jit
def column_broadcasts(x, col):
    out = nl.ndarray((3, 128, 2, 32), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(x[:, 0:64]).reshape((128, 2, 32))
    c = nl.load(col)                                # [128, 1]
    nl.store(out[0], value=nisa.tensor_tensor(t, c, op=nl.add))
    nl.store(out[1], value=nisa.tensor_scalar(t, np.multiply, c))
    nl.store(out[2], value=nl.subtract(t, c))
    return out


def test_a_column_per_partition_meets_every_free_element():
    col = np.random.default_rng(3).random((128, 1), dtype=np.float32)
    got = column_broadcasts(X, col)
    t = X[:, 0:64].reshape(128, 2, 32)
    c = col[:, :, None]
    np.testing.assert_array_equal(got[0], t + c)
    np.testing.assert_array_equal(got[1], t * c)
    np.testing.assert_array_equal(got[2], t - c)


@nki.jit
def not_found_as_minus_one(x, vals):
    out = nl.ndarray((128, 8), dtype=nl.int32, buffer=nl.shared_hbm)
    nl.store(out, value=nisa.nc_find_index8(data=nl.load(x), vals=nl.load(vals)))   # uint32 into int32
    return out


def test_a_store_between_signed_and_unsigned_keeps_the_bits():
    x = np.tile(np.arange(16, dtype=np.float32), (128, 1))
    vals = np.tile(np.array([3, 100, 7, -1, 8, 15, 0.5, 0], np.float32), (128, 1))
    want = np.tile(np.array([3, -1, 7, -1, 8, 15, -1, 0], np.int32), (128, 1))
    np.testing.assert_array_equal(not_found_as_minus_one(x, vals), want)


@nki.jit
def chained_with_constant_prefix(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.zeros(x.shape, dtype=x.dtype))
    i_p, i_f = nl.mgrid[0:128, 0:64]
    nl.store(out[i_p, i_f], value=nl.load(x[i_p, i_f]), mask=1 < 2 < i_f)       # True & (2 < i_f)
    nl.store(out[i_p, i_f], value=nl.load(x[i_p, i_f]), mask=3 < 2 < i_f)       # never
    return out


def test_a_chained_comparison_whose_first_link_is_plain_numbers():
    x = X[:, 0:64].copy()
    want = np.where(np.arange(64) > 2, x, 0.0)
    np.testing.assert_array_equal(chained_with_constant_prefix(x), want)


@nki.jit
def documented_isa_forms(x):
    stats = nl.ndarray((128, 6), dtype=nl.bfloat16, buffer=nl.shared_hbm)
    scaled = nl.ndarray((128, 64), dtype=nl.bfloat16, buffer=nl.shared_hbm)
    where = nl.ndarray((128, 8), dtype=nl.uint32, buffer=nl.shared_hbm)
    trans = nl.ndarray((64, 128), dtype=nl.float32, buffer=nl.shared_hbm)
    filled = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(x, dtype=nl.bfloat16)
    s = nisa.bn_stats(t)                            # fp32 statistics cast back to the input's dtype
    assert s.dtype == nl.bfloat16
    nl.store(stats, value=s)
    red = nl.ndarray((128, 1), dtype=nl.float32)
    r = nisa.tensor_scalar_reduce(data=t, op0=np.multiply, operand0=2.0, reduce_op=np.add, reduce_res=red)
    assert r.dtype == nl.bfloat16                   # defaults to the data's dtype, as tensor_scalar does
    nl.store(scaled, value=r)
    f = nl.load(x)
    vals = nl.copy(f[:, 0:8]).reshape((128, 1, 8))  # 3-D vals
    nl.store(where, value=nisa.nc_find_index8(data=f, vals=vals))
    nl.store(trans, value=nisa.nc_transpose(f.reshape((128, 2, 32))))     # free axes collapse into one
    dst = nl.zeros((128, 64), dtype=nl.float32)
    nisa.tensor_copy_predicated(src=3.0, dst=dst, predicate=nl.greater(f, 0.5))   # a scalar src
    nl.store(filled, value=dst)
    return stats, scaled, where, trans, filled


def test_documented_forms_of_isa_instructions():
    stats, scaled, where, trans, filled = documented_isa_forms(X[:, 0:64].copy())
    x = X[:, 0:64]
    xb = x.astype(nl.bfloat16).astype(np.float32)
    assert stats.dtype == nl.bfloat16 and scaled.dtype == nl.bfloat16
    np.testing.assert_allclose(stats[:, 1].astype(np.float32), xb[:, 0::2].mean(axis=1), rtol=1e-2)
    np.testing.assert_array_equal(scaled.astype(np.float32), (2 * xb).astype(nl.bfloat16).astype(np.float32))
    np.testing.assert_array_equal(where, np.tile(np.arange(8), (128, 1)))
    np.testing.assert_array_equal(trans, x.T)
    np.testing.assert_array_equal(filled, np.where(x > 0.5, 3.0, 0.0))


@nki.jit
def masked_matmul_rows(a, b):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    nl.store(out, value=nl.zeros((128, 512), dtype=nl.float32))
    i_m, i_n = nl.mgrid[0:128, 0:512]
    c = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
    c[i_m, i_n] = nisa.nc_matmul(nl.load(a), nl.load(b), mask=(i_m < 32))   # mask= names the result grid
    nl.store(out[i_m, i_n], value=nl.copy(c[i_m, i_n]), mask=(i_m < 32))
    return out


def test_an_instruction_mask_on_a_matmul_restricts_its_result_rows():
    a = np.random.default_rng(4).random((128, 128), dtype=np.float32)
    got = masked_matmul_rows(a, X)
    np.testing.assert_allclose(got[:32], (a.T @ X)[:32], rtol=1e-4)
    assert not got[32:].any()
