"""Explicit scheduling (NKI_CURRENT_API.md §5.5-5.6): the NkiInstruction every nisa call
returns, its depends_on edges, the name= labels kernel.with_schedule refers to, and
nl.no_reorder. The builder keeps the edges and checks them; this layer only names them."""
import contextlib
import threading

from nkic._core import core

_state = threading.local()


class NkiInstruction:
    """The instructions one nisa call traced: ids [first, end) of the trace `_trace`."""
    __slots__ = ("_ids", "_trace")

    def __init__(self, first, end):
        self._ids, self._trace = (first, end), getattr(_state, "trace", None)

    def depends_on(self, *producers):
        """This instruction runs after every producer has completed; returns self."""
        for p in producers:
            if not isinstance(p, NkiInstruction):
                core.raise_unexpected_operand("producer", f"{type(p).__name__}; depends_on takes the "
                                              "NkiInstruction a nisa call returns")
        if any(i._trace is not getattr(_state, "trace", None) for i in (self,) + producers):
            core.raise_unsupported_args("depends_on", "an NkiInstruction of another kernel's trace; wire "
                                        "instructions of the kernel being traced")
        core.add_dependencies(self._ids, [p._ids for p in producers], None)
        return self

    def __repr__(self):
        return f"<NkiInstruction {self._ids[0]}..{self._ids[1] - 1}>"


def traced(call, name):
    """Runs a nisa call; its result, or the NkiInstruction of what it emitted, labelled `name`."""
    first = core.instruction_mark()
    result = call()
    if result is not None or first < 0:
        return result
    handle = NkiInstruction(first, core.instruction_mark())
    names = getattr(_state, "names", None)
    if name is not None and names is not None:
        names.setdefault(str(name), []).append(handle)
    return handle


def check_edges(edges):
    """kernel.with_schedule's argument: (consumer, producer or [producers]) pairs of names."""
    out = []
    for edge in edges if isinstance(edges, (list, tuple)) else [edges]:
        ok = isinstance(edge, (tuple, list)) and len(edge) == 2 and isinstance(edge[0], str)
        producers = [edge[1]] if ok and isinstance(edge[1], str) else []
        if ok and isinstance(edge[1], (tuple, list)):
            producers = list(edge[1])
        if not ok or not producers or not all(isinstance(p, str) for p in producers):
            core.raise_unsupported_args("kernel.with_schedule", f"takes a list of (consumer, producer) name pairs, "
                                        f"the producer a name or a list of names; got {edge!r}")
        out.append((edge[0], tuple(producers)))
    return tuple(out)


def run_scheduled(body, edges, where):
    """Traces body() collecting name= labels, then adds with_schedule's edges at `where`."""
    saved = getattr(_state, "names", None), getattr(_state, "trace", None)
    _state.names = names = {}
    _state.trace = object()  # this trace's identity, which its NkiInstructions carry
    try:
        result = body()
        for consumer, producers in edges:
            for label in (consumer,) + producers:
                if label not in names:
                    known = ", ".join(repr(n) for n in names) or "none"
                    core.raise_unsupported_args_at("kernel.with_schedule", f"no instruction of the kernel is named "
                                                   f"'{label}'", f"the names given with name=: {known}", where)
            for c in names[consumer]:
                core.add_dependencies(c._ids, [p._ids for label in producers for p in names[label]], where)
        return result
    finally:
        _state.names, _state.trace = saved


@contextlib.contextmanager
def no_reorder():
    core.begin_no_reorder()
    try:
        yield
    finally:
        core.end_no_reorder()
