"""One session's backtest run: find its transcript, parse it once, fold it with the hooks' own fold, and
hand the trace to the pure closed-loop backtest (`core.backtest`, `core.closedloop`). Many sessions:
`run_all`, on every usable core."""

from __future__ import annotations

import marshal
import os
from typing import TYPE_CHECKING, Any, NamedTuple

from session_watcher.base.config import DEFAULTS, model_params
from session_watcher.core import backtest as bt

if TYPE_CHECKING:
    from collections.abc import Callable

    from session_watcher.core.engine import Resolved
    from session_watcher.core.shapes import Config, Event, State

# transcript bytes before a second process pays for its fork: a session's backtest costs far more a
# byte than the report's scan of it (docs/benchmarks.md, "backtest over many sessions")
FORK_FROM = 4 << 20
# one session's result: its document, and what it added to `taken` (`run_one`) as (session id, entry)
Done = tuple[dict[str, Any], list[tuple[str, Any]]]


def all_transcripts() -> list[str]:
    """Every main session log of every agent, in its own folders (the registry's discovery), and
    every subagent log there that is no file (a folder so named, a link to nothing: `Agent.sources`),
    whose run fails as a main one's and is named as one, in report's and export's words (a session's
    fold reads only its subagents' files: `state.session.subagent_files`)."""
    from session_watcher.agents import sources

    return [s.path for s in sources()[1] if not s.sub or not os.path.isfile(s.path)]


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


def turns(path: str) -> frozenset[str]:
    """The calls of the log at `path` that open an agent turn, by their call events' keys: its agent's
    `turn_starts` (the first call answering a prompt the user sent after the agent stopped)."""
    from session_watcher.agents import agent_for_head

    with open(path, "rb") as fh:
        lines = fh.read().split(b"\n")
    return frozenset(agent_for_head(lines[0]).turn_starts(lines))


def session_doc(loaded: Loaded, cfg: Config, taken: dict[str, Any] | None = None) -> dict[str, Any]:
    """The backtest of one loaded session under `cfg`: the real fold, then each closed-loop policy's.
    `taken`: see `run_one`."""
    from session_watcher.core import closedloop

    state = loaded.fresh()
    params = model_params(cfg)  # the core is handed only what it reads
    seen = closedloop.observe(state, loaded.events, params, loaded.paths)
    follow = {p: closedloop.follow(loaded.fresh(), seen, params, p) for p in bt.CLOSED_LOOP}
    if taken is not None:
        from session_watcher.sessions.restarts import note_calls

        note_calls(taken, loaded.path, {"sessionId": state["sessionId"], "parentSession": state.get("parentSession")},
                   seen.calls)  # the fold's own calls: core.restarts reads their usage, number, segment and time
    return {"sessionId": state["sessionId"], "transcript": loaded.path,
            **bt.backtest(seen.own(), seen.shared, follow, seen.autos), **fork_fields(state, loaded.path)}


def fork_fields(state: State, transcript: str | None = None) -> dict[str, Any]:
    """A fork's backtest leaves out its copies of its parent's calls and says so as `status --json`
    does (`inheritedCalls`, the first ones, to call `inheritedTo`, made by `forkedFrom`;
    `forkedFromFound` False where that session's file is not found: `naming.mark_parent`, looked for
    from `transcript`); nothing for a session that is no fork."""
    t = state["engine"]["tally"]
    if not t.get("inherited"):
        return {}
    from session_watcher.sessions.naming import mark_parent

    doc: dict[str, object] = {"inheritedCalls": t.get("inherited", 0), "inheritedTo": t.get("inheritedTo", 0),
           "forkedFrom": t.get("forkedFrom")}
    mark_parent(doc, transcript)
    return doc


def run_one(transcript: str, overrides: dict[str, Any] | None = None,
            taken: dict[str, Any] | None = None) -> dict[str, Any]:
    """Parse one transcript and backtest it (with config overrides, if any). `taken` collects what
    pricing the restarts taken needs (core.restarts): each session's calls and its parent."""
    return session_doc(load(transcript), config_for(transcript, overrides or {}), taken)


def run_noted(transcript: str, overrides: dict[str, Any] | None = None) -> Done:
    """`run_one`, and what it noted for pricing the restarts taken, as `Done`."""
    taken: dict[str, Any] = {}
    return run_one(transcript, overrides, taken), list(taken.items())


def run_all(paths: list[str], overrides: dict[str, Any] | None = None,
            tick: Callable[[int], None] | None = None) -> list[Done | None]:
    """`run_noted` of every transcript, on every usable core (`state.pool.map_batches`: forked children
    and this process, the largest transcripts first) where there is enough to read to pay for a fork
    (`workers`); the results in the order of `paths`. None where the run raised: the caller runs it
    again, in its place, where its error surfaces as it would have without a child. `tick(n)`: the
    first n batches' transcripts are taken (called in this process only, n rising)."""
    from session_watcher.state import pool

    sizes = [_size(p) for p in paths]
    parts = pool.batches(sizes)
    taken = [0]  # transcripts in the batches before each batch number
    for part in parts:
        taken.append(taken[-1] + len(part))
    here = os.getpid()
    shown = [0]  # the most told: a batch a child did not finish comes again after later ones

    def batch(k: int) -> list[tuple[int, Done | None]]:
        out = [(i, _attempt(paths[i], overrides)) for i in parts[k]]
        if tick is not None and os.getpid() == here and taken[k + 1] > shown[0]:
            shown[0] = taken[k + 1]
            tick(shown[0])
        return out

    n = workers(sizes)
    if n > 1:
        _imported()
    got: list[Done | None] = [None] * len(paths)
    for out in pool.map_batches(batch, len(parts), n, encode=_encode, decode=_decode,
                                name="session-watcher-backtest"):
        for i, done in out:
            got[i] = done
    return got


def workers(sizes: list[int]) -> int:
    """How many processes `run_all` runs transcripts of these sizes on: one per usable core, but a
    second one only past FORK_FROM bytes (more than one forks)."""
    from session_watcher.state import pool

    return max(1, min(pool.cores(), len(sizes), sum(sizes) // FORK_FROM + 1))


def _imported() -> None:
    """What every run imports, imported here before the children fork (each would import it again)."""
    from session_watcher.agents import AGENTS
    from session_watcher.core import closedloop  # noqa: F401
    from session_watcher.sessions import replay, restarts  # noqa: F401
    from session_watcher.state import reader, session, shell, store  # noqa: F401

    for agent in AGENTS:
        agent.read(None, {}, [b""], True)  # a whole read of nothing: its parser's modules


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:  # its run fails, and says why
        return 0


def _attempt(path: str, overrides: dict[str, Any] | None) -> Done | None:
    try:
        return run_noted(path, overrides)
    except Exception:  # run again in its place by the caller, where it raises as it would have
        return None


def _encode(out: list[tuple[int, Done | None]]) -> bytes:
    """A batch's results as a child sends them: marshal data, each call of `taken` a plain tuple."""
    return marshal.dumps([(i, None if got is None else (got[0], [(sid, (path, parent, [tuple(c) for c in calls]))
                                                               for sid, (path, parent, calls) in got[1]]))
                          for i, got in out])


def _decode(data: bytes) -> list[tuple[int, Done | None]]:
    """What `_encode` made, its calls `core.backtest.Call`s again."""
    call = bt.Call._make
    sent = marshal.loads(data)  # noqa: S302 - written by our own child
    return [(i, None if got is None else (got[0], [(sid, (path, parent, [call(c) for c in calls]))
                                                   for sid, (path, parent, calls) in got[1]]))
            for i, got in sent]
