"""Explicit scheduling of the current API (NKI_CURRENT_API.md §5.5-5.6): the NkiInstruction
each nisa call returns, depends_on, kernel.with_schedule over name= labels and nl.no_reorder.
The edges are IR facts (`after=[#id]`) that the cost model honours; the numbers do not change.
Their misuses are diagnostics at the user's line."""
import warnings

import numpy as np
import pytest

import nki
import nki.isa as nisa
import nki.language as nl
import nkic
from nki_current_util import loaded, sbuf, stored
from nki_test_util import Markers, check_diag, trace_error, trace_ir

M = Markers(__file__)
X = np.random.default_rng(5).uniform(0.5, 2.0, (128, 512)).astype(np.float32)


@pytest.fixture(autouse=True)
def _trn3(monkeypatch):
    monkeypatch.delenv("NEURON_PLATFORM_TARGET_OVERRIDE", raising=False)


@nki.jit
def two_engines(t):
    x = loaded(t)
    a, b, c = sbuf(t.shape), sbuf(t.shape), sbuf(t.shape)
    nisa.activation(dst=a, op=nl.exp, data=x, name="exp")
    nisa.tensor_scalar(dst=b, data=x, op0=nl.add, operand0=1.0, name="plus1")
    nisa.tensor_tensor(dst=c, data1=a, data2=b, op=nl.add)
    return stored(c)


def edges(ir):
    """Each instruction line's operation and its edges: [(op, [#ids it waits for])]."""
    out = []
    for line in ir.splitlines():
        if " = " not in line:
            continue
        op = line.split(" = ", 1)[1].split("[", 1)[0]
        after = line.split("after=[", 1)[1].split("]", 1)[0].split(", ") if "after=[" in line else []
        label = line.strip().split(":", 1)[0] if line.strip().startswith("#") else None
        out.append((label, op, after))
    return out


def test_with_schedule_orders_named_instructions_and_costs_them_in_series():
    scheduled = two_engines.with_schedule([("plus1", "exp")])
    assert scheduled is not two_engines and two_engines.schedule == ()
    got = edges(trace_ir(scheduled, X))
    [(label, _, _)] = [e for e in got if e[1] == "activation"]
    assert [e[2] for e in got if e[1] == "tensor_scalar"] == [[label]]
    assert all(not e[2] for e in edges(trace_ir(two_engines, X)))
    # The list form is the same edge; the numbers do not change.
    assert trace_ir(two_engines.with_schedule([("plus1", ["exp"])]), X) == trace_ir(scheduled, X)
    np.testing.assert_array_equal(nki.simulate(scheduled)(X), nki.simulate(two_engines)(X))
    # The two engines no longer overlap: the prediction grows on every target.
    for target in ("trn1", "trn2", "trn3"):
        assert nkic.profile(scheduled, X, target=target).latency_us > nkic.profile(two_engines, X,
                                                                                   target=target).latency_us


@nki.jit
def chained(t):
    x = loaded(t)
    a, b, c = sbuf(t.shape), sbuf(t.shape), sbuf(t.shape)
    first = nisa.activation(dst=a, op=nl.exp, data=x)
    second = nisa.memset(dst=c, value=2.0)
    third = nisa.tensor_scalar(dst=b, data=x, op0=nl.add, operand0=1.0)
    assert isinstance(first, nisa.NkiInstruction)
    assert third.depends_on(first, second) == third
    third.depends_on(second).depends_on(first)  # an edge given twice is one edge
    nisa.tensor_tensor(dst=c, data1=a, data2=b, op=nl.add)
    return stored(c)


def test_depends_on_returns_its_consumer_and_takes_several_producers():
    got = edges(trace_ir(chained, X))
    labels = {op: label for label, op, _ in got if label}
    assert [e[2] for e in got if e[1] == "tensor_scalar"] == [[labels["activation"], labels["memset"]]]
    np.testing.assert_allclose(nki.simulate(chained)(X), np.exp(X) + X + 1, rtol=1e-6)


def helper(a, x):
    nisa.tensor_scalar(dst=a, data=x, op0=nl.multiply, operand0=2.0)


@nki.jit
def reordered(t):
    x = loaded(t)
    a = sbuf(t.shape)
    with nl.no_reorder():
        for _ in nl.affine_range(2):
            nisa.activation(dst=a, op=nl.exp, data=x)
            helper(a, x)  # dynamically scoped: a called function's instructions are ordered too
    nisa.tensor_scalar(dst=a, data=a, op0=nl.add, operand0=1.0)
    return stored(a)


def test_no_reorder_chains_every_instruction_under_it_across_unrolled_iterations():
    got = edges(trace_ir(reordered, X))
    inside = [e for e in got if e[1] in ("activation", "tensor_scalar")][:4]
    assert [e[1] for e in inside] == ["activation", "tensor_scalar"] * 2
    assert inside[0][2] == [] and all(inside[i][2] == [inside[i - 1][0]] for i in range(1, 4))
    after_block = [e for e in got if e[1] == "tensor_scalar"][-1]
    assert after_block[2] == []
    np.testing.assert_allclose(nki.simulate(reordered)(X), 2 * X + 1, rtol=1e-6)


@nki.jit
def edges_in_a_loop(t):
    x = loaded(t)
    a = sbuf(t.shape)
    before = nisa.memset(dst=a, value=0.0)
    for _ in nl.affine_range(3):
        e = nisa.activation(dst=a, op=nl.exp, data=x)
        nisa.tensor_scalar(dst=x, data=x, op0=nl.add, operand0=1.0).depends_on(e, before)
    return stored(a)


def test_edges_in_a_loop_join_each_iterations_own_instructions():
    got = edges(trace_ir(edges_in_a_loop, X))
    memset = next(label for label, op, _ in got if op == "memset")
    exps = [label for label, op, _ in got if op == "activation"]
    assert len(exps) == 3
    assert [e[2] for e in got if e[1] == "tensor_scalar"] == [[x, memset] for x in exps]


@nki.jit
def edge_out_of_a_runtime_loop(t):
    x, y = loaded(t), sbuf(t.shape)
    trips = nisa.register_alloc(2)
    inner = []
    nl.fori_loop(0, trips, lambda i: inner.append(nisa.tensor_scalar(dst=y, data=x, op0=nl.add, operand0=1.0)))
    last = nisa.tensor_copy(dst=x, src=y)
    last.depends_on(inner[0])  # ERR:leave
    return stored(x)


@nki.jit
def runtime_loop_under_no_reorder(t):
    x, y = loaded(t), sbuf(t.shape)
    trips = nisa.register_alloc(2)
    with nl.no_reorder():
        nl.fori_loop(0, trips, lambda i: nisa.tensor_scalar(dst=y, data=x, op0=nl.add, operand0=1.0))  # ERR:fori
    return stored(y)


@nki.jit
def producer_not_an_instruction(t):
    x, y = loaded(t), sbuf(t.shape)
    nisa.tensor_scalar(dst=y, data=x, op0=nl.add, operand0=1.0).depends_on(x)  # ERR:type
    return stored(y)


def test_an_edge_cannot_leave_a_runtime_loop():
    e = check_diag(trace_error(edge_out_of_a_runtime_loop, X), M, "err_unsupported_args",
                   "unsupported arguments to 'depends_on': the producer runs in a runtime loop (nl.fori_loop, "
                   "nl.while_loop, nl.dynamic_range) that its consumer is outside of: an edge cannot leave a "
                   "runtime loop", [("leave", "last.depends_on")])
    assert e.hint == "make both instructions sit in the same loop, or the producer outside it"


def test_a_runtime_loop_cannot_run_under_no_reorder():
    e = check_diag(trace_error(runtime_loop_under_no_reorder, X), M, "err_unsupported_args",
                   "unsupported arguments to 'nl.no_reorder': a runtime loop (nl.fori_loop, nl.while_loop, "
                   "nl.dynamic_range) cannot run inside it", [("fori", "nl.fori_loop")])
    assert e.hint == "put the no_reorder block inside the loop's body"


def test_depends_on_takes_instructions_only():
    check_diag(trace_error(producer_not_an_instruction, X), M, "err_unexpected_type_of_operand",
               "unexpected type of operand 'producer': got NkiTensor; depends_on takes the NkiInstruction a nisa "
               "call returns", [("type", "nisa.tensor_scalar")])


def test_with_schedule_names_an_unknown_instruction_at_its_call():
    scheduled = two_engines.with_schedule([("plus1", "recip")])  # ERR:unknown
    e = check_diag(trace_error(scheduled, X), M, "err_unsupported_args",
                   "unsupported arguments to 'kernel.with_schedule': no instruction of the kernel is named 'recip'",
                   [("unknown", "two_engines.with_schedule")])
    assert e.hint == "the names given with name=: 'exp', 'plus1'"


@pytest.mark.parametrize("edge", [("plus1",), ("plus1", 3), ("plus1", [])], ids=["one", "number", "empty"])
def test_with_schedule_takes_pairs_of_names(edge):
    with pytest.raises(nkic.NKIError) as info:
        two_engines.with_schedule([edge])  # ERR:pairs
    check_diag(info.value, M, "err_unsupported_args",
               "unsupported arguments to 'kernel.with_schedule': takes a list of (consumer, producer) name pairs, "
               f"the producer a name or a list of names; got {edge!r}", [("pairs", "two_engines.with_schedule")])


@nki.jit
def against_program_order(t):
    x, y = loaded(t), sbuf(t.shape)
    consumer = nisa.tensor_scalar(dst=y, data=x, op0=nl.add, operand0=1.0)
    producer = nisa.activation(dst=x, op=nl.exp, data=x)  # ERR:later
    consumer.depends_on(producer)  # ERR:reverse
    return stored(y)


def test_an_edge_against_program_order_warns_and_is_dropped():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ir = trace_ir(against_program_order, X)
    [w] = [w for w in caught if "warn_dependency_against_program_order" in str(w.message)]
    assert str(w.message).startswith(
        "[warn_dependency_against_program_order] 'nisa.tensor_scalar' is made to wait for 'nisa.activation' "
        f"(line {M.line('later')}), which is traced after it: nkic runs and costs the instructions in program order, so the edge is ignored")
    assert M.same_file(w.filename) and w.lineno == M.line("reverse")
    assert f"(line {M.line('later')})" in str(w.message)
    assert "after=" not in ir


KEPT = []


@nki.jit
def keeps_an_instruction(t):
    x = loaded(t)
    KEPT.append(nisa.tensor_scalar(dst=x, data=x, op0=nl.add, operand0=1.0))
    if len(KEPT) > 1:
        KEPT[-1].depends_on(KEPT[0])  # ERR:stale
    return stored(x)


def test_an_instruction_of_another_trace_is_refused():
    KEPT.clear()
    trace_ir(keeps_an_instruction, X)
    check_diag(trace_error(keeps_an_instruction, X), M, "err_unsupported_args",
               "unsupported arguments to 'depends_on': an NkiInstruction of another kernel's trace",
               [("stale", "KEPT[-1].depends_on")])
