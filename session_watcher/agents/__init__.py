"""The agents the watcher reads, and the one way the rest of the package reaches them (SPEC "Agents").

Each agent is one folder here holding everything specific to it, its `Agent` (`agents.seam`)
named in `AGENTS`: a new agent is its folder and its line there. The state, the
sessions, the reports and the hooks ask this module which agent a file, a read, a record or a hook
command is (`agent_for_head`, `agent_reading`, `agent_named`, `session_id`, `record_cwd`) and where the logs are
(`sources`), never an agent's own modules.
"""

from __future__ import annotations

from session_watcher.agents import claude_code, codex

TYPE_CHECKING = False  # typing is not imported on the hooks' path
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from session_watcher.agents.seam import Agent
    from session_watcher.agents.source import Source

AGENTS: tuple[Agent, ...] = (claude_code.AGENT, codex.AGENT)  # the registry: one line per agent

_CLAIMING = tuple(a for a in AGENTS if not a.fallback)
FALLBACK = next(a for a in AGENTS if a.fallback)  # reads the logs no other agent claims
_BY_NAME = {a.name: a for a in AGENTS}


def agent_named(name: object) -> Agent | None:
    """The agent of that name (a hook command's last word, a Source's or a state's agent), else None."""
    return _BY_NAME.get(name) if isinstance(name, str) else None


def agent_for_head(head: bytes) -> Agent:
    """The agent whose log opens with `head` (a file's first line or first bytes)."""
    return next((a for a in _CLAIMING if a.claims(head)), FALLBACK)


def agent_reading(before: Mapping[str, Any] | None, lines: list[bytes]) -> Agent:
    """The agent whose log a read is of: the one named in the cursor before it (every agent but the
    fallback marks its cursors with its name, a stateful one keeps its decoder's state there), else,
    on a read from the file's first byte, the one that claims its first line; else the fallback."""
    if before:
        for a in _CLAIMING:
            if a.name in before:
                return a
        if before.get("offset"):
            return FALLBACK
    return agent_for_head(lines[0]) if lines else FALLBACK


def session_id(path: str) -> str:
    """The session a log's path names: the first agent's name for it that fits, else the fallback's."""
    for a in _CLAIMING:
        sid = a.session_id(path)
        if sid is not None:
            return sid
    return FALLBACK.session_id(path) or path


def record_cwd(rec: Mapping[str, Any]) -> str | None:
    """The folder a parsed log record says its session ran in, as any agent writes it."""
    for a in AGENTS:
        cwd = a.cwd_of(rec)
        if cwd is not None:
            return cwd
    return None


def claimed(src: Source) -> Source:
    """A log found in a folder the user named, given to the agent whose file name it bears (a Codex
    rollout among transcripts: its thread id the session, the agent's name its project, as that
    agent's own discovery gives it); else as the fallback found it."""
    for a in _CLAIMING:
        sid = None if src.sub else a.session_id(src.path)
        if sid:
            return src._replace(session=sid, project=a.name, agent=a.name)
    return src


def sessions_on_disk(bound: int) -> int:
    """How many sessions have logs in the agents' own folders, counted up to `bound` (then `bound`):
    the folders listed, one at a time, until then; no log read and no session folder entered, so
    the count costs the same on any history past the bound (`doctor`'s, where no hook has fired).
    Each named as the report names it: a log among the fallback's that another agent's name fits (a
    Codex rollout in a projects folder) is that agent's session (`claimed`)."""
    seen: set[tuple[str, str]] = set()
    for a in AGENTS:
        for sid in a.session_ids(a.roots()):
            key = (a.name, sid)
            if a is FALLBACK:  # its session is its file's name (`SESSION.jsonl`)
                key = next(((c.name, got) for c in _CLAIMING if (got := c.session_id(sid + ".jsonl"))), key)
            seen.add(key)
            if len(seen) >= bound:
                return bound
    return len(seen)


# what a message of where a search looked says when none of the agents' folders is there
NO_FOLDER = "no folder of Claude Code's or Codex's sessions exists yet"


def folders_there(folders: list[str]) -> list[str]:
    """Those of `folders` that exist: what a message of where a search looked names (one that is not
    there held nothing to find; a new user's machine has none of the four), NO_FOLDER for none."""
    from session_watcher.base import sysos

    return [f for f in folders if sysos.isdir(f)]


def sources(roots: list[str] | None = None) -> tuple[list[str], list[Source]]:
    """(the folders looked in, every log found there): with `roots` (folders the user named), the
    fallback agent's logs under them; without, every agent's logs in its own folders."""
    if roots:
        return roots, [claimed(src) for src in FALLBACK.sources(roots)]
    looked: list[str] = []
    found: list[Source] = []
    for a in AGENTS:
        folders = a.roots()
        looked += folders
        found += a.sources(folders)
    return looked, found
