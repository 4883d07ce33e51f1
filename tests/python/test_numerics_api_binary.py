"""Numerics of the nl.* binary ops (NKI_API.md §2.8, §2.9) and of
nisa.tensor_tensor / nisa.tensor_scalar (§3.2, §3.4) on every dtype they accept,
tile-tile and tile-scalar (both operand orders), with the default (promoted) and
an explicit output dtype.

Model (§1.6, §3.2): arithmetic decodes the operands to fp32, computes in fp32 and
rounds once to the output dtype; add/subtract/multiply of two integer operands
into an integer output are exact integer ops (the GpSimd integer path, §0 2.23 /
2.26 notes, §3.2), saturated to the output format; bitvec ops (bitwise_*, shifts,
§3.2) work on the integers' bits, right_shift being a logical shift.

Exactness: add/subtract/multiply/divide, maximum/minimum, mod (fmod, then at most
one rounded add of the divisor: numpy's float32 np.mod does exactly that), fmod
(always exact), comparisons, logical and bitvec ops are exactly rounded in fp32,
so references are numpy float32 (or exact integer) results rounded to the output
dtype and compared bit for bit. power is a transcendental: within 4 fp32 ulps.

Integer operand ranges: add/subtract/multiply use each format's full range
(exact semantics, saturating). For the fp32-computed ops on 32-bit integers the
random operands stay below 2^23 in magnitude, where fp32 holds them exactly;
test_int32_beyond_fp32_precision covers larger ones separately."""
import operator

import numpy as np
import pytest

from neuronxcc import nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

from test_numerics_api_ref import (ALL, FLOATS, INTS, assert_bits, dparams, dt_id, full_range, is_float, promote,
                                   rnd, sat, seed, to_f32, ulp32, values, within)

SHAPE = (128, 64)


@nki.jit
def binary_kernel(a, b, fn, dtype=None):
    x = nl.load(a)
    y = nl.load(b)
    r = fn(x, y) if dtype is None else fn(x, y, dtype=dtype)
    out = nl.ndarray(r.shape, dtype=r.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=r)
    return out


@nki.jit
def scalar_kernel(a, fn, s, reverse=False, dtype=None):
    x = nl.load(a)
    args = (s, x) if reverse else (x, s)
    r = fn(*args) if dtype is None else fn(*args, dtype=dtype)
    out = nl.ndarray(r.shape, dtype=r.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=r)
    return out


ARITH = ["add", "subtract", "multiply", "divide", "maximum", "minimum", "mod", "fmod"]
COMPARE = ["equal", "not_equal", "greater", "greater_equal", "less", "less_equal"]
LOGICAL = ["logical_and", "logical_or", "logical_xor"]
BITWISE = ["bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift"]
EXACT_INT = {"add", "subtract", "multiply"}

F32_OPS = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
    "maximum": np.maximum, "minimum": np.minimum, "mod": np.mod, "fmod": np.fmod, "power": np.power,
    "equal": np.equal, "not_equal": np.not_equal, "greater": np.greater, "greater_equal": np.greater_equal,
    "less": np.less, "less_equal": np.less_equal, "logical_and": np.logical_and, "logical_or": np.logical_or,
    "logical_xor": np.logical_xor,
}


def _is_int_operand(v):
    if isinstance(v, (bool, np.bool_)):
        return True
    if isinstance(v, (int, np.integer)):
        return True
    if isinstance(v, float):
        return False
    return np.issubdtype(np.asarray(v).dtype, np.integer)


def _as_f32(v):
    return np.float32(v) if np.isscalar(v) else to_f32(v)


def _as_int(v):
    return np.asarray(v).astype(object) if not np.isscalar(v) else int(v)


def shift_ref(op, a, s, dt):
    """Shifts on the bits of integer format dt (same dtype for both operands)."""
    nbits = 8 * np.dtype(dt).itemsize
    mask = (1 << nbits) - 1
    a_bits = np.asarray(a).astype(np.int64) & mask
    s = np.asarray(s).astype(np.int64)
    r = (a_bits << s) & mask if op == "left_shift" else a_bits >> s
    return r.astype(np.uint64).astype({8: np.uint8, 16: np.uint16, 32: np.uint32}[nbits]).view(dt)


def reference(op, a, b, out):
    """Expected output (dtype `out`) of nl.<op>(a, b); a/b arrays or scalars."""
    ints = _is_int_operand(a) and _is_int_operand(b)
    with np.errstate(all="ignore"):
        if op in ("left_shift", "right_shift"):
            assert np.asarray(a).dtype == np.asarray(b).dtype == np.dtype(out)
            return shift_ref(op, a, b, out)
        if op in ("bitwise_and", "bitwise_or", "bitwise_xor"):
            f = {"bitwise_and": operator.and_, "bitwise_or": operator.or_, "bitwise_xor": operator.xor}[op]
            r = np.asarray(f(_as_int(a), _as_int(b)), object).astype(np.int64)
            return rnd(r.astype(np.float64), out) if is_float(out) else sat(r, out)
        if op in LOGICAL:  # truth values; NaN is true (it is not 0)
            r = F32_OPS[op](np.asarray(_as_f32(a)) != 0, np.asarray(_as_f32(b)) != 0)
            return r if out is np.bool_ else rnd(r.astype(np.float64), out)
        if op in COMPARE and ints:
            r = np.asarray(F32_OPS[op](_as_int(a), _as_int(b)), bool)
            return r if out is np.bool_ else rnd(r.astype(np.float64), out)
        if op in EXACT_INT | {"maximum", "minimum"} and ints and not is_float(out) and out is not np.bool_:
            f = {"add": operator.add, "subtract": operator.sub, "multiply": operator.mul,
                 "maximum": np.maximum, "minimum": np.minimum}[op]
            r = f(_as_int(a), _as_int(b))
            info = np.iinfo(out)
            return np.clip(np.asarray(r, object), info.min, info.max).astype(out)
        r = F32_OPS[op](_as_f32(a), _as_f32(b))
        if r.dtype == np.bool_:
            return r if out is np.bool_ else rnd(r.astype(np.float64), out)
        assert r.dtype == np.float32
        return rnd(r, out)


def check(op, a, b, got, out, what):
    assert got.dtype == np.dtype(out), (what, got.dtype, np.dtype(out))
    if op == "power":
        with np.errstate(all="ignore"):
            ref = np.power(_as_f32(a).astype(np.float64), _as_f32(b).astype(np.float64))
        within(got, ref, 4 * ulp32(ref), out, what)
    else:
        assert_bits(got, reference(op, a, b, out), what)


def operands(op, dt, rng):
    """Two random operands of dtype dt suited to op."""
    if op in ("left_shift", "right_shift"):
        nbits = 8 * np.dtype(dt).itemsize
        return full_range(dt, SHAPE, rng), rng.integers(0, nbits, SHAPE).astype(dt)
    if op == "power":
        if is_float(dt):
            lo_b = 0.25 if dt in (nl.float8_e4m3, nl.float8_e5m2) else 0.1
            return (rng.uniform(lo_b, 4.0, SHAPE).astype(np.float32).astype(dt),
                    rng.uniform(-3, 3, SHAPE).astype(np.float32).astype(dt))
        return values(dt, SHAPE, rng, -4, 4), values(dt, SHAPE, rng, -2, 6)
    if not is_float(dt):
        big = np.dtype(dt).itemsize == 4 and op not in EXACT_INT and op not in BITWISE + LOGICAL
        if big:
            return values(dt, SHAPE, rng, -2 ** 23, 2 ** 23), values(dt, SHAPE, rng, -2 ** 23, 2 ** 23)
        a, b = full_range(dt, SHAPE, rng), full_range(dt, SHAPE, rng)
        if op in COMPARE:
            b.reshape(-1)[::7] = a.reshape(-1)[::7]  # equal pairs
        return a, b
    lim = {nl.float8_e4m3: 16.0, nl.float8_e5m2: 64.0}.get(dt, 100.0)
    a = values(dt, SHAPE, rng, -lim, lim)
    b = values(dt, SHAPE, rng, -lim, lim)
    if op in COMPARE + LOGICAL:
        b.reshape(-1)[::7] = a.reshape(-1)[::7]
        b.reshape(-1)[3::11] = 0
    return a, b


def op_dtype_cases(ops):
    """(op, dtype) pairs the op accepts: bitvec ops take integer operands only (§2.9, §3.2)."""
    return [pytest.param(op, dt, id=f"{op}-{dt_id(dt)}") for op in ops for dt in ALL
            if op not in BITWISE or not is_float(dt)]


BINARY_OPS = ARITH + ["power"] + COMPARE + LOGICAL + BITWISE


@pytest.mark.parametrize("op,dt", op_dtype_cases(BINARY_OPS))
def test_binary_tile_tile(op, dt):
    rng = seed("tt", op, dt)
    a, b = operands(op, dt, rng)
    got = binary_kernel(a, b, fn=getattr(nl, op))
    out = np.bool_ if op in COMPARE + LOGICAL else dt  # same-dtype operands promote to themselves
    check(op, a, b, got, out, f"nl.{op}({np.dtype(dt)}, {np.dtype(dt)})")


@pytest.mark.parametrize("op,dt", op_dtype_cases(BINARY_OPS))
def test_nisa_tensor_tensor(op, dt):
    rng = seed("nisa.tt", op, dt)
    a, b = operands(op, dt, rng)
    out = np.bool_ if op in COMPARE + LOGICAL else dt
    got = binary_kernel(a, b, fn=lambda x, y: nisa.tensor_tensor(x, y, op=getattr(nl, op), dtype=out))
    check(op, a, b, got, out, f"nisa.tensor_tensor({op}) {np.dtype(dt)}")


# Output dtype overrides: the one rounding goes to dtype=, not to the promoted type.
OVERRIDES = [(np.float32, nl.bfloat16), (np.float32, np.float16), (nl.bfloat16, nl.float8_e4m3),
             (np.float16, nl.float8_e5m2), (nl.bfloat16, np.float32), (np.float32, np.int16),
             (np.int16, np.float32), (np.int8, np.int32), (np.int32, np.int8)]


@pytest.mark.parametrize("src,out", [pytest.param(s, o, id=f"{dt_id(s)}->{dt_id(o)}") for s, o in OVERRIDES])
@pytest.mark.parametrize("op", ARITH + ["power"])
def test_binary_dtype_argument(op, src, out):
    a, b = operands(op, src, seed("override", op, src, out))
    got = binary_kernel(a, b, fn=getattr(nl, op), dtype=out)
    check(op, a, b, got, out, f"nl.{op}({np.dtype(src)} x2, dtype={np.dtype(out)})")


@pytest.mark.parametrize("out", dparams([np.float32, np.uint8, np.int32]))
@pytest.mark.parametrize("op", COMPARE + LOGICAL)
def test_compare_dtype_argument(op, out):
    a, b = operands(op, np.float32, seed("cmpdt", op, out))
    got = binary_kernel(a, b, fn=getattr(nl, op), dtype=out)
    check(op, a, b, got, out, f"nl.{op}(dtype={np.dtype(out)})")


# ------------------------------------------------------------------ tile-scalar

FLOAT_SCALARS = [2.5, -0.1, 3.0]  # 0.1 is not an fp32 value: it rounds to fp32 once (§1.6 float -> float32)
INT_SCALARS = [3, -7]
BIT_SCALARS = [3, 0x35]  # non-negative: a negative mask's bits in a wider format are not documented


@pytest.mark.parametrize("reverse", [False, True], ids=["tile-op-s", "s-op-tile"])
@pytest.mark.parametrize("dt", dparams(FLOATS))
@pytest.mark.parametrize("op", ARITH + ["power"] + COMPARE)
def test_tile_float_scalar(op, dt, reverse):
    """(float tile, Python float): float32 result (§1.6 weak float -> float32),
    comparisons bool."""
    rng = seed("ts", op, dt, reverse)
    a, _ = operands(op, dt, rng)
    s = 1.5 if op == "power" and not reverse else FLOAT_SCALARS[int(rng.integers(0, 3))]
    if op == "power" and reverse:
        a = rng.uniform(-2, 2, SHAPE).astype(np.float32).astype(dt)
        s = 2.5
    got = scalar_kernel(a, fn=getattr(nl, op), s=s, reverse=reverse)
    out = np.bool_ if op in COMPARE else np.float32
    x, y = (s, a) if reverse else (a, s)
    check(op, x, y, got, out, f"nl.{op}{'(s, tile)' if reverse else '(tile, s)'} {np.dtype(dt)} s={s}")


@pytest.mark.parametrize("reverse", [False, True], ids=["tile-op-s", "s-op-tile"])
@pytest.mark.parametrize("dt", dparams(INTS))
@pytest.mark.parametrize("op", ARITH + COMPARE + ["bitwise_and", "bitwise_or", "bitwise_xor"])
def test_tile_int_scalar(op, dt, reverse):
    """(integer tile, Python int): the tile's dtype promoted with int32 (§1.6 weak
    int -> int32): int32, or float32 for uint32 ((int32, uint32) -> float32)."""
    rng = seed("tsi", op, dt, reverse)
    a = values(dt, SHAPE, rng, -2 ** 23, 2 ** 23)
    s = (BIT_SCALARS if op in BITWISE else INT_SCALARS)[int(rng.integers(0, 2))]
    got = scalar_kernel(a, fn=getattr(nl, op), s=s, reverse=reverse)
    out = np.bool_ if op in COMPARE else promote(dt, "int")
    x, y = (s, a) if reverse else (a, s)
    check(op, x, y, got, out, f"nl.{op}{'(s, tile)' if reverse else '(tile, s)'} {np.dtype(dt)} s={s}")


@pytest.mark.parametrize("dt", dparams([np.float16, nl.bfloat16, nl.float8_e4m3]))
@pytest.mark.parametrize("op", ["add", "multiply", "subtract", "divide"])
def test_typed_numpy_scalar_keeps_dtype(op, dt):
    """A typed scalar (np.float16(2)) does not widen: (float16, np.float16) ->
    float16 (§1.6 'Avoid by typing the scalar'); bf16/fp8 tiles with it follow the
    float rules ((bf16, fp16) -> fp32, (fp8, fp16) -> fp16)."""
    a, _ = operands(op, dt, seed("typed", op, dt))
    s = np.float16(0.75)
    got = scalar_kernel(a, fn=getattr(nl, op), s=s)
    out = {np.float16: np.float16, nl.bfloat16: np.float32, nl.float8_e4m3: np.float16}[dt]
    check(op, a, np.float32(s), got, out, f"nl.{op}({np.dtype(dt)}, np.float16)")


# ------------------------------------------------------------------ nisa.tensor_scalar

@nki.jit
def tensor_scalar_kernel(a, op0, operand0, reverse0=False, op1=None, operand1=None, reverse1=False, dtype=None):
    x = nl.load(a)
    r = nisa.tensor_scalar(x, op0, operand0, reverse0=reverse0, op1=op1, operand1=operand1, reverse1=reverse1,
                           dtype=dtype)
    out = nl.ndarray(r.shape, dtype=r.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=r)
    return out


@nki.jit
def tensor_scalar_tile_kernel(a, op0, operand0, reverse0=False, dtype=None):
    x = nl.load(a)
    s0 = nl.load(operand0)
    r = nisa.tensor_scalar(x, op0, s0, reverse0=reverse0, dtype=dtype)
    out = nl.ndarray(r.shape, dtype=r.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=r)
    return out


@nki.jit
def tensor_scalar_tiles_kernel(a, op0, operand0, reverse0=False, op1=None, operand1=None, reverse1=False,
                               dtype=None):
    x = nl.load(a)
    s0 = nl.load(operand0)
    s1 = nl.load(operand1)
    r = nisa.tensor_scalar(x, op0, s0, reverse0=reverse0, op1=op1, operand1=s1, reverse1=reverse1, dtype=dtype)
    out = nl.ndarray(r.shape, dtype=r.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=r)
    return out


TS_CHAINS = [
    ("multiply", False, "add", False), ("subtract", True, None, False), ("divide", True, None, False),
    ("maximum", False, "subtract", True), ("add", False, "multiply", False), ("divide", False, "subtract", True),
    ("minimum", True, "maximum", False),
]


def _chain_ref(x, op0, s0, r0, op1, s1, r1):
    """fp32 all the way: ((x op0 s0) op1 s1), operands swapped where reversed."""
    with np.errstate(all="ignore"):
        t = F32_OPS[op0](*((s0, x) if r0 else (x, s0)))
        assert t.dtype == np.float32
        if op1 is None:
            return t
        return F32_OPS[op1](*((s1, t) if r1 else (t, s1)))


@pytest.mark.parametrize("form", ["imm", "tile"])
@pytest.mark.parametrize("dt", dparams(FLOATS))
@pytest.mark.parametrize("chain", TS_CHAINS, ids=lambda c: f"{c[0]}{'-rev' if c[1] else ''}-{c[2]}"
                         f"{'-rev' if c[3] else ''}")
def test_nisa_tensor_scalar(chain, dt, form):
    """Both ops run in fp32 with one rounding at the end (§3.4: engines compute in
    fp32; the output dtype is requested with dtype=)."""
    op0, r0, op1, r1 = chain
    rng = seed("nisa.ts", *chain, dt, form)
    a = values(dt, SHAPE, rng, -8, 8)
    if form == "imm":
        s0, s1 = 0.3, -1.7
        e0, e1 = np.float32(s0), np.float32(s1)
    else:  # (P, 1) tiles in the data's dtype, broadcast along the free dim
        s0 = values(dt, (SHAPE[0], 1), rng, 0.5, 4)
        s1 = values(dt, (SHAPE[0], 1), rng, -4, 4)
        e0, e1 = to_f32(s0), to_f32(s1)
    if form == "tile" and op1 is not None:
        got = tensor_scalar_tiles_kernel(a, getattr(nl, op0), s0, reverse0=r0, op1=getattr(nl, op1), operand1=s1,
                                         reverse1=r1, dtype=dt)
    elif form == "tile":
        got = tensor_scalar_tile_kernel(a, getattr(nl, op0), s0, reverse0=r0, dtype=dt)
    else:
        got = tensor_scalar_kernel(a, getattr(nl, op0), s0, reverse0=r0, op1=op1 and getattr(nl, op1),
                                   operand1=None if op1 is None else s1, reverse1=r1, dtype=dt)
    assert_bits(got, rnd(_chain_ref(to_f32(a), op0, e0, r0, op1, e1, r1), dt),
                f"nisa.tensor_scalar {chain} {form} {np.dtype(dt)}")


@pytest.mark.parametrize("dt", dparams(INTS))
def test_nisa_tensor_scalar_bitvec(dt):
    """(x & mask) >> shift and (x << 1) | 1 on integer bits (§3.2: bitvec pairs,
    logical right shift)."""
    a = full_range(dt, SHAPE, seed("nisa.ts.bits", dt))
    nbits = 8 * np.dtype(dt).itemsize
    mask = 0x5A if nbits == 8 else 0x5A5A
    got = tensor_scalar_kernel(a, nl.bitwise_and, mask, op1=nl.right_shift, operand1=3, dtype=dt)
    masked = sat(np.asarray(a).astype(np.int64) & mask, dt)
    assert_bits(got, shift_ref("right_shift", masked, 3, dt), f"(x & {mask:#x}) >> 3 {np.dtype(dt)}")
    got = tensor_scalar_kernel(a, nl.left_shift, 1, op1=nl.bitwise_or, operand1=1, dtype=dt)
    shifted = shift_ref("left_shift", a, 1, dt)
    assert_bits(got, (shifted | np.array(1, dt)).astype(dt), f"(x << 1) | 1 {np.dtype(dt)}")


# ------------------------------------------------------------------ 32-bit integers beyond 2^24

@pytest.mark.parametrize("dt", dparams([np.int32, np.uint32]))
@pytest.mark.parametrize("op", ["maximum", "minimum", "equal", "greater", "less_equal", "divide"])
def test_int32_beyond_fp32_precision(op, dt):
    """maximum/minimum/comparisons/divide are arithmetic ops whose 'inputs [are]
    cast to fp32' (§3.2; only add/subtract/multiply have the exact GpSimd integer
    path): 2^24 + 1 reads as 2^24, so equal(2^24 + 1, 2^24) is true,
    maximum(2^24 + 1, 1) is 2^24 and divide(2^24 + 1, 1) is 2^24."""
    a = np.array([2 ** 24 + 1, 2 ** 24 + 3, 123456789, 2 ** 31 - 1, 2 ** 24 + 1, 7], np.int64)
    b = np.array([2 ** 24, 2 ** 24 + 4, 123456792, 2 ** 31 - 64, 1, 7], np.int64)
    a = np.tile(a, (128, 1)).astype(dt)
    b = np.tile(b, (128, 1)).astype(dt)
    got = binary_kernel(a, b, fn=getattr(nl, op))
    out = np.bool_ if op in COMPARE else dt
    expected = rnd(F32_OPS[op](to_f32(a), to_f32(b)), out) if out is not np.bool_ else \
        F32_OPS[op](to_f32(a), to_f32(b))
    assert_bits(got, expected, f"nl.{op} {np.dtype(dt)} beyond 2^24")
