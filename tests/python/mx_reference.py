"""A numpy reference of the OCP Microscaling (mx) formats, shared by the mx tests: the
lane formats' code values, nkic's quantize_mx (block scale twice the OCP sample scale from
NKI 0.5, the OCP sample scale before; lanes rounded to nearest even and saturated), packing and
dequantization."""
import numpy as np


def _minifloat(e, m, has_nan):
    """Value of every code of a sign/e/m format with bias 2^(e-1)-1."""
    bias = (1 << (e - 1)) - 1
    vals = []
    for c in range(1 << (1 + e + m)):
        mag = c & ((1 << (e + m)) - 1)
        ex, man = mag >> m, mag & ((1 << m) - 1)
        v = man * 2.0 ** (1 - bias - m) if ex == 0 else (1 + man / 2 ** m) * 2.0 ** (ex - bias)
        if has_nan and mag == (1 << (e + m)) - 1:
            v = np.nan
        elif not has_nan and e == 5 and ex == 31:  # e5m2: IEEE inf / NaN
            v = np.inf if man == 0 else np.nan
        vals.append(-v if c >> (e + m) else v)
    return np.array(vals)


FORMATS = {  # dtype name -> (code values, bits per lane, largest exponent)
    "float8_e4m3fn_x4": (_minifloat(4, 3, True), 8, 8),
    "float8_e5m2_x4": (_minifloat(5, 2, False), 8, 15),
    "float4_e2m1fn_x4": (_minifloat(2, 1, False), 4, 2),
}


def encode(name, x):
    """Round to nearest code, ties to the even code, saturating."""
    vals, bits, _ = FORMATS[name]
    pos = [c for c in range(1 << (bits - 1)) if np.isfinite(vals[c])]
    pos.sort(key=lambda c: vals[c])
    pv = vals[pos]
    out = np.empty(x.shape, np.int64)
    for i, v in np.ndenumerate(x):
        a = abs(v)
        d = np.abs(pv - a)
        best = np.flatnonzero(d == d.min())
        c = pos[best[0]] if len(best) == 1 else [pos[b] for b in best if pos[b] % 2 == 0][0]
        out[i] = c | ((1 << (bits - 1)) if np.signbit(v) else 0)
    return out


def quantize_ref(name, src, twice=True):
    """(codes [P, F], scales [P//8, F//4]) of quantize_mx on src [P, F]; `twice`: the block scale
    is twice the OCP sample scale (NKI 0.5 on), else the OCP sample scale (before)."""
    p, f = src.shape
    blocks = np.abs(src.astype(np.float64)).reshape(p // 8, 8, f // 4, 4).max(axis=(1, 3))
    with np.errstate(divide="ignore"):
        e = np.floor(np.log2(blocks))
    s = np.where(blocks == 0, 0, np.clip(e - FORMATS[name][2] + int(twice) + 127, 0, 254)).astype(np.int64)
    scaled = src.astype(np.float64) / np.repeat(np.repeat(2.0 ** (s - 127), 8, 0), 4, 1)
    return encode(name, scaled), s


def pack(name, codes):
    """[P, 4F] lane codes -> [P, F] packed words (lane j in byte / nibble j)."""
    bits = FORMATS[name][1]
    c = codes.reshape(codes.shape[0], -1, 4).astype(np.uint32)
    words = sum(c[..., j] << (bits * j) for j in range(4))
    return words.astype(np.uint32 if bits == 8 else np.uint16)


def unpack(name, words):
    bits = FORMATS[name][1]
    w = words.astype(np.uint32)
    return np.stack([(w >> (bits * j)) & ((1 << bits) - 1) for j in range(4)], axis=-1).reshape(w.shape[0], -1)


def scale_rows(scales):
    """[P//8, C] block scales -> their rows in a scale tile: 32q + g for block 4q + g."""
    return {(b // 4) * 32 + b % 4: scales[b] for b in range(scales.shape[0])}


def dequant(name, codes, scales):
    vals = FORMATS[name][0][codes]
    return vals * np.repeat(np.repeat(2.0 ** (scales.astype(np.float64) - 127), 8, 0), 4, 1)
