"""One log file of a session, as an agent's discovery finds it (`Agent.sources`)."""

from __future__ import annotations

TYPE_CHECKING = False  # typing is slow to import (a report's start-up), and only the checker needs it
if TYPE_CHECKING:
    from typing import NamedTuple
else:
    from session_watcher.core.named import NamedTuple


class Source(NamedTuple):
    """One log file: the session it belongs to, its project folder, main or subagent, and the agent
    whose log it is (None: the registry's fallback, the agent whose logs have no mark of their own)."""

    path: str
    session: str
    project: str
    sub: bool
    agent: str | None = None
