"""AWS's NKI kernel library's collectives run unchanged through nki.multi_rank_simulate against
numpy: the SBUF-to-SBUF all-gathers (one tile, and tiled over rows), every rank receiving the
ranks' inputs concatenated along the free dim."""
import numpy as np
import pytest

import nki
import nki.language as nl
from nki.collectives import ReplicaGroup
from nki_library_util import SRC, _library, kernel  # noqa: F401  (_library: autouse)

pytestmark = pytest.mark.skipif(SRC is None, reason="no nki-library checkout")


@pytest.mark.parametrize("name, rows, tp, dtype", [("allgather_sb2sb", 128, 4, np.float32),
                                                   ("allgather_sb2sb", 128, 2, nl.bfloat16),
                                                   ("allgather_sb2sb_tiled", 512, 4, np.float32)])
def test_sbuf_to_sbuf_all_gather(name, rows, tp, dtype):
    gather = kernel("experimental.collectives.sb2sb_allgather", name)
    xs = [np.random.default_rng(r).normal(size=(rows, 32)).astype(dtype) for r in range(tp)]
    group = ReplicaGroup([list(range(tp))])
    outs = nki.multi_rank_simulate(gather, world_size=tp, per_rank_inputs=[((x, group, tp), {}) for x in xs])
    want = np.concatenate([np.asarray(x, np.float32) for x in xs], axis=1)
    assert len(outs) == tp
    for out in outs:
        np.testing.assert_array_equal(np.asarray(out, np.float32), want)
