"""`replay`: the very same fold the hooks use, over a finished transcript, in a scratch state."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from session_watcher.core.shapes import Config, State
    from session_watcher.state.session import ChunkReader


CWD_SCAN_BYTES = 64 << 20  # what transcript_cwd reads at most, however the lines run
CWD_SCAN_LINES = 201  # the lines transcript_cwd reads at least, and those that begin in a file's first
# CWD_SCAN_HEAD bytes: where the report finds a working folder (`reports.parse.DIR_SEARCH_BYTES`), so
# a transcript opened by 250 `summary` records is named by its cwd alike
CWD_SCAN_HEAD = 64 << 10
# a transcript this large is parsed on two cores where one is idle (state.ahead); below it the fork
# and the copy of the events cost about what the second core gives (docs/benchmarks.md)
TWO_CORES_BYTES = 16 << 20


def transcript_cwd(path: str, fd: int | None = None) -> str | None:
    """The working directory the session ran in, from its first record that names one (among the
    first CWD_SCAN_LINES lines, and those that begin in its first CWD_SCAN_HEAD bytes, where the
    report looks; a line over 8 MiB is passed over as the fold passes it, never held whole; at
    most CWD_SCAN_BYTES in all; a regular file only). `fd`: `path` already open (read from its
    start, left open)."""
    return head_cwd(path, fd)[0]


def head_cwd(path: str, fd: int | None = None) -> tuple[str | None, bool]:
    """(`transcript_cwd`'s answer, decided): decided when a line named one or when the lines it looks
    at were all there, complete; not when the file ended first (a transcript still short, or its last
    line still being written: more lines may name one later)."""
    from session_watcher.agents.claude_code.transcript import MAX_LINE_BYTES
    from session_watcher.base.paths import open_file

    if fd is not None:
        os.lseek(fd, 0, os.SEEK_SET)
    with open(open_file(path) if fd is None else fd, "rb", closefd=fd is None) as fh:
        budget = CWD_SCAN_BYTES
        n = 0
        whole = True  # the last line read ended with its newline
        while n < CWD_SCAN_LINES or CWD_SCAN_BYTES - budget < CWD_SCAN_HEAD:
            n += 1
            line = fh.readline(MAX_LINE_BYTES + 1)
            budget -= len(line)
            if not line:
                return None, False
            if budget < 0:
                return None, True
            if len(line) > MAX_LINE_BYTES:
                while line and not line.endswith(b"\n") and budget > 0:  # the rest of it, a block at a time
                    line = fh.readline(1 << 20)
                    budget -= len(line)
                whole = line.endswith(b"\n")
                continue
            whole = line.endswith(b"\n")
            got = line_cwd(line)
            if got is not None:
                return got, True
    return None, whole


def line_cwd(line: bytes) -> str | None:
    """The working directory one transcript line names, as any agent writes it (`transcript_cwd`'s
    test of each line)."""
    from session_watcher.agents import record_cwd

    if b'"cwd"' not in line:
        return None
    try:
        rec = json.loads(line)
    except ValueError:
        return None
    return record_cwd(rec) if isinstance(rec, dict) else None


def cwd_in_head(lines: list[bytes], whole_file: bool) -> tuple[bool, str | None]:
    """`transcript_cwd` from the complete lines the file starts with (a first chunk read whole, none
    over 8 MiB): (decided, cwd). Decided when a line names one, or when the lines hold all it looks
    at (CWD_SCAN_LINES, and those that begin in the first CWD_SCAN_HEAD bytes), or the whole file
    (`whole_file`: nothing after them, not even a line without its newline)."""
    read = 0
    for n, line in enumerate(lines):
        if n >= CWD_SCAN_LINES and read >= CWD_SCAN_HEAD:
            return True, None
        read += len(line) + 1
        if read > CWD_SCAN_BYTES:
            return True, None
        got = line_cwd(line)
        if got is not None:
            return True, got
    return (len(lines) >= CWD_SCAN_LINES and read >= CWD_SCAN_HEAD) or whole_file, None


def replay(transcript_path: str, cwd: str | None = None, cfg: Config | None = None,  # noqa: PLR0913
           subagents: bool = True, with_trace: bool = True, trace: list[dict[str, Any]] | None = None, *,
           asked: dict[str, Any] | None = None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(final status document, one trace row per main-chain API call; empty without `with_trace`).
    `trace`: the list the rows are appended to (the session page's keeps only its story rows);
    `asked`: given, it gets what the fold asked outside the transcript (`fold`)."""
    state, cfg, trace = fold(transcript_path, cwd, cfg, subagents, with_trace, trace, asked=asked)
    from session_watcher.core.status import status_document  # after the fold's start: a child may parse meanwhile

    return status_document(state, cfg), trace


def fold(transcript_path: str, cwd: str | None = None, cfg: Config | None = None,  # noqa: PLR0913
         subagents: bool = True, with_trace: bool = True, trace: list[dict[str, Any]] | None = None, *,
         asked: dict[str, Any] | None = None) -> tuple[State, Config, list[dict[str, Any]]]:
    """(the state a finished transcript folds to, the config it was folded with, its trace rows): what
    `replay` shows, and what `status` and `health` show of a session the hooks never saw. Besides the
    transcript and its subagent files, a fold reads the config (`project_config`) and asks the file
    system and git: the folder it ran in and every file path it names, resolved (links, `~`: `placed`,
    `state.session.canonical`), and which of them git ignores. `asked` (given) gets those answers:
    "cwd" and "project" (`placed`), "canon" ((raw path, cwd) -> resolved), "reasons" (resolved
    path -> why it is left out of the path map, for those the map classed), "unanswered" (the
    project folders where git did not answer in time which files it ignores: taken as none) and
    "unread" (the logs named `*.jsonl` in its `subagents/` folder that are no file: passed over)."""
    path = os.path.abspath(transcript_path)
    trace = [] if trace is None else trace
    state, cfg = _fold(path, (cwd, True), cfg, subagents, trace if with_trace else None, None, asked=asked)
    return state, cfg, trace


def fold_read(path: str, cwd: str | None, trace: list[dict[str, Any]], reader: ChunkReader) -> tuple[State, Config]:
    """`fold` of the main transcript at `path` (absolute) as `reader` reads it (the session page's
    one read), with the session's folder as `transcript_cwd` found it (None included)."""
    return _fold(path, (cwd, False), None, True, trace, reader)


def _fold(path: str, cwd: tuple[str | None, bool], cfg: Config | None, subagents: bool,  # noqa: PLR0913
          trace: list[dict[str, Any]] | None, reader: ChunkReader | None, *,
          asked: dict[str, Any] | None = None) -> tuple[State, Config]:
    """The fold: from a scratch state (`cwd`: the folder, and whether to look for it when None)."""
    two = None
    if reader is None and _size(path) >= TWO_CORES_BYTES:  # parsed on two cores where one is idle: first
        from session_watcher.agents import agent_for_head
        from session_watcher.state.ahead import ahead

        reader = two = ahead(path, agent_for_head)
    try:
        from session_watcher.state import session

        state, cfg = scratch_state(path, cwd[0], cfg, cwd[1])
        unread: list[str] = []  # a subagent log that is no file: the command names it (`asked`)
        subs = session.subagent_files(path, os.path.basename(path).removesuffix(".jsonl"), unread) \
            if subagents else []
        memo: dict[tuple[str, str | None], str] = {}
        unanswered: set[str] = set()
        session.canon_memo, session.unanswered = memo, unanswered
        try:
            state, _alerts, _done = session.sync(state, path, cfg, float("inf"), subs, trace=trace, whole=True,
                                                 reader=reader)
        finally:
            session.canon_memo = session.unanswered = None
        if asked is not None:
            ctx = state["context"]
            asked.update(cwd=ctx.get("cwd"), project=ctx.get("project"), canon=memo,
                         reasons=dict(state.get("reasons") or {}), unanswered=sorted(unanswered), unread=unread)
    finally:
        if two is not None:
            two.close()
    return state, cfg


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:  # the fold's own read says what is wrong
        return 0


def scratch_state(path: str, cwd: str | None = None, cfg: Config | None = None, find_cwd: bool = True,
                  ) -> tuple[State, Config]:
    """A new state for the transcript at `path` (absolute), placed in the folder it ran in, and the
    config its fold uses: where a replay starts (the live page keeps folding it as the file grows).
    `find_cwd=False`: `cwd` is already `transcript_cwd`'s answer, None included (no read)."""
    from session_watcher.agents import session_id as session_of
    from session_watcher.core import engine

    session_id = session_of(path)
    state = engine.new_state(session_id if session_id else "replay")
    cwd = cwd or (transcript_cwd(path) if find_cwd else None)
    state["context"]["cwd"], state["context"]["project"] = placed(cwd)
    if cfg is None:
        cfg = project_config(project_of(cwd))
    return state, cfg


def placed(cwd: str | None) -> tuple[str | None, str | None]:
    """(the folder a fold in `cwd` (`transcript_cwd`'s answer) resolves relative paths from, the
    project folder it tells a project's files by: its links resolved, a Windows folder staying one)."""
    from session_watcher.core.caps import clean_path
    from session_watcher.state.shell import real_folder

    cwd = cwd if cwd and clean_path(cwd) else None  # one rule for every path (realpath's cost)
    return cwd, real_folder(cwd) if cwd else None


def project_of(cwd: str | None) -> str | None:
    """The project folder whose config a fold in `cwd` (`transcript_cwd`'s answer) reads: None for
    none, or one that is not there (the user's config alone, `project_config`)."""
    from session_watcher.core.caps import clean_path
    from session_watcher.state.shell import real_folder

    return real_folder(cwd) if cwd and clean_path(cwd) and os.path.isdir(cwd) else None


def project_config(project: str | None) -> Config:
    """The config a fold reads for a session of `project` (`project_of`): the live hooks' (the user's
    config, the project's over it, the inferred cliff, the user's prices handed to the core). A
    session whose folder is gone (None) folds with the user's config alone, as its hooks did but for
    the project's file that went with the folder; a user's config that cannot be used is left out
    then, as the hooks left it out (`config.load_cached`; the CLI says it once, `cli.READS_CONFIG`).
    Raises ConfigError naming a file that cannot be used where the folder is there."""
    from session_watcher.base import config

    if project is not None:
        return config.load(project)
    return config.load_layers(None)[0]


def config_for(transcript: str, overrides: dict[str, Any]) -> Config | None:
    """The transcript's effective config (as `replay` finds it) with `overrides` on top (`backtest
    --set`); None without overrides: `replay` then decides, as `session-watcher replay` does."""
    if not overrides:
        return None
    from session_watcher.base import config

    return config.merge(project_config(project_of(transcript_cwd(transcript))), overrides)
