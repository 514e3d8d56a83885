"""An agent's own decoder -> the report's rows (`parse.Row`), for a log whose lines do not stand alone.

Such a log (a Codex rollout: a call's model is the latest `turn_context`, a `token_count` counts only
where the running total changed) is read from its first byte with one decoder (its agent's
`line_reader`: the hooks' decoder, a line at a time, its state in a cursor) carried from chunk to
chunk; the index reads it again from its start when it grows. Only the lines holding one of its
markers (`Agent.line_markers`: the lines its decoder takes anything from) reach it, found over the
whole chunk by `core.markscan` (the Claude Code parser's search), each with the markers it holds:
most lines, messages and tool output, are never cut out of the chunk nor looked at one by one.
Its calls are rows of kind "c" (a subagent thread's are side rows), its compactions rows of kind
"k"; its working folder row is `parse.head_dir`'s, as for a transcript.
"""

from __future__ import annotations

from session_watcher.agents import agent_for_head
from session_watcher.core.markscan import finder, marked_lines
from session_watcher.reports.kinds import KIND_CALL, KIND_COMPACT
from session_watcher.reports.parse import MAX_LINE_BYTES

TYPE_CHECKING = False  # typing is slow to import (a report's start-up), and only the checker needs it

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from session_watcher.core.shapes import Event
    from session_watcher.reports.parse import Row

    Parser = Callable[[bytes | bytearray, int, int | None], tuple[list[Row], int]]

HEAD_BYTES = 512  # what the registry needs of a file's start to tell its agent


def events_parser(head: bytes | bytearray) -> Parser | None:
    """A chunk parser for the file whose first bytes are `head` when its agent decodes it with a
    state carried from line to line, else None (the report's own parser reads it)."""
    agent = agent_for_head(bytes(head[:HEAD_BYTES]))
    if not agent.stateful:
        return None
    take = agent.line_reader({})  # one decoder, its state carried from line to line
    finders = tuple(finder(m) for m in agent.line_markers())

    def parse(chunk: bytes | bytearray, base: int = 0, size: int | None = None) -> tuple[list[Row], int]:
        end = chunk.rfind(b"\n", 0, len(chunk) if size is None else size)
        rows: list[Row] = []
        # the lines its decoder takes: those with one of its markers, found over the whole chunk
        spans = marked_lines(chunk, finders, end + 1) if finders else _lines(chunk, end + 1)
        for start, stop, which in spans:
            if stop - start > MAX_LINE_BYTES:
                continue
            ev = take(bytes(chunk[start:stop]), which)
            if ev:  # None: no event; False: a bad line
                row = _row(ev, base + start)
                if row is not None:
                    rows.append(row)
        return rows, end + 1

    return parse


def _lines(chunk: bytes | bytearray, end: int) -> Iterator[tuple[int, int, int]]:
    """(start, stop, 0) of every line of chunk[:end] (`end` just past a newline, or 0)."""
    pos = 0
    while pos < end:
        stop = chunk.find(b"\n", pos, end)
        yield pos, stop, 0
        pos = stop + 1


def _row(ev: Event, offset: int) -> Row | None:
    if ev[0] == "call":  # ("call", key, ts, model, sidechain, uncached, cr, cw, out, cw5m, cw1h, _)
        _c, key, ts, model, side, inp, cr, cw, out, cw5, cw1, _x = ev
        return (offset, KIND_CALL, ts, key, model, side, inp, out, cr, cw, cw5, cw1)
    if ev[0] == "compact":
        return (offset, KIND_COMPACT, ev[1], None, None, False, 0, 0, 0, 0, 0, 0)
    return None
