"""What a sweep writes: the ranked table on the terminal, the JSON file (which --resume reads
back), the CSV file and the plot of predicted latency against each parameter. docs/sweep.md
documents the fields."""
import csv
import json
import os

from ._version import __version__
from ._sweep import ROW_FIELDS

SCHEMA = "nkic.sweep/1"


def _value(v):
    return "None" if v is None else str(v)


def _engine_names(rows):
    names = []
    for r in rows:
        names += [n for n in (r["engines"] or {}) if n not in names]
    return names


def table(rows, names):
    """The rows best first, one line each; a diagnostic or failure ends its line with why."""
    engines = _engine_names(rows)
    head = ["rank", *names, "target", "status", "latency_us", *(f"{e}%" for e in engines), "max_abs_err",
            "sim_s", "worker"]
    lines = []
    for r in rows:
        cells = [str(r["rank"] or "-"), *(_value(r["params"].get(n)) for n in names), r["target"], r["status"]]
        if r["status"] in ("ok", "mismatch") and r["predicted_latency_us"] is not None:
            cells += [f"{r['predicted_latency_us']:.3f}", *(f"{r['engines'].get(e, 0.0):.1f}" for e in engines),
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
    """One panel per parameter: the predicted latency of every matching configuration against
    that parameter's value, one series per target, with a line through the best per value."""
    import matplotlib
    matplotlib.use("Agg")  # files only, never a display
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, len(names), figsize=(4.5 * len(names), 3.6), squeeze=False)
    ranked = [r for r in rows if r["rank"] is not None]
    targets = list(dict.fromkeys(r["target"] for r in rows))
    for ax, name in zip(axes[0], names):
        values = list(dict.fromkeys(r["params"][name] for r in rows))
        numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)
        where = (lambda v: v) if numeric else values.index
        for i, t in enumerate(targets):
            mine = [r for r in ranked if r["target"] == t]
            ax.scatter([where(r["params"][name]) for r in mine], [r["predicted_latency_us"] for r in mine],
                       label=t, alpha=0.6, color=f"C{i}")
            best = {}
            for r in mine:
                v = r["params"][name]
                best[v] = min(best.get(v, r["predicted_latency_us"]), r["predicted_latency_us"])
            xs = sorted(best, key=where)
            ax.plot([where(v) for v in xs], [best[v] for v in xs], color=f"C{i}")
        if numeric and all(v > 0 for v in values) and max(values) >= 4 * min(values):
            ax.set_xscale("log", base=2)  # tile sizes: powers of two, evenly spaced
            ax.minorticks_off()
        ax.set_xticks([where(v) for v in values], [_value(v) for v in values])
        ax.set_xlabel(name)
        ax.set_ylabel("predicted latency (us)")
        ax.grid(alpha=0.3)
    axes[0][0].legend(title="target")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
