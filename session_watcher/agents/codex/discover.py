"""Where Codex keeps its rollouts: `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl` (default
`~/.codex`) and `$CODEX_HOME/archived_sessions/` (archived threads, flat or by day)."""

from __future__ import annotations

import os

from session_watcher.agents.codex.reader import CURSOR_KEY, session_id

TYPE_CHECKING = False  # typing (with re) is several ms of a report's start: annotations only
if TYPE_CHECKING:
    from collections.abc import Iterator

    from session_watcher.agents.source import Source

FOLDERS = ("sessions", "archived_sessions")  # under the Codex home: the live rollouts, the archived


def codex_home() -> str:
    """`$CODEX_HOME`, else `~/.codex`."""
    return os.environ.get("CODEX_HOME") or os.path.join(os.path.expanduser("~"), ".codex")


def _walk(folder: str, depth: int, named: bool = False) -> Iterator[str]:
    """Rollout files in `folder` and in its subfolders `depth` levels down (sorted), one folder listed
    at a time: a caller that stops early lists no more. `named`: an entry named as a rollout that is
    no file (a folder so named, a link to nothing) too, never entered (`Agent.sources`' rule)."""
    try:
        with os.scandir(folder) as it:
            entries = sorted(it, key=lambda de: de.name)
    except OSError:
        return
    for de in entries:
        try:
            if de.name.startswith("rollout-") and de.name.endswith(".jsonl") and (named or de.is_file()):
                yield de.path
            elif depth > 0 and de.is_dir(follow_symlinks=False):
                yield from _walk(de.path, depth - 1, named)
        except OSError:
            continue


def roots(home: str | None = None) -> list[str]:
    """The folders Codex keeps its rollouts in (absolute)."""
    home = os.path.abspath(home or codex_home())
    return [os.path.join(home, folder) for folder in FOLDERS]


def rollouts(home: str | None = None, folders: list[str] | None = None, named: bool = False,
             ) -> list[tuple[str, str]]:
    """(thread id, path) of every rollout under the Codex home (or under `folders`), the live ones
    first, then the archived; `named`: those that are no file too (`_walk`)."""
    paths = [p for folder in (roots(home) if folders is None else folders) for p in _walk(folder, 3, named)]
    return [(sid, p) for p in paths if (sid := session_id(p)) is not None]


def session_ids(folders: list[str]) -> Iterator[str]:
    """The thread id of each rollout under `folders`, from its name as the folders are listed (no
    file read): what `doctor` counts, up to its bound."""
    for folder in folders:
        for path in _walk(folder, 3):
            sid = session_id(path)
            if sid is not None:
                yield sid


def sources(folders: list[str]) -> list[Source]:
    """A Source per rollout under `folders`: its thread id the session, the agent's name its project
    (its working folder comes from its session_meta); one named as a rollout that is no file too
    (`Agent.sources`' rule: whoever reads it names it)."""
    from session_watcher.agents.source import Source

    name = CURSOR_KEY  # the agent's name
    return [Source(os.path.abspath(path), sid, name, False, name)
            for sid, path in rollouts(folders=folders, named=True)]
