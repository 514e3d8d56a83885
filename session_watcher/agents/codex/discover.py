"""Where Codex keeps its rollouts: `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl` (default
`~/.codex`) and `$CODEX_HOME/archived_sessions/` (archived threads, flat or by day)."""

from __future__ import annotations

import os

from session_watcher.agents.codex.reader import session_id


def codex_home() -> str:
    """`$CODEX_HOME`, else `~/.codex`."""
    return os.environ.get("CODEX_HOME") or os.path.join(os.path.expanduser("~"), ".codex")


def _walk(folder: str, depth: int) -> list[str]:
    """Rollout files in `folder` and in its subfolders `depth` levels down (sorted, files only)."""
    found: list[str] = []
    try:
        with os.scandir(folder) as it:
            entries = sorted(it, key=lambda de: de.name)
    except OSError:
        return found
    for de in entries:
        try:
            if de.is_file() and de.name.startswith("rollout-") and de.name.endswith(".jsonl"):
                found.append(de.path)
            elif depth > 0 and de.is_dir(follow_symlinks=False):
                found += _walk(de.path, depth - 1)
        except OSError:
            continue
    return found


def rollouts(home: str | None = None) -> list[tuple[str, str]]:
    """(thread id, path) of every rollout under the Codex home, the live ones first, then the archived."""
    home = home or codex_home()
    paths = _walk(os.path.join(home, "sessions"), 3) + _walk(os.path.join(home, "archived_sessions"), 3)
    return [(sid, p) for p in paths if (sid := session_id(p)) is not None]
