"""The cost model on kernels of the current API (`import nki`, NKI 0.3+): nkic.profile and
`nkic profile` predict them as they do legacy kernels, on the target asked for."""
import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

import nkic
import nki
import nki.isa as nisa
import nki.language as nl
from neuronxcc import nki as legacy_nki
import neuronxcc.nki.language as lnl

ROOT = Path(__file__).resolve().parents[2]


@nki.jit
def add_kernel(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in range(a.shape[0] // 128):
        x = nl.ndarray((128, a.shape[1]), dtype=a.dtype, buffer=nl.sbuf)
        y = nl.ndarray((128, a.shape[1]), dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=x, src=a[i * 128:(i + 1) * 128, :])
        nisa.dma_copy(dst=y, src=b[i * 128:(i + 1) * 128, :])
        nisa.tensor_tensor(dst=x, data1=x, data2=y, op=nl.add)
        nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, :], src=x)
    return out


def make_inputs():
    return np.ones((512, 512), np.float32), np.ones((512, 512), np.float32)


def reference(a, b):
    return a + b


KERNEL = f"{Path(__file__).resolve()}::add_kernel"


def test_nkic_profile_predicts_a_current_kernel_on_the_target_asked_for(monkeypatch):
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn3")  # the explicit target wins
    a = np.ones((512, 512), np.float32)
    r1, r2 = (nkic.profile(add_kernel, a, a, target=t) for t in ("trn1", "trn2"))
    assert (r1.target, r2.target) == ("trn1", "trn2")
    assert r1.engines["dma"].instructions == 12 and r1.engines["dve"].instructions == 4
    assert r1.latency_us > r2.latency_us
    # Without target=, the current API's own rule: NEURON_PLATFORM_TARGET_OVERRIDE.
    assert nkic.profile(add_kernel, a, a).target == "trn3"
    np.testing.assert_array_equal(nki.simulate(add_kernel)(a, a), a + a)


def test_cli_profile_of_a_current_kernel_honours_target():
    r = subprocess.run([str(ROOT / "bin" / "nkic"), "profile", KERNEL, "--target", "trn1", "--json"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["target"] == "trn1" and report["engines"]["dma"]["instructions"] == 12
    check = subprocess.run([str(ROOT / "bin" / "nkic"), "check", KERNEL, "--target", "trn1,trn3",
                            "--json"], capture_output=True, text=True, timeout=120)
    assert check.returncode == 0, check.stderr
    assert [t["target"] for t in json.loads(check.stdout)["targets"]] == ["trn1", "trn3"]


def test_a_sweep_of_a_current_kernel_runs_it_as_one_on_each_target():
    rows = nkic.sweep(KERNEL, grid={}, targets=["trn1", "trn2"], workers=1)
    assert [(r["target"], r["status"]) for r in rows] == [("trn1", "ok"), ("trn2", "ok")]
    assert rows[0]["predicted_latency_us"] > rows[1]["predicted_latency_us"] > 0


def double_halves(a):
    """Each core of kernel[2] doubles its half of the rows (core 0 four times, core 1 once)."""
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    c, n = nl.program_id(0), a.shape[0] // 2
    t = nl.ndarray((n, a.shape[1]), dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a[c * n:(c + 1) * n, :])
    for _ in range(4 if c == 0 else 1):  # core 0 has more to do
        nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=2.0)
    nisa.dma_copy(dst=out[c * n:(c + 1) * n, :], src=t)
    return out


halves = nki.jit(double_halves)


@nki.jit
def halves_then_exchange(a):
    """After a barrier, every core copies the half core 0 wrote over the other half."""
    out = double_halves(a)
    nisa.core_barrier(out, (0, 1))
    n = a.shape[0] // 2
    u = nl.ndarray((n, a.shape[1]), dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=u, src=out[0:n, :])
    nisa.dma_copy(dst=out[n:2 * n, :], src=u)
    return out


def test_a_two_core_launch_runs_each_core_on_its_own_engines():
    a = np.ones((128, 2048), np.float32)
    one = nkic.profile(halves, a, target="trn2")     # program 0 only: core 0's work
    two = nkic.profile(halves[2], a, target="trn2")
    assert two.latency_us == pytest.approx(one.latency_us)  # core 1's shorter work overlaps
    assert two.engines["dve"].instructions == 5
    assert 0 < two.engines["dve"].percent <= 100  # of both cores' Vector Engines
    assert any("physical cores" in n for n in two.notes)
    # Each core holds its own [64, 2048] fp32 tile in its own SBUF: the peak is one core's.
    assert two.sbuf_peak_bytes == one.sbuf_peak_bytes == 2048 * 4
    tracks = {t["args"]["name"] for t in json.loads(two.trace_json())["traceEvents"] if t.get("name") == "thread_name"}
    assert {"core0.dve", "core1.dve", "core1.dma15"} <= tracks
    # After the barrier each core waits for core 0's longer segment, then copies once more.
    barrier = nkic.profile(halves_then_exchange[2], a, target="trn2")
    assert barrier.latency_us > two.latency_us + 2 * 1.3  # two more DMAs, each with its fixed latency
    assert barrier.critical_path[-1][2].startswith("core0.")


# exp(a) is the same in every iteration. neuronx-cc hoists it out of the loop; the current
# API's compiler gets the loop unrolled and keeps every instruction the kernel writes.
@nki.jit
def invariant_in_loop(a, b):
    out = nl.ndarray(b.shape, dtype=b.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(b.shape[0] // 128):
        t = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a)
        e = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.sbuf)
        nisa.activation(dst=e, op=nl.exp, data=t)
        v = nl.ndarray((128, 512), dtype=b.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=v, src=b[i * 128:(i + 1) * 128, :])
        nisa.tensor_tensor(dst=v, data1=e, data2=v, op=nl.add)
        nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, :], src=v)
    return out


@legacy_nki.jit
def legacy_invariant_in_loop(a, b):
    out = lnl.ndarray(b.shape, dtype=b.dtype, buffer=lnl.shared_hbm)
    for i in lnl.affine_range(b.shape[0] // 128):
        e = lnl.exp(lnl.load(a))
        v = lnl.load(b[i * 128:(i + 1) * 128, :])
        lnl.store(out[i * 128:(i + 1) * 128, :], value=lnl.add(e, v))
    return out


def test_a_current_kernel_computes_a_loop_invariant_instruction_in_every_iteration():
    a, b = np.ones((128, 512), np.float32), np.ones((8 * 128, 512), np.float32)
    r = nkic.profile(invariant_in_loop, a, b, target="trn2")
    assert r.engines["act"].instructions == 8 and r.engines["dma"].instructions == 24
    assert not any("hoists" in n for n in r.notes)
    legacy = nkic.profile(legacy_invariant_in_loop, a, b, target="trn2")
    assert legacy.engines["act"].instructions == 1 and legacy.engines["dma"].instructions == 17
    assert any(n.startswith("2 instruction(s) whose operands do not change") for n in legacy.notes)
    np.testing.assert_allclose(nki.simulate(invariant_in_loop)(a, b), np.tile(np.exp(a), (8, 1)) + 1, rtol=1e-6)



def ping_pong(loop):
    """SiLU over 8 row tiles, each copied into the half of a two-tile buffer that `i % 2` picks."""
    @nki.jit
    def kernel(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        buf = nl.ndarray((128, 2, 2048), dtype=a.dtype, buffer=nl.sbuf)
        y = nl.ndarray((128, 2048), dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=buf[:, 0, :], src=a[0:128, :])
        for i in loop(7):
            nisa.dma_copy(dst=buf[:, (i + 1) % 2, :], src=a[(i + 1) * 128:(i + 2) * 128, :])
            nisa.activation(dst=y, op=nl.silu, data=buf[:, i % 2, :])
            nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, :], src=y)
        return out

    return kernel


def test_a_current_kernels_modulo_picked_blocks_are_compile_time_blocks():
    # The current API unrolls every loop at compile time: `i % 2` is an int, its halves are told
    # apart in a sequential_range as in an affine_range (a legacy kept loop serialises them,
    # tests/python/test_profile.py).
    a = np.ones((8 * 128, 2048), np.float32)
    sequential, affine = (nkic.profile(ping_pong(loop), a, target="trn2")
                          for loop in (nl.sequential_range, nl.affine_range))
    assert sequential.latency_us == affine.latency_us
    assert not any("sequential_range counter" in n for n in sequential.notes)

def copy_through_sbuf(strided_hbm):
    @nki.jit
    def kernel(x):
        buf = nl.ndarray((128, 2048), x.dtype, buffer=nl.sbuf)
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=buf, src=x.ap([[2048, 128], [1, 2048]]) if strided_hbm else x)
        nisa.dma_copy(dst=out, src=buf)
        return out

    return kernel


def test_an_hbm_ap_view_moves_in_the_contiguous_runs_of_its_pattern():
    # .ap() indexes a row-major alias of the tensor by floor division and modulo; the DMA
    # cost sees through them to the pattern's runs, as it does for the tensor itself.
    x = np.ones((128, 2048), np.float32)
    plain, strided = nkic.profile(copy_through_sbuf(False), x), nkic.profile(copy_through_sbuf(True), x)
    assert strided.latency_us == plain.latency_us
    assert not any("contiguous runs of under 512 bytes" in n for n in strided.notes)


def gather_rows(dge):
    """16 independent [8, 4] loads, each its own dma_copy with the DGE mode `dge`."""
    @nki.jit
    def kernel(a):
        out = nl.ndarray((128, 4), dtype=a.dtype, buffer=nl.shared_hbm)
        t = nl.ndarray((128, 4), dtype=a.dtype, buffer=nl.sbuf)
        for i in range(16):
            nisa.dma_copy(dst=t[i * 8:(i + 1) * 8, :], src=a[i * 8:(i + 1) * 8, :], dge_mode=dge)
        nisa.dma_copy(dst=out, src=t)
        return out
    return kernel


def test_hardware_dge_copies_take_a_dge_instance_600_ns_each():
    # trn2's two DGE instances generate the 16 copies' descriptors two at a time: the last pair
    # starts 7 x 600 ns after the first, and the store after it; static descriptors do not wait.
    a = np.ones((128, 4), np.float32)
    hw = nkic.profile(gather_rows(nisa.dge_mode.hwdge), a, target="trn2")
    none = nkic.profile(gather_rows(nisa.dge_mode.none), a, target="trn2")
    assert hw.latency_us - none.latency_us == pytest.approx(7 * 0.6, abs=1e-6)
    np.testing.assert_array_equal(nki.simulate(gather_rows(nisa.dge_mode.hwdge))(a), a)


def pe_tile_kernel(positions, size):
    """One bf16 matmul (N = 512 moving columns: 512 cycles at trn2's 2.4 GHz) per entry of
    `positions`, each into its own PSUM bank, on the PE-array tile it names (None: the whole
    array); the stationary tile is as large as the tile size."""

    @nki.jit
    def kernel(a, b):
        sa = nl.ndarray(a.shape, nl.bfloat16, buffer=nl.sbuf)
        nisa.dma_copy(dst=sa, src=a)
        sb = nl.ndarray(b.shape, nl.bfloat16, buffer=nl.sbuf)
        nisa.dma_copy(dst=sb, src=b)
        out = nl.ndarray((a.shape[1], 512), nl.float32, buffer=nl.shared_hbm)
        o = nl.ndarray((a.shape[1], 512), nl.float32, buffer=nl.sbuf)
        for at in positions:
            ps = nl.ndarray((a.shape[1], 512), nl.float32, buffer=nl.psum)
            if at is None:
                nisa.nc_matmul(dst=ps, stationary=sa, moving=sb)
            else:
                nisa.nc_matmul(dst=ps, stationary=sa, moving=sb, tile_position=at, tile_size=size)
            nisa.tensor_copy(dst=o, src=ps)
        nisa.dma_copy(dst=out, src=o)
        return out

    return kernel


MATMUL_NS = 512 / 2.4  # one matmul: N = 512 moving columns at 2.4 GHz


@pytest.mark.parametrize("positions,size,busy_ns", [
    ([None, None], (64, 128), 2 * MATMUL_NS),
    # One tile twice: the second waits for the first to leave it.
    ([(0, 0), (0, 0)], (64, 128), 2 * MATMUL_NS),
    # Two row halves: the second issues after the first's half share of the array and runs beside it.
    ([(0, 0), (64, 0)], (64, 128), 1.5 * MATMUL_NS),
    # Four row quarters (NeuronCore-v3): one issued every quarter of a matmul.
    ([(0, 0), (32, 0), (64, 0), (96, 0)], (32, 128), 1.75 * MATMUL_NS),
    # Two 64x64 quarters (a row half times a column half): the second issues a quarter matmul
    # later; a whole-array matmul after them waits for both to leave the array.
    ([(0, 0), (0, 64), None], (64, 64), 2.25 * MATMUL_NS),
])
def test_matmuls_on_disjoint_tiles_of_the_pe_array_run_at_once(positions, size, busy_ns):
    a, b = np.ones(size, nl.bfloat16), np.ones((size[0], 512), nl.bfloat16)
    r = nkic.profile(pe_tile_kernel(positions, size), a, b, target="trn2")
    assert r.engines["pe"].busy_us * 1e3 == pytest.approx(busy_ns, rel=1e-9)
