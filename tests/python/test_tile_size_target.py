"""nl.tile_size reads the target being traced for; outside a trace it holds the default
target's (trn2) values."""
import numpy as np
import pytest
from neuronxcc import nki
import neuronxcc.nki.language as nl

SEEN = {}


def kernel(x):
    SEEN["sbuf"] = nl.tile_size.total_available_sbuf_size
    SEEN["pmax"] = nl.tile_size.pmax
    SEEN["psum_fmax"] = nl.tile_size.psum_fmax
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.load(x))
    return out


@pytest.mark.parametrize("target,sbuf", [("trn1", 180224), ("inf2", 180224), ("trn2", 212984), ("trn3", 245752)])
def test_tile_size_is_the_traced_targets(target, sbuf):
    SEEN.clear()
    x = np.ones((128, 64), np.float32)
    np.testing.assert_array_equal(nki.simulate_kernel(nki.jit(kernel, platform_target=target), x), x)
    assert SEEN == {"sbuf": sbuf, "pmax": 128, "psum_fmax": 512}


def test_outside_a_trace_the_default_targets_values():
    assert nl.tile_size.total_available_sbuf_size == 212984
    assert (nl.tile_size.pmax, nl.tile_size.psum_fmax, nl.tile_size.bn_stats_fmax) == (128, 512, 512)
    assert (nl.tile_size.gemm_stationary_fmax, nl.tile_size.gemm_moving_fmax) == (128, 512)
    assert (nl.tile_size.psum_min_align, nl.tile_size.sbuf_min_align) == (4, 1)
