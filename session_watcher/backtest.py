"""`session-watcher backtest [--json] [--set KEY=VALUE ...] [SESSION | TRANSCRIPT ...]`: the shell
around `core.backtest`.

Finds the transcripts (every session on the machine as `report` finds them, or the sessions named
as every command names one: `sessions.find`), replays each with the hooks' own fold, hands the trace to
the pure backtest and prints one line per session and a total (or the JSON document). `--set` replays
with a config key changed, to see what a different default would have done.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

from session_watcher.core import backtest as bt
from session_watcher.core.render import human
from session_watcher.errors import UserError

if TYPE_CHECKING:
    import argparse

VERSION = 1  # of the JSON document (docs/backtest.md)


def all_transcripts() -> list[str]:
    """Every main session transcript under the Claude Code projects folders (`report`'s discovery)."""
    from session_watcher.reports.index import default_roots, discover

    return [s.path for s in discover(default_roots()) if not s.sub]


def resolve(target: str) -> str:
    """The transcript of the session `target` names (`sessions.find`: an id, a unique id prefix or a path)."""
    from session_watcher.sessions import transcript_of

    path = transcript_of(target).transcript
    assert path is not None
    return path


def parse_overrides(items: list[str]) -> dict[str, Any]:
    """`--set KEY=VALUE` (a TOML value, as `config set` takes it), checked like a config file."""
    from session_watcher import config

    doc: dict[str, Any] = {}
    for item in items:
        key, eq, raw = item.partition("=")
        if not eq or not key.strip():
            raise UserError(f"--set {item!r}: expected KEY=VALUE")
        doc[key.strip()] = config.parse_cli_value(raw.strip())
    return config.validate("--set", doc)


def run_one(transcript: str, overrides: dict[str, Any] | None = None,
            taken: dict[str, Any] | None = None) -> dict[str, Any]:
    """Replay one transcript (with config overrides, if any) and backtest it. `taken` collects what
    pricing the restarts taken needs (core.restarts): each session's calls and its parent."""
    from session_watcher.replay import config_for, replay

    status, trace = replay(transcript, cfg=config_for(transcript, overrides or {}))
    calls = bt.calls_from_trace(trace)
    doc = bt.backtest(calls, bt.shared_prefix(status, calls))
    if taken is not None:
        from session_watcher.restarts import note_taken

        note_taken(taken, transcript, status, trace)
    return {"sessionId": status.get("sessionId"), "transcript": transcript, **doc}


def run(targets: list[str], overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """The backtest document for the given sessions (none: every session on the machine)."""
    explicit = bool(targets)
    paths = [resolve(t) for t in targets] if explicit else all_transcripts()
    from session_watcher.reports.collect import Progress

    progress = Progress()  # on a terminal, once the run has taken a moment
    sessions = []
    taken: dict[str, Any] = {}
    for n, path in enumerate(paths):
        progress(n, len(paths))
        try:
            doc = run_one(path, overrides, taken)
        except OSError as exc:
            if explicit:
                raise
            print(f"session-watcher backtest: skipped {clean(path)}: {exc.strerror or exc}", file=sys.stderr)
            continue
        if doc["calls"] or explicit:
            sessions.append(doc)
    progress(len(paths), len(paths))
    from session_watcher.restarts import restarts_taken

    found = restarts_taken(taken, overrides)
    return {"version": VERSION, "config": overrides or {}, "sessions": sessions, "total": bt.totals(sessions),
            **found}


# ----------------------------------------------------------------------------- text

def clean(text: object) -> str:
    """Text from a transcript, its control characters escaped (the CLI's one rule: core.text)."""
    from session_watcher.core.text import clean as escape

    return escape(str(text), keep="")


def _usd(v: float | None) -> str:
    if v is None:
        return "$?"
    if abs(v) >= 10_000:
        return f"${human(v)}"
    return f"${v:,.2f}"


def _saving(p: dict[str, Any]) -> str:
    pct = p.get("savingPct")
    if pct is None:
        return "-"
    money = _usd(p["savingUsd"]) if p.get("savingUsd") is not None else f"{human(p['savingUnits'])} units"
    return f"{pct:.1f} % {money}"


def _cost(p: dict[str, Any]) -> str:
    return _usd(p["usd"]) if p.get("usd") is not None else f"{human(p['units'])} units"


def render_text(doc: dict[str, Any]) -> str:
    from session_watcher.reports.render_text import table

    rows = []
    for s in doc["sessions"]:
        pol = s["policies"]
        cap = s["capture"]
        rows.append([
            clean(s["sessionId"]), f"{s['calls']:,}", _cost(pol["actual"]), _saving(pol["hindsight"]),
            _saving(pol["alert"]), _saving(pol["sweetSpot"]), "-" if cap is None else f"{cap:.2f}",
        ])
    tot = doc["total"]
    tp = tot["policies"]
    cap = tot["capture"]
    rows.append([
        f"total ({tot['sessions']} sessions)", f"{tot['calls']:,}", _usd(tp["actual"]["usd"]),
        _saving(tp["hindsight"]), _saving(tp["alert"]), _saving(tp["sweetSpot"]),
        "-" if cap is None else f"{cap:.2f}",
    ])
    head = ["session", "calls", "cache cost", "best restart saves", "advice saves", "sweet spot saves", "capture"]
    lines = table(head, rows, right={1, 2, 3, 4, 5, 6})
    med, low = tot["captureMedian"], tot["captureMin"]
    if med is not None:
        lines.append(f"capture (advice / best restart) over sessions: median {med:.2f}, lowest {low:.2f}")
    flat = tot["alertInFlatSegment"]
    lines.append(f"{flat} alert{'s' if flat != 1 else ''} in segments whose best restart saves under "
                 f"{bt.FLAT_SEGMENT_PCT:g} %")
    from session_watcher.restarts import render_lines

    lines += render_lines(doc.get("restartsTaken") or [])
    if tot["pricedSessions"] < tot["sessions"]:
        lines.append(f"{tot['sessions'] - tot['pricedSessions']} session(s) use a model with no dollar price: "
                     "their costs are in read-price token units and left out of the total")
    return "\n".join(lines) + "\n"


def command(ns: argparse.Namespace) -> int:
    doc = run(list(ns.targets), parse_overrides(ns.set))
    if ns.json:
        sys.stdout.write(json.dumps(doc, indent=1 if sys.stdout.isatty() else None) + "\n")
    elif not doc["sessions"]:
        print("no session with an API call found (looked in the Claude projects folders)")
    else:
        sys.stdout.write(render_text(doc))
    return 0
