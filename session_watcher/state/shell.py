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

from session_watcher.base import paths, sysos
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


def project_root(stated: object, cwd: object, env: Mapping[str, str] = sysos.environ) -> str | None:
    """The session's project root, by one rule for every caller, symlinks resolved: what the caller
    was told outright (the CLI's `--project`, the status line's `workspace.project_dir`), else the
    client's `CLAUDE_PROJECT_DIR` (set for hooks: the session's start folder), else the working
    folder (a payload's `cwd`; the CLI's own). None when none of them is a usable path."""
    for candidate in (stated, env.get("CLAUDE_PROJECT_DIR"), cwd):
        if usable_path(candidate):
            return real_folder(candidate)
    return None


def working_folder() -> str | None:
    """The folder the process runs in, None where it was removed (a command run from a folder deleted
    since: it names no project then, as a payload naming no usable cwd)."""
    try:
        return sysos.getcwd()
    except OSError:
        return None


def real_folder(path: str) -> str:
    """A folder's canonical path: symlinks resolved; a Windows path on another system kept a Windows
    path (`core.paths.windows_canonical`: `D:\\proj` is never `<here>/D:\\proj`)."""
    if sysos.sep == "/" and (path[1:2] == ":" or path.startswith("\\\\")):  # what a Windows path begins with
        from session_watcher.core import paths as pathmap  # the path rules: only for such a path here

        if pathmap.windows_form(path):
            return pathmap.windows_canonical(path, None)
    return sysos.realpath(path)


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


TRACE_STEPS = 8  # steps of a traced fold in one run, each up to the transcript's line end as it begins


def _traced(state: object) -> tuple[int, dict[str, Any] | None]:
    """The calls whose trace rows were written, as far as a state says: those it folded, or, while
    a fold from the start is under way (`traced`), the number the state it started again from had;
    and then the cursor at the line end of the transcript when it started again (`tracedTo`): the
    calls past it are new."""
    if not isinstance(state, dict):
        return 0, None
    mark, end = state.get("traced"), state.get("tracedTo")
    calls = _calls(state)
    if type(mark) is not int or mark <= calls:
        return calls, None
    return mark, end if isinstance(end, dict) else None


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
        paths.ensure_private_dir(sysos.dirname(self.path))
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
        self.traced, self.traced_to = _traced(kept if rebuilt else state)
        if state is None:
            from session_watcher.core.fresh import new_state  # loaded with the store's check of a saved one

            state = new_state(self.id)
        self.state = state
        return self

    def __exit__(self, *exc: object) -> None:
        self._lock.__exit__(None, None, None)

    def place(self, cwd: str | None, stated_project: object = None, env: Mapping[str, str] = sysos.environ) -> None:
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
        if trace is not None and transcript:
            alerts, caught_up = self._traced_fold(transcript, cfg, deadline, subagents, trace, whole_map)
        else:
            alerts, caught_up = self._fold(transcript, cfg, deadline, subagents, trace, whole_map)
        if pending:
            for alert in alerts:  # the state's own alert objects: the mark is saved with it
                alert["pending"] = True
        return alerts, caught_up

    def _fold(self, transcript: str | None, cfg: Config, deadline: float, subagents: list[str],  # noqa: PLR0913
              trace: list[dict[str, Any]] | None, whole_map: bool, *, end: int | None = None,
              again: bool = False) -> tuple[list[Alert], bool]:
        """`sync`'s fold (`end`: of the main transcript, no line past it; `again`: a later step of one
        run's fold, with the shards the steps before it loaded and changed), started again from the
        transcript when a path-map shard turns out damaged."""
        before = list(self.state["alerts"])  # what was dealt with before this run's fold (`rebuild`)
        try:
            return self._sync(transcript, cfg, deadline, subagents, trace=trace, whole_map=whole_map, end=end,
                              shards=not again)
        except ShardRejected as exc:
            from session_watcher.state.session import rebuild

            self.say("shard", f"{exc}; rebuilding the session from the transcript")
            self.state, self.fresh = rebuild(self.state, before), True
            if trace is not None:  # the rows of the fold given up: the fold from the start makes them again
                trace.clear()
            return self._sync(transcript, cfg, deadline, subagents, trace=trace, whole_map=whole_map, end=end,
                              shards=True)

    def _traced_fold(self, transcript: str, cfg: Config, deadline: float, subagents: list[str],
                     trace: list[dict[str, Any]], whole_map: bool) -> tuple[list[Alert], bool]:
        """`sync` with a trace, each call's row appended once. A fold from the start (a rebuild) makes
        the rows of the calls the saved state had traced again (`self.traced` of them): those are left
        out, but only those in the transcript's lines as they were when it started again (`tracedTo`,
        a cursor at the last line end then): a call written after that is a new call, even at a number
        a discarded one had (after a rewind). So the fold goes in steps, each up to the line end of the
        transcript as the step begins (or `tracedTo`, while it still describes it); once a step reaches
        it, every call from there on is new. A fold from the start that takes several runs (a long
        transcript's) keeps the count and the line end in the state until it gets there."""
        import time

        from session_watcher.state.reader import line_end

        traced, mark = self.traced, self.traced_to
        alerts: list[Alert] = []
        caught_up = False
        for step in range(TRACE_STEPS):
            end = line_end(transcript, mark)
            rows: list[dict[str, Any]] = []
            got, caught_up = self._fold(transcript, cfg, deadline, subagents, rows, whole_map,
                                        end=None if end is None else end["offset"], again=step > 0)
            alerts += got
            trace += [row for row in rows if row["call"] > traced]
            calls = _calls(self.state)
            cursor = self.state["cursor"]
            at = cursor.get("offset") if isinstance(cursor, dict) else None
            if end is None or type(at) is not int:  # not read (not written yet): the marks stay
                traced = max(traced, calls)
                break
            if at < end["offset"]:
                traced = max(traced, calls)
                if not caught_up:  # the budget is over: the next run goes on up to the same line end
                    mark = end if traced > calls else None
                    break
                mark = None  # caught up short of it: not a line end of the file now (rewritten): a new one
                continue
            traced, mark = calls, None  # at the line end: every call from here on is a new one
            if not caught_up:
                break
            now = line_end(transcript)
            if now is None or now["offset"] <= at:
                break
            if time.monotonic() > deadline:  # lines written meanwhile: the next run folds them
                caught_up = False
                break
        else:
            caught_up = False  # written to faster than folded: the next run goes on
        if mark is not None and traced > _calls(self.state):
            self.state["traced"], self.state["tracedTo"] = traced, mark
        else:
            self.state.pop("traced", None)
            self.state.pop("tracedTo", None)
        self.traced, self.traced_to = traced, mark
        return alerts, caught_up

    def _sync(self, transcript: str | None, cfg: Config, deadline: float, subagents: list[str],  # noqa: PLR0913
              *, trace: list[dict[str, Any]] | None, whole_map: bool, end: int | None, shards: bool,
              ) -> tuple[list[Alert], bool]:
        if shards:  # the path map's shards as saved (else those this run's fold loaded and changed so far)
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
                                                         params=kept_params(self.state["config"], cfg), end=end)
        except OSError as exc:  # not written yet, or unreadable (a folder in its place): a later run
            if not isinstance(exc, FileNotFoundError):
                self.say("transcript", f"cannot read the transcript: {exc}")
            return [], True
        return alerts, caught_up

    def save(self) -> None:
        """Write the state and its changed shards; a fresh or rebuilt state also sweeps the shard files
        it does not name (`store.save`)."""
        store.save(self.path, self.state, self.shards)
