"""Reading a Codex rollout into the fold: the decoder's state in the reader's cursor.

`state.session.sync_file` hands every read to `decode`: a file whose first line opens a rollout is
decoded here, the decoder's state kept in the reader's cursor (under CURSOR_KEY), so a hook run goes
on where the last one stopped and a cursor reset starts both again. A finished rollout may end
without a newline (Codex's own files end with one; copies of them sometimes do not): the reader's
`state.reader.last_whole_line` takes a last line that parses as a whole record.
"""

from __future__ import annotations

import os

from session_watcher.agents.codex import rollout

TYPE_CHECKING = False  # typing (with re) is several ms of a folding hook's start: annotations only
if TYPE_CHECKING:
    from typing import Any

    from session_watcher.core.shapes import Event

CURSOR_KEY = "codex"
ID_CHARS = 36  # a thread id: a UUID


def owns(before: dict[str, Any] | None, lines: list[bytes]) -> bool:
    """True when this read is of a rollout: the cursor says so, or the file's first line does."""
    if before and CURSOR_KEY in before:
        return True
    return not (before or {}).get("offset") and bool(lines) and rollout.is_rollout_head(lines[0])


def decode(before: dict[str, Any] | None, cursor: dict[str, Any], lines: list[bytes],
           ) -> tuple[list[bytes], dict[str, Any], list[Event], int]:
    """(lines, cursor, events, bad lines) of one read of a rollout (`owns` said it is one); the
    reader's `last_whole_line` gives a finished rollout's last line without a newline."""
    d = (before or {}).get(CURSOR_KEY) or rollout.new_decoder()
    cursor[CURSOR_KEY] = d
    if not lines:
        return lines, cursor, [], 0
    events, bad = rollout.parse_lines(lines, d)
    return lines, cursor, events, bad


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
