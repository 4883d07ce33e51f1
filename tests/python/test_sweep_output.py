"""What `nkic sweep` shows: the MFU beside each engine's busy share in the table, and a plot
that keeps the configurations that did not trace, each at its value and in the row of its
err_* code. The plot is read back from the SVG the command writes (its marks carry ids, its
text stays text)."""
import contextlib
import io
import json
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from nkic import cli

ROOT = Path(__file__).resolve().parents[2]
MATMUL = str(ROOT / "examples" / "matmul_sweep.py")
TOO_WIDE = "err_size_of_dimension_exceed_arch_limit"
SVG = "{http://www.w3.org/2000/svg}"


def nkic_cli(*args):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = cli.main(list(args))
    return status, out.getvalue(), err.getvalue()


def sweep(tmp, kernel, *params):
    files = {k: tmp / f"sweep.{k}" for k in ("json", "svg")}
    status, text, err = nkic_cli("sweep", kernel, *params, "--workers", "2", "--json", str(files["json"]),
                                 "--plot", str(files["svg"]))
    assert status == 0, err
    return text, json.loads(files["json"].read_text())["rows"], ET.parse(files["svg"]).getroot()


@pytest.fixture(scope="module")
def matmul(tmp_path_factory):
    return sweep(tmp_path_factory.mktemp("matmul"), MATMUL, "--param", "TILE_N=256,512,1024",
                 "--param", "TILE_K=64,128", "--target", "trn1,trn2")


class Plot:
    """The panels of a sweep's SVG: per axes, its marks (id -> [(x, y)]) and tick labels (text -> x)."""

    def __init__(self, root):
        self.axes = []
        for ax in (g for g in root.iter(f"{SVG}g") if g.get("id", "").startswith("axes_")):
            marks = {g.get("id"): [(float(u.get("x")), float(u.get("y"))) for u in g.iter(f"{SVG}use")]
                     for g in ax.iter(f"{SVG}g") if g.get("id", "").startswith(("traced-", "mismatch-", "illegal-"))}
            ticks = {t.text: float(t.get("x")) for tick in ax.iter(f"{SVG}g") if tick.get("id", "").startswith("xtick_")
                     for t in tick.iter(f"{SVG}text")}
            texts = [t.text for t in ax.iter(f"{SVG}text")]
            self.axes.append((marks, ticks, texts))

    def marks(self, prefix):
        found = {}
        for marks, _, _ in self.axes:
            found.update({k: v for k, v in marks.items() if k.startswith(prefix)})
        return found

    def ticks(self, param):
        """The x of each value's tick in the latency panel of `param`."""
        return next(ticks for marks, ticks, _ in self.axes if any(k.startswith(f"traced-{param}-") for k in marks))

    def texts(self, prefix):
        """The text of the axes holding marks whose id starts with `prefix`."""
        return [t for marks, _, texts in self.axes if any(k.startswith(prefix) for k in marks) for t in texts]


def test_table_shows_the_mfu_beside_the_busy_shares(matmul):
    text, rows, _ = matmul
    lines = text.splitlines()
    head = lines[0].split()
    assert head[head.index("dma%") + 1] == "mfu%"
    by = {(r["params"]["TILE_N"], r["params"]["TILE_K"], r["target"]): r for r in rows}
    seen = 0
    for line in lines[1:]:
        cells = line.split()
        if len(cells) != len(head):
            continue  # a diagnostic's message line
        r = by[(int(cells[1]), int(cells[2]), cells[3])]
        mfu, pe = cells[head.index("mfu%")], cells[head.index("pe%")]
        if r["status"] == "ok":
            assert mfu == f"{r['mfu_percent']:.1f}"
            assert 0 < r["mfu_percent"] <= float(pe) + 0.05  # the PE cannot do more than it is busy for
            seen += 1
        else:
            assert (r["error_code"], r["mfu_percent"], mfu) == (TOO_WIDE, None, "-")
    assert seen == 8
    # TILE_K=64 half-fills the PE's 128 rows: busy about twice as long for about the same MFU.
    half, full = by[(512, 64, "trn2")], by[(512, 128, "trn2")]
    assert half["engines"]["pe"] > 1.8 * full["engines"]["pe"]
    assert abs(half["mfu_percent"] - full["mfu_percent"]) < 0.1 * full["mfu_percent"]


def test_the_mfu_is_the_profiles(matmul):
    # The kernel's defaults are TILE_N=512, TILE_K=128: `nkic profile` predicts that configuration.
    _, rows, _ = matmul
    status, text, _ = nkic_cli("profile", MATMUL, "--json")
    assert status == 0
    row = next(r for r in rows if r["params"] == {"TILE_N": 512, "TILE_K": 128} and r["target"] == "trn2")
    assert row["mfu_percent"] == pytest.approx(100 * json.loads(text)["mfu"], rel=1e-12)


def test_plot_puts_each_configuration_that_did_not_trace_at_its_value_with_its_code(matmul):
    _, rows, root = matmul
    plot = Plot(root)
    illegal = [r for r in rows if r["status"] == "diagnostic"]
    assert len(illegal) == 4
    for param in ("TILE_N", "TILE_K"):
        ticks = plot.ticks(param)
        for target in ("trn1", "trn2"):
            marks = plot.marks(f"illegal-{param}-{target}-")
            assert list(marks) == [f"illegal-{param}-{target}-{TOO_WIDE}"]
            values = {r["params"][param] for r in illegal if r["target"] == target}
            assert sorted(x for x, _ in marks[f"illegal-{param}-{target}-{TOO_WIDE}"]) == \
                sorted(ticks[str(v)] for v in values)
            traced = plot.marks(f"traced-{param}-{target}")[f"traced-{param}-{target}"]
            assert len(traced) == sum(r["status"] == "ok" and r["target"] == target for r in rows)
            assert {x for x, _ in traced} == {ticks["256"], ticks["512"]} if param == "TILE_N" else \
                {ticks["64"], ticks["128"]}
    texts = plot.texts("illegal-TILE_N-")
    assert TOO_WIDE in texts and "did not trace (diagnostic)" in texts
    assert texts.count("2") == 2  # each TILE_N=1024 mark stands for its two TILE_K values


TWO_CODES = textwrap.dedent('''
    import numpy as np
    from neuronxcc import nki
    import neuronxcc.nki.language as nl

    @nki.jit
    def scale(x, ROWS=128, FACTOR=2.0):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        for i in nl.affine_range(x.shape[0] // ROWS):
            t = nl.load(x[i * ROWS:(i + 1) * ROWS, :])
            nl.store(out[i * ROWS:(i + 1) * ROWS, :], value=nl.multiply(t, FACTOR))
        return out

    def make_inputs():
        return (np.ones((512, 256), np.float32),)

    def reference(x):
        return 2 * x
    ''')


def test_plot_draws_a_mismatch_hollow_and_one_row_per_code(tmp_path):
    path = tmp_path / "scale.py"
    path.write_text(TWO_CODES)
    _, rows, root = sweep(tmp_path, str(path), "--param", "ROWS=64,128,256", "--param", "FACTOR=2.0,0.5,x")
    statuses = {(r["params"]["ROWS"], r["params"]["FACTOR"]): (r["status"], r["error_code"]) for r in rows}
    partitions, operand = "err_num_partition_exceed_arch_limit", "err_unexpected_type_of_operand"
    assert statuses == {
        (64, 2.0): ("ok", None), (128, 2.0): ("ok", None), (64, 0.5): ("mismatch", None),
        (128, 0.5): ("mismatch", None), (64, "x"): ("diagnostic", operand), (128, "x"): ("diagnostic", operand),
        (256, 2.0): ("diagnostic", partitions), (256, 0.5): ("diagnostic", partitions),
        (256, "x"): ("diagnostic", partitions)}
    plot = Plot(root)
    ticks = plot.ticks("FACTOR")
    hollow = plot.marks("mismatch-FACTOR-trn2")["mismatch-FACTOR-trn2"]
    assert [x for x, _ in hollow] == [ticks["0.5"], ticks["0.5"]]
    rows_of = plot.marks("illegal-FACTOR-trn2-")
    by_partitions, by_operand = rows_of[f"illegal-FACTOR-trn2-{partitions}"], rows_of[f"illegal-FACTOR-trn2-{operand}"]
    assert sorted(x for x, _ in by_partitions) == sorted(ticks[v] for v in ("2.0", "0.5", "x"))
    assert [x for x, _ in by_operand] == [ticks["x"]]
    # One row per code, in sorted order from the bottom (SVG's y grows downwards).
    assert len({y for _, y in by_partitions}) == 1 and by_operand[0][1] < by_partitions[0][1]
    texts = plot.texts("illegal-ROWS-")
    assert partitions in texts and operand in texts


@pytest.mark.parametrize("option, name, message", [
    ("--plot", "sweep.foo", "--plot {path}: name a file ending in one of the formats matplotlib writes: "),
    ("--plot", "missing/sweep.png", "--plot {path}: {dir} is not a directory this process can write to"),
    ("--json", "missing/sweep.json", "--json {path}: {dir} is not a directory this process can write to"),
    ("--csv", "missing/sweep.csv", "--csv {path}: {dir} is not a directory this process can write to"),
])
def test_an_output_file_that_cannot_be_written_is_refused_before_the_sweep(tmp_path, option, name, message):
    path = tmp_path / name
    status, out, err = nkic_cli("sweep", MATMUL, "--param", "TILE_N=256", option, str(path))
    assert (status, out) == (3, "")
    assert err.startswith("nkic: error: " + message.format(path=path, dir=tmp_path / "missing"))
    if option == "--plot" and name.endswith(".foo"):
        assert ".png, " in err and ".svg" in err
    assert not path.exists()


def test_plot_of_a_sweep_where_nothing_traced_still_shows_every_configuration(tmp_path):
    svg = tmp_path / "none.svg"
    status, _, _ = nkic_cli("sweep", MATMUL, "--param", "TILE_N=1024", "--param", "TILE_K=64,128", "--workers", "1",
                            "-q", "--plot", str(svg))
    assert status == 2
    plot = Plot(ET.parse(svg).getroot())
    assert plot.marks("traced-") == {} and plot.marks("mismatch-") == {}
    marks = plot.marks("illegal-")
    assert {k: len(v) for k, v in marks.items()} == {f"illegal-TILE_N-trn2-{TOO_WIDE}": 1,
                                                      f"illegal-TILE_K-trn2-{TOO_WIDE}": 2}
