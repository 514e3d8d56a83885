"""`session-watcher backtest [--json] [--set KEY=VALUE ...] [SESSION | TRANSCRIPT ...]`: the shell
around `core.backtest`.

Finds the transcripts (every session on the machine as `report` finds them, or the sessions named
as every command names one: `sessions.find`), replays each with the hooks' own fold, hands the trace to
the pure backtest and prints one line per session and a total (or the JSON document). The sessions
are spread over the usable cores (`sessions.backtest.run_all`), their results taken in order. `--set` replays
with a config key changed, to see what a different default would have done.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from session_watcher.core import backtest as bt
from session_watcher.core.numbers import dollars, tokens
from session_watcher.core.usererrors import UserError
from session_watcher.sessions.backtest import all_transcripts, resolve, run_all, run_noted

if TYPE_CHECKING:
    import argparse


VERSION = 2  # of the JSON document (docs/backtest.md): 2, the closed loop and the best schedule


def parse_overrides(items: list[str]) -> dict[str, Any]:
    """`--set KEY=VALUE` (a TOML value, as `config set` takes it), checked like a config file; one
    that cannot be used is a command line that cannot work (UsageError: exit 2)."""
    from session_watcher.base import config
    from session_watcher.core.usererrors import UsageError

    doc: dict[str, Any] = {}
    for item in items:
        key, eq, raw = item.partition("=")
        if not eq or not key.strip():
            raise UsageError(f"--set {item!r}: expected KEY=VALUE")
        doc[key.strip()] = config.parse_cli_value(raw.strip())
    try:
        layer = config.validate("--set", doc)
        config.together("--set", layer, over_user=True)  # bp_amber=5 under bp_red 0.25: refused, as `config set` does
    except UserError as exc:  # ConfigError: an unknown key, a value out of range
        raise UsageError(str(exc), keep=exc.keep) from None
    return layer


def run(targets: list[str], overrides: dict[str, Any] | None = None,
        last: dict[str, float] | None = None) -> dict[str, Any]:
    """The backtest document for the given sessions (none: every session on the machine), in the
    order they were named or found. `last`, where given, gets each session's last API call's time
    (epoch seconds) by its id: what the text orders the sessions by."""
    explicit = bool(targets)
    paths = [resolve(t) for t in targets] if explicit else all_transcripts()
    from session_watcher.reports.collect import Progress

    progress = Progress()  # on a terminal, once the run has taken a moment
    results = run_all(paths, overrides, lambda n: progress(n, len(paths)))  # on every usable core
    progress(len(paths), len(paths))
    sessions = []
    taken: dict[str, Any] = {}
    for path, got in zip(paths, results, strict=True):
        done = got
        if done is None:  # its run raised: again here, in its place, to raise or be skipped as it would alone
            try:
                done = run_noted(path, overrides)
            except OSError as exc:
                if explicit:
                    raise
                import os

                from session_watcher.cli.messages import NOT_A_FILE, say

                # a folder named as a log, a link to nothing (`Agent.sources`): in report's and export's words
                odd = os.path.isdir(path) or (os.path.islink(path) and not os.path.exists(path))
                why = NOT_A_FILE if odd else (exc.strerror or exc)
                say(f"skipped {path}: {why}", keep=[path], prog="session-watcher backtest")
                continue
        doc, noted = done
        taken.update(noted)  # in the order of `paths`, as one process alone notes them
        if doc["calls"] or explicit:
            sessions.append(doc)
    from session_watcher.sessions.restarts import restarts_taken

    if last is not None:
        for sid, (_transcript, _parent, calls) in taken.items():
            last[str(sid)] = max((c.ts for c in calls if c.ts is not None), default=0.0)
    found = restarts_taken(taken, overrides)
    return {"version": VERSION, "config": overrides or {}, "sessions": sessions, "total": bt.totals(sessions),
            **found}


# ----------------------------------------------------------------------------- text

def clean(text: object) -> str:
    """Text from a transcript, its control characters escaped (the CLI's one rule: core.text)."""
    from session_watcher.core.text import clean as escape

    return escape(str(text), keep="")


def _pct(p: dict[str, Any]) -> str:
    pct = p.get("savingPct")
    return "-" if pct is None else f"{pct:.1f} %"


def _saving(p: dict[str, Any]) -> str:
    pct = p.get("savingPct")
    if pct is None:
        return "-"
    money = dollars(p["savingUsd"]) if p.get("savingUsd") is not None else f"{tokens(p['savingUnits'])} units"
    return f"{pct:.1f} % {money}"


def _cost(p: dict[str, Any]) -> str:
    return dollars(p["usd"]) if p.get("usd") is not None else f"{tokens(p['units'])} units"


def _restarts(p: dict[str, Any], gaps: dict[str, Any] | None) -> str:
    n = len(p["restartsAfter"])
    median = (gaps or {}).get("median")
    return f"{n}" if median is None else f"{n}, ~{median:.0f} apart"


def _cap(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}"


HEAD = ["session", "calls", "cache cost", "best restarts save", "advice saves", "restarts", "sweet spot",
        "capture"]


def render_text(doc: dict[str, Any], width: int = 100) -> str:
    """One line per session (its short id, as `report` shows it and every command takes it) and a total,
    within `width` columns (the sweet spot's and the restarts' columns left out when narrower)."""
    from session_watcher.core.text import fit
    from session_watcher.reports.render_text import fit_table, fork_sentence, report_id_length

    cut = report_id_length(doc)  # as `report` cuts them: told apart from each fork's parent too
    rows = []
    for s in doc["sessions"]:
        pol = s["policies"]
        rows.append([
            clean(str(s["sessionId"])[:cut]), f"{s['calls']:,}", _cost(pol["actual"]), _saving(pol["hindsight"]),
            _saving(pol["alert"]), _restarts(pol["alert"], s.get("restartGaps")), _pct(pol["sweetSpot"]),
            _cap(s["capture"]),
        ])
    tot = doc["total"]
    tp = tot["policies"]
    restarts = sum(len(s["policies"]["alert"]["restartsAfter"]) for s in doc["sessions"])
    rows.append([
        f"total ({tot['sessions']})", f"{tot['calls']:,}", dollars(tp["actual"]["usd"]), _saving(tp["hindsight"]),
        _saving(tp["alert"]), f"{restarts}", _pct(tp["sweetSpot"]), _cap(tot["capture"]),
    ])
    lines, left_out = fit_table(HEAD, rows, {1, 2, 3, 4, 6, 7}, width, ("sweet spot", "restarts"))
    if left_out:
        lines.append(f"({', '.join(left_out)}: left out at this width; all in --json)")
    forks = fork_sentence(doc, cut)  # as `report` says it: a fork's copies of its parent's calls are the parent's
    if forks:
        lines.append(forks)
    med, low = tot["captureMedian"], tot["captureMin"]
    if med is not None:
        more = tot["costMore"]
        lines.append(f"capture (the advice's saving / the best schedule's): dollars {_cap(tot['capture'])}, "
                     f"median {med:.2f}, lowest {low:.2f}")
        plural = "s" if more != 1 else ""
        lines.append(f"following the advice cost more than never restarting in {more} session{plural}")
    one = tp["hindsight1"]["savingPct"]
    if one is not None:
        lines.append(f"the best single restart per segment would have saved {one:.1f} %")
    flat = tot["alertInFlatSegment"]
    lines.append(f"{flat} alert{'s' if flat != 1 else ''} in segments whose best restarts save under "
                 f"{bt.FLAT_SEGMENT_PCT:g} %")
    from session_watcher.sessions.restarts import render_lines

    lines += render_lines(doc.get("restartsTaken") or [])
    if tot["pricedSessions"] < tot["sessions"]:
        lines.append(f"{tot['sessions'] - tot['pricedSessions']} session(s) use a model with no dollar price: "
                     "their costs are in read-price token units and left out of the total")
    return fit("\n".join(lines), width) + "\n"


def add_parser(sub: Any) -> None:
    """`backtest` in the CLI's parser tree."""
    from session_watcher.cli.messages import LEFT_OUT_HELP

    s = sub.add_parser("backtest", description="Replay sessions and price restarting at the advice, at the sweet spot "
                                               "and at the best moments in hindsight (docs/backtest.md). "
                                               + LEFT_OUT_HELP)
    s.add_argument("targets", nargs="*", metavar="SESSION",
                   help="sessions by id, id prefix or transcript path (default: every session on this machine)")
    s.add_argument("--json", action="store_true", help="the full document (docs/backtest.md)")
    s.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="replay with this config key changed (e.g. bp_amber=0.15); repeatable")
    s.set_defaults(func=command)


def newest_first(doc: dict[str, Any], last: dict[str, float]) -> dict[str, Any]:
    """`doc` with its sessions newest first, by their last API call (`last`), as `report` lists them;
    a tie (or no time) in the order found."""
    order = sorted(range(len(doc["sessions"])), key=lambda i: -last.get(str(doc["sessions"][i]["sessionId"]), 0.0))
    return {**doc, "sessions": [doc["sessions"][i] for i in order]}


def command(ns: argparse.Namespace) -> int:
    last: dict[str, float] = {}
    doc = run(list(ns.targets), parse_overrides(ns.set), last)
    if ns.json:
        from session_watcher.cli.messages import json_text

        sys.stdout.write(json_text(doc, indent=1 if sys.stdout.isatty() else None) + "\n")
    elif not doc["sessions"]:
        from session_watcher.agents import NO_FOLDER, folders_there, sources
        from session_watcher.base.terminal import columns
        from session_watcher.core.text import wrap

        there = folders_there(sources()[0])
        said = "no Claude Code or Codex session with an API call found; " + (
            f"looked in {', '.join(there)}" if there else NO_FOLDER)
        print("\n".join(wrap(said, columns(), keep=there)))  # a folder whole, its spaces too
    else:
        from session_watcher.base.terminal import columns

        # every session on the machine: newest first, as `report` lists them (the JSON keeps the order
        # found, which programs and bench.backtest_many compare byte for byte); sessions named: as named
        sys.stdout.write(render_text(doc if ns.targets else newest_first(doc, last), columns()))
    return 0
