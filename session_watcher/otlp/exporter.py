"""The detached exporter: live sessions' figures to the collector, every interval, off the hot path.

A hook whose session has export on starts it (`trigger`) when its heartbeat is older than two
intervals; SessionEnd starts a one-off flush of its session (`--session ID`). One exporter at a
time loops (`exporter.lock`): each pass it reads the saved states of the sessions that changed in
the last LIVE_WINDOW (and of the ones changed since their last successful export, within
RETRY_WINDOW), makes their figures (`payload`) from their status documents, sends one metrics
request and, for advice not sent yet, one logs request, then sleeps an interval. It leaves when no
session is live.

Bounded and quiet: nothing is queued, since every figure is recomputed from the states on the next
pass; the progress file keeps, per session, the state's mtime last sent and the advice events sent
(at most MAX_EVENTS; a state keeps its last 20 alerts), for at most MAX_TRACKED sessions. When the collector is down
the exporter backs off (doubling from one interval to BACKOFF_MAX, or the collector's Retry-After),
says so once in the log, keeps its heartbeat fresh so hooks do not start another, and the sessions
changed meanwhile go out when it answers again. It never prints: its stdio is /dev/null.
"""

from __future__ import annotations

import os
import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from session_watcher.core.shapes import Cliff, Config, OtlpConfig
    from session_watcher.otlp.settings import Target

LIVE_WINDOW = 900.0  # seconds since a session's state last changed: still live, its gauges kept fresh
RETRY_WINDOW = 86400.0  # a session changed since its last successful export is sent within this long
BACKOFF_MAX = 600.0
MAX_SESSIONS = 200  # per request: a backlog goes out over several passes
MAX_TRACKED = 1000  # sessions the progress file remembers
MAX_EVENTS = 256  # advice events remembered as sent, per session (a state keeps its last 20 alerts)
MAX_LIFE = 12 * 3600.0  # a loop leaves after this long in any case (the next hook starts a fresh one)
NO_TARGET_PAUSE = 3600.0  # export on but nowhere to go: hooks leave it alone this long


def folder() -> str:
    from session_watcher.base import paths

    return paths.otlp_dir()


def heartbeat_file() -> str:
    return os.path.join(folder(), "heartbeat")


def progress_file() -> str:
    return os.path.join(folder(), "progress.json")


def version() -> str:
    try:
        from importlib.metadata import version

        return version("session-watcher")
    except Exception:  # not installed as a distribution (a checkout on sys.path)
        return "0"


def beat(at: float | None = None) -> None:
    """Mark the exporter alive (mtime = `at`, default now): a hook starts none while it is fresh."""
    path = heartbeat_file()
    try:
        from session_watcher.base.paths import open_file

        os.close(open_file(path, os.O_WRONLY | os.O_CREAT, 0o600, follow=False))  # a regular file only
        os.utime(path, None if at is None else (at, at))
    except OSError:
        pass


# ----------------------------------------------------------------------------- progress


def load_progress() -> dict[str, Any]:
    from session_watcher.base.paths import read_file
    from session_watcher.core import fastjson

    try:  # a regular file of 4 MiB at most (paths.read_file: a FIFO there never blocks)
        doc = fastjson.loads(read_file(progress_file(), 4 << 20, follow=False))
    except (OSError, ValueError):
        doc = None
    if not isinstance(doc, dict) or not isinstance(doc.get("sessions"), dict):
        return {"sessions": {}, "downUntil": 0.0, "failures": 0}
    return doc


def merge_progress(done: Mapping[str, Any], down: tuple[float, int] | None) -> None:
    """Fold this pass's results into the progress file under its lock (another exporter, a
    session-end flush, may have written meanwhile): sent marks only move forward, events only add.
    Nothing is written when they change nothing (a run with nothing new leaves the file, or its
    absence, as it is)."""
    from session_watcher.base import paths
    from session_watcher.base.atomic import write_atomic
    from session_watcher.core import fastjson
    from session_watcher.core.errors import LockTimeout
    from session_watcher.state.lock import SessionLock

    try:
        paths.ensure_private_dir(folder())
        with SessionLock(progress_file() + ".lock", 2.0):
            doc = load_progress()
            was = fastjson.dumps(doc)
            sessions: dict[str, Any] = doc["sessions"]
            for sid, got in done.items():
                entry = sessions.setdefault(sid, {"sent": 0, "events": []})
                entry["sent"] = max(entry.get("sent") or 0, got.get("sent") or 0)
                events = [e for e in entry.get("events") or [] if isinstance(e, str)]
                entry["events"] = (events + [e for e in got.get("events", []) if e not in events])[-MAX_EVENTS:]
            if len(sessions) > MAX_TRACKED:  # the least recently sent go first
                for sid in sorted(sessions, key=lambda s: sessions[s].get("sent") or 0)[:len(sessions) - MAX_TRACKED]:
                    del sessions[sid]
            if down is None:
                doc["downUntil"], doc["failures"] = 0.0, 0
            else:
                doc["downUntil"], doc["failures"] = down
            if fastjson.dumps(doc) == was:
                return
            write_atomic(progress_file(), fastjson.dumps(doc).encode("ascii"), fsync=False,
                         tmp=progress_file() + ".tmp")
    except (LockTimeout, OSError):
        pass  # the next pass sends again what this one could not record: the same figures


# ----------------------------------------------------------------------------- one pass


def _chosen(progress: Mapping[str, Any], now: float, only: str | None) -> list[tuple[float, str]]:
    """The sessions this pass sends: `only`, or the live ones and those changed since last sent."""
    from session_watcher.state import store

    found = store.list_sessions()
    if only is not None:
        return [(m, s) for m, s in found if s == only]
    sent = progress["sessions"]
    out = []
    for mtime, sid in found:
        last = (sent.get(sid) or {}).get("sent") or 0
        if mtime >= now - LIVE_WINDOW or (mtime > last and mtime >= now - RETRY_WINDOW):
            out.append((mtime, sid))
    return out[:MAX_SESSIONS]


def session_doc(session_id: str, named: bool = False) -> tuple[dict[str, Any], list[Any], Config] | None:
    """(status document, alerts, config) of a session as last saved, read without its lock;
    None when it cannot be read (the next pass tries again). `named` (the user sends the project's
    name): its `project` is the folder the session is named by (`session_folder`)."""
    from session_watcher.base import config
    from session_watcher.core.errors import Rejected
    from session_watcher.core.status import cold_now, status_document
    from session_watcher.state import shell

    try:
        state = shell.saved(session_id)
    except (Rejected, OSError):
        return None
    if state is None:
        return None
    cfg, _ = config.load_cached(state["config"].copy(), state["context"].get("project"))
    try:
        now = time.time()  # the restart saving as `status` and the status line give it now
        doc = status_document(state, cfg, with_buckets=False, cold=cold_now(state, cfg, now), now=now)
    except (KeyError, TypeError, ValueError):
        return None
    doc["project"] = session_folder(state) if named else None
    return doc, list(state["alerts"]), cfg


# transcript path -> (device, inode, size when read, decided, its first cwd): `head_cwd`'s answers,
# a decided one kept while the file is the same one and no shorter, the other (the file's lines
# ended before all those the answer looks at) until its size changes; at most MAX_TRACKED, for the
# loop's life. A transcript naming no folder in its head was read again every pass, up to
# CWD_SCAN_LINES lines and CWD_SCAN_BYTES, to find none again
_HEADS: dict[str, tuple[int, int, int, bool, str | None]] = {}


def transcript_folder(path: str) -> str | None:
    """`replay.transcript_cwd(path)`, read again only where its answer could have changed: the file
    replaced (another inode) or cut shorter, or, where its head did not hold all the lines that answer
    looks at (a transcript still short, its last line not yet whole), grown since; else remembered."""
    from session_watcher.sessions.replay import head_cwd

    try:
        st = os.stat(path)
    except OSError:
        _HEADS.pop(path, None)
        raise
    kept = _HEADS.get(path)
    if kept is not None and kept[:2] == (st.st_dev, st.st_ino) and (
            st.st_size == kept[2] or (kept[3] and st.st_size > kept[2])):
        return kept[4]
    got, decided = head_cwd(path)
    if len(_HEADS) >= MAX_TRACKED:
        _HEADS.clear()
    _HEADS[path] = (st.st_dev, st.st_ino, st.st_size, decided, got)
    return got


def session_folder(state: Mapping[str, Any]) -> str | None:
    """The folder a session's project is named by, by `report`'s rule and `export --otlp`'s: its
    transcript's first cwd (`replay.transcript_cwd`, remembered between passes: `transcript_folder`),
    as written (no link resolved); where that cannot be read, the cwd its hooks were first told, else
    the project they placed it in. Not the project the hooks place it in first (Claude Code's
    CLAUDE_PROJECT_DIR, links resolved): the same session would carry two names, one live and one
    backfilled."""
    ctx, cursor = state["context"], state["cursor"]
    path = cursor.get("path") if isinstance(cursor, dict) else None
    if isinstance(path, str) and path:
        try:
            got = transcript_folder(path)
        except (OSError, ValueError):
            got = None
        if got:
            return got
    told = ctx.get("cwd") or ctx.get("project")
    return told if isinstance(told, str) else None


def project_name(project: object, opted_in: bool) -> str | None:
    """The project's name as `report` names it (`core.text.project_label`: its folder's, a git
    worktree's with its repository's, `repo/1`), sent only when the user opted in: never its path."""
    from session_watcher.core.text import project_label

    if not opted_in or not isinstance(project, str) or not project:
        return None
    return project_label(project)


def build(target: Target, otlp: OtlpConfig, docs: list[tuple[dict[str, Any], list[Any]]],
          sent_events: Mapping[str, Any], cliff: Cliff | None, now: float,
          ) -> tuple[dict[str, Any], dict[str, Any], dict[str, list[str]]]:
    """(metrics request, logs request, per session the event keys in it) for these sessions."""
    from session_watcher.otlp import payload

    batch = payload.Batch()
    records: list[dict[str, Any]] = []
    keys: dict[str, list[str]] = {}
    for doc, alerts in docs:
        project = project_name(doc.get("project"), bool(otlp.get("project")))
        attrs = payload.session_attributes(doc, target.common, project)
        payload.add_session(batch, doc, attrs, now)
        if not otlp.get("events", True):
            continue
        done = set((sent_events.get(doc["sessionId"]) or {}).get("events") or [])
        for alert in payload.own_alerts(doc, alerts):
            key = payload.alert_key(alert)
            rec = None if key in done else payload.advice_record(alert, attrs, now)
            if rec is not None:
                records.append(rec)
                keys.setdefault(doc["sessionId"], []).append(key)
    payload.add_lifetimes(batch, cliff, target.common, now, payload.lifetime_classes([d for d, _ in docs], cliff))
    version = str(target.resource.get("service.version") or "")
    return batch.request(target.resource, version), payload.logs_request(records, target.resource, version), keys


def send(target: Target, metrics: Mapping[str, Any], logs: Mapping[str, Any]) -> tuple[bool, Any]:
    """POST the metrics, then the logs; (all sent, the failing outcome or None)."""
    from session_watcher.otlp import wire

    for signal, doc in (("metrics", metrics), ("logs", logs)):
        if not doc.get(f"resource{signal.title()}"):
            continue
        body, ctype = wire.encode(doc, target.protocol, signal)
        got = wire.post(target.urls[signal], body, ctype, target.headers, target.timeout)
        if not got.ok:
            return False, got
    return True, None


def one_pass(otlp: OtlpConfig, cfg: Config, target: Target, now: float,
             only: str | None = None) -> int:
    """Export what is due; returns the number of sessions still live (0: the loop may leave)."""
    from session_watcher.base.logs import log_once

    progress = load_progress()
    chosen = _chosen(progress, now, only)
    live = sum(1 for mtime, _ in chosen if mtime >= now - LIVE_WINDOW)
    if float(progress.get("downUntil") or 0) > now:
        return live or 1  # backing off: stay (beating) until the collector is tried again
    docs, marks = [], {}
    for mtime, sid in chosen:
        got = session_doc(sid, bool(otlp.get("project")))
        if got is not None:
            docs.append((got[0], got[1]))
            marks[sid] = mtime
    if not docs:
        return live
    metrics, logs, keys = build(target, otlp, docs, progress["sessions"], cfg.get("cliff"), now)
    ok, outcome = send(target, metrics, logs)
    if ok:
        merge_progress({sid: {"sent": m, "events": keys.get(sid, [])} for sid, m in marks.items()}, None)
        if int(progress.get("failures") or 0):
            log_once("otlp", f"OpenTelemetry export to {target.urls['metrics']} works again")
        return live
    failures = int(progress.get("failures") or 0) + 1
    interval = float(otlp.get("interval") or 60)
    wait = outcome.wait if outcome.wait is not None else min(BACKOFF_MAX, interval * 2 ** (failures - 1))
    if not outcome.retry:
        wait = max(wait, BACKOFF_MAX)
    log_once("otlp", f"OpenTelemetry export to {target.urls['metrics']} failed ({outcome.why}); "
                     f"{'trying again later, backing off up to' if outcome.retry else 'not retrying for'} "
                     f"{max(wait, BACKOFF_MAX):.0f} s (said once until it works again)")
    merge_progress({}, (now + wait, failures))
    return live or 1


# ----------------------------------------------------------------------------- the process


def settings_now(env: Mapping[str, str]) -> tuple[Config, OtlpConfig] | None:
    """(the user's config, its [otlp] table) when export is on, else None."""
    from session_watcher.base import config

    cfg, _errors = config.load_layers(None)  # [otlp] is the user's own: no project file sets it
    otlp = cfg["otlp"]
    from session_watcher.otlp.trigger import on

    return (cfg, otlp) if on(otlp, env) else None


def ready(env: Mapping[str, str]) -> tuple[OtlpConfig, Config, Target] | None:
    """(the [otlp] table, the config, the target) when export is on and can go somewhere; None
    otherwise (export off; or nowhere to go: said once, and the heartbeat set NO_TARGET_PAUSE ahead so
    hooks leave it alone that long)."""
    from session_watcher.base.logs import log_once
    from session_watcher.core.usererrors import NoTarget
    from session_watcher.otlp.settings import resolve

    got = settings_now(env)
    if got is None:
        return None
    cfg, otlp = got
    try:
        return otlp, cfg, resolve(otlp, env, version=version())
    except NoTarget as exc:
        log_once("otlp", f"OpenTelemetry export is on but cannot start: {exc}")
        beat(time.time() + NO_TARGET_PAUSE)
        return None


def run(only: str | None, env: Mapping[str, str] = os.environ) -> int:
    """One session's flush (`only`), or the loop: either takes the one lock first (a second exporter,
    or a flush while the loop runs, leaves at once, having read nothing: the loop sends that
    session on its next pass), then a pass per interval while a session is live, the settings read
    again each time (the user may change them or turn export off)."""
    from session_watcher.base import paths
    from session_watcher.core.errors import LockTimeout
    from session_watcher.state.lock import SessionLock

    paths.ensure_private_dir(folder())
    lock_path = os.path.join(folder(), "exporter.lock")
    try:
        lock = SessionLock(lock_path, 0)
        lock.__enter__()
    except LockTimeout:
        return 0  # at most one exporter per user: another one runs
    mine = _mark(lock_path)
    try:
        if only is not None:
            got = ready(env)
            if got is not None:
                one_pass(got[0], got[1], got[2], time.time(), only)
            return 0
        _loop(env, lock_path, mine)
    finally:
        lock.__exit__(None, None, None)
    return 0


def _loop(env: Mapping[str, str], lock_path: str, mine: tuple[int, int] | None) -> None:
    """The passes, while a session is live. Leaving normally clears the heartbeat (the next hook
    starts one at once); a pause (nowhere to go) set it ahead; a crash leaves it fresh, so hooks do
    not start another before two intervals (never a respawn per hook)."""
    started = time.monotonic()
    how = "crashed"
    try:
        while time.monotonic() - started < MAX_LIFE and _still(lock_path, mine):
            got = ready(env)
            if got is None:
                how = "paused"  # ready() set the heartbeat ahead
                return
            beat()
            if one_pass(got[0], got[1], got[2], time.time()) == 0:
                break
            time.sleep(float(got[0].get("interval") or 60))
        how = "left"
    finally:
        if how == "left":
            beat(0.0)
        elif how == "crashed":
            beat()


def _mark(lock_path: str) -> tuple[int, int] | None:
    """Write our pid into the lock file (`doctor` and the tests read who loops); its identity."""
    from session_watcher.base.paths import open_file

    try:
        fd = open_file(lock_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600, follow=False)
        try:
            os.write(fd, f"{os.getpid()}\n".encode("ascii"))
        finally:
            os.close(fd)
        st = os.stat(lock_path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _still(lock_path: str, mine: tuple[int, int] | None) -> bool:
    """Our folder is still there and still ours (a home deleted or replaced: leave)."""
    try:
        st = os.stat(lock_path)
    except OSError:
        return False
    return mine is None or (st.st_dev, st.st_ino) == mine


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    only = args[1] if len(args) >= 2 and args[0] == "--session" else None
    try:
        return run(only)
    except BaseException as exc:  # detached: nobody to tell but the log
        from session_watcher.base.logs import log_exception

        log_exception("otlp exporter", exc)
        return 0


def _off_line(env: Mapping[str, str]) -> str:
    """`doctor`'s line with export off: turned off in the config (never on by itself then), or "auto"
    without Claude Code's telemetry, and then where Codex's `[otel]` exporter would have it go."""
    from session_watcher.base import config
    from session_watcher.base.route import cli_command
    from session_watcher.core.usererrors import NoTarget
    from session_watcher.otlp.settings import resolve

    command = cli_command(env)
    otlp = config.load_layers(None)[0]["otlp"]
    if otlp.get("enabled") is False:
        return (f"otlp       off (otlp.enabled = false in your config; `{command} config unset otlp.enabled` "
                "turns it on where Claude Code's own telemetry is on; docs/otlp.md)")
    try:  # where it would go once on: said where Codex's [otel] exporter names it (a Codex user's, set for Codex)
        target = resolve({**otlp, "enabled": True}, env, version=version())
    except NoTarget:
        target = None
    where = f", to Codex's [otel] collector at {target.urls['metrics']}" if target and \
        target.source == "codex config" else ""
    return ("otlp       off (on by itself where Claude Code's own telemetry is on; to send always"
            f"{where}: `{command} config set otlp.enabled true`; docs/otlp.md)")


def doctor_line(env: Mapping[str, str] = os.environ, now: float | None = None) -> str:
    """`doctor`'s line: whether export is on, where it goes and from which setting, how it went (at
    `now`, the clock's by default)."""
    from session_watcher.core.usererrors import NoTarget
    from session_watcher.otlp.settings import resolve

    got = settings_now(env)
    if got is None:
        return _off_line(env)
    try:
        target = resolve(got[1], env, version=version())
    except NoTarget as exc:
        return f"otlp       on but nowhere to go: {exc}"
    progress = load_progress()
    now = time.time() if now is None else now
    state = "backing off after a failure" if float(progress.get("downUntil") or 0) > now else "ok"
    sent = len(progress["sessions"])
    return (f"otlp       on: {target.urls['metrics']} ({target.protocol}, from {target.source}); "
            f"{sent} session{'' if sent == 1 else 's'} sent; {state}")
