"""The 0.7/0.8 forms of the device scalars that NKIC_NKI_VERSION gates (NKI_07_08_API.md §2,
§3, §9.1): a comparison's result (usable from 0.8), an NkiScalar while_loop condition (0.8),
nl.int64/nl.uint64 (0.7). Each runs, checked against numpy, at the versions that have it, and
is err_not_in_nki_version at the user's line, with the hint, at those that do not."""
import numpy as np
import pytest

import nki
import nki.isa as nisa
import nki.language as nl
import nkic
from nki_test_util import Markers, check_diag

M = Markers(__file__)
N = 8
DATA = np.arange(1, N + 1, dtype=np.float32).reshape(1, N)


@pytest.fixture(autouse=True)
def _no_version(monkeypatch):
    monkeypatch.delenv("NKIC_NKI_VERSION", raising=False)


def serve(monkeypatch, version):
    monkeypatch.setenv("NKIC_NKI_VERSION", version)


def check_not_in(info, marker, token, form, introduced, served, instead):
    check_diag(info.value, M, "err_not_in_nki_version",
               f"{form} is not in nki {served} (NKIC_NKI_VERSION={served}): it came in nki {introduced}",
               [(marker, token)])
    assert info.value.hint == f"NKIC_NKI_VERSION={introduced} or newer serves it; nki {served} writes {instead}"


def load(src):
    t = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=src)
    return nisa.scalar_load(t)


def returned(s):
    """The int32 scalar s as a (1, 1) HBM result."""
    t = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.scalar_store(t, s)
    out = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=t)
    return out


# --- A comparison of scalars: traced in 0.7, its result usable from 0.8 ---

@nki.jit
def compare_in_arithmetic(ab):
    a, b = load(ab[0:1, 0:1]), load(ab[0:1, 1:2])
    flag = a < b
    return returned(flag * 10 + 1)  # ERR:arith


@nki.jit
def compare_stored(ab):
    a, b = load(ab[0:1, 0:1]), load(ab[0:1, 1:2])
    t = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.scalar_store(t, a < b)  # ERR:store
    out = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=t)
    return out


@nki.jit
def compare_as_bound(ab):
    a, b = load(ab[0:1, 0:1]), load(ab[0:1, 1:2])
    total = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.memset(dst=total, value=0)

    def body(i):
        nisa.scalar_store(total, nisa.scalar_load(total) + 7)

    nl.fori_loop(0, a < b, body)  # ERR:bound
    out = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=total)
    return out


@nki.jit
def compare_as_offset(ab, data):
    a, b = load(ab[0:1, 0:1]), load(ab[0:1, 1:2])
    cell = nl.ndarray((1, 1), dtype=nl.float32, buffer=nl.sbuf)
    view = data.ap([[N, 1], [1, 1]], scalar_offset=a < b, indirect_dim=1)  # ERR:offset
    nisa.dma_copy(dst=cell, src=view)
    out = nl.ndarray((1, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=cell)
    return out


COMPARISON_USES = [
    (compare_in_arithmetic, (), "arith", "flag", lambda less: 10 * less + 1),
    (compare_stored, (), "store", "nisa.", lambda less: less),
    (compare_as_bound, (), "bound", "nl.", lambda less: 7 * less),
    (compare_as_offset, (DATA,), "offset", "data.", lambda less: DATA[0, less]),
]
COMPARISON = "the result of an NkiScalar comparison"
COMPARISON_INSTEAD = "the 0/1 tile of nisa.tensor_scalar(..., op0=nl.less) read with nisa.scalar_load"


@pytest.mark.parametrize("kernel,args,marker,token,expected", COMPARISON_USES,
                         ids=["arithmetic", "store", "bound", "offset"])
def test_a_comparison_result_is_used_from_0_8(monkeypatch, kernel, args, marker, token, expected):
    for version in ("0.8", ""):  # "": the newest, by default
        serve(monkeypatch, version)
        for a, b in ((1, 2), (2, 1), (3, 3)):
            got = nki.simulate(kernel)(np.array([[a, b]], np.int32), *args)
            assert got.tolist() == [[expected(int(a < b))]], (version, a, b)


@pytest.mark.parametrize("kernel,args,marker,token,expected", COMPARISON_USES,
                         ids=["arithmetic", "store", "bound", "offset"])
def test_a_comparison_result_cannot_be_used_in_0_7(monkeypatch, kernel, args, marker, token, expected):
    serve(monkeypatch, "0.7")
    with pytest.raises(nkic.NKIError) as info:
        nki.simulate(kernel)(np.array([[1, 2]], np.int32), *args)
    check_not_in(info, marker, token, COMPARISON, "0.8", "0.7", COMPARISON_INSTEAD)


@nki.jit
def compare_unused(ab):
    a, b = load(ab[0:1, 0:1]), load(ab[0:1, 1:2])
    a < b  # noqa: B015 (traced, never used)
    return returned(a - b)


def test_0_7_traces_a_comparison_whose_result_is_not_used(monkeypatch):
    serve(monkeypatch, "0.7")
    assert nki.simulate(compare_unused)(np.array([[5, 3]], np.int32)).tolist() == [[2]]
    ir = compare_unused.trace(None, (np.array([[5, 3]], np.int32),), {}).ir.text(False)
    assert ir.count("scalar_alu[") == 2  # the comparison and the subtraction


# --- nl.while_loop on an NkiScalar condition: 0.8 ---

@nki.jit
def countdown(n_in):
    total = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.memset(dst=total, value=0)

    def body(k):
        nisa.scalar_store(total, nisa.scalar_load(total) + k)
        return k - 1

    nl.while_loop(load(n_in), body)  # ERR:while
    out = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=total)
    return out


@pytest.mark.parametrize("n", [0, 1, 5])
def test_a_scalar_while_condition_runs_from_0_8(monkeypatch, n):
    serve(monkeypatch, "0.8")
    assert nki.simulate(countdown)(np.array([[n]], np.int32)).tolist() == [[sum(range(n + 1))]]


def test_a_scalar_while_condition_is_not_in_0_7(monkeypatch):
    serve(monkeypatch, "0.7")
    with pytest.raises(nkic.NKIError) as info:
        nki.simulate(countdown)(np.array([[3]], np.int32))
    check_not_in(info, "while", "nl.", "an NkiScalar nl.while_loop condition", "0.8", "0.7",
                 "a VirtualRegister condition (nisa.register_alloc and nisa.register_load)")


@nki.jit
def register_countdown(n_in):
    n_sb = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=n_sb, src=n_in)
    reg = nisa.register_alloc()
    nisa.register_load(reg, n_sb)
    acc = nl.zeros((1, 1), dtype=nl.float32, buffer=nl.sbuf)

    def body(r):
        nisa.tensor_scalar(dst=acc, data=acc, op0=nl.add, operand0=1.0)
        nisa.register_load(r, nl.zeros((1, 1), dtype=nl.int32, buffer=nl.sbuf))
        return r

    nl.while_loop(reg, body)
    out = nl.ndarray((1, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=acc)
    return out


def test_0_7_writes_the_while_condition_as_a_register(monkeypatch):
    serve(monkeypatch, "0.7")
    assert nki.simulate(register_countdown)(np.array([[4]], np.int32)).tolist() == [[1.0]]


# --- nl.int64 and nl.uint64: 0.7, with its scalars ---

@nki.jit
def wide_round_trip(x, dtype):
    t = nl.ndarray(x.shape, dtype=dtype, buffer=nl.sbuf)  # ERR:wide
    nisa.dma_copy(dst=t, src=x)
    out = nl.ndarray(x.shape, dtype=dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=t)
    return out


WIDE = [(nl.int64, np.int64, "nl.int64", "nl.int32"), (nl.uint64, np.uint64, "nl.uint64", "nl.uint32")]


@pytest.mark.parametrize("dtype,np_dtype,form,instead", WIDE, ids=["int64", "uint64"])
@pytest.mark.parametrize("version", ["0.7", "0.8"])
def test_64_bit_integers_run_from_0_7(monkeypatch, dtype, np_dtype, form, instead, version):
    serve(monkeypatch, version)
    x = np.array([[2**40 + 3, 7]], np_dtype)
    got = nki.simulate(wide_round_trip)(x, dtype)
    assert got.dtype == np_dtype and np.array_equal(got, x)


@pytest.mark.parametrize("dtype,np_dtype,form,instead", WIDE, ids=["int64", "uint64"])
@pytest.mark.parametrize("version", ["0.3", "0.6"])
def test_64_bit_integers_are_not_in_0_6(monkeypatch, dtype, np_dtype, form, instead, version):
    serve(monkeypatch, version)
    with pytest.raises(nkic.NKIError) as info:
        nki.simulate(wide_round_trip)(np.array([[1, 2]], np.int32), dtype)
    check_not_in(info, "wide", "nl.", form, "0.7", version, instead)


def test_a_64_bit_argument_is_not_in_0_6(monkeypatch):
    serve(monkeypatch, "0.6")
    with pytest.raises(nkic.NKIError) as info:
        nki.simulate(wide_round_trip)(np.array([[1, 2]], np.int64), nl.int32)  # ERR:wide_arg
    check_not_in(info, "wide_arg", "nki.", "nl.int64", "0.7", "0.6", "nl.int32")
