"""What a sweep writes: the ranked table on the terminal, the JSON file (which --resume reads
back), the CSV file and the plot of predicted latency against each parameter. docs/sweep.md
documents the fields."""
import csv
import json
import os

from ._version import __version__
from ._sweep import ROW_FIELDS, SweepUsageError

SCHEMA = "nkic.sweep/1"
NO_CODE = "no_code"  # the plot's row of a diagnostic without an err_* code


def _value(v):
    return "None" if v is None else str(v)


def _engine_names(rows):
    names = []
    for r in rows:
        names += [n for n in (r["engines"] or {}) if n not in names]
    return names


def check_outputs(json_file=None, csv_file=None, plot_file=None):
    """Refuses, before any configuration runs, a file the sweep could not write at its end: one in a
    directory that does not exist or is read-only, or a plot whose extension matplotlib cannot write."""
    for option, path in (("--json", json_file), ("--csv", csv_file), ("--plot", plot_file)):
        folder = os.path.dirname(os.path.abspath(path)) if path else None
        if folder and not (os.path.isdir(folder) and os.access(folder, os.W_OK)):
            raise SweepUsageError(f"{option} {path}: {folder} is not a directory this process can write to")
    if plot_file:
        try:
            from matplotlib.backend_bases import FigureCanvasBase
        except ImportError:
            raise SweepUsageError("--plot needs matplotlib (Debian: python3-matplotlib)") from None
        kinds = sorted(FigureCanvasBase.get_supported_filetypes())
        if os.path.splitext(plot_file)[1].lstrip(".").lower() not in kinds:
            raise SweepUsageError(f"--plot {plot_file}: name a file ending in one of the formats matplotlib writes: "
                                  + ", ".join("." + k for k in kinds))


def table(rows, names):
    """The rows best first, one line each; a diagnostic or failure ends its line with why."""
    engines = _engine_names(rows)
    head = ["rank", *names, "target", "status", "latency_us", *(f"{e}%" for e in engines), "mfu%", "max_abs_err",
            "sim_s", "worker"]
    lines = []
    for r in rows:
        cells = [str(r["rank"] or "-"), *(_value(r["params"].get(n)) for n in names), r["target"], r["status"]]
        if r["status"] in ("ok", "mismatch") and r["predicted_latency_us"] is not None:
            mfu = r.get("mfu_percent")  # absent from the rows of an older --json file
            cells += [f"{r['predicted_latency_us']:.3f}", *(f"{r['engines'].get(e, 0.0):.1f}" for e in engines),
                      "-" if mfu is None else f"{mfu:.1f}",
                      "-" if r["max_abs_err"] is None else f"{r['max_abs_err']:.3g}", f"{r['simulate_s']:.3f}",
                      r["worker"] or "-"]
            tail = r["message"] if r["status"] == "mismatch" else None
        else:
            cells += ["-"] * (len(head) - len(cells) - 1) + [r["worker"] or "-"]
            where = f" ({os.path.basename(r['file'])}:{r['line']})" if r.get("file") else ""
            tail = f"{r['error_code'] + ': ' if r['error_code'] else ''}{r['message']}{where}"
        lines.append((cells, tail))
    widths = [max(len(c[i]) for c in [head] + [cells for cells, _ in lines]) for i in range(len(head))]
    fmt = lambda cells: "  ".join(c.rjust(w) if i == 0 or c[:1].isdigit() else c.ljust(w)  # noqa: E731
                                  for i, (c, w) in enumerate(zip(cells, widths))).rstrip()
    text = [fmt(head)]
    for cells, tail in lines:
        text.append(fmt(cells))
        if tail:
            text.append("      " + tail)
    return "\n".join(text)


def write_json(path, rows, kernel, grid, targets):
    doc = {"schema": SCHEMA, "version": __version__, "kernel": kernel, "grid": grid, "targets": targets,
           "rows": rows}
    with open(path, "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")


def read_rows(path):
    """The rows of an earlier --json file (for --resume); ValueError when it is not one."""
    with open(path) as f:
        doc = json.load(f)
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA or not isinstance(doc.get("rows"), list):
        raise ValueError(f"{path} is not an nkic sweep --json file (schema {SCHEMA})")
    return doc["rows"]


def write_csv(path, rows, names):
    engines = _engine_names(rows)
    fields = [f for f in ROW_FIELDS if f not in ("params", "engines")]
    columns = [*names, *fields, *(f"{e}_percent" for e in engines)]
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(columns)
        for r in rows:
            w.writerow([*(_value(r["params"].get(n)) for n in names),
                        *("" if r.get(f) is None else r[f] for f in fields),
                        *("" if not r["engines"] else r["engines"].get(e, "") for e in engines)])


def plot(path, rows, names):
    """One column per parameter. Below: the predicted latency of every configuration that traced
    against that parameter's value, one colour per target, a mismatch hollow, with a line through
    the best matching one per value. Above, when some did not trace: each of those at its value,
    in the row of its err_* code. The format follows the file's extension (png, svg, pdf, ...);
    every marker set carries an id (kind-parameter-target[-code]) in an SVG."""
    import matplotlib
    matplotlib.use("Agg")  # files only, never a display
    import matplotlib.pyplot as plt
    illegal = [r for r in rows if r["status"] == "diagnostic"]
    codes = sorted({r["error_code"] or NO_CODE for r in illegal})
    strip = bool(illegal)
    with plt.rc_context({"svg.fonttype": "none"}):  # text stays text in an SVG: searchable, editable
        fig, axes = plt.subplots(1 + strip, len(names), sharex="col", squeeze=False,
                                 figsize=(4.5 * len(names), 3.6 + 0.3 * len(codes) * strip),
                                 gridspec_kw={"height_ratios": [0.6 + 0.3 * len(codes), 3.6] if strip else [1]})
        targets = list(dict.fromkeys(r["target"] for r in rows))
        for col, name in enumerate(names):
            values = list(dict.fromkeys(r["params"][name] for r in rows))
            numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)
            where = (lambda v: v) if numeric else values.index
            ax = axes[-1][col]
            for i, t in enumerate(targets):
                _latencies(ax, [r for r in rows if r["target"] == t], name, where, t, f"C{i}")
            if strip:
                _did_not_trace(axes[0][col], illegal, name, where, targets, codes, labels=col == 0)
            if numeric and all(v > 0 for v in values) and max(values) >= 4 * min(values):
                ax.set_xscale("log", base=2)  # tile sizes: powers of two, evenly spaced
                ax.minorticks_off()
            ax.set_xticks([where(v) for v in values], [_value(v) for v in values])
            ax.set_xlabel(name)
            ax.set_ylabel("predicted latency (us)")
            ax.grid(alpha=0.3)
        if axes[-1][0].get_legend_handles_labels()[0]:  # no legend when nothing traced
            axes[-1][0].legend(title="target")
        fig.tight_layout()
        fig.savefig(path)
    plt.close(fig)


def _latencies(ax, rows, name, where, target, colour):
    """One target's configurations that traced: filled when they match, hollow when not."""
    traced = [r for r in rows if r["predicted_latency_us"] is not None and r["status"] in ("ok", "mismatch")]
    for status, face, label in (("ok", colour, target), ("mismatch", "none", f"{target}: mismatch")):
        mine = [r for r in traced if r["status"] == status]
        if mine:
            ax.scatter([where(r["params"][name]) for r in mine], [r["predicted_latency_us"] for r in mine],
                       facecolors=face, edgecolors=colour, alpha=0.7, label=label,
                       gid=f"{'traced' if status == 'ok' else 'mismatch'}-{name}-{target}")
    best = {}
    for r in traced:
        if r["status"] == "ok":
            v = r["params"][name]
            best[v] = min(best.get(v, r["predicted_latency_us"]), r["predicted_latency_us"])
    xs = sorted(best, key=where)
    ax.plot([where(v) for v in xs], [best[v] for v in xs], color=colour)


def _did_not_trace(ax, illegal, name, where, targets, codes, labels):
    """The configurations without a latency: one row per err_* code, one colour per target, a
    count beside a marker that stands for several."""
    for i, t in enumerate(targets):
        for row, code in enumerate(codes):
            count = {}
            for r in illegal:
                if r["target"] == t and (r["error_code"] or NO_CODE) == code:
                    count[r["params"][name]] = count.get(r["params"][name], 0) + 1
            if not count:
                continue
            y = row + 0.15 * (i - (len(targets) - 1) / 2)  # targets side by side within the row
            ax.scatter([where(v) for v in count], [y] * len(count), marker="x", color=f"C{i}",
                       gid=f"illegal-{name}-{t}-{code}")
            for v, n in count.items():
                if n > 1:
                    ax.annotate(f"{n}", (where(v), y), xytext=(5, -3), textcoords="offset points", fontsize=7)
    ax.set_ylim(-0.6, len(codes) - 0.4)
    ax.set_yticks(range(len(codes)), codes if labels else [""] * len(codes), fontsize=7)
    ax.set_title("did not trace (diagnostic)", fontsize=8)
    ax.grid(alpha=0.3, axis="x")
