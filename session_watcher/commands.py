"""The CLI's commands (everything but `hook` and `statusline`)."""

from __future__ import annotations

import errno
import json
import os
import sys
import time
from typing import TYPE_CHECKING, Any

from session_watcher.core.text import clean
from session_watcher.errors import NoSession, UserError

if TYPE_CHECKING:
    import argparse

    from session_watcher.core.shapes import State


def _emit(doc: Any) -> None:
    sys.stdout.write(json.dumps(doc, indent=2) + "\n")


def load_session(session_id: str | None) -> tuple[State, dict[str, Any]]:
    """A session's state brought up to date with its transcript, and the effective config."""
    from session_watcher import config
    from session_watcher.core import engine
    from session_watcher.paths import NotOurs
    from session_watcher.state import session, store
    from session_watcher.state.lock import LockTimeout, SessionLock
    from session_watcher.state.pathstore import PathShards, ShardRejected

    store.check_folder()  # a link or another user's folder: refused, and said so
    if session_id is None:
        found = store.list_sessions()
        if not found:
            raise NoSession("no session recorded yet: the hooks write one on the first tool call "
                            "(see `session-watcher doctor`)")
        session_id = found[0][1]
    if not store.valid_session_id(session_id):
        raise UserError(f"not a session id: {session_id!r}")
    path = store.session_file(session_id)
    if not os.path.exists(path):
        raise NoSession(f"no state for session {session_id} (in {os.path.dirname(path)})")
    lock = SessionLock(path + ".lock", 2.0)
    try:
        lock.__enter__()
    except LockTimeout:
        return _saved(path, session_id)
    except OSError as exc:
        if isinstance(exc, NotOurs) or exc.errno not in (errno.EROFS, errno.EACCES, errno.EPERM):
            raise
        # a read-only disk (or folder): the saved state can still be shown, as it was last saved
        print(f"session-watcher: {clean(exc.strerror or str(exc))}: showing the state as last saved",
              file=sys.stderr)
        return _saved(path, session_id)
    try:
        try:
            state = store.load(path, session_id) or engine.new_state(session_id)
        except store.StateRejected as exc:
            print(f"session-watcher: the state file was unusable and moved to {clean(str(exc))}; rebuilding",
                  file=sys.stderr)
            state = engine.new_state(session_id)
        cfg, err = config.load_cached(state["config"], state["context"].get("project"))
        if err:
            print(f"session-watcher: {clean(err)}; using defaults", file=sys.stderr)
        cursor = state.get("cursor") or {}
        transcript = cursor.get("path")
        subs = list(state["subCursors"])
        for attempt in range(2):
            shards = PathShards(path)
            try:
                shards.ensure_all(state)
                if transcript:
                    try:
                        state, _a, _d = session.sync(state, transcript, cfg, time.monotonic() + 30, subs,
                                                     shards=shards)
                    except OSError:
                        pass
                break
            except ShardRejected as exc:
                if attempt:
                    raise
                print(f"session-watcher: {clean(str(exc))}; rebuilding the session from its transcript",
                      file=sys.stderr)
                state = session.rebuild(state)
        try:
            store.save(path, state, shards)
        except OSError as exc:
            if isinstance(exc, NotOurs):
                raise
            print(f"session-watcher: cannot save the session state ({clean(exc.strerror or str(exc))}); "
                  "showing it unsaved", file=sys.stderr)
    finally:
        lock.__exit__(None, None, None)
    return state, cfg


def _saved(path: str, session_id: str) -> tuple[State, dict[str, Any]]:
    """The state as last saved, read without the lock and without writing anything."""
    from session_watcher import config
    from session_watcher.core import engine
    from session_watcher.state import store
    from session_watcher.state.pathstore import ShardRejected

    try:
        state = store.load_full(path, session_id, readonly=True) or engine.new_state(session_id)
    except (store.StateRejected, ShardRejected) as exc:
        print(f"session-watcher: {clean(str(exc))}", file=sys.stderr)
        state = engine.new_state(session_id)
    cfg, _ = config.load_cached(state["config"], state["context"].get("project"))
    return state, cfg


def status(ns: argparse.Namespace) -> int:
    from session_watcher.core.guard import cold_cache
    from session_watcher.core.render import status_text
    from session_watcher.core.status import status_document

    state, cfg = load_session(ns.session)
    doc = status_document(state, cfg)
    doc["coldCache"] = cold_cache(state, cfg, time.time())  # the guard's view now, and its source
    if ns.json:
        _emit(doc)
    else:
        print(clean(status_text(doc)))
    return 0


def _check_transcript(path: str) -> str:
    if not os.path.isfile(path):
        raise UserError(f"{path}: no such transcript file")
    return path


def replay(ns: argparse.Namespace) -> int:
    from session_watcher.core.render import status_text
    from session_watcher.replay import replay as run_replay

    doc, trace = run_replay(_check_transcript(ns.transcript), ns.cwd, with_trace=bool(ns.trace))
    if ns.trace:  # like every output file: a unique exclusive temp file, renamed; user-only
        from session_watcher.state.atomic import write_atomic

        text = "".join(json.dumps(row, separators=(",", ":")) + "\n" for row in trace)
        write_atomic(ns.trace, text.encode("utf-8"), mode=0o600, fsync=False)
    if ns.json:
        _emit(doc)
    else:
        print(clean(status_text(doc)))
    return 0


def health(ns: argparse.Namespace) -> int:
    from session_watcher.core.render import health_text
    from session_watcher.core.status import status_document

    if ns.transcript:
        from session_watcher.replay import replay as run_replay

        doc, _ = run_replay(_check_transcript(ns.transcript), with_trace=False)
    else:
        state, cfg = load_session(ns.session)
        doc = status_document(state, cfg)
    if ns.json:
        _emit(doc["health"])
    else:
        print(clean(health_text(doc["health"])))
    return 0


def _project(ns: argparse.Namespace) -> str | None:
    return os.path.abspath(ns.project) if getattr(ns, "project", None) else os.getcwd()


def config_show(ns: argparse.Namespace) -> int:
    from session_watcher import config

    project = _project(ns)
    effective, errors = config.load_layers(project)
    doc: dict[str, Any] = {"files": config.config_files(project), "effective": effective}
    if errors:  # the files that can be used still count; each bad one is named, left out
        doc["errors"] = errors
    _emit(doc)
    for err in errors:
        print(clean(f"session-watcher: {err} (left out; `session-watcher config set` can fix it)"),
              file=sys.stderr)
    return 1 if errors else 0


def config_path(ns: argparse.Namespace) -> int:
    from session_watcher import config

    for f in config.config_files(_project(ns)):
        print(clean(f"{f}{'' if os.path.exists(f) else '  (not present)'}"))
    return 0


def config_set(ns: argparse.Namespace) -> int:
    from session_watcher import config, paths

    target = paths.project_config_file(os.path.abspath(ns.project)) if ns.project else paths.user_config_file()
    value, moved = config.set_value(target, ns.key, ns.value, project=bool(ns.project))
    if moved:
        print(clean(f"session-watcher: {target} could not be read as TOML: moved to {moved}, started afresh"),
              file=sys.stderr)
    print(clean(f"{ns.key} = {json.dumps(value)}  ({target})"))
    return 0


def doctor(ns: argparse.Namespace) -> int:
    from session_watcher.doctor import report

    lines, ok = report()
    print(clean("\n".join(lines)))
    return 0 if ok else 1
