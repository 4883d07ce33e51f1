"""Explicit scheduling (NKI_CURRENT_API.md §5.5-5.6): the NkiInstruction every nisa call
returns, its depends_on edges, the name= labels kernel.with_schedule refers to, and
nl.no_reorder. The trace keeps the labels and the builder the edges; this layer only
checks with_schedule's argument."""
import contextlib

from nkic._core import core

# The handle every nisa call returns (its depends_on adds edges); the dispatcher makes it.
NkiInstruction = core.NkiInstruction


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
    """Traces body(), then adds with_schedule's edges between the instructions labelled with
    name= (reported at `where`)."""
    result = body()
    if edges:
        core.schedule_labels([(c, list(p)) for c, p in edges], where)
    return result


@contextlib.contextmanager
def no_reorder():
    core.begin_no_reorder()
    try:
        yield
    finally:
        core.end_no_reorder()
