"""Allocation as the compiler does it (src/sema/Allocation.h): the SBUF and PSUM bytes per
partition of the tensors live at each instruction against the target's capacities. PSUM over
its 8 banks is err_psum_over_capacity; SBUF over its capacity is warn_sbuf_spill. Both are at
the instruction of the peak and name the tensors live there with their lines."""
import warnings

import numpy as np
import pytest

import nki
import nki.isa as nisa
import nki.language as nl
import nkic
from neuronxcc import nki as legacy_nki
import neuronxcc.nki.isa as lnisa
import neuronxcc.nki.language as lnl
from nki_test_util import Markers, check_diag, trace_error

M = Markers(__file__)
X = np.zeros((128, 512), np.float32)


def accumulators(count):
    """`count` PSUM accumulators of one bank each, all live until they are summed."""

    @nki.jit
    def sums(x):
        accs = []
        for i in range(count):
            acc = nl.ndarray((128, 512), nl.float32, buffer=nl.psum)  # ERR:acc_decl
            nisa.memset(dst=acc, value=float(i))  # ERR:acc_set
            accs.append(acc)
        total = nl.ndarray((128, 512), nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=total, src=x)
        for acc in accs:
            nisa.tensor_tensor(dst=total, data1=total, data2=acc, op=nl.add)
        out = nl.ndarray((128, 512), nl.float32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=total)
        return out

    return sums


def test_nine_live_psum_accumulators_are_an_error():
    e = trace_error(accumulators(9), X)
    check_diag(e, M, "err_psum_over_capacity",
               ["PSUM needs 9 banks of 2048 bytes per partition live at once here, more than the 8 target 'trn2' "
                "has; live: 'acc' (line %d, 2048 bytes each, 9 tiles)" % M.line("acc_decl")],
               [("acc_set", "nisa.")], notes=[("acc_decl", "nl.", "acc")], api="nisa.memset")


def test_eight_live_psum_accumulators_fit():
    assert np.all(nki.simulate(accumulators(8))(X) == sum(range(8)))


def test_each_core_of_a_kernel2_launch_holds_only_its_own_tiles():
    # Eight accumulators per core, sixteen in all: each core's PSUM has its own 8 banks.
    assert np.all(nki.simulate(accumulators(8)[2])(X) == sum(range(8)))
    e = trace_error(accumulators(9), X, grid=(2,))
    check_diag(e, M, "err_psum_over_capacity",
               ["PSUM needs 9 banks of 2048 bytes per partition live at once here, more than the 8 target 'trn2' "
                "has; live: 'acc' (line %d, 2048 bytes each, 9 tiles)" % M.line("acc_decl")],
               [("acc_set", "nisa.")], notes=[("acc_decl", "nl.", "acc")], api="nisa.memset")


def across_loop(used_after):
    """`keep` (3 banks) beside the loop's `parts` (6 banks): 9 banks while keep is live over
    the loop, 6 when its last use comes before it."""

    @nki.jit
    def kernel(x):
        keep = nl.ndarray((128, 1536), nl.float32, buffer=nl.psum)  # ERR:keep
        nisa.memset(dst=keep, value=1.0)
        total = nl.ndarray((128, 512), nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=total, src=x)
        if not used_after:
            nisa.tensor_tensor(dst=total, data1=total, data2=keep[:, 0:512], op=nl.add)
        for i in nl.affine_range(2):
            parts = nl.ndarray((128, 3072), nl.float32, buffer=nl.psum)  # ERR:parts
            nisa.memset(dst=parts, value=2.0)  # ERR:parts_set
            nisa.tensor_tensor(dst=total, data1=total, data2=parts[:, 0:512], op=nl.add)
        if used_after:
            nisa.tensor_tensor(dst=total, data1=total, data2=keep[:, 0:512], op=nl.add)
        out = nl.ndarray((128, 512), nl.float32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=total)
        return out

    return kernel


def test_a_tensor_used_after_a_loop_is_live_over_it():
    e = trace_error(across_loop(True), X)
    check_diag(e, M, "err_psum_over_capacity",
               ["PSUM needs 9 banks of 2048 bytes per partition live at once here, more than the 8 target 'trn2' "
                "has; live: 'parts' (line %d, 12288 bytes), 'keep' (line %d, 6144 bytes)"
                % (M.line("parts"), M.line("keep"))],
               [("parts_set", "nisa.")], notes=[("parts", "nl.", "parts"), ("keep", "nl.", "keep")])


def test_a_tensor_dead_before_a_loop_leaves_it_room():
    assert np.all(nki.simulate(across_loop(False))(X) == 1 + 2 * 2)


def test_a_loop_body_tile_is_one_buffer_per_iteration():
    @nki.jit
    def per_iteration(x):
        total = nl.ndarray((128, 512), nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=total, src=x)
        for i in nl.affine_range(16):  # 16 accumulators in turn: one bank live at a time
            acc = nl.ndarray((128, 512), nl.float32, buffer=nl.psum)
            nisa.memset(dst=acc, value=1.0)
            nisa.tensor_tensor(dst=total, data1=total, data2=acc, op=nl.add)
        out = nl.ndarray((128, 512), nl.float32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=total)
        return out

    assert np.all(nki.simulate(per_iteration)(X) == 16)


@legacy_nki.jit
def legacy_accumulators(x):
    out = lnl.ndarray((128, 512), dtype=lnl.float32, buffer=lnl.shared_hbm)
    accs = []
    for i in lnl.static_range(9):
        accs.append(lnl.zeros((128, 512), dtype=lnl.float32, buffer=lnl.psum))  # ERR:legacy_acc
    total = lnl.load(x)
    for acc in accs:
        total = lnl.add(total, acc)
    lnl.store(out, value=total)
    return out


def test_legacy_kernel_nine_live_accumulators():
    e = trace_error(legacy_accumulators, X)
    assert e.code == "err_psum_over_capacity" and M.same_file(e.file) and e.line == M.line("legacy_acc")
    assert "PSUM needs 9 banks" in e.message and "9 tiles" in e.message, e.message


@legacy_nki.jit
def legacy_eight_bank_rows(a, b):
    """A [128, 4096] PSUM row (all 8 banks) filled by eight `row[...] = nisa.nc_matmul(...)`."""
    out = lnl.ndarray((128, 4096), dtype=np.float32, buffer=lnl.shared_hbm)
    a_sb, b_sb = lnl.load(a), lnl.load(b)
    for _ in lnl.affine_range(2):
        row = lnl.ndarray((lnl.par_dim(128), 4096), dtype=np.float32, buffer=lnl.psum)
        for c in lnl.affine_range(8):
            row[lnl.arange(128)[:, None], 512 * c + lnl.arange(512)[None, :]] = lnisa.nc_matmul(
                a_sb, b_sb[lnl.arange(64)[:, None], 512 * c + lnl.arange(512)[None, :]])
        lnl.store(out, value=lnl.copy(row, dtype=np.float32))
    return out


def test_a_matmul_assigned_into_a_psum_slice_holds_no_bank_of_its_own():
    # neuronx-cc writes the matmul into the row: the front end's temporary is not a ninth bank.
    a, b = np.ones((64, 128), np.float32), np.ones((64, 4096), np.float32)
    assert np.all(legacy_nki.simulate_kernel(legacy_eight_bank_rows, a, b) == 64)


def legacy_in_place(shift):
    """One [128, 30720] fp32 SBUF tile (120 KiB per partition, room for one on trn2) that
    `x[...] = nisa.activation(data=x[...])` rewrites in place, or `shift` columns over."""

    @legacy_nki.jit
    def kernel(a):
        out = lnl.ndarray((128, 30720), dtype=lnl.float32, buffer=lnl.shared_hbm)
        x = lnl.ndarray((lnl.par_dim(128), 30720), dtype=lnl.float32, buffer=lnl.sbuf)  # ERR:in_place_tile
        i_p, i_f = lnl.arange(128)[:, None], lnl.arange(30720 - shift)[None, :]
        x[...] = lnl.load(a)
        x[i_p, shift + i_f] = lnisa.activation(op=lnl.exp, data=x[i_p, i_f])  # ERR:in_place
        lnl.store(out, value=x)
        return out

    return kernel


IN_PLACE = np.linspace(-1, 1, 128 * 30720, dtype=np.float32).reshape(128, 30720)


def test_an_elementwise_instruction_that_rewrites_its_own_input_runs_in_place():
    # neuronx-cc compiles it into the tile itself: one 120 KiB tile, not a second for the result.
    assert spills(legacy_in_place(0), IN_PLACE) == []
    assert np.allclose(legacy_nki.simulate_kernel(legacy_in_place(0), IN_PLACE), np.exp(IN_PLACE), rtol=1e-5)


def test_an_instruction_that_reads_elements_it_does_not_write_there_keeps_its_result_apart():
    # Shifted one column, each point would overwrite an element another point still reads.
    [w] = spills(legacy_in_place(1), IN_PLACE)
    assert str(w.message).startswith(
        "[warn_sbuf_spill] SBUF holds 245756 bytes per partition live here, more than the 212984 target 'trn2' has"
    ), str(w.message)
    assert M.same_file(w.filename) and w.lineno == M.line("in_place")
    want = IN_PLACE.copy()
    want[:, 1:] = np.exp(IN_PLACE[:, :-1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert np.allclose(legacy_nki.simulate_kernel(legacy_in_place(1), IN_PLACE), want, rtol=1e-5)


def eight_tiles(count, declared_per_tile=True):
    """`count` SBUF tiles of 32 KiB per partition, all live until they are summed."""

    @nki.jit
    def kernel(x):
        tiles = []
        for i in range(count):
            t = nl.ndarray((128, 8192), nl.float32, buffer=nl.sbuf)  # ERR:tile
            nisa.dma_copy(dst=t, src=x[i])  # ERR:tile_load
            tiles.append(t)
        for t in tiles[1:]:
            nisa.tensor_tensor(dst=tiles[0], data1=tiles[0], data2=t, op=nl.add)
        out = nl.ndarray((128, 8192), nl.float32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=tiles[0])
        return out

    return kernel


def spills(kernel, *args, target=None):
    """The warn_sbuf_spill warnings of tracing `kernel` (on `target`, else the default)."""
    if target is not None:
        kernel = kernel.retarget(target)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        kernel.trace(None, args, {})
    return [w for w in caught if str(w.message).startswith("[warn_sbuf_spill]")]


TILES = np.ones((8, 128, 8192), np.float32)


def test_eight_live_32k_sbuf_tiles_spill_with_a_warning_at_the_peak():
    [w] = spills(eight_tiles(8), TILES)
    assert str(w.message).startswith(
        "[warn_sbuf_spill] SBUF holds 262144 bytes per partition live here, more than the 212984 target 'trn2' has: "
        "the compiler spills 49160 bytes per partition to HBM and reloads them; live: 't' (line %d, 32768 bytes "
        "each, 8 tiles)" % M.line("tile")), str(w.message)
    assert M.same_file(w.filename) and w.lineno == M.line("tile_load")
    # The warning is not an error: the kernel runs and sums its tiles.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert np.all(nki.simulate(eight_tiles(8))(TILES) == 8)


def test_sbuf_capacity_is_the_targets():
    # 7 tiles of 32 KiB (229376 bytes): more than trn2's 212984, less than trn3's 245752.
    assert [str(w.message).split(": the")[0] for w in spills(eight_tiles(7), TILES, target="trn2")] == [
        "[warn_sbuf_spill] SBUF holds 229376 bytes per partition live here, more than the 212984 target 'trn2' has"]
    assert spills(eight_tiles(7), TILES, target="trn3") == []
    assert spills(eight_tiles(6), TILES, target="trn2") == []


def legacy_blocks(reread):
    """Eight 32 KiB blocks loaded in a loop, then summed: each once, in an unrolled loop, or
    (`reread`) in each of two iterations of a loop around the loop over the blocks."""

    @legacy_nki.jit
    def kernel(x):
        out = lnl.ndarray((128, 8192), dtype=lnl.float32, buffer=lnl.shared_hbm)
        buf = lnl.ndarray((8, lnl.par_dim(128), 8192), dtype=lnl.float32, buffer=lnl.sbuf)  # ERR:blocks
        for b in lnl.affine_range(8):
            buf[b] = lnl.load(x[b])
        total = lnl.zeros((128, 8192), dtype=lnl.float32, buffer=lnl.sbuf)  # ERR:blocks_total
        for r in lnl.sequential_range(2 if reread else 1):
            for b in (lnl.sequential_range(8) if reread else lnl.static_range(8)):
                total[...] = lnl.add(total, buf[b])
        lnl.store(out, value=total)
        return out

    return kernel


def test_the_blocks_of_a_block_dim_declaration_are_tiles_of_their_own():
    # 8 blocks of 32 KiB: one block counts, as the compiler allocates the blocks apart.
    assert spills(legacy_blocks(False), TILES) == []


def test_the_blocks_a_loop_reads_in_every_iteration_are_live_together():
    # The loop over r reads all 8 blocks again in each iteration: 256 KiB held, with `total`
    # past trn2's 208 KiB from the point `total` is made.
    [w] = spills(legacy_blocks(True), TILES)
    assert str(w.message) == (
        "[warn_sbuf_spill] SBUF holds 294912 bytes per partition live here, more than the 212984 target 'trn2' has: "
        "the compiler spills 81928 bytes per partition to HBM and reloads them; live: 'buf' (line %d, 262144 bytes: "
        "8 blocks a loop reads in every iteration), 'total' (line %d, 32768 bytes)" % (M.line("blocks"), M.line("blocks_total"))
    ), str(w.message)
    assert M.same_file(w.filename) and w.lineno == M.line("blocks_total")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert np.all(legacy_nki.simulate_kernel(legacy_blocks(True), TILES) == 16)
        assert np.all(legacy_nki.simulate_kernel(legacy_blocks(False), TILES) == 8)


@legacy_nki.jit
def legacy_psum_blocks(x):
    out = lnl.ndarray((128, 512), dtype=lnl.float32, buffer=lnl.shared_hbm)
    blocks = lnl.ndarray((16, lnl.par_dim(128), 512), dtype=lnl.float32, buffer=lnl.psum)  # 16 banks in all
    total = lnl.ndarray((lnl.par_dim(128), 512), dtype=lnl.float32, buffer=lnl.sbuf)
    total[...] = lnl.load(x)
    for b in lnl.affine_range(16):
        blocks[b] = lnl.zeros((128, 512), dtype=lnl.float32, buffer=lnl.psum)
    for b in lnl.static_range(16):
        total[...] = lnl.add(total, blocks[b])
    lnl.store(out, value=total)
    return out


def test_a_psum_declaration_of_16_blocks_builds():
    assert np.all(legacy_nki.simulate_kernel(legacy_psum_blocks, np.ones((128, 512), np.float32)) == 1)


@nki.jit
def placed_and_one_more(x):
    whole = nl.ndarray((128, 4096), nl.float32, buffer=nl.psum, address=(0, 0))  # ERR:whole
    nisa.memset(dst=whole, value=1.0)
    extra = nl.ndarray((128, 512), nl.float32, buffer=nl.psum)  # ERR:extra
    nisa.memset(dst=extra, value=1.0)  # ERR:extra_set
    total = nl.ndarray((128, 512), nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=total, src=whole[:, 0:512])
    nisa.tensor_tensor(dst=total, data1=total, data2=extra, op=nl.add)
    out = nl.ndarray((128, 512), nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=total)
    return out


def test_a_placed_tensor_counts_where_it_is_live():
    # `whole` is placed over all 8 banks: nothing else fits beside it.
    e = trace_error(placed_and_one_more, X)
    check_diag(e, M, "err_psum_over_capacity",
               ["PSUM needs 9 banks", "live: 'whole' (line %d, 16384 bytes), 'extra' (line %d, 2048 bytes)"
                % (M.line("whole"), M.line("extra"))],
               [("extra_set", "nisa.")], notes=[("whole", "nl.", "whole"), ("extra", "nl.", "extra")])


def test_small_psum_tiles_share_banks():
    @nki.jit
    def small(x):
        total = nl.ndarray((128, 1), nl.float32, buffer=nl.sbuf)
        nisa.memset(dst=total, value=0.0)
        parts = []
        for i in range(16):  # 16 tiles of 256 bytes per partition: 2 banks' worth
            p = nl.ndarray((128, 64), nl.float32, buffer=nl.psum)
            nisa.memset(dst=p, value=1.0)
            parts.append(p)
        for p in parts:
            nisa.tensor_tensor(dst=total, data1=total, data2=p[:, 0:1], op=nl.add)
        out = nl.ndarray((128, 1), nl.float32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=total)
        return out

    assert np.all(nki.simulate(small)(X) == 16)


def test_check_reports_both_per_target(tmp_path, capsys):
    from nkic import cli
    import json
    path = tmp_path / "alloc.py"
    path.write_text(
        "import numpy as np\nfrom test_allocation import accumulators, eight_tiles\n"
        "nine = accumulators(9)\neight = eight_tiles(8)\n"
        "def make_inputs():\n    return (np.zeros((8, 128, 8192), np.float32),)\n")
    assert cli.main(["check", f"{path}::nine", "--arg", "x=f32[128,512]", "--json"]) == 2
    report = json.loads(capsys.readouterr().out)
    assert [(t["target"], [d["code"] for d in t["diagnostics"]]) for t in report["targets"]] == [
        ("trn2", ["err_psum_over_capacity"]), ("trn3", ["err_psum_over_capacity"])]
    d = report["targets"][0]["diagnostics"][0]
    assert M.same_file(d["file"]) and d["line"] == M.line("acc_set")
    assert cli.main(["check", f"{path}::eight", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] and [w["code"] for w in report["warnings"]] == ["warn_sbuf_spill", "warn_sbuf_spill"]
    assert ["target 'trn2'" in report["warnings"][0]["message"], "target 'trn3'" in report["warnings"][1]["message"]] \
        == [True, True]
