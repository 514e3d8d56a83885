"""Rollout lines through msgspec, for the readers of whole rollouts (replay, the report).

`rollout.parse_lines` reads a marked line with the JSON scanner, every value of it built (a
`session_meta` line carries the instructions, a `compacted` one the compacted history: tens of kB
of text the decoder never looks at). Bound (`rollout.bind_schema`), a line is read instead into the
keys the decoder takes, the rest passed over unbuilt, and handed to it as the same dicts the JSON
reading gives for those keys. Where the two readings could differ the line goes the JSON way, as
the Claude Code decoder's lines do (`claude_code.records.decode`): bytes that are not UTF-8, a run
of more digits than `int()` takes, whatever msgspec refuses (NaN, a lone surrogate, a `payload` that
is no object, nesting past its guard). The hooks never bind it: a few lines do not pay msgspec's
import.

No `from __future__ import annotations` here: the structs' annotations are then objects, where as
strings msgspec would compile each one (a `typing.ForwardRef`) when the decoder is built.
"""

from typing import Any

import msgspec

from session_watcher.core.markscan import long_digit_run


class Payload(msgspec.Struct):
    """The keys of a line's `payload` any handler of `rollout.HANDLERS` reads, each as JSON reads it."""

    type: Any = None
    info: Any = None
    thread_settings: Any = None
    model: Any = None
    usage: Any = None
    response_id: Any = None
    thread_token_usage: Any = None
    id: Any = None
    source: Any = None
    role: Any = None
    content: Any = None
    call_id: Any = None  # a tool call's (`_use`, `_result`)
    name: Any = None
    arguments: Any = None
    input: Any = None
    action: Any = None
    output: Any = None


class Line(msgspec.Struct):
    timestamp: Any = None
    type: Any = None
    payload: Payload | None = None


_decode = msgspec.json.Decoder(Line).decode
_fields = msgspec.structs.asdict
NOT_JSON = (msgspec.DecodeError, RecursionError)


def record(line: bytes, int_digits: int) -> dict[str, Any] | None:
    """The line as `rollout.record_events` reads it (its `type`, `timestamp` and `payload`, the
    payload's keys the handlers read), or None where only the JSON reading can say. `int_digits`:
    sys.get_int_max_str_digits(), 0 for no limit."""
    if not line.isascii():
        try:
            line.decode()
        except UnicodeDecodeError:
            return None
    if int_digits and len(line) > int_digits and long_digit_run(line, int_digits):
        return None
    got = _decoded(line)
    if got is None:
        return None
    p = got.payload
    return {"type": got.type, "timestamp": got.timestamp, "payload": None if p is None else _fields(p)}


def _decoded(line: bytes) -> Line | None:
    """msgspec one frame deeper than `fastjson.loads` runs the C scanner (`record` stands where
    `loads` does): its recursion guard is one level more lenient, so both refuse a line nested too
    deeply at the same depth."""
    try:
        return _decode(line)
    except NOT_JSON:
        return None
