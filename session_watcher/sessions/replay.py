"""`replay`: the very same fold the hooks use, over a finished transcript, in a scratch state."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from session_watcher.core.shapes import Config, State


CWD_SCAN_BYTES = 64 << 20  # what transcript_cwd reads at most, however the lines run


def transcript_cwd(path: str) -> str | None:
    """The working directory the session ran in, from its first record that names one (among the
    first 201 lines; a line over 8 MiB is passed over as the fold passes it, never held whole; at
    most CWD_SCAN_BYTES in all; a regular file only)."""
    from session_watcher.agents import record_cwd
    from session_watcher.agents.claude_code.transcript import MAX_LINE_BYTES
    from session_watcher.base.paths import open_file

    with open(open_file(path), "rb") as fh:
        budget = CWD_SCAN_BYTES
        for _n in range(201):
            line = fh.readline(MAX_LINE_BYTES + 1)
            budget -= len(line)
            if not line or budget < 0:
                break
            if len(line) > MAX_LINE_BYTES:
                while line and not line.endswith(b"\n") and budget > 0:  # the rest of it, a block at a time
                    line = fh.readline(1 << 20)
                    budget -= len(line)
                continue
            if b'"cwd"' not in line:
                continue
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            cwd = record_cwd(rec) if isinstance(rec, dict) else None  # as any agent writes it
            if cwd is not None:
                return cwd
    return None


def replay(transcript_path: str, cwd: str | None = None, cfg: Config | None = None,
           subagents: bool = True, with_trace: bool = True, trace: list[dict[str, Any]] | None = None,
           ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(final status document, one trace row per main-chain API call; empty without `with_trace`).
    `trace`: the list the rows are appended to (the session page's keeps only its story rows)."""
    from session_watcher.core.status import status_document

    state, cfg, trace = fold(transcript_path, cwd, cfg, subagents, with_trace, trace)
    return status_document(state, cfg), trace


def fold(transcript_path: str, cwd: str | None = None, cfg: Config | None = None,
         subagents: bool = True, with_trace: bool = True, trace: list[dict[str, Any]] | None = None,
         ) -> tuple[State, Config, list[dict[str, Any]]]:
    """(the state a finished transcript folds to, the config it was folded with, its trace rows): what
    `replay` shows, and what `status` and `health` show of a session the hooks never saw."""
    path = os.path.abspath(transcript_path)
    from session_watcher.state import session

    state, cfg = scratch_state(path, cwd, cfg)
    trace = [] if trace is None else trace
    subs = session.subagent_files(path, os.path.basename(path).removesuffix(".jsonl")) if subagents else []
    session.canon_memo = {}
    try:
        state, _alerts, _done = session.sync(state, path, cfg, float("inf"), subs,
                                             trace=trace if with_trace else None, whole=True)
    finally:
        session.canon_memo = None
    return state, cfg, trace


def scratch_state(path: str, cwd: str | None = None, cfg: Config | None = None,
                  ) -> tuple[State, Config]:
    """A new state for the transcript at `path` (absolute), placed in the folder it ran in, and the
    config its fold uses: where a replay starts (the live page keeps folding it as the file grows)."""
    from session_watcher.agents import session_id as session_of
    from session_watcher.agents.claude_code.transcript import clean_path
    from session_watcher.base import config
    from session_watcher.core import engine
    from session_watcher.state.shell import real_folder

    session_id = session_of(path)
    state = engine.new_state(session_id if session_id else "replay")
    cwd = cwd or transcript_cwd(path)
    cwd = cwd if cwd and clean_path(cwd) else None  # one rule for every path (realpath's cost)
    state["context"]["cwd"] = cwd
    state["context"]["project"] = real_folder(cwd) if cwd else None  # a Windows folder stays one
    if cfg is None:
        cfg = config.load(state["context"]["project"]) if cwd and os.path.isdir(cwd) else config.merge()
    return state, cfg


def config_for(transcript: str, overrides: dict[str, Any]) -> Config | None:
    """The transcript's effective config (as `replay` finds it) with `overrides` on top (`backtest
    --set`); None without overrides: `replay` then decides, as `session-watcher replay` does."""
    if not overrides:
        return None
    from session_watcher.base import config

    cwd = transcript_cwd(transcript)
    base = config.load(os.path.realpath(cwd)) if cwd and os.path.isdir(cwd) else config.merge()
    return config.merge(base, overrides)
