"""Quasi-affine indices (MLIR's affine dialect): `//` and `%` by a positive
constant on loop variables, program ids, tile indices and their affine
combinations, wherever an index, a slice bound, a mask or an `if` predicate
may use them. Each kernel is simulated and compared with numpy; the bounds
check, the race check and the printed IR keep the divisions exact. A divisor
that is not a positive constant, and a runtime (tensor-valued) operand, stay
errors at the user's line."""
import numpy as np
import pytest

from neuronxcc import nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

import nkic
from nki_test_util import Markers, check_diag, trace_ir

M = Markers(__file__)


def f32(shape, seed=0):
    return np.random.default_rng(seed).uniform(-1, 1, size=shape).astype(np.float32)


@nki.jit
def double_buffered_scale(x):
    # Two SBUF slots used alternately by the iterations (`i % 2`), as
    # double-buffered tutorial kernels do; each slot is written then read.
    n = x.shape[0] // 128
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    buf = nl.ndarray((nl.par_dim(128), 2, x.shape[1]), dtype=x.dtype, buffer=nl.sbuf)
    for i in nl.sequential_range(n):
        buf[:, i % 2, :] = nl.load(x[i * 128:(i + 1) * 128, :])
        nl.store(out[i * 128:(i + 1) * 128, :], value=nl.multiply(buf[:, (i + 2) % 2, :], 2.0))
    return out


def test_loop_variable_modulo_selects_a_buffer_slot():
    x = f32((512, 64))
    np.testing.assert_array_equal(nki.simulate_kernel(double_buffered_scale, x), x * 2)


def test_ir_keeps_the_division():
    text = trace_ir(double_buffered_scale, f32((512, 64)))
    assert "// 2" in text, text


@nki.jit
def floordiv_rows(x):
    # out[i // 2] gets rows 2k and 2k+1 summed: the store's row is a quotient.
    n = x.shape[0] // 128
    out = nl.ndarray((n // 2 * 128, x.shape[1]), dtype=x.dtype, buffer=nl.shared_hbm)
    acc = nl.zeros((nl.par_dim(128), n // 2, x.shape[1]), dtype=nl.float32, buffer=nl.sbuf)
    for i in nl.sequential_range(n):
        t = nl.load(x[i * 128:(i + 1) * 128, :])
        acc[:, i // 2, :] = nl.add(acc[:, i // 2, :], t)
    for j in nl.affine_range(n // 2):
        nl.store(out[j * 128:(j + 1) * 128, :], value=acc[:, j, :])
    return out


def test_loop_variable_floordiv_in_an_index():
    x = f32((1024, 32))
    r = x.reshape(4, 2, 128, 32).sum(axis=1).reshape(512, 32)
    np.testing.assert_allclose(nki.simulate_kernel(floordiv_rows, x), r, rtol=1e-6)


@nki.jit
def split_columns(x):
    # A tile index divided and reduced: column c of the input lands in block
    # c // 64, column c % 64 of a 3-D output (a reshape written as indices).
    out = nl.ndarray((128, x.shape[1] // 64, 64), dtype=x.dtype, buffer=nl.shared_hbm)
    i_p, i_f = nl.mgrid[0:128, 0:x.shape[1]]
    t = nl.load(x[i_p, i_f])
    nl.store(out[i_p, i_f // 64, i_f % 64], value=t)
    return out


def test_tile_index_floordiv_and_modulo_in_a_store():
    x = f32((128, 256))
    np.testing.assert_array_equal(nki.simulate_kernel(split_columns, x), x.reshape(128, 4, 64))


@nki.jit
def gather_even_odd(x):
    # Columns reordered: the first half of the output takes even columns, the
    # second half odd ones; the load index mixes `//`, `%` and a scale.
    n = x.shape[1]
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    i_p, i_f = nl.mgrid[0:128, 0:n]
    t = nl.load(x[i_p, (i_f % (n // 2)) * 2 + i_f // (n // 2)])
    nl.store(out[i_p, i_f], value=t)
    return out


def test_tile_index_mixed_quasi_affine_load():
    x = f32((128, 96))
    ref = np.concatenate([x[:, 0::2], x[:, 1::2]], axis=1)
    np.testing.assert_array_equal(nki.simulate_kernel(gather_even_odd, x), ref)


@nki.jit
def masked_by_modulo(x):
    # Only even columns are written (a mask with `%`); the rest keep zeros.
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    i_p, i_f = nl.mgrid[0:128, 0:x.shape[1]]
    z = nl.zeros((128, x.shape[1]), dtype=x.dtype)
    nl.store(out[i_p, i_f], value=z)
    t = nl.load(x[i_p, i_f])
    nl.store(out[i_p, i_f], value=t, mask=(i_f % 2 == 0))
    return out


def test_mask_with_modulo():
    x = f32((128, 64))
    ref = np.where((np.arange(64) % 2 == 0)[None, :], x, 0)
    np.testing.assert_array_equal(nki.simulate_kernel(masked_by_modulo, x), ref)


@nki.jit
def alternate_by_if(x):
    # `if (i % 2) == 0:` on a sequential loop variable is a predicated branch.
    n = x.shape[0] // 128
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    for i in nl.sequential_range(n):
        t = nl.load(x[i * 128:(i + 1) * 128, :])
        if (i % 2) == 0:
            nl.store(out[i * 128:(i + 1) * 128, :], value=nl.multiply(t, 3.0))
        else:
            nl.store(out[i * 128:(i + 1) * 128, :], value=nl.negative(t))
    return out


def test_if_on_a_modulo_of_a_loop_variable():
    x = f32((512, 32))
    even = (np.arange(512) // 128 % 2 == 0)[:, None]
    np.testing.assert_allclose(nki.simulate_kernel(alternate_by_if, x), np.where(even, x * 3, -x), rtol=1e-6)


@nki.jit
def pid_blocks(x):
    # Programs grouped in pairs: the program id's quotient picks the row block,
    # its remainder the column half.
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    p = nl.program_id(0)
    half = x.shape[1] // 2
    t = nl.load(x[(p // 2) * 128:(p // 2 + 1) * 128, (p % 2) * half:(p % 2 + 1) * half])
    nl.store(out[(p // 2) * 128:(p // 2 + 1) * 128, (p % 2) * half:(p % 2 + 1) * half], value=nl.add(t, 1.0))
    return out


def test_program_id_quotient_and_remainder_in_slices():
    x = f32((256, 64))
    np.testing.assert_allclose(nki.simulate_kernel(pid_blocks[4], x), x + 1, rtol=1e-6)


@nki.jit
def oob_by_floordiv(x):
    out = nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):
        t = nl.load(x[:, (i // 2) * 64 + 64:(i // 2) * 64 + 128])  # ERR:oob
        nl.store(out[:, :], value=t)
    return out


def test_bounds_check_sees_the_quotient():
    with pytest.raises(nkic.NKIError) as e:
        nki.simulate_kernel(oob_by_floordiv, f32((128, 128)))
    check_diag(e.value, M, "err_tensor_access_out_of_bound", "index range [64, 191] exceed dimension size of 128",
               [("oob", "nl.load")])


@nki.jit
def race_by_modulo(x):
    # Iterations of an affine_range writing slot i % 2 overlap: a race.
    out = nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.shared_hbm)
    buf = nl.ndarray((nl.par_dim(128), 2, 64), dtype=x.dtype, buffer=nl.sbuf)
    for i in nl.affine_range(4):  # ERR:race
        buf[:, i % 2, :] = nl.load(x[i * 128:(i + 1) * 128, :])
        nl.store(out[:, :], value=buf[:, i % 2, :])
    return out


def test_race_check_sees_the_remainder():
    with pytest.raises(nkic.NKIError) as e:
        nki.simulate_kernel(race_by_modulo, f32((512, 64)), check_races=True)
    assert e.value.code == "err_unexpected_output_dependencies", str(e.value)
    assert e.value.line == M.line("race") and M.same_file(e.value.file), str(e.value)


@nki.jit
def modulo_by_loop_variable(x):
    out = nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.shared_hbm)
    buf = nl.ndarray((nl.par_dim(128), 4, 64), dtype=x.dtype, buffer=nl.sbuf)
    for i in nl.affine_range(2):
        for j in nl.affine_range(1, 3):
            buf[:, i % j, :] = nl.load(x[:, :])  # ERR:modj
    nl.store(out[:, :], value=buf[:, 0, :])
    return out


def test_divisor_must_be_a_positive_constant():
    with pytest.raises(nkic.NKIError) as e:
        nki.simulate_kernel(modulo_by_loop_variable, f32((128, 64)))
    check_diag(e.value, M, "err_non_affine_index_expression",
               "index expression is not affine: (L0) % (L1), a division by a value that is not a positive integer "
               "constant", [("modj", "buf[")])


@nki.jit
def partition_by_modulo(x):
    out = nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.shared_hbm)
    i_p, i_f = nl.mgrid[0:128, 0:64]
    t = nl.load(x[i_p, i_f])
    nl.store(out[i_p, i_f], value=t[i_p % 64, i_f])  # ERR:part_mod
    return out


def test_on_chip_partition_index_stays_affine():
    with pytest.raises(nkic.NKIError) as e:
        nki.simulate_kernel(partition_by_modulo, f32((128, 64)))
    check_diag(e.value, M, "err_unsupported_index",
               "the partition dim of `t` is indexed by '//' or '%' of a tile index (i0 - 64*((i0) // 64)); "
               "an on-chip access walks consecutive partitions", [("part_mod", "value=t", 6)])


@nki.jit
def reduce_over_quotient(x):
    out = nl.ndarray((128, 1), dtype=x.dtype, buffer=nl.shared_hbm)
    i_p, i_f = nl.mgrid[0:128, 0:64]
    t = nl.load(x[i_p, i_f])
    nl.store(out, value=nl.sum(t[i_p, i_f // 2], axis=1, keepdims=True))  # ERR:red_div
    return out


def test_reduction_over_a_divided_tile_index_is_not_simulated():
    with pytest.raises(nkic.NKIError) as e:
        nki.simulate_kernel(reduce_over_quotient, f32((128, 64)))
    check_diag(e.value, M, "err_non_affine_index_expression",
               "'//' or '%' of a tile index (nl.arange) on an operand of a reduction or matmul is not supported",
               [("red_div", "nl.sum"), ("red_div", "nl.store")])
