"""results.json -> results.md."""

from __future__ import annotations

import math
from typing import Any


def _f(v: Any, digits: int = 1) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        if not math.isfinite(v):
            return "n/a"
        return f"{v:,.{digits}f}"
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:,}"
    return str(v)


def _table(head: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    out += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
    return out


def render(res: dict[str, Any]) -> str:
    m = res.get("machine", {})
    lines = [f"# session-watcher benchmark ({res.get('mode')})", ""]
    v = m.get("versions", {})
    lines += [
        f"Machine: {m.get('cpu')}, {m.get('cores')} cores ({m.get('usableCores')} usable), "
        f"{m.get('memoryGB')} GB RAM, {m.get('os')}; Python {m.get('python')} ({m.get('interpreter')}); "
        + ", ".join(f"{k} {val}" for k, val in v.items())
        + f"; measured: {res.get('install')}; commit {m.get('commit')}. "
        f"Whole run: {res.get('seconds')} s. Load average (1/5/15 min) "
        f"at start {m.get('loadAverage')}, at end {m.get('loadAverageAtEnd')}.",
        "",
    ]
    rows = res.get("rows", [])
    lat = [r for r in rows if r["group"] in ("baseline", "hook", "statusline", "otlp")]
    lines += ["## Hook and status-line latency (whole process, wall)", ""]
    lines += _table(
        ["command", "median ms", "p95 ms", "n", "x python -I", "x python -I -S", "note"],
        [
            [
                r["label"],
                _f(r.get("medianMs")),
                _f(r.get("p95Ms")),
                _f(r.get("n")),
                _f(r.get("xPythonI"), 2),
                _f(r.get("xPythonIS"), 2),
                r.get("note", ""),
            ]
            for r in lat
        ],
    )
    imp = [r for r in rows if r["group"] == "imports"]
    lines += ["", "## Import budget (`PYTHONPROFILEIMPORTTIME`, best of 3)", ""]
    lines += _table(
        ["path", "total ms", "modules", "top-level imports (cumulative ms)"],
        [[r["label"], _f(r.get("totalMs")), _f(r.get("modules")), r.get("note", "")] for r in imp],
    )
    rep = [r for r in rows if r["group"] == "replay"]
    lines += ["", "## Replay throughput", ""]
    lines += _table(
        ["command", "seconds", "MB/s", "calls/s", "peak RSS MB", "note"],
        [
            [
                r["label"],
                _f(r.get("seconds"), 2),
                _f(r.get("mbPerS")),
                _f(r.get("callsPerS"), 0),
                _f(r.get("peakRssMB")),
                r.get("note", ""),
            ]
            for r in rep
        ],
    )
    rr = [r for r in rows if r["group"] == "report"]
    corpus = res.get("inputs", {}).get("corpus", {})
    lines += [
        "",
        f"## Report on the corpus ({corpus.get('files', '?')} files, "
        f"{_f((corpus.get('bytes') or 0) / 1e9, 2)} GB, {corpus.get('calls', '?')} API calls)",
        "",
    ]
    lines += _table(
        ["command", "seconds (median)", "n", "x faster than cold", "note"],
        [
            [
                r["label"],
                _f(r.get("seconds"), 3),
                _f(r.get("n")),
                _f(r.get("xFasterThanCold")),
                r.get("note", ""),
            ]
            for r in rr
        ],
    )
    totals = res.get("totals") or {}
    if totals:
        lines += ["", "Token totals on the corpus:", ""]
        keys = ["input", "output", "cacheRead", "cacheCreation"]
        lines += _table(
            ["source", *keys],
            [
                [src, *(_f((t or {}).get(k), 0) for k in keys)] if t else [src, "not found", "", "", ""]
                for src, t in totals.items()
            ],
        )
    lines += ["", "## Targets", ""]
    lines += _table(
        ["target", "value", "bar", "result", "note"],
        [
            [
                t["target"],
                _f(t.get("value"), 2),
                f"{t.get('op', '')} {t['limit']:g}",
                {True: "pass", False: "MISS", None: "n/a"}[t["pass"]],
                t.get("note", ""),
            ]
            for t in res.get("targets", [])
        ],
    )
    unavailable = [r for r in rows if not r.get("available")]
    if unavailable:
        lines += ["", "## Not measured", ""]
        lines += [f"* {r['label']}: {r.get('note', '')}" for r in unavailable]
    shape = res.get("shape", {})
    fx, gen = shape.get("fixtures"), shape.get("generated")
    if fx:
        lines += ["", "## Input shape: real fixtures vs generated", ""]
        hdr = ["", "calls", "lines/call", "line p50", "p90", "p99", "max", "top kinds"]

        def shape_row(name: str, d: dict[str, Any]) -> list[str]:
            q = d["lineLength"]
            kinds = ", ".join(f"{k} {100 * s:.0f}%" for k, s in list(d["kindShare"].items())[:4])
            return [
                name,
                str(d["calls"]),
                _f(d["linesPerCall"]),
                _f(q["p50"], 0),
                _f(q["p90"], 0),
                _f(q["p99"], 0),
                _f(q["max"], 0),
                kinds,
            ]

        lines += _table(hdr, [shape_row("fixtures", fx)] + ([shape_row("generated", gen)] if gen else []))
    errors = res.get("errors")
    if errors:
        lines += ["", "## Errors", ""] + [f"* {k}: {v}" for k, v in errors.items()]
    return "\n".join(lines) + "\n"
