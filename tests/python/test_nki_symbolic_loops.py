"""Current-API compile-time loops stay one IR loop when their body does not depend on the
iteration, and unroll (with Python's semantics) when it does; either way the outputs
are those of the fully unrolled trace, bit for bit (NKIC_UNROLL_LOOPS=1 forces it)."""
import inspect

import numpy as np
import pytest

import nki
import nki.isa as nisa
import nki.language as nl

RNG = np.random.default_rng(7)


def ir_text(kernel, *args):
    return kernel.trace(None, args, {}).ir.text()


def loops(text):
    return sum(1 for line in text.splitlines() if line.lstrip().startswith("for "))


@nki.jit
def tiled_add(a, b):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(a.shape[1] // 64):
        x = nl.ndarray((128, 64), a.dtype, buffer=nl.sbuf)
        y = nl.ndarray((128, 64), a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=x, src=a[:, i * 64:(i + 1) * 64])
        nisa.dma_copy(dst=y, src=b[:, i * 64:(i + 1) * 64])
        nisa.tensor_tensor(dst=x, data1=x, data2=y, op=nl.add)
        nisa.dma_copy(dst=out[:, i * 64:(i + 1) * 64], src=x)
    return out


@nki.jit
def tiled_matmul(lhs_t, rhs):
    """out[m, n] = sum_k lhs_t[k, m] * rhs[k, n]; the K loop accumulates explicitly."""
    k_dim, m_dim = lhs_t.shape
    n_dim = rhs.shape[1]
    out = nl.ndarray((m_dim, n_dim), nl.float32, buffer=nl.shared_hbm)
    for n in range(n_dim // 128):
        acc = nl.ndarray((m_dim, 128), nl.float32, buffer=nl.psum)
        nisa.memset(dst=acc, value=0.0)
        for k in range(k_dim // 128):
            l_tile = nl.ndarray((128, m_dim), lhs_t.dtype, buffer=nl.sbuf)
            r_tile = nl.ndarray((128, 128), rhs.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=l_tile, src=lhs_t[k * 128:(k + 1) * 128, :])
            nisa.dma_copy(dst=r_tile, src=rhs[k * 128:(k + 1) * 128, n * 128:(n + 1) * 128])
            nisa.nc_matmul(dst=acc, stationary=l_tile, moving=r_tile, accumulate=True)
        res = nl.ndarray((m_dim, 128), nl.float32, buffer=nl.sbuf)
        nisa.tensor_copy(dst=res, src=acc)
        nisa.dma_copy(dst=out[:, n * 128:(n + 1) * 128], src=res)
    return out


def test_an_iteration_independent_body_is_one_ir_loop():
    a, b = RNG.random((128, 512), np.float32), RNG.random((128, 512), np.float32)
    text = ir_text(tiled_add, a, b)
    assert loops(text) == 1 and "for i in sequential_range(0, 8, 1)" in text
    assert text.count("store[dma]") == 1
    assert np.array_equal(nki.simulate(tiled_add)(a, b), a + b)


def test_a_64_tile_matmul_loop_is_one_ir_loop_nested():
    lhs_t, rhs = RNG.random((8192, 128), np.float32), RNG.random((8192, 256), np.float32)
    text = ir_text(tiled_matmul, lhs_t, rhs)
    assert loops(text) == 2 and "sequential_range(0, 64, 1)" in text
    assert text.count("matmul[pe]") == 1
    got = nki.simulate(tiled_matmul)(lhs_t, rhs)
    np.testing.assert_allclose(got, lhs_t.T @ rhs, rtol=1e-4)


def _count_kernel():
    @nki.jit
    def counted(a):
        out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
        count = 0
        for i in range(8):
            t = nl.ndarray((128, 64), a.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=t, src=a[:, i * 64:(i + 1) * 64])
            nisa.dma_copy(dst=out[:, i * 64:(i + 1) * 64], src=t)
            count += 1
        assert count == 8
        seen.append(count)
        return out
    seen = []
    return counted, seen


def test_a_python_counter_counts_every_iteration():
    counted, seen = _count_kernel()
    a = RNG.random((128, 512), np.float32)
    text = ir_text(counted, a)
    assert seen == [8] and loops(text) == 0 and text.count("store[dma]") == 8
    assert np.array_equal(nki.simulate(counted)(a), a)


@nki.jit
def appended(a):
    tiles = []
    for i in nl.affine_range(4):
        t = nl.ndarray((128, 64), a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a[:, i * 64:(i + 1) * 64])
        tiles.append(t)
    acc = nl.ndarray((128, 64), nl.float32, buffer=nl.sbuf)
    nisa.memset(dst=acc, value=0.0)
    for t in tiles:
        nisa.tensor_tensor(dst=acc, data1=acc, data2=t, op=nl.add)
    out = nl.ndarray((128, 64), nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=acc)
    return out


def test_a_list_appended_per_iteration_unrolls():
    a = RNG.random((128, 256), np.float32)
    text = ir_text(appended, a)
    assert loops(text) == 0 and text.count("load[dma]") == 4
    want = a[:, 0:64] + a[:, 64:128] + a[:, 128:192] + a[:, 192:256]
    np.testing.assert_allclose(nki.simulate(appended)(a), want, rtol=1e-6)


@nki.jit
def first_differs(a):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    for i in range(4):
        t = nl.ndarray((128, 64), a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a[:, i * 64:(i + 1) * 64])
        if i == 0:
            nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=2.0)
        nisa.dma_copy(dst=out[:, i * 64:(i + 1) * 64], src=t)
    return out


def test_if_on_the_loop_variable_unrolls():
    a = RNG.random((128, 256), np.float32)
    text = ir_text(first_differs, a)
    assert loops(text) == 0 and text.count("tensor_scalar") == 1
    want = a.copy()
    want[:, :64] *= 2
    assert np.array_equal(nki.simulate(first_differs)(a), want)


@nki.jit
def matmul_first_write(lhs_t, rhs):
    acc = nl.ndarray((128, 128), nl.float32, buffer=nl.psum)
    for k in range(lhs_t.shape[0] // 128):
        l_tile = nl.ndarray((128, 128), lhs_t.dtype, buffer=nl.sbuf)
        r_tile = nl.ndarray((128, 128), rhs.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=l_tile, src=lhs_t[k * 128:(k + 1) * 128, :])
        nisa.dma_copy(dst=r_tile, src=rhs[k * 128:(k + 1) * 128, :])
        nisa.nc_matmul(dst=acc, stationary=l_tile, moving=r_tile)  # accumulate=None
    res = nl.ndarray((128, 128), nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=res, src=acc)
    out = nl.ndarray((128, 128), nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=res)
    return out


def test_matmul_accumulate_none_into_an_outer_tile_unrolls():
    lhs_t, rhs = RNG.random((512, 128), np.float32), RNG.random((512, 128), np.float32)
    text = ir_text(matmul_first_write, lhs_t, rhs)
    assert loops(text) == 0 and text.count("matmul[pe]") == 4
    np.testing.assert_allclose(nki.simulate(matmul_first_write)(lhs_t, rhs), lhs_t.T @ rhs, rtol=1e-4)


@nki.jit
def printing(a):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    for i in range(3):
        print("tile", i)
        t = nl.ndarray((128, 64), a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a[:, i * 64:(i + 1) * 64])
        nisa.dma_copy(dst=out[:, i * 64:(i + 1) * 64], src=t)
    return out


def test_print_runs_per_iteration(capsys):
    a = RNG.random((128, 192), np.float32)
    text = ir_text(printing, a)
    assert capsys.readouterr().out == "tile 0\ntile 1\ntile 2\n"
    assert loops(text) == 0
    assert np.array_equal(nki.simulate(printing)(a), a)


@nki.jit
def late_error(a):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    for i in range(4):
        t = nl.ndarray((128, 64), a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a[:, i * 64:(i + 1) * 64 + 64])
        nisa.dma_copy(dst=out[:, i * 64:(i + 1) * 64], src=t)
    return out


def test_an_error_is_the_unrolled_traces(monkeypatch):
    a = RNG.random((128, 256), np.float32)
    with pytest.raises(Exception) as symbolic:
        ir_text(late_error, a)
    monkeypatch.setenv("NKIC_UNROLL_LOOPS", "1")
    with pytest.raises(Exception) as unrolled:
        ir_text(late_error, a)
    assert type(symbolic.value) is type(unrolled.value) and str(symbolic.value) == str(unrolled.value)
    lines, first = inspect.getsourcelines(late_error.func)
    line = first + next(n for n, text in enumerate(lines) if "+ 64])" in text)
    assert f"{__file__}:{line}:" in str(symbolic.value) and "[err_" in str(symbolic.value)


KERNELS = [(tiled_add, lambda: (RNG.random((128, 512), np.float32), RNG.random((128, 512), np.float32))),
           (tiled_matmul, lambda: (RNG.random((1024, 128), np.float32), RNG.random((1024, 256), np.float32))),
           (appended, lambda: (RNG.random((128, 256), np.float32),)),
           (first_differs, lambda: (RNG.random((128, 256), np.float32),)),
           (matmul_first_write, lambda: (RNG.random((512, 128), np.float32), RNG.random((512, 128), np.float32)))]


@pytest.mark.parametrize("kernel,make", KERNELS, ids=[k.__name__ for k, _ in KERNELS])
def test_symbolic_and_unrolled_traces_agree_bit_for_bit(kernel, make, monkeypatch):
    args = make()
    symbolic = nki.simulate(kernel)(*args)
    monkeypatch.setenv("NKIC_UNROLL_LOOPS", "1")
    unrolled = nki.simulate(kernel)(*args)
    assert np.array_equal(symbolic.view(np.uint8), unrolled.view(np.uint8))
    assert loops(ir_text(kernel, *args)) == 0


@nki.jit
def rolled_back(lhs_t, rhs):
    """The outer loop unrolls at its list's append. In its first iteration the inner one
    unrolls too, at its first write of `acc` (accumulate=True into PSUM nothing wrote
    warns); in the second nothing warns and it stays one IR loop."""
    out = nl.ndarray((128, 512), nl.float32, buffer=nl.shared_hbm)
    acc = nl.ndarray((128, 512), nl.float32, buffer=nl.psum)
    done = []
    for i in range(2):
        for k in range(2):
            l_tile = nl.ndarray((128, 128), lhs_t.dtype, buffer=nl.sbuf)
            r_tile = nl.ndarray((128, 512), rhs.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=l_tile, src=lhs_t[(2 * i + k) * 128:(2 * i + k + 1) * 128, :])
            nisa.dma_copy(dst=r_tile, src=rhs[(2 * i + k) * 128:(2 * i + k + 1) * 128, :])
            nisa.nc_matmul(dst=acc, stationary=l_tile, moving=r_tile, accumulate=True)
        done.append(i)
    res = nl.ndarray((128, 512), nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=res, src=acc)
    nisa.dma_copy(dst=out, src=res)
    return out


def test_a_rolled_back_speculation_leaves_the_trace_the_unrolled_one(monkeypatch):
    # What a discarded body wrote and named is forgotten: the warning for the first write of
    # acc comes once, and each tensor has the name the unrolled trace gives it.
    lhs_t, rhs = RNG.random((512, 128), np.float32), RNG.random((512, 512), np.float32)

    def traced():
        with pytest.warns(UserWarning) as record:
            text = ir_text(rolled_back, lhs_t, rhs)
        tensors = [line.split(":")[0].strip() for line in text.splitlines() if line.lstrip().startswith("tensor ")]
        return text, tensors, [str(w.message) for w in record], nki.simulate(rolled_back)(lhs_t, rhs)

    symbolic, symbolic_tensors, symbolic_warnings, symbolic_out = traced()
    monkeypatch.setenv("NKIC_UNROLL_LOOPS", "1")
    unrolled, unrolled_tensors, unrolled_warnings, unrolled_out = traced()
    assert loops(symbolic) == 1 and symbolic.count("matmul[pe]") == 3 and loops(unrolled) == 0
    assert symbolic_tensors == [t for t in unrolled_tensors if not t.endswith(".3")]
    assert symbolic_tensors[4:] == ["tensor l_tile", "tensor r_tile", "tensor l_tile.1", "tensor r_tile.1",
                                    "tensor l_tile.2", "tensor r_tile.2", "tensor res"]
    assert symbolic_warnings == unrolled_warnings
    assert len(symbolic_warnings) == 1 and "[warn_matmul_accumulate_uninitialized]" in symbolic_warnings[0]
    assert np.array_equal(symbolic_out.view(np.uint8), unrolled_out.view(np.uint8))
    np.testing.assert_allclose(symbolic_out, lhs_t.T @ rhs, rtol=1e-4)
