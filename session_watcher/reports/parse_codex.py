"""A Codex rollout's bytes -> the report's rows (`parse.Row`), by the rollout decoder the hooks use.

A rollout line does not stand alone (a call's model is the latest `turn_context`, a `token_count`
counts only where the running total changed), so a rollout is read from its first byte with one
decoder (`agents.codex.rollout`) carried from chunk to chunk; the index reads a rollout again from
its start when it grows. Its calls are rows of kind "c" (a subagent thread's are side rows), its
`compacted` lines rows of kind "k"; its working folder row is `parse.head_dir`'s, as for a transcript.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from session_watcher.agents.codex import rollout
from session_watcher.core import fastjson
from session_watcher.reports.kinds import KIND_CALL, KIND_COMPACT
from session_watcher.reports.parse import MAX_LINE_BYTES, Row

if TYPE_CHECKING:
    from collections.abc import Callable

    Parser = Callable[[bytes | bytearray, int, int | None], tuple[list[Row], int]]

_new = tuple.__new__


def rollout_parser(head: bytes | bytearray) -> Parser | None:
    """A chunk parser for the file whose first bytes are `head` when it is a Codex rollout, else None."""
    if not rollout.is_rollout_head(bytes(head[:512])):
        return None
    d = rollout.new_decoder()

    def parse(chunk: bytes | bytearray, base: int = 0, size: int | None = None) -> tuple[list[Row], int]:
        end = chunk.rfind(b"\n", 0, len(chunk) if size is None else size)
        rows: list[Row] = []
        pos = 0
        while pos <= end:
            stop = chunk.find(b"\n", pos, end + 1)
            line = bytes(chunk[pos:stop])
            at, pos = base + pos, stop + 1
            if len(line) > MAX_LINE_BYTES or not any(m in line for m in rollout.MARKERS):
                continue
            row = _row(line, at, d)
            if row is not None:
                rows.append(row)
        return rows, max(pos, 0)

    return parse


def _row(line: bytes, offset: int, d: dict[str, object]) -> Row | None:
    try:
        rec = fastjson.loads(line)
    except ValueError:
        return None
    ev = rollout.record_events(rec, d) if isinstance(rec, dict) else None
    if ev is None:
        return None
    if ev[0] == "call":  # ("call", key, ts, model, sidechain, uncached, cr, cw, out, cw5m, cw1h, _)
        _c, key, ts, model, side, inp, cr, cw, out, cw5, cw1, _x = ev
        return _new(Row, (offset, KIND_CALL, ts, key, model, side, inp, out, cr, cw, cw5, cw1))
    if ev[0] == "compact":
        return _new(Row, (offset, KIND_COMPACT, ev[1], None, None, False, 0, 0, 0, 0, 0, 0))
    return None
