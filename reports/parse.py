"""Transcript bytes -> the rows the warmth report keeps. Pure: bytes in, tuples out.

Only two kinds of line matter here: an assistant line with `message.usage` (one sample of an API
call) and a `compact_boundary` record. Everything else (progress, snapshots, tool results: most of a
file) is passed over by a substring test before any JSON parsing.

Counting rules shared with the rest of the project (`core.transcript`): an API call is keyed by
`message.id` plus `requestId`; a `<synthetic>` model record is skipped; usage is read by the hooks'
own `usage_sample`.
"""

from __future__ import annotations

import json
from typing import NamedTuple

from core.transcript import iso_to_epoch, usage_sample  # the same counting rules as the hooks

MAX_LINE_BYTES = 8 << 20  # longer lines are skipped unparsed
_MARKERS = (b'"usage"', b"compact_boundary")

KIND_CALL = "c"
KIND_COMPACT = "k"


class Row(NamedTuple):
    """One sample of an API call (kind "c") or one compaction mark (kind "k") at byte `offset`."""

    offset: int
    kind: str
    ts: float | None
    key: str | None
    model: str | None
    side: bool
    inp: int
    out: int
    cr: int
    cw: int
    cw5m: int
    cw1h: int


def record_row(rec: dict[str, object], offset: int) -> Row | None:
    """The row one parsed record gives, if any."""
    kind = rec.get("type")
    if kind == "assistant":
        msg = rec.get("message")
        if not isinstance(msg, dict):
            return None
        usage, mid, model = msg.get("usage"), msg.get("id"), msg.get("model")
        if not isinstance(usage, dict) or not isinstance(mid, str) or model == "<synthetic>":
            return None
        rid = rec.get("requestId")
        key = f"{mid}:{rid}" if isinstance(rid, str) else mid
        inp, cr, cw, out, cw5, cw1 = usage_sample(usage)
        return Row(
            offset,
            KIND_CALL,
            iso_to_epoch(rec.get("timestamp")),
            key,
            model if isinstance(model, str) else None,
            rec.get("isSidechain") is True,
            inp,
            out,
            cr,
            cw,
            cw5,
            cw1,
        )
    if kind == "system" and rec.get("subtype") == "compact_boundary":
        return Row(
            offset,
            KIND_COMPACT,
            iso_to_epoch(rec.get("timestamp")),
            None,
            None,
            rec.get("isSidechain") is True,
            0,
            0,
            0,
            0,
            0,
            0,
        )
    return None


def parse_chunk(chunk: bytes, base: int = 0) -> tuple[list[Row], int]:
    """Rows of the complete lines of `chunk` (which starts at file offset `base`) and the bytes used.

    A last line without its newline is not complete yet: it is left for the next run.
    """
    end = chunk.rfind(b"\n")
    if end < 0:
        return [], 0
    rows: list[Row] = []
    pos = 0
    while pos <= end:
        nl = chunk.find(b"\n", pos)
        line = chunk[pos:nl]
        if len(line) <= MAX_LINE_BYTES and (_MARKERS[0] in line or _MARKERS[1] in line):
            try:
                rec = json.loads(line)
            except ValueError:
                rec = None
            if isinstance(rec, dict):
                row = record_row(rec, base + pos)
                if row is not None:
                    rows.append(row)
        pos = nl + 1
    return rows, end + 1
