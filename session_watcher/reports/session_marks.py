"""The session page's marks beyond the watcher's own trace: the cold-cache guard's holds (its log)
and the restarts taken (the handoffs on this machine), each with its time and words for its label.

The gate, its reminders and the cold returns are the trace's alerts (`session_page_data`); these
come from files the hooks write beside the states. `Marks` keeps them between a live page's
updates and reads a file again only when it changed (the guard log's size and mtime, the taken
handoffs' folder's mtime: a handoff is written by a rename, which changes it).
"""

from __future__ import annotations

import os
from typing import Any

from session_watcher.reports.fmt import a_time

_Stamp = tuple[int, int, int] | None


def _stamp(path: str) -> _Stamp:
    """(size, mtime, inode) of `path`, or None when it is not there."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns, st.st_ino


class Marks:
    """One session page's holds and restarts, brought up to date by `add` on each model."""

    def __init__(self, transcript: str) -> None:
        self.transcript = transcript
        self._holds: tuple[object, list[dict[str, Any]]] | None = None
        self._out: tuple[object, list[dict[str, Any]]] | None = None
        self._in: tuple[object, str | None] | None = None

    def add(self, model: dict[str, Any], head: list[bytes] | None = None) -> None:
        """The page model's `holds` and `restarts` (empty for a session without an id); `head` as
        `add_marks` takes it."""
        from session_watcher.base.paths import guard_log_file
        from session_watcher.state import handoffs

        sid = model.get("sessionId")
        if not sid:
            model["holds"], model["restarts"] = [], []
            return
        key: object = (sid, _stamp(guard_log_file()))
        if self._holds is None or self._holds[0] != key:
            self._holds = (key, holds(sid))
        key = (sid, _stamp(handoffs.folder("taken")))
        if self._out is None or self._out[0] != key:
            self._out = (key, restarts_out(sid))
        # the note is in the transcript's first lines, before its first call: read until there is one
        called = any(_is_call(r) for r in model.get("rows") or ())
        st = _stamp(self.transcript) if called else None
        key = st[2] if st else object()  # the file's inode; object(): never equal, read again
        if self._in is None or self._in[0] != key:
            self._in = (key, parent_note(self.transcript, head))
        t0 = model.get("t0")
        came = [{"ts": t0, "kind": "in", "other": self._in[1]}] if self._in[1] and t0 is not None else []
        model["holds"] = list(self._holds[1])
        model["restarts"] = sorted([*self._out[1], *came], key=lambda r: r["ts"])


def _is_call(row: object) -> bool:
    """A call's row: the page's dict, or as a packed model keeps it (PageBuilder: a call's number)."""
    return row.get("kind") == "call" if isinstance(row, dict) else isinstance(row, int)


def add_marks(model: dict[str, Any], transcript: str, head: list[bytes] | None = None) -> None:
    """The page model's `holds` and `restarts`, read once (a page made once). `head`: the transcript's
    first NOTE_LINES complete lines (or all of them), already read; else they are read."""
    Marks(transcript).add(model, head)


def holds(session_id: str) -> list[dict[str, Any]]:
    """The guard's words at this session's cold prompts: {ts, call, asked} (asked: the prompt was
    held back, not sent; else the guard only said what it would cost)."""
    from session_watcher.reports.collect import guard_warnings

    out = []
    for rec in guard_warnings()[0]:
        ts = rec.get("ts")
        if rec.get("sessionId") != session_id or not a_time(ts):
            continue
        out.append({"ts": float(ts), "call": rec.get("call"), "asked": rec.get("asked") is True})
    return sorted(out, key=lambda h: h["ts"])


def restarts_out(session_id: str) -> list[dict[str, Any]]:
    """The restarts from this session: {ts, kind "out", other}, at the writing of each handoff a
    fresh session took."""
    from session_watcher.state import handoffs

    out: list[dict[str, Any]] = []
    try:
        names = sorted(n for n in os.listdir(handoffs.folder("taken")) if n.endswith(".json"))
    except OSError:
        names = []
    for name in names:
        doc = handoffs.taken(name[: -len(".json")])
        created = (doc or {}).get("createdAt")
        if doc and doc.get("parentSession") == session_id and a_time(created):
            out.append({"ts": float(created), "kind": "out", "other": name[: -len(".json")]})
    return out


def parent_note(transcript: str, head: list[bytes] | None = None) -> str | None:
    """The session this one started from with a handoff (its note, in the transcript: in `head`, its
    first lines already read, when given), or None."""
    from session_watcher.core.handoff import parent_of
    from session_watcher.sessions.restarts import note_in, note_of

    note = note_of(transcript) if head is None else note_in(head)
    return parent_of(note) if note else None
