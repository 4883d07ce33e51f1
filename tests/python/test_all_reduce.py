"""nl.all_reduce across SPMD programs: groups by program_axes, several
collectives in a row and inside loops, prints once, runtime-bounded loops rejected."""
import inspect

import numpy as np
import pytest

from neuronxcc import nki
import neuronxcc.nki.language as nl
import nkic


def test_sum_then_max_over_one_axis():
    @nki.jit
    def k(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        pid = nl.program_id(0)
        t = nl.load(x[pid])
        s = nl.all_reduce(t, op=np.add, program_axes=[0])
        nl.store(out[pid], value=nl.all_reduce(nl.multiply(s, t), op=np.max, program_axes=0))
        return out

    x = np.random.default_rng(0).random((4, 128, 64), np.float32)
    ref = (x.sum(0) * x).max(0)
    assert np.allclose(nki.simulate_kernel(k[4], x), np.broadcast_to(ref, x.shape), rtol=1e-6)


@pytest.mark.parametrize("axes", [[0], [1], [0, 1]])
def test_groups_follow_program_axes(axes):
    @nki.jit
    def k(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        i, j = nl.program_id(0), nl.program_id(1)
        nl.store(out[i, j], value=nl.all_reduce(nl.load(x[i, j]), op=np.add, program_axes=axes))
        return out

    x = np.random.default_rng(1).integers(-8, 8, (2, 3, 128, 8)).astype(np.float32)
    ref = np.broadcast_to(x.sum(axis=tuple(axes), keepdims=True), x.shape)
    assert np.array_equal(nki.simulate_kernel(k[2, 3], x), ref)


def test_all_reduce_in_a_sequential_loop_feeds_the_next_iteration(capsys):
    @nki.jit
    def k(x):
        out = nl.ndarray(x.shape[1:], dtype=x.dtype, buffer=nl.shared_hbm)
        pid = nl.program_id(0)
        acc = nl.zeros((128, 4), dtype=nl.float32)
        for step in nl.sequential_range(3):
            acc[...] = nl.all_reduce(nl.add(acc, nl.load(x[pid])), op=np.add, program_axes=[0])
        nl.device_print("acc", acc[0:1, 0:1])
        nl.store(out, value=acc)
        return out

    x = np.random.default_rng(2).integers(0, 4, (2, 128, 4)).astype(np.float32)
    acc = np.zeros((128, 4), np.float32)
    for _ in range(3):
        acc = 2 * acc + x.sum(0)
    assert np.array_equal(nki.simulate_kernel(k[2], x), acc)
    assert capsys.readouterr().out.count("acc [") == 2  # one line per program, from the final pass


def test_all_reduce_under_a_runtime_bound_is_rejected():
    @nki.jit
    def k(x, n):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        t = nl.load(x)
        for _ in nl.sequential_range(nl.load(n[0:1, 0:1])):
            t = nl.all_reduce(t, op=np.add, program_axes=[0])
        nl.store(out, value=t)
        return out

    with pytest.raises(nkic.NKIError) as info:
        nki.simulate_kernel(k[2], np.ones((128, 4), np.float32), np.ones((1, 1), np.int32))
    text = str(info.value)
    assert "[err_dynamic_control_flow_not_supported] dynamic control-flow depending on tensor value is not " \
           "supported: the condition is the trip count of an enclosing loop, read from a tensor (nl.all_reduce " \
           "needs every program to reach it the same number of times)" in text
    assert "(in 'nl.all_reduce')" in text
    lines, first = inspect.getsourcelines(test_all_reduce_under_a_runtime_bound_is_rejected)
    line = first + next(i for i, ln in enumerate(lines) if "t = nl.all_reduce(t" in ln)
    assert f"test_all_reduce.py:{line}:" in text


def test_trace_prints_the_collective_with_op_and_axes():
    @nki.jit
    def k(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        i, j = nl.program_id(0), nl.program_id(1)
        nl.store(out[i, j], value=nl.all_reduce(nl.load(x[i, j]), op=np.max, program_axes=(0, 1)))
        return out

    text = k.trace((2, 2), (np.zeros((2, 2, 128, 4), np.float32),), {}).ir.text(False)
    assert "all_reduce[pool](" in text and ", 0, 1; maximum) iter=[128, 4]" in text


def test_nan_operands_settle():
    @nki.jit
    def k(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        i = nl.program_id(0)
        nl.store(out[i], value=nl.all_reduce(nl.load(x[i]), op=np.add, program_axes=[0]))
        return out

    x = np.ones((2, 128, 4), np.float32)
    x[1, 5, 2] = np.nan
    out = nki.simulate_kernel(k[2], x)
    assert np.isnan(out[:, 5, 2]).all()
    out[:, 5, 2] = 2.0
    assert np.array_equal(out, np.full_like(x, 2.0))


def test_program_axes_and_masks_that_cannot_work_are_diagnosed():
    def k(x, axes, masked):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        pid = nl.program_id(0)
        t = nl.load(x[pid])
        nl.store(out[pid], value=nl.all_reduce(t, op=np.add, program_axes=axes,
                                               mask=(pid == 0) if masked else None))
        return out

    x = np.ones((2, 128, 64), np.float32)
    with pytest.raises(nkic.NKIError) as info:
        nki.jit(k)[2](x, [1], False)
    assert info.value.code == "err_program_id_axis_out_of_bounds"
    assert info.value.message == "program_id axis 1 is out of bounds for a launch grid of 1 dimension(s)"
    with pytest.raises(nkic.NKIError) as info:
        nki.jit(k)[2](x, [0], True)
    assert info.value.code == "err_unsupported_expression_in_mask"
    assert "nl.all_reduce's mask cannot depend on nl.program_id" in info.value.message
    with pytest.raises(nkic.NKIError) as info:
        nki.jit(k)[2][2](x, [0], False)
    assert info.value.code == "err_unsupported_args" and "the launch grid is given once" in info.value.message
