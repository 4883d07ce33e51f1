"""NKIC_NKI_VERSION: which NKI nkic serves (0.2 ... 0.8, the newest by default). Each form
whose acceptance changed between versions runs under a version that has it, checked
against numpy, and is a diagnostic at the user's line, with the migration hint, under one
that does not."""
import warnings

import numpy as np
import pytest

import nki
import nki.isa as nisa
import nki.language as nl
import nkic
from nki_test_util import Markers, check_diag

M = Markers(__file__)
N = 8
DATA = np.arange(1, N + 1, dtype=np.float32).reshape(1, N)
VERSIONS = ["0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8"]


@pytest.fixture(autouse=True)
def _no_version(monkeypatch):
    monkeypatch.delenv("NKIC_NKI_VERSION", raising=False)
    monkeypatch.delenv("NEURON_PLATFORM_TARGET_OVERRIDE", raising=False)


def serve(monkeypatch, version):
    monkeypatch.setenv("NKIC_NKI_VERSION", version)


def test_the_newest_version_is_served_by_default():
    assert nki.__version__ == "0.8.0"


@pytest.mark.parametrize("version", VERSIONS)
def test_each_version_is_served_as_named(monkeypatch, version):
    serve(monkeypatch, version)
    assert nki.__version__ == version + ".0"


@pytest.mark.parametrize("spelling,served", [("0.6.0", "0.6.0"), ("0.3.1", "0.3.0"), ("", "0.8.0")])
def test_a_patch_number_is_accepted_and_an_empty_value_is_the_default(monkeypatch, spelling, served):
    serve(monkeypatch, spelling)
    assert nki.__version__ == served


@nki.jit
def copy_kernel(a):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=a)
    return out


@pytest.mark.parametrize("value", ["0.9", "0.1", "1.0", "latest", "0.6.", "v0.6", "0.6.0.1"])
def test_an_unknown_version_is_an_error_at_the_kernel_call(monkeypatch, value):
    serve(monkeypatch, value)
    with pytest.raises(nkic.NKIError) as info:
        nki.simulate(copy_kernel)(DATA)  # ERR:bad_version
    check_diag(info.value, M, "err_unsupported_nki_version",
               f"NKIC_NKI_VERSION='{value}' names no NKI version nkic serves: one of 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, "
               "0.8 (with or without a patch number, e.g. 0.6.0)", [("bad_version", "nki.")])
    assert info.value.hint == "unset NKIC_NKI_VERSION to serve the newest"
    with pytest.raises(nkic.NKIError) as info:
        nki.__version__
    assert info.value.code == "err_unsupported_nki_version"


# --- nl.dynamic_range and `while reg:`: deprecated in 0.6, removed in 0.7 ---

def count_tile(src):
    t = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=src)
    return t


@nki.jit
def dynamic_rows(data, n):
    """output[0, i] = data[0, i] for i < n (a run-time count), the rest 0."""
    output = nl.ndarray((1, N), dtype=nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=output, src=nl.zeros((1, N), dtype=nl.float32, buffer=nl.sbuf))
    ub = nisa.register_alloc()
    nisa.register_load(ub, count_tile(n))
    temp = nl.ndarray((1, 1), dtype=nl.float32, buffer=nl.sbuf)
    for i in nl.dynamic_range(ub):  # ERR:dynamic_range
        nisa.dma_copy(dst=temp, src=data.ap([[1, 1], [1, 1]], scalar_offset=i, indirect_dim=1))
        nisa.dma_copy(dst=output.ap([[1, 1], [1, 1]], scalar_offset=i, indirect_dim=1), src=temp)
    return output


@nki.jit
def count_down(data, count_input):
    """acc = data * count: the register counts down from count_input, tested before each trip."""
    val = nl.ndarray((1, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=val, src=data)
    acc = nl.zeros((1, 1), dtype=nl.float32, buffer=nl.sbuf)
    count_sb = count_tile(count_input)
    reg = nisa.register_alloc()
    nisa.register_load(reg, count_sb)
    while reg:  # ERR:while_reg
        nisa.tensor_tensor(dst=acc, data1=acc, data2=val, op=nl.add)
        nisa.tensor_scalar(dst=count_sb, data=count_sb, op0=nl.subtract, operand0=1)
        nisa.register_load(reg, count_sb)
    out = nl.ndarray((1, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=acc)
    return out


def run_dynamic_rows(n=3):
    return nki.simulate(dynamic_rows)(DATA, np.array([[n]], np.int32))


def run_count_down(count=3):
    return nki.simulate(count_down)(np.array([[1.5]], np.float32), np.array([[count]], np.int32))


LOOPS = [(run_dynamic_rows, np.where(np.arange(N) < 3, DATA, 0), "dynamic_range", "nl.", "nl.dynamic_range",
          "nl.fori_loop(lower, upper, body)"),
         (run_count_down, [[4.5]], "while_reg", "reg:", "`while reg:`", "nl.while_loop(reg, body)")]


@pytest.mark.parametrize("run,expected,marker,token,form,instead", LOOPS, ids=["dynamic_range", "while_reg"])
@pytest.mark.parametrize("version", ["0.7", "0.8"])
def test_removed_runtime_loops_are_errors_from_0_7(monkeypatch, run, expected, marker, token, form, instead, version):
    serve(monkeypatch, version)
    with pytest.raises(nkic.NKIError) as info:
        run()
    check_diag(info.value, M, "err_removed_in_nki_version",
               f"{form} was removed in nki 0.7 (nkic serves nki {version})", [(marker, token)])
    assert info.value.hint == (f"use {instead} (`nkic migrate` writes the newest API); NKIC_NKI_VERSION=0.6 runs "
                               "the kernel as nki 0.6 did")


@pytest.mark.parametrize("run,expected,marker,token,form,instead", LOOPS, ids=["dynamic_range", "while_reg"])
def test_runtime_loops_warn_in_0_6_and_run(monkeypatch, run, expected, marker, token, form, instead):
    serve(monkeypatch, "0.6")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = run()
    np.testing.assert_array_equal(out, expected)
    [w] = [w for w in caught if issubclass(w.category, DeprecationWarning)]
    assert str(w.message) == f"[warn_deprecated_in_nki_version] {form} is deprecated since nki 0.6: use {instead}"
    assert M.same_file(w.filename) and w.lineno == M.line(marker)


@pytest.mark.parametrize("run,expected,marker,token,form,instead", LOOPS, ids=["dynamic_range", "while_reg"])
@pytest.mark.parametrize("version", ["0.2", "0.5"])
def test_runtime_loops_run_silently_before_0_6(monkeypatch, run, expected, marker, token, form, instead, version):
    serve(monkeypatch, version)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(run(), expected)


@nki.jit
def fori_rows(data, n):
    output = nl.ndarray((1, N), dtype=nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=output, src=nl.zeros((1, N), dtype=nl.float32, buffer=nl.sbuf))
    ub = nisa.register_alloc()
    nisa.register_load(ub, count_tile(n))
    temp = nl.ndarray((1, 1), dtype=nl.float32, buffer=nl.sbuf)

    def body(i):
        nisa.dma_copy(dst=temp, src=data.ap([[1, 1], [1, 1]], scalar_offset=i, indirect_dim=1))
        nisa.dma_copy(dst=output.ap([[1, 1], [1, 1]], scalar_offset=i, indirect_dim=1), src=temp)

    nl.fori_loop(0, ub, body)  # ERR:fori_loop
    return output


def test_fori_loop_is_new_in_0_6(monkeypatch):
    serve(monkeypatch, "0.5")
    with pytest.raises(nkic.NKIError) as info:
        nki.simulate(fori_rows)(DATA, np.array([[3]], np.int32))
    check_diag(info.value, M, "err_not_in_nki_version",
               "nl.fori_loop is not in nki 0.5 (NKIC_NKI_VERSION=0.5): it came in nki 0.6", [("fori_loop", "nl.")])
    assert info.value.hint == "NKIC_NKI_VERSION=0.6 or newer serves it; nki 0.5 writes `for i in nl.dynamic_range(...)`"
    serve(monkeypatch, "0.6")
    np.testing.assert_array_equal(nki.simulate(fori_rows)(DATA, np.array([[3]], np.int32)),
                                  np.where(np.arange(N) < 3, DATA, 0))


# --- the NKI 0.2 surface, removed in 0.3 ---

def beta2_add(a_input, b_input, result):
    """nki 0.2: builtin `sbuf` views, tensor_copy(dtype=), the output written into `result`."""
    a_tile = sbuf.view(dtype=a_input.dtype, shape=a_input.shape)  # noqa: F821  # ERR:sbuf_view
    nisa.dma_copy(dst=a_tile, src=a_input)
    b_tile = sbuf.view(dtype=b_input.dtype, shape=b_input.shape)  # noqa: F821
    nisa.dma_copy(dst=b_tile, src=b_input)
    acc = psum.view(dtype=nl.float32, shape=a_input.shape)  # noqa: F821
    nisa.tensor_tensor(dst=acc, data1=a_tile, data2=b_tile, op=nl.add)
    c_tile = sbuf.view(dtype=result.dtype, shape=a_input.shape)  # noqa: F821
    nisa.tensor_copy(dst=c_tile, src=acc, dtype=result.dtype)  # ERR:copy_dtype
    staged = hbm.view(dtype=result.dtype, shape=a_input.shape)  # noqa: F821
    nisa.dma_copy(dst=staged, src=c_tile)
    nisa.dma_copy(dst=result, src=staged)
    return result


def test_a_0_2_kernel_runs_as_0_2_did(monkeypatch):
    serve(monkeypatch, "0.2")
    a, b = DATA.reshape(2, 4), np.full((2, 4), 0.5, np.float32)
    result = np.zeros((2, 4), np.float32)
    kernel = nki.jit(beta2_add, platform_target="trn1")
    returned = kernel[(1,)](a, b, result)
    np.testing.assert_array_equal(result, a + b)  # written into the caller's array
    np.testing.assert_array_equal(returned, a + b)


def test_platform_target_names_the_target_in_0_2(monkeypatch):
    serve(monkeypatch, "0.2")
    seen = []

    def which(a):
        seen.append(nisa.get_nc_version())
        return copy_kernel(a)

    nki.simulate(nki.jit(which, platform_target="trn1"))(DATA)
    nki.simulate(nki.jit(which, platform_target="trn3"))(DATA)
    assert seen == [nisa.nc_version.gen2, nisa.nc_version.gen4]


@pytest.mark.parametrize("version", ["0.3", "0.8"])
def test_platform_target_is_an_error_from_0_3(monkeypatch, version):
    serve(monkeypatch, version)
    with pytest.raises(nkic.NKIError) as info:
        nki.jit(beta2_add, platform_target="trn1")  # ERR:platform_target
    check_diag(info.value, M, "err_removed_in_nki_version",
               f"nki.jit(platform_target=) was removed in nki 0.3 (nkic serves nki {version})",
               [("platform_target", "nki.")])
    assert info.value.hint == ("use @nki.jit, and the target in the environment variable "
                               "NEURON_PLATFORM_TARGET_OVERRIDE (trn1, trn2, trn3) (`nkic migrate` writes the newest "
                               "API); NKIC_NKI_VERSION=0.2 runs the kernel as nki 0.2 did")


def test_builtin_buffers_are_an_error_from_0_3(monkeypatch):
    serve(monkeypatch, "0.3")
    a = DATA.reshape(2, 4)
    with pytest.raises(nkic.NKIError) as info:
        nki.simulate(beta2_add)(a, a, np.zeros_like(a))
    check_diag(info.value, M, "err_removed_in_nki_version",
               "the builtin buffer's .view(dtype=, shape=) was removed in nki 0.3 (nkic serves nki 0.3)",
               [("sbuf_view", "sbuf.view")])
    assert info.value.hint.startswith("use nl.ndarray(shape, dtype, buffer=nl.sbuf) (nl.psum, nl.shared_hbm) (")


def modern_copy_with_dtype(a):
    t = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    c = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    nisa.tensor_copy(dst=c, src=t, dtype=a.dtype)  # ERR:modern_copy_dtype
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=c)
    return out


def test_tensor_copy_dtype_is_an_error_from_0_3(monkeypatch):
    serve(monkeypatch, "0.4")
    with pytest.raises(nkic.NKIError) as info:
        nki.simulate(modern_copy_with_dtype)(DATA)
    check_diag(info.value, M, "err_removed_in_nki_version",
               "nisa.tensor_copy(dtype=) was removed in nki 0.3 (nkic serves nki 0.4)",
               [("modern_copy_dtype", "nisa.")], api="nisa.tensor_copy")
    assert info.value.hint.startswith("use nisa.tensor_copy(dst, src): the copy converts to dst's dtype, so "
                                      "allocate dst with the dtype wanted (")
    serve(monkeypatch, "0.2")
    np.testing.assert_array_equal(nki.simulate(modern_copy_with_dtype)(DATA), DATA)


def tile_rows(a, result):
    """nki 0.2's SPMD grid: program i copies rows [2i, 2i + 2)."""
    rows = nl.ndarray((2, a.shape[1]), dtype=a.dtype, buffer=nl.sbuf)
    start = nl.program_id(0) * 2
    nisa.dma_copy(dst=rows, src=a[nl.ds(start, 2), :])
    nisa.tensor_scalar(dst=rows, data=rows, op0=nl.multiply, operand0=3.0)
    nisa.dma_copy(dst=result[nl.ds(start, 2), :], src=rows)
    return result


def test_a_0_2_launch_grid_runs_one_program_per_point(monkeypatch):
    serve(monkeypatch, "0.2")
    a = np.arange(6 * 4, dtype=np.float32).reshape(6, 4)
    result = np.zeros_like(a)
    nki.jit(tile_rows)[(3,)](a, result)
    np.testing.assert_array_equal(result, a * 3)


def test_a_launch_grid_is_an_error_from_0_3(monkeypatch):
    serve(monkeypatch, "0.3")
    with pytest.raises(nkic.NKIError) as info:
        nki.jit(tile_rows)[(3,)]  # ERR:grid
    check_diag(info.value, M, "err_removed_in_nki_version",
               "kernel[grid] (an SPMD launch grid) was removed in nki 0.3 (nkic serves nki 0.3)", [("grid", "nki.")])
    assert info.value.hint.startswith("use a plain call, kernel(...), looping over the tiles inside the kernel "
                                      "(kernel[n] takes one integer, the logical NeuronCore size) (")


@nki.jit
def first_of(a, sizes):
    return copy_kernel(a)


def test_list_arguments_are_accepted_in_0_2(monkeypatch):
    serve(monkeypatch, "0.2")
    np.testing.assert_array_equal(nki.simulate(first_of)(DATA, [1, 2]), DATA)
    serve(monkeypatch, "0.3")
    with pytest.raises(nkic.NKIError) as info:
        nki.simulate(first_of)(DATA, [1, 2])  # ERR:list
    check_diag(info.value, M, "err_removed_in_nki_version",
               "a list argument to a kernel was removed in nki 0.3 (nkic serves nki 0.3)", [("list", "nki.")])


# --- instructions new in a version (NKI_CURRENT_API.md §0) ---

def exp_of(a):
    x = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=x, src=a)
    nisa.exponential(dst=x, src=x)  # ERR:exponential
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=x)
    return out


def exp_of_scaled(a):
    x = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=x, src=a)
    nisa.activate2(dst=x, op=nl.exp, data=x, imm0=2.0, imm1=1.0, op0=nl.multiply, op1=nl.add)  # ERR:activate2
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=x)
    return out


def top8(a):
    src = nl.ndarray(a.shape, nl.bfloat16, buffer=nl.sbuf)
    nisa.dma_copy(dst=src, src=a)
    vals, idx = nl.ndarray((a.shape[0], 8), nl.bfloat16, buffer=nl.sbuf), nl.ndarray((a.shape[0], 8), nl.uint32)
    nisa.topk(val_dst=vals, idx_dst=idx, src=src, n=40)  # ERR:topk
    out = nl.ndarray(vals.shape, nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=vals)
    return out


SMALL = (np.arange(16 * 3, dtype=np.float32).reshape(16, 3) - 20) / 8


@pytest.mark.parametrize("kernel,marker,api,introduced,before,instead,numpy", [
    (exp_of, "exponential", "nisa.exponential", "0.3", "0.2", "nisa.activation(dst, op=nl.exp, data, bias=...)",
     np.exp),
    (exp_of_scaled, "activate2", "nisa.activate2", "0.4", "0.3", "nisa.tensor_scalar(...) then nisa.activation(...)",
     lambda a: np.exp(a * 2 + 1)),
    (top8, "topk", "nisa.topk", "0.6", "0.5", "nisa.max8 and nisa.nc_find_index8", None),
], ids=["exponential", "activate2", "topk"])
def test_an_instruction_is_rejected_before_the_version_that_brought_it(monkeypatch, kernel, marker, api, introduced,
                                                                       before, instead, numpy):
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn3")
    serve(monkeypatch, before)
    with pytest.raises(nkic.NKIError) as info:
        nki.simulate(kernel)(SMALL)
    check_diag(info.value, M, "err_not_in_nki_version",
               f"{api} is not in nki {before} (NKIC_NKI_VERSION={before}): it came in nki {introduced}",
               [(marker, "nisa.")], api=api)
    assert info.value.hint == f"NKIC_NKI_VERSION={introduced} or newer serves it; nki {before} writes {instead}"
    serve(monkeypatch, introduced)
    out = nki.simulate(kernel)(SMALL)
    if numpy is not None:
        np.testing.assert_allclose(out, numpy(SMALL), rtol=1e-6)


def plain(a):
    return copy_kernel(a)


def test_jit_mode_is_deprecated_from_0_3(monkeypatch):
    serve(monkeypatch, "0.3")
    with pytest.warns(DeprecationWarning) as caught:
        kernel = nki.jit(plain, mode="trace")  # ERR:jit_mode
    [w] = caught.list
    assert str(w.message) == ("[warn_deprecated_in_nki_version] nki.jit(mode=) is deprecated since nki 0.3: use "
                              "@nki.jit (the compiler ignores mode=)")
    assert M.same_file(w.filename) and w.lineno == M.line("jit_mode")
    np.testing.assert_array_equal(nki.simulate(kernel)(DATA), DATA)
    serve(monkeypatch, "0.2")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(nki.simulate(nki.jit(mode="trace")(plain))(DATA), DATA)


@nki.jit
def rows_twice(a):
    """Rows 0 and 2 of a, each doubled: 0.3 let a loop rebind its variable (Python semantics)."""
    out = nl.ndarray((2, a.shape[1]), a.dtype, buffer=nl.shared_hbm)
    for i in range(2):
        row = i
        i = i * 2  # ERR:loop_write
        t = nl.ndarray((1, a.shape[1]), a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a[i:i + 1, :])
        nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=2.0)
        nisa.dma_copy(dst=out[row:row + 1, :], src=t)
    return out


def test_a_loop_may_rebind_its_variable_before_0_4(monkeypatch):
    a = np.arange(4 * 8, dtype=np.float32).reshape(4, 8)
    for version in ("0.2", "0.3"):
        serve(monkeypatch, version)
        np.testing.assert_array_equal(nki.simulate(rows_twice)(a), a[[0, 2]] * 2)
    serve(monkeypatch, "0.4")
    with pytest.raises(nkic.NKIError) as info:
        nki.simulate(rows_twice)(a)
    check_diag(info.value, M, "err_unsupported_python_construct",
               "a write to the loop variable 'i' inside its loop is not supported in an NKI kernel",
               [("loop_write", "i =")])
    assert info.value.hint == ("loop variables are read-only since nki 0.4: assign to another name "
                               "(NKIC_NKI_VERSION=0.3 runs the kernel as nki 0.3 did)")


@nki.jit
def middle_columns(a):
    """Columns 2..5 of a through .slice (0.5+), after a .reshape (0.2+) that keeps the shape."""
    v = a.reshape(a.shape).slice(1, 2, 6)  # ERR:slice
    t = nl.ndarray(v.shape, a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=v)
    out = nl.ndarray(v.shape, a.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=t)
    return out


def test_view_methods_are_new_in_0_5(monkeypatch):
    a = np.arange(4 * 8, dtype=np.float32).reshape(4, 8)
    serve(monkeypatch, "0.4")
    with pytest.raises(nkic.NKIError) as info:
        nki.simulate(middle_columns)(a)
    check_diag(info.value, M, "err_not_in_nki_version",
               "the NkiTensor view methods (slice, select, permute, ...) is not in nki 0.4 (NKIC_NKI_VERSION=0.4): "
               "it came in nki 0.5", [("slice", "a.reshape")], api="tensor.slice")
    serve(monkeypatch, "0.5")
    np.testing.assert_array_equal(nki.simulate(middle_columns)(a), a[:, 2:6])


# The NKI 0.7 and 0.8 surface: refused by the versions before it, at the user's line.

@nki.jit
def grid_copy(a):
    g = nl.tiles(a, tile_shape=(16, 3))  # ERR:tiles
    t = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=g[0, 0].data)
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=t)
    return out


@nki.jit
def lnc_barrier(a):
    t = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=t)
    nki.lnc.core_barrier(out, (0, 1))  # ERR:lnc
    return out


@pytest.mark.parametrize("kernel,marker,token,form,introduced,before,instead", [
    (grid_copy, "tiles", "nl.", "the tile grids (nl.tiles, nl.blocks, nl.alloc_tiles, nl.alloc_blocks)", "0.7", "0.6",
     "nl.ndarray tiles and .ap(...) views of HBM"),
    (lnc_barrier, "lnc", "nki.", "nki.lnc", "0.8", "0.7", "nisa.sendrecv, nisa.sendrecv_compute and nisa.core_barrier"),
], ids=["grids", "lnc"])
def test_the_0_7_and_0_8_surface_is_refused_before_its_version(monkeypatch, kernel, marker, token, form, introduced,
                                                               before, instead):
    serve(monkeypatch, before)
    with pytest.raises(nkic.NKIError) as info:
        nki.simulate(kernel)(SMALL)
    check_diag(info.value, M, "err_not_in_nki_version",
               f"{form} is not in nki {before} (NKIC_NKI_VERSION={before}): it came in nki {introduced}",
               [(marker, token)])
    assert info.value.hint == f"NKIC_NKI_VERSION={introduced} or newer serves it; nki {before} writes {instead}"
    serve(monkeypatch, introduced)
    np.testing.assert_array_equal(nki.simulate(kernel)(SMALL), SMALL)


def test_the_nisa_lnc_forms_warn_only_from_0_8(monkeypatch):
    @nki.jit
    def barrier(a):
        out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=a)
        nisa.core_barrier(out, (0, 1))
        return out

    for version, warns in (("0.7", False), ("0.8", True)):
        serve(monkeypatch, version)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            np.testing.assert_array_equal(nki.simulate(barrier)(SMALL), SMALL)
        deprecations = [str(w.message) for w in seen if issubclass(w.category, DeprecationWarning)]
        assert deprecations == (["[warn_deprecated_in_nki_version] nisa.core_barrier is deprecated since nki 0.8: use "
                                 "nki.lnc.core_barrier"] if warns else []), version


def test_compile_configs_are_new_in_0_7(monkeypatch):
    from nki.compiler import CompileConfig
    serve(monkeypatch, "0.6")
    with pytest.raises(nkic.NKIError) as info:
        nki.jit(copy_kernel.func, compile_config=CompileConfig())  # ERR:compile_config
    check_diag(info.value, M, "err_not_in_nki_version",
               "nki.jit(compile_config=, specialization_config=) is not in nki 0.6 (NKIC_NKI_VERSION=0.6): it came in "
               "nki 0.7", [("compile_config", "nki.")])


def test_the_parser_frontend_rules_hold_before_0_7(monkeypatch):
    class Shape:
        pass

    @nki.jit
    def uses_a_plain_class(a):
        Shape()
        out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=a)
        return out

    serve(monkeypatch, "0.6")
    with pytest.raises(nkic.NKIError) as info:
        nki.simulate(uses_a_plain_class)(SMALL)
    assert info.value.code == "err_unsupported_python_construct"
    serve(monkeypatch, "0.7")
    np.testing.assert_array_equal(nki.simulate(uses_a_plain_class)(SMALL), SMALL)


@nki.jit
def to_int32(a):
    t = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    i = nl.ndarray(a.shape, nl.int32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=i, src=t)
    out = nl.ndarray(a.shape, nl.int32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=i)
    return out


def test_a_float_rounds_to_an_integer_to_nearest_even_from_0_6(monkeypatch):
    a = np.array([[0.5, 1.5, 2.5, -0.5, -1.5, 2.7, -2.7, 3e9]], np.float32)
    serve(monkeypatch, "0.5")
    np.testing.assert_array_equal(nki.simulate(to_int32)(a), [[0, 1, 2, 0, -1, 2, -2, 2**31 - 1]])
    serve(monkeypatch, "0.6")
    np.testing.assert_array_equal(nki.simulate(to_int32)(a), [[0, 2, 2, 0, -2, 3, -3, 2**31 - 1]])


@nki.jit
def bitvec_on_gpsimd(a):
    x = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=x, src=a)
    nisa.tensor_tensor(dst=x, data1=x, data2=x, op=nl.bitwise_xor, engine=nisa.engine.gpsimd)
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=x)
    return out


def test_the_0_8_announcements_warn_from_0_8_only(monkeypatch):
    a = np.arange(16 * 4, dtype=np.int32).reshape(16, 4)
    for version, warns in (("0.7", False), ("0.8", True)):
        serve(monkeypatch, version)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            np.testing.assert_array_equal(nki.simulate(bitvec_on_gpsimd)(a), np.zeros_like(a))
        assert any("warn_bitvec_op_engine" in str(w.message) for w in seen) == warns, version
