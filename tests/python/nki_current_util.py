"""Tile helpers for the current API's instruction tests (`import nki`)."""
import nki
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


@nki.jit
def quantize_e4m3fn(src):
    """src [P, F] -> its float8_e4m3fn_x4 codes [P, F/4] and their uint8 block scales."""
    p, f = src.shape
    q = sbuf((p, f // 4), nl.float8_e4m3fn_x4)
    s = sbuf((p, f // 4), nl.uint8)
    nisa.memset(dst=s, value=0)
    nisa.quantize_mx(dst=q, src=loaded(src), dst_scale=s)
    return stored(q), stored(s)
