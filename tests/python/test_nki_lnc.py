"""kernel[n] of the current nki API (NKI_CURRENT_API.md §8.1, §6.9): the body traced once per
core with a compile-time program id, shared-HBM tensors common to the cores, and
nisa.core_barrier / nisa.sendrecv ordering the cores' instructions; each misuse is a
diagnostic at the user's line. nki.lnc (NKI 0.8, NKI_07_08_API.md §5) holds these calls now:
its rules, and the nisa forms' deprecation warnings at the user's line."""
import warnings

import numpy as np
import pytest

import nki
import nki.isa as nisa
import nki.language as nl
import nki.lnc as lnc
from nki_test_util import Markers, check_diag, trace_error

M = Markers(__file__)
A = np.arange(4 * 8, dtype=np.float32).reshape(4, 8)


@pytest.fixture(autouse=True)
def _trn2(monkeypatch):
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn2")


@nki.jit
def swap_halves(a):
    """Each core sends its half to the other, writes what it received doubled, and after a
    barrier core 0 adds 1 to what core 1 wrote."""
    n = a.shape[0] // 2
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    c = nl.program_id(0)
    mine = nl.ndarray((n, a.shape[1]), a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=mine, src=a[c * n:(c + 1) * n, :])
    theirs = nl.ndarray((n, a.shape[1]), a.dtype, buffer=nl.sbuf)
    nisa.sendrecv(src=mine, dst=theirs, send_to_rank=1 - c, recv_from_rank=1 - c, pipe_id=0)
    nisa.tensor_scalar(dst=theirs, data=theirs, op0=nl.multiply, operand0=2.0)
    nisa.dma_copy(dst=out[c * n:(c + 1) * n, :], src=theirs)
    nisa.core_barrier(out, (0, 1))
    if c == 0:
        back = nl.ndarray((n, a.shape[1]), a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=back, src=out[n:2 * n, :])
        nisa.tensor_scalar(dst=back, data=back, op0=nl.add, operand0=1.0)
        nisa.dma_copy(dst=out[n:2 * n, :], src=back)
    return out


def test_sendrecv_and_core_barrier_order_the_two_cores():
    np.testing.assert_array_equal(nki.simulate(swap_halves[2])(A), np.concatenate([2 * A[2:], 2 * A[:2] + 1]))


def exchange_reduced(reduce_op, dtype):
    """NKI 0.7's nisa.sendrecv_compute: each core reduces its half of `a` with the other's."""

    @nki.jit
    def k(a):
        n = a.shape[0] // 2
        out = nl.ndarray((n, a.shape[1]), dtype, buffer=nl.shared_hbm)
        c = nl.program_id(0)
        mine = nl.ndarray((n, a.shape[1]), dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=mine, src=a[c * n:(c + 1) * n, :])
        both = nl.ndarray((n, a.shape[1]), dtype, buffer=nl.sbuf)
        nisa.sendrecv_compute(src=mine, dst=both, send_to_rank=1 - c, recv_from_rank=1 - c, reduce_op=reduce_op)
        if c == 0:  # both cores hold the same result: core 0 stores it
            nisa.dma_copy(dst=out, src=both)
        return out

    return k


@pytest.mark.parametrize("op, ref", [(nl.add, np.add), (nl.maximum, np.maximum), (nl.minimum, np.minimum)],
                         ids=["add", "maximum", "minimum"])
def test_sendrecv_compute_reduces_the_two_cores_tiles(op, ref):
    a = np.random.default_rng(5).normal(size=(8, 16)).astype(np.float32)
    got = nki.simulate(exchange_reduced(op, nl.float32)[2])(a)
    np.testing.assert_array_equal(got, ref(a[:4], a[4:]))


def test_sendrecv_compute_rounds_the_sum_to_nearest_even_in_bf16():
    # bf16 holds 1 + k/128 near 1: 1 + 1/256 and 1 + 3/256 are ties, to 1 and to 1 + 2/128.
    a = np.array([[1.0, 1.0], [2.0 ** -8, 3 * 2.0 ** -8]], dtype=np.float32)
    got = nki.simulate(exchange_reduced(nl.add, nl.bfloat16)[2])(a)
    np.testing.assert_array_equal(np.asarray(got, np.float32), [[1.0, 1.015625]])


def test_sendrecv_compute_is_one_dma_engine_instruction_per_core():
    traced = exchange_reduced(nl.add, nl.float32).trace((2,), (A,), {}).ir.instruction_engines()
    assert traced.count(("tensor_tensor", "dma")) == 2, traced


def test_the_program_id_is_a_python_int_per_core():
    seen = []

    @nki.jit
    def rows(a):
        out = nl.ndarray(a.shape, np.float32, buffer=nl.shared_hbm)  # a numpy dtype names the same tensor
        c = nl.program_id(0)
        seen.append((c, nl.num_programs(), nl.program_ndim(), type(c).__name__))
        rows_here = max(a.shape[0] - 3 * c, 0)  # Python arithmetic on the core's index
        t = nl.ndarray((rows_here, a.shape[1]), a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a[3 * c:3 * c + rows_here, :])
        nisa.tensor_scalar(dst=t, data=t, op0=nl.add, operand0=float(c + 1))
        nisa.dma_copy(dst=out[3 * c:3 * c + rows_here, :], src=t)
        return out

    out = nki.simulate(rows[2])(A)
    assert seen == [(0, 2, 1, "int"), (1, 2, 1, "int")]
    assert out.dtype == np.float32
    # core 1 writes rows 3.. after core 0 wrote all rows: its values win there.
    np.testing.assert_array_equal(out, np.concatenate([A[:3] + 1, A[3:] + 2]))


def test_a_barrier_at_one_core_has_nothing_to_wait_for():
    @nki.jit
    def copy(a):
        out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
        t = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a)
        nisa.dma_copy(dst=out, src=t)
        nisa.core_barrier(out, (0,))
        return out

    np.testing.assert_array_equal(nki.simulate(copy)(A), A)


@nki.jit
def sendrecv_alone(a):
    t = nl.ndarray((2, 8), a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a[0:2, :])
    nisa.sendrecv(src=t, dst=t, send_to_rank=1, recv_from_rank=1, pipe_id=0)  # ERR:alone
    return a


@nki.jit
def send_to_self(a):
    t = nl.ndarray((2, 8), a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a[0:2, :])
    c = nl.program_id(0)
    nisa.sendrecv(src=t, dst=t, send_to_rank=c, recv_from_rank=1 - c, pipe_id=0)  # ERR:self
    return a


def filled(shape, a):
    """A shared-HBM output every core writes (zeros)."""
    out = nl.ndarray(shape, a.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=nl.zeros(shape, a.dtype, buffer=nl.sbuf))
    return out


@nki.jit
def barrier_on_core_0_only(a):
    out = filled(a.shape, a)
    if nl.program_id(0) == 0:
        nisa.core_barrier(out, (0, 1))
    return out


@nki.jit
def barrier_of_one_core(a):
    out = filled(a.shape, a)
    nisa.core_barrier(out, (0,))  # ERR:cores
    return out


@nki.jit
def uneven_outputs(a):
    rows = 4 if nl.program_id(0) == 0 else 2
    out = nl.ndarray((rows, 8), a.dtype, buffer=nl.shared_hbm)  # ERR:shared
    nisa.dma_copy(dst=out, src=nl.zeros((rows, 8), a.dtype, buffer=nl.sbuf))
    return out


@nki.jit
def sync_points_of_other_apis(a):
    out = filled(a.shape, a)
    t, u = nl.ndarray((4, 8), a.dtype, buffer=nl.sbuf), nl.ndarray((4, 8), a.dtype, buffer=nl.sbuf)
    nisa.memset(dst=t, value=0.0)
    if nl.program_id(0) == 0:
        nisa.core_barrier(out, (0, 1))
    else:
        nisa.sendrecv(src=t, dst=u, send_to_rank=0, recv_from_rank=0, pipe_id=0)  # ERR:other_api
    return out


@nki.jit
def sendrecv_compute_multiply(a):
    out = filled(a.shape, a)
    t, u = nl.ndarray((4, 8), a.dtype, buffer=nl.sbuf), nl.ndarray((4, 8), a.dtype, buffer=nl.sbuf)
    nisa.memset(dst=t, value=1.0)
    c = nl.program_id(0)
    nisa.sendrecv_compute(src=t, dst=u, send_to_rank=1 - c, recv_from_rank=1 - c, reduce_op=nl.multiply)  # ERR:mul
    return out


@nki.jit
def sendrecv_compute_two_ops(a):
    out = filled(a.shape, a)
    t, u = nl.ndarray((4, 8), a.dtype, buffer=nl.sbuf), nl.ndarray((4, 8), a.dtype, buffer=nl.sbuf)
    nisa.memset(dst=t, value=1.0)
    c = nl.program_id(0)
    op = nl.add if c == 0 else nl.maximum
    nisa.sendrecv_compute(src=t, dst=u, send_to_rank=1 - c, recv_from_rank=1 - c, reduce_op=op)  # ERR:two_ops
    return out


RULES = [
    (sendrecv_alone, None, "alone", "nisa.", "exchanges tiles between the cores of a kernel[2] launch"),
    (sync_points_of_other_apis, 2, "other_api", "nisa.",
     "core 1's synchronisation point #0 is nisa.sendrecv, core 0's is nisa.core_barrier (every core must follow "
     "the same control flow)"),
    (send_to_self, 2, "self", "nisa.", "the ranks are the other core of the launch (0 .. 1, not 0); got 0"),
    (barrier_of_one_core, 2, "cores", "nisa.", "cores names every core of the launch, [0, 1]; got [0]"),
    (uneven_outputs, 2, "shared", "nl.", "core 1 allocates shared HBM tensor #0 unlike core 0"),
    (sendrecv_compute_multiply, 2, "mul", "nisa.",
     "reduce_op is multiply; the DMA engine reduces with nl.add, nl.maximum or nl.minimum"),
    (sendrecv_compute_two_ops, 2, "two_ops", "nisa.",
     "core 0 reduces with add, core 1 with maximum: the pair names one reduce_op"),
]


@pytest.mark.parametrize("kernel, lnc, marker, token, message", RULES, ids=[r[2] for r in RULES])
def test_a_core_rule_is_a_diagnostic_at_the_call(kernel, lnc, marker, token, message):
    e = trace_error(kernel if lnc is None else kernel[lnc].kernel, A, grid=None if lnc is None else (lnc,))
    check_diag(e, M, "err_unsupported_args", message, [(marker, token)])


def test_cores_passing_different_sync_points_is_a_diagnostic():
    e = trace_error(barrier_on_core_0_only, A, grid=(2,))
    assert e.code == "err_unsupported_args"
    assert "core 0 passes 1 synchronisation points (core_barrier, sendrecv) and core 1 0" in e.message


# --- nki.lnc (NKI 0.8) ----------------------------------------------------------------------------


def lnc_exchange(reduce_op, buffer):
    """Each core sends its half of `a` to the other with nki.lnc: reduced when reduce_op is given."""

    @nki.jit
    def k(a):
        n = a.shape[0] // 2
        out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
        c = nl.program_id(0)
        mine = nl.ndarray((n, a.shape[1]), a.dtype, buffer=buffer)
        nisa.dma_copy(dst=mine, src=a[c * n:(c + 1) * n, :])
        got = nl.ndarray((n, a.shape[1]), a.dtype, buffer=buffer)
        if reduce_op is None:
            lnc.sendrecv(src=mine, dst=got, send_to_rank=1 - c, recv_from_rank=1 - c, priority=0)
        else:
            lnc.sendrecv_compute(mine, got, 1 - c, 1 - c, reduce_op, priority=3)
        nisa.dma_copy(dst=out[c * n:(c + 1) * n, :], src=got)
        lnc.core_barrier(out, (0, 1), engine=nisa.engine.vector)
        return out

    return k


@pytest.mark.parametrize("buffer", [nl.sbuf, nl.private_hbm], ids=["sbuf", "private_hbm"])
def test_nki_lnc_exchanges_and_reduces_between_the_two_cores(buffer):
    a = np.random.default_rng(2).normal(size=(8, 16)).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the nki.lnc forms are not deprecated
        if buffer is nl.sbuf:
            np.testing.assert_array_equal(nki.simulate(lnc_exchange(None, buffer)[2])(a),
                                          np.concatenate([a[4:], a[:4]]))
        got = nki.simulate(lnc_exchange(nl.maximum, buffer)[2])(a)
    np.testing.assert_array_equal(got, np.concatenate([np.maximum(a[:4], a[4:])] * 2))


@nki.jit
def lnc_sendrecv_at_lnc1(a):
    t = nl.ndarray((2, 8), a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a[0:2, :])
    lnc.sendrecv(src=t, dst=t, send_to_rank=1, recv_from_rank=1)  # ERR:lnc1
    return a


@nki.jit
def lnc_gpsimd_priority(a):
    t = nl.ndarray((2, 8), a.dtype, buffer=nl.sbuf)
    c = nl.program_id(0)
    lnc.sendrecv(t, t, 1 - c, 1 - c, dma_engine=nisa.dma_engine.gpsimd_dma, priority=1)  # ERR:gpsimd
    return a


@nki.jit
def lnc_priority_4(a):
    t = nl.ndarray((2, 8), a.dtype, buffer=nl.sbuf)
    c = nl.program_id(0)
    lnc.sendrecv(t, t, 1 - c, 1 - c, priority=4)  # ERR:priority4
    return a


@nki.jit
def lnc_compute_shared(a):
    out = filled(a.shape, a)
    c = nl.program_id(0)
    lnc.sendrecv_compute(out, out, 1 - c, 1 - c, nl.add)  # ERR:shared_hbm
    return out


@nki.jit
def lnc_compute_mixed(a):
    p = nl.ndarray((2, 8), a.dtype, buffer=nl.private_hbm)
    t = nl.ndarray((2, 8), a.dtype, buffer=nl.sbuf)
    c = nl.program_id(0)
    lnc.sendrecv_compute(p, t, 1 - c, 1 - c, nl.add)  # ERR:mixed
    return a


@nki.jit
def lnc_compute_multiply(a):
    t = nl.ndarray((2, 8), a.dtype, buffer=nl.sbuf)
    c = nl.program_id(0)
    lnc.sendrecv_compute(t, t, 1 - c, 1 - c, nl.multiply)  # ERR:lnc_mul
    return a


@nki.jit
def lnc_barrier_of_core_0(a):
    out = filled(a.shape, a)
    lnc.core_barrier(out, (0,))  # ERR:lnc_cores
    return out


LNC_RULES = [
    (lnc_sendrecv_at_lnc1, 1, "lnc1", "err_unsupported_args", "runs at LNC=2 only (kernel[2]); the kernel runs at LNC=1"),
    (lnc_gpsimd_priority, 2, "gpsimd", "err_unsupported_args",
     "with dma_engine=gpsimd_dma explicit priorities are rejected; leave priority=None"),
    (lnc_priority_4, 2, "priority4", "err_unsupported_args", "priority is 0 (highest) to 3 (lowest); got 4"),
    (lnc_compute_shared, 2, "shared_hbm", "err_unsupported_memory",
     "Expected operand 'src' of 'lnc.sendrecv_compute' to be in address space 'sbuf or private_hbm', but got a "
     "tile in 'shared_hbm' instead."),
    (lnc_compute_mixed, 2, "mixed", "err_unsupported_args",
     "src and dst are both in SBUF or both in private HBM; src is in private_hbm, dst in sbuf"),
    (lnc_compute_multiply, 2, "lnc_mul", "err_unsupported_args",
     "reduce_op is multiply; the DMA engine reduces with nl.add, nl.maximum or nl.minimum"),
    (lnc_barrier_of_core_0, 1, "lnc_cores", "err_unsupported_args",
     "cores is (0, 1), the two physical cores of an HBM stack; got [0]"),
]


@pytest.mark.parametrize("kernel, lnc_degree, marker, code, message", LNC_RULES, ids=[r[2] for r in LNC_RULES])
def test_an_nki_lnc_rule_is_a_diagnostic_at_the_call(kernel, lnc_degree, marker, code, message):
    e = trace_error(kernel, A, grid=None if lnc_degree == 1 else (lnc_degree,))
    check_diag(e, M, code, message, [(marker, "lnc.")], api=kernel_api(marker))


def kernel_api(marker):
    return {"lnc_cores": "nki.lnc.core_barrier", "shared_hbm": "nki.lnc.sendrecv_compute",
            "mixed": "nki.lnc.sendrecv_compute", "lnc_mul": "nki.lnc.sendrecv_compute"}.get(marker, "nki.lnc.sendrecv")


@nki.jit
def deprecated_forms(a):
    out = filled(a.shape, a)
    t, u = nl.ndarray((4, 8), a.dtype, buffer=nl.sbuf), nl.ndarray((4, 8), a.dtype, buffer=nl.sbuf)
    nisa.memset(dst=t, value=1.0)
    c = nl.program_id(0)
    nisa.sendrecv(src=t, dst=u, send_to_rank=1 - c, recv_from_rank=1 - c, pipe_id=0)  # ERR:dep_sendrecv
    nisa.sendrecv_compute(src=t, dst=u, send_to_rank=1 - c, recv_from_rank=1 - c, reduce_op=nl.add)  # ERR:dep_compute
    nisa.core_barrier(out, (0, 1))  # ERR:dep_barrier
    return out


def test_the_nisa_forms_are_deprecated_at_the_users_line():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        nki.simulate(deprecated_forms[2])(A)
    got = {(w.category, w.filename, w.lineno, str(w.message)) for w in caught}
    want = {(DeprecationWarning, M.path, M.line(marker),
             f"[warn_deprecated_in_nki_version] nisa.{call} is deprecated since nki 0.8: use nki.lnc.{call}{more}")
            for marker, call, more in [("dep_sendrecv", "sendrecv", " (pipe_id is ignored)"),
                                       ("dep_compute", "sendrecv_compute", ""), ("dep_barrier", "core_barrier", "")]}
    assert got == want
