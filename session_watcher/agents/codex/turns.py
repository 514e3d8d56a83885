"""Which model calls of a Codex rollout open an agent turn (`Agent.turn_starts`): read by the backtest's
turn-bounded closed loop and the bench, never by a hook (apart from the rollout's reader, whose module
the hooks load)."""

from __future__ import annotations

from session_watcher.agents.codex.rollout import first_marker, line_reader, new_decoder
from session_watcher.agents.seam import MAX_LINE_BYTES
from session_watcher.core import fastjson

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

TURN_STARTS = ("task_started", "turn_started")  # the `event_msg` that opens a turn: the agent was waiting


def turn_starts(lines: Iterable[bytes]) -> set[str]:
    """The main-thread model calls (their keys, as their call events name them) that open an agent
    turn: the first after a `task_started` event (the agent had stopped and waited for the user). A
    user message in the middle of a turn (steering) opens none; a subagent thread's calls none."""
    d = new_decoder()
    take = line_reader(d)
    starts: set[str] = set()
    seen: set[str] = set()
    began = False  # a turn opened since the last call
    for line in lines:
        if not line or len(line) > MAX_LINE_BYTES:
            continue
        if b'_started"' in line:
            try:
                rec = fastjson.loads(line)
            except ValueError:
                rec = None
            p = rec.get("payload") if isinstance(rec, dict) and rec.get("type") == "event_msg" else None
            if isinstance(p, dict) and p.get("type") in TURN_STARTS:
                began = True
                continue
        which = first_marker(line)
        ev = take(line, which) if which else None
        if ev and ev[0] == "call" and not ev[4] and ev[1] not in seen:
            seen.add(ev[1])
            if began:
                starts.add(ev[1])
            began = False
    return starts
