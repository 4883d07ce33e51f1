"""nki.collectives (ncc): collectives need several NeuronCores; nkic simulates one
logical core, so each call says so (the official simulator has none either)."""
from . import language as nl
from ._api import unavailable as _unavailable


class ReplicaGroup(nl.NKIObject):
    def __init__(self, replica_groups=()):
        self.replica_groups = replica_groups


for _name in ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "all_to_all_v", "all_gather_v",
              "collective_permute", "collective_permute_implicit", "collective_permute_implicit_reduce",
              "collective_permute_implicit_current_processing_rank_id", "rank_id"):
    globals()[_name] = _unavailable("ncc." + _name, "collectives are not simulated by nkic")
del _name
