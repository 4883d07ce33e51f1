"""kernel[n] of the current API (NKI_CURRENT_API.md §8.1, §6.9): the body is traced once per
physical core with a compile-time program id, into one instruction stream that the core cuts
at each core's nisa.core_barrier / nisa.sendrecv and orders segment by segment
(codegen/Cores.h). Shared-HBM tensors a core allocates are core 0's: every core follows the
same control flow, so its k-th shared allocation is core 0's k-th."""
import threading

from nkic._core import core
from nkic import _dtypes

_state = threading.local()


class _Cores:
    def __init__(self, n):
        self.n, self.core = n, 0
        self.shared = []      # core 0's shared-HBM allocations, in order
        self.allocated = 0    # how many the current core has made
        self.syncs = []       # per sync point: [(core, api, record)] of the cores that reached it
        self.passed = 0       # sync points the current core has passed


def active():
    return getattr(_state, "cores", None)


def trace_per_core(n, body):
    """Calls body() once per core; the result is core 0's (outputs are shared tensors)."""
    cores = _state.cores = _Cores(n)
    try:
        results = []
        for c in range(n):
            cores.core, cores.allocated, cores.passed = c, 0, 0
            core.lnc_begin_core(c)
            results.append(body())
        core.lnc_finish()
        return results[0]
    finally:
        _state.cores = None


def shared_tensor(make, shape, dtype, api):
    """A shared-HBM allocation: made by core 0, core 0's at the same position for the others."""
    cores = active()
    if cores is None:
        return make()
    k, cores.allocated = cores.allocated, cores.allocated + 1
    if cores.core == 0:
        cores.shared.append(make())
        return cores.shared[-1]
    if k >= len(cores.shared) or tuple(cores.shared[k].shape) != tuple(shape) or \
            core.tensor_info(cores.shared[k])[1] != _dtypes.dtype_name(dtype):
        core.raise_unsupported_args(api, f"core {cores.core} allocates shared HBM tensor #{k} unlike core 0 "
                                    "(every core must follow the same control flow)")
    return cores.shared[k]


def sync(api, record=None):
    """A synchronisation point of the current core; returns every core's record of it once the
    last core reaches it (an exchange is emitted then), None before."""
    cores = active()
    core.lnc_sync(api)
    s, cores.passed = cores.passed, cores.passed + 1
    if s == len(cores.syncs):
        cores.syncs.append([])
    point = cores.syncs[s]
    if point and point[0][1] != api:
        core.raise_unsupported_args(api, f"core {cores.core}'s synchronisation point #{s} is {api}, core 0's is "
                                    f"{point[0][1]} (every core must follow the same control flow)")
    point.append((cores.core, api, record))
    return point if cores.core == cores.n - 1 else None
