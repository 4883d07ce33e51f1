"""Seed 000, item 6: the trace context's state and its lifecycle.

_nkic.flags() seen from a dont_trace helper called by a kernel: has_collectives
is False (no collective op traced), in_exception_block is True inside a `try`
body of the kernel and False outside it, multi_physical_cores is True for a
launch grid spanning several NeuronCores (kernel[nl.nc(2), 2],
nl.spmd_dim(nl.nc(2), 2)) and False for plain grids. The global context is
thread-local: two threads tracing two kernels at once produce exactly the IR
they produce one after the other; after teardown nl.* APIs raise
err_nki_api_outside_of_nki_kernel again."""
import threading

import numpy as np
import pytest

import _nkic
import nkic
from neuronxcc import nki
import neuronxcc.nki.language as nl

from nki_test_util import f32, simulate

FLAGS = []


@nki.dont_trace
def snapshot(tag):
    FLAGS.append((tag, dict(_nkic.flags())))
    return 0


def flags(tag):
    hits = [f for t, f in FLAGS if t == tag]
    assert len(hits) == 1, (tag, FLAGS)
    return hits[0]


@pytest.fixture(autouse=True)
def _clear():
    FLAGS.clear()
    yield
    FLAGS.clear()


@nki.dont_trace
def fail_concretely():
    raise KeyError("handled by the kernel")


def helper_in_try(t):
    snapshot("helper in try")
    return nl.exp(t)


def k_flags(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    snapshot("before")
    t = nl.load(a)
    try:
        snapshot("try")
        u = helper_in_try(t)
        try:
            snapshot("inner try")
        finally:
            snapshot("inner finally")
        snapshot("after inner try")
        nl.store(out, value=u)
    except ValueError:
        snapshot("except")
    snapshot("after try")
    try:
        fail_concretely()
    except KeyError:
        snapshot("handler")
    snapshot("end")
    return out


def k_grid(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    snapshot("grid")
    nl.store(out, value=nl.load(a))
    return out


def test_has_collectives_and_exception_block():
    a = f32()
    np.testing.assert_allclose(simulate(k_flags, a), np.exp(a), rtol=1e-5)
    for tag in ("before", "try", "helper in try", "inner try", "after inner try", "after try", "end"):
        assert flags(tag)["has_collectives"] is False, tag
    assert flags("before")["in_exception_block"] is False
    assert flags("try")["in_exception_block"] is True
    assert flags("helper in try")["in_exception_block"] is True
    assert flags("inner try")["in_exception_block"] is True
    # Leaving the inner try restores the outer try's state.
    assert flags("after inner try")["in_exception_block"] is True
    assert flags("after try")["in_exception_block"] is False
    # An exception leaving a try body restores the state too.
    assert flags("handler")["in_exception_block"] is False
    assert flags("end")["in_exception_block"] is False
    assert [t for t, _ in FLAGS if t == "except"] == []


GRIDS = {
    "no grid": (None, False),
    "plain 1-d": ((4,), False),
    "plain 2-d": ((2, 2), False),
    "nl.nc(2), 2": ((nl.nc(2), 2), True),
    "nl.spmd_dim(nl.nc(2), 2)": ((nl.spmd_dim(nl.nc(2), 2),), True),
    "nl.nc(1)": ((nl.nc(1), 2), False),
}


@pytest.mark.parametrize("name", list(GRIDS))
def test_multi_physical_cores(name):
    grid, expected = GRIDS[name]
    kernel = nki.jit(k_grid)
    kernel.trace(grid, (f32(),), {})
    assert flags("grid")["multi_physical_cores"] is expected
    assert flags("grid")["has_collectives"] is False


def test_multi_physical_cores_through_launch_syntax():
    kernel = nki.jit(k_grid)
    a = f32()
    out = kernel[nl.nc(2), 2](a)
    np.testing.assert_allclose(out, a)
    assert flags("grid")["multi_physical_cores"] is True
    FLAGS.clear()
    nki.simulate_kernel(kernel[nl.spmd_dim(nl.nc(2), 2)], a)
    assert flags("grid")["multi_physical_cores"] is True
    FLAGS.clear()
    kernel[2, 2](a)
    assert flags("grid")["multi_physical_cores"] is False


# ---------------------------------------------------------------- thread-local context

BARRIER = {}


@nki.dont_trace
def rendezvous(tag):
    barrier = BARRIER.get("barrier")
    if barrier is not None:
        barrier.wait(timeout=20)
    return 0


def exp_rows(t):
    return nl.exp(t)


def k_thread_a(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    rendezvous("a1")
    u = exp_rows(t)
    for i in nl.affine_range(2):
        rendezvous("a2")
        v = nl.multiply(u, 2.0)
        nl.store(out, value=v)
    rendezvous("a3")
    return out


def k_thread_b(x, y):
    out = nl.ndarray((128, 1), dtype=x.dtype, buffer=nl.shared_hbm)
    s = nl.load(x)
    rendezvous("b1")
    w = nl.add(s, nl.load(y))
    rendezvous("b2")
    r = nl.sum(exp_rows(w), axis=1, keepdims=True)
    if x.shape[1] == 256:
        rendezvous("b3")
        nl.store(out, value=r)
    return out


def _trace_text(kernel, args):
    return kernel.trace(None, args, {}).ir.text()


def test_two_threads_trace_two_kernels_at_once():
    a = f32()
    x = f32((128, 256), seed=1)
    y = f32((128, 256), seed=2)
    ka, kb = nki.jit(k_thread_a), nki.jit(k_thread_b)
    BARRIER.pop("barrier", None)
    sequential = (_trace_text(ka, (a,)), _trace_text(kb, (x, y)))

    # Each thread waits at each rendezvous for the other: the traces interleave.
    BARRIER["barrier"] = threading.Barrier(2)
    results, errors = {}, []

    def run(name, kernel, args):
        try:
            results[name] = _trace_text(kernel, args)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append((name, e))
            BARRIER["barrier"].abort()

    threads = [threading.Thread(target=run, args=("a", ka, (a,))),
               threading.Thread(target=run, args=("b", kb, (x, y)))]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=30)
    finally:
        BARRIER.pop("barrier", None)
    assert not errors, errors
    assert all(not t.is_alive() for t in threads)
    assert (results["a"], results["b"]) == sequential
    # Both traces are torn down: the main thread has no context.
    assert not _nkic.trace_active()


def test_context_of_one_thread_is_invisible_to_another():
    seen = {}
    inside = threading.Event()
    release = threading.Event()

    @nki.dont_trace
    def hold():
        inside.set()
        release.wait(timeout=20)
        return 0

    def kern(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        hold()
        nl.store(out, value=nl.load(a))
        return out

    t = threading.Thread(target=lambda: nki.jit(kern).trace(None, (f32(),), {}))
    t.start()
    try:
        assert inside.wait(timeout=20)
        seen["active"] = _nkic.trace_active()
        with pytest.raises(nkic.NKIError) as info:
            nl.load(f32())
        seen["code"] = info.value.code
    finally:
        release.set()
        t.join(timeout=20)
    assert seen == {"active": False, "code": "err_nki_api_outside_of_nki_kernel"}


def test_context_is_cleared_after_a_trace_and_after_a_failed_trace():
    def bad(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        t = nl.load(a)
        if t:
            pass
        return out

    nki.jit(k_grid).trace(None, (f32(),), {})
    assert not _nkic.trace_active()
    with pytest.raises(nkic.NKIError):
        nki.jit(bad).trace(None, (f32(),), {})
    assert not _nkic.trace_active()
    with pytest.raises(nkic.NKIError) as info:
        nl.exp(f32())
    assert info.value.code == "err_nki_api_outside_of_nki_kernel"
    assert "'nl.exp'" in info.value.message


def test_diagnostics_outside_traced_code_point_at_the_callers_line():
    # No kernel frame exists: the innermost frame outside nkic and the stdlib is the user's.
    import inspect
    line = inspect.currentframe().f_lineno + 1
    with pytest.raises(nkic.NKIError) as info: nl.zeros((128, 64), dtype=nl.float32)  # noqa: E701
    assert info.value.code == "err_nki_api_outside_of_nki_kernel"
    assert info.value.file == __file__ and info.value.line == line
    line = inspect.currentframe().f_lineno + 1
    with pytest.raises(nkic.NKIError) as info: nki.jit(k_grid, platform_target="trn4")(f32())  # noqa: E701
    assert info.value.code == "err_incorrect_target_type" and info.value.line == line
    line = inspect.currentframe().f_lineno + 1
    with pytest.raises(nkic.NKIError) as info: nki.jit(k_grid)(np.ones((128, 512), np.int64))  # noqa: E701
    assert info.value.code == "err_unsupported_dtype" and info.value.line == line
    assert info.value.message == "unsupported dtype 'int64' of the kernel argument 'a'"


def test_a_launch_grid_of_numpy_integers():
    @nki.jit
    def rows(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        i = nl.program_id(0)
        nl.store(out[i * 64:(i + 1) * 64, :], value=nl.load(a[i * 64:(i + 1) * 64, :]))
        return out
    a = f32((128, 64))
    np.testing.assert_array_equal(rows[np.int64(2)](a), a)
    np.testing.assert_array_equal(rows[np.int32(2), 1](a), a)


@pytest.mark.parametrize("target,cores,limit", [("trn1", 2, 1), ("inf2", 2, 1), ("trn2", 3, 2)])
def test_a_grid_over_more_cores_than_the_target_has(target, cores, limit):
    import inspect
    kernel = nki.jit(k_grid, platform_target=target)
    line = inspect.currentframe().f_lineno + 1
    with pytest.raises(nkic.NKIError) as info: kernel[nl.spmd_dim(nl.nc(cores))](f32())  # noqa: E701
    e = info.value
    assert e.code == "err_multi_cores_spmd_not_supported" and e.line == line and e.file == __file__
    assert e.message == (f"a launch-grid dim over {cores} physical NeuronCores (nl.nc({cores})) is not supported on "
                         f"target '{target}': its logical NeuronCore spans {limit} physical core(s)")
    assert not _nkic.trace_active()
