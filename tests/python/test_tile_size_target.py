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


# The current API (NKI 0.4+ names): every documented attribute, per target, read in a kernel.
CURRENT = ("pmax", "psum_bank_fmax", "psum_bank_fmax_bytes", "psum_num_banks", "psum_fmax", "sbuf_size_bytes",
           "sbuf_fmax", "sbuf_fmax_bytes", "total_available_sbuf_size", "gemm_stationary_fmax", "gemm_moving_fmax",
           "bn_stats_fmax", "psum_min_align", "sbuf_min_align")


def current_kernel(x):
    import nki.isa as nisa
    import nki.language as cnl
    SEEN.update((n, getattr(cnl.tile_size, n)) for n in CURRENT)
    out = cnl.ndarray(x.shape, dtype=x.dtype, buffer=cnl.shared_hbm)
    nisa.dma_copy(dst=out, src=x)
    return out


@pytest.mark.parametrize("target,usable,physical", [("trn1", 180224, 192), ("trn2", 212984, 224),
                                                    ("trn3", 245752, 256)])
def test_the_current_apis_tile_size_names_every_documented_attribute(monkeypatch, target, usable, physical):
    import nki as cnki
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", target)
    SEEN.clear()
    x = np.ones((128, 64), np.float32)
    np.testing.assert_array_equal(cnki.simulate(cnki.jit(current_kernel))(x), x)
    assert SEEN == {"pmax": 128, "psum_bank_fmax": 512, "psum_bank_fmax_bytes": 2048, "psum_num_banks": 8,
                    "psum_fmax": 512, "sbuf_size_bytes": 128 * physical * 1024, "sbuf_fmax": usable // 4,
                    "sbuf_fmax_bytes": usable, "total_available_sbuf_size": usable, "gemm_stationary_fmax": 128,
                    "gemm_moving_fmax": 512, "bn_stats_fmax": 512, "psum_min_align": 4, "sbuf_min_align": 1}
    import nki.language as cnl
    # Outside a trace: the target nki.jit would trace for.
    assert (cnl.tile_size.sbuf_fmax_bytes, cnl.tile_size.sbuf_size_bytes) == (usable, 128 * physical * 1024)


@pytest.mark.parametrize("target,banks", [("trn1", 8), ("trn2", 7), ("trn3", 7)])
def test_a_pe_lowered_dma_transpose_reserves_a_psum_bank_from_trn2(monkeypatch, target, banks):
    import nki as cnki
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", target)
    monkeypatch.setenv("NKI_DMA_TRANSPOSE_AS_PE_TRANSPOSE", "true")
    SEEN.clear()
    cnki.simulate(cnki.jit(current_kernel))(np.ones((128, 64), np.float32))
    assert SEEN["psum_num_banks"] == banks


def test_the_legacy_tile_size_keeps_its_eight_names():
    assert not hasattr(nl.tile_size, "sbuf_fmax") and not hasattr(nl.tile_size, "psum_num_banks")
