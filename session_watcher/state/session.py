"""Bring a session's state up to date with its transcripts: the shell around `core.engine.fold`.

Used alike by the hooks, the status line, `status` and `replay`: read the new lines of the main
transcript (and of subagent transcripts when asked), canonicalize the file paths they name, classify
new paths (outside the project, gitignored: one git call per batch), and fold. No locking and no
saving here; the callers decide that.
"""

from __future__ import annotations

import time

from session_watcher.agents import FALLBACK, agent_reading
from session_watcher.base import sysos
from session_watcher.core import engine, health
from session_watcher.core import paths as pathmap
from session_watcher.core.errors import Reset
from session_watcher.state.reader import read_new

TYPE_CHECKING = False  # typing is slow to import; this module is on the hot path
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from typing import Any, Protocol

    from session_watcher.agents.seam import Agent
    from session_watcher.core.shapes import Alert, Config, Event, ModelParams, State
    from session_watcher.state.pathstore import PathShards

    class ChunkReader(Protocol):
        """A whole fold's reader of its main transcript in place of `read_new` (the session page's one
        read, replay's two-core parse): `read` as `read_new(path, before, whole=True)`, and `took` told
        each chunk's events. A reader with a `parsed` attribute that is not None after a read hands
        on that chunk's (events, bad lines) itself (`state.ahead.Ahead`)."""

        def read(self, path: str, before: dict[str, Any] | None) -> tuple[list[bytes], dict[str, Any], int]: ...

        def took(self, events: list[Event]) -> None: ...


# `replay` sets a dict here for its run: each raw path is resolved once (a hook resolves every batch's
# paths afresh; a replay folds many batches of one finished session, naming the same files)
canon_memo: dict[tuple[str, str | None], str] | None = None
# `replay` sets a set here for its run: the project folders where git did not answer in time which
# files it ignores (`git_ignored` None); the fold took none as ignored there
unanswered: set[str] | None = None
GIT_SECONDS = 2.0  # how long `git check-ignore` may take before its answer is unknown


def canonical(raw: str, cwd: str | None) -> str:
    """Absolute, `..` and symlinks resolved: `./a.py`, `a.py` and `/proj/a.py` are one path. A Windows
    path on another system (`D:\\proj\\a.py`, or relative to a Windows cwd) stays a Windows path
    (`core.paths.windows_canonical`), never glued to a folder of this one. A relative path of a session
    whose transcript names no folder (`cwd` None) has nothing to be resolved from: it stays as named
    (`./x/../a.py` is `a.py`), never joined to wherever the command runs (a replay, an export run from
    another folder, would have found other files)."""
    if sysos.sep == "/" and (pathmap.windows_form(raw) or (cwd and pathmap.windows_form(cwd) and raw[:1] != "/")):
        return pathmap.windows_canonical(raw, cwd)
    path = sysos.expanduser(raw)
    if not sysos.isabs(path):
        if not cwd:
            return sysos.normpath(path)
        path = sysos.join(cwd, path)
    return sysos.realpath(path)


def git_ignored(root: str, candidates: list[str]) -> set[str] | None:
    """The candidates git ignores, asked in one `git check-ignore` call; empty when git cannot say
    (not installed, not a repository); None when it did not answer in time (GIT_SECONDS): unknown,
    which a fold takes as none ignored but says (`unanswered`) and an export's kept replay never keeps.

    The repository may be someone else's (a transcript's `cwd` picks it): its config must not run
    a command. Reading the index runs `core.fsmonitor` (the one program check-ignore starts, traced
    with a config that also sets pager, hooks, filters, textconv, credential and ssh commands), so it
    is switched off on the command line, which outranks every config file.
    """
    if not candidates or not sysos.isdir(root):  # a folder that is gone: git could only fail (no spawn)
        return set()
    from session_watcher.state.spawn import run

    try:
        got = run(["git", "-c", "core.fsmonitor=false", "-C", root, "check-ignore", "--stdin", "-z"],
                  "\0".join(candidates).encode("utf-8", "surrogateescape"), timeout=GIT_SECONDS)
    except TimeoutError:
        return None
    if got is None or got[0] not in (0, 1):
        return set()
    return {p.decode("utf-8", "surrogateescape") for p in got[1].split(b"\0") if p}


def _paths_of(events: Iterable[Event], state: State) -> tuple[set[str], set[str]]:
    """Raw file paths the events name, including those of tool uses seen in an earlier batch; and
    those named only by shell reads (health's: no discard reason is asked for them)."""
    raws: set[str] = set()
    shell: set[str] = set()
    pending = state["tools"]["pending"]
    for ev in events:
        if ev[0] == "use" and ev[4] is not None:
            into = shell if ev[3] == health.SHELL_READ else raws
            into.add(ev[4]["path"])
            into.update(ev[4].get("more") or ())  # a shell command's other files read
        elif ev[0] == "result" and ev[4] is not None:
            raws.add(ev[4]["path"])
        if ev[0] == "result" and ev[2] in pending:
            name, info = pending[ev[2]]
            if isinstance(info, dict) and isinstance(info.get("path"), str):
                into = shell if name == health.SHELL_READ else raws
                into.add(info["path"])
                more = info.get("more")
                if isinstance(more, list):
                    into.update(p for p in more if isinstance(p, str))
    return raws, shell - raws


def resolve(state: State, raws: set[str], shards: PathShards | None = None,
            also: Iterable[str] = (), unreasoned: set[str] | frozenset[str] = frozenset(),
            ) -> tuple[dict[str, str], dict[str, str | None]]:
    """Canonical forms of `raws` and `unreasoned`, and the discard reason of each of `raws` (cached
    in the state; `unreasoned`: paths only a shell read names, which the path map never takes: no
    git call for them). With `shards`, the path-map shards of these paths (and of the canonical
    paths `also`) are loaded."""
    cwd = state["context"].get("cwd")
    root = state["context"].get("project")
    memo = canon_memo
    canon: dict[str, str] = {}
    for raw in raws | unreasoned:
        got = memo.get((raw, cwd)) if memo is not None else None
        if got is None:
            got = canonical(raw, cwd)
            if memo is not None:
                memo[raw, cwd] = got
        canon[raw] = got
    if shards is not None:
        shards.ensure(state, [*canon.values(), *also])
    known: dict[str, str | None] = state.setdefault("reasons", {})
    fresh = sorted({canon[raw] for raw in raws if canon[raw] not in known})
    if fresh:
        inside = [c for c in fresh if root and pathmap.relative(c, root) is not None]
        ignored = git_ignored(root, inside) if root and inside else set()
        # unknown: none taken as ignored, and said where someone asks (`unanswered`: a replay, which an
        # export then keeps not). A hook keeps that answer in the state as git's: asked again at every
        # hook naming those files, a git that hangs would stall each one its 2 s
        if ignored is None:
            ignored = set()
            if unanswered is not None and root:
                unanswered.add(root)
        for c in fresh:
            if c not in inside:
                known[c] = "outside-project"
            else:
                known[c] = "gitignore" if c in ignored else None
    return canon, {c: known.get(c) for c in canon.values()}


def _load_needed(state: State, cfg: ModelParams, shards: PathShards | None) -> list[str]:
    """Canonical paths the fold may touch besides the events' own: the open ledger entries'; and
    every path when the include/exclude globs changed (inclusion is decided again for all)."""
    if shards is not None and state["engine"]["globs"] != pathmap.globs_key(cfg["include"], cfg["exclude"]):
        shards.ensure_all(state)
    return [item[0] for item in state["engine"]["ledger"]]


def fold_events(state: State, events: list[Event], cfg: ModelParams,
                sidechain_file: bool = False, trace: list[dict[str, Any]] | None = None,
                shards: PathShards | None = None) -> list[Alert]:
    if sidechain_file:
        canon: dict[str, str] = {}
        reasons: dict[str, str | None] = {}
    else:
        also = _load_needed(state, cfg, shards)
        raws, shell = _paths_of(events, state)
        canon, reasons = resolve(state, raws, shards, also, shell)
    hook = None
    folded: Iterable[Event] = events
    if trace is not None:
        from session_watcher.core.status import tracer

        hook = tracer(trace, cfg)
        seen = None if sidechain_file else getattr(trace, "compaction", None)
        if seen is not None:  # a trace that keeps the compactions between calls (the page's StoryTrace)
            folded = _watched(events, seen)
    return engine.fold(state, folded, cfg, (canon, reasons), sidechain_file=sidechain_file, call_hook=hook)


def _watched(events: list[Event], seen: Callable[[str | None, int | None], None]) -> Iterator[Event]:
    """The events as they are, each compaction told to `seen` (its trigger and tokens before) as
    the fold reaches it."""
    for ev in events:
        if ev[0] == "compact":
            seen(ev[2], ev[3])
        yield ev


def read_events(path: str, before: dict[str, Any] | None, cursor: dict[str, Any], lines: list[bytes],
                whole: bool = False, agent: Agent | None = None,
                ) -> tuple[list[bytes], dict[str, Any], list[Event], int]:
    """(lines, cursor, events, bad lines) of one read of `path` (`state.reader.read_new`'s lines and
    cursor; `whole`: one chunk of complete lines), decoded by `agent`, by default the one whose log
    it is."""
    agent = agent or agent_reading(before, lines)
    if agent.open_end and not lines:  # a finished log's last line without a newline
        from session_watcher.state.reader import last_whole_line

        got = last_whole_line(path, cursor)
        if got is not None:
            lines, cursor = got
            whole = False
    if not agent.fallback:
        cursor.setdefault(agent.name, True)  # the next read is its too (a stateful agent's state goes here)
    if not (lines or agent.stateful):
        return lines, cursor, [], 0
    events, bad = agent.read(before, cursor, lines, whole)
    return lines, cursor, events, bad


def sync_file(state: State, path: str, cfg: ModelParams, sub: bool, deadline: float,
              trace: list[dict[str, Any]] | None = None, shards: PathShards | None = None,
              whole: bool = False, reader: ChunkReader | None = None, end: int | None = None,
              ) -> tuple[list[Alert], bool]:
    """Fold the new lines of one transcript. Returns (alerts, caught up). Raises Reset. `whole`:
    read it a chunk at a time (replay's), not line by line (a hook's); `reader`: read so, by it;
    `end`: no line past it (a line end, `reader.line_end`: caught up there)."""
    alerts: list[Alert] = []
    while True:
        before = state["subCursors"].get(path) if sub else state["cursor"]
        lines, cursor, skipped = read_new(path, before, whole=whole, end=end) if reader is None \
            else reader.read(path, before)
        agent = agent_reading(before, lines)
        if not sub:
            state["context"]["agent"] = agent.name  # the agent whose log the state follows
        parsed = getattr(reader, "parsed", None)  # a reader that parsed the chunk it read (state.ahead)
        if parsed is None:
            lines, cursor, events, bad = read_events(path, before, cursor, lines, whole or reader is not None, agent)
        else:
            events, bad = parsed
        if reader is not None:
            reader.took(events)
        state["bad"] += skipped
        if lines or events:  # events without lines: a decoder's of lines read before (agents.codex.reader)
            state["bad"] += bad
            alerts += fold_events(state, events, cfg, sidechain_file=sub, trace=trace, shards=shards)
        if sub:
            state["subCursors"][path] = cursor
        else:
            state["cursor"] = cursor
        if not lines and not skipped and (before or {}).get("skip") == cursor.get("skip"):
            return alerts, True  # nothing new (a skip that reached the end of the file waits too)
        if time.monotonic() > deadline:  # out of time: caught up if this read took the file's last line
            return alerts, _at_end(path, cursor, end)


def _at_end(path: str, cursor: dict[str, Any], end: int | None) -> bool:
    """Whether `cursor` is at the end of the file as it is now (or at `end`): the run that folded the
    last line delivers its alerts, not the next one."""
    try:
        size = sysos.stat(path).st_size
    except OSError:
        return False
    return "skip" not in cursor and cursor.get("offset", -1) >= (size if end is None else min(size, end))


def subagent_files(transcript: str, session_id: str, unread: list[str] | None = None) -> list[str]:
    """The files named `*.jsonl` in the session's `subagents/` folder, sorted: what a fold reads.
    `unread`, when given, gets those so named that are no file (a folder, a link to nothing): the
    commands name them (`cli.commands`), the hooks pass them over without a word."""
    folder = sysos.join(sysos.dirname(transcript), session_id, "subagents")
    files: list[str] = []
    odd: list[str] = []
    try:
        with sysos.scandir(folder) as it:
            for de in it:
                if de.name.endswith(".jsonl"):
                    (files if de.is_file() else odd).append(de.path)
    except OSError:
        return []
    if unread is not None:
        unread += sorted(odd)
    return sorted(files)


SEEN_MAX = 2 * engine.ALERTS_MAX  # alert marks a rebuilt state keeps (`seen`), the newest


def alert_mark(alert: Alert) -> list[Any]:
    """What identifies an alert across folds of one transcript: its kind, its call and the call's
    time (a call made again after a rewind is another call at the same number)."""
    return [alert.get("kind"), alert.get("call"), alert.get("ts")]


def rebuild(state: State, before: list[Alert] | None = None) -> State:
    """A fresh state for the same session that keeps what only hooks and the status line knew: the
    context, the config, the path map's revision, when the user was last notified, queued output, the
    guard's marks (the cold return the prompt hook told of, the prompt held, the handoff it prepared),
    and in `seen` the marks of the alerts already dealt with (delivered, held back or let pass as
    history), so that the fold from the start, which fires them again, does not deliver them again.
    `before`: the state's alerts before this run's fold (by default its own; one this run fired and
    did not deliver yet is no alert dealt with); one left pending for the next hook (by a status
    line, the CLI, a hook behind its transcript) is not dealt with either."""
    fresh = engine.new_state(state["sessionId"])
    old = state["context"]
    fresh["context"].update({
        "window": old.get("window"), "modelId": old.get("modelId"), "modelName": old.get("modelName"),
        "project": old.get("project"), "cwd": old.get("cwd"), "promptCache": old.get("promptCache"),
        "resume": old.get("resume"),
    })
    fresh["config"] = state.get("config", {})
    fresh["rev"] = state.get("rev", 0)  # shard file names never repeat within a session
    if "notified" in state:  # when the user was last notified (notifier.throttle)
        fresh["notified"] = state["notified"]
    if state.get("outbox"):
        fresh["outbox"] = state["outbox"]
    if isinstance(state.get("guard"), dict):
        fresh["guard"] = state["guard"]
    keep_seen(fresh, state.get("seen"), state["alerts"] if before is None else before)
    return fresh


def keep_seen(fresh: State, seen: object, alerts: Iterable[object]) -> None:
    """Keep in `fresh` (`seen`) the marks `seen` held and those of `alerts` dealt with (any but one
    left pending for the next hook to deliver), the newest SEEN_MAX: a state started again from its
    transcript (a rebuild, an upgrade's migration) fires them again, as no news."""
    marks = [m for m in seen if isinstance(m, list)] if isinstance(seen, list) else []
    for alert in alerts:
        if isinstance(alert, dict) and not alert.get("pending"):
            mark = alert_mark(alert)  # type: ignore[arg-type]  # a dict of an older schema's alert
            if mark not in marks:
                marks.append(mark)
    if marks:
        fresh["seen"] = marks[-SEEN_MAX:]


def unseen(state: State, alerts: list[Alert]) -> list[Alert]:
    """The alerts a rebuilt state's fold fired that were not dealt with before it (`rebuild`): those
    fired again stay in the state, for `status` and the page, but are no news."""
    seen = state.get("seen")
    if not alerts or not isinstance(seen, list) or not seen:
        return alerts
    return [a for a in alerts if alert_mark(a) not in seen]


def sync(state: State, transcript: str | None, cfg: Config, deadline: float,
         subagents: Iterable[str] = (), trace: list[dict[str, Any]] | None = None,
         shards: PathShards | None = None, whole: bool = False, reader: ChunkReader | None = None,
         params: ModelParams | None = None, end: int | None = None) -> tuple[State, list[Alert], bool]:
    """Fold what is new in the main transcript and the given subagent transcripts (`whole`: the
    main transcript a chunk at a time, see `sync_file`); the state's context names the agent
    whose log it follows. `params`: `cfg`'s model parameters, when kept with it; `end`: the main
    transcript read as if it ended there (`sync_file`).

    Returns (state, alerts, caught up). A transcript that changed under its cursor (rewritten,
    shrunk, replaced) starts the whole state again from the transcripts (`rebuild`): nothing
    double-counts, and the alerts the fold fires again are not returned again (`unseen`).
    """
    if params is None:  # not kept with the config (the hooks' is: state.shell)
        from session_watcher.base.config import model_params

        params = model_params(cfg)  # the core is handed only what it reads
    if "agent" not in state["context"]:  # a state saved before it was named, or one with no transcript
        state["context"]["agent"] = agent_of(state)
    alerts: list[Alert] = []
    caught_up = True
    before = list(state["alerts"])  # what a rebuild keeps as dealt with: not what this run fires
    for attempt in range(2):
        try:
            cursors = (state["cursor"], dict(state["subCursors"]))  # what this run has read: none yet
            if transcript:
                got, done = sync_file(state, transcript, params, False, deadline, trace, shards, whole, reader, end)
                alerts += got
                caught_up = caught_up and done
            for sub in subagents:
                if sub == transcript:
                    continue
                # the budget holds across files too: the rest waits, once this run has read something
                # (a run whose budget was spent before any new line still reads one: each run gets on)
                if time.monotonic() > deadline and cursors != (state["cursor"], state["subCursors"]):
                    caught_up = False
                    break
                try:
                    got, done = sync_file(state, sub, params, True, deadline, shards=shards)
                except FileNotFoundError:
                    continue
                alerts += got
                caught_up = caught_up and done
            break
        except Reset:
            if attempt:
                raise
            known_subs = list(state["subCursors"])
            state = rebuild(state, before)
            subagents = sorted({*subagents, *known_subs})
            if trace is not None:
                trace.clear()
            alerts = []
    return state, unseen(state, alerts), caught_up


def agent_of(state: State) -> str:
    """The name of the agent whose log the state follows: the one whose decoder's state its cursor
    holds, else the registry's fallback."""
    cursor = state.get("cursor")
    return agent_reading(cursor, []).name if isinstance(cursor, dict) else FALLBACK.name


# ----------------------------------------------------------------------------- live trace

FIFO_STALL_S = 5.0  # a FIFO whose reader makes no room in it for this long has stalled: the rows left are not written
# (a pipe makes room a page, 4 KiB, at a time: a reader that takes less than that has made none)
PIPE_BUF = 4096  # POSIX's least PIPE_BUF (Linux's): a non-blocking write of at most this much is whole or nothing


def append_trace(path: str, rows: list[dict[str, Any]]) -> None:
    """Append trace rows as JSON lines (`SESSION_WATCHER_TRACE`: the rows a live fold made, to be
    compared with `replay --trace`) to a regular file, or to a FIFO that a reader has open: the open
    never waits for one to come (a FIFO nobody reads held the hook, and the session's lock with it,
    for good), and anything else there is refused. A FIFO is written at its reader's pace, but a reader
    that makes no room in it for FIFO_STALL_S seconds has stalled: the rows it has not taken are left out,
    their count logged (a reader that stopped reading held the hook and the session's lock for good
    once the pipe was full), whole rows only (`_to_fifo`). Logged once, never raised."""
    from session_watcher.base import sysos
    from session_watcher.core.fastjson import dumps

    lines = [(dumps(row) + "\n").encode("utf-8") for row in rows]
    flags = sysos.O_WRONLY | sysos.O_APPEND | sysos.O_CREAT | sysos.O_NONBLOCK | getattr(sysos, "O_NOCTTY", 0)
    try:
        fd = sysos.open(path, flags | getattr(sysos, "O_CLOEXEC", 0), 0o600)  # ENXIO: a FIFO with no reader
        try:
            mode = sysos.fstat(fd).st_mode
            if sysos.S_ISFIFO(mode):
                left = _to_fifo(fd, lines)
                if left:
                    raise OSError(f"{path}: {left} of {len(lines)} trace rows not written: the FIFO's reader "
                                  f"made no room in it for {FIFO_STALL_S:g} s")
                return
            if not sysos.S_ISREG(mode):
                raise OSError(f"{path}: neither a file nor a FIFO")
            sysos.set_blocking(fd, True)
            data = b"".join(lines)
            while data:
                data = data[sysos.write(fd, data):]
        finally:
            sysos.close(fd)
    except OSError as exc:
        from session_watcher.base.logs import log_once

        log_once("trace", f"SESSION_WATCHER_TRACE: {exc}")


def _to_fifo(fd: int, lines: list[bytes]) -> int:
    """Write `lines` to the FIFO `fd` (non-blocking) at its reader's pace; how many were not written,
    its reader having made no room for FIFO_STALL_S seconds (taken nothing, or less than a page). Lines
    go in runs of at most PIPE_BUF bytes, which a pipe takes whole or not at all: a stalled reader never
    gets half a row (a row longer than PIPE_BUF alone may be cut, if the reader stalls inside it)."""
    import select
    import time

    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    last = time.monotonic()  # when the reader last took a byte
    k = 0
    while k < len(lines):
        run, j = lines[k], k + 1
        while j < len(lines) and len(run) + len(lines[j]) <= PIPE_BUF:
            run, j = run + lines[j], j + 1
        view = memoryview(run)
        while view:
            try:
                view = view[sysos.write(fd, view):]
                last = time.monotonic()
                continue
            except BlockingIOError:
                pass
            wait = FIFO_STALL_S - (time.monotonic() - last)
            if wait <= 0 or not poller.poll(wait * 1000):
                return len(lines) - k  # the run begun (a long row's first part) counted as not written
        k = j
    return 0
