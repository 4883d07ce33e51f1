"""nisa.max8, nisa.nc_find_index8 and nisa.nc_match_replace8 against numpy's
stable descending sort: equal values take successive positions (nc_match_replace8
walks its vals from the last to the first, so of equal vals the last takes the
first occurrence); an absent value's index is all ones."""
import numpy as np
import pytest

import nkic

from neuronxcc import nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def top8(x):
    v = nl.ndarray((128, 8), dtype=x.dtype, buffer=nl.shared_hbm)
    i = nl.ndarray((128, 8), dtype=nl.uint32, buffer=nl.shared_hbm)
    r = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    ri = nl.ndarray((128, 8), dtype=nl.uint32, buffer=nl.shared_hbm)
    tx = nl.load(x)
    m = nisa.max8(src=tx)
    nl.store(v, value=m)
    nl.store(i, value=nisa.nc_find_index8(data=tx, vals=m))
    idx = nl.ndarray((128, 8), dtype=nl.uint32)
    nl.store(r, value=nisa.nc_match_replace8(data=tx, vals=m, imm=-1e9, dst_idx=idx))
    nl.store(ri, value=idx)
    return v, i, r, ri


def reverse_matches(flat, vals):
    """nc_match_replace8's positions: vals from the last to the first, each taking the first
    occurrence not taken yet."""
    out = np.zeros(vals.shape, np.int64)
    for p in range(flat.shape[0]):
        taken = set()
        for k in range(7, -1, -1):
            j = next(j for j in range(flat.shape[1]) if flat[p, j] == vals[p, k] and j not in taken)
            taken.add(j)
            out[p, k] = j
    return out


@pytest.mark.parametrize("shape,ties", [((128, 40), True), ((128, 64), False), ((128, 4, 9), True)])
def test_top8_values_positions_and_replacement(shape, ties):
    rng = np.random.default_rng(sum(shape))
    x = (rng.integers(0, 20, shape) if ties else rng.standard_normal(shape)).astype(np.float32)
    v, i, r, ri = nki.simulate_kernel(top8, x)
    flat = x.reshape(128, -1)
    order = np.argsort(-flat, axis=1, kind="stable")[:, :8]
    assert np.array_equal(v, np.take_along_axis(flat, order, axis=1))
    assert np.array_equal(i, order) and np.array_equal(ri, reverse_matches(flat, v))
    replaced = flat.copy()
    np.put_along_axis(replaced, order, np.float32(-1e9), axis=1)
    assert np.array_equal(r.reshape(128, -1), replaced)


def test_find_index8_of_given_values():
    @nki.jit
    def find(x, vals):
        out = nl.ndarray((128, 8), dtype=nl.uint16, buffer=nl.shared_hbm)
        nl.store(out, value=nisa.nc_find_index8(data=nl.load(x), vals=nl.load(vals), dtype=nl.uint16))
        return out

    rng = np.random.default_rng(21)
    x = np.stack([rng.permutation(32) for _ in range(128)]).astype(np.float32)
    pos = np.stack([rng.choice(32, 8, replace=False) for _ in range(128)])
    vals = np.take_along_axis(x, pos, axis=1)
    assert np.array_equal(nki.simulate_kernel(find, x, vals), pos)


@pytest.mark.parametrize("dtype,ones", [(nl.uint32, 0xFFFFFFFF), (nl.uint16, 0xFFFF)])
def test_find_index8_of_absent_values_is_all_ones(dtype, ones):
    @nki.jit
    def find(x, vals):
        out = nl.ndarray((128, 8), dtype=dtype, buffer=nl.shared_hbm)
        nl.store(out, value=nisa.nc_find_index8(data=nl.load(x), vals=nl.load(vals), dtype=dtype))
        return out

    x = np.tile(np.arange(16, dtype=np.float32), (128, 1))
    vals = np.tile(np.array([3, 100, 7, -1, 7, 15, 0.5, 0], np.float32), (128, 1))
    want = np.tile(np.array([3, ones, 7, ones, ones, 15, ones, 0]), (128, 1))  # a repeated 7 finds no second 7
    assert np.array_equal(nki.simulate_kernel(find, x, vals), want)


def test_match_replace8_pairs_equal_vals_from_the_last():
    @nki.jit
    def replace(x, vals):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        where = nl.ndarray((128, 8), dtype=nl.uint32, buffer=nl.shared_hbm)
        idx = nl.ndarray((128, 8), dtype=nl.uint32)
        nl.store(out, value=nisa.nc_match_replace8(data=nl.load(x), vals=nl.load(vals), imm=0.0, dst_idx=idx))
        nl.store(where, value=idx)
        return out, where

    x = np.tile(np.array([1, 2, 3, 4, 8, 8, 8, 8, 8, 8, 8], np.float32), (128, 1))
    vals = np.tile(np.array([3, 8, 8, 8, 8, 8, 8, 8], np.float32), (128, 1))
    out, where = nki.simulate_kernel(replace, x, vals)
    assert where[0].tolist() == [2, 10, 9, 8, 7, 6, 5, 4]
    assert out[0].tolist() == [1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0]


def test_scan_and_bn_stats_flatten_3d_free_dims():
    @nki.jit
    def k(a):
        s = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
        st = nl.ndarray((128, 2), dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.load(a)
        nl.store(s, value=nisa.tensor_tensor_scan(t, t, 0.0, np.maximum, np.add))
        nl.store(st, value=nisa.bn_aggr(nisa.bn_stats(t)))
        return s, st

    a = np.random.default_rng(22).random((128, 3, 5), np.float32)
    s, st = nki.simulate_kernel(k, a)
    flat, r, ref = a.reshape(128, 15), np.zeros(128, np.float32), np.zeros((128, 15), np.float32)
    for i in range(15):
        r = np.maximum(flat[:, i], r) + flat[:, i]
        ref[:, i] = r
    assert np.array_equal(s.reshape(128, 15), ref)
    assert np.allclose(st, np.stack([flat.mean(1), flat.var(1)], axis=1), rtol=1e-4, atol=1e-6)


def test_stream_shuffle_within_quadrants():
    shuffle = [31 - i if i % 3 else 255 for i in range(32)]

    @nki.jit
    def shuffled(x):
        out = nl.ndarray((64, 16), dtype=x.dtype, buffer=nl.shared_hbm)
        d = nl.full((64, 16), -1.0, dtype=nl.float32)
        nisa.nc_stream_shuffle(src=nl.load(x), dst=d, shuffle_mask=shuffle)
        nl.store(out, value=d)
        return out

    x = np.random.default_rng(23).random((64, 16), np.float32)
    ref = np.full((64, 16), -1.0, np.float32)
    for q in (0, 32):
        for i, s in enumerate(shuffle):
            if s != 255:
                ref[q + i] = x[q + s]
    assert np.array_equal(nki.simulate_kernel(shuffled, x), ref)


def test_stream_shuffle_mask_needs_32_entries():
    @nki.jit
    def bad(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        t = nl.load(x)
        nisa.nc_stream_shuffle(src=t, dst=t, shuffle_mask=list(range(16)))
        nl.store(out, value=t)
        return out

    with pytest.raises(nkic.NKIError) as info:
        nki.simulate_kernel(bad, np.zeros((32, 4), np.float32))
    e = info.value
    assert e.code == "err_unexpected_type_of_operand" and e.api == "nisa.nc_stream_shuffle"
    assert "'shuffle_mask': got 16 entries" in e.message
    with open(__file__) as f:
        assert e.file.endswith("test_numerics_api_topk.py") and "nc_stream_shuffle" in f.read().splitlines()[e.line - 1]
