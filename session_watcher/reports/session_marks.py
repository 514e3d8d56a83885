"""The session page's marks beyond the watcher's own trace: the cold-cache guard's holds (its log)
and the restarts taken (the handoffs on this machine), each with its time and words for its label.

The gate, its reminders and the cold returns are the trace's alerts (`session_page_data`); these
come from files the hooks write beside the states, read once when the page is made.
"""

from __future__ import annotations

import os
from typing import Any


def add_marks(model: dict[str, Any], transcript: str, head: list[bytes] | None = None) -> None:
    """The page model's `holds` and `restarts` (empty for a session without an id). `head`: the
    transcript's first NOTE_LINES complete lines (or all of them), already read; else they are read."""
    sid = model.get("sessionId")
    model["holds"] = holds(sid) if sid else []
    model["restarts"] = restarts(sid, transcript, model.get("t0"), head) if sid else []


def holds(session_id: str) -> list[dict[str, Any]]:
    """The guard's words at this session's cold prompts: {ts, call, asked} (asked: the prompt was
    held back, not sent; else the guard only said what it would cost)."""
    from session_watcher.reports.collect import guard_warnings

    out = []
    for rec in guard_warnings()[0]:
        ts = rec.get("ts")
        if rec.get("sessionId") != session_id or not isinstance(ts, int | float) or isinstance(ts, bool):
            continue
        out.append({"ts": float(ts), "call": rec.get("call"), "asked": rec.get("asked") is True})
    return sorted(out, key=lambda h: h["ts"])


def restarts(session_id: str, transcript: str, t0: float | None,
             head: list[bytes] | None = None) -> list[dict[str, Any]]:
    """The restarts with a handoff around this session: {ts, kind, other}; "out" when a fresh
    session took a handoff this one wrote (at the handoff's writing), "in" when this one started
    from another's (at its start)."""
    from session_watcher.core.handoff import parent_of
    from session_watcher.sessions.restarts import note_in, note_of
    from session_watcher.state import handoffs

    out: list[dict[str, Any]] = []
    try:
        names = sorted(n for n in os.listdir(handoffs.folder("taken")) if n.endswith(".json"))
    except OSError:
        names = []
    for name in names:
        doc = handoffs.taken(name[: -len(".json")])
        created = (doc or {}).get("createdAt")
        if doc and doc.get("parentSession") == session_id and isinstance(created, int | float):
            out.append({"ts": float(created), "kind": "out", "other": name[: -len(".json")]})
    note = note_of(transcript) if head is None else note_in(head)
    parent = parent_of(note) if note else None
    if parent and t0 is not None:
        out.append({"ts": t0, "kind": "in", "other": parent})
    return sorted(out, key=lambda r: r["ts"])
