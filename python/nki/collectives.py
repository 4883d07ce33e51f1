"""nki.collectives (ncc): collectives need several NeuronCores; nkic simulates one
logical core, so each call says so (the official simulator has none either)."""
from nkic._core import core
from . import language as nl


class ReplicaGroup(nl.NKIObject):
    def __init__(self, replica_groups=()):
        self.replica_groups = replica_groups


def _unavailable(name):
    def refuse(*args, **kwargs):
        core.raise_unsupported_args(name, "collectives are not simulated by nkic")
    refuse.nki_func = name
    return refuse


for _name in ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "all_to_all_v", "all_gather_v",
              "collective_permute", "collective_permute_implicit", "collective_permute_implicit_reduce",
              "collective_permute_implicit_current_processing_rank_id", "rank_id"):
    globals()[_name] = _unavailable("ncc." + _name)
del _name
