"""One session's backtest run: find its transcript, parse it once, fold it with the hooks' own fold, and
hand the trace to the pure closed-loop backtest (`core.backtest`, `core.closedloop`)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, NamedTuple

from session_watcher.base.config import DEFAULTS, model_params
from session_watcher.core import backtest as bt

if TYPE_CHECKING:
    from session_watcher.core.engine import Resolved
    from session_watcher.core.shapes import Config, Event, State


def all_transcripts() -> list[str]:
    """Every main session log of every agent, in its own folders (the registry's discovery)."""
    from session_watcher.agents import sources

    return [s.path for s in sources()[1] if not s.sub]


def resolve(target: str) -> str:
    """The transcript of the session `target` names (`sessions.find`: an id, a unique id prefix or a path)."""
    from session_watcher.sessions.naming import transcript_of

    path = transcript_of(target).transcript
    assert path is not None
    return path


def config_for(transcript: str, overrides: dict[str, Any]) -> Config:
    """The transcript's effective config (as `replay` finds it) with the overrides on top."""
    from session_watcher.sessions.replay import config_for as overridden
    from session_watcher.sessions.replay import scratch_state

    got = overridden(transcript, overrides)
    return got if got is not None else scratch_state(os.path.abspath(transcript))[1]


class Loaded(NamedTuple):
    """A transcript parsed once, its paths resolved: what every fold of the backtest starts from."""

    path: str
    cwd: str | None
    events: list[Event]
    paths: Resolved

    def fresh(self) -> State:
        """A new scratch state, as `replay` starts from."""
        from session_watcher.sessions.replay import scratch_state

        return scratch_state(self.path, self.cwd, DEFAULTS, find_cwd=False)[0]  # the state alone: no config read


def load(transcript: str) -> Loaded:
    """Parse the main transcript with replay's parser (the same reader, chunk by chunk) and resolve
    the file paths its events name, once (the shell's answers, as `replay` gets them)."""
    from session_watcher.sessions.replay import transcript_cwd
    from session_watcher.state import session
    from session_watcher.state.reader import read_new

    path = os.path.abspath(transcript)
    events: list[Event] = []
    cursor: dict[str, Any] | None = None
    while True:
        lines, after, skipped = read_new(path, cursor, whole=True)
        lines, after, got, _bad = session.read_events(path, cursor, after, lines, whole=True)
        events.extend(got)
        if not lines and not skipped and (cursor or {}).get("skip") == after.get("skip"):
            break
        cursor = after
    return loaded(path, transcript_cwd(path), events)


def loaded(path: str, cwd: str | None, events: list[Event]) -> Loaded:
    """The main transcript at `path` (absolute) already parsed into `events` (the session page's
    fold parsed them), its file paths resolved once; `cwd`: `transcript_cwd`'s answer."""
    from session_watcher.sessions.replay import scratch_state
    from session_watcher.state import session

    raws = {ev[4]["path"] for ev in events if ev[0] in ("use", "result") and ev[4] is not None}
    return Loaded(path, cwd, events, session.resolve(scratch_state(path, cwd, DEFAULTS, find_cwd=False)[0], raws))


def session_doc(loaded: Loaded, cfg: Config, taken: dict[str, Any] | None = None) -> dict[str, Any]:
    """The backtest of one loaded session under `cfg`: the real fold, then each closed-loop policy's.
    `taken`: see `run_one`."""
    from session_watcher.core import closedloop

    state = loaded.fresh()
    params = model_params(cfg)  # the core is handed only what it reads
    seen = closedloop.observe(state, loaded.events, params, loaded.paths)
    follow = {p: closedloop.follow(loaded.fresh(), seen, params, p) for p in bt.CLOSED_LOOP}
    if taken is not None:
        from session_watcher.sessions.restarts import note_taken

        note_taken(taken, loaded.path, {"sessionId": state["sessionId"], "parentSession": state.get("parentSession")},
                   seen.rows)
    return {"sessionId": state["sessionId"], "transcript": loaded.path,
            **bt.backtest(seen.calls, seen.shared, follow, seen.autos)}


def run_one(transcript: str, overrides: dict[str, Any] | None = None,
            taken: dict[str, Any] | None = None) -> dict[str, Any]:
    """Parse one transcript and backtest it (with config overrides, if any). `taken` collects what
    pricing the restarts taken needs (core.restarts): each session's calls and its parent."""
    return session_doc(load(transcript), config_for(transcript, overrides or {}), taken)
