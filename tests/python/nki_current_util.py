"""Tile helpers for the current API's instruction tests (`import nki`)."""
import nki.isa as nisa
import nki.language as nl


def sbuf(shape, dtype=nl.float32):
    return nl.ndarray(shape, dtype, buffer=nl.sbuf)


def hbm(shape, dtype=nl.float32):
    return nl.ndarray(shape, dtype, buffer=nl.shared_hbm)


def loaded(a, dtype=None):
    t = sbuf(a.shape, dtype or a.dtype)
    nisa.dma_copy(dst=t, src=a)
    return t


def stored(t, dtype=None):
    o = hbm(t.shape, dtype or t.dtype)
    nisa.dma_copy(dst=o, src=t)
    return o
