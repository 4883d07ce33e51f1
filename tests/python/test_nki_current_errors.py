"""The 0.3+ legality rules of the current nki API (NKI_CURRENT_API.md §9) and the
rejected constructs of its accepted Python subset (§2.3): each a diagnostic with
its code, message and the user's line."""
import numpy as np
import pytest

import nki
import nki.isa as nisa
import nki.language as nl
import nkic
from nki_test_util import Markers, check_diag, trace_error

M = Markers(__file__)
X = np.ones((128, 64), np.float32)


@nki.jit
def dma_from_psum(a):
    p = nl.ndarray((128, 64), nl.float32, buffer=nl.psum)
    o = nl.ndarray((128, 64), nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=o, src=p)  # ERR:psum
    return o


@nki.jit
def hwdge_cast(a):
    t = nl.ndarray((128, 64), nl.bfloat16, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a, dge_mode=nisa.dge_mode.hwdge)  # ERR:hwdge
    return a


@nki.jit
def hwdge_on_trn1(a):
    t = nl.ndarray((128, 64), nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a, dge_mode=nisa.dge_mode.hwdge)  # ERR:hwdge_trn1
    return a


@nki.jit
def raw_enum(a):
    t = nl.ndarray((128, 64), nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a, oob_mode=1)  # ERR:raw_enum
    return a


@nki.jit
def dge_mode_out_of_range(a):
    t = nl.ndarray((128, 64), nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a, dge_mode=7)  # ERR:dge_range
    return a


@nki.jit
def raw_engine(a):
    t = nl.ndarray((128, 64), nl.float32, buffer=nl.sbuf)
    nisa.memset(dst=t, value=0.0, engine=5)  # ERR:raw_engine
    return a


@nki.jit
def tensor_tensor_unpaired_dims(a):
    x = nl.ndarray((128, 2, 3), nl.float32, buffer=nl.sbuf)
    y = nl.ndarray((128, 3, 2), nl.float32, buffer=nl.sbuf)
    nisa.memset(dst=y, value=0.0)
    nisa.memset(dst=x, value=0.0)
    nisa.tensor_tensor(dst=x, data1=x, data2=y, op=nl.add)  # ERR:unpaired
    return a


@nki.jit
def memset_float_into_int(a):
    t = nl.ndarray((128, 64), nl.int32, buffer=nl.sbuf)
    nisa.memset(dst=t, value=1.5)  # ERR:memset
    return a


@nki.jit
def output_in_private_hbm(a):
    o = nl.ndarray((128, 64), nl.float32, buffer=nl.hbm)  # ERR:private_hbm
    nisa.dma_copy(dst=o, src=a)
    return o


@nki.jit
def misspelled_keyword(a):
    t = nl.ndarray((128, 64), nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, srcc=a)  # ERR:kwarg
    return a


@nki.jit
def removed_rmw_keyword(a):
    t = nl.ndarray((128, 64), nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a, dst_rmw_op=nl.add)  # ERR:rmw
    return a


@nki.jit
def string_buffer(a):
    t = nl.ndarray((128, 64), nl.float32, buffer='sbuf')  # ERR:buffer
    return a


@nki.jit
def uses_is(a):
    if a.shape is a.shape:  # ERR:is
        return a
    return a


@nki.jit
def keyword_only(a, *, scale=1):  # ERR:kwonly
    return a


@nki.jit
def int_dict_key(a):
    table = {1: 2}  # ERR:dict
    return a


@nki.jit
def takes_list(a, sizes):
    return a


@nki.jit
def matmul_into_sbuf(a):
    x = nl.ndarray((128, 64), nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=x, src=a)
    r = nl.ndarray((64, 64), nl.float32, buffer=nl.sbuf)
    nisa.nc_matmul(r, x, x)  # ERR:matmul_dst
    return a


@nki.jit
def unsupported_ap(a):
    x = nl.ndarray((128, 64), nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=x, src=x.ap([[32, 128], [1, 64]]))  # ERR:ap
    return a


@nki.jit
def psum_off_bank(a):
    p = nl.ndarray((128, 512), nl.float32, buffer=nl.psum, address=(0, 100))  # ERR:bank
    return a


@nki.jit
def psum_past_the_banks(a):
    p = nl.ndarray((128, 512), nl.float32, buffer=nl.psum, address=(0, 8 * 2048))  # ERR:past_banks
    return a


@nki.jit
def sbuf_past_partitions(a):
    t = nl.ndarray((64, 16), nl.float32, buffer=nl.sbuf, address=(96, 0))  # ERR:partitions
    return a


CASES = [
    (dma_from_psum, "psum", "nisa.", "err_unsupported_memory",
     "Expected operand 'src' of 'dma_copy' to be in address space 'sbuf or hbm', but got a tile in 'psum' instead."),
    (hwdge_cast, "hwdge", "nisa.", "err_hwdge_dtype_mismatch",
     "'dma_copy' with dge_mode.hwdge copies bytes and cannot cast: src is 'float32', dst is 'bfloat16'"),
    (raw_enum, "raw_enum", "nisa.", "err_unexpected_type_of_operand",
     "'oob_mode': got 1; since nki 0.3 it is a member of nisa.oob_mode"),
    (dge_mode_out_of_range, "dge_range", "nisa.", "err_unexpected_type_of_operand",
     "'dge_mode': got 7; nisa.dge_mode numbers are unknown=0, swdge=1, hwdge=2, none=3"),
    (raw_engine, "raw_engine", "nisa.", "err_unexpected_type_of_operand",
     "'engine': got 5; since nki 0.3 it is a member of nisa.engine"),
    (tensor_tensor_unpaired_dims, "unpaired", "nisa.", "err_tile_shape_mismatch",
     "number of elements per partition mismatch in parameters (data1[128, 2, 3], data2[128, 3, 2]) of "
     "'tensor_tensor'"),
    (memset_float_into_int, "memset", "nisa.", "err_memset_value_dtype",
     "'memset' value 1.5 does not fit dst dtype 'int32': an integer tensor takes an integer value"),
    (output_in_private_hbm, "private_hbm", "nl.", "err_output_not_in_shared_hbm",
     "kernel output 'o' is in 'private_hbm'; outputs must be in shared HBM"),
    (misspelled_keyword, "kwarg", "nisa.", "err_unsupported_args",
     "unsupported arguments to 'nisa.dma_copy': unexpected keyword argument 'srcc'; did you mean 'src'?"),
    (removed_rmw_keyword, "rmw", "nisa.", "err_unsupported_args",
     "unexpected keyword argument 'dst_rmw_op'"),
    (string_buffer, "buffer", "nl.", "err_unsupported_buffer", "unknown buffer 'sbuf'"),
    (keyword_only, "kwonly", "scale", "err_unsupported_python_construct",
     "a keyword-only parameter (after '*') is not supported in an NKI kernel"),
    (matmul_into_sbuf, "matmul_dst", "nisa.", "err_unsupported_memory",
     "Expected operand 'dst' of 'nc_matmul' to be in address space 'psum', but got a tile in 'sbuf' instead."),
    (unsupported_ap, "ap", "x.ap", "err_unsupported_index",
     ".ap() on an on-chip tensor reads whole partitions: the first pair's step is 64"),
    (psum_off_bank, "bank", "nl.", "err_psum_address_not_bank_aligned",
     "address= of PSUM tensor 'p' starts at free byte offset 100, not on a PSUM bank boundary (a multiple of 2048 "
     "bytes)"),
    (psum_past_the_banks, "past_banks", "nl.", "err_address_out_of_range",
     "address= of 'p' does not fit: bytes 16384..18431 of a 16384-byte partition on trn2"),
    (sbuf_past_partitions, "partitions", "nl.", "err_address_out_of_range",
     "address= of 't' does not fit: partitions 96..159 of 128"),
]


@pytest.mark.parametrize("kernel,marker,token,code,message", CASES, ids=[c[1] for c in CASES])
def test_rule(monkeypatch, kernel, marker, token, code, message):
    monkeypatch.delenv("NEURON_PLATFORM_TARGET_OVERRIDE", raising=False)
    check_diag(trace_error(kernel, X), M, code, message, [(marker, token)])


PARSER_FRONTEND_CASES = [
    (uses_is, "is", "a.shape is", "'is' / 'is not' between values is not supported in an NKI kernel"),
    (int_dict_key, "dict", "1", "a non-string dict key (1) is not supported in an NKI kernel"),
]


@pytest.mark.parametrize("kernel,marker,token,message", PARSER_FRONTEND_CASES,
                         ids=[c[1] for c in PARSER_FRONTEND_CASES])
def test_rule_of_the_parser_frontend(monkeypatch, kernel, marker, token, message):
    """nki 0.6's parser frontend rejects them; since 0.7 they warn (test_nki_tracing_07.py)."""
    monkeypatch.setenv("NKIC_NKI_VERSION", "0.6")
    check_diag(trace_error(kernel, X), M, "err_unsupported_python_construct", message, [(marker, token)])


def test_hwdge_needs_neuroncore_v3(monkeypatch):
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn1")
    e = trace_error(hwdge_on_trn1, X)
    check_diag(e, M, "err_min_arch_support_for_hwdge", "hwdge", [("hwdge_trn1", "nisa.")])


@pytest.mark.parametrize("sizes", [[1, 2], (1, [2]), ((1,), {"k": [2]})], ids=["list", "in_tuple", "in_dict"])
def test_list_argument_is_rejected_at_the_call(sizes):
    with pytest.raises(nkic.NKIError) as info:
        nki.simulate(takes_list)(X, sizes)  # ERR:list
    check_diag(info.value, M, "err_removed_in_nki_version",
               "a list argument to a kernel was removed in nki 0.3 (nkic serves nki 0.8)", [("list", "nki.")])
    assert info.value.hint.startswith("use a tuple: tuple(...) (") and "NKIC_NKI_VERSION=0.2" in info.value.hint


def test_tuples_of_values_are_accepted():
    assert (nki.simulate(takes_list)(X, (1, (2, 3))) == X).all()


def test_platform_target_is_rejected():
    with pytest.raises(nkic.NKIError) as info:
        nki.jit(platform_target="trn2")  # ERR:platform_target
    check_diag(info.value, M, "err_removed_in_nki_version",
               "nki.jit(platform_target=) was removed in nki 0.3 (nkic serves nki 0.8)", [("platform_target", "nki.")])


def test_no_argument_call():
    with pytest.raises(nkic.NKIError) as info:
        nki.simulate(uses_is)()  # ERR:no_args
    check_diag(info.value, M, "err_unsupported_args", "the kernel is called without arguments", [("no_args", "nki.")])


@pytest.mark.parametrize("name", ["baremetal", "benchmark", "profile", "simulate_kernel"])
def test_entry_points_not_available(name):
    with pytest.raises(nkic.NKIError) as info:
        getattr(nki, name)(uses_is)  # ERR:unavailable
    check_diag(info.value, M, "err_unsupported_args", "is not available in nki 0.3+", [("unavailable", "getattr")])


@nki.jit
def optional_argument(a, b=None):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    src = a if b is None else b  # `is None` stays accepted (the kernel library relies on it)
    nisa.dma_copy(dst=out, src=src)
    return out


@nki.jit
def copy_with_numbered_dge_mode(a):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=a, dge_mode=3)  # the kernel library's spelling of dge_mode.none
    return out


def test_dge_mode_takes_its_number():
    assert (nki.simulate(copy_with_numbered_dge_mode)(X) == 1).all()


def test_is_none_is_accepted():
    assert (nki.simulate(optional_argument)(X) == 1).all()


def test_mode_is_ignored():
    kernel = nki.jit(mode="simulation")(optional_argument.func)
    assert isinstance(kernel, nki.Kernel)
