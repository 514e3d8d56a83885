"""Reading a Codex rollout into the fold: the decoder's state in the reader's cursor.

`state.session.sync_file` hands every read of a rollout (`agents.agent_reading`: its first line
opens one, or the cursor holds the decoder) to `decode`, the decoder's state kept in the reader's
cursor (under CURSOR_KEY), so a hook run goes on where the last one stopped and a cursor reset
starts both again. A finished rollout may end
without a newline (Codex's own files end with one; copies of them sometimes do not): the reader's
`state.reader.last_whole_line` takes a last line that parses as a whole record. A cursor whose
decoder state predates the tool calls' reading (no `tools` key) resets the session's state once: its
fold counted none of the calls before, and the rollout has them all.
"""

from __future__ import annotations

import os

from session_watcher.agents.codex import rollout

TYPE_CHECKING = False  # typing (with re) is several ms of a folding hook's start: annotations only
if TYPE_CHECKING:
    from typing import Any

    from session_watcher.core.shapes import Event

CURSOR_KEY = "codex"  # the agent's name (agents.codex.NAME): the registry finds a rollout's cursor by it
ID_CHARS = 36  # a thread id: a UUID


def decode(before: dict[str, Any] | None, cursor: dict[str, Any], lines: list[bytes], whole: bool,
           ) -> tuple[list[Event], int]:
    """(events, bad lines) of one read of a rollout (the registry found it is one): the decoder's
    state from the cursor before the read, kept in the cursor after it; `whole`: one chunk of
    complete lines (replay's read)."""
    d = (before or {}).get(CURSOR_KEY) or rollout.new_decoder()
    if isinstance(d, dict) and "tools" not in d and before:  # a fold of a decoder that passed tool calls over:
        from session_watcher.core.errors import Reset  # the state starts again from the rollout (once)

        raise Reset(str(before.get("path")))
    cursor[CURSOR_KEY] = d
    if whole and lines:  # replay's read of a whole rollout: its marked lines through msgspec
        from session_watcher.agents.seam import split_lines

        rollout.bind_schema()
        lines = split_lines(lines[0])[0]
    if not lines:
        return [], 0
    return rollout.parse_lines(lines, d)


def session_id(path: str) -> str | None:
    """The thread id a rollout's file name ends with (`rollout-<time>-<id>.jsonl`), else None."""
    name = os.path.basename(path)
    if not (name.startswith("rollout-") and name.endswith(".jsonl")):
        return None
    sid = name.removesuffix(".jsonl")[-ID_CHARS:]
    return sid if len(sid) == ID_CHARS and sid.count("-") == 4 else None
