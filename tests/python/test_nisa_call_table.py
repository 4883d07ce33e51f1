"""Every nisa call has its row: an instruction-table row of its own (src/ir/Isa.h
NKIC_OPCODES), or a row of the call table (NKIC_NISA_CALLS) naming the instruction it traces
onto and the engine the ISA reference runs it on. The calls of the call table emit that
instruction on that engine."""
import numpy as np
import pytest

import _nkic
import nki
import nki.isa as nisa
import nki.language as nl
import neuronxcc.nki.isa as legacy_isa
from nki_current_util import loaded, sbuf, stored
from nki_test_util import Markers, check_diag, trace_error

M = Markers(__file__)

OPCODES = {row["name"]: row for row in _nkic.instruction_table()}
CALLS = {name: (emits, engine) for name, emits, engine in _nkic.nisa_calls()}
X = np.random.default_rng(3).uniform(-2, 2, (128, 64)).astype(np.float32)


@pytest.fixture(autouse=True)
def _default_target(monkeypatch):
    monkeypatch.delenv("NEURON_PLATFORM_TARGET_OVERRIDE", raising=False)


def _nisa_calls(module):
    return sorted(n for n in dir(module) if str(getattr(getattr(module, n), "nki_func", "")).startswith("nisa."))


@pytest.mark.parametrize("module", [nisa, legacy_isa], ids=["nki", "neuronxcc"])
def test_every_nisa_call_has_a_row(module):
    missing = [n for n in _nisa_calls(module) if n not in OPCODES and n not in CALLS]
    assert not missing, f"nisa calls without a row in NKIC_OPCODES or NKIC_NISA_CALLS: {missing}"


def test_the_call_table_names_calls_and_rows_that_exist():
    assert set(CALLS) <= set(_nisa_calls(nisa)) | set(_nisa_calls(legacy_isa))
    assert not set(CALLS) & set(OPCODES)  # a call with a row of its own is not repeated
    assert all(emits is None or emits in OPCODES for emits, _ in CALLS.values())


@nki.jit
def k_partition_reduce(a):
    s = sbuf((1, a.shape[1]))
    nisa.tensor_partition_reduce(dst=s, op=nl.add, data=loaded(a))
    return stored(s)


@nki.jit
def k_nc_n_gather(a, idx):
    g = sbuf(idx.shape)
    nisa.nc_n_gather(dst=g, data=loaded(a), indices=loaded(idx))
    return stored(g)


@nki.jit
def k_local_gather(a, idx):
    g = sbuf((a.shape[0], 1, 16, 1))
    nisa.local_gather(dst=g, src_buffer=loaded(a), index=loaded(idx))
    return stored(g)


@nki.jit
def k_activation_reduce(a):
    y, s = sbuf(a.shape), sbuf((a.shape[0], 1))
    nisa.activation_reduce(dst=y, op=nl.exp, data=loaded(a), reduce_op=nl.add, reduce_res=s)
    return stored(y)


@nki.jit
def k_tensor_scalar_reduce(a):
    y, s = sbuf(a.shape), sbuf((a.shape[0], 1))
    nisa.tensor_scalar_reduce(dst=y, data=loaded(a), op0=nl.multiply, operand0=2.0, reduce_op=nl.add, reduce_res=s)
    return stored(y)


@nki.jit
def k_dma_transpose(a):
    t = sbuf((a.shape[1], a.shape[0]))
    nisa.dma_transpose(dst=t, src=a)
    return stored(t)


@nki.jit
def k_reciprocal(a):
    y = sbuf(a.shape)
    nisa.reciprocal(dst=y, data=loaded(a))
    return stored(y)


IDX = np.tile(np.arange(63, -1, -1, dtype=np.int32), (128, 1))
LOCAL_IDX = (np.arange(128 * 1, dtype=np.uint16).reshape(128, 1) % 16)

# call -> (kernel, inputs, the numpy result)
KERNELS = {
    "tensor_partition_reduce": (k_partition_reduce, (X,), X.sum(axis=0, keepdims=True)),
    "nc_n_gather": (k_nc_n_gather, (X, IDX), X[:, ::-1]),
    "local_gather": (k_local_gather, (X, LOCAL_IDX), None),
    "activation_reduce": (k_activation_reduce, (X,), np.exp(X)),
    "tensor_scalar_reduce": (k_tensor_scalar_reduce, (X,), X * 2),
    "dma_transpose": (k_dma_transpose, (X[:64, :32],), X[:64, :32].T),
    "reciprocal": (k_reciprocal, (np.abs(X) + 0.5,), 1 / (np.abs(X) + 0.5)),
}


@pytest.mark.parametrize("call", sorted(KERNELS))
def test_a_call_emits_its_rows_instruction_on_its_engine(call):
    kernel, inputs, want = KERNELS[call]
    emits, engine = CALLS[call]
    traced = kernel.trace(None, inputs, {}).ir.instruction_engines()
    assert (OPCODES[emits]["name"], engine) in traced, (call, traced)
    if want is not None:
        np.testing.assert_allclose(nki.simulate(kernel)(*inputs), want, rtol=1e-5, atol=1e-5)


@nki.jit
def k_nc_n_gather_from_psum(a, idx):
    p = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.psum)
    nisa.tensor_copy(dst=p, src=loaded(a))
    g = sbuf(idx.shape)
    nisa.nc_n_gather(dst=g, data=p, indices=loaded(idx))  # ERR:psum_gather
    return stored(g)


def test_nc_n_gather_on_gpsimd_reads_no_psum():
    e = trace_error(k_nc_n_gather_from_psum, X, IDX)
    check_diag(e, M, "err_unsupported_memory", ["'data'", "psum"], [("psum_gather", "nisa.nc_n_gather")])


@pytest.mark.parametrize("engine, name", [(nisa.engine.unknown, "dve"), (nisa.vector_engine, "dve"),
                                          (nisa.gpsimd_engine, "pool")], ids=["default", "vector", "gpsimd"])
def test_tensor_tensor_runs_on_the_engine_the_call_names(engine, name):
    @nki.jit
    def k(a):
        y = sbuf(a.shape)
        nisa.tensor_tensor(dst=y, data1=loaded(a), data2=loaded(a), op=nl.add, engine=engine)
        return stored(y)

    assert ("tensor_tensor", name) in k.trace(None, (X,), {}).ir.instruction_engines()
    np.testing.assert_array_equal(nki.simulate(k)(X), X + X)
