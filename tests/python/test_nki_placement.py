"""Manual placement, nl.ndarray(..., address=) of the current nki API: two placed tensors
may share bytes of a partition only when their uses do not overlap in the program
(err_address_overlap, at the later allocation with a note at the other)."""
import numpy as np
import pytest

import nki
import nki.isa as nisa
import nki.language as nl
from nki_test_util import Markers, check_diag, trace_error

M = Markers(__file__)
X = np.ones((128, 512), np.float32)


def finish(t):
    out = nl.ndarray(t.shape, t.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=t)
    return out


@nki.jit
def both_live(x):
    a = nl.ndarray((128, 512), nl.float32, buffer=nl.sbuf, address=(0, 0))  # ERR:first
    b = nl.ndarray((64, 512), nl.float32, buffer=nl.sbuf, address=(64, 1024))  # ERR:second
    nisa.dma_copy(dst=a, src=x)
    nisa.dma_copy(dst=b, src=x[0:64, :])
    nisa.tensor_tensor(dst=a, data1=a, data2=a, op=nl.add)
    return finish(a)


@nki.jit
def psum_banks(x):
    p = nl.ndarray((128, 512), nl.float32, buffer=nl.psum, address=(0, 2 * 2048))  # ERR:bank_a
    q = nl.ndarray((128, 1024), nl.float32, buffer=nl.psum, address=(0, 1 * 2048))  # ERR:bank_b
    nisa.memset(dst=p, value=0.0)
    nisa.memset(dst=q, value=1.0)
    s = nl.ndarray((128, 512), nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=s, src=q[:, 0:512])
    nisa.tensor_tensor(dst=s, data1=p, data2=s, op=nl.add)
    return finish(s)


@nki.jit
def in_a_loop(x):
    acc = nl.ndarray((128, 512), nl.float32, buffer=nl.sbuf, address=(0, 0))  # ERR:loop_a
    nisa.memset(dst=acc, value=0.0)

    def body(i):
        t = nl.ndarray((128, 512), nl.float32, buffer=nl.sbuf, address=(0, 2048 - 4))  # ERR:loop_t
        nisa.dma_copy(dst=t, src=x)
        nisa.tensor_tensor(dst=acc, data1=acc, data2=t, op=nl.add)

    nl.fori_loop(0, 2, body)
    return finish(acc)


CASES = [
    (both_live, "second", "first", "address= of 'b' overlaps 'a' (partitions 64..127, bytes 1024..2047 of sbuf)"),
    (psum_banks, "bank_b", "bank_a", "address= of 'q' overlaps 'p' (partitions 0..127, bytes 4096..6143 of psum)"),
    (in_a_loop, "loop_t", "loop_a", "address= of 't' overlaps 'acc' (partitions 0..127, bytes 2044..2047 of sbuf)"),
]


@pytest.mark.parametrize("kernel, at, other, message", CASES, ids=[c[1] for c in CASES])
def test_overlapping_placements_in_use_together(kernel, at, other, message):
    e = trace_error(kernel, X)
    check_diag(e, M, "err_address_overlap", [message, "while both are in use"], [(at, "nl.")],
               notes=[(other, "nl.", message.split("overlaps '")[1].split("'")[0])])


@nki.jit
def reused_after_last_use(x):
    # b takes a's bytes once a is done: the uses do not overlap, as a manual allocator reuses memory.
    a = nl.ndarray((128, 512), nl.float32, buffer=nl.sbuf, address=(0, 0))
    nisa.dma_copy(dst=a, src=x)
    first = finish(a)
    b = nl.ndarray((128, 512), nl.float32, buffer=nl.sbuf, address=(0, 0))
    nisa.dma_copy(dst=b, src=x)
    nisa.tensor_tensor(dst=b, data1=b, data2=b, op=nl.add)
    nisa.dma_copy(dst=first, src=b)
    return first


def test_a_placement_reused_after_the_last_use_is_accepted():
    np.testing.assert_array_equal(nki.simulate(reused_after_last_use)(X), 2 * X)


@nki.jit
def per_core_placement(x):
    # Both cores place `a` at the same address, live across the barrier: each core has its own SBUF.
    pid = nl.program_id(0)
    out = nl.ndarray((2, 128, 512), nl.float32, buffer=nl.shared_hbm)
    a = nl.ndarray((128, 512), nl.float32, buffer=nl.sbuf, address=(0, 0))
    nisa.dma_copy(dst=a, src=x)
    nisa.core_barrier(out, (0, 1))
    nisa.tensor_scalar(dst=a, data=a, op0=nl.add, operand0=float(pid))
    nisa.dma_copy(dst=out[pid], src=a)
    return out


def test_cores_place_into_their_own_sbuf():
    out = nki.simulate(per_core_placement[2])(X)
    np.testing.assert_array_equal(out, np.stack([X, X + 1]))
