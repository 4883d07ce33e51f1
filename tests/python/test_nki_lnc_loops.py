"""kernel[2] with core_barrier and sendrecv inside device loops (nl.fori_loop, nl.while_loop) and
compile-time ones (nl.sequential_range): every core passes the same synchronisation points per
iteration, against numpy; cores that would not (a loop counted differently, a sync point in one
core's loop only) are err_core_sync_mismatch at the loop's or the call's line, never a hang."""
import numpy as np
import pytest

import nki
import nkic
import nki.isa as nisa
import nki.language as nl
import nki.lnc as lnc
from nki_test_util import Markers, check_diag, trace_error

M = Markers(__file__)
A = np.random.default_rng(5).normal(size=(4, 8)).astype(np.float32)


@pytest.fixture(autouse=True)
def _trn2(monkeypatch):
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn2")


def running_sums(a, trips):
    """numpy: each core's half of `a` plus the other's, `trips` times over."""
    x, y = a[:2], a[2:]
    for _ in range(trips):
        x, y = x + y, y + x
    return np.concatenate([x, y])


def exchanging(loop):
    """A kernel whose `loop(c, trip)` runs trip() on each core c: each trip, each core receives the
    other core's running sum (nki.lnc.sendrecv), adds it to its own, and both meet at a barrier."""

    @nki.jit
    def k(a, trips):
        n = a.shape[0] // 2
        out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
        c = nl.program_id(0)
        acc = nl.ndarray((n, a.shape[1]), a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=acc, src=a[c * n:(c + 1) * n, :])
        got = nl.ndarray((n, a.shape[1]), a.dtype, buffer=nl.sbuf)
        bound = nl.ndarray((1, 1), nl.int32, buffer=nl.sbuf)
        nisa.dma_copy(dst=bound, src=trips[c:c + 1, :])

        def trip(*_):
            lnc.sendrecv(src=acc, dst=got, send_to_rank=1 - c, recv_from_rank=1 - c)
            nisa.tensor_tensor(dst=acc, data1=acc, data2=got, op=nl.add)
            lnc.core_barrier(out, (0, 1))

        loop(c, bound, trip)
        nisa.dma_copy(dst=out[c * n:(c + 1) * n, :], src=acc)
        return out

    return k


def fori_static(c, bound, trip):
    nl.fori_loop(0, 3, trip)


def fori_runtime(c, bound, trip):
    nl.fori_loop(0, nisa.scalar_load(bound), trip)  # ERR:fori_runtime


def sequential(c, bound, trip):
    for i in nl.sequential_range(3):
        trip(i)


def while_counting_down(c, bound, trip):
    def body(left):
        trip()
        nisa.tensor_scalar(dst=bound, data=bound, op0=nl.subtract, operand0=1)
        return nisa.scalar_load(bound)

    nl.while_loop(nisa.scalar_load(bound), body)  # ERR:while


def trips(*per_core):
    return np.array(per_core, np.int32).reshape(-1, 1)


@pytest.mark.parametrize("loop", [fori_static, fori_runtime, sequential, while_counting_down],
                         ids=["fori_loop", "fori_loop_runtime_bound", "sequential_range", "while_loop"])
def test_cores_exchange_in_every_trip_of_a_loop(loop):
    out = nki.simulate(exchanging(loop)[2])(A, trips(3, 3))
    np.testing.assert_allclose(out, running_sums(A, 3), rtol=1e-6)


@nki.jit
def halves_swapped_per_trip(a, trips):
    """nki 0.6: a register-bounded nl.dynamic_range whose trips swap the cores' halves (nisa.sendrecv)
    and add 1 after a barrier."""
    n = a.shape[0] // 2
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    c = nl.program_id(0)
    t = nl.ndarray((n, a.shape[1]), a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a[c * n:(c + 1) * n, :])
    bound = nl.ndarray((1, 1), nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=bound, src=trips[c:c + 1, :])
    reg = nisa.register_alloc()
    nisa.register_load(reg, bound)
    got = nl.ndarray((n, a.shape[1]), a.dtype, buffer=nl.sbuf)
    for i in nl.dynamic_range(reg):
        nisa.sendrecv(src=t, dst=got, send_to_rank=1 - c, recv_from_rank=1 - c, pipe_id=0)
        nisa.core_barrier(out, (0, 1))
        nisa.tensor_scalar(dst=t, data=got, op0=nl.add, operand0=1.0)
    nisa.dma_copy(dst=out[c * n:(c + 1) * n, :], src=t)
    return out


def test_cores_exchange_in_every_trip_of_a_dynamic_range(monkeypatch):
    monkeypatch.setenv("NKIC_NKI_VERSION", "0.6")
    want = A
    for _ in range(3):
        want = np.concatenate([want[2:], want[:2]]) + np.float32(1)
    np.testing.assert_array_equal(nki.simulate(halves_swapped_per_trip[2])(A, trips(3, 3)), want)


def doubling(device_loop):
    """Each core doubles its half four times per trip, then waits for the other, three trips."""

    @nki.jit
    def k(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        c, n = nl.program_id(0), a.shape[0] // 2
        t = nl.ndarray((n, a.shape[1]), dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a[c * n:(c + 1) * n, :])

        def trip(*_):
            for _ in range(4):
                nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=2.0)
            lnc.core_barrier(out, (0, 1))

        if device_loop:
            nl.fori_loop(0, 3, trip)
        else:
            for i in nl.sequential_range(3):
                trip(i)
        nisa.dma_copy(dst=out[c * n:(c + 1) * n, :], src=t)
        return out

    return k


def test_a_device_loop_the_cores_synchronise_in_costs_as_its_unrolled_trips():
    # Each core's statements of a trip run on its own engines, the cores meeting at the barrier:
    # the two cores' work overlaps as in the unrolled loop (not one core's after the other's).
    a = np.ones((128, 2048), np.float32)
    loop = nkic.profile(doubling(True)[2], a, target="trn2")
    unrolled = nkic.profile(doubling(False)[2], a, target="trn2")
    assert loop.engines["dve"].instructions == unrolled.engines["dve"].instructions == 24
    assert loop.latency_us == pytest.approx(unrolled.latency_us, rel=1e-3)
    np.testing.assert_array_equal(nki.simulate(doubling(True)[2])(a), np.full(a.shape, 2.0 ** 12, np.float32))


@pytest.mark.parametrize("loop, marker, how", [
    (fori_runtime, "fori_runtime", "core 0 runs it 2 time(s), core 1 3"),
    (while_counting_down, "while", "after trip 2 core 0 leaves it and core 1 repeats"),
], ids=["fori_loop", "while_loop"])
def test_cores_running_a_loop_a_different_number_of_times_is_a_runtime_error(loop, marker, how):
    with pytest.raises(RuntimeError) as info:
        nki.simulate(exchanging(loop)[2])(A, trips(2, 3))
    check_diag(info.value, M, "err_core_sync_mismatch",
               ["the cores synchronise (core_barrier, sendrecv) in this loop but " + how,
                "every core must pass the same synchronisation points, or one waits for the other forever"],
               [(marker, "nl.")])


@nki.jit
def counted_by_core(a):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=a)
    nl.fori_loop(0, 2 + nl.program_id(0), lambda i: lnc.core_barrier(out, (0, 1)))  # ERR:counted
    return out


@nki.jit
def bound_known_on_core_0_only(a, trips):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=a)
    bound = nl.ndarray((1, 1), nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=bound, src=trips[0:1, :])
    upper = 2 if nl.program_id(0) == 0 else nisa.scalar_load(bound)
    nl.fori_loop(0, upper, lambda i: lnc.core_barrier(out, (0, 1)))  # ERR:known
    return out


@nki.jit
def barrier_on_core_1_only(a):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=a)
    c = nl.program_id(0)

    def body(i):
        if c == 1:
            lnc.core_barrier(out, (0, 1))  # ERR:core_1_only

    nl.fori_loop(0, 2, body)  # ERR:core_1_only_loop
    return out


@nki.jit
def loop_on_core_0_only(a):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=a)
    if nl.program_id(0) == 0:
        nl.fori_loop(0, 2, lambda i: lnc.core_barrier(out, (0, 1)))  # ERR:core_0_only
    return out


@nki.jit
def barriers_per_trip_differ(a):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=a)
    c = nl.program_id(0)

    def body(i):
        for _ in range(1 + c):
            lnc.core_barrier(out, (0, 1))

    nl.fori_loop(0, 2, body)  # ERR:per_trip
    return out


@pytest.mark.parametrize("kernel, marker, token, how", [
    (counted_by_core, "counted", "nl.", "core 0 counts range(0, 2, 1), core 1 range(0, 3, 1)"),
    (bound_known_on_core_0_only, "known", "nl.",
     "core 1's bound is read at run time and the other's is known when traced"),
    (barrier_on_core_1_only, "core_1_only", "lnc.", "core 1 synchronises in it and core 0 does not"),
    (loop_on_core_0_only, "core_0_only", "nl.", "core 1 does not run it"),
    (barriers_per_trip_differ, "per_trip", "nl.", "core 0 passes 1 synchronisation point(s) in it, core 1 2"),
], ids=["counted", "known", "core_1_only", "core_0_only", "per_trip"])
def test_cores_parting_in_a_loop_is_a_diagnostic_at_the_users_line(kernel, marker, token, how):
    e = trace_error(kernel[2].kernel, A, *([trips(2, 2)] if kernel is bound_known_on_core_0_only else []), grid=(2,))
    notes = [("core_1_only_loop", "nl.", "body")] if marker == "core_1_only" else []
    check_diag(e, M, "err_core_sync_mismatch", "the cores synchronise (core_barrier, sendrecv) in this loop but " + how,
               [(marker, token)], notes)
