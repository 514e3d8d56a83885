"""Reading a Codex rollout into the fold: the shell around `agents.codex.rollout` (file I/O here).

`state.session.sync_file` hands every read to `decode`: a file whose first line opens a rollout is
decoded here, the decoder's state kept in the reader's cursor (under CURSOR_KEY), so a hook run goes
on where the last one stopped and a cursor reset starts both again. A finished rollout may end
without a newline (Codex's own files end with one; copies of them sometimes do not): a last line
that parses as a whole record is taken and the cursor moves past it.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from session_watcher.agents.codex import rollout

if TYPE_CHECKING:
    from session_watcher.core.shapes import Event

CURSOR_KEY = "codex"
ID_CHARS = 36  # a thread id: a UUID


def owns(before: dict[str, Any] | None, lines: list[bytes]) -> bool:
    """True when this read is of a rollout: the cursor says so, or the file's first line does."""
    if before and CURSOR_KEY in before:
        return True
    return not (before or {}).get("offset") and bool(lines) and rollout.is_rollout_head(lines[0])


def decode(path: str, before: dict[str, Any] | None, cursor: dict[str, Any], lines: list[bytes],
           ) -> tuple[list[bytes], dict[str, Any], list[Event], int]:
    """(lines, cursor, events, bad lines) of one read of a rollout (`owns` said it is one)."""
    d = (before or {}).get(CURSOR_KEY) or rollout.new_decoder()
    if not lines:
        got = _last_line(path, cursor)
        if got is not None:
            lines, cursor = got
    cursor[CURSOR_KEY] = d
    if not lines:
        return lines, cursor, [], 0
    events, bad = rollout.parse_lines(lines, d)
    return lines, cursor, events, bad


def _last_line(path: str, cursor: dict[str, Any]) -> tuple[list[bytes], dict[str, Any]] | None:
    """The file's last line when it has no newline but is a whole record, with the cursor past it."""
    from session_watcher.core import fastjson
    from session_watcher.core.transcript import MAX_LINE_BYTES
    from session_watcher.state.reader import _Open

    offset = int(cursor.get("offset", 0))
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        size = os.fstat(fd).st_size
        if not 0 < size - offset <= MAX_LINE_BYTES:
            return None
        tail = os.pread(fd, size - offset, offset)
        if b"\n" in tail or not tail.rstrip().endswith(b"}"):
            return None
        try:
            rec = fastjson.loads(tail)
        except ValueError:
            return None
        if not isinstance(rec, dict) or "payload" not in rec:
            return None
        return [tail], _Open(path, fd, cursor).moved(size)
    finally:
        os.close(fd)


def session_id(path: str) -> str | None:
    """The thread id a rollout's file name ends with (`rollout-<time>-<id>.jsonl`), else None."""
    name = os.path.basename(path)
    if not (name.startswith("rollout-") and name.endswith(".jsonl")):
        return None
    sid = name.removesuffix(".jsonl")[-ID_CHARS:]
    return sid if len(sid) == ID_CHARS and sid.count("-") == 4 else None


def is_rollout(path: str) -> bool:
    """True when the file at `path` opens as a Codex rollout (its first bytes)."""
    try:
        with open(path, "rb") as fh:
            return rollout.is_rollout_head(fh.read(512))
    except OSError:
        return False
