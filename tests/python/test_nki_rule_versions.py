"""Instruction rules that a version introduced hold from that version (docs/rules.md): 0.3's
tightening (dma_copy from PSUM, a fractional memset value into an integer tile, range_select's
FP32_MIN fill) and 0.5's nl.rsqrt of PSUM. Before it the form runs, checked against numpy;
from it, the rule's own diagnostic at the user's line. And instruction forms a version
brought: 0.6's tensor_scalar_reduce(reduce_res=None), 0.7's tensor_partition_reduce ops mean
(0.6's average, still taken) and bitwise_xor."""
import numpy as np
import pytest

import nki
import nki.isa as nisa
import nki.language as nl
from mx_reference import quantize_ref, scale_rows, unpack
from nki_current_util import loaded, quantize_e4m3fn, sbuf, stored
import nkic
from nki_test_util import Markers, check_diag, trace_error

M = Markers(__file__)
X = np.random.default_rng(0).uniform(0.5, 2, (128, 64)).astype(np.float32)
FP32_MIN = np.float32(-3.4028235e38)


@pytest.fixture(autouse=True)
def _no_version(monkeypatch):
    monkeypatch.delenv("NKIC_NKI_VERSION", raising=False)
    monkeypatch.delenv("NEURON_PLATFORM_TARGET_OVERRIDE", raising=False)


@nki.jit
def dma_from_psum(a):
    p = nl.ndarray(a.shape, nl.float32, buffer=nl.psum)
    nisa.tensor_copy(dst=p, src=loaded(a))
    o = nl.ndarray(a.shape, nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=o, src=p)  # ERR:psum
    return o


@nki.jit
def fractional_memset(a):
    t = sbuf((128, 8), nl.int32)
    nisa.memset(dst=t, value=-2.75)  # ERR:memset
    return stored(t)


@nki.jit
def range_select_zero_fill(a):
    x, y, lo, hi = loaded(a), sbuf(a.shape), sbuf((128, 1)), sbuf((128, 1))
    nisa.memset(dst=lo, value=8.0)
    nisa.memset(dst=hi, value=16.0)
    nisa.range_select(dst=y, on_true_tile=x, comp_op0=nl.greater_equal, comp_op1=nl.less, bound0=lo,  # ERR:rsel
                      bound1=hi, on_false_value=0.0)
    return stored(y)


@nki.jit
def rsqrt_of_psum(a):
    t = nl.ndarray(a.shape, nl.float32, buffer=nl.psum)
    nisa.tensor_copy(dst=t, src=loaded(a))
    return stored(nl.rsqrt(t))  # ERR:rsqrt


COL = np.arange(64)
RULES = [
    # kernel, marker, token, the last version without the rule, the first with it, numpy, code, message
    (dma_from_psum, "psum", "nisa.", "0.2", "0.3", X, "err_unsupported_memory",
     "Expected operand 'src' of 'dma_copy' to be in address space 'sbuf or hbm', but got a tile in 'psum' instead."),
    # Converted as the simulator of its time did: truncated toward zero (rounding came in 0.6).
    (fractional_memset, "memset", "nisa.", "0.2", "0.3", np.full((128, 8), -2, np.int32), "err_memset_value_dtype",
     "'memset' value -2.75 does not fit dst dtype 'int32': an integer tensor takes an integer value"),
    (range_select_zero_fill, "rsel", "nisa.", "0.2", "0.3", np.where((COL >= 8) & (COL < 16), X, 0),
     "err_unsupported_args", "unsupported arguments to 'nisa.range_select': on_false_value is 0; it must be FP32_MIN "
     "(-3.4028235e+38, nl.fp32.min)"),
    (rsqrt_of_psum, "rsqrt", "nl.", "0.4", "0.5", 1 / np.sqrt(X), "err_unsupported_memory",
     "Expected operand 'x' of 'rsqrt' to be in address space 'sbuf', but got a tile in 'psum' instead."),
]
IDS = ["dma_copy_psum", "memset_value", "range_select_fill", "rsqrt_psum"]


@pytest.mark.parametrize("kernel,marker,token,before,since,expected,code,message", RULES, ids=IDS)
def test_the_form_runs_before_the_rule(monkeypatch, kernel, marker, token, before, since, expected, code, message):
    for version in sorted({"0.2", before}):
        monkeypatch.setenv("NKIC_NKI_VERSION", version)
        got = nki.simulate(kernel)(X)
        assert got.dtype == expected.dtype, version
        np.testing.assert_allclose(got, expected, rtol=1e-5, err_msg=version)


@pytest.mark.parametrize("kernel,marker,token,before,since,expected,code,message", RULES, ids=IDS)
def test_the_rule_holds_from_its_version(monkeypatch, kernel, marker, token, before, since, expected, code, message):
    for version in (since, ""):  # "": the newest, by default
        monkeypatch.setenv("NKIC_NKI_VERSION", version)
        check_diag(trace_error(kernel, X), M, code, message, [(marker, token)])


def partition_reduce_with(op, dtype):
    @nki.jit
    def kernel(a):
        x, r = loaded(a), sbuf((1, a.shape[1]), dtype)
        nisa.tensor_partition_reduce(dst=r, op=op, data=x)  # ERR:partition
        return stored(r)
    return kernel


XI = np.random.default_rng(1).integers(0, 2**20, (32, 16)).astype(np.int32)
XF = np.random.default_rng(2).uniform(-1, 1, (32, 16)).astype(np.float32)
PARTITION_OPS = [
    (nl.mean, nl.float32, XF, XF.mean(axis=0), "op=nl.mean", "op=nl.average"),
    (nl.bitwise_xor, nl.int32, XI, np.bitwise_xor.reduce(XI, axis=0), "op=nl.bitwise_xor",
     "nisa.nc_transpose, then nisa.tensor_reduce(op=nl.bitwise_xor) over the free dim"),
]


@pytest.mark.parametrize("op,dtype,data,expected,form,instead", PARTITION_OPS, ids=["mean", "bitwise_xor"])
def test_partition_reduce_ops_new_in_0_7(monkeypatch, op, dtype, data, expected, form, instead):
    for version in ("0.7", ""):
        monkeypatch.setenv("NKIC_NKI_VERSION", version)
        np.testing.assert_allclose(nki.simulate(partition_reduce_with(op, dtype))(data)[0], expected, rtol=1e-5,
                                   atol=1e-6, err_msg=version)
    monkeypatch.setenv("NKIC_NKI_VERSION", "0.6")
    with pytest.raises(nkic.NKIError) as info:
        nki.simulate(partition_reduce_with(op, dtype))(data)
    check_diag(info.value, M, "err_not_in_nki_version",
               f"nisa.tensor_partition_reduce({form}) is not in nki 0.6 (NKIC_NKI_VERSION=0.6): it came in nki 0.7",
               [("partition", "nisa.")])
    assert info.value.hint == f"NKIC_NKI_VERSION=0.7 or newer serves it; nki 0.6 writes {instead}"


@pytest.mark.parametrize("version", ["0.6", ""])
def test_partition_reduce_average_is_taken_at_every_version(monkeypatch, version):
    monkeypatch.setenv("NKIC_NKI_VERSION", version)
    got = nki.simulate(partition_reduce_with(nl.average, nl.float32))(XF)
    np.testing.assert_allclose(got[0], XF.mean(axis=0), rtol=1e-5, atol=1e-6)


@nki.jit
def reduce_in_two_steps(a):
    x, y, total = loaded(a), sbuf(a.shape), sbuf((a.shape[0], 1))
    nisa.tensor_scalar_reduce(dst=y, data=x, op0=nl.multiply, operand0=2.0, reduce_op=nl.add,  # ERR:kept
                              reduce_res=None)
    nisa.tensor_scalar_reduce(dst=y, data=x, op0=nl.add, operand0=1.0, reduce_op=nl.add, reduce_res=total,
                              reduce_cmd=nisa.reduce_cmd.reduce)
    return stored(total)


def test_a_reduction_stays_in_the_accumulator_from_0_6(monkeypatch):
    for version in ("0.6", ""):
        monkeypatch.setenv("NKIC_NKI_VERSION", version)
        got = nki.simulate(reduce_in_two_steps)(X)
        np.testing.assert_allclose(got[:, 0], (2 * X).sum(axis=1) + (X + 1).sum(axis=1), rtol=1e-5, err_msg=version)
    monkeypatch.setenv("NKIC_NKI_VERSION", "0.5")
    with pytest.raises(nkic.NKIError) as info:
        nki.simulate(reduce_in_two_steps)(X)
    check_diag(info.value, M, "err_not_in_nki_version",
               "nisa.tensor_scalar_reduce(reduce_res=None) is not in nki 0.5 (NKIC_NKI_VERSION=0.5): it came in nki 0.6",
               [("kept", "nisa.")])
    assert info.value.hint == "NKIC_NKI_VERSION=0.6 or newer serves it; nki 0.5 writes a (P, 1) reduce_res tile"


@pytest.mark.parametrize("version, twice", [("0.3", False), ("0.4", False), ("0.5", True), ("0.8", True)])
def test_quantize_mx_scale_is_the_ocp_sample_scale_before_0_5_and_twice_it_after(version, twice, monkeypatch):
    # A block whose largest value is 300: the OCP sample scale is 2^0 (300 rounds to 288), twice it
    # 2^1 (150 rounds to 144).
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn3")
    monkeypatch.setenv("NKIC_NKI_VERSION", version)
    src = np.random.default_rng(1).uniform(-3, 3, (32, 16)).astype(nl.bfloat16)
    src[0, 0] = 300.0
    data, scale = nki.simulate(quantize_e4m3fn)(src)
    codes, scales = quantize_ref("float8_e4m3fn_x4", src.astype(np.float32), twice=twice)
    assert scales[0, 0] == (128 if twice else 127)
    np.testing.assert_array_equal(unpack("float8_e4m3fn_x4", data), codes)
    rows = scale_rows(scales)
    for r in range(32):
        np.testing.assert_array_equal(scale[r], rows.get(r, np.zeros(4)), err_msg=f"scale row {r}")


@nki.jit
def abs_ops(a):
    x, big, small = loaded(a), sbuf(a.shape), sbuf(a.shape)
    nisa.tensor_tensor(dst=big, data1=x, data2=x, op=nl.abs_max)  # ERR:abs_max
    nisa.tensor_scalar(dst=small, data=x, op0=nl.abs_min, operand0=0.5)  # ERR:abs_min
    return stored(big), stored(small)


@nki.jit
def prelu(a):
    y = sbuf(a.shape)
    nisa.activation(dst=y, op=nl.prelu, data=loaded(a))  # ERR:prelu
    return stored(y)


@nki.jit
def e8m0_tile(a):
    s = nl.ndarray((32, 4), nl.float8_e8m0fnu, buffer=nl.sbuf)  # ERR:e8m0
    nisa.memset(dst=s, value=1.0)
    return stored(loaded(a))


@pytest.mark.parametrize("kernel,marker,token,form,since,instead", [
    (abs_ops, "abs_max", "nisa.", "nl.abs_max", "0.4", "nl.abs of each operand, then nl.maximum"),
    (prelu, "prelu", "nisa.", "nl.prelu", "0.4", "nl.maximum(x, 0) plus relu_param times nl.minimum(x, 0)"),
    (e8m0_tile, "e8m0", "nl.", "nl.float8_e8m0fnu", "0.5", "nl.uint8 scale tiles"),
], ids=["abs_max", "prelu", "float8_e8m0fnu"])
def test_alu_ops_and_dtypes_a_version_brought(monkeypatch, kernel, marker, token, form, since, instead):
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn3")
    a = np.random.default_rng(3).uniform(-1, 1, (32, 8)).astype(np.float32)
    for version in (since, ""):
        monkeypatch.setenv("NKIC_NKI_VERSION", version)
        nki.simulate(kernel)(a)
    before = f"0.{int(since[2]) - 1}"
    monkeypatch.setenv("NKIC_NKI_VERSION", before)
    with pytest.raises(nkic.NKIError) as info:
        nki.simulate(kernel)(a)
    check_diag(info.value, M, "err_not_in_nki_version",
               f"{form} is not in nki {before} (NKIC_NKI_VERSION={before}): it came in nki {since}",
               [(marker, token)])
    assert info.value.hint == f"NKIC_NKI_VERSION={since} or newer serves it; nki {before} writes {instead}"


def test_abs_max_and_abs_min_compute_their_signed_magnitudes_from_0_4(monkeypatch):
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn3")
    monkeypatch.setenv("NKIC_NKI_VERSION", "0.4")
    a = np.array([[1.0, -3.0, 0.25, -0.75]] * 32, np.float32)
    big, small = nki.simulate(abs_ops)(a)
    np.testing.assert_array_equal(big, a)
    np.testing.assert_array_equal(small, np.where(np.abs(a) < 0.5, a, 0.5))
