"""What the nkic command prints besides plain text: diagnostics and warnings as JSON
objects, SARIF 2.1.0 for editors and code scanning, the IR as JSON, and colour on a
terminal. The schemas are documented in docs/cli.md."""
import os
import re
import time

from ._version import __version__

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_WARNING_CODE = re.compile(r"^\[(?P<code>\w+)\]\s*(?P<message>.*)$", re.S)
# The IR printer's location suffix: `  @ FILE:LINE:COL` at the end of an instruction line.
_IR_LOCATION = re.compile(r"\s+@ (?P<file>\S.*):(?P<line>\d+):(?P<col>\d+)\s*$")
# The first word of each printed IR statement that is not an instruction.
_IR_KINDS = {"kernel": "kernel", "tensor": "tensor", "for": "loop", "do": "loop"}
_COLOURS = {"ok": "32", "error": "31;1", "mismatch": "31;1", "warning": "33", "note": "36"}


def use_colour(stream):
    """Colour only on a terminal, and never when NO_COLOR is set (https://no-color.org)."""
    return bool(getattr(stream, "isatty", lambda: False)()) and not os.environ.get("NO_COLOR")


def paint(text, kind, stream):
    return f"\x1b[{_COLOURS[kind]}m{text}\x1b[0m" if use_colour(stream) else text


def diagnostic(e):
    """An NKIError as a JSON object: code, message, hint, api, file, line, col, notes."""
    return {
        "severity": "error", "code": e.code, "message": e.message, "hint": e.hint or None,
        "api": e.api or None, "file": e.file, "line": e.line or None, "col": e.col or None,
        "notes": [{"message": m, "file": f or None, "line": ln or None, "col": c or None}
                  for f, ln, c, m in e.notes],
    }


def warning(w):
    """A warnings.WarningMessage the tracer emitted as a JSON object (code when it has one)."""
    text = str(w.message)
    m = _WARNING_CODE.match(text)
    return {"severity": "warning", "code": m.group("code") if m else None,
            "message": m.group("message") if m else text, "category": w.category.__name__,
            "file": w.filename, "line": w.lineno or None}


def warning_key(w):
    return (w.category.__name__, str(w.message), w.filename, w.lineno)


def warning_text(w):
    return f"{w.filename}:{w.lineno}: warning: {w.message}"


def ir_json(traced, kernel, path, target):
    """The traced IR: the kernel's interface, and its body one printed statement per entry
    with its nesting depth and source location."""
    ir = traced.ir
    body = []
    engines = iter(ir.instruction_engines())
    for line in ir.text(True).splitlines():
        if not line.strip():
            continue
        m = _IR_LOCATION.search(line)
        loc = {"file": m.group("file"), "line": int(m.group("line")), "col": int(m.group("col"))} if m else None
        text = (line[:m.start()] if m else line).rstrip()
        kind = _IR_KINDS.get(text.lstrip().split(" ", 1)[0], "instruction")
        entry = {"kind": kind, "depth": (len(text) - len(text.lstrip(" "))) // 2, "text": text.strip(), "loc": loc}
        if kind == "instruction":
            entry["opcode"], entry["engine"] = next(engines)
        body.append(entry)
    tensors = lambda ts: [{"name": n, "shape": list(s), "dtype": d} for n, s, d in ts]  # noqa: E731
    return {"schema": "nkic.trace/1", "version": __version__, "kernel": kernel, "file": path, "target": target,
            "grid": list(ir.grid), "inputs": tensors(ir.inputs), "outputs": tensors(ir.outputs),
            "instructions": ir.num_instructions(), "body": body}


def profile_json(result, kernel):
    """A prediction as `nkic profile --json` prints it (docs/cli.md, schema nkic.profile/1)."""
    return {"schema": "nkic.profile/1", "version": __version__, "kernel": kernel, "target": result.target, "ok": True,
            "latency_us": result.latency_us,
            "engines": {n: {"busy_us": e.busy_us, "percent": e.percent, "instructions": e.instructions}
                        for n, e in result.engines.items()},
            "mfu": result.mfu, "hfu": result.hfu, "dma_bytes": result.dma_bytes,
            "dma_utilisation": result.dma_utilisation, "sbuf_peak_bytes": result.sbuf_peak_bytes,
            "psum_peak_bytes": result.psum_peak_bytes, "instructions": result.instructions,
            "allocation": result.allocation, "scheduling": result.scheduling, "decided_by": result.decided_by,
            "lines": [{"file": f, "line": line, "busy_us": busy, "critical_us": crit, "instructions": n}
                      for f, line, busy, crit, n in result.lines],
            "notes": result.notes}


def _sarif_location(file, line, col, message=None):
    loc = {"physicalLocation": {"artifactLocation": {"uri": _uri(file)},
                                "region": {"startLine": max(1, line or 1), "startColumn": max(1, col or 1)}}}
    if message:
        loc["message"] = {"text": message}
    return loc


def _uri(file):
    """A path relative to the working directory when it lies below it (what code scanning
    expects), else an absolute file URI."""
    path = os.path.abspath(file or "<kernel>")
    rel = os.path.relpath(path)
    return rel if not rel.startswith("..") else "file://" + path


def sarif(report):
    """A `nkic check --json` report as one SARIF 2.1.0 run: one result per diagnostic
    location and code, naming the targets that raise it (the message is the first
    target's), and one per warning."""
    results, rules, seen = [], {}, {}
    for t in report["targets"]:
        for d in t["diagnostics"]:
            key = (d["code"], d["file"], d["line"], d["col"])
            if key in seen:
                seen[key]["properties"]["targets"].append(t["target"])
                continue
            rules.setdefault(d["code"], {"id": d["code"], "shortDescription": {"text": d["code"]}})
            text = d["message"] + (f" ({d['hint']})" if d["hint"] else "")
            result = {"ruleId": d["code"], "level": "error", "message": {"text": text},
                      "locations": [_sarif_location(d["file"], d["line"], d["col"])],
                      "properties": {"targets": [t["target"]], "api": d["api"]}}
            if d["notes"]:
                result["relatedLocations"] = [_sarif_location(n["file"], n["line"], n["col"], n["message"])
                                              for n in d["notes"]]
            seen[key] = result
            results.append(result)
    for r in results:
        r["message"]["text"] += f" [targets: {', '.join(r['properties']['targets'])}]"
    for w in report["warnings"]:
        rule = w["code"] or w["category"]
        rules.setdefault(rule, {"id": rule, "shortDescription": {"text": rule}})
        results.append({"ruleId": rule, "level": "warning", "message": {"text": w["message"]},
                        "locations": [_sarif_location(w["file"], w["line"], 1)]})
    driver = {"name": "nkic", "version": __version__,
              "rules": sorted(rules.values(), key=lambda r: r["id"])}
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [{"tool": {"driver": driver}, "results": results}]}


class ProgressBar:
    """A simulation's progress on a terminal's stderr, once it has run for `delay` seconds
    (short runs print nothing); the line is cleared when the simulation ends."""

    def __init__(self, stream, label="simulating", delay=0.5, width=30):
        self.stream, self.label, self.delay, self.width = stream, label, delay, width
        self.start, self.drawn = time.monotonic(), 0

    @staticmethod
    def wanted(stream, quiet):
        return not quiet and bool(getattr(stream, "isatty", lambda: False)())

    def __call__(self, fraction, detail=""):
        if time.monotonic() - self.start < self.delay:
            return
        filled = int(round(self.width * fraction))
        text = f"{self.label} [{'#' * filled}{'.' * (self.width - filled)}] {100 * fraction:3.0f}%{detail}"
        # Pad over a longer line drawn before (the detail shrinks as well as grows).
        self.stream.write("\r" + text.ljust(self.drawn))
        self.stream.flush()
        self.drawn = max(self.drawn, len(text))

    def close(self):
        if self.drawn:
            self.stream.write("\r" + " " * self.drawn + "\r")
            self.stream.flush()
