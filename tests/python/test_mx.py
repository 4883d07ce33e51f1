"""Microscaling (mx) on NeuronCore-v4 targets: the packed dtypes, nisa.quantize_mx
and nisa.nc_matmul_mx against a numpy reference of the OCP formats, and seed
004's mx packing rules (check_matmul_mx_low_level_shape and the element-count
companions), each with its code, message and the user's line:col."""
import numpy as np
import pytest

import nkic
from neuronxcc import nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

from mx_reference import FORMATS, dequant, pack, quantize_ref, scale_rows, unpack
from nki_test_util import Markers, check_diag, trace_error

M = Markers(__file__)


def bf16(shape, seed, scale=1.0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(nl.bfloat16)


# ---------------------------------------------------------------- quantize_mx

def k_quantize(src, mx_dtype):
    p, f = src.shape
    data = nl.ndarray((p, f // 4), dtype=mx_dtype, buffer=nl.shared_hbm)
    scale = nl.ndarray((p, f // 4), dtype=nl.uint8, buffer=nl.shared_hbm)
    q = nl.ndarray((p, f // 4), dtype=mx_dtype, buffer=nl.sbuf)
    s = nl.zeros((p, f // 4), dtype=nl.uint8, buffer=nl.sbuf)
    nisa.quantize_mx(dst=q, src=nl.load(src), dst_scale=s)
    nl.store(data, q)
    nl.store(scale, s)
    return data, scale


@pytest.mark.parametrize("name", ["float8_e4m3fn_x4", "float8_e5m2_x4"])
@pytest.mark.parametrize("p", [32, 64, 96, 128])
def test_quantize_mx_matches_the_reference_bit_for_bit(name, p):
    src = bf16((p, 64), seed=p, scale=3.0)
    src[0, :8] = 0  # a block of zeros takes scale 0
    src[8, 0] = 300.0  # a block whose largest value would saturate at the OCP scale
    data, scale = nki.jit(k_quantize, platform_target="trn3")(src, getattr(nl, name))
    codes, scales = quantize_ref(name, src.astype(np.float32))
    assert data.dtype == np.uint32 and data.shape == (p, 16)
    np.testing.assert_array_equal(unpack(name, data), codes)
    rows = scale_rows(scales)
    for r in range(p):
        np.testing.assert_array_equal(scale[r], rows.get(r, np.zeros(16)), err_msg=f"scale row {r}")


def test_quantize_mx_scale_is_twice_the_ocp_sample_scale():
    # Largest magnitude 448 = 1.75 * 2^8: e4m3fn's emax is 8, so OCP's scale is
    # 2^0 and this one 2^1; 448 quantizes to 224, exactly.
    src = np.full((32, 4), 1.0, nl.bfloat16)
    src[0, 0] = 448.0
    data, scale = nki.jit(k_quantize, platform_target="trn3")(src, nl.float8_e4m3fn_x4)
    assert scale[0, 0] == 128
    assert FORMATS["float8_e4m3fn_x4"][0][unpack("float8_e4m3fn_x4", data)[0, 0]] == 224.0


# ---------------------------------------------------------------- nc_matmul_mx

def k_matmul_bf16(a, b):
    """a [K, 4M], b [K, 4N] bf16: quantize both on chip, multiply, return fp32."""
    k, m4 = a.shape
    n4 = b.shape[1]
    out = nl.ndarray((m4 // 4, n4 // 4), dtype=nl.float32, buffer=nl.shared_hbm)
    aq = nl.ndarray((k, m4 // 4), dtype=nl.float8_e4m3fn_x4, buffer=nl.sbuf)
    asc = nl.ndarray((k, m4 // 4), dtype=nl.uint8, buffer=nl.sbuf)
    bq = nl.ndarray((k, n4 // 4), dtype=nl.float8_e5m2_x4, buffer=nl.sbuf)
    bsc = nl.ndarray((k, n4 // 4), dtype=nl.uint8, buffer=nl.sbuf)
    nisa.quantize_mx(dst=aq, src=nl.load(a), dst_scale=asc)
    nisa.quantize_mx(dst=bq, src=nl.load(b), dst_scale=bsc)
    acc = nl.ndarray((m4 // 4, n4 // 4), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul_mx(dst=acc, stationary=aq, moving=bq, stationary_scale=asc, moving_scale=bsc)
    nl.store(out, nl.copy(acc))
    return out


def mx_matmul_ref(a, b):
    qa, sa = quantize_ref("float8_e4m3fn_x4", a.astype(np.float32))
    qb, sb = quantize_ref("float8_e5m2_x4", b.astype(np.float32))
    da = dequant("float8_e4m3fn_x4", qa, sa).reshape(a.shape[0], -1, 4)
    db = dequant("float8_e5m2_x4", qb, sb).reshape(b.shape[0], -1, 4)
    return np.einsum("pmj,pnj->mn", da, db)


@pytest.mark.parametrize("k,m,n", [(32, 2, 8), (64, 64, 128), (128, 128, 512)])
def test_quantize_then_matmul_matches_the_dequantized_product(k, m, n):
    a, b = bf16((k, 4 * m), seed=1), bf16((k, 4 * n), seed=2, scale=0.01)
    got = nki.jit(k_matmul_bf16, platform_target="trn3")(a, b)
    ref = mx_matmul_ref(a, b)
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5 * np.abs(ref).max())
    exact = np.einsum("pmj,pnj->mn", a.astype(np.float64).reshape(k, m, 4), b.astype(np.float64).reshape(k, n, 4))
    assert np.abs(got - exact).max() > 0  # the fp8 rounding is really applied


def k_matmul_packed(st, mv, st_scale, mv_scale, mx_dtype, accumulate_twice=False):
    """Offline-quantized operands from HBM: packed words viewed as an mx dtype."""
    k, m = st.shape
    n = mv.shape[1]
    out = nl.ndarray((m, n), dtype=nl.float32, buffer=nl.shared_hbm)
    s_sb = nl.load(st.view(mx_dtype))
    m_sb = nl.load(mv.view(mx_dtype))
    ss, ms = nl.load(st_scale), nl.load(mv_scale)
    acc = nl.ndarray((m, n), dtype=nl.float32, buffer=nl.psum)
    for _ in nl.static_range(2 if accumulate_twice else 1):
        nisa.nc_matmul_mx(dst=acc, stationary=s_sb, moving=m_sb, stationary_scale=ss, moving_scale=ms)
    nl.store(out, nl.copy(acc))
    return out


def random_operand(name, k, cols, seed):
    """Random codes [K, 4*cols] (no NaN) with scales in a scale tile [K, cols]."""
    rng = np.random.default_rng(seed)
    vals, bits, _ = FORMATS[name]
    finite = np.flatnonzero(np.isfinite(vals))
    codes = rng.choice(finite, size=(k, 4 * cols))
    scales = rng.integers(120, 134, size=(k // 8, cols))
    tile = np.zeros((k, cols), np.uint8)
    for r, row in scale_rows(scales).items():
        tile[r] = row
    return codes, scales, pack(name, codes), tile


@pytest.mark.parametrize("name", ["float8_e4m3fn_x4", "float8_e5m2_x4", "float4_e2m1fn_x4"])
@pytest.mark.parametrize("twice", [False, True])
def test_matmul_mx_on_offline_quantized_operands(name, twice):
    k, m, n = 64, 16, 40
    cs, ss, st, st_tile = random_operand(name, k, m, seed=3)
    cm, sm, mv, mv_tile = random_operand(name, k, n, seed=4)
    got = nki.jit(k_matmul_packed, platform_target="trn3")(st, mv, st_tile, mv_tile, getattr(nl, name),
                                                           accumulate_twice=twice)
    ref = np.einsum("pmj,pnj->mn", dequant(name, cs, ss).reshape(k, m, 4), dequant(name, cm, sm).reshape(k, n, 4))
    np.testing.assert_allclose(got, ref * (2 if twice else 1), rtol=1e-5, atol=1e-6 * np.abs(ref).max())


def k_matmul_packed_bf16(st, mv, st_scale, mv_scale):
    """As k_matmul_packed, accumulating in a bf16 PSUM tile (the ISA reference: fp32 or bf16 dst)."""
    k, m = st.shape
    n = mv.shape[1]
    out = nl.ndarray((m, n), dtype=nl.bfloat16, buffer=nl.shared_hbm)
    acc = nl.ndarray((m, n), dtype=nl.bfloat16, buffer=nl.psum)
    nisa.nc_matmul_mx(dst=acc, stationary=nl.load(st.view(nl.float8_e4m3fn_x4)),
                      moving=nl.load(mv.view(nl.float8_e4m3fn_x4)), stationary_scale=nl.load(st_scale),
                      moving_scale=nl.load(mv_scale))
    nl.store(out, nl.copy(acc))
    return out


def test_matmul_mx_into_bf16_psum():
    name = "float8_e4m3fn_x4"
    cs, ss, st, st_tile = random_operand(name, 64, 16, seed=7)
    cm, sm, mv, mv_tile = random_operand(name, 64, 40, seed=8)
    got = nki.jit(k_matmul_packed_bf16, platform_target="trn3")(st, mv, st_tile, mv_tile)
    ref = np.einsum("pmj,pnj->mn", dequant(name, cs, ss).reshape(64, 16, 4), dequant(name, cm, sm).reshape(64, 40, 4))
    assert got.dtype == nl.bfloat16
    np.testing.assert_allclose(got.astype(np.float64), ref, rtol=2 ** -8, atol=1e-6 * np.abs(ref).max())


def test_scale_255_is_nan():
    name = "float8_e4m3fn_x4"
    cs, ss, st, st_tile = random_operand(name, 32, 2, seed=5)
    cm, sm, mv, mv_tile = random_operand(name, 32, 4, seed=6)
    st_tile[1, 0] = 255  # block 1 of stationary column 0
    got = nki.jit(k_matmul_packed, platform_target="trn3")(st, mv, st_tile, mv_tile, nl.float8_e4m3fn_x4)
    assert np.isnan(got[0]).all() and np.isfinite(got[1]).all()


# ---------------------------------------------------------------- legality

def _tiles(p, f, mx_dtype=nl.float8_e4m3fn_x4, scale_rows_=None):
    q = nl.ndarray((p, f // 4), dtype=mx_dtype, buffer=nl.sbuf)
    s = nl.ndarray((scale_rows_ or p, f // 4), dtype=nl.uint8, buffer=nl.sbuf)
    return q, s


def e_on_trn2(src):
    q, s = _tiles(128, 64)
    nisa.quantize_mx(dst=q, src=nl.load(src), dst_scale=s)  # ERR:on_trn2


def e_src_48(src):
    q, s = _tiles(48, 64)
    nisa.quantize_mx(dst=q, src=nl.load(src[0:48, :]), dst_scale=s)  # ERR:src_48


def e_src_free_62(src):
    q, s = _tiles(128, 64)
    nisa.quantize_mx(dst=q[:, 0:15], src=nl.load(src[:, 0:62]), dst_scale=s[:, 0:15])  # ERR:src_free_62


def e_dst_free(src):
    q, s = _tiles(128, 64)
    nisa.quantize_mx(dst=q[:, 0:8], src=nl.load(src), dst_scale=s)  # ERR:dst_free


def e_scale_rows(src):
    q, s = _tiles(128, 64, scale_rows_=64)
    nisa.quantize_mx(dst=q, src=nl.load(src), dst_scale=s)  # ERR:scale_rows


def e_src_fp32(src):
    q, s = _tiles(128, 64)
    nisa.quantize_mx(dst=q, src=nl.load(src, dtype=nl.float32), dst_scale=s)  # ERR:src_fp32


def e_exp_on_packed(src):
    q, s = _tiles(128, 64)
    nisa.quantize_mx(dst=q, src=nl.load(src), dst_scale=s)
    y = nl.exp(q)  # ERR:exp_on_packed


def e_cast_packed(src):
    q, s = _tiles(128, 64)
    nisa.quantize_mx(dst=q, src=nl.load(src), dst_scale=s)
    y = nisa.tensor_copy(q, dtype=nl.bfloat16)  # ERR:cast_packed


def _mm(k_s=128, m=128, k_m=128, n=512, dst_dtype=nl.float32, dst_shape=None, st_scale_cols=None,
        st_buffer=nl.sbuf):
    st = nl.ndarray((k_s, m), dtype=nl.float8_e4m3fn_x4, buffer=st_buffer)
    mv = nl.ndarray((k_m, n), dtype=nl.float8_e4m3fn_x4, buffer=nl.sbuf)
    ss = nl.ndarray((k_s, st_scale_cols or m), dtype=nl.uint8, buffer=nl.sbuf)
    ms = nl.ndarray((k_m, n), dtype=nl.uint8, buffer=nl.sbuf)
    dst = nl.ndarray(dst_shape or (m, n), dtype=dst_dtype, buffer=nl.psum)
    return dict(dst=dst, stationary=st, moving=mv, stationary_scale=ss, moving_scale=ms)


def e_mm_48(src):
    nisa.nc_matmul_mx(**_mm(k_s=48, k_m=48))  # ERR:mm_48


def e_mm_96(src):
    nisa.nc_matmul_mx(**_mm(k_s=96, k_m=96))  # ERR:mm_96


def e_mm_par_mismatch(src):
    nisa.nc_matmul_mx(**_mm(k_s=128, k_m=64))  # ERR:mm_par_mismatch


def e_mm_odd(src):
    nisa.nc_matmul_mx(**_mm(m=3))  # ERR:mm_odd


def e_mm_stationary_130(src):
    nisa.nc_matmul_mx(**_mm(m=130, dst_shape=(128, 512)))  # ERR:mm_stationary_130


def e_mm_moving_513(src):
    nisa.nc_matmul_mx(**_mm(n=513))  # ERR:mm_moving_513


def e_mm_dst_fp16(src):
    nisa.nc_matmul_mx(**_mm(dst_dtype=nl.float16))  # ERR:mm_dst_fp16


def e_mm_dst_free(src):
    nisa.nc_matmul_mx(**_mm(dst_shape=(128, 256)))  # ERR:mm_dst_free


def e_mm_scale_cols(src):
    nisa.nc_matmul_mx(**_mm(st_scale_cols=64))  # ERR:mm_scale_cols


def e_mm_psum_stationary(src):
    nisa.nc_matmul_mx(**_mm(m=64, n=64, st_buffer=nl.psum))  # ERR:mm_psum_stationary


def e_mm_tile_column(src):
    nisa.nc_matmul_mx(**_mm(k_s=64, k_m=64, m=64), tile_position=(0, 64), tile_size=(64, 64))  # ERR:mm_tile_column


def e_mm_tile_fit(src):
    nisa.nc_matmul_mx(**_mm(), tile_position=(0, 0), tile_size=(64, 128))  # ERR:mm_tile_fit


def e_mm_tile_alone(src):
    nisa.nc_matmul_mx(**_mm(k_s=64, k_m=64), tile_size=(64, 128))  # ERR:mm_tile_alone


Q, MM = "nisa.quantize_mx", "nisa.nc_matmul_mx"
ERRORS = {  # marker: (kernel, target, code, message fragments, api)
    "on_trn2": (e_on_trn2, "trn2", "err_min_arch_support_for_inst",
                "'nisa.quantize_mx' is available on NeuronCore-v4 and newer only; target 'trn2' is NeuronCore-v3", Q),
    "src_48": (e_src_48, "trn3", "err_invalid_mx_packing", "quantize_mx src must access a multiple of 32 partitions.", Q),
    "src_free_62": (e_src_free_62, "trn3", "err_invalid_mx_packing",
                    "quantize_mx src must have the last free dimension size to be multiple of 4.", Q),
    "dst_free": (e_dst_free, "trn3", "err_elements_per_partition_mismatch",
                 "'dst' of 'quantize_mx' has 8 elements per partition, but must have exactly 16", Q),
    "scale_rows": (e_scale_rows, "trn3", "err_invalid_mx_packing",
                   "quantize_mx dst_scale must hold the scales of every 32-partition quadrant.", Q),
    "src_fp32": (e_src_fp32, "trn3", "err_supported_operand_dtype",
                 "operand 'src' of 'nisa.quantize_mx' has dtype 'float32', which is not supported; "
                 "expected one of {bfloat16, float16}", Q),
    "exp_on_packed": (e_exp_on_packed, "trn3", "err_supported_operand_dtype",
                      "'exp' cannot compute on `q` of packed mx dtype 'float8_e4m3fn_x4'", "nl.exp"),
    "cast_packed": (e_cast_packed, "trn3", "err_supported_operand_dtype",
                    "'tensor_copy' cannot compute on `q` of packed mx dtype 'float8_e4m3fn_x4'", "nisa.tensor_copy"),
    "mm_48": (e_mm_48, "trn3", "err_invalid_mx_packing", "nc_matmul_mx stationary/moving must access 32/64/128 partitions.", MM),
    "mm_96": (e_mm_96, "trn3", "err_invalid_mx_packing", "nc_matmul_mx stationary/moving must access 32/64/128 partitions.", MM),
    "mm_par_mismatch": (e_mm_par_mismatch, "trn3", "err_param_shape_incompatible_with_matmul",
                        "Number of partitions mismatch", MM),
    "mm_odd": (e_mm_odd, "trn3", "err_invalid_mx_packing",
               "nc_matmul_mx stationary must have an even number of packed (x4) elements per partition.", MM),
    "mm_stationary_130": (e_mm_stationary_130, "trn3", "err_size_of_dimension_exceed_arch_limit",
                          "of 'nc_matmul_mx' exceed architecture limitation of 128", MM),
    "mm_moving_513": (e_mm_moving_513, "trn3", "err_size_of_dimension_exceed_arch_limit",
                      "of 'nc_matmul_mx' exceed architecture limitation of 512", MM),
    "mm_dst_fp16": (e_mm_dst_fp16, "trn3", "err_supported_operand_dtype",
                    "operand 'dst' of 'nisa.nc_matmul_mx' has dtype 'float16', which is not supported; "
                    "expected one of {float32, bfloat16}", MM),
    "mm_dst_free": (e_mm_dst_free, "trn3", "err_elements_per_partition_mismatch",
                    "'dst' of 'nc_matmul_mx' has 256 elements per partition, but must have exactly 512", MM),
    "mm_scale_cols": (e_mm_scale_cols, "trn3", "err_elements_per_partition_mismatch",
                      "'stationary_scale' of 'nc_matmul_mx' has 64 elements per partition, but must have exactly 128",
                      MM),
    "mm_psum_stationary": (e_mm_psum_stationary, "trn3", "err_unsupported_memory",
                           "Expected operand 'stationary' of 'nc_matmul_mx' to be in address space 'sbuf'", MM),
    "mm_tile_column": (e_mm_tile_column, "trn3", "err_unsupported_args",
                       "tile_size (64, 64): nc_matmul_mx tiles the PE array by rows only (column_size 128)", MM),
    "mm_tile_fit": (e_mm_tile_fit, "trn3", "err_unsupported_args",
                    "(128 rows, 128 columns of the PE array) does not fit in tile_size (64, 128)", MM),
    "mm_tile_alone": (e_mm_tile_alone, "trn3", "err_unsupported_args",
                      "tile_position and tile_size are set together (tiling mode), or neither", MM),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_mx_error_code_message_and_location(case):
    fn, target, code, message, api = ERRORS[case]
    e = trace_error(nki.jit(fn, platform_target=target), bf16((128, 64), seed=0))
    token = {"exp_on_packed": "nl.exp", "cast_packed": "nisa.tensor_copy"}.get(case, "nisa.")
    check_diag(e, M, code, message, [(case, token)], api=api)


@pytest.mark.parametrize("target", ["inf1", "trn1", "inf2", "trn2"])
@pytest.mark.parametrize("fn", [k_quantize, k_matmul_bf16])
def test_mx_apis_need_neuroncore_v4(target, fn):
    args = (bf16((32, 8), 0), nl.float8_e4m3fn_x4) if fn is k_quantize else (bf16((32, 8), 0), bf16((32, 8), 1))
    e = trace_error(nki.jit(fn, platform_target=target), *args)
    assert e.code == "err_min_arch_support_for_inst" and "NeuronCore-v4" in e.message
    assert nki.jit(fn, platform_target="trn3").trace(None, args, {}) is not None


@pytest.mark.parametrize("k", [32, 64, 128])
@pytest.mark.parametrize("m,n", [(2, 1), (128, 512)])
def test_matmul_mx_limits_pass_at_the_boundary(k, m, n):
    def fn(src):
        out = nl.ndarray((m, n), dtype=nl.float32, buffer=nl.shared_hbm)
        ops = _mm(k_s=k, k_m=k, m=m, n=n)
        nisa.nc_matmul_mx(**ops)
        nl.store(out, nl.copy(ops["dst"]))
        return out
    assert nki.jit(fn, platform_target="trn3").trace(None, (bf16((128, 64), 0),), {}) is not None


def test_packed_tiles_move_unchanged_through_hbm_and_sbuf():
    def fn(words):
        out = nl.ndarray(words.shape, dtype=nl.float8_e5m2_x4, buffer=nl.shared_hbm)
        t = nl.load(words.view(nl.float8_e5m2_x4))
        nisa.dma_copy(dst=out, src=nisa.tensor_copy(t))
        return out
    words = np.random.default_rng(7).integers(0, 2 ** 32, size=(64, 48), dtype=np.uint32)
    out = nki.jit(fn, platform_target="trn3")(words)
    assert out.dtype == np.uint32
    np.testing.assert_array_equal(out, words)


def k_matmul_mx_row_tiles(st, mv, st_scale, mv_scale, tiled):
    """Two independent 64-row mx matmuls, on the two row halves of the PE array when `tiled`."""
    k, m = st.shape
    n = mv.shape[1]
    out = nl.ndarray((2, m, n), dtype=nl.float32, buffer=nl.shared_hbm)
    s_sb, m_sb = nl.load(st.view(nl.float8_e4m3fn_x4)), nl.load(mv.view(nl.float8_e4m3fn_x4))
    ss, ms = nl.load(st_scale), nl.load(mv_scale)
    for h in nl.static_range(2):
        acc = nl.ndarray((m, n), dtype=nl.float32, buffer=nl.psum)
        tiling = dict(tile_position=(64 * h, 0), tile_size=(64, 128)) if tiled else {}
        nisa.nc_matmul_mx(dst=acc, stationary=s_sb, moving=m_sb, stationary_scale=ss, moving_scale=ms, **tiling)
        nl.store(out[h], nl.copy(acc))
    return out


def test_matmul_mx_row_tiles_compute_the_same_and_run_side_by_side():
    k, m, n = 64, 16, 512
    _, _, st, ss = random_operand("float8_e4m3fn_x4", k, m, seed=3)
    _, _, mv, ms = random_operand("float8_e4m3fn_x4", k, n, seed=4)
    args = (st, mv, ss, ms)
    whole = nki.jit(k_matmul_mx_row_tiles, platform_target="trn3")(*args, False)
    tiled = nki.jit(k_matmul_mx_row_tiles, platform_target="trn3")(*args, True)
    np.testing.assert_array_equal(tiled, whole)
    # Whole-array matmuls run one after the other (512 moving columns each, one per cycle at
    # 2.4 GHz); on its row half, the second issues after the first's share of the array's time
    # (half of it) and they overlap: the Tensor Engine is busy 1.5 matmuls' time, not 2.
    busy = [nkic.profile(nki.jit(k_matmul_mx_row_tiles, platform_target="trn3"), *args, t, target="trn3")
            .engines["pe"].busy_us for t in (False, True)]
    assert busy == pytest.approx([2 * 512 / 2400, 1.5 * 512 / 2400])
