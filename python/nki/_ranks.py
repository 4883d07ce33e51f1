"""nki.multi_rank_simulate (NKI_07_08_API.md §7.2): world_size ranks of one kernel in this process,
one specialization for all, meeting at their collectives in the simulator (sim/Rendezvous.h);
and nki.execute / nki.multi_rank_execute, which need a NeuronDevice (§7.3)."""
import inspect
from collections.abc import Mapping, Sequence

import numpy as np

from nkic._core import core
from nkic import _sim_checks
from nkic._kernel import Launch, _user_traceback, simulate_traced_ranks
from ._kernel import Kernel, jit

_API = "nki.multi_rank_simulate"


def _rank_inputs(per_rank_inputs, world_size):
    """Rank r's (args, kwargs): a sequence in rank order, or a mapping with exactly the keys 0 .. world_size-1."""
    if isinstance(per_rank_inputs, Mapping):
        keys = sorted(per_rank_inputs, key=repr)
        if set(per_rank_inputs) != set(range(world_size)):
            core.raise_unsupported_args(_API, f"per_rank_inputs maps exactly the ranks 0 .. {world_size - 1}; got "
                                        f"the keys {keys}")
        entries = [per_rank_inputs[r] for r in range(world_size)]
    elif isinstance(per_rank_inputs, Sequence) and not isinstance(per_rank_inputs, (str, bytes)):
        entries = list(per_rank_inputs)
        if len(entries) != world_size:
            core.raise_unsupported_args(_API, f"per_rank_inputs gives {len(entries)} rank(s) for world_size="
                                        f"{world_size}")
    else:
        core.raise_unsupported_args(_API, f"per_rank_inputs is a sequence or a mapping of rank -> (args, kwargs); "
                                    f"got {type(per_rank_inputs).__name__}")
    ranks = []
    for r, entry in enumerate(entries):
        if not (isinstance(entry, (tuple, list)) and len(entry) == 2 and isinstance(entry[0], (tuple, list))
                and isinstance(entry[1], Mapping)):
            core.raise_unsupported_args(_API, f"rank {r}'s inputs are an (args tuple, kwargs dict) pair; got "
                                        f"{type(entry).__name__}")
        ranks.append((tuple(entry[0]), dict(entry[1])))
    return ranks


def _describe(value):
    """What one specialization fixes about an argument: a tensor's dtype and shape, any other value itself."""
    if isinstance(value, np.ndarray):
        return f"a {value.dtype} tensor of shape {list(value.shape)}"
    if isinstance(value, (tuple, list)) and any(isinstance(v, np.ndarray) for v in value):
        return f"{type(value).__name__}({', '.join(_describe(v) for v in value)})"
    if callable(value) and hasattr(value, "__qualname__"):  # an op such as nl.add, by name
        return getattr(value, "nki_func", None) or f"{value.__module__}.{value.__qualname__}"
    return repr(value)


def _arguments(kernel, args, kwargs):
    try:
        bound = inspect.signature(kernel.func).bind(*args, **kwargs)
    except TypeError as e:
        core.raise_unsupported_args(kernel.__name__, str(e))
    bound.apply_defaults()
    return [(name, _describe(value)) for name, value in bound.arguments.items()]


def multi_rank_simulate(kernel, *, world_size, per_rank_inputs):
    """Runs world_size ranks of `kernel` (a jit kernel or a plain function) on the CPU simulator, rank
    r on per_rank_inputs[r] = (args, kwargs); returns the ranks' results in rank order. The ranks
    share one specialization: tensors of one shape and dtype, every other argument equal."""
    core.check_versioned_form(_API)
    grid = None
    if isinstance(kernel, Launch):  # kernel[lnc]: each rank a logical NeuronCore of lnc physical cores
        kernel, grid = kernel.kernel, kernel.grid
    if not isinstance(kernel, Kernel):
        kernel = jit(kernel)
    world = core.int_arg(world_size, "world_size", _API)
    if world < 1:
        core.raise_unsupported_args(_API, f"world_size is at least 1; got {world}")
    ranks = _rank_inputs(per_rank_inputs, world)
    core.check_uniform_arguments([_arguments(kernel, args, kwargs) for args, kwargs in ranks])
    check_uninitialized, check_races = _sim_checks.resolve(_API, None, None)
    kernel.simulation = True
    traced = kernel.trace(grid, *ranks[0])
    signature = inspect.signature(kernel.func)
    arrays = [traced.arrays(signature.bind(*args, **kwargs).arguments) for args, kwargs in ranks]
    try:
        return simulate_traced_ranks(traced, arrays, check_uninitialized, check_races)
    except core.NKIError as e:
        raise e.with_traceback(_user_traceback(e.__traceback__)) from None


def execute(kernel, *args, **kwargs):
    """Runs the kernel on a NeuronDevice; there is none here."""
    core.raise_no_neuron_device("nki.execute", "nki.simulate(kernel)(*args) to run it on the CPU simulator")


def multi_rank_execute(kernel, *, world_size, per_rank_inputs):
    """Runs world_size ranks of the kernel on NeuronDevices; there are none here."""
    core.raise_no_neuron_device("nki.multi_rank_execute", "nki.multi_rank_simulate(kernel, world_size=..., "
                                "per_rank_inputs=...) to run the ranks on the CPU simulator")
