"""Seed 004's type-hint canonicaliser and seed 001's membership tests."""
import typing

import numpy as np
import pytest

from neuronxcc import nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.typing as nt
from nkic import _typehints


def test_union_and_optional_flatten():
    flat = _typehints.enumerate_all_types(typing.Optional[typing.Union[nt.mutable_tensor, int]])
    assert flat == [nt.mutable_tensor, int, type(None)]
    assert _typehints.enumerate_all_types(typing.Optional[nt.mutable_tensor])[0] is nt.mutable_tensor
    assert _typehints.is_mutable(typing.Optional[nt.mutable_tensor])
    assert not _typehints.is_mutable(nt.tensor[128, 4])


@nki.jit(mode="simulation")
def bump(a: typing.Optional[nt.mutable_tensor]):
    t = nl.load(a)
    nl.store(a, value=t + 1.0)
    return a


@nki.jit(mode="simulation")
def string_hint(a: "nt.tensor"):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.load(a))
    return out


def test_optional_mutable_parameter_is_mutable():
    a = np.zeros((128, 4), np.float32)
    bump(a)
    np.testing.assert_array_equal(a, 1.0)


def test_kernel_with_a_string_hint_is_rejected():
    with pytest.raises(AssertionError, match="Unexpected str in typehint"):
        string_hint(np.zeros((128, 4), np.float32))


@nki.jit(mode="simulation")
def membership(a, mode):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    if mode in ("double", "twice"):
        t[...] = t * 2.0
    if mode not in ("double", "twice", "keep"):
        t[...] = t * 0.0
    nl.store(out, value=t)
    return out


@pytest.mark.parametrize("mode, factor", [("double", 2.0), ("twice", 2.0), ("keep", 1.0), ("zero", 0.0)])
def test_membership_on_static_values_selects_branches(mode, factor):
    a = np.ones((128, 4), np.float32)
    np.testing.assert_array_equal(membership(a, mode), factor)


@nki.jit(mode="simulation")
def chain_with_membership(a, lo, allowed):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(4)[None, :]
    nl.store(out[i_p, i_f], value=0.0)
    # (lo <= i_p) & (i_p < 100) & (lo in allowed): the membership link is a Python bool.
    nl.store(out[i_p, i_f], value=nl.load(a[i_p, i_f]), mask=lo <= i_p < 100 if lo in allowed else i_p < 0)
    return out


def test_membership_inside_a_traced_chain():
    a = np.ones((128, 4), np.float32)
    out = chain_with_membership(a, 10, (10, 20))
    expected = np.zeros_like(a)
    expected[10:100] = 1
    np.testing.assert_array_equal(out, expected)
