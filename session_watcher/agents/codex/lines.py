"""Rollout lines through msgspec, for the readers of whole rollouts (replay, the report).

`rollout.parse_lines` reads a marked line with the JSON scanner, every value of it built (a
`session_meta` line carries the instructions, a `compacted` one the compacted history: tens of kB
of text the decoder never looks at). Bound (`rollout.bind_schema`), a line is read instead into the
keys the decoder takes, the rest passed over unbuilt, and handed to it as the same dicts the JSON
reading gives for those keys (`record`); a `token_count` line, most of them, straight into the
counts its snapshot takes (`counts`), no dict built. Where the two readings could differ the line goes the JSON way, as
the Claude Code decoder's lines do (`claude_code.records.decode`): bytes that are not UTF-8, a run
of more digits than `int()` takes, whatever msgspec refuses (NaN, a lone surrogate, a `payload` that
is no object, nesting past its guard). The hooks never bind it: a few lines do not pay msgspec's
import.

No `from __future__ import annotations` here: the structs' annotations are then objects, where as
strings msgspec would compile each one (a `typing.ForwardRef`) when the decoder is built.
"""

from collections.abc import Callable
from typing import Any, TypeVar

from session_watcher.agents.schema import msgspec
from session_watcher.core.caps import count
from session_watcher.core.markscan import long_digit_run

T = TypeVar("T")


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


class Counts(msgspec.Struct):
    """A usage object of a `token_count` snapshot: the counts `rollout` reads, each as JSON reads it."""

    input_tokens: Any = None
    cached_input_tokens: Any = None
    cache_write_input_tokens: Any = None
    output_tokens: Any = None
    reasoning_output_tokens: Any = None


class Info(msgspec.Struct):
    total_token_usage: Counts | None = None
    last_token_usage: Counts | None = None


class CountPayload(msgspec.Struct):
    type: Any = None
    info: Info | None = None


class CountLine(msgspec.Struct):
    """A `token_count` line (most of the marked lines) read straight into its counts: no dict built."""

    timestamp: Any = None
    type: Any = None
    payload: CountPayload | None = None


_decode = msgspec.json.Decoder(Line).decode
_decode_counts = msgspec.json.Decoder(CountLine).decode
_fields = msgspec.structs.asdict
NOT_JSON = (msgspec.DecodeError, RecursionError)  # ValidationError (a field of another type) is a DecodeError


def record(line: bytes, int_digits: int) -> tuple[object, object, Any] | None:
    """The line as `rollout.line_reader` reads it: its `type`, `timestamp` and `payload` (the payload's
    keys the handlers read, as a dict), or None where only the JSON reading can say. `int_digits`:
    sys.get_int_max_str_digits(), 0 for no limit."""
    got = _decoded(line, _decode) if _as_json_reads(line, int_digits) else None
    if got is None:
        return None
    p = got.payload
    return got.type, got.timestamp, None if p is None else _fields(p)


def counts(line: bytes, int_digits: int) -> tuple[object, list[int] | None, tuple[int, int, int, int] | None] | None:
    """A `token_count` event's line as `rollout.snapshot` takes it: (its timestamp, the running total
    as `rollout._total_key` reads it, the last call's usage as `rollout.usage_of` does); None where
    `record` must say (another kind of line, a usage or `info` that is no object, or `record`'s
    own cases)."""
    got = _decoded(line, _decode_counts) if _as_json_reads(line, int_digits) else None
    p = None if got is None else got.payload
    if p is None or got is None or got.type != "event_msg" or p.type != "token_count":
        return None
    info = p.info
    if info is None:  # `info: null`: the first snapshot of older versions
        return got.timestamp, None, None
    total, last = info.total_token_usage, info.last_token_usage
    return (got.timestamp, None if total is None else [
        count(total.input_tokens), count(total.cached_input_tokens), count(total.cache_write_input_tokens),
        count(total.output_tokens), count(total.reasoning_output_tokens)], None if last is None else (
        count(last.input_tokens), count(last.cached_input_tokens),
        -1 if (write := last.cache_write_input_tokens) is None else count(write), count(last.output_tokens)))


def _as_json_reads(line: bytes, int_digits: int) -> bool:
    """False where msgspec and the JSON reading could part before any parsing: bytes that are not
    UTF-8, a run of more digits than `int()` takes."""
    if not line.isascii():
        try:
            line.decode()
        except UnicodeDecodeError:
            return False
    return not (int_digits and len(line) > int_digits and long_digit_run(line, int_digits))


def _decoded(line: bytes, decode: Callable[[bytes], T]) -> T | None:
    """msgspec one frame deeper than `fastjson.loads` runs the C scanner (`record` stands where
    `loads` does): its recursion guard is one level more lenient, so both refuse a line nested too
    deeply at the same depth."""
    try:
        return decode(line)
    except NOT_JSON:
        return None
