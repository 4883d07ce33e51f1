"""Property tests: a random affine mask selects exactly the elements a brute-force
numpy evaluation selects, both in the lowered IR predicate and in what the
simulator writes."""
import operator

import numpy as np
from hypothesis import given, settings, strategies as st

from neuronxcc import nki
import neuronxcc.nki.language as nl

P, F = 8, 12
OPS = {"lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge, "eq": operator.eq}


@nki.jit(mode="simulation")
def masked_fill(x, conds):
    out = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.shared_hbm)
    i_p = nl.arange(P)[:, None]
    i_f = nl.arange(F)[None, :]
    nl.store(out[i_p, i_f], value=0.0)
    mask = True
    for (a, b, c, op, d) in conds:
        # operator.lt & co. are builtins: they run as Python on the traced values.
        mask = mask & OPS[op](a * i_p + b * i_f + c, d)
    t = nl.load(x[i_p, i_f], mask=mask)
    nl.store(out[i_p, i_f], value=t, mask=mask)
    return out


coef = st.integers(-3, 3)
cond = st.tuples(coef, coef, st.integers(-10, 10), st.sampled_from(sorted(OPS)), st.integers(-10, 20))


@settings(max_examples=60, deadline=None)
@given(st.lists(cond, min_size=1, max_size=3))
def test_simulated_mask_matches_numpy(conds):
    x = np.arange(1, P * F + 1, dtype=np.float32).reshape(P, F)
    ip, jf = np.meshgrid(np.arange(P), np.arange(F), indexing="ij")
    expected = np.ones((P, F), bool)
    for (a, b, c, op, d) in conds:
        expected &= OPS[op](a * ip + b * jf + c, d)
    if not expected.any():
        return  # an always-false mask is rejected by design (nothing to execute)
    out = masked_fill(x, tuple(conds))
    np.testing.assert_array_equal(out, np.where(expected, x, 0.0))


@settings(max_examples=40, deadline=None)
@given(st.integers(0, P), st.integers(0, F))
def test_chained_compare_selects_a_band(lo, hi):
    @nki.jit(mode="simulation")
    def band(x):
        out = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.shared_hbm)
        i_p = nl.arange(P)[:, None]
        i_f = nl.arange(F)[None, :]
        nl.store(out[i_p, i_f], value=0.0)
        t = nl.load(x[i_p, i_f])
        nl.store(out[i_p, i_f], value=t, mask=(lo <= i_f < hi))
        return out

    if lo >= hi:
        return
    x = np.ones((P, F), np.float32)
    expected = np.zeros((P, F), np.float32)
    expected[:, lo:hi] = 1
    np.testing.assert_array_equal(band(x), expected)
