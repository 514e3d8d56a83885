"""What an agent is to the rest of the package: an `Agent` per agent (SPEC "Agents").

The state, the sessions, the reports and the hooks reach an agent only through this type, found in
the registry (`session_watcher.agents`): where its logs are, which file is its log, how its lines
become the core's events, what its records give a handoff note, and what its hooks may print. Each
agent's folder subclasses it once (its methods import the agent's modules when called) and the
registry holds one instance of each. A plain class: the hooks import it on every run.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported on the hooks' path
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    from session_watcher.agents.source import Source
    from session_watcher.core.handoff import Digest
    from session_watcher.core.shapes import Event


class Agent:
    """One agent: its facts as class attributes, its ways as methods (each agent overrides them)."""

    # what `status`, the report, the pages and the OTLP points call it; its hook command's word; the
    # key that marks the reader's cursors on its logs (`agents.agent_reading`)
    name = ""
    # its logs carry no mark of their own: it reads every log no other agent claims (one agent is)
    fallback = False
    # its lines do not stand alone: its decoder's state rides in the reader's cursor, under its name,
    # and a file is read from its first byte (the report's index reads it again whole)
    stateful = False
    open_end = False  # a finished log may end without a newline: its last line counts
    status_line = True  # False: no status line, so alerts also go to the next prompt's message
    # its one SessionStart hook gives the pending handoff (the inject row), and a compaction drops the
    # guard's handoff (its `/compact` reaches no prompt hook)
    one_start_hook = False
    clear_words = "/clear"  # how the user starts the fresh session a held prompt's handoff waits for

    def claims(self, head: bytes) -> bool:
        """True when a file opening with these bytes (its first line, or at least 512 bytes) is its log."""
        raise NotImplementedError

    def session_id(self, path: str) -> str | None:
        """The session a log's path names; None when the name is not one of its logs'."""
        raise NotImplementedError

    def roots(self) -> list[str]:
        """The folders its logs are in on this machine."""
        raise NotImplementedError

    def sources(self, roots: list[str]) -> list[Source]:
        """Every log under these folders (main and subagent files)."""
        raise NotImplementedError

    def read(self, before: dict[str, Any] | None, cursor: dict[str, Any], lines: list[bytes], whole: bool,
             ) -> tuple[list[Event], int]:
        """(events, bad lines) of one read: a hook's new lines, or with `whole` one chunk of complete
        lines (replay's read); `before` and `cursor` are the reader's cursor before and after it
        (a stateful agent keeps its decoder's state in `cursor`)."""
        raise NotImplementedError

    def line_markers(self) -> tuple[bytes, ...]:
        """Byte strings of which every line its decoder takes an event or a state from holds one (the
        report searches them over whole chunks and hands it only those lines); () for every line."""
        return ()

    def cwd_of(self, rec: Mapping[str, Any]) -> str | None:
        """The folder a parsed record of its log says the session ran in, None."""
        raise NotImplementedError

    def digest(self, d: Digest) -> Callable[[Mapping[str, Any]], None]:
        """What a parsed record of its log, fed in order, adds to the handoff note's Digest."""
        raise NotImplementedError

    def hook_output(self, _event: str, out: dict[str, Any] | None) -> dict[str, Any] | None:
        """What its hook may print of a run's output for `event` (None: nothing)."""
        return out

    def __repr__(self) -> str:
        return f"Agent({self.name!r})"
