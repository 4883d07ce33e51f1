"""kernel[n] of the current API (NKI_CURRENT_API.md §8.1, §6.9): the body is traced once per
physical core with a compile-time program id, into one instruction stream that the core cuts
at each core's nisa.core_barrier / nisa.sendrecv and orders segment by segment
(codegen/Cores.h, which also keeps the cores' shared-HBM tensors and synchronisation points)."""
from nkic._core import core


def active():
    """(cores, the core being traced) under kernel[n], None otherwise."""
    return core.lnc_active()


def trace_per_core(n, body):
    """Calls body() once per core; the result is core 0's (outputs are shared tensors)."""
    results = []
    for c in range(n):
        core.lnc_begin_core(c, n)
        results.append(body())
    core.lnc_finish()
    return results[0]
