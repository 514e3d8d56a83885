"""`session-watcher export --otlp [URL] [--since WHEN] [--projects DIR ...] [--dry-run]`: history.

Finds the sessions as `report` does (every main transcript in every agent's own folders, or in the
folders `--projects` names: Claude Code projects, Codex rollouts), replays each with the hooks' own fold
(`replay`), and sends each session's figures once: its gauges and cumulative counters as of its last
call (the points' time), the counters starting at its first call, exactly what the live exporter
sends for it, so a session seen live and then backfilled keeps one series. Running it twice sends
the same points again: no cumulative value changes. The advice events (every alert the replay fired)
go out once: their keys join the live exporter's progress file, so neither a second run nor the live
exporter sends them again. URL left out: the configured endpoint (`[otlp]`, then the OTEL_*
variables, then Claude Code's settings), as for the live export, whatever `[otlp] enabled` says:
running it is the opt-in.
"""

from __future__ import annotations

import os
import sys
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import argparse
    from typing import TextIO

    from session_watcher.core.shapes import OtlpConfig

BATCH = 100  # sessions per request


def add_parser(sub: Any) -> None:
    s = sub.add_parser("export", description="Send the sessions' figures to an OpenTelemetry collector (docs/otlp.md).")
    s.add_argument("--otlp", nargs="?", const="", metavar="URL", required=True,
                   help="the collector's OTLP/HTTP endpoint (default: the configured one; docs/otlp.md)")
    s.add_argument("--since", metavar="WHEN",
                   help="only sessions active from then on: YYYY-MM-DD, YYYY-MM-DDTHH:MM (local time), "
                   "or 7d, 12h, 2w, 30m back")
    s.add_argument("--projects", metavar="DIR", nargs="+", action="extend",
                   help="these folders (Claude Code projects, Codex rollouts) instead of every agent's own folders")
    s.add_argument("--dry-run", action="store_true", help="print the metrics request as OTLP/JSON, send nothing")
    s.set_defaults(func=command)


def sessions(roots: list[str] | None, since: float | None) -> list[str]:
    """The main transcripts to export (oldest first), those touched before `since` left out; one per
    session id (the newer file, as `report` and `sessions.find` take it: one id, one series). Without
    `roots`, every agent's logs (the registry's discovery)."""
    from session_watcher.agents import sources as found_in

    found: dict[str, tuple[float, str]] = {}
    for src in found_in(roots)[1]:
        try:
            mtime = os.stat(src.path).st_mtime
        except OSError:
            continue
        have = found.get(src.session)
        if not src.sub and (since is None or mtime >= since) and (have is None or mtime > have[0]):
            found[src.session] = (mtime, src.path)
    return [p for _, p in sorted(found.values())]


def replayed(path: str, since: float | None, taken: dict[str, Any]) -> tuple[dict[str, Any], list[Any], float] | None:
    """(status document, every alert fired, the last call's time) of a finished transcript; None
    for one without a call (or none since `since`). `taken` collects what pricing the restarts taken
    needs, as `backtest` collects it (session id -> transcript, parent, calls)."""
    from session_watcher.core.backtest import calls_from_trace
    from session_watcher.sessions.replay import replay, transcript_cwd

    doc, trace = replay(path)
    if not trace or not isinstance(trace[-1].get("ts"), int | float):
        return None
    last = float(trace[-1]["ts"])
    if since is not None and last < since:
        return None
    taken[str(doc["sessionId"])] = (path, doc.get("parentSession"), calls_from_trace(trace))
    doc["project"] = transcript_cwd(path)  # named (by its folder's name) only when the user opted in
    alerts = [a for row in trace for a in row.get("alerts") or []]
    return doc, alerts, last


def restarts(taken: dict[str, Any], docs: dict[str, tuple[dict[str, Any], float]], target: Any,
             otlp: OtlpConfig) -> tuple[dict[str, Any], int] | None:
    """The realized savings of the restarts taken among these sessions (metric session_watcher.restarts,
    as `backtest` prices them; a parent outside them is looked up), as one metrics request, and its
    data points' count."""
    from session_watcher.otlp import exporter, payload
    from session_watcher.sessions.restarts import restarts_taken

    found = restarts_taken(dict(taken))["restartsTaken"]
    batch = payload.Batch()
    for r in found:
        got = docs.get(str(r.get("child")))
        if got is None or r.get("parentFound") is False:
            continue
        doc, last = got
        project = exporter.project_name(doc.get("project"), bool(otlp.get("project")))
        payload.add_restart(batch, r, payload.session_attributes(doc, target.common, project), last)
    if not batch.points:
        return None
    return (batch.request(target.resource, str(target.resource.get("service.version") or "")),
            sum(len(p) for p in batch.points.values()))


def command(ns: argparse.Namespace) -> int:
    from session_watcher.base import config
    from session_watcher.core.usererrors import UserError
    from session_watcher.otlp import exporter, payload, settings

    since = _checked(ns)
    cfg, _ = config.load_layers(None)
    otlp: OtlpConfig = {**cfg["otlp"], "enabled": True}  # asked for by hand: the URL, config or variables say where
    # nowhere to go: NoTarget, a UserError (one message, exit 1)
    target = settings.resolve(otlp, os.environ, url=ns.otlp or None, version=exporter.version())
    from session_watcher.base import paths

    paths.ensure_private_dir(exporter.folder())
    progress = exporter.load_progress()
    paths_ = sessions(ns.projects, since)
    if not paths_:  # said, not "exported 0 sessions" (nothing sent) or, with --dry-run, nothing at all
        from session_watcher.agents import NO_FOLDER, folders_there, sources

        there = folders_there(sources(ns.projects)[0])
        looked = f"looked in {', '.join(there)}" if there else NO_FOLDER
        # --dry-run's standard output is OTLP/JSON for a pipe: the sentence goes beside it
        _say(f"no session to export{f' active since {ns.since}' if ns.since else ''}; {looked}", there,
             sys.stderr if ns.dry_run else sys.stdout)
        return 0
    sent = points = events = 0
    taken: dict[str, Any] = {}
    by_id: dict[str, tuple[dict[str, Any], float]] = {}
    lives: set[str] = set()  # the cache classes whose lifetime went
    for k in range(0, len(paths_), BATCH):
        docs: list[tuple[dict[str, Any], list[Any], float]] = []
        for path in paths_[k:k + BATCH]:
            got = replayed(path, since, taken)
            if got is not None:
                docs.append(got)
                by_id[str(got[0]["sessionId"])] = (got[0], got[2])
        batch = payload.Batch()
        records: list[dict[str, Any]] = []
        keys: dict[str, list[str]] = {}
        done = progress["sessions"]
        now = time.time()
        for doc, alerts, last in docs:
            project = exporter.project_name(doc.get("project"), bool(otlp.get("project")))
            attrs = payload.session_attributes(doc, target.common, project)
            payload.add_session(batch, doc, attrs, last)
            known = set((done.get(doc["sessionId"]) or {}).get("events") or [])
            for alert in alerts if otlp.get("events", True) else []:
                key = payload.alert_key(alert)
                rec = None if key in known else payload.advice_record(alert, attrs, now)
                if rec is not None:
                    records.append(rec)
                    keys.setdefault(doc["sessionId"], []).append(key)
                    known.add(key)
        # each class once, in the first batch holding a session of it (Claude Code's in the first)
        classes = [c for c in payload.lifetime_classes([d for d, _, _ in docs], cfg.get("cliff")) if c not in lives]
        if classes:
            payload.add_lifetimes(batch, cfg.get("cliff"), target.common, now, classes)
            lives.update(classes)
        version = str(target.resource.get("service.version") or "")
        metrics = batch.request(target.resource, version)
        logs = payload.logs_request(records, target.resource, version)
        points += sum(len(p) for p in batch.points.values())
        if ns.dry_run:
            import json

            sys.stdout.write(json.dumps(metrics, indent=1) + "\n")
            continue
        ok, outcome = exporter.send(target, metrics, logs)
        if not ok:
            raise UserError(f"the collector at {target.urls['metrics']} did not take the figures "
                            f"({_plain(outcome.why)}); {sent} sessions were sent before it"
                            f"{_what_to_do(outcome.status)}")
        exporter.merge_progress({sid: {"sent": 0, "events": ks} for sid, ks in keys.items()}, None)
        sent += len(docs)
        events += len(records)
    saved = restarts(taken, by_id, target, otlp)
    if saved is not None and not ns.dry_run:  # its points are counted in what is said sent
        ok, outcome = exporter.send(target, saved[0], {})
        if not ok:
            raise UserError(f"the collector at {target.urls['metrics']} did not take the restarts' figures "
                            f"({_plain(outcome.why)}){_what_to_do(outcome.status)}")
        points += saved[1]
    if not ns.dry_run:
        _say(f"exported {sent} sessions ({points} data points, {events} advice events) to {target.urls['metrics']}",
             [target.urls["metrics"]], sys.stdout)
    return 0


def _say(line: str, keep: list[str], out: TextIO) -> None:
    """`line` wrapped at its spaces within the terminal's width (the folders and the URL in it each
    whole, to be copied), as every command's text."""
    from session_watcher.base.terminal import columns
    from session_watcher.core.text import wrap

    print("\n".join(wrap(line, columns(), keep=keep)), file=out)


def _checked(ns: argparse.Namespace) -> float | None:
    """`--since` as epoch seconds, after checking it and a `--otlp URL`: either one that cannot be used
    is a command line that cannot work (UsageError: exit 2, as report's --since); a configured URL
    that cannot be one is the config's (settings.resolve: exit 1)."""
    from session_watcher.cli.report import since_epoch
    from session_watcher.core.usererrors import NoTarget, UsageError
    from session_watcher.otlp import settings

    try:
        since = since_epoch(ns.since) if ns.since is not None else None  # "" is refused, as report does
    except ValueError as exc:
        raise UsageError(f"--since {exc}") from None
    if ns.otlp:
        try:
            settings.check_url(ns.otlp, "--otlp")
        except NoTarget as exc:
            raise UsageError(str(exc)) from None
    return since


def _plain(why: str) -> str:
    """The reason in the system's words, without the exception's class and errno the log keeps
    ("ConnectionRefusedError: [Errno 111] Connection refused" -> "Connection refused")."""
    import re

    m = re.fullmatch(r"([A-Za-z_][\w.]*):(?: (?:\[Errno -?\d+\] )?(.*))?", why, re.DOTALL)
    if not m:  # "HTTP 503 Service Unavailable", "no answer within ...": said as they are
        return why
    return m.group(2) or m.group(1)  # an exception with no words (TimeoutError()): its class


def _what_to_do(status: int | None) -> str:
    """What a user does about a collector that did not take a request: none answered (no HTTP
    status), or one refused it."""
    if status is None:
        return ("; no collector answers there: start one (docs/otel-collector.yaml) or name its URL "
                "(`export --otlp URL`); `--dry-run` prints what would be sent")
    return "; its log says why; `--dry-run` prints what was sent"
