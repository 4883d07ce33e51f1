"""More legality rules of the current nki API (NKI_CURRENT_API.md §2.3, §9): the rejected
Python constructs, raw values and removed keywords, tile rules, NeuronCore gating, SBUF
capacity and the kernel's call arguments; each a diagnostic with its code, message and
the user's line."""
import warnings

import numpy as np
import pytest

import nki
import nki.isa as nisa
import nki.language as nl
import nkic
from nki_current_util import loaded, sbuf
from nki_test_util import Markers, check_diag, trace_error

M = Markers(__file__)
X = np.ones((128, 64), np.float32)
X3 = np.ones((128, 4, 8), np.float32)
ROWS = np.arange(4 * 8, dtype=np.float32).reshape(4, 8)


@pytest.fixture(autouse=True)
def _trn3(monkeypatch):
    monkeypatch.delenv("NEURON_PLATFORM_TARGET_OVERRIDE", raising=False)


@nki.jit
def uses_is_not(a):
    if a.shape is not a.shape:  # ERR:is_not
        return a
    return a


@nki.jit
def raw_reduce_cmd(a):
    x, r = loaded(a), sbuf((128, 1))
    nisa.activation(dst=x, op=nl.exp, data=x, reduce_op=nl.add, reduce_res=r, reduce_cmd=1)  # ERR:reduce_cmd
    return a


@nki.jit
def raw_engine_tensor_tensor(a):
    x = loaded(a)
    nisa.tensor_tensor(dst=x, data1=x, data2=x, op=nl.add, engine=1)  # ERR:engine
    return a


@nki.jit
def zeros_in_string_buffer(a):
    t = nl.zeros((128, 64), nl.float32, buffer="sbuf")  # ERR:zeros_buffer
    return a


@nki.jit
def copy_with_mask(a):
    x = loaded(a)
    nisa.tensor_copy(dst=x, src=x, mask=None)  # ERR:mask
    return a


@nki.jit
def copy_with_dtype(a):
    x = loaded(a)
    nisa.tensor_copy(dst=x, src=x, dtype=nl.float32)  # ERR:dtype
    return a


@nki.jit
def int_of_register(a):
    r = nisa.register_alloc(3)
    n = int(r)  # ERR:reg_int
    return a


@nki.jit
def range_of_register(a):
    r = nisa.register_alloc(3)
    for i in range(r):  # ERR:reg_range
        pass
    return a


@nki.jit
def copy_with_unique_indices(a):
    t = sbuf((128, 64))
    nisa.dma_copy(dst=t, src=a, unique_indices=True)  # ERR:unique
    return a


@nki.jit
def memset_one_into_x4(a):
    t = sbuf((128, 16), nl.float8_e4m3fn_x4)
    nisa.memset(dst=t, value=1.0)  # ERR:x4
    return a


@nki.jit
def reduce_partition_axis(a):
    x, s = loaded(a), sbuf((1, 64))
    nisa.tensor_reduce(dst=s, op=nl.add, data=x, axis=0)  # ERR:axis0
    return a


@nki.jit
def reduce_axis_out_of_range(a):
    x, s = loaded(a), sbuf((128, 4))
    nisa.tensor_reduce(dst=s, op=nl.add, data=x, axis=3)  # ERR:axis3
    return a


@nki.jit
def register_move_imm(a):
    r = nisa.register_alloc(0)
    nisa.register_move(r, imm=42)  # ERR:imm
    return a


@nki.jit
def transpose_into_wrong_shape(a):
    x = sbuf((64, 64), nl.float16)
    nisa.dma_transpose(dst=x, src=a)  # ERR:transpose
    return a


@nki.jit
def reshape_to_fewer_elements(a):
    x = nl.ndarray((128, 64), nl.float32, buffer=nl.sbuf)
    y = x.reshape((128, 32))  # ERR:reshape
    return a


@nki.jit
def too_many_partitions(a):
    x = nl.ndarray((256, 64), nl.float32, buffer=nl.sbuf)  # ERR:partitions
    return a


def test_is_not_under_the_parser_frontend(monkeypatch):
    """nki 0.6's parser frontend rejects `is not` between values (0.7+ only warns)."""
    monkeypatch.setenv("NKIC_NKI_VERSION", "0.6")
    check_diag(trace_error(uses_is_not, X), M, "err_unsupported_python_construct",
               "'is' / 'is not' between values is not supported in an NKI kernel", [("is_not", "a.shape is")])


CASES = [
    (raw_reduce_cmd, X, "reduce_cmd", "nisa.", "err_unexpected_type_of_operand",
     "unexpected type of operand 'reduce_cmd': got 1; since nki 0.3 it is a member of nisa.reduce_cmd "
     "(e.g. nisa.reduce_cmd.idle), not a raw value", "nisa.activation"),
    (raw_engine_tensor_tensor, X, "engine", "nisa.", "err_unexpected_type_of_operand",
     "unexpected type of operand 'engine': got 1; since nki 0.3 it is a member of nisa.engine "
     "(e.g. nisa.engine.unknown), not a raw value", "nisa.tensor_tensor"),
    (zeros_in_string_buffer, X, "zeros_buffer", "nl.", "err_unsupported_buffer", "unknown buffer 'sbuf'", "nl.zeros"),
    (copy_with_mask, X, "mask", "nisa.", "err_unsupported_args",
     "unsupported arguments to 'nisa.tensor_copy': unexpected keyword argument 'mask'", "nisa.tensor_copy"),
    (copy_with_dtype, X, "dtype", "nisa.", "err_removed_in_nki_version",
     "nisa.tensor_copy(dtype=) was removed in nki 0.3 (nkic serves nki 0.8)", "nisa.tensor_copy"),
    (int_of_register, X, "reg_int", "int(", "err_unsupported_args",
     "unsupported arguments to 'VirtualRegister': holds a run-time value: Python arithmetic on it is not possible; "
     "use it as .ap(scalar_offset=reg) or copy it with nisa.register_store", None),
    (range_of_register, X, "reg_range", "range(", "err_unsupported_args",
     "unsupported arguments to 'VirtualRegister': holds a run-time value: Python arithmetic on it is not possible; "
     "use it as .ap(scalar_offset=reg) or copy it with nisa.register_store", None),
    (copy_with_unique_indices, X, "unique", "nisa.", "err_unsupported_args",
     "unsupported arguments to 'nisa.dma_copy': unexpected keyword argument 'unique_indices'", "nisa.dma_copy"),
    (memset_one_into_x4, X, "x4", "nisa.", "err_memset_value_dtype",
     "'memset' value 1 does not fit dst dtype 'float8_e4m3fn_x4': packed x4 tensors are set to 0 only",
     "nisa.memset"),
    (reduce_partition_axis, X, "axis0", "nisa.", "err_unsupported_reduce_axis",
     "reduction over the partition axis (axis 0) is not supported", "nisa.tensor_reduce"),
    (reduce_axis_out_of_range, X3, "axis3", "nisa.", "err_unsupported_reduce_axis",
     "axis 3 is out of range for a tile of rank 3", "nisa.tensor_reduce"),
    (register_move_imm, X, "imm", "nisa.", "err_unsupported_args",
     "unsupported arguments to 'nisa.register_move': unexpected keyword argument 'imm'", "nisa.register_move"),
    (transpose_into_wrong_shape, X.astype(np.float16), "transpose", "nisa.", "err_tile_shape_mismatch",
     "dst x[64, 64] of 'dma_transpose' must be src permuted by (1, 0), of shape [64, 128] (the same rank as src)",
     "nisa.dma_transpose"),
    (reshape_to_fewer_elements, X, "reshape", "x.reshape", "err_unsupported_index",
     "cannot reshape `x[128, 64]` (float32) as [128, 32] float32: the byte sizes differ", "tensor.reshape"),
    (too_many_partitions, X, "partitions", "nl.", "err_num_partition_exceed_arch_limit",
     "number of partitions 256 exceed architecture limitation of 128.", "nl.ndarray"),
]


@pytest.mark.parametrize("kernel,arg,marker,token,code,message,api", CASES, ids=[c[2] for c in CASES])
def test_rule(kernel, arg, marker, token, code, message, api):
    check_diag(trace_error(kernel, arg), M, code, message, [(marker, token)], api=api)


@nki.jit
def sendrecv_channels(a):
    c = nl.program_id(0)
    t, u = sbuf((2, 8)), sbuf((2, 8))
    nisa.dma_copy(dst=t, src=a[0:2, :])
    nisa.sendrecv(src=t, dst=u, send_to_rank=1 - c, recv_from_rank=1 - c, pipe_id=0, num_channels=2)  # ERR:channels
    return a


def test_sendrecv_takes_no_num_channels():
    e = trace_error(sendrecv_channels[2].kernel, ROWS, grid=(2,))
    check_diag(e, M, "err_unsupported_args",
               "unsupported arguments to 'nisa.sendrecv': unexpected keyword argument 'num_channels'",
               [("channels", "nisa.")], api="nisa.sendrecv")


@nki.jit
def select_in_range(a):
    x = loaded(a)
    lo = nl.full((128, 1), 8.0, nl.float32, buffer=nl.sbuf)
    hi = nl.full((128, 1), 16.0, nl.float32, buffer=nl.sbuf)
    nisa.range_select(dst=x, on_true_tile=x, comp_op0=nl.greater_equal, comp_op1=nl.less,  # ERR:range_select
                      bound0=lo, bound1=hi)
    return a


@nki.jit
def barrier_of_one_core(a):
    # trn1 has no kernel[2]: a one-core barrier reaches the gate there.
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=a)
    nisa.core_barrier(out, (0,))  # ERR:core_barrier
    return out


@nki.jit
def exchange_rows(a):
    c = nl.program_id(0)
    t, u = sbuf((2, 8)), sbuf((2, 8))
    nisa.dma_copy(dst=t, src=a[0:2, :])
    nisa.sendrecv(src=t, dst=u, send_to_rank=1 - c, recv_from_rank=1 - c, pipe_id=0)  # ERR:sendrecv
    return a


@nki.jit
def double_row_matmul(a):
    x = loaded(a)
    p = nl.ndarray((16, 16), nl.float32, buffer=nl.psum)
    nisa.nc_matmul(p, x, x, perf_mode=nisa.matmul_perf_mode.double_row)  # ERR:double_row
    return a


@nki.jit
def quantize(a):
    q, s = sbuf((32, 4), nl.float8_e4m3fn_x4), sbuf((32, 4), nl.uint8)
    nisa.quantize_mx(dst=q, src=loaded(a), dst_scale=s)  # ERR:quantize_mx
    return a


@nki.jit
def matmul_mx(a):
    q, s = loaded(a), sbuf((32, 4), nl.uint8)
    nisa.memset(dst=s, value=127)
    acc = nl.ndarray((4, 4), nl.float32, buffer=nl.psum)
    nisa.nc_matmul_mx(dst=acc, stationary=q, moving=q, stationary_scale=s, moving_scale=s)  # ERR:matmul_mx
    return a


@nki.jit
def abs_min_of_tiles(a):
    x = loaded(a)
    nisa.tensor_tensor(dst=x, data1=x, data2=x, op=nl.abs_min)  # ERR:abs_min
    return a


@nki.jit
def ocp_fp8_matmul(a):
    x = loaded(a, nl.float8_e4m3fn)
    p = nl.ndarray((64, 64), nl.float32, buffer=nl.psum)
    nisa.nc_matmul(p, x, x)  # ERR:ocp_matmul
    return a


V3 = "is available on NeuronCore-v3 and newer only; target 'trn1' is NeuronCore-v2"
V4 = "is available on NeuronCore-v4 and newer only; target 'trn2' is NeuronCore-v3"
# (kernel, argument, grid, marker, gated target, first target with it, message clauses)
GATED = [
    (select_in_range, X, None, "range_select", "trn1", "trn2", [f"'nisa.range_select' {V3}"]),
    (barrier_of_one_core, ROWS, None, "core_barrier", "trn1", "trn2", [f"'nisa.core_barrier' {V3}"]),
    # The message spells the mode by its legacy name; the gate is what is asserted here.
    (double_row_matmul, np.ones((128, 2, 16), nl.float8_e5m2), None, "double_row", "trn1", "trn2",
     ["'nisa.nc_matmul(perf_mode=", V3]),
    (quantize, np.ones((32, 16), nl.bfloat16), None, "quantize_mx", "trn2", "trn3", [f"'nisa.quantize_mx' {V4}"]),
    (matmul_mx, np.zeros((32, 4), np.uint32).view("float8_e4m3fn_x4"), None, "matmul_mx", "trn2", "trn3",
     [f"'nisa.nc_matmul_mx' {V4}"]),
    (abs_min_of_tiles, X, None, "abs_min", "trn2", "trn3", [f"'abs_min' in 'nisa.tensor_tensor' {V4}"]),
    (ocp_fp8_matmul, X, None, "ocp_matmul", "trn2", "trn3", [f"'float8_e4m3fn' in 'nisa.nc_matmul' {V4}"]),
]


def traced_on(kernel, arg, grid):
    launched = kernel if grid is None else kernel[grid].kernel
    return launched.trace(None if grid is None else (grid,), (arg,), {})


@pytest.mark.parametrize("kernel,arg,grid,marker,target,first,message", GATED, ids=[g[3] for g in GATED])
def test_gating(monkeypatch, kernel, arg, grid, marker, target, first, message):
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", first)
    traced_on(kernel, arg, grid)  # legal where the instruction exists: the diagnostic below is the gate
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", target)
    with pytest.raises(nkic.NKIError) as info:
        traced_on(kernel, arg, grid)
    check_diag(info.value, M, "err_min_arch_support_for_inst", message, [(marker, "nisa.")])


def test_sendrecv_is_gated_to_neuroncore_v3(monkeypatch):
    # Legal between the two cores of a trn2 kernel[2]; trn1 has no kernel[2], so its gate is met on one core.
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn2")
    traced_on(exchange_rows, ROWS, 2)
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn1")
    with pytest.raises(nkic.NKIError) as info:
        traced_on(exchange_rows, ROWS, None)
    check_diag(info.value, M, "err_min_arch_support_for_inst", f"'nisa.sendrecv' {V3}", [("sendrecv", "nisa.")])


@nki.jit
def hwdge_copy(a):
    t = sbuf((128, 64))
    nisa.dma_copy(dst=t, src=a, dge_mode=nisa.dge_mode.hwdge)  # ERR:hwdge
    return a


def test_hwdge_copy_needs_hardware_dge(monkeypatch):
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn1")
    check_diag(trace_error(hwdge_copy, X), M, "err_min_arch_support_for_hwdge",
               "dge_mode=hwdge in 'nisa.dma_copy' needs hardware DGE, which target 'trn1' (NeuronCore-v2) does not have",
               [("hwdge", "nisa.")], api="nisa.dma_copy")


@nki.jit
def oversized_tile(a):
    t = nl.ndarray((128, 100000), nl.float32, buffer=nl.sbuf)  # ERR:sbuf_overflow
    nisa.memset(dst=t, value=0.0)
    return a


@pytest.mark.parametrize("target,capacity", [("trn2", 212984), ("trn3", 245752)])
def test_a_tile_past_the_sbuf_partition_is_a_diagnostic(monkeypatch, target, capacity):
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", target)
    check_diag(trace_error(oversized_tile, X), M, "err_stack_overflow_sbuf",
               f"Size of free dimensions 400000 bytes per partition on SBUF buffer exceeds the {capacity} bytes per "
               f"partition of {target}", [("sbuf_overflow", "nl.")], api="nl.ndarray")


@nki.jit
def takes_two(a, b):
    return a


def test_a_list_keyword_argument_is_rejected_at_the_call():
    with pytest.raises(nkic.NKIError) as info:
        nki.simulate(takes_two)(X, b=[1, 2])  # ERR:list_kw
    check_diag(info.value, M, "err_removed_in_nki_version",
               "a list argument to a kernel was removed in nki 0.3 (nkic serves nki 0.8)", [("list_kw", "nki.")])


def framework_array(module):
    """An object whose type lives in `module`: how nki.jit tells a torch or JAX array
    from a numpy one, without the framework installed."""
    return type("Array", (), {"__module__": module})()


@pytest.mark.parametrize("module,framework", [("torch", "torch"), ("jax", "jax"),
                                              ("jaxlib.xla_extension", "jaxlib")])
def test_a_framework_array_is_rejected_at_the_call(module, framework):
    with pytest.raises(nkic.NKIError) as info:
        nki.simulate(takes_two)(X, framework_array(module))  # ERR:framework
    check_diag(info.value, M, "err_unsupported_args",
               f"unsupported arguments to 'nki.jit': a {framework} array argument; nkic runs kernels on numpy "
               "arrays (pass numpy arrays, e.g. tensor.numpy())", [("framework", "nki.")])


def test_a_framework_array_keyword_is_rejected_at_the_call():
    with pytest.raises(nkic.NKIError) as info:
        nki.simulate(takes_two)(X, b=framework_array("torch"))  # ERR:framework_kw
    check_diag(info.value, M, "err_unsupported_args", "a torch array argument", [("framework_kw", "nki.")])


@nki.jit
def while_on_register(a):
    r = nisa.register_alloc(0)
    while r:  # ERR:while_reg
        nisa.register_move(r, 0)
    return a


def test_while_on_a_register_warns_at_the_users_line(monkeypatch):
    monkeypatch.setenv("NKIC_NKI_VERSION", "0.6")  # removed in 0.7
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        while_on_register.trace(None, (X,), {})
    [w] = [w for w in caught if issubclass(w.category, DeprecationWarning) and "`while reg:`" in str(w.message)]
    assert str(w.message) == ("[warn_deprecated_in_nki_version] `while reg:` is deprecated since nki 0.6: "
                              "use nl.while_loop(reg, body)")
    assert M.same_file(w.filename), w.filename
    assert w.lineno == M.line("while_reg")


@nki.jit
def copied_rows(a):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=a)
    return out


@pytest.mark.parametrize("target,lnc,cores", [("trn1", 2, 1), ("trn2", 4, 2), ("trn3", 8, 2), ("trn3", 0, 2)])
def test_a_launch_over_more_cores_than_the_target_has(monkeypatch, target, lnc, cores):
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", target)
    with pytest.raises(nkic.NKIError) as info:
        nki.simulate(copied_rows[lnc])(ROWS)  # ERR:lnc
    check_diag(info.value, M, "err_multi_cores_spmd_not_supported",
               f"kernel[{lnc}] launches the kernel over {lnc} cores, which target '{target}' does not have: a "
               f"logical NeuronCore there spans 1 to {cores} physical core(s)", [("lnc", "nki.")])


@pytest.mark.parametrize("configured,launch", [("2", 1), ("1", 2), ("two", 1)])
def test_a_launch_unlike_the_runtime_lnc_config(monkeypatch, configured, launch):
    monkeypatch.setenv("NEURON_LOGICAL_NC_CONFIG", configured)
    kernel = copied_rows if launch is None else copied_rows[launch]
    with pytest.raises(nkic.NKIError) as info:
        nki.simulate(kernel)(ROWS)  # ERR:lnc_config
    check_diag(info.value, M, "err_lnc_config_mismatch",
               f"kernel[{launch or 1}] does not match NEURON_LOGICAL_NC_CONFIG={configured}: the runtime launches "
               "every kernel over the logical NeuronCore size it is configured with", [("lnc_config", "nki.")])


@pytest.mark.parametrize("configured,launch", [("1", None), ("2", 2)])
def test_a_launch_matching_the_runtime_lnc_config_runs(monkeypatch, configured, launch):
    monkeypatch.setenv("NEURON_LOGICAL_NC_CONFIG", configured)
    kernel = copied_rows if launch is None else copied_rows[launch]
    np.testing.assert_array_equal(nki.simulate(kernel)(ROWS), ROWS)


@nki.jit
def index_grid(a):
    i = nl.arange(128)[:, None]  # ERR:arange
    return a


@nki.jit
def block_dim_tile(a):
    t = nl.ndarray((4, nl.par_dim(128), 64), nl.float32, buffer=nl.sbuf)  # ERR:par_dim
    return a


@nki.jit
def dynamic_copy(a):
    t = loaded(a)
    nisa.tensor_copy_dynamic_src(dst=t, src=t)  # ERR:dynamic_copy
    return a


REMOVED = [
    (index_grid, "arange", "nl.arange", "was removed in nki 0.1: index with slices, nl.ds(start, size) or "
     ".ap(pattern=)"),
    (block_dim_tile, "par_dim", "nl.par_dim", "was removed in nki 0.1: dim 0 is the partition dim"),
    (dynamic_copy, "dynamic_copy", "nisa.tensor_copy_dynamic_src",
     "was removed in nki 0.4: nisa.tensor_copy(dst, src.ap(pattern, offset, scalar_offset=reg))"),
]


@pytest.mark.parametrize("kernel,marker,api,why", REMOVED, ids=[r[1] for r in REMOVED])
def test_a_removed_api_says_what_replaces_it(kernel, marker, api, why):
    check_diag(trace_error(kernel, X), M, "err_unsupported_args", f"unsupported arguments to '{api}': {why}",
               [(marker, api)])


def matmul_into_columns(start, loops=1):
    @nki.jit
    def kernel(a, b):
        x = loaded(a)
        y = nl.ndarray((128, 512), nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=y, src=b)
        p = nl.ndarray((128, 4096), nl.float32, buffer=nl.psum)
        for i in nl.affine_range(loops):
            nisa.nc_matmul(dst=p[:, start + i * 512:start + (i + 1) * 512], stationary=x, moving=y)  # ERR:bank
        return a
    return kernel


def matmul_warnings(kernel):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        kernel.trace(None, (np.ones((128, 128), np.float32), np.ones((128, 512), np.float32)), {})
    return [w for w in caught if "warn_matmul_dst_crosses_psum_bank" in str(w.message)]


def test_a_matmul_dst_across_a_psum_bank_warns_before_neuroncore_v4(monkeypatch):
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn2")
    [w] = matmul_warnings(matmul_into_columns(256))
    assert str(w.message) == (
        "[warn_matmul_dst_crosses_psum_bank] nc_matmul writes PSUM tensor 'p' at free bytes 1024-3071 of each "
        "partition, across a 2048-byte PSUM bank boundary: before NeuronCore-v4 a matmul's output fits one bank, so "
        "the hardware's result is wrong there")
    assert M.same_file(w.filename) and w.lineno == M.line("bank")


@pytest.mark.parametrize("target,start,loops", [("trn2", 512, 1), ("trn2", 0, 4), ("trn3", 256, 1)])
def test_a_matmul_dst_within_a_bank_or_on_neuroncore_v4_is_quiet(monkeypatch, target, start, loops):
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", target)
    assert matmul_warnings(matmul_into_columns(start, loops)) == []


def wide_matmul(n, dst_dtype=nl.float32):
    @nki.jit
    def kernel(a, b):
        x = nl.ndarray((128, 128), nl.bfloat16, buffer=nl.sbuf)
        nisa.dma_copy(dst=x, src=a)
        y = nl.ndarray((128, n), nl.bfloat16, buffer=nl.sbuf)
        nisa.dma_copy(dst=y, src=b)
        p = nl.ndarray((128, min(n, 8192)), dst_dtype, buffer=nl.psum)
        nisa.nc_matmul(dst=p, stationary=x, moving=y)  # ERR:wide
        s = nl.ndarray((128, n), nl.float32, buffer=nl.sbuf)
        nisa.tensor_copy(dst=s, src=p)
        out = nl.ndarray((128, n), nl.float32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=s)
        return out
    return kernel


def wide_operands(n):
    rng = np.random.default_rng(n)
    return rng.uniform(-1, 1, (128, 128)).astype(nl.bfloat16), rng.uniform(-1, 1, (128, n)).astype(nl.bfloat16)


@pytest.mark.parametrize("n", [2048, 4096])
def test_a_neuroncore_v4_matmul_takes_a_moving_tile_across_the_psum_banks(monkeypatch, n):
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn3")
    a, b = wide_operands(n)
    out = nki.simulate(wide_matmul(n))(a, b)
    np.testing.assert_allclose(out, a.astype(np.float32).T @ b.astype(np.float32), rtol=1e-5, atol=1e-4)


def test_a_bf16_dst_takes_twice_the_fp32_columns_on_neuroncore_v4(monkeypatch):
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn3")
    a, b = wide_operands(8192)
    out = nki.simulate(wide_matmul(8192, nl.bfloat16))(a, b)
    ref = a.astype(np.float32).T @ b.astype(np.float32)
    np.testing.assert_allclose(out, ref.astype(nl.bfloat16).astype(np.float32), rtol=1e-2, atol=1e-2)


def test_a_moving_tile_wider_than_8192_columns_is_refused_on_neuroncore_v4(monkeypatch):
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn3")
    check_diag(trace_error(wide_matmul(8193, nl.bfloat16), *wide_operands(8193)), M,
               "err_size_of_dimension_exceed_arch_limit",
               "size of dimension 1 in 'y[128, 8193]' of 'nc_matmul' exceed architecture limitation of 8192",
               [("wide", "nisa.")], api="nisa.nc_matmul")


def test_a_moving_tile_wider_than_a_psum_bank_is_refused_before_neuroncore_v4(monkeypatch):
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn2")
    check_diag(trace_error(wide_matmul(513), *wide_operands(513)), M, "err_size_of_dimension_exceed_arch_limit",
               "size of dimension 1 in 'y[128, 513]' of 'nc_matmul' exceed architecture limitation of 512",
               [("wide", "nisa.")], api="nisa.nc_matmul")


@nki.jit
def column_tiles(a):
    """Two 64-column halves of the PE array, one per iteration: the start is a loop expression."""
    x = loaded(a[:, 0:64])
    p = nl.ndarray((64, 128), nl.float32, buffer=nl.psum)
    for i in nl.affine_range(2):
        nisa.nc_matmul(p[:, i * 64:(i + 1) * 64], x, x, tile_position=(0, i * 64), tile_size=(128, 64))
    o = sbuf((64, 128))
    nisa.tensor_copy(dst=o, src=p)
    out = nl.ndarray((64, 128), nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=o)
    return out


def test_a_tile_start_may_be_an_expression_of_a_loop_variable():
    got = nki.simulate(column_tiles)(X)
    want = X[:, 0:64].T @ X[:, 0:64]
    np.testing.assert_allclose(got, np.concatenate([want, want], axis=1))


@nki.jit
def double_row_column_tile(a):
    x = loaded(a)
    p = nl.ndarray((16, 16), nl.float32, buffer=nl.psum)
    nisa.nc_matmul(p, x, x, perf_mode=nisa.matmul_perf_mode.double_row, tile_position=(0, 0),  # ERR:dr_tile
                   tile_size=(128, 64))
    return a


def test_double_row_does_not_combine_with_column_tiling():
    e = trace_error(double_row_column_tile.retarget("trn2"), np.ones((128, 2, 16), nl.float8_e5m2))
    check_diag(e, M, "err_unsupported_args",
               "unsupported arguments to 'nisa.nc_matmul': perf_mode double_row cannot be combined with column "
               "tiling (tile_size (128, 64))", [("dr_tile", "nisa.")], api="nisa.nc_matmul")


@nki.jit
def matmul_mx_column_tile(a):
    q, s = loaded(a), sbuf((32, 4), nl.uint8)
    nisa.memset(dst=s, value=127)
    acc = nl.ndarray((4, 4), nl.float32, buffer=nl.psum)
    nisa.nc_matmul_mx(dst=acc, stationary=q, moving=q, stationary_scale=s, moving_scale=s,  # ERR:mx_tile
                      tile_position=(0, 64), tile_size=(32, 64))
    return a


def test_matmul_mx_tiles_by_rows_only():
    e = trace_error(matmul_mx_column_tile.retarget("trn3"), np.zeros((32, 4), np.uint32).view("float8_e4m3fn_x4"))
    check_diag(e, M, "err_unsupported_args",
               "unsupported arguments to 'nisa.nc_matmul_mx': tile_size (32, 64): nc_matmul_mx tiles the PE array "
               "by rows only (column_size 128)", [("mx_tile", "nisa.")], api="nisa.nc_matmul_mx")
