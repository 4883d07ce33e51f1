"""The OCP fp8 dtypes of the current API (NKI_CURRENT_API.md §7.6): nl.float8_e4m3fn
(no infinities, max 448, overflow to NaN as ml_dtypes converts) and nl.float8_e8m0fnu
(the MX block scale 2^(e-127)), as numpy dtypes, as kernel arguments and results, on
the engines of NeuronCore-v4, and their legality rules with the user's line. The
references here decode the formats from their definitions."""
import numpy as np
import pytest

import nki
import nki.isa as nisa
import nki.language as nl
from mx_reference import FORMATS, quantize_ref, unpack
from nki_current_util import loaded, sbuf, stored
from nki_test_util import Markers, check_diag, trace_error

M = Markers(__file__)


@pytest.fixture(autouse=True)
def _trn3(monkeypatch):
    # NeuronCore-v4 instructions: trn3, which the default target (trn2) is not.
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn3")


E4M3FN = FORMATS["float8_e4m3fn_x4"][0]  # the value of every e4m3fn code


def e4m3fn_codes(x):
    """Nearest code (ties to the even code); above 464 (448's half step) NaN."""
    finite = list(range(0x7F))
    out = []
    for v in np.asarray(x, np.float64).ravel():
        if not np.isfinite(v) or abs(v) > 464:
            out.append(0xFF if np.signbit(v) and not np.isnan(v) else 0x7F)
            continue
        d = np.abs(E4M3FN[finite] - abs(v))
        best = [c for c in finite if d[c] == d.min()]
        c = best[0] if len(best) == 1 else [b for b in best if b % 2 == 0][0]
        out.append(c | (0x80 if np.signbit(v) else 0))
    return np.array(out, np.uint8).reshape(np.shape(x))


# ---------------------------------------------------------------- numpy

def test_the_dtypes_are_names_and_numpy_types():
    assert str(nl.float8_e4m3fn) == "float8_e4m3fn" and nl.float8_e4m3fn == "float8_e4m3fn"
    assert nl.float8_e8m0fnu == "float8_e8m0fnu" and nl.float8_e8m0fnu.itemsize == 1
    assert np.dtype(nl.float8_e4m3fn).name == "float8_e4m3fn" and np.dtype(nl.float8_e4m3fn).itemsize == 1
    assert nl.float8_e4m3fn == np.dtype("float8_e4m3fn") and nl.float8_e4m3fn != nl.float8_e4m3


def test_numpy_casts_round_to_nearest_even_and_overflow_to_nan():
    x = np.array([448, 464, 465, 1000, -1000, np.inf, np.nan, 0.3, -0.0, 2.0 ** -10, 250], np.float32)
    codes = x.astype(nl.float8_e4m3fn).view(np.uint8)
    np.testing.assert_array_equal(codes, [0x7E, 0x7E, 0x7F, 0x7F, 0xFF, 0x7F, 0x7F, e4m3fn_codes(0.3), 0x80, 0, 0x78])
    assert float(nl.float8_e4m3fn(500.0)) != float(nl.float8_e4m3fn(500.0))  # NaN
    back = np.arange(256, dtype=np.uint8).view(nl.float8_e4m3fn).astype(np.float32)
    np.testing.assert_array_equal(back, E4M3FN.astype(np.float32))


def test_e8m0_is_a_power_of_two_with_no_zero():
    x = np.array([1, 1.49, 1.5, 0.25, 2.0 ** 127, 2.0 ** -127, 0, -1, np.inf], np.float32)
    np.testing.assert_array_equal(x.astype(nl.float8_e8m0fnu).view(np.uint8), [127, 127, 128, 125, 254, 0, 255, 255, 255])
    codes = np.arange(255, dtype=np.uint8)
    np.testing.assert_array_equal(codes.view(nl.float8_e8m0fnu).astype(np.float64), 2.0 ** (codes.astype(np.float64) - 127))
    assert np.isnan(np.array([255], np.uint8).view(nl.float8_e8m0fnu).astype(np.float32)[0])


# ---------------------------------------------------------------- kernels

@nki.jit
def to_e4m3fn(a):
    x = loaded(a)
    y = sbuf(a.shape, nl.float8_e4m3fn)
    nisa.tensor_copy(dst=y, src=x)
    return stored(y)


@nki.jit
def from_e4m3fn(a):
    y = sbuf(a.shape)
    nisa.tensor_copy(dst=y, src=loaded(a))
    return stored(y)


@nki.jit
def from_bytes(a):
    y = sbuf(a.shape)
    nisa.tensor_copy(dst=y, src=loaded(a.view(nl.float8_e4m3fn)))
    return stored(y)


def test_an_engine_rounds_into_e4m3fn_and_the_result_is_an_e4m3fn_array():
    x = (np.random.default_rng(1).standard_normal((128, 64)) * 200).astype(np.float32)
    x[0, :4] = [464, 465, -np.inf, 1e-4]
    out = to_e4m3fn(x)
    assert out.dtype == np.dtype(nl.float8_e4m3fn)
    np.testing.assert_array_equal(out.view(np.uint8), e4m3fn_codes(x))


def test_e4m3fn_arguments_as_their_numpy_dtype_or_as_bytes_viewed_in_the_kernel():
    codes = np.random.default_rng(2).integers(0, 256, (128, 32)).astype(np.uint8)
    want = E4M3FN[codes].astype(np.float32)
    np.testing.assert_array_equal(from_e4m3fn(codes.view(nl.float8_e4m3fn)), want)
    np.testing.assert_array_equal(from_bytes(codes), want)


@nki.jit
def fp8_matmul(s, m):
    acc = nl.ndarray((s.shape[1], m.shape[1]), nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=acc, stationary=loaded(s), moving=loaded(m))
    out = sbuf(acc.shape)
    nisa.tensor_copy(dst=out, src=acc)
    return stored(out)


def test_nc_matmul_takes_e4m3fn_on_neuroncore_v4():
    rng = np.random.default_rng(3)
    s, m = rng.standard_normal((128, 64)).astype(nl.float8_e4m3fn), rng.standard_normal((128, 96)).astype(nl.float8_e4m3fn)
    want = s.astype(np.float64).T @ m.astype(np.float64)
    np.testing.assert_allclose(fp8_matmul(s, m), want, rtol=1e-5, atol=1e-5)


@nki.jit
def quantize_scales(src, scale_dtype):
    p, f = src.shape
    q = nl.ndarray((p, f // 4), nl.float8_e4m3fn_x4, buffer=nl.sbuf)
    s = nl.ndarray((p, f // 4), scale_dtype, buffer=nl.sbuf)
    nisa.memset(dst=s, value=0)
    nisa.quantize_mx(dst=q, src=loaded(src), dst_scale=s)
    acc = nl.ndarray((f // 4, f // 4), nl.float32, buffer=nl.psum)
    nisa.nc_matmul_mx(dst=acc, stationary=q, moving=q, stationary_scale=s, moving_scale=s)
    out = sbuf(acc.shape)
    nisa.tensor_copy(dst=out, src=acc)
    return stored(s), stored(out)


def test_e8m0_scale_tiles_hold_the_same_codes_as_uint8_ones():
    src = np.random.default_rng(4).standard_normal((32, 16)).astype(nl.bfloat16)
    s8, p8 = quantize_scales(src, nl.uint8)
    se, pe = quantize_scales(src, nl.float8_e8m0fnu)
    assert se.dtype == np.dtype(nl.float8_e8m0fnu)
    np.testing.assert_array_equal(se.view(np.uint8)[:4], s8[:4])
    np.testing.assert_array_equal(se.astype(np.float64)[:4], 2.0 ** (s8[:4].astype(np.float64) - 127))
    np.testing.assert_array_equal(pe, p8)


def matmul_mx_of(src, view, times=1, accumulate=None, initial=None):
    """src quantized, times itself by nc_matmul_mx `times` times (into PSUM memset to
    `initial` unless None), the stationary operands read through `view`."""
    p, f = src.shape
    q = nl.ndarray((p, f // 4), nl.float8_e4m3fn_x4, buffer=nl.sbuf)
    s = nl.ndarray((p, f // 4), nl.uint8, buffer=nl.sbuf)
    nisa.memset(dst=s, value=0)
    nisa.quantize_mx(dst=q, src=loaded(src), dst_scale=s)
    acc = nl.ndarray((f // 4, f // 4), nl.float32, buffer=nl.psum)
    if initial is not None:
        nisa.memset(dst=acc, value=initial)
    for _ in range(times):
        nisa.nc_matmul_mx(dst=acc, stationary=view(q), moving=q, stationary_scale=view(s), moving_scale=s,
                          accumulate=accumulate)
    out = sbuf(acc.shape)
    nisa.tensor_copy(dst=out, src=acc)
    return stored(out)


@nki.jit
def matmul_mx_rows(src):
    return matmul_mx_of(src, lambda t: t)


@nki.jit
def matmul_mx_unit_dim(src):
    return matmul_mx_of(src, lambda t: t.expand_dim(1))


def test_nc_matmul_mx_reads_an_operand_by_its_elements_per_partition():
    # [P, 1, F] (a sliced view of the kernel library) is the operand [P, F].
    src = np.random.default_rng(5).standard_normal((32, 16)).astype(nl.bfloat16)
    want = matmul_mx_rows(src)
    assert np.abs(want).max() > 0
    np.testing.assert_array_equal(matmul_mx_unit_dim(src), want)


@nki.jit
def packed_argument(w):
    assert w.dtype == nl.float8_e4m3fn_x4
    t = nl.ndarray(w.shape, w.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=w)
    return stored(t)


def test_packed_arguments_as_their_numpy_dtype():
    words = np.random.default_rng(5).integers(0, 2 ** 32, (32, 8), dtype=np.uint64).astype(np.uint32)
    x4 = words.view("float8_e4m3fn_x4")
    assert x4.dtype.name == "float8_e4m3fn_x4" and int(x4[0, 0]) == int(words[0, 0])
    np.testing.assert_array_equal(packed_argument(x4), words)


@nki.jit
def matmul_mx_twice(src, accumulate):
    return matmul_mx_of(src, lambda t: t, times=2, accumulate=accumulate, initial=7.0)


def test_nc_matmul_mx_accumulate_as_nc_matmul():
    # None: the first matmul write of a location overwrites, later ones add; True adds to
    # what PSUM holds; False overwrites.
    src = np.random.default_rng(6).standard_normal((32, 16)).astype(nl.bfloat16)
    once = matmul_mx_rows(src)
    assert np.abs(once).max() > 0
    np.testing.assert_array_equal(matmul_mx_twice(src, None), 2 * once)
    np.testing.assert_array_equal(matmul_mx_twice(src, True), 7 + 2 * once)
    np.testing.assert_array_equal(matmul_mx_twice(src, False), once)


@nki.jit
def packed_rows_at(w, row):
    """The packed words of w [2, 128, 64] at w[row[0, 0]], read through a flattened view."""
    r = nl.ndarray((1, 1), nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=r, src=row)
    flat = w.reshape((2, 128 * 64))
    t = nl.ndarray((128, 64), w.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=flat.ap(pattern=[[64, 128], [1, 64]], offset=0, scalar_offset=r, indirect_dim=0))
    return stored(t)


@pytest.mark.parametrize("name", ["float4_e2m1fn_x4", "float8_e4m3fn_x4"])
def test_a_dma_at_a_runtime_offset_moves_packed_words_unchanged(name):
    words = np.random.default_rng(7).integers(0, 2 ** 32, (2, 128, 64), dtype=np.uint64)
    words = words.astype(np.uint16 if name.startswith("float4") else np.uint32)
    np.testing.assert_array_equal(packed_rows_at(words.view(name), np.array([[1]], np.int32)).view(words.dtype),
                                  words[1])


# ---------------------------------------------------------------- legality

@nki.jit
def copy_into_e4m3fn(a):
    y = sbuf(a.shape, nl.float8_e4m3fn)
    nisa.tensor_copy(dst=y, src=loaded(a))  # ERR:v3_copy
    return stored(y)


@nki.jit
def dma_e4m3fn(a):
    return stored(loaded(a))


def test_engines_take_the_ocp_dtypes_from_neuroncore_v4(monkeypatch):
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn2")
    check_diag(trace_error(copy_into_e4m3fn, np.ones((128, 8), np.float32)), M, "err_min_arch_support_for_inst",
               "'float8_e4m3fn' in 'nisa.tensor_copy' is available on NeuronCore-v4 and newer only; target 'trn2' "
               "is NeuronCore-v3", [("v3_copy", "nisa.")])
    codes = np.arange(128 * 8, dtype=np.uint32).reshape(128, 8).astype(np.uint8)
    np.testing.assert_array_equal(dma_e4m3fn(codes.view(nl.float8_e4m3fn)).view(np.uint8), codes)  # DMA moves it


@nki.jit
def mixed_e4m3(s, m):
    acc = nl.ndarray((s.shape[1], m.shape[1]), nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=acc, stationary=loaded(s), moving=loaded(m))  # ERR:mixed
    return s


@nki.jit
def e8m0_stationary(s, m):
    acc = nl.ndarray((s.shape[1], m.shape[1]), nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=acc, stationary=loaded(s), moving=loaded(m))  # ERR:e8m0_data
    return s


@nki.jit
def float_scale_tile(src):
    q = nl.ndarray((32, 4), nl.float8_e4m3fn_x4, buffer=nl.sbuf)
    s = sbuf((32, 4))
    nisa.quantize_mx(dst=q, src=loaded(src), dst_scale=s)  # ERR:scale
    return src


@nki.jit
def e4m3fn_into_quantize(src):
    q = nl.ndarray((32, 4), nl.float8_e4m3fn_x4, buffer=nl.sbuf)
    s = nl.ndarray((32, 4), nl.float8_e8m0fnu, buffer=nl.sbuf)
    nisa.quantize_mx(dst=q, src=loaded(src), dst_scale=s)  # ERR:src
    return src


E4 = np.ones((32, 16), nl.float8_e4m3)
E4FN = np.ones((32, 16), nl.float8_e4m3fn)
E8 = np.ones((32, 16), nl.float8_e8m0fnu)


@pytest.mark.parametrize("kernel,args,marker,message", [
    (mixed_e4m3, (E4, E4FN), "mixed", "the stationary (float8_e4m3) and moving (float8_e4m3fn) operands of "
     "'nisa.nc_matmul' mix the legacy float8_e4m3 with the OCP float8_e4m3fn"),
    (mixed_e4m3, (E4FN, E4), "mixed", "the stationary (float8_e4m3fn) and moving (float8_e4m3) operands"),
    (e8m0_stationary, (E8, E4FN), "e8m0_data", "operand 'stationary' of 'nisa.nc_matmul' has dtype 'float8_e8m0fnu', "
     "which is not supported; expected one of {float8_e4m3, float8_e5m2, float8_e4m3fn, bfloat16"),
    (float_scale_tile, (np.ones((32, 16), nl.bfloat16),), "scale", "operand 'dst_scale' of 'nisa.quantize_mx' has "
     "dtype 'float32', which is not supported; expected one of {float8_e8m0fnu, uint8}"),
    (e4m3fn_into_quantize, (E4FN,), "src", "operand 'src' of 'nisa.quantize_mx' has dtype 'float8_e4m3fn', which is "
     "not supported; expected one of {bfloat16, float16}"),
])
def test_operand_dtype_rules(kernel, args, marker, message):
    check_diag(trace_error(kernel, *args), M, "err_supported_operand_dtype", message, [(marker, "nisa.")])


def test_finfo():
    f = nl.finfo(nl.float8_e4m3fn)
    assert (f.max, f.min, f.eps, f.tiny) == (448.0, -448.0, 0.125, 2.0 ** -6)
    g = nl.finfo(nl.float8_e8m0fnu)
    assert (g.max, g.min, g.eps) == (2.0 ** 127, 2.0 ** -127, 1.0)


@nki.jit
def quantize_3d(src):
    p, a, f = src.shape
    q = nl.ndarray((p, a, f // 4), nl.float8_e4m3fn_x4, buffer=nl.sbuf)
    s = nl.ndarray((p, a, f // 4), nl.float8_e8m0fnu, buffer=nl.sbuf)
    nisa.memset(dst=s, value=0)
    nisa.quantize_mx(dst=q, src=loaded(src), dst_scale=s)
    return stored(q), stored(s)


def test_quantize_mx_reads_several_free_dims_flattened():
    src = np.random.default_rng(6).standard_normal((32, 2, 8)).astype(nl.bfloat16)
    q3, s3 = quantize_3d(src)
    codes, scales = quantize_ref("float8_e4m3fn_x4", src.reshape(32, 16).astype(np.float32))
    np.testing.assert_array_equal(unpack("float8_e4m3fn_x4", q3.reshape(32, 4)), codes)
    np.testing.assert_array_equal(s3.view(np.uint8).reshape(32, 4)[:4], scales)
