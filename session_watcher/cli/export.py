"""`session-watcher export [--otlp [URL]] [--since WHEN] [--projects DIR ...] [--dry-run]`: history.

Finds the sessions as `report` does (every main transcript in every agent's own folders, or in the
folders `--projects` names: Claude Code projects, Codex rollouts), replays each with the hooks' own fold
(`replay`), and sends each session's figures once: its gauges and cumulative counters as of its last
call (the points' time), the counters starting at its first call, exactly what the live exporter
sends for it, so a session seen live and then backfilled keeps one series. Running it twice sends
the same points again: no cumulative value changes. The advice events (every alert the replay fired)
go out once: their keys join the live exporter's progress file, so neither a second run nor the live
exporter sends them again. URL left out: the configured endpoint (`[otlp]`, then the OTEL_*
variables, then Claude Code's settings), as for the live export, whatever `[otlp] enabled` says:
running it is the opt-in. A transcript is replayed only when it, or what its replay found outside it,
changed since the last run (`otlp.backfill` keeps what a replay gave: a run from cron replays what is
new); on a terminal a progress bar on stderr. `--dry-run` reads what was kept but writes nothing:
neither the kept replays nor the state folder.
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
    from session_watcher.cli.messages import LEFT_OUT_HELP

    s = sub.add_parser("export", description="Send the sessions' figures to an OpenTelemetry collector "
                                             "(docs/otlp.md). " + LEFT_OUT_HELP)
    # the one thing `export` does: the bare command sends to the configured collector, as `--otlp` does
    s.add_argument("--otlp", nargs="?", const="", metavar="URL", type=_url_argument,
                   help="the collector's OTLP/HTTP endpoint (left out, or without URL: the configured one; "
                   "docs/otlp.md)")
    s.add_argument("--since", metavar="WHEN", type=_since_argument,
                   help="only sessions active from then on: YYYY-MM-DD, YYYY-MM-DDTHH:MM (local time), "
                   "or 7d, 12h, 2w, 30m back")
    s.add_argument("--projects", metavar="DIR", nargs="+", action="extend",
                   help="these folders (Claude Code projects, Codex rollouts) instead of every agent's own folders")
    s.add_argument("--dry-run", action="store_true",
                   help="print the metrics request as OTLP/JSON; send nothing, write nothing (what earlier runs "
                   "kept is read, nothing is kept for the next)")
    s.set_defaults(func=command)


def sessions(roots: list[str] | None, since: float | None) -> list[str]:
    """The main transcripts to export (oldest first), those touched before `since` left out; one per
    session id (the newer file, as `report` and `sessions.find` take it: one id, one series). Without
    `roots`, every agent's logs (the registry's discovery). One named as a log that is no file it can
    read (a folder so named, a link to nothing: `Agent.sources`) is said on stderr, as `report` says it."""
    from stat import S_ISREG

    from session_watcher.agents import sources as found_in
    from session_watcher.cli.messages import NOT_A_FILE

    found: dict[str, tuple[float, str]] = {}
    for src in found_in(roots)[1]:
        try:
            st = os.stat(src.path)
        except OSError:
            st = None
        if st is None or not S_ISREG(st.st_mode):
            if os.path.lexists(src.path):  # not gone since it was listed: there, and no file to read
                _skipped(src.path, ValueError(NOT_A_FILE))
            continue
        mtime = st.st_mtime
        have = found.get(src.session)
        if not src.sub and (since is None or mtime >= since) and (have is None or mtime > have[0]):
            found[src.session] = (mtime, src.path)
    return [p for _, p in sorted(found.values())]


def restarts(entries: dict[str, tuple[str, dict[str, Any]]], cache: Any, fresh: dict[str, Any], target: Any,
             otlp: OtlpConfig) -> tuple[dict[str, Any], int] | None:
    """The realized savings of the restarts taken among these sessions (session id -> (transcript,
    backfill entry); metric session_watcher.restarts, as `backtest` prices them: `sessions.restarts`'
    rule; a parent outside them is looked up), as one metrics request, and its data points' count.
    `fresh`: the calls of the sessions replayed in this run, by session id."""
    from session_watcher.otlp import exporter, payload

    found: list[dict[str, Any]] = []
    for sid, (path, entry) in entries.items():
        found += entry["idle"]
        parent = entry["doc"].get("parentSession")
        if parent:
            got = _handoff((sid, path, entry), str(parent), entries, cache, fresh)
            if got is not None:
                found.append(got)
    found.sort(key=lambda r: (r["child"], r.get("firstCall") or 0))
    batch = payload.Batch()
    for r in found:
        have = entries.get(str(r.get("child")))
        if have is None or r.get("parentFound") is False:
            continue
        doc = have[1]["doc"]
        project = exporter.project_name(doc.get("project"), bool(otlp.get("project")))
        payload.add_restart(batch, r, payload.session_attributes(doc, target.common, project), have[1]["last"])
    if not batch.points:
        return None
    return (batch.request(target.resource, str(target.resource.get("service.version") or "")),
            sum(len(p) for p in batch.points.values()))


def _handoff(child: tuple[str, str, dict[str, Any]], parent: str, entries: dict[str, tuple[str, dict[str, Any]]],
             cache: Any, fresh: dict[str, Any]) -> dict[str, Any] | None:
    """The handoff restart into `child` (session id, transcript, backfill entry) from `parent`
    (core.restarts' document; `parentFound` False: the parent's transcript is nowhere), kept in the
    child's entry while neither transcript, nor config, nor what the parent's replay asked outside
    its transcript (`otlp.backfill.same_answers`: a parent exported in this run had its own entry
    checked so) changed."""
    from session_watcher.base import config
    from session_watcher.core import restarts as core
    from session_watcher.core.handoff import priced
    from session_watcher.core.usererrors import UserError
    from session_watcher.otlp.backfill import same_answers, signature
    from session_watcher.sessions.naming import transcript_of
    from session_watcher.sessions.replay import project_of, transcript_cwd
    from session_watcher.sessions.restarts import note_of

    sid, path, entry = child
    ppath: str | None = entries[parent][0] if parent in entries else None
    if ppath is None:
        try:
            ppath = transcript_of(parent).transcript
        except (UserError, OSError):
            ppath = None
    psig = None
    if ppath is not None:
        try:
            pconfig: str | None = cache.config(project_of(transcript_cwd(ppath)))[1]
        except (UserError, OSError):  # unreadable, or its config is: no replay of it (`_calls`), no price
            pconfig = None
        psig = [signature(ppath), pconfig]
    kept = entry.get("handoff")
    if (sid not in fresh and parent not in fresh and isinstance(kept, dict) and kept.get("parent") == parent
            and kept.get("sig") == psig
            and (ppath is None or parent in entries
                 or (kept.get("asked") is not None and same_answers([(ppath, kept["asked"])])))):
        return kept.get("doc")
    doc: dict[str, Any] | None = {"kind": "handoff", "parent": parent, "child": sid, "parentFound": False}
    pcalls = _calls(parent, ppath, cache, fresh) if ppath is not None else None
    if pcalls is not None:
        note = note_of(path)
        doc = core.handoff(parent, pcalls, sid, _calls(sid, path, cache, fresh) or [],
                           priced(note) if note else (None, None), config.load_cliff())
    pasked = cache.asked.get(ppath) if ppath is not None else None
    if pasked is None and parent in entries:
        pasked = {k: entries[parent][1][k] for k in ("cwd", "raws", "shell", "world")}
    entry["handoff"] = {"parent": parent, "sig": psig, "doc": doc, "asked": pasked}
    cache.changed = True
    return doc


def _calls(sid: str, path: str, cache: Any, fresh: dict[str, Any]) -> list[Any] | None:
    """A session's calls as core.restarts reads them: this run's replay's, else a replay now (None:
    it cannot be replayed)."""
    if sid in fresh:
        return fresh[sid]  # type: ignore[no-any-return]
    from session_watcher.core.usererrors import UserError
    from session_watcher.otlp.backfill import replayed_calls

    try:
        fresh[sid] = replayed_calls(cache, path)
    except (UserError, OSError):
        return None
    return fresh[sid]  # type: ignore[no-any-return]


def command(ns: argparse.Namespace) -> int:
    from session_watcher.base import config
    from session_watcher.core.usererrors import UserError
    from session_watcher.otlp import exporter, settings

    since = _checked(ns)
    from session_watcher.cli.report import check_projects

    check_projects(ns.projects)  # as report checks them (a file there found no session, silently)
    cfg, _ = config.load_layers(None)
    otlp: OtlpConfig = {**cfg["otlp"], "enabled": True}  # asked for by hand: the URL, config or variables say where
    # nowhere to go: NoTarget, a UserError (one message, exit 1)
    target = settings.resolve(otlp, os.environ, url=ns.otlp or None, version=exporter.version())
    if not ns.dry_run:  # a dry run leaves the disk as it found it
        from session_watcher.base import paths

        paths.ensure_private_dir(exporter.folder())
    progress = exporter.load_progress()
    paths_ = sessions(ns.projects, since)
    if not paths_:
        return _none(ns)
    from session_watcher.otlp.backfill import Cache, replayed
    from session_watcher.reports.collect import Progress

    sent = points = events = 0
    cliff = config.load_cliff()  # what the restarts are priced with (sessions.restarts')
    cache = Cache(cliff)
    cache.check(paths_)  # every kept entry at once: git asked once per project
    fresh: dict[str, Any] = {}  # session id -> its calls, for the sessions replayed in this run
    entries: dict[str, tuple[str, dict[str, Any]]] = {}  # session id -> (transcript, backfill entry)
    lives: set[str] = set()  # the cache classes whose lifetime went
    bar = Progress(label="replaying sessions")  # stderr, on a terminal, once it takes a moment
    try:
        for k in range(0, len(paths_), BATCH):
            docs: list[tuple[dict[str, Any], list[Any], float]] = []
            for n, path in enumerate(paths_[k:k + BATCH], k + 1):
                try:
                    entry, calls = replayed(cache, path, cliff)
                except (OSError, UserError) as exc:  # unreadable, gone: the others go all the same
                    bar(n, len(paths_))
                    _skipped(path, exc)
                    continue
                bar(n, len(paths_))
                if entry["doc"] is None or (since is not None and entry["last"] < since):
                    continue
                sid = str(entry["doc"]["sessionId"])
                if calls is not None:
                    fresh[sid] = calls
                entries[sid] = (path, entry)
                docs.append((entry["doc"], entry["alerts"], entry["last"]))
            if docs:
                sent_now, points_now, events_now = _send_batch(ns, (cfg, otlp, target), progress, docs, lives, sent)
                sent, points, events = sent + sent_now, points + points_now, events + events_now
        saved = restarts(entries, cache, fresh, target, otlp)
    finally:
        bar(len(paths_), len(paths_))
        if not ns.dry_run:
            cache.save()  # what was replayed is kept, even when the collector refused a batch
    if cache.unanswered:
        _unanswered(sorted(cache.unanswered), cache.unknown)
    if not entries:  # every file touched since --since, none with a call since (or none with a call)
        return _none(ns)
    if saved is not None and not ns.dry_run:  # its points are counted in what is said sent
        ok, outcome = exporter.send(target, saved[0], {})
        if not ok:
            raise UserError(f"the collector at {target.urls['metrics']}{_named(target)} did not take the "
                            f"restarts' figures ({_plain(outcome.why)}){_what_to_do(outcome.status, target)}")
        points += saved[1]
    if not ns.dry_run:
        _say(f"exported {sent} sessions ({points} data points, {events} advice events) to {target.urls['metrics']}",
             [target.urls["metrics"]], sys.stdout)
    return 0


def _send_batch(ns: argparse.Namespace, where: tuple[Any, OtlpConfig, Any], progress: dict[str, Any],
                docs: list[tuple[dict[str, Any], list[Any], float]], lives: set[str], sent: int,
                ) -> tuple[int, int, int]:
    """One request of sessions' figures (printed as OTLP/JSON with --dry-run), their advice events
    not sent yet, and the lifetime of each cache class not sent yet in this run; (sessions sent,
    data points, events). `where`: (the config, its [otlp] table, the target); `sent`: the sessions
    sent before it."""
    from session_watcher.core.usererrors import UserError
    from session_watcher.otlp import exporter, payload

    cfg, otlp, target = where
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
        for alert in payload.own_alerts(doc, alerts) if otlp.get("events", True) else []:
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
    points = sum(len(p) for p in batch.points.values())
    if ns.dry_run:
        from session_watcher.cli.messages import json_text

        sys.stdout.write(json_text(metrics, indent=1) + "\n")
        return 0, points, 0
    ok, outcome = exporter.send(target, metrics, logs)
    if not ok:
        raise UserError(f"the collector at {target.urls['metrics']}{_named(target)} did not take the figures "
                        f"({_plain(outcome.why)}); {sent} sessions were sent before it"
                        f"{_what_to_do(outcome.status, target)}")
    exporter.merge_progress({sid: {"sent": 0, "events": ks} for sid, ks in keys.items()}, None)
    return len(docs), points, len(records)


def _none(ns: argparse.Namespace) -> int:
    """No session to send: said, not "exported 0 sessions" (nothing sent) or, with --dry-run, nothing
    at all (or a request of the cache lifetimes alone, where files changed since --since held no call
    since); with --dry-run on stderr, its standard output being OTLP/JSON for a pipe."""
    from session_watcher.agents import NO_FOLDER, folders_there, sources

    there = folders_there(sources(ns.projects)[0])
    looked = f"looked in {', '.join(there)}" if there else NO_FOLDER
    _say(f"no session to export{f' active since {ns.since}' if ns.since else ''}; {looked}", there,
         sys.stderr if ns.dry_run else sys.stdout)
    return 0


def _skipped(path: str, exc: OSError | Exception) -> None:
    """A transcript the export passes over, said on stderr as `backtest` says one (one unreadable file
    ended the whole export, with nothing sent)."""
    from session_watcher.cli.messages import say

    why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    say(f"skipped {path}: {why.removeprefix(f'{path}: ')}", keep=[path], prog="session-watcher export")


def _unanswered(folders: list[str], replays: int) -> None:
    """Where git did not say in time which files it ignores (`git check-ignore`, 2 s): the sessions
    there were replayed as if it ignores none, and none of them is kept (`otlp.backfill.UNANSWERED`):
    the next run asks again. Said on stderr, once."""
    from session_watcher.cli.messages import say

    shown = ", ".join(folders[:3]) + (f" and {len(folders) - 3:,} more" if len(folders) > 3 else "")
    say(f"git did not say in time which files it ignores in {shown}: {replays:,} "
        f"session{'' if replays == 1 else 's'} there replayed as if it ignores none, not kept: the next run "
        "replays them again", keep=folders[:3], prog="session-watcher export")


def _say(line: str, keep: list[str], out: TextIO) -> None:
    """`line` wrapped at its spaces within the terminal's width (the folders and the URL in it each
    whole, to be copied), as every command's text."""
    from session_watcher.base.terminal import columns
    from session_watcher.core.text import wrap

    print("\n".join(wrap(line, columns(), keep=keep)), file=out)


def _url_argument(text: str) -> str:
    """`--otlp URL` for argparse: a URL the exporter cannot use is a command line that cannot work,
    refused with the usage line as every other bad value is (exit 2); a configured URL that cannot be
    one is the config's (settings.resolve: exit 1). No URL (the empty `const`): the configured one."""
    import argparse

    from session_watcher.core.usererrors import NoTarget
    from session_watcher.otlp import settings

    if not text:  # no URL: the configured one (argparse passes the const through here too)
        return text
    try:
        settings.check_url(text, "--otlp")
    except NoTarget as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--otlp: ")) from None
    return text


def _since_argument(text: str) -> str:
    """`--since` for argparse, checked as report's is (`report.parse_since`: "" refused too) and kept
    as written (the "no session to export active since ..." line says it so)."""
    from session_watcher.cli.report import parse_since

    parse_since(text)
    return text


def _checked(ns: argparse.Namespace) -> float | None:
    """`--since` as epoch seconds (argparse checked it: `_since_argument`)."""
    from session_watcher.cli.report import since_epoch

    return since_epoch(ns.since) if ns.since is not None else None


def _plain(why: str) -> str:
    """The reason in the system's words, without the exception's class and errno the log keeps
    ("ConnectionRefusedError: [Errno 111] Connection refused" -> "Connection refused")."""
    import re

    m = re.fullmatch(r"([A-Za-z_][\w.]*):(?: (?:\[Errno -?\d+\] )?(.*))?", why, re.DOTALL)
    if not m:  # "HTTP 503 Service Unavailable", "no answer within ...": said as they are
        return why
    return m.group(2) or m.group(1)  # an exception with no words (TimeoutError()): its class


def _named(target: Any) -> str:
    """Where the collector's URL came from, said after it unless the command line gave it: the setting
    that named it (Codex's [otel] exporter, `[otlp] endpoint`, an OTEL_* variable), or the default."""
    if target.source == "argument":
        return ""
    if target.source == "default":
        return " (the default: no setting names a collector)"
    return f" (from {target.named})" if target.named else ""


def _what_to_do(status: int | None, target: Any) -> str:
    """What a user does about a collector that did not take a request: none answered (no HTTP
    status), or one refused it."""
    if status is None and target.source == "argument":
        return ("; no collector answers there: start one (docs/otel-collector.yaml) or check the URL; "
                "`--dry-run` prints what would be sent")
    if status is None:
        from session_watcher.base.route import cli_command

        command = cli_command()
        # the default tried (nothing names a collector, as a bare `export` run to see what it does
        # finds): the setting that names one for every run, the live exporter's too, as well
        keep = f", or for every run `{command} config set otlp.endpoint URL`" if target.source == "default" else ""
        return ("; no collector answers there: start one (docs/otel-collector.yaml) or name its URL "
                f"(`{command} export --otlp URL`{keep}); `--dry-run` prints what would be sent")
    return "; its log says why; `--dry-run` prints what was sent"
