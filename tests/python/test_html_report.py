"""The HTML report in a real headless Chromium, on a looped kernel whose steady state the cost
model repeats: what the timeline draws per engine adds up to the busy fraction the table
states (boxes filled to their busy fraction when zoomed out, the repeated instructions when
zoomed in), and the page answers the wheel, a drag, a hover and a click on the DMA group."""
import json
import os
import re
import shutil
import subprocess

import numpy as np
import pytest

import nkic
import neuronxcc.nki.language as nl

ENGINES = ("pe", "act", "dve", "pool", "dma")


def project(x, w):
    out = nl.ndarray((x.shape[0], 512), dtype=nl.float32, buffer=nl.shared_hbm)
    wt = nl.load(w)
    for i in nl.affine_range(x.shape[0] // 128):
        xt = nl.load_transpose2d(x[i * 128:(i + 1) * 128, :])
        acc = nl.matmul(xt, wt, transpose_x=True)
        nl.store(out[i * 128:(i + 1) * 128, :], value=nl.exp(acc))
    return out


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """The prediction for 8192 iterations of `project` and its page."""
    x, w = np.zeros((128 * 8192, 128), np.float32), np.zeros((128, 512), np.float32)
    r = nkic.profile(project, x, w, target="trn2")
    page = tmp_path_factory.mktemp("html") / "report.html"
    page.write_text(r.html())
    return r, page


def render(page, fragment="", script=""):
    """The page's DOM after headless Chromium ran it (and `script`, appended as a user would act)."""
    chromium = shutil.which("chromium")
    assert chromium, "the test command installs Debian's chromium (scripts/setup.sh all)"
    if script:
        acted = page.with_name("acted.html")
        acted.write_text(page.read_text().replace("</body>", f"<script>{{{script}}}</script>\n</body>"))
        page = acted
    # The browser is no part of nkic: it runs without the sanitizer runtime scripts/test_asan.sh preloads.
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    r = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                        f"--user-data-dir={page.parent / 'chromium'}", "--dump-dom", page.as_uri() + fragment],
                       capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    body = re.search(r"<body([^>]*)>", r.stdout).group(1)
    attrs = {k: v.replace("&quot;", '"') for k, v in re.findall(r'data-([\w-]+)="([^"]*)"', body)}
    assert "error" not in attrs, attrs["error"]
    table = {e: float(re.search(rf'id="busy-{e}">([0-9.]+) %', r.stdout).group(1)) for e in ENGINES}
    return attrs, table


def test_zoomed_out_the_loop_is_boxes_whose_drawn_busy_fraction_is_the_tables(report):
    r, page = report
    assert any(step[0] == "steady-state iterations" and step[5] > 1 for step in r.critical_path)
    attrs, table = render(page)
    assert int(attrs["blocks"]) > 0 and attrs["repeated"] == "0"  # a period is too narrow to draw here
    drawn = json.loads(attrs["busy"])
    for e in ENGINES:
        assert f"{drawn[e]:.1f}" == f"{table[e]:.1f}", (e, drawn[e], table[e])
        assert drawn[e] == pytest.approx(r.engines[e].percent, abs=1e-3), e
    # No engine is drawn as a full bar: the table's fractions are far from 100 %.
    assert 70 < drawn["pe"] < 85 and 30 < drawn["act"] < 45 and drawn["dve"] == 0
    v0, v1 = map(float, attrs["view"].split(","))
    assert v0 == 0 and v1 == pytest.approx(r.latency_us * 1000, rel=1e-6)  # the whole kernel


def test_zoomed_in_the_repeated_instructions_are_drawn_where_they_fall(report):
    r, page = report
    full = json.loads(render(page)[0]["busy"])
    mid = r.latency_us * 1000 / 2
    attrs, _ = render(page, f"#t0={mid}&t1={mid + 100000}")  # 100 us in the middle of the loop
    assert attrs["blocks"] == "0" and int(attrs["repeated"]) > 100
    assert [float(t) for t in attrs["view"].split(",")] == pytest.approx([mid, mid + 100000])
    window = json.loads(attrs["busy"])
    # The steady state's own fractions: the whole kernel's, but for its prologue and epilogue.
    for e in ENGINES:
        assert window[e] == pytest.approx(full[e], abs=2.0), e


ACT = """
const tl = document.getElementById('timeline'), box = tl.getBoundingClientRect();
const at = (x, y) => ({clientX: box.left + tl.clientLeft + x, clientY: box.top + tl.clientTop + y, bubbles: true});
const out = {};
tl.dispatchEvent(new MouseEvent('mousemove', at(600, 22 + 9)));           // over the pe row
out.tip = document.getElementById('tip').textContent;
tl.dispatchEvent(new WheelEvent('wheel', {...at(600, 40), deltaY: -2000, cancelable: true}));   // zoom in
out.zoomed = document.body.dataset.view;
out.repeated = document.body.dataset.repeated;
for (let x = 110; x < 1190 && !out.tip_zoomed; x++) {                  // along the pe row to a matmul
  tl.dispatchEvent(new MouseEvent('mousemove', at(x, 22 + 9)));
  out.tip_zoomed = document.getElementById('tip').textContent;
}
tl.dispatchEvent(new MouseEvent('mousedown', at(600, 40)));
tl.dispatchEvent(new MouseEvent('mousemove', at(700, 40)));              // drag right: earlier times
window.dispatchEvent(new MouseEvent('mouseup', at(700, 40)));
out.panned = document.body.dataset.view;
const rows = tl.height;
tl.dispatchEvent(new MouseEvent('click', at(20, 22 + 4 * 18 + 9)));      // the DMA group's name
out.rows_added = (tl.height - rows) / 18;
tl.dispatchEvent(new MouseEvent('dblclick', at(600, 40)));
out.reset = document.body.dataset.view;
document.body.dataset.acted = JSON.stringify(out);
"""


def test_hover_zoom_pan_and_the_dma_group_answer_the_user(report):
    r, page = report
    attrs, _ = render(page, script=ACT)
    acted = json.loads(attrs["acted"])
    latency = r.latency_us * 1000
    # Zoomed out, the pointer is over the loop's box on the PE row.
    assert acted["tip"].startswith("steady state: the period before it (") and "test_html_report.py:" in acted["tip"]
    assert re.search(r"pe \d+\.\d % busy: ", acted["tip"]), acted["tip"]
    z0, z1 = map(float, acted["zoomed"].split(","))
    # The wheel zoomed in about the pointer: the time under it stays under it.
    pointer = latency * (600 - 110) / 1080
    assert 0 < z1 - z0 < latency / 20 and (pointer - z0) / (z1 - z0) == pytest.approx((600 - 110) / 1080, rel=1e-4)
    assert int(acted["repeated"]) > 0
    # Zoomed in, the pointer names one matmul: instruction, API, line and duration.
    line = project.__code__.co_firstlineno + 5
    assert re.fullmatch(rf"nc_matmul \(nl\.matmul\)\n\S*test_html_report\.py:{line}:\d+\nstart [\d.]+ (us|ms), "
                        rf"duration [\d.]+ ns\nrepeat \d+ of \d+ of a steady-state period \([\d.]+ us\)",
                        acted["tip_zoomed"]), acted["tip_zoomed"]
    p0, p1 = map(float, acted["panned"].split(","))
    assert p1 - p0 == pytest.approx(z1 - z0) and p0 == pytest.approx(z0 - 100 * (z1 - z0) / 1080)
    assert acted["rows_added"] == 16  # the group lists its 16 queues
    r0, r1 = map(float, acted["reset"].split(","))
    assert r0 == 0 and r1 == pytest.approx(latency, rel=1e-6)


def test_the_perfetto_trace_says_how_busy_each_track_is_within_a_stretch(report):
    r, _ = report
    events = [e for e in json.loads(r.trace_json())["traceEvents"] if e["ph"] == "X"]
    tid = {name: t for t, name in enumerate(("pe", "act", "dve", "pool"))}
    for engine in ("pe", "act"):
        mine = [e for e in events if e["tid"] == tid[engine]]
        stretches = [e for e in mine if "repeat" in e["args"]]
        assert stretches and all(e["name"].startswith("steady-state iterations x") for e in stretches)
        for e in stretches:
            assert 0 < e["args"]["busy_us"] < e["dur"]  # not a solid bar: the track idles within it
            # period_us has three decimals (ns): repeated, its rounding stays below 1 ns a period
            repeat = e["args"]["repeat"]
            assert e["args"]["period_us"] * repeat == pytest.approx(e["dur"], abs=1e-3 * repeat)
        busy = sum(e["args"]["busy_us"] if "repeat" in e["args"] else e["dur"] for e in mine)
        assert 100 * busy / r.latency_us == pytest.approx(r.engines[engine].percent, abs=0.01)

