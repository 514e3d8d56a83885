"""Reading a Codex rollout into the fold: the decoder's state in the reader's cursor.

`state.session.sync_file` hands every read of a rollout (`agents.agent_reading`: its first line
opens one, or the cursor holds the decoder) to `decode`, the decoder's state kept in the reader's
cursor (under CURSOR_KEY), so a hook run goes on where the last one stopped and a cursor reset
starts both again. A finished rollout may end
without a newline (Codex's own files end with one; copies of them sometimes do not): the reader's
`state.reader.last_whole_line` takes a last line that parses as a whole record. A cursor whose
decoder state predates the tool calls' reading (no `tools` key) counted none of them: its next read
hands the fold the tool calls of the lines it had read first (`passed_over`), once.
"""

from __future__ import annotations

from session_watcher.base import sysos

TYPE_CHECKING = False  # typing (with re) is several ms of a folding hook's start: annotations only
if TYPE_CHECKING:
    from typing import Any

    from session_watcher.core.shapes import Event

CURSOR_KEY = "codex"  # the agent's name (agents.codex.NAME): the registry finds a rollout's cursor by it
ID_CHARS = 36  # a thread id: a UUID
PASSED_CHUNK = 8 << 20  # bytes read at a time by `passed_over`


def decode(before: dict[str, Any] | None, cursor: dict[str, Any], lines: list[bytes], whole: bool,
           ) -> tuple[list[Event], int]:
    """(events, bad lines) of one read of a rollout (the registry found it is one): the decoder's
    state from the cursor before the read, kept in the cursor after it; `whole`: one chunk of
    complete lines (replay's read)."""
    from session_watcher.agents.codex import rollout  # once a read (not at the module's import: `discover`)

    d = (before or {}).get(CURSOR_KEY) or rollout.new_decoder()
    past: list[Event] = []
    if isinstance(d, dict) and "tools" not in d and before:  # a fold of a decoder that passed tool calls over
        past = passed_over(before)
        d["tools"] = True
    cursor[CURSOR_KEY] = d
    if whole and lines:  # replay's read of a whole rollout: its marked lines through msgspec
        from session_watcher.agents.seam import split_lines

        rollout.bind_schema()
        lines = split_lines(lines[0])[0]
    if not lines:
        return past, 0
    events, bad = rollout.parse_lines(lines, d)
    return (past + events if past else events), bad


def passed_over(before: dict[str, Any]) -> list[Event]:
    """The tool calls and outputs of the lines a decoder that passed them over read (the cursor
    `before`'s, up to its offset), in order: folded ahead of the new lines, they give health what a
    fold from the start gives it, and nothing else of the state moves (its alerts, the guard's
    marks, a prepared handoff stay as the user saw them). Read once, a chunk at a time."""
    path, end = before.get("path"), before.get("offset")
    if not isinstance(path, str) or type(end) is not int:
        return []
    from session_watcher.agents.codex import rollout

    d = rollout.new_decoder()
    got: list[Event] = []
    rest = b""
    try:
        with open(path, "rb") as fh:
            while end > 0:
                chunk = fh.read(min(PASSED_CHUNK, end))
                if not chunk:
                    break
                end -= len(chunk)
                data = rest + chunk
                cut = data.rfind(b"\n") + 1 if end else len(data)  # the cursor's offset ends a line
                rest = data[cut:]
                events = rollout.parse_lines(data[:cut].split(b"\n"), d)[0]
                got += [ev for ev in events if ev[0] in ("use", "result")]
    except OSError:
        return []
    return got


def session_id(path: str) -> str | None:
    """The thread id a rollout's file name ends with (`rollout-<time>-<id>.jsonl`), else None."""
    name = sysos.basename(path)
    if not (name.startswith("rollout-") and name.endswith(".jsonl")):
        return None
    sid = name.removesuffix(".jsonl")[-ID_CHARS:]
    return sid if len(sid) == ID_CHARS and sid.count("-") == 4 else None
