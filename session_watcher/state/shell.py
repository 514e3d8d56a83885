"""The session shell: how the hook, the status line and the CLI open a session's state, one way.

    with open_session(session_id, timeout, say) as s:  # the lock, then the state loaded
        s.place(cwd, stated_project)                   # where the session runs (kept from the first)
        cfg = s.config()
        alerts, caught_up = s.sync(transcript, cfg, deadline)
        s.save()

One input rule (`usable_path`: what JSON can carry but a file name cannot is no path), one project
root rule (`project_root`), one lock (each caller gives its own timeout; `LockTimeout` when busy),
one answer to damage: a state file that cannot be used is quarantined and a path-map shard that
cannot be read makes the session start again from its transcript, the durable log (so does a
transcript changed under its cursor: `state.session.sync`); either way the state names no shard
file yet, and its save sweeps those of the state before it (`store.save`). What went wrong is told to
`say(key, message)`: the log (once per message) for the hook and the status line, stderr for the CLI.
Hot path: imported by every hook run, so stdlib `os` and the state modules every run needs; the
fold (`state.session`) only when there is a transcript to read.
"""

from __future__ import annotations

import os

from session_watcher.base import paths
from session_watcher.core.caps import clean_path
from session_watcher.core.errors import ShardRejected, StateRejected
from session_watcher.state import store

TYPE_CHECKING = False  # typing is slow to import; this module is on the hot path
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping
    from typing import Any, TypeGuard

    from session_watcher.core.shapes import Alert, Config, State

    Say = Callable[[str, str], None]


def usable_path(value: object) -> TypeGuard[str]:
    """A string that can name a file: JSON can carry NUL bytes, lone surrogates and megabytes,
    which cannot (`core.caps.clean_path`: one rule for payloads and transcripts)."""
    return isinstance(value, str) and bool(value) and clean_path(value)


def project_root(stated: object, cwd: object, env: Mapping[str, str] = os.environ) -> str | None:
    """The session's project root, by one rule for every caller, symlinks resolved: what the caller
    was told outright (the CLI's `--project`, the status line's `workspace.project_dir`), else the
    client's `CLAUDE_PROJECT_DIR` (set for hooks: the session's start folder), else the working
    folder (a payload's `cwd`; the CLI's own). None when none of them is a usable path."""
    for candidate in (stated, env.get("CLAUDE_PROJECT_DIR"), cwd):
        if usable_path(candidate):
            return real_folder(candidate)
    return None


def real_folder(path: str) -> str:
    """A folder's canonical path: symlinks resolved; a Windows path on another system kept a Windows
    path (`core.paths.windows_canonical`: `D:\\proj` is never `<here>/D:\\proj`)."""
    if os.sep == "/" and (path[1:2] == ":" or path.startswith("\\\\")):  # what a Windows path begins with
        from session_watcher.core import paths as pathmap  # the path rules: only for such a path here

        if pathmap.windows_form(path):
            return pathmap.windows_canonical(path, None)
    return os.path.realpath(path)


def payload_inputs(payload: Mapping[str, Any]) -> tuple[str | None, str | None, str | None]:
    """(session id, transcript path, cwd) of a hook's or the status line's payload, each None when
    it cannot be used."""
    session_id, transcript, cwd = payload.get("session_id"), payload.get("transcript_path"), payload.get("cwd")
    return (session_id if store.valid_session_id(session_id) else None,
            transcript if usable_path(transcript) else None, cwd if usable_path(cwd) else None)


def log_once(key: str, message: str) -> None:
    from session_watcher.base.logs import log_once as write  # only when there is something to say

    write(key, message)


def load_config(state: State) -> tuple[Config, str | None]:
    """A state's effective config and the error of a file left out: the config it keeps while that is
    current (without the key table and the checks: `base.config_cache`), else read again
    (`config.load_cached`)."""
    from session_watcher.base.config_cache import cached

    cfg = cached(state["config"], state["context"].get("project"))
    if cfg is not None:
        return cfg, None
    from session_watcher.base.config import load_cached

    return load_cached(state["config"], state["context"].get("project"))


def saved(session_id: str, whole_map: bool = False) -> State | None:
    """The state as last saved, read without the lock and without moving or writing anything (the
    lock is busy, the disk read-only), or None. Raises StateRejected (or ShardRejected, with
    `whole_map`) naming what cannot be used, which the next locked open deals with."""
    load = store.load_full if whole_map else store.load
    return load(store.session_file(session_id), session_id, readonly=True)


def open_session(session_id: str, timeout: float, say: Say = log_once) -> Session:
    """A session's state under its lock: `with open_session(session_id, timeout, say) as s`."""
    return Session(session_id, timeout, say)


def _calls(state: object) -> int:
    """The calls a state (or a damaged state's sound parts) says it folded: 0 where it cannot say."""
    engine = state.get("engine") if isinstance(state, dict) else None
    calls = engine.get("calls") if isinstance(engine, dict) else None
    return calls if type(calls) is int and calls > 0 else 0


def _traced(state: object) -> int:
    """The calls whose trace rows were written, as far as a state says: those it folded, or, while
    a fold from the start is under way (`traced`), the number the state it started again from had."""
    mark = state.get("traced") if isinstance(state, dict) else None
    return max(_calls(state), mark if type(mark) is int else 0)


def _at_end(transcript: str, cursor: dict[str, Any] | None) -> bool:
    """Whether `cursor` has read `transcript` to its end (as it is now)."""
    try:
        return cursor is not None and cursor.get("offset") == os.stat(transcript).st_size
    except OSError:
        return True


class Session:
    """Entering takes the lock (`LockTimeout` after `timeout` seconds; 0: only if free at once) and
    loads the state: `s.state`, a new one when there is none or it was quarantined (`s.fresh`).
    Nothing is written unless the caller calls `save`; leaving releases the lock."""

    state: State  # set on entering

    def __init__(self, session_id: str, timeout: float, say: Say = log_once) -> None:
        if not store.valid_session_id(session_id):
            raise ValueError(f"not a session id: {session_id!r}")
        self.id = session_id
        self.path = store.session_file(session_id)
        self.say = say
        self.fresh = False
        # the lock and the path map's shards: not imported by a caller that only reads (the status line)
        from session_watcher.state.lock import SessionLock
        from session_watcher.state.pathstore import PathShards

        self.shards = PathShards(self.path)
        self._lock = SessionLock(self.path + ".lock", timeout)

    def __enter__(self) -> Session:
        paths.ensure_private_dir(os.path.dirname(self.path))
        self._lock.__enter__()
        rebuilt = False
        kept: object = None
        try:
            try:
                state = store.load(self.path, self.id)
            except StateRejected as exc:
                kept = exc.kept
                self.say("state", f"the state file was unusable and quarantined to {exc}; "
                                  "rebuilding from the transcript")
                state = None
                if exc.kept is not None:  # its sound parts: the context, the marks of what was dealt with
                    from session_watcher.state.session import rebuild

                    state, rebuilt = rebuild(exc.kept), True  # type: ignore[arg-type]  # a State but its damage
        except BaseException:
            self._lock.__exit__(None, None, None)
            raise
        self.fresh = state is None or rebuilt
        # the calls the saved state had folded, each traced then (`sync`'s trace): those of the state
        # loaded, or of the damaged one its sound parts were kept from, where they still say
        self.traced = _traced(kept if rebuilt else state)
        if state is None:
            from session_watcher.core.fresh import new_state  # loaded with the store's check of a saved one

            state = new_state(self.id)
        self.state = state
        return self

    def __exit__(self, *exc: object) -> None:
        self._lock.__exit__(None, None, None)

    def place(self, cwd: str | None, stated_project: object = None, env: Mapping[str, str] = os.environ) -> None:
        """Record where the session runs, unless a caller already did: the cwd, and the project
        root by `project_root`."""
        ctx = self.state["context"]
        if ctx["cwd"] is None and cwd:
            ctx["cwd"] = cwd
        if ctx["project"] is None:
            ctx["project"] = project_root(stated_project, ctx["cwd"], env)

    def config(self) -> Config:
        """The effective config (cached in the state); a broken file is said and left out."""
        cfg, error = load_config(self.state)
        if error:
            self.say("config", f"{error}; using defaults")
        return cfg

    def sync(self, transcript: str | None, cfg: Config, deadline: float, subagents: Iterable[str] = (),  # noqa: PLR0913
             *, trace: list[dict[str, Any]] | None = None, whole_map: bool = False, pending: bool = False,
             ) -> tuple[list[Alert], bool]:
        """Fold the transcripts' new lines until `deadline`: (alerts, caught up). A transcript that
        cannot be read is left for a later run (said, unless it is only not written yet). A damaged
        path map (found when a shard is loaded; `whole_map` loads them all) starts the session again
        from its transcript. `pending`: the caller cannot deliver alerts (the status line, the CLI):
        those the fold fired are marked so in the state, and the next hook delivers them if they are
        still news (`hooks.run`), as it does those an async hook could not print."""
        transcript = transcript if usable_path(transcript) else None
        subagents = [sub for sub in subagents if usable_path(sub)]
        before = list(self.state["alerts"])  # what was dealt with before this run's fold (`rebuild`)
        try:
            alerts, caught_up = self._sync(transcript, cfg, deadline, subagents, trace=trace, whole_map=whole_map)
        except ShardRejected as exc:
            from session_watcher.state.session import rebuild

            self.say("shard", f"{exc}; rebuilding the session from the transcript")
            self.state, self.fresh = rebuild(self.state, before), True
            if trace is not None:  # the rows of the fold given up: the fold from the start makes them again
                trace.clear()
            alerts, caught_up = self._sync(transcript, cfg, deadline, subagents, trace=trace, whole_map=whole_map)
        if trace:  # a fold from the start (a rebuild) traces every call again: each call is traced once
            trace[:] = [row for row in trace if row["call"] > self.traced]
        if trace is not None and not caught_up and self.traced > _calls(self.state) and transcript \
                and not _at_end(transcript, self.state["cursor"]):
            self.state["traced"] = self.traced  # a fold from the start that the next runs go on with
        elif trace is not None:  # caught up, or at the end of the transcript: new lines are new calls
            self.state.pop("traced", None)
        self.traced = max(self.traced, _calls(self.state))
        if pending:
            for alert in alerts:  # the state's own alert objects: the mark is saved with it
                alert["pending"] = True
        return alerts, caught_up

    def _sync(self, transcript: str | None, cfg: Config, deadline: float, subagents: list[str],
              *, trace: list[dict[str, Any]] | None, whole_map: bool) -> tuple[list[Alert], bool]:
        from session_watcher.state.pathstore import PathShards

        self.shards = PathShards(self.path)
        if whole_map:
            self.shards.ensure_all(self.state)
        if not transcript:
            return [], True
        from session_watcher.base.config_cache import kept_params
        from session_watcher.state import session  # the fold and its parser: only with lines to read

        try:
            self.state, alerts, caught_up = session.sync(self.state, transcript, cfg, deadline, subagents,
                                                         trace=trace, shards=self.shards,
                                                         params=kept_params(self.state["config"], cfg))
        except OSError as exc:  # not written yet, or unreadable (a folder in its place): a later run
            if not isinstance(exc, FileNotFoundError):
                self.say("transcript", f"cannot read the transcript: {exc}")
            return [], True
        return alerts, caught_up

    def save(self) -> None:
        """Write the state and its changed shards; a fresh or rebuilt state also sweeps the shard files
        it does not name (`store.save`)."""
        store.save(self.path, self.state, self.shards)
