"""The current nki API (NKI 0.3-0.6) on nkic: kernels written here against the spec
(NKI_CURRENT_API.md), simulated and compared with numpy, and their IR checked to be
the instructions the calls name (destination passing writes dst itself)."""
import sys

import numpy as np
import pytest

import nki
import nki.isa as nisa
import nki.language as nl
import nkic
from nki.typing import tensor  # noqa: F401  (the module imports as kernels use it)


def rand(*shape, seed=0):
    return np.random.default_rng(seed).uniform(-1, 1, size=shape).astype(np.float32)


@nki.jit
def add_then_scale(a, b):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    x = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    y = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=x, src=a)
    nisa.dma_copy(dst=y, src=b)
    s = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=s, data1=x, data2=y, op=nl.add)
    nisa.tensor_scalar(dst=s, data=s, op0=nl.multiply, operand0=2.0, op1=nl.subtract, operand1=1.0)
    nisa.dma_copy(dst=out, src=s)
    return out


def test_destination_passing_numbers_and_ir():
    a, b = rand(128, 256), rand(128, 256, seed=1)
    np.testing.assert_allclose(nki.simulate(add_then_scale)(a, b), (a + b) * 2 - 1, rtol=1e-6)
    ir = add_then_scale.trace(None, (a, b), {}).ir.text()
    body = [line.strip() for line in ir.splitlines() if "] = " in line or "](" in line]
    ops = [line.split("=", 1)[1].split("[", 1)[0].strip() for line in body if " = " in line]
    assert ops == ["load", "load", "tensor_tensor", "tensor_scalar", "store"], ir
    assert any(line.startswith("s[i0, i1] = tensor_tensor[") for line in body), ir


@nki.jit
def matmul_accumulate(lhs_t, rhs, mode):
    k_tiles = lhs_t.shape[0] // 128
    out = nl.ndarray((lhs_t.shape[1], rhs.shape[1]), nl.float32, buffer=nl.shared_hbm)
    acc = nl.ndarray((lhs_t.shape[1], rhs.shape[1]), nl.float32, buffer=nl.psum)
    for k in nl.affine_range(k_tiles):
        l_sb = nl.ndarray((128, lhs_t.shape[1]), nl.float32, buffer=nl.sbuf)
        r_sb = nl.ndarray((128, rhs.shape[1]), nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=l_sb, src=lhs_t[k * 128:(k + 1) * 128, :])
        nisa.dma_copy(dst=r_sb, src=rhs[k * 128:(k + 1) * 128, :])
        if mode == "infer":
            nisa.nc_matmul(acc, l_sb, r_sb)
        elif mode == "explicit":
            nisa.nc_matmul(acc, l_sb, r_sb, accumulate=(k > 0))
        else:
            nisa.nc_matmul(acc, l_sb, r_sb, accumulate=False)
    res = nl.ndarray(acc.shape, nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=res, src=acc)
    nisa.dma_copy(dst=out, src=res)
    return out


@pytest.mark.parametrize("mode", ["infer", "explicit"])
def test_nc_matmul_first_write_overwrites(mode):
    lhs_t, rhs = rand(384, 64), rand(384, 256, seed=1)
    np.testing.assert_allclose(nki.simulate(matmul_accumulate)(lhs_t, rhs, mode), lhs_t.T @ rhs, rtol=1e-4,
                               atol=1e-4)
    ir = matmul_accumulate.trace(None, (lhs_t, rhs, mode), {}).ir.text()
    matmuls = [line.strip() for line in ir.splitlines() if "nc_matmul[" in line]
    assert [("+=" in m) for m in matmuls] == [False, True, True], ir


def test_nc_matmul_accumulate_false_overwrites_each_time():
    lhs_t, rhs = rand(256, 64), rand(256, 128, seed=1)
    out = nki.simulate(matmul_accumulate)(lhs_t, rhs, "overwrite")
    np.testing.assert_allclose(out, lhs_t[128:].T @ rhs[128:], rtol=1e-4, atol=1e-4)


@nki.jit
def python_semantics(a):
    count = 0
    tiles = []
    for i in range(4):  # a Python counter and list grow across iterations
        count += 1
        t = nl.ndarray((128, 64), nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a[:, i * 64:(i + 1) * 64])
        tiles.append(t)
    out = nl.ndarray((128, 64), nl.float32, buffer=nl.shared_hbm)
    acc = nl.ndarray((128, 64), nl.float32, buffer=nl.sbuf)
    nisa.memset(dst=acc, value=0.0)
    for t in tiles[::-1]:
        nisa.tensor_tensor(dst=acc, data1=acc, data2=t, op=nl.add)
    nisa.tensor_scalar(dst=acc, data=acc, op0=nl.multiply, operand0=1.0 / count)
    nisa.dma_copy(dst=out, src=acc)
    return out


def test_loops_have_python_semantics():
    a = rand(128, 256)
    np.testing.assert_allclose(nki.simulate(python_semantics)(a), a.reshape(128, 4, 64).mean(axis=1), rtol=1e-5,
                               atol=1e-6)


@nki.jit
def iota_and_select(a):
    out = nl.ndarray((128, 128), nl.float32, buffer=nl.shared_hbm)
    idx = nl.ndarray((128, 128), nl.int32, buffer=nl.sbuf)
    nisa.iota(idx, [[1, 128]], offset=3, channel_multiplier=1000)
    x = nl.ndarray((128, 128), nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=x, src=idx)
    y = nl.ndarray((128, 128), nl.float32, buffer=nl.sbuf)
    # keep key <= query (partition = query, free = key): causal mask
    nisa.affine_select(y, [[-1, 128]], 1, x, -1.0, cmp_op=nl.greater_equal)
    nisa.dma_copy(dst=out, src=y)
    return out


def test_iota_pattern_and_affine_select():
    out = nki.simulate(iota_and_select)(np.zeros((1, 1), np.float32))
    p, f = np.meshgrid(np.arange(128), np.arange(128), indexing="ij")
    want = np.where(p - f >= 0, 3 + 1000 * p + f, -1.0)
    np.testing.assert_array_equal(out, want.astype(np.float32))


@nki.jit
def activation_reduce_transpose(a):
    x = nl.ndarray((128, 64), nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=x, src=a)
    e = nl.ndarray((128, 64), nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=e, op=nl.exp, data=x, scale=0.5)
    s = nl.ndarray((128, 1), nl.float32, buffer=nl.sbuf)
    nisa.tensor_reduce(dst=s, op=nl.add, data=e, axis=(1,))
    t = nl.ndarray((64, 128), nl.float32, buffer=nl.psum)
    nisa.nc_transpose(dst=t, data=e)
    t_sb = nl.ndarray((64, 128), nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=t_sb, src=t)
    out_s = nl.ndarray((128, 1), nl.float32, buffer=nl.shared_hbm)
    out_t = nl.ndarray((64, 128), nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out_s, src=s)
    nisa.dma_copy(dst=out_t, src=t_sb)
    return out_s, out_t


def test_activation_reduce_and_transpose():
    a = rand(128, 64)
    s, t = nki.simulate(activation_reduce_transpose)(a)
    e = np.exp(a * 0.5)
    np.testing.assert_allclose(s[:, 0], e.sum(axis=1), rtol=1e-4)
    np.testing.assert_allclose(t, e.T, rtol=1e-4)


@nki.jit
def ap_view_kernel(a):
    x = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=x, src=a)
    out = nl.ndarray((128, 16), a.dtype, buffer=nl.shared_hbm)
    y = nl.ndarray((128, 16), a.dtype, buffer=nl.sbuf)
    nisa.tensor_copy(dst=y, src=x.ap([[64, 128], [2, 16]], offset=8))  # every other column from column 8
    nisa.dma_copy(dst=out, src=y)
    return out


def test_ap_access_pattern():
    a = rand(128, 64)
    np.testing.assert_array_equal(nki.simulate(ap_view_kernel)(a), a[:, 8:40:2])


@nki.jit
def gather_rows_by_vector_offset(x, ids):
    idx = nl.ndarray(ids.shape, nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=idx, src=ids)
    t = nl.ndarray((128, 2, 64), x.dtype, buffer=nl.sbuf)
    for j in range(2):
        # A [128, 1, 64] gathered view into a [128, 64] slice: the offsets move with the view's dims.
        rows = x.ap(pattern=[[64, 128], [1, 1], [1, 64]], offset=0,
                    vector_offset=idx.ap(pattern=[[2, 128], [1, 1]], offset=j), indirect_dim=0)
        nisa.dma_copy(dst=t[:, j, 0:64], src=rows)
    out = nl.ndarray(t.shape, x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=t)
    return out


def test_vector_offset_rows_into_a_slice_without_the_unit_dim():
    x = rand(300, 64)
    ids = np.random.default_rng(0).integers(0, 300, (128, 2)).astype(np.int32)
    np.testing.assert_array_equal(nki.simulate(gather_rows_by_vector_offset)(x, ids), x[ids])


@nki.jit
def tensor_tensor_pairs_elements_in_order(a, b):
    x = nl.ndarray((128, 4), a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=x, src=a)
    m = nl.ndarray((128, 2), a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=m, src=b)
    # [P, 4] against a [P, 2, 2] view that repeats m's two columns (stride 0).
    nisa.tensor_tensor(dst=x, data1=x, data2=m.ap([[2, 128], [0, 2], [1, 2]]), op=nl.subtract)
    first = nl.ndarray((128, 1, 2), a.dtype, buffer=nl.sbuf)
    nisa.tensor_copy(dst=first, src=x[:, 0:2])
    nisa.tensor_tensor(dst=first, data1=first, data2=m, op=nl.add)  # [P, 1, 2] with [P, 2]
    out = nl.ndarray((128, 4), a.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=x)
    back = nl.ndarray((128, 1, 2), a.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=back, src=first)
    return out, back


def test_tensor_tensor_pairs_equal_elements_whatever_the_free_shapes():
    a, b = rand(128, 4), rand(128, 2, seed=1)
    out, back = nki.simulate(tensor_tensor_pairs_elements_in_order)(a, b)
    np.testing.assert_array_equal(out, a - np.tile(b, 2))
    np.testing.assert_array_equal(back[:, 0], (a[:, :2] - b) + b)


@nki.jit
def writes_input(a, out):
    t = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    nisa.activation(dst=t, op=nl.relu, data=t)
    nisa.dma_copy(dst=out, src=t)
    return out


def test_inputs_written_in_place_reach_the_caller():
    a, out = rand(128, 32), np.zeros((128, 32), np.float32)
    nki.simulate(writes_input)(a, out)
    np.testing.assert_array_equal(out, np.maximum(a, 0))


@nki.jit
def nl_wrappers(a, b):
    x, y = nl.load(a), nl.load(b)
    r = nl.maximum(nl.multiply(x, y), 0.0)
    m = nl.sum(r, axis=1, keepdims=True)
    out = nl.ndarray((a.shape[0], 1), a.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=m)
    return out


def test_nl_convenience_apis():
    a, b = rand(64, 96), rand(64, 96, seed=1)
    np.testing.assert_allclose(nki.simulate(nl_wrappers)(a, b), np.maximum(a * b, 0).sum(1, keepdims=True),
                               rtol=1e-5, atol=1e-6)


def test_plain_call_with_nki_simulator(monkeypatch):
    monkeypatch.setenv("NKI_SIMULATOR", "1")
    a, b = rand(128, 64), rand(128, 64, seed=1)
    np.testing.assert_allclose(add_then_scale(a, b), (a + b) * 2 - 1, rtol=1e-6)


def test_simulate_takes_a_plain_function():
    def plain(a):
        out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=a)
        return out
    a = rand(8, 8)
    np.testing.assert_array_equal(nki.simulate(plain)(a), a)


@pytest.mark.parametrize("spelling,target", [("trn1", "trn1"), ("gen2", "trn1"), ("inf2", "trn1"), ("trn2", "trn2"),
                                             ("gen3", "trn2"), ("trn3", "trn3"), ("gen4", "trn3"), (None, "trn2")])
def test_platform_target_override(monkeypatch, spelling, target):
    @nki.jit
    def version(a):
        out = nl.ndarray((1, 1), nl.int32, buffer=nl.shared_hbm)
        t = nl.ndarray((1, 1), nl.int32, buffer=nl.sbuf)
        nisa.memset(dst=t, value=int(nisa.get_nc_version()))
        nisa.dma_copy(dst=out, src=t)
        return out
    if spelling is None:
        monkeypatch.delenv("NEURON_PLATFORM_TARGET_OVERRIDE", raising=False)
    else:
        monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", spelling)
    assert int(nki.simulate(version)(np.zeros((1, 1), np.float32))[0, 0]) == {"trn1": 2, "trn2": 3, "trn3": 4}[target]


def test_tile_size_and_modules():
    import nki.collectives as ncc
    import nki.meta
    import nki.isa.constants as c
    assert nl.tile_size.pmax == 128
    assert c.oob_mode.skip == nisa.oob_mode.skip
    assert (nisa.dge_mode.unknown, nisa.dge_mode.swdge, nisa.dge_mode.hwdge, nisa.dge_mode.none) == (0, 1, 2, 3)
    assert nisa.engine.dma == 4 and nisa.reduce_cmd.load_reduce == 4
    assert issubclass(ncc.ReplicaGroup, nl.NKIObject)
    assert nki.meta.tensor is not None
    assert nl.is_hbm(nl.shared_hbm) and nl.is_psum(nl.psum) and not nl.is_on_chip(nl.hbm)


@nki.jit
def section13(a):
    x = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=x, src=a)
    absolute = nl.ndarray((128, 8), a.dtype, buffer=nl.sbuf)
    nisa.tensor_copy(dst=absolute, src=x[:, 16:].ap([[64, 128], [1, 8]], offset=8))
    inherited = nl.ndarray((128, 8), a.dtype, buffer=nl.sbuf)
    nisa.tensor_copy(dst=inherited, src=x[:, 16:].ap([[64, 128], [1, 8]]))
    nested = nl.ndarray((128, 4), a.dtype, buffer=nl.sbuf)
    nisa.tensor_copy(dst=nested, src=x[:, 8:40][:, 4:8])
    ident = nl.shared_identity_matrix(128, dtype=nl.float32)
    product = nl.ndarray((128, 64), nl.float32, buffer=nl.psum)
    nisa.nc_matmul(product, ident, x)
    outs = [nl.ndarray(s, a.dtype, buffer=nl.shared_hbm) for s in ((128, 8), (128, 8), (128, 4), (128, 64))]
    evicted = nl.ndarray((128, 64), a.dtype, buffer=nl.sbuf)
    nisa.tensor_copy(dst=evicted, src=product)
    for o, t in zip(outs, (absolute, inherited, nested, evicted)):
        nisa.dma_copy(dst=o, src=t)
    return tuple(outs)


def test_section13_ap_offset_nested_slices_identity():
    a = rand(128, 64)
    absolute, inherited, nested, product = nki.simulate(section13)(a)
    np.testing.assert_array_equal(absolute, a[:, 8:16])    # offset= overrides the view (§13 #3)
    np.testing.assert_array_equal(inherited, a[:, 16:24])  # None inherits the view's start
    np.testing.assert_array_equal(nested, a[:, 12:16])     # views index again (§13 #2)
    np.testing.assert_allclose(product, a, rtol=1e-6)      # the identity is an SBUF operand (§13 #18)


@nki.jit
def comparisons_and_dma_compute(a):
    x = nl.load(a)
    eq = nl.equal(x, x)
    acc = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    nisa.dma_compute(acc, [x], nl.add)
    nisa.dma_compute(acc, [eq, acc], nl.add)
    return acc


def test_comparison_dtype_and_dma_compute():
    a = rand(128, 16)
    np.testing.assert_allclose(nki.simulate(comparisons_and_dma_compute)(a), a + 1, rtol=1e-6)  # §13 #21, #25


@nki.jit
def dma_compute_halves(a):
    """out[0] += out[1] with dst and its source as separate .ap() views of out (the kernel
    library's reduce_outputs)."""
    t, h = a.shape[1], a.shape[2]
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    for i in range(2):
        nisa.dma_copy(dst=out[i], src=a[i])
    half = [[h, t], [1, h]]
    nisa.dma_compute(dst=out.ap(pattern=half, offset=0), reduce_op=nl.add, scales=[1.0, 1.0],
                     srcs=[out.ap(pattern=half, offset=0), out.ap(pattern=half, offset=t * h)])
    return out


def test_dma_compute_finds_dst_among_views_of_the_same_elements():
    a = rand(2, 64, 32)
    out = nki.simulate(dma_compute_halves)(a)
    np.testing.assert_allclose(out[0], a[0] + a[1], rtol=1e-6)
    np.testing.assert_array_equal(out[1], a[1])


def test_nkiobject_fields():
    import dataclasses

    class Plain(nl.NKIObject):
        width = 64
        depth: int = 2

        def __post_init__(self):
            self.area = self.width * self.depth

    @dataclasses.dataclass(frozen=True)
    class Frozen(nl.NKIObject):
        width: int = 8
        height = 3

    p = Plain(width=4)
    assert (p.width, p.depth, p.area) == (4, 2, 8)
    f = Frozen(height=5)
    assert (f.width, f.height) == (8, 5)
    with pytest.raises(TypeError):
        Plain(colour=1)


@nki.jit
def bf16_round_trip(a):
    t = nl.ndarray(a.shape, nl.bfloat16, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    out = nl.ndarray(a.shape, nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=t)
    return out


@pytest.mark.parametrize("precise,exact", [("1", False), ("0", True), (None, False)])
def test_nki_precise_fp(monkeypatch, precise, exact):
    if precise is None:
        monkeypatch.delenv("NKI_PRECISE_FP", raising=False)
    else:
        monkeypatch.setenv("NKI_PRECISE_FP", precise)
    a = np.full((128, 8), 1 + 2.0 ** -12, np.float32)  # not a bf16 value
    out = nki.simulate(bf16_round_trip)(a)
    assert np.array_equal(out, a) == exact
    if not exact:
        assert (out == 1.0).all()  # rounded to bf16 on chip


@nki.jit
def long_unroll(a):
    out = nl.ndarray((128, 4), nl.float32, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 4), nl.float32, buffer=nl.sbuf)
    nisa.memset(dst=t, value=0.0)
    for i in range(10001):  # past the legacy static_range unroll warning
        nisa.tensor_scalar(dst=t, data=t, op0=nl.add, operand0=1.0)
    nisa.dma_copy(dst=out, src=t)
    return out


def test_long_unroll_has_no_legacy_hint():
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert nki.simulate(long_unroll)(np.zeros((1, 1), np.float32))[0, 0] == 10001


@nki.jit
def per_core_rows(a):
    out = nl.ndarray(a.shape, nl.float32, buffer=nl.shared_hbm)
    pid = nl.program_id(0)
    t = nl.ndarray((1, a.shape[1]), nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a[pid:pid + 1, :])
    nisa.tensor_scalar(dst=t, data=t, op0=nl.add, operand0=float(nl.num_programs()))
    nisa.dma_copy(dst=out[pid:pid + 1, :], src=t)
    return out


def test_lnc2_launch():
    a = rand(2, 16)
    np.testing.assert_allclose(nki.simulate(per_core_rows[2])(a), a + 2, rtol=1e-6)
    with pytest.raises(nkic.NKIError) as info:
        per_core_rows[2, 1]
    assert info.value.code == "err_removed_in_nki_version"
    assert info.value.message == "kernel[grid] (an SPMD launch grid) was removed in nki 0.3 (nkic serves nki 0.8)"


@nki.jit
def zero_then_cross_write(x):
    # Each core zeroes its half; core 0 then writes the other half, with no barrier between
    # (as the kernel library's MoE backward initialises its gradients): the cores run at once.
    pid = nl.program_id(0)
    out = nl.ndarray((2, 128, 64), nl.float32, buffer=nl.shared_hbm)
    z = nl.ndarray((128, 64), nl.float32, buffer=nl.sbuf)
    nisa.memset(dst=z, value=0.0)
    nisa.dma_copy(dst=out[pid], src=z)
    t = nl.ndarray((128, 64), nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    if pid == 0:
        nisa.dma_copy(dst=out[1], src=t)
    return out


def test_cores_interleave_their_statements_between_sync_points():
    x = rand(128, 64)
    out = nki.simulate(zero_then_cross_write[2])(x)
    np.testing.assert_array_equal(out[0], 0)
    np.testing.assert_array_equal(out[1], x)


@nki.jit
def add_optional_bias(x, bias=None):
    t = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    if bias:  # a given tensor is true: the NKI library tests optional tensors this way
        b = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=b, src=bias)
        nisa.tensor_tensor(dst=t, data1=t, data2=b, op=nl.add)
    scale = 2.0 if bias and x else 1.0  # `and` asks the tensor's own truth value
    nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=scale)
    out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=t)
    return out


@nki.jit
def scale_twice(a, b):
    # add_then_scale is itself @nki.jit: called while this kernel traces, it is a plain function.
    first = add_then_scale(a, b)
    return add_then_scale(first, b)


def test_a_jit_kernel_called_from_a_kernel_is_inlined():
    a, b = rand(128, 64), rand(128, 64, seed=1)
    np.testing.assert_allclose(nki.simulate(scale_twice)(a, b), ((a + b) * 2 - 1 + b) * 2 - 1, rtol=1e-5)
    ir = scale_twice.trace(None, (a, b), {}).ir.text()  # one kernel: both bodies traced into it
    ops = [line.split("=", 1)[1].split("[", 1)[0].strip() for line in ir.splitlines() if "] = " in line]
    assert ops == ["load", "load", "tensor_tensor", "tensor_scalar", "store"] * 2, ir


def test_a_tensor_in_a_python_condition_is_true_in_the_current_api():
    x = np.ones((4, 8), np.float32)
    np.testing.assert_array_equal(nki.simulate(add_optional_bias)(x), x)
    np.testing.assert_array_equal(nki.simulate(add_optional_bias)(x, 2 * x), 6 * x)


def test_a_tensor_condition_stays_an_error_in_a_legacy_kernel():
    from neuronxcc import nki as legacy_nki
    import neuronxcc.nki.language as lnl

    @legacy_nki.jit
    def legacy(x):
        t = lnl.load(x)
        if t:
            t = lnl.add(t, 1.0)
        out = lnl.ndarray(x.shape, x.dtype, buffer=lnl.shared_hbm)
        lnl.store(out, t)
        return out

    with pytest.raises(nkic.NKIError) as info:
        legacy_nki.simulate_kernel(legacy, np.ones((4, 8), np.float32))
    assert info.value.code == "err_dynamic_control_flow_not_supported"


@pytest.mark.parametrize("rank", [2, 4])
def test_dma_transpose_of_a_row_with_unit_dims(rank):
    # [1, 128] and its 4-D form [1, 1, 1, 128] into a [128, 1] column (the library loads biases so).
    @nki.jit
    def column(b):
        t = nl.ndarray((128, 1), nl.float32, buffer=nl.sbuf)
        if rank == 4:
            nisa.dma_transpose(dst=t.ap(pattern=[[1, 128], [1, 1], [1, 1], [1, 1]]),
                               src=b.ap(pattern=[[128, 1], [128, 1], [128, 1], [1, 128]], offset=0))
        else:
            nisa.dma_transpose(dst=t, src=b)
        out = nl.ndarray((128, 1), nl.float32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=t)
        return out

    b = np.arange(128, dtype=np.float32).reshape(1, 128)
    np.testing.assert_array_equal(nki.simulate(column)(b), b.T)


def test_dtypes_are_their_names_and_numpy_reads_them():
    seen = {}

    @nki.jit
    def probe(x):
        t = nl.ndarray(x.shape, nl.bfloat16, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x)
        seen.update(tile=str(t.dtype), input=str(x.dtype), equal=(t.dtype == nl.bfloat16, x.dtype == "float32",
                    x.dtype == np.float32, t.dtype != nl.float32), size=t.dtype.itemsize)
        out = nl.ndarray(x.shape, nl.float32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=t)
        return out

    x = np.full((4, 8), 1.0 + 2.0 ** -9, np.float32)  # rounds to 1.0 in bfloat16
    np.testing.assert_array_equal(nki.simulate(probe)(x), np.ones_like(x))
    assert seen == {"tile": "bfloat16", "input": "float32", "equal": (True, True, True, True), "size": 2}
    assert str(nl.bfloat16) == "bfloat16" and {nl.int32: 1}["int32"] == 1
    assert sorted([nl.float32, nl.bfloat16, "int8"]) == ["bfloat16", "float32", "int8"]
    assert np.dtype(nl.bfloat16) == np.ones(2).astype(nl.bfloat16).dtype and nl.float32(1.5) == np.float32(1.5)
    # nl.DType, the type of every dtype, annotates parameters as the stub's alias does.
    assert all(isinstance(d, nl.DType) for d in (nl.bfloat16, nl.float8_e4m3fn_x4, nl.int32))


@nki.jit
def abs_pick(a, b):
    t = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    u = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    nisa.dma_copy(dst=u, src=b)
    big = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=big, data1=t, data2=u, op=nl.abs_max)  # ERR:abs_max
    small = nl.abs_min(t, u)
    out = nl.ndarray((2,) + a.shape, a.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out[0], src=big)
    nisa.dma_copy(dst=out[1], src=small)
    return out


def test_abs_max_and_abs_min_keep_the_sign_of_the_larger_or_smaller_magnitude(monkeypatch):
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn3")
    a = np.array([[1.0, -3.0, 2.0, -2.0, 0.5]], np.float32)
    b = np.array([[-2.0, 1.0, -2.0, 2.0, -0.25]], np.float32)
    out = nki.simulate(abs_pick)(a, b)
    np.testing.assert_array_equal(out[0], np.where(np.abs(a) > np.abs(b), a, b))  # ties: the second
    np.testing.assert_array_equal(out[1], np.where(np.abs(a) < np.abs(b), a, b))


def test_abs_max_needs_neuroncore_v4(monkeypatch):
    from nki_test_util import Markers, check_diag, trace_error
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn2")
    e = trace_error(abs_pick, np.ones((1, 4), np.float32), np.ones((1, 4), np.float32))
    check_diag(e, Markers(__file__), "err_min_arch_support_for_inst",
               "'abs_max' in 'nisa.tensor_tensor' is available on NeuronCore-v4 and newer only; target 'trn2' is "
               "NeuronCore-v3", [("abs_max", "nisa.")])


def test_gelu_apprx_sigmoid_dx_is_the_derivative_of_gelu_apprx_sigmoid():
    @nki.jit
    def grad(x):
        t = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x)
        nisa.activation(dst=t, op=nl.gelu_apprx_sigmoid_dx, data=t)
        out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=t)
        return out

    x = np.linspace(-4, 4, 64, dtype=np.float32).reshape(1, 64)
    s = 1 / (1 + np.exp(-1.702 * x.astype(np.float64)))
    np.testing.assert_allclose(nki.simulate(grad)(x), s + 1.702 * x * s * (1 - s), rtol=1e-5, atol=1e-6)


@nki.jit
def loop_past_maxsize(a):
    for _ in range(-1, 2**63):  # ERR:past_maxsize
        pass
    return a


def test_a_range_longer_than_python_can_count_is_the_trace_limit():
    from nki_test_util import Markers, check_diag, trace_error
    e = trace_error(loop_past_maxsize, np.zeros((4, 4), np.float32))
    check_diag(e, Markers(__file__), "err_trace_limit_exceeded",
               f"tracing would unroll a static_range of {sys.maxsize} iterations, more than the limit of 262144",
               [("past_maxsize", "for")])


@nki.jit
def ranges_by_keyword(a):
    out = nl.ndarray((1, 4), nl.float32, buffer=nl.shared_hbm)
    t = nl.ndarray((1, 4), nl.float32, buffer=nl.sbuf)
    nisa.memset(dst=t, value=0.0)
    for _ in nl.sequential_range(0, stop=3):
        nisa.tensor_scalar(dst=t, data=t, op0=nl.add, operand0=1.0)
    for _ in nl.affine_range(2, 8, step=2):
        nisa.tensor_scalar(dst=t, data=t, op0=nl.add, operand0=10.0)
    for _ in nl.range(stop=2, start=0):
        nisa.tensor_scalar(dst=t, data=t, op0=nl.add, operand0=100.0)
    for i in nl.static_range(5):
        nisa.tensor_scalar(dst=t, data=t, op0=nl.add, operand0=float(i) * 1000.0)
    nisa.dma_copy(dst=out, src=t)
    return out


def test_loop_ranges_take_their_bounds_by_keyword():
    # 3 trips of 1, 3 of 10, 2 of 100, 0+1+2+3+4 thousands.
    assert nki.simulate(ranges_by_keyword)(np.zeros((1, 1), np.float32))[0, 0] == 3 + 30 + 200 + 10000


@nki.jit
def range_with_typo(a):
    for _ in nl.sequential_range(4, stpe=2):  # ERR:stpe
        pass
    return a


def test_an_unknown_range_keyword_is_an_error():
    from nki_test_util import Markers, check_diag, trace_error
    check_diag(trace_error(range_with_typo, np.zeros((4, 4), np.float32)), Markers(__file__), "err_unsupported_args",
               "unsupported arguments to 'nl.sequential_range': unexpected keyword argument 'stpe'; did you mean 'stop'?",
               [("stpe", "nl.")], api="nl.sequential_range")
