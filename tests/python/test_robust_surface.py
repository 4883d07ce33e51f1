"""Wrong arguments never crash, leak Python's own errors or nkic's internals: each is
a diagnostic with its code, a message naming the value, and the user's line."""
import copy
import inspect
import pickle

import numpy as np
import pytest

import nkic
from neuronxcc import nki
import neuronxcc.nki.compiler as ncc
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl
import neuronxcc.nki.typing as nt

from nki_test_util import Markers, check_diag, simulate, trace_error

M = Markers(__file__)
BIG = 2**64


# --- reshaping an index (nl.arange / nl.mgrid) with ':', None and '...' -----------------

def k_colon2(x):
    i = nl.arange(128)[:, :]  # ERR:colon2


def k_colon3(x):
    g = nl.mgrid[0:128, 0:64]
    i = g.p[:, :, :]  # ERR:colon3


def k_two_ellipsis(x):
    i = nl.arange(128)[..., ...]  # ERR:two_ellipsis


# --- integers beyond 64 bits, and numbers where an integer is expected ------------------

def k_big_slice(x):
    t = nl.load(x[0:BIG, :])  # ERR:big_slice


def k_big_neg_slice(x):
    t = nl.load(x[-BIG:128, :])  # ERR:big_neg_slice


def k_big_shape(x):
    t = nl.ndarray((128, 2**63), dtype=nl.float32)  # ERR:big_shape


def k_float_shape(x):
    t = nl.ndarray((1e30, 4), dtype=nl.float32)  # ERR:float_shape


def k_big_add(x):
    t = nl.load(x)
    y = t + BIG  # ERR:big_add


def k_big_mul(x):
    t = nl.load(x)
    y = t * -2**70  # ERR:big_mul


def k_big_index_add(x):
    i = nl.arange(128)[:, None]
    j = i + BIG  # ERR:big_index_add


def k_big_setitem(x):
    t = nl.ndarray((128, 64), dtype=nl.float32)
    t[BIG, 0] = 1.0  # ERR:big_setitem


def k_big_range(x):
    for i in range(BIG):  # ERR:big_range
        pass


def k_big_affine_range(x):
    for i in nl.affine_range(BIG):  # ERR:big_affine_range
        pass


def k_big_mgrid(x):
    i_p, i_f = nl.mgrid[0:BIG, 0:4]  # ERR:big_mgrid


def k_big_step(x):
    t = nl.load(x[0:128:BIG, :])  # ERR:big_step


def k_uint64_dim(x):
    t = nl.zeros((128, np.uint64(2**64 - 1)), dtype=nl.float32)  # ERR:uint64_dim


# --- wrong-typed arguments of the API ---------------------------------------------------

def k_arange_none(x):
    i = nl.arange(None)  # ERR:arange_none


def k_arange_noargs(x):
    i = nl.arange()  # ERR:arange_noargs


def k_seed_str(x):
    nl.random_seed("seed")  # ERR:seed_str


def k_deep_tuple_shape(x):
    t = x
    for _ in nl.static_range(513):
        t = (t, t)  # a DAG: its full repr would have 2**513 leaves
    nl.ndarray(t, dtype=nl.float32)  # ERR:deep_tuple_shape


def k_zeros_like_none(x):
    t = nl.zeros_like(None)  # ERR:zeros_like_none


def k_shared_constant_str(x):
    t = nl.shared_constant("abc")  # ERR:shared_constant_str


def k_affine_select_str(x):
    t = nl.load(x)
    i_p = nl.arange(128)[:, None]
    y = nisa.affine_select(i_p > 3, t, "zero")  # ERR:affine_select_str


def k_nc_transpose_none(x):
    y = nisa.nc_transpose(None)  # ERR:nc_transpose_none


def k_bn_aggr_str(x):
    y = nisa.bn_aggr("stats")  # ERR:bn_aggr_str


def k_memset_none(x):
    y = nisa.memset(None, 0.0, nl.float32)  # ERR:memset_none


def k_mgrid_nan(x):
    i_p, i_f = nl.mgrid[0:float("nan"), 0:4]  # ERR:mgrid_nan


def k_call_tile(x):
    t = nl.load(x)
    y = t(3)  # ERR:call_tile


def k_axis_none(x):
    t = nl.load(x)
    y = nl.sum(t, axis=[None])  # ERR:axis_none


def k_multi_buffer(x):
    for i in nl.affine_range(2, directives=ncc.multi_buffer("two")):  # ERR:multi_buffer
        pass


def k_pipeline_stages(x):
    for i in nl.affine_range(2, directives=ncc.pipeline_stages(None)):  # ERR:pipeline_stages
        pass


def k_no_reorder(x):
    for i in nl.affine_range(2, directives=ncc.no_reorder(3)):  # ERR:no_reorder
        pass


def k_nc_str(x):
    d = nl.nc("two")  # ERR:nc_str


def k_static_cast_tile(x):
    t = nl.load(x)
    y = nl.static_cast(t, nl.float32)  # ERR:static_cast_tile


# --- host-side Python protocols on traced values, and recursion -------------------------

def k_asarray(x):
    t = nl.load(x)
    a = np.asarray(t)  # ERR:asarray


def k_copy(x):
    t = nl.load(x)
    u = copy.copy(t)  # ERR:copy


def k_pickle(x):
    t = nl.load(x)
    s = pickle.dumps(t)  # ERR:pickle


def k_construct(x):
    t = nki.tensor((128, 4))  # ERR:construct


def _forever(t, n):
    return _forever(t, n + 1)  # ERR:recursion


def k_recursion(x):
    y = _forever(nl.load(x), 0)


def k_tensor_dims(x):
    s: nt.tensor[...] = nl.load(x)  # ERR:tensor_dims


def k_empty_extent(x):
    i_p, i_f = nl.mgrid[0:128, 8:2]  # ERR:empty_extent
    y = nl.exp(nl.load(x[i_p, i_f]))


def k_sbuf_overflow(x):
    t = nl.ndarray((128, 2**62), dtype=nl.float32, buffer=nl.sbuf)  # ERR:sbuf_wrap


FITS = "does not fit in a signed 64-bit integer"
CASES = {  # marker: (kernel, code, message(s), token, api)
    "colon2": (k_colon2, "err_unsupported_index", "too many indices for an index of 1 dimension(s): 2 ':' were given",
               "nl.arange", None),
    "colon3": (k_colon3, "err_unsupported_index", "too many indices for an index of 2 dimension(s): 3 ':' were given",
               "g.p", None),
    "two_ellipsis": (k_two_ellipsis, "err_unsupported_index", "an index can only have a single ellipsis ('...')",
                     "nl.arange", None),
    "big_slice": (k_big_slice, "err_unsupported_args", f"the integer 18446744073709551616 {FITS}", "x[", None),
    "big_neg_slice": (k_big_neg_slice, "err_unsupported_args", f"the integer -18446744073709551616 {FITS}", "x[",
                      None),
    "big_shape": (k_big_shape, "err_unsupported_args",
                  f"unsupported arguments to 'nl.ndarray': dimension 9223372036854775808 {FITS}", "nl.", "nl.ndarray"),
    "float_shape": (k_float_shape, "err_unsupported_args", f"dimension 1e+30 {FITS}", "nl.", "nl.ndarray"),
    "big_add": (k_big_add, "err_unsupported_args",
                f"unsupported arguments to 'nl.add': the integer 18446744073709551616 {FITS}", "t +", "nl.add"),
    "big_mul": (k_big_mul, "err_unsupported_args", f"the integer -1180591620717411303424 {FITS}", "t *",
                "nl.multiply"),
    "big_index_add": (k_big_index_add, "err_unsupported_args",
                      f"unsupported arguments to '+': the integer 18446744073709551616 {FITS}", "i +", "+"),
    "big_setitem": (k_big_setitem, "err_unsupported_args", f"the integer 18446744073709551616 {FITS}", "t[", None),
    "big_range": (k_big_range, "err_unsupported_args", f"loop bound 18446744073709551616 {FITS}", "range", None),
    "big_affine_range": (k_big_affine_range, "err_unsupported_args", f"loop bound 18446744073709551616 {FITS}",
                         "nl.", "nl.affine_range"),
    "big_mgrid": (k_big_mgrid, "err_unsupported_args",
                  f"unsupported arguments to 'nl.mgrid': stop 18446744073709551616 {FITS}", "nl.mgrid", "nl.mgrid"),
    "big_step": (k_big_step, "err_unsupported_args", f"slice step 18446744073709551616 {FITS}", "x[", None),
    "uint64_dim": (k_uint64_dim, "err_unsupported_args", f"dimension 18446744073709551615 {FITS}", "nl.",
                   "nl.zeros"),
    "arange_none": (k_arange_none, "err_unexpected_type_of_operand",
                    "unexpected type of operand 'nl.arange bound': got 'NoneType' None, expected an integer", "nl.",
                    "nl.arange"),
    "arange_noargs": (k_arange_noargs, "err_unsupported_args", "takes 1 or 2 bounds, got 0", "nl.", "nl.arange"),
    "deep_tuple_shape": (k_deep_tuple_shape, "err_unexpected_type_of_operand",
                         "unexpected type of operand 'dimension': got 'tuple' (((((((...), (...)), ((...), (...))), "
                         "(((...), (...)), ((..., expected an integer",
                         "nl.", "nl.ndarray"),
    "seed_str": (k_seed_str, "err_unexpected_type_of_operand",
                 "unexpected type of operand 'seed': got 'str' 'seed', expected an integer", "nl.", "nl.random_seed"),
    "zeros_like_none": (k_zeros_like_none, "err_unsupported_args",
                        ["unsupported arguments to 'nl.zeros_like'", "(called with a=None)"], "nl.", "nl.zeros_like"),
    "shared_constant_str": (k_shared_constant_str, "err_unsupported_args",
                            ["could not convert string to float", "(called with constant='abc')"], "nl.",
                            "nl.shared_constant"),
    "affine_select_str": (k_affine_select_str, "err_unsupported_args", "on_false_value='zero')", "nisa.",
                          "nisa.affine_select"),
    "nc_transpose_none": (k_nc_transpose_none, "err_unsupported_args", "(called with data=None)", "nisa.",
                          "nisa.nc_transpose"),
    "bn_aggr_str": (k_bn_aggr_str, "err_unexpected_type_of_operand",
                    "unexpected type of operand 'data': got 'str', expected a tile", "nisa.", "nisa.bn_aggr"),
    "memset_none": (k_memset_none, "err_unsupported_args", "(called with shape=None, value=0.0", "nisa.",
                    "nisa.memset"),
    "mgrid_nan": (k_mgrid_nan, "err_unexpected_type_of_operand",
                  "unexpected type of operand 'stop': got the float nan, expected an integer", "nl.mgrid", "nl.mgrid"),
    "call_tile": (k_call_tile, "err_unexpected_type_of_operand",
                  "unexpected type of operand 'callee': got a 'NkiTensor', which is not callable", "t(", None),
    "axis_none": (k_axis_none, "err_unexpected_type_of_operand",
                  "unexpected type of operand 'axis': got 'NoneType' None, expected an integer", "nl.", "nl.sum"),
    "multi_buffer": (k_multi_buffer, "err_unexpected_type_of_operand",
                     "unexpected type of operand 'factor': got 'str' 'two', expected an integer", "ncc.",
                     "ncc.multi_buffer"),
    "pipeline_stages": (k_pipeline_stages, "err_unexpected_type_of_operand",
                        "unexpected type of operand 'n': got 'NoneType' None", "ncc.", "ncc.pipeline_stages"),
    "no_reorder": (k_no_reorder, "err_unsupported_args",
                   "unsupported arguments to 'ncc.no_reorder': too many positional arguments", "ncc.",
                   "ncc.no_reorder"),
    "nc_str": (k_nc_str, "err_unexpected_type_of_operand", "unexpected type of operand 'n': got 'str' 'two'", "nl.",
               "nl.nc"),
    "static_cast_tile": (k_static_cast_tile, "err_unexpected_type_of_operand",
                         "got a traced 'NkiTensor' converted to a numpy array", "nl.", "nl.static_cast"),
    "asarray": (k_asarray, "err_unexpected_type_of_operand", "got a traced 'NkiTensor' converted to a numpy array",
                "np.", None),
    "copy": (k_copy, "err_unexpected_type_of_operand", "got a traced 'NkiTensor' pickled or copied", "copy.", None),
    "pickle": (k_pickle, "err_unexpected_type_of_operand", "got a traced 'NkiTensor' pickled or copied", "pickle.",
               None),
    "construct": (k_construct, "err_unsupported_args",
                  "unsupported arguments to 'nki.tensor': traced values are created by the NKI API", "nki.", None),
    "recursion": (k_recursion, "err_recursion_too_deep", "'_forever' calls itself more than", "_forever(", None),
    "empty_extent": (k_empty_extent, "err_invalid_shape", "tensor shape [-6] has a non-positive dimension",
                     "nl.mgrid", "nl.arange"),
    # 4 * 2**62 bytes would wrap to 0 in int64: the budget saturates instead.
    "sbuf_wrap": (k_sbuf_overflow, "err_stack_overflow_sbuf",
                  "Size of free dimensions 9223372036854775807 bytes per partition on SBUF buffer exceeds", "nl.",
                  "nl.ndarray"),
    "tensor_dims": (k_tensor_dims, "err_unexpected_type_of_operand",
                    "unexpected type of operand 'nt.tensor[...]': got (Ellipsis,); its dims are integers", "nt.", None),
}


@pytest.mark.parametrize("case", list(CASES))
def test_wrong_argument_is_a_diagnostic_at_the_user_line(case):
    fn, code, message, token, api = CASES[case]
    e = trace_error(fn, np.ones((128, 64), np.float32))
    check_diag(e, M, code, message, [(case, token)], api=api)
    assert "_nkic" not in str(e) and "incompatible function arguments" not in str(e)


def test_numpy_style_reshape_of_an_index_keeps_its_values():
    @nki.jit
    def k(x):
        out = nl.ndarray((128, 1), dtype=x.dtype, buffer=nl.shared_hbm)
        i_p = nl.arange(128)[..., :][:, None]   # '...' stands for the dims no ':' names
        nl.store(out[i_p, 0], nl.load(x[i_p, 0]))
        return out

    x = np.arange(128 * 4, dtype=np.float32).reshape(128, 4)
    np.testing.assert_array_equal(simulate(k, x), x[:, :1])


def _pair(t, extra):
    return [t, extra]


def test_a_helper_returning_a_list_that_holds_itself():
    @nki.jit
    def k(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        loop = []
        loop.append(loop)
        r = _pair(nl.load(x), loop)
        assert r[1][0] is r[1]  # the returned copy keeps the cycle
        nl.store(out, r[0])
        return out

    x = np.arange(128 * 4, dtype=np.float32).reshape(128, 4)
    np.testing.assert_array_equal(simulate(k, x), x)


# --- kernel arguments -------------------------------------------------------------------

def k_copy_in(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(out, nl.load(x))
    return out


def k_in_place(x: nt.mutable_tensor):
    nl.store(x, nl.load(x) + 1.0)
    return x


def test_empty_input_is_invalid_shape_at_the_call():
    with pytest.raises(nkic.NKIError) as info:
        nki.simulate_kernel(nki.jit(k_copy_in), np.ones((128, 0), np.float32))  # ERR:empty_input
    check_diag(info.value, M, "err_invalid_shape",
               "invalid tensor shape: the kernel argument 'x' has shape [128, 0], with an empty dimension",
               [("empty_input", "nki.")])


def test_a_target_that_is_not_a_name_is_an_unknown_target():
    kernel = nki.jit(k_copy_in, platform_target=1.5)
    with pytest.raises(nkic.NKIError) as info:
        nki.simulate_kernel(kernel, np.ones((128, 4), np.float32))  # ERR:target_float
    check_diag(info.value, M, "err_incorrect_target_type", "unknown platform_target '1.5'", [("target_float", "nki.")])


def test_read_only_array_for_an_in_place_parameter_is_refused_before_simulating():
    x = np.ones((128, 4), np.float32)
    x.flags.writeable = False
    with pytest.raises(nkic.NKIError) as info:
        nki.simulate_kernel(nki.jit(k_in_place), x)  # ERR:read_only
    e = info.value
    check_diag(e, M, "err_unsupported_args",
               "the kernel writes its parameter 'x' in place, but the numpy array passed for it is read-only",
               [("read_only", "nki.")])
    np.testing.assert_array_equal(x, 1.0)  # nothing ran


# --- a sweep: every public API with wrong-typed arguments --------------------------------

def _public_apis():
    out = []
    for mod in (nl, nisa, ncc):
        for name in sorted(dir(mod)):
            f = getattr(mod, name)
            if name.startswith("_") or not isinstance(getattr(f, "nki_func", None), str):
                continue
            try:
                params = list(inspect.signature(f).parameters.values())
            except ValueError:  # an int subclass (nl.par_dim): int's own signature
                params = [inspect.Parameter("n", inspect.Parameter.POSITIONAL_ONLY)]
            out.append((f.nki_func, f, params))
    return out


BAD = {"none": None, "str": "abc", "float": 2.5, "list": [1, 2], "huge": BIG, "array": np.ones((2, 2)),
       "tile": "<tile>"}
SWEEP = [(api, f, params, bad) for api, f, params in _public_apis() for bad in BAD]


@pytest.mark.parametrize("api,f,params,bad", SWEEP, ids=[f"{a}-{b}" for a, _, _, b in SWEEP])
def test_sweep_wrong_typed_arguments(api, f, params, bad):
    """Each required argument wrong, then the first a tile, then each optional keyword wrong
    with the required ones tiles: every outcome is success or a diagnostic at this file."""
    required = [p for p in params if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    optional = [p.name for p in params if p.default is not p.empty and p.kind != p.VAR_KEYWORD]
    for variant in ["all", "first_tile"] + optional:
        def kernel(x):
            t = nl.load(x)
            v = t if bad == "tile" else BAD[bad]
            args, kwargs = [], {}
            for i, p in enumerate(required):
                value = t if (variant == "first_tile" and i == 0) or variant in optional else v
                if p.kind == p.KEYWORD_ONLY:
                    kwargs[p.name] = value
                else:
                    args.append(value)
            if variant in optional:
                kwargs[variant] = v
            elif not required:
                args.append(v)
            f(*args, **kwargs)

        try:
            nki.jit(kernel).trace(None, (np.ones((128, 64), np.float32),), {})
        except nkic.NKIError as e:
            assert e.code.startswith("err_") and e.code != "err_internal", (variant, str(e))
            assert M.same_file(e.file), (variant, str(e))
            assert "_nkic" not in str(e) and "incompatible function arguments" not in str(e), (variant, str(e))
