"""Instruction rules of the current API (NKI_CURRENT_API.md §6, §9): square/relu as
tensor_scalar op0 (v4+), tensor_reduce's trailing axes, range_select's fill, nl.rsqrt on
PSUM, hwdge dma_transpose (v3+), DMA priority= (v4+, 0-3), bf16-dst nc_matmul (v4+),
nisa.NkiValidationError and the accumulate=True warning: code, message and user line."""
import warnings

import numpy as np
import pytest

import nki
import nki.isa as nisa
import nki.language as nl
import nkic
from nki_current_util import hbm, loaded, sbuf, stored
from nki_test_util import Markers, check_diag, trace_error

M = Markers(__file__)
X = np.random.default_rng(0).uniform(-2, 2, (128, 64)).astype(np.float32)


@pytest.fixture(autouse=True)
def _trn3(monkeypatch):
    # NeuronCore-v4 instructions: trn3, which the default target (trn2) is not.
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn3")


def scalar_op(op0, operand0=0.0, op1=None, operand1=None):
    @nki.jit
    def kernel(a):
        x = loaded(a)
        y = sbuf(a.shape)
        nisa.tensor_scalar(dst=y, data=x, op0=op0, operand0=operand0, op1=op1, operand1=operand1)  # ERR:ts
        return stored(y)
    return kernel


@pytest.mark.parametrize("op0,operand0,expect", [
    (nl.square, 0.0, X * X), (nl.square, None, X * X), (nl.relu, 0, np.maximum(X, 0)),
    (nl.relu, None, np.maximum(X, 0))])
def test_square_and_relu_are_tensor_scalar_op0_on_neuroncore_v4(op0, operand0, expect):
    np.testing.assert_allclose(nki.simulate(scalar_op(op0, operand0))(X), expect, rtol=1e-6)


def test_square_op0_fuses_with_op1():
    out = nki.simulate(scalar_op(nl.square, 0.0, nl.add, 1.0))(X)
    np.testing.assert_allclose(out, X * X + 1, rtol=1e-6)


@nki.jit
def square_reduce(a):
    x, y, r = loaded(a), sbuf(a.shape), sbuf((128, 1))
    nisa.tensor_scalar_reduce(dst=y, data=x, op0=nl.square, operand0=None, reduce_op=nl.add, reduce_res=r)
    return stored(r)


def test_square_op0_of_tensor_scalar_reduce():
    np.testing.assert_allclose(nki.simulate(square_reduce)(X)[:, 0], (X * X).sum(axis=1), rtol=1e-5)


SCALAR_RULES = [
    ("gate_square", scalar_op(nl.square, 0.0), "trn2", "err_min_arch_support_for_inst",
     "'nisa.tensor_scalar(op0=square)' is available on NeuronCore-v4 and newer only; target 'trn2' is NeuronCore-v3"),
    ("gate_relu_none", scalar_op(nl.relu, None), "trn1", "err_min_arch_support_for_inst",
     "'nisa.tensor_scalar(op0=relu)' is available on NeuronCore-v4 and newer only; target 'trn1' is NeuronCore-v2"),
    ("operand", scalar_op(nl.square, 2.0), None, "err_unsupported_args",
     "unsupported arguments to 'nisa.tensor_scalar': op0 square reads the data alone: operand0 must be None or 0"),
    ("abs_operand", scalar_op(nl.abs, 1.0), None, "err_unsupported_args",
     "op0 abs reads the data alone: operand0 must be None or 0"),
    ("op1", scalar_op(nl.add, 1.0, nl.relu, None), None, "err_instruction_unsupported_op",
     "unsupported operator 'relu as op1 (square and relu take op0 only)'"),
]


@pytest.mark.parametrize("kernel,target,code,message", [r[1:] for r in SCALAR_RULES], ids=[r[0] for r in SCALAR_RULES])
def test_tensor_scalar_one_operand_op0_rules(monkeypatch, kernel, target, code, message):
    if target:
        monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", target)
    check_diag(trace_error(kernel, X), M, code, message, [("ts", "nisa.")])


X3 = np.random.default_rng(1).random((128, 4, 8), dtype=np.float32)


def reduce_over(axis, out_shape):
    @nki.jit
    def kernel(a):
        x, y = loaded(a), sbuf(out_shape)
        nisa.tensor_reduce(dst=y, op=nl.add, data=x, axis=axis)  # ERR:reduce
        return stored(y)
    return kernel


@pytest.mark.parametrize("axis,shape,expect", [(2, (128, 4), X3.sum(axis=2)), (-1, (128, 4), X3.sum(axis=2)),
                                               ((1, 2), (128, 1), X3.sum(axis=(1, 2))[:, None])])
def test_tensor_reduce_over_trailing_axes(axis, shape, expect):
    np.testing.assert_allclose(nki.simulate(reduce_over(axis, shape))(X3), expect, rtol=1e-5)


@pytest.mark.parametrize("axis", [1, (1,)])
def test_tensor_reduce_rejects_a_non_trailing_axis(axis):
    check_diag(trace_error(reduce_over(axis, (128, 8)), X3), M, "err_unsupported_reduce_axis",
               "axis (1) of a rank-3 tile: nisa.tensor_reduce reduces the last contiguous free dims, ending at axis 2",
               [("reduce", "nisa.")])


def range_select_with(fill):
    @nki.jit
    def kernel(a):
        x, y, lo, hi = loaded(a), sbuf(a.shape), sbuf((128, 1)), sbuf((128, 1))
        nisa.memset(dst=lo, value=8.0)
        nisa.memset(dst=hi, value=16.0)
        nisa.range_select(dst=y, on_true_tile=x, comp_op0=nl.greater_equal, comp_op1=nl.less, bound0=lo,  # ERR:rsel
                          bound1=hi, on_false_value=fill)
        return stored(y)
    return kernel


@pytest.mark.parametrize("fill", [-3.4028235e38, nl.fp32.min])
def test_range_select_fills_with_fp32_min(fill):
    col = np.arange(64)
    out = nki.simulate(range_select_with(fill))(X)
    np.testing.assert_array_equal(out, np.where((col >= 8) & (col < 16), X, np.float32(-3.4028235e38)))


def test_range_select_rejects_another_fill():
    check_diag(trace_error(range_select_with(0.0), X), M, "err_unsupported_args",
               "unsupported arguments to 'nisa.range_select': on_false_value is 0; it must be FP32_MIN "
               "(-3.4028235e+38, nl.fp32.min)", [("rsel", "nisa.")])


def rsqrt_of(buffer):
    @nki.jit
    def kernel(a):
        x = loaded(a)
        t = nl.ndarray(a.shape, nl.float32, buffer=buffer)
        nisa.tensor_copy(dst=t, src=x)
        return stored(nl.rsqrt(t))  # ERR:rsqrt
    return kernel


def test_rsqrt_reads_sbuf():
    a = np.abs(X) + 0.5
    np.testing.assert_allclose(nki.simulate(rsqrt_of(nl.sbuf))(a), 1 / np.sqrt(a), rtol=1e-5)


def test_rsqrt_rejects_psum():
    check_diag(trace_error(rsqrt_of(nl.psum), X), M, "err_unsupported_memory",
               "Expected operand 'x' of 'rsqrt' to be in address space 'sbuf', but got a tile in 'psum' instead.",
               [("rsqrt", "nl.")])


XT = np.random.default_rng(2).random((16, 128), dtype=np.float32).astype(np.float16)


@nki.jit
def hwdge_transpose(a):
    y = sbuf((128, 16), nl.float16)
    nisa.dma_transpose(dst=y, src=a, dge_mode=nisa.dge_mode.hwdge)  # ERR:hwdge_t
    return stored(y)


def test_hwdge_dma_transpose_needs_neuroncore_v3(monkeypatch):
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn1")
    check_diag(trace_error(hwdge_transpose, XT), M, "err_min_arch_support_for_hwdge",
               "dge_mode=hwdge in 'nisa.dma_transpose' needs hardware DGE, which target 'trn1' (NeuronCore-v2) does "
               "not have", [("hwdge_t", "nisa.")])
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn2")
    np.testing.assert_array_equal(nki.simulate(hwdge_transpose)(XT), XT.T)


def dma_with_priority(priority, transpose=False):
    @nki.jit
    def kernel(a):
        y = sbuf(a.shape[::-1] if transpose else a.shape, a.dtype)
        if transpose:
            nisa.dma_transpose(dst=y, src=a, priority=priority)  # ERR:prio_t
        else:
            nisa.dma_copy(dst=y, src=a, priority=priority)  # ERR:prio
        return stored(y)
    return kernel


def test_priority_levels_on_neuroncore_v4():
    np.testing.assert_array_equal(nki.simulate(dma_with_priority(0))(XT), XT)
    np.testing.assert_array_equal(nki.simulate(dma_with_priority(3, True))(XT), XT.T)


PRIORITY = [
    ("gate", dma_with_priority(1), "prio", "trn2", "err_min_arch_support_for_inst",
     "'nisa.dma_copy(priority=)' is available on NeuronCore-v4 and newer only; target 'trn2' is NeuronCore-v3"),
    ("gate_t", dma_with_priority(0, True), "prio_t", "trn1", "err_min_arch_support_for_inst",
     "'nisa.dma_transpose(priority=)' is available on NeuronCore-v4 and newer only"),
    ("range", dma_with_priority(5), "prio", None, "err_unsupported_args",
     "unsupported arguments to 'nisa.dma_copy': priority 5 is not a DMA priority level 0-3 (lower is served first)"),
    ("range_t", dma_with_priority(-1, True), "prio_t", None, "err_unsupported_args",
     "unsupported arguments to 'nisa.dma_transpose': priority -1 is not a DMA priority level 0-3"),
]


@pytest.mark.parametrize("kernel,marker,target,code,message", [p[1:] for p in PRIORITY], ids=[p[0] for p in PRIORITY])
def test_priority_rules(monkeypatch, kernel, marker, target, code, message):
    if target:
        monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", target)
    check_diag(trace_error(kernel, XT), M, code, message, [(marker, "nisa.")])


A = np.random.default_rng(3).random((128, 128), dtype=np.float32).astype(np.float16)


def matmul_into(dtype, transpose=False):
    @nki.jit
    def kernel(a):
        x = loaded(a, dtype if transpose else None)
        p = nl.ndarray(a.shape, dtype, buffer=nl.psum)
        nisa.nc_matmul(dst=p, stationary=x, moving=x, is_transpose=transpose)  # ERR:mm
        y = sbuf(a.shape, dtype)
        nisa.tensor_copy(dst=y, src=p)
        return stored(y)
    return kernel


@pytest.mark.parametrize("target", ["trn1", "trn2"])
def test_bf16_dst_matmul_needs_neuroncore_v4(monkeypatch, target):
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", target)
    check_diag(trace_error(matmul_into(nl.bfloat16), A), M, "err_min_arch_support_for_inst",
               f"'nisa.nc_matmul(dst=bfloat16)' is available on NeuronCore-v4 and newer only; target '{target}'",
               [("mm", "nisa.")])


def test_bf16_dst_matmul_on_neuroncore_v4():
    out = nki.simulate(matmul_into(nl.bfloat16))(A)
    ref = A.astype(np.float32).T @ A.astype(np.float32)
    np.testing.assert_allclose(out.astype(np.float32), ref, rtol=1e-2)


def test_a_tensor_engine_transpose_into_bf16_psum_is_not_gated(monkeypatch):
    """The gate is the matmul's accumulating dst: a transpose writes its data's dtype from v3."""
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn2")
    matmul_into(nl.bfloat16, transpose=True).trace(None, (A,), {})


def test_a_current_kernels_diagnostic_is_a_validation_error():
    with pytest.raises(nisa.NkiValidationError) as info:
        range_select_with(0.0).trace(None, (X,), {})
    e = info.value
    assert isinstance(e, nkic.NKITypeError) and isinstance(e, TypeError)
    assert type(e).__name__ == "NKITypeError"
    check_diag(e, M, "err_unsupported_args", "on_false_value is 0", [("rsel", "nisa.")])


def test_a_legacy_kernels_diagnostic_is_not_a_validation_error():
    from neuronxcc import nki as legacy
    import neuronxcc.nki.language as lnl

    def k(x):
        out = lnl.ndarray((256, 64), dtype=x.dtype, buffer=lnl.sbuf)
        return out
    e = trace_error(legacy.jit(k), X)
    assert not isinstance(e, nisa.NkiValidationError)


def accumulate_kernel(first):
    @nki.jit
    def kernel(a):
        x = loaded(a)
        p = nl.ndarray(a.shape, nl.float32, buffer=nl.psum)
        if first == "memset":
            nisa.memset(dst=p, value=0.0)
        elif first == "matmul":
            nisa.nc_matmul(dst=p, stationary=x, moving=x, accumulate=False)
        nisa.nc_matmul(dst=p, stationary=x, moving=x, accumulate=True)  # ERR:acc
        y = sbuf(a.shape)
        nisa.tensor_copy(dst=y, src=p)
        return stored(y)
    return kernel


def test_accumulating_onto_unwritten_psum_warns():
    with pytest.warns(UserWarning) as record:
        accumulate_kernel(None).trace(None, (A,), {})
    hits = [w for w in record if "warn_matmul_accumulate_uninitialized" in str(w.message)]
    assert hits, [str(w.message) for w in record]
    assert str(hits[0].message) == ("[warn_matmul_accumulate_uninitialized] nc_matmul(accumulate=True) adds onto "
                                    "PSUM tensor 'p', which nothing wrote before: the hardware's result is undefined")
    assert M.same_file(hits[0].filename) and hits[0].lineno == M.line("acc")


@pytest.mark.parametrize("first", ["memset", "matmul"])
def test_accumulating_onto_written_psum_is_quiet(first):
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        accumulate_kernel(first).trace(None, (A,), {})
    assert not [w for w in record if "accumulate_uninitialized" in str(w.message)]
