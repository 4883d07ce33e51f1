"""Operand rules beyond shape, memory and dtype sets: bitvec operators need integer
operands (err_bitvec_operand_must_be_integer, err_reduce_/err_par_reduce_bitvec_op_invalid_dtype),
operator arguments cannot be None (err_operand_cannot_be_none), constant slots of an
API take no traced values (seed 004's assert_constant_value: err_expected_constant_value),
and APIs or modes newer than the target (err_min_arch_support_for_inst / _hwdge).
Each error case checks code, message, API and the user's line:col; each rule has a
legal neighbour that must run and compute the right numbers."""
import numpy as np
import pytest

from neuronxcc import nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

from nki_test_util import Markers, check_diag, trace_error

M = Markers(__file__)
XF = np.random.default_rng(0).random((128, 64), dtype=np.float32)
XI = np.random.default_rng(1).integers(0, 1 << 20, size=(128, 64)).astype(np.int32)


def _kernel(body):
    def k(x):
        out = nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.shared_hbm)
        r = body(nl.load(x))  # ERR:body_call
        nl.store(out[:, 0:r.shape[1]], value=r)
        return out
    return k


def bitand_float(t):
    return nl.bitwise_and(t, t)  # ERR:bitand_float


def shift_float_scalar(t):
    return nisa.tensor_scalar(t, np.left_shift, 1.5)  # ERR:shift_float_scalar


def xor_tensor_tensor(t):
    return nisa.tensor_tensor(t, t, op=nl.bitwise_xor)  # ERR:xor_tensor_tensor


def reduce_or_float(t):
    return nisa.tensor_reduce(np.bitwise_or, t, axis=1, keepdims=True)  # ERR:reduce_or_float


def par_reduce_and_float(t):
    return nisa.tensor_partition_reduce(np.bitwise_and, t)  # ERR:par_reduce_and_float


def activation_none(t):
    return nisa.activation(op=None, data=t)  # ERR:activation_none


def tensor_scalar_op0_none(t):
    return nisa.tensor_scalar(t, None, 2.0)  # ERR:tensor_scalar_op0_none


def tensor_tensor_op_none(t):
    return nisa.tensor_tensor(t, t, op=None)  # ERR:tensor_tensor_op_none


def memset_tile_value(t):
    return nisa.memset((128, 64), value=t[0:1, 0:1], dtype=nl.float32)  # ERR:memset_tile_value


def ndarray_tile_shape(t):
    s = nl.ndarray((128, t[0:1, 0:1]), dtype=nl.float32, buffer=nl.sbuf)  # ERR:ndarray_tile_shape
    return t


def reduce_tile_axis(t):
    return nisa.tensor_reduce(np.add, t, axis=t[0:1, 0:1])  # ERR:reduce_tile_axis


def full_loop_value(t):
    for i in nl.affine_range(2):
        f = nl.full((128, 64), i, dtype=nl.float32)  # ERR:full_loop_value
    return t


def arange_loop_bound(t):
    for i in nl.affine_range(2):
        r = nl.arange(i)  # ERR:arange_loop_bound
    return t


def matmul_free_dims_mask(t):
    return nisa.nc_matmul(t, t.reshape((128, 2, 32)), mask=(nl.arange(64)[:, None] < 32))  # ERR:matmul_free_dims_mask


def tt_partition_64(t):
    return nisa.tensor_tensor(t, t[0:64, :], op=nl.add)  # ERR:tt_partition_64


def ts_partition_64(t):
    return nisa.tensor_scalar(t, np.add, t[0:64, 0:1])  # ERR:ts_partition_64


def tt_free_half(t):
    return nisa.tensor_tensor(t, t[:, 0:32], op=nl.add)  # ERR:tt_free_half


def add_one_operand(t):
    return nl.add(t)  # ERR:add_one_operand


def bias_by_position(t):
    return nisa.activation(np.exp, t, t[:, 0:1])  # ERR:bias_by_position


def numpy_on_tile(t):
    return np.exp(t)  # ERR:numpy_on_tile


def float_range(t):
    for i in range(t.shape[1] / 32):  # ERR:float_range
        pass
    return t


def zero_step_range(t):
    for i in range(0, 4, 0):  # ERR:zero_step_range
        pass
    return t


def floordiv_tiles(t):
    return t // 2  # ERR:floordiv_tiles


def scaled(t, *, scale):
    return nl.multiply(t, scale)


def helper_missing_keyword(t):
    return scaled(t)  # ERR:helper_missing_keyword


def _psum(t):
    p = nl.ndarray(t.shape, dtype=nl.float32, buffer=nl.psum)
    p[...] = t
    return p


def tt_both_psum(t):
    a, b = _psum(t), _psum(t)
    return nisa.tensor_tensor(a, b, op=nl.add)  # ERR:tt_both_psum


def power_psum(t):
    a = _psum(t)
    return nisa.tensor_tensor(a, t, op=nl.power)  # ERR:power_psum


def gpsimd_copy_psum(t):
    a = _psum(t)
    return nisa.tensor_copy(a, engine=nisa.gpsimd_engine)  # ERR:gpsimd_copy_psum


def bn_stats_wide(t):
    w = nl.ndarray((128, 1024), dtype=nl.float32)
    w[:, 0:64] = t
    return nisa.bn_stats(w[:, 0:1024])  # ERR:bn_stats_wide


def ts_mixed_ops(t):
    return nisa.tensor_scalar(t, np.add, 1.0, op1=np.bitwise_and, operand1=3)  # ERR:ts_mixed_ops


def scan_bitvec(t):
    return nisa.tensor_tensor_scan(t, t, 0, np.bitwise_or, np.add)  # ERR:scan_bitvec


def fractional_dim(t):
    s = nl.ndarray((128, 64 / 3), dtype=nl.float32)  # ERR:fractional_dim
    return t


def pid_str(t):
    p = nl.program_id("0")  # ERR:pid_str
    return t


def none_operand(t):
    return nl.multiply(None, 2.0)  # ERR:none_operand


def list_index(t):
    return t[:, [0, 2, 5]]  # ERR:list_index


def partition_stride(t):
    return nl.copy(t[0:128:2, :])  # ERR:partition_stride


def iota_of_tile(t):
    return nisa.iota(t, dtype=nl.int32)  # ERR:iota_of_tile


def scale_text(t):
    return nisa.activation(op=nl.exp, data=t, scale="2.0")  # ERR:scale_text


def no_dtype(t):
    s = nl.ndarray((128, 64), dtype=None)  # ERR:no_dtype
    return t


def copy_smaller_value(t):
    h = nl.ndarray(t.shape, dtype=t.dtype, buffer=nl.hbm)
    nisa.dma_copy(dst=h, src=t[:, 0:32])  # ERR:copy_smaller_value
    return t


def ds_negative_start(t):
    h = nl.ndarray(t.shape, dtype=t.dtype, buffer=nl.hbm)
    nl.store(h, value=t)
    return nl.load(h[:, nl.ds(-8, 32)])  # ERR:ds_negative_start


def store_none(t):
    h = nl.ndarray(t.shape, dtype=t.dtype, buffer=nl.hbm)
    nl.store(h, value=None)  # ERR:store_none
    return t


CASES = {
    "bitand_float": (bitand_float, XF, "err_bitvec_operand_must_be_integer",
                     "bitvec operator 'bitwise_and' works on integer bit patterns, but operand 'x' is float32",
                     "nl.bitwise_and"),
    "shift_float_scalar": (shift_float_scalar, XI, "err_bitvec_operand_must_be_integer",
                           "bitvec operator 'left_shift' works on integer bit patterns, but operand 'y' is float32",
                           "nisa.tensor_scalar"),
    "xor_tensor_tensor": (xor_tensor_tensor, XF, "err_bitvec_operand_must_be_integer",
                          "bitvec operator 'bitwise_xor' works on integer bit patterns, but operand 'data1' is "
                          "float32", "nisa.tensor_tensor"),
    "reduce_or_float": (reduce_or_float, XF, "err_reduce_bitvec_op_invalid_dtype",
                        "reduction with bitvec operator 'bitwise_or' needs an integer input, but the data is float32",
                        "nisa.tensor_reduce"),
    "par_reduce_and_float": (par_reduce_and_float, XF, "err_par_reduce_bitvec_op_invalid_dtype",
                             "partition reduction with bitvec operator 'bitwise_and' needs an integer input, but the "
                             "data is float32", "nisa.tensor_partition_reduce"),
    "activation_none": (activation_none, XF, "err_operand_cannot_be_none", "operand 'op' cannot be None",
                        "nisa.activation"),
    "tensor_scalar_op0_none": (tensor_scalar_op0_none, XF, "err_operand_cannot_be_none",
                               "operand 'op0' cannot be None", "nisa.tensor_scalar"),
    "tensor_tensor_op_none": (tensor_tensor_op_none, XF, "err_operand_cannot_be_none", "operand 'op' cannot be None",
                              "nisa.tensor_tensor"),
    "memset_tile_value": (memset_tile_value, XF, "err_expected_constant_value",
                          "expected a compile-time constant value, but got a tile of shape [1, 1]: tile values are "
                          "computed on the device", "nisa.memset"),
    "ndarray_tile_shape": (ndarray_tile_shape, XF, "err_expected_constant_value",
                           "but got a tile of shape [1, 1]", "nl.ndarray"),
    "reduce_tile_axis": (reduce_tile_axis, XF, "err_expected_constant_value", "but got a tile of shape [1, 1]",
                         "nisa.tensor_reduce"),
    "full_loop_value": (full_loop_value, XF, "err_expected_constant_value",
                        "expected a compile-time constant value, but got the index expression `L0`: its value comes "
                        "from a loop variable", "nl.full"),
    "arange_loop_bound": (arange_loop_bound, XF, "err_expected_constant_value",
                          "but got the index expression `L0`", "nl.arange"),
    "tt_partition_64": (tt_partition_64, XF, "err_num_partition_mismatch",
                        "number of partitions (dimension 0 size of a tile) mismatch in parameters (data1[128, 64], "
                        "data2[64, 64]) of 'tensor_tensor'", "nisa.tensor_tensor"),
    "ts_partition_64": (ts_partition_64, XF, "err_num_partition_mismatch",
                        "mismatch in parameters (x[128, 64], y[64, 1]) of 'tensor_scalar'", "nisa.tensor_scalar"),
    "tt_free_half": (tt_free_half, XF, "err_tile_shape_mismatch",
                     "number of elements per partition mismatch in parameters (data1[128, 64], data2[128, 32]) of "
                     "'tensor_tensor'", "nisa.tensor_tensor"),
    "add_one_operand": (add_one_operand, XF, "err_unsupported_args",
                        "unsupported arguments to 'nl.add': missing a required argument: 'y'", "nl.add"),
    "bias_by_position": (bias_by_position, XF, "err_unsupported_args",
                         "unsupported arguments to 'nisa.activation': too many positional arguments",
                         "nisa.activation"),
    "numpy_on_tile": (numpy_on_tile, XF, "err_unexpected_type_of_operand",
                      "got a traced tile or index passed to 'exp', which computes on host values", "np.exp"),
    "float_range": (float_range, XF, "err_invalid_range_args",
                    "loop bounds must be integers known at trace time", "range"),
    "zero_step_range": (zero_step_range, XF, "err_invalid_range_args",
                        "loop bounds must be integers known at trace time, with a nonzero step (range() arg 3 must "
                        "not be zero)", "range"),
    "floordiv_tiles": (floordiv_tiles, XF, "err_instruction_unsupported_op", "unsupported operator '//'", "t // 2"),
    "helper_missing_keyword": (helper_missing_keyword, XF, "err_unsupported_args",
                               "unsupported arguments to 'scaled': missing a required argument: 'scale'", "scaled"),
    "tt_both_psum": (tt_both_psum, XF, "err_unsupported_memory",
                     "Expected operand 'data2' of 'tensor_tensor' to be in address space 'sbuf', but got a tile in "
                     "'psum' instead.", "nisa.tensor_tensor"),
    "power_psum": (power_psum, XF, "err_unsupported_memory",
                   "Expected operand 'data1' of 'tensor_tensor' to be in address space 'sbuf'", "nisa.tensor_tensor"),
    "gpsimd_copy_psum": (gpsimd_copy_psum, XF, "err_unsupported_memory",
                         "Expected operand 'src' of 'tensor_copy' to be in address space 'sbuf'", "nisa.tensor_copy"),
    "bn_stats_wide": (bn_stats_wide, XF, "err_size_of_dimension_exceed_arch_limit",
                      "size of dimension 1 in 'data[128, 1024]' of 'bn_stats' exceed architecture limitation of 512",
                      "nisa.bn_stats"),
    "ts_mixed_ops": (ts_mixed_ops, XF, "err_instruction_unsupported_op", "unsupported operator 'add with bitwise_and'",
                     "nisa.tensor_scalar"),
    "scan_bitvec": (scan_bitvec, XF, "err_instruction_unsupported_op", "unsupported operator 'bitwise_or'",
                    "nisa.tensor_tensor_scan"),
    "fractional_dim": (fractional_dim, XF, "err_invalid_shape", "invalid tensor shape: dimension 21.33", "nl.ndarray"),
    "pid_str": (pid_str, XF, "err_unexpected_type_of_operand", "unexpected type of operand 'axis': got str '0'",
                "nl.program_id"),
    "none_operand": (none_operand, XF, "err_operand_cannot_be_none", "operand 'x' cannot be None", "nl.multiply"),
    "list_index": (list_index, XF, "err_unsupported_index", "a tensor index is an int, a slice, nl.ds", "t["),
    "partition_stride": (partition_stride, XF, "err_unsupported_index",
                         "flexible striding is not allowed on the partition dim of `x_tile` (stride 2)", "t["),
    "iota_of_tile": (iota_of_tile, XF, "err_unexpected_type_of_operand",
                     "unexpected type of operand 'expr': got NkiTensor where an index expression", "nisa.iota"),
    "scale_text": (scale_text, XF, "err_activation_scale_invalid_type",
                   "Scale parameter of activation or activation_reduce must be a scalar or vector of type float32, got "
                   "str", "nisa.activation"),
    "no_dtype": (no_dtype, XF, "err_unsupported_dtype", "unsupported dtype None: a dtype is required here",
                 "nl.ndarray"),
    "copy_smaller_value": (copy_smaller_value, XF, "err_param_shape_incompatible_with_numpy",
                           "operands could not be broadcast together with shapes [128, 32] [128, 64]",
                           "nisa.dma_copy"),
    "ds_negative_start": (ds_negative_start, XF, "err_tensor_access_out_of_bound",
                          "Out-of-bound access for tensor `h` on dimension 1: index range [-8, 23] exceed dimension "
                          "size of 64", "nl.load"),
    "store_none": (store_none, XF, "err_operand_cannot_be_none", "operand 'value' cannot be None", "nl.store"),
    "matmul_free_dims_mask": (matmul_free_dims_mask, XF, "err_param_shape_incompatible_with_matmul",
                              "a moving operand with several free dims takes no mask= and no indirect index",
                              "nisa.nc_matmul"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_code_message_and_location(case):
    body, x, code, message, api = CASES[case]
    e = trace_error(_kernel(body), x)
    # The API in flight, when the case names one (not for host functions, loops and operators).
    named = api.startswith(("nl.", "nisa.")) and code != "err_unexpected_type_of_operand"
    check_diag(e, M, code, message, [(case, api)], notes=[("body_call", "body", body.__name__)],
               api=api if named else None)


def test_kernel_launches_with_arguments_that_do_not_fit():
    def k(x, y):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        nl.store(out, value=nl.load(x))
        return out
    kernel = nki.jit(k)
    e = trace_error(kernel, XF)
    assert e.code == "err_unsupported_args" and e.message == "unsupported arguments to 'k': missing a required argument: 'y'"
    for grid in (0, -1, "a", (2, 0), 2**63):
        e = trace_error(kernel, XF, XF, grid=grid)
        assert e.code == "err_unsupported_args" and "needs positive integer sizes" in e.message, grid
    assert "up to 2147483647, got 9223372036854775808" in e.message


def test_a_type_error_of_the_kernels_own_call_is_shown_at_its_line():
    import traceback

    def k(x, f):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        nl.store(out, value=nl.load(x))
        f(4)  # f is a string: calling it is the kernel's own error
        return out
    with pytest.raises(TypeError, match="'str' object is not callable") as info:
        nki.jit(k).trace(None, (XF, "x"), {})
    last = traceback.extract_tb(info.value.__traceback__)[-1]
    assert last.filename == __file__ and last.line == "f(4)  # f is a string: calling it is the kernel's own error"


@pytest.mark.parametrize("api", ["legacy", "current"])
def test_a_for_over_a_non_iterable_is_the_kernels_type_error_at_its_line(api):
    import traceback
    import nki as nki_current
    import nki.language as nl_current

    def k(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        for i in nl.random_seed(3):  # random_seed returns None
            pass
        return out

    def k_current(x):
        out = nl_current.ndarray(x.shape, dtype=x.dtype, buffer=nl_current.shared_hbm)
        for i in None:  # not iterable
            pass
        return out
    with pytest.raises(TypeError, match="'NoneType' object is not iterable") as info:
        if api == "legacy":
            nki.jit(k).trace(None, (XF,), {})
        else:
            nki_current.simulate(nki_current.jit(k_current))(XF)
    last = traceback.extract_tb(info.value.__traceback__)[-1]
    assert last.filename == __file__ and last.name in ("k", "k_current"), last
    assert last.line.startswith("for i in "), last


@nki.jit
def iterate_blocks(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    assert len(x) == 4
    for i, block in enumerate(x):                  # the views x[0], x[1], ... as numpy iterates
        nl.store(out[i], value=nl.load(block) ** 2)
    return out


def test_tensors_iterate_along_their_first_dim_and_power_is_an_operator():
    x = XF[0:4 * 32, :].reshape(4, 32, 64).copy()
    np.testing.assert_allclose(iterate_blocks(x), x ** 2, rtol=1e-6)


@pytest.mark.parametrize("use", ["len", "iterate"])
def test_a_zero_dimensional_tensor_has_no_length_and_does_not_iterate(use):
    def k(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        c = nl.shared_constant(4)
        if use == "len":
            n = len(c)  # ERR:len_0d
        else:
            for j in c:  # ERR:iter_0d
                pass
        return out
    e = trace_error(k, XF)
    if use == "len":
        check_diag(e, M, "err_unsupported_index", "len() of a 0-dimensional tensor: it has no first dimension",
                   [("len_0d", "len(c)")], api="len()")
    else:
        check_diag(e, M, "err_unsupported_index", "iteration over a 0-dimensional tensor: it has no first dimension",
                   [("iter_0d", "c")], api="tensor iteration")


def test_a_traced_value_in_the_users_own_python_stays_symbolic():
    # Outside an API call, a loop variable used as a Python int (a list index) is
    # not an API constant slot: the loop-variable diagnostic names what happened.
    def k(x):
        out = nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.shared_hbm)
        cols = [0, 32]
        for i in nl.affine_range(2):
            c = cols[i]  # ERR:list_index_symbolic
            nl.store(out[:, c:c + 32], value=nl.load(x[:, c:c + 32]))
        return out
    e = trace_error(k, XF)
    check_diag(e, M, "err_symbolic_value_used_as_python_int", "cannot be used where Python needs an int",
               [("list_index_symbolic", "cols[i]")])


@nki.jit
def integer_bits(x):
    out = nl.ndarray((6, 128, 64), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    nl.store(out[0], value=nl.bitwise_and(t, 0xFF))
    nl.store(out[1], value=nisa.tensor_scalar(t, np.right_shift, 4))
    nl.store(out[2], value=nisa.tensor_tensor(t, t, op=nl.bitwise_xor))
    # two fused bitvec ops keep the integer bits between them
    nl.store(out[3], value=nisa.tensor_scalar(t, np.right_shift, 4, op1=np.bitwise_and, operand1=0xF0))
    nl.store(out[4, :, 0:1], value=nisa.tensor_reduce(np.bitwise_or, t, axis=1, keepdims=True))
    nl.store(out[5, 0:1, :], value=nisa.tensor_partition_reduce(np.bitwise_xor, t))
    return out


def test_bitvec_operators_on_integer_tiles():
    got = integer_bits(XI)
    np.testing.assert_array_equal(got[0], XI & 0xFF)
    np.testing.assert_array_equal(got[1], XI >> 4)
    np.testing.assert_array_equal(got[2], np.zeros_like(XI))
    np.testing.assert_array_equal(got[3], (XI >> 4) & 0xF0)
    np.testing.assert_array_equal(got[4, :, 0:1], np.bitwise_or.reduce(XI, axis=1, keepdims=True))
    np.testing.assert_array_equal(got[5, 0:1, :], np.bitwise_xor.reduce(XI, axis=0, keepdims=True))


def k_range_select(x):
    out = nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    lo = nisa.memset((128, 1), 8.0, dtype=nl.float32)
    hi = nisa.memset((128, 1), 16.0, dtype=nl.float32)
    r = nisa.range_select(on_true_tile=t, comp_op0=np.greater_equal, comp_op1=np.less,  # ERR:range_select
                          bound0=lo, bound1=hi, on_false_value=0.0)
    nl.store(out, value=r)
    return out


def k_hwdge_copy(x):
    out = nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=x, dge_mode=nisa.dge_mode.hwdge)  # ERR:hwdge_copy
    return out


def k_hwdge_transpose(x):
    out = nl.ndarray((64, 128), dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nisa.dma_transpose(x, dge_mode=nisa.dge_mode.hwdge))  # ERR:hwdge_transpose
    return out


def k_activation_max_reduce(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    res = nl.ndarray((128, 1), dtype=nl.float32)
    nl.store(out, value=nisa.activation_reduce(op=nl.exp, data=nl.load(x), reduce_op=np.max,  # ERR:act_max
                                               reduce_res=res))
    return out


def k_pe_quarter_tiles(x):
    out = nl.ndarray((32, 32), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(x[0:32, 0:32])
    nl.store(out, value=nisa.nc_matmul(t, t, tile_position=(0, 0), tile_size=(32, 32)))  # ERR:pe_quarter
    return out


@pytest.mark.parametrize("case,fn,what", [
    ("act_max", k_activation_max_reduce, "nisa.activation(reduce_op=maximum)"),
    ("pe_quarter", k_pe_quarter_tiles, "nisa.nc_matmul(tile_size=(32, 32))")])
def test_neuroncore_v2_limits(case, fn, what):
    e = trace_error(nki.jit(fn, platform_target="trn1"), XF)
    check_diag(e, M, "err_min_arch_support_for_inst",
               f"'{what}' is available on NeuronCore-v3 and newer only; target 'trn1' is NeuronCore-v2",
               [(case, "nisa.")])
    nki.jit(fn, platform_target="trn2")(XF)  # legal from NeuronCore-v3 on


@pytest.mark.parametrize("target", ["inf1", "trn1", "inf2"])
def test_range_select_needs_neuroncore_v3(target):
    e = trace_error(nki.jit(k_range_select, platform_target=target), XF)
    version = 1 if target == "inf1" else 2
    check_diag(e, M, "err_min_arch_support_for_inst",
               f"'nisa.range_select' is available on NeuronCore-v3 and newer only; target '{target}' is "
               f"NeuronCore-v{version}", [("range_select", "nisa.")], api="nisa.range_select")


@pytest.mark.parametrize("case,api", [("hwdge_copy", "nisa.dma_copy"), ("hwdge_transpose", "nisa.dma_transpose")])
def test_hwdge_needs_neuroncore_v3(case, api):
    fn = {"hwdge_copy": k_hwdge_copy, "hwdge_transpose": k_hwdge_transpose}[case]
    e = trace_error(nki.jit(fn, platform_target="trn1"), XF)
    check_diag(e, M, "err_min_arch_support_for_hwdge",
               f"dge_mode=hwdge in '{api}' needs hardware DGE, which target 'trn1' (NeuronCore-v2) does not have",
               [(case, "nisa.")], api=api)


@pytest.mark.parametrize("target", ["trn2", "trn3"])
def test_range_select_and_hwdge_on_neuroncore_v3_and_newer(target):
    col = np.arange(64, dtype=np.float32)
    np.testing.assert_array_equal(nki.jit(k_range_select, platform_target=target)(XF),
                                  np.where((col >= 8) & (col < 16), XF, 0.0))
    np.testing.assert_array_equal(nki.jit(k_hwdge_copy, platform_target=target)(XF), XF)
    np.testing.assert_array_equal(nki.jit(k_hwdge_transpose, platform_target=target)(XF), XF.T)


@nki.jit
def assert_shape_ok(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.load(x).assert_shape((128, 512)))
    return out


@nki.jit
def assert_shape_wrong(x, shape):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    nl.store(out, value=t.assert_shape(shape))  # ERR:assert_shape
    return out


def test_assert_shape_returns_the_tensor():
    a = np.random.default_rng(3).random((128, 512), dtype=np.float32)
    np.testing.assert_array_equal(nki.simulate_kernel(assert_shape_ok, a), a)


@pytest.mark.parametrize("shape, shown", [((128, 256), "[128, 256]"), ((2**63 - 1, 512), "[9223372036854775807, 512]"),
                                          ((128, 512, 1), "[128, 512, 1]")])
def test_assert_shape_of_another_shape_is_an_assertion_at_the_users_line(shape, shown):
    e = trace_error(assert_shape_wrong, np.zeros((128, 512), np.float32), shape)
    check_diag(e, M, "err_annotation_shape_mismatch",
               f"tensor shape [128, 512] does not match the expected shape {shown}", [("assert_shape", "t.assert_shape")])
    assert isinstance(e, AssertionError)


# Tiling mode (the nki.isa nc_matmul reference): tile_position and tile_size place the matmul on
# a tile of the 128x128 PE array; each rule is checked where the call names it.
def k_pe_tile(position, size):
    def k(x):
        out = nl.ndarray((64, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.load(x[0:64, 0:64])
        nl.store(out, value=nisa.nc_matmul(t, t, tile_position=position, tile_size=size))  # ERR:pe_tile
        return out
    return k


PE_TILE_ERRORS = [
    ((64, 0), (48, 128), "tile_size (48, 128): a row or column tile is 32, 64 or 128 PEs of the 128x128 array"),
    ((0, 0), (64, 32), "the stationary tile"),
    ((32, 0), (64, 128), "tile_position start_row 32 is not one of 0, 64 (the row tiles of size 64 in the 128x128 PE "
                         "array)"),
    ((0, 128), (64, 128), "tile_position start_column 128 is not one of 0 (the column tiles of size 128 in the "
                          "128x128 PE array)"),
    ((), (64, 128), "tile_position and tile_size are set together (tiling mode), or neither (the whole 128x128 PE "
                    "array)"),
    ((0, 0, 0), (64, 64, 64), "tile_position is (start_row, start_column) and tile_size (row_size, column_size): two "
                              "values each"),
    ((0, 0), "64x64", "tile_size is a list or tuple of ints, got 'str'"),
]


@pytest.mark.parametrize("position,size,message", PE_TILE_ERRORS)
def test_a_matmul_placed_outside_the_pe_array_tiles_is_an_error(position, size, message):
    e = trace_error(nki.jit(k_pe_tile(position, size), platform_target="trn2"), XF)
    check_diag(e, M, "err_unsupported_args", ["unsupported arguments to 'nisa.nc_matmul': ", message],
               [("pe_tile", "nisa.")], api="nisa.nc_matmul")


def test_the_stationary_tile_fits_in_the_tile_size():
    e = trace_error(nki.jit(k_pe_tile((0, 0), (64, 32)), platform_target="trn2"), XF)
    assert "the stationary tile t[64, 64] (64 rows, 64 columns of the PE array) does not fit in tile_size (64, 32)" \
        in e.message, e.message


@pytest.mark.parametrize("position,size", [((64, 0), (64, 128)), ((0, 64), (64, 64)), ((64, 64), (64, 64)), ((0, 0), ())])
def test_a_matmul_on_a_tile_of_the_pe_array_computes_the_whole_product(position, size):
    size = size or (128, 128)
    got = nki.jit(k_pe_tile(position, size), platform_target="trn2")(XF)
    np.testing.assert_allclose(got, XF[0:64, 0:64].T @ XF[0:64, 0:64], rtol=1e-5)


def test_a_quarter_row_tile_needs_neuroncore_v3():
    e = trace_error(nki.jit(k_pe_tile((32, 0), (32, 128)), platform_target="trn1"), XF)
    check_diag(e, M, "err_min_arch_support_for_inst",
               "'nisa.nc_matmul(tile_size=(32, 128))' is available on NeuronCore-v3 and newer only; target 'trn1' is "
               "NeuronCore-v2", [("pe_tile", "nisa.")])


def k_pe_tile_per_iteration(trips, column):
    """A 64x64 matmul per iteration of an affine loop, on the column tile `column(i)` starts."""
    def k(x):
        out = nl.ndarray((64, 64 * trips), dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.load(x[0:64, 0:64])
        i_p, i_f = nl.arange(64)[:, None], nl.arange(64)[None, :]
        for i in nl.affine_range(trips):
            r = nisa.nc_matmul(t, t, tile_position=(0, column(i)), tile_size=(64, 64))  # ERR:pe_tile_loop
            nl.store(out[i_p, i * 64 + i_f], value=r)
        return out
    return k


def test_a_tile_start_may_be_an_expression_of_the_loop_variable():
    want = XF[0:64, 0:64].T @ XF[0:64, 0:64]
    np.testing.assert_allclose(nki.jit(k_pe_tile_per_iteration(2, lambda i: i * 64), platform_target="trn2")(XF),
                               np.concatenate([want, want], axis=1), rtol=1e-5)


def test_a_tile_start_that_is_not_affine_is_an_error():
    e = trace_error(nki.jit(k_pe_tile_per_iteration(2, lambda i: i * i * 64), platform_target="trn2"), XF)
    check_diag(e, M, "err_unsupported_args", "unsupported arguments to 'nisa.nc_matmul': tile_position start_column is "
               "not an int or an affine expression of loop variables: the product of two index values (L0) * (L0)",
               [("pe_tile_loop", "nisa.")], api="nisa.nc_matmul")


def test_a_tile_start_that_leaves_the_array_in_some_iteration_is_an_error():
    e = trace_error(nki.jit(k_pe_tile_per_iteration(3, lambda i: i * 64), platform_target="trn2"), XF)
    check_diag(e, M, "err_unsupported_args", "unsupported arguments to 'nisa.nc_matmul': tile_position start_column "
               "takes 0 to 128 over its loops; a column tile of size 64 starts within 0 to 64",
               [("pe_tile_loop", "nisa.")], api="nisa.nc_matmul")
