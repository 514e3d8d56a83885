"""The transcript's one msgspec schema, shared by replay (`bulkparse`), the report (`reports.parse`)
and the session page (`reports.session_page_data`): the records as structs of the fields any of them
reads (and the report's view of a call, `CallRecord`: the few fields its rows read), the rule for
when msgspec's reading could differ from `json.loads`'s (`decode`: None, and the caller reads the
line its own JSON way), the usage object's reading from its struct, and the
timestamp reader. The hooks keep their light scanner (`transcript`): these are the other decoder.
Pure. Not for hooks: msgspec costs an import they need not pay.

No `from __future__ import annotations` here: the structs' annotations are then objects, where as
strings msgspec would compile each one (a `typing.ForwardRef`) when the decoders are built."""

from typing import TYPE_CHECKING, Any

from session_watcher.agents.claude_code.transcript import (
    count,
    iso_to_epoch,
    iteration_detail,
    split_writes,
)
from session_watcher.agents.schema import msgspec as msgspec  # noqa: PLC0414 - the parsers take it from here
from session_watcher.core.caps import MAX_COUNT, model_name
from session_watcher.core.markscan import long_digit_run as long_digit_run  # noqa: PLC0414 (tests read it here)

if TYPE_CHECKING:
    from collections.abc import Callable

    from session_watcher.core.shapes import Detail, Iteration, Sample

    # (a fraction's table, a second's, a minute's with its default, the minute's reading)
    StampTables = tuple[Callable[[str], float | None], Callable[[str], int | None],
                        Callable[[str, int], int | None], Callable[[str], int | None]]


# --- the usage object: each count an int, as `transcript.usage_sample` reads it (another type:
# msgspec refuses the line, and the caller's JSON path decides)
class Split(msgspec.Struct):
    ephemeral_5m_input_tokens: int = 0
    ephemeral_1h_input_tokens: int = 0


class Counts(msgspec.Struct):
    """The token counts of a usage object, or of one of its iterations."""

    input_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    output_tokens: int = 0
    cache_creation: Split | None = None


class IterationCounts(Counts):
    """One of `usage.iterations`."""

    type: Any = None
    model: Any = None


class Usage(Counts):
    # left undecoded until a call lists more than one (most lines list one, which changes nothing)
    iterations: list[msgspec.Raw] | None = None


_decode_iteration = msgspec.json.Decoder(IterationCounts).decode


def counts_sample(u: Counts) -> "Sample":
    """`core.transcript.usage_sample` of the same object, from its struct (a count out of range,
    negative or past MAX_COUNT, is 0: `core.transcript.count`)."""
    top = MAX_COUNT  # `count`, written out: four times per call line
    inp, cr, cw, out = u.input_tokens, u.cache_read_input_tokens, u.cache_creation_input_tokens, u.output_tokens
    inp = inp if 0 < inp <= top else 0
    cr = cr if 0 < cr <= top else 0
    cw = cw if 0 < cw <= top else 0
    out = out if 0 < out <= top else 0
    split = u.cache_creation
    if split is None:
        return inp, cr, cw, out, cw, 0
    cw5, cw1 = count(split.ephemeral_5m_input_tokens), count(split.ephemeral_1h_input_tokens)
    cw, cw5 = split_writes(cw, cw5, cw1)
    return inp, cr, cw, out, cw5, cw1


def usage_reading(u: Usage) -> "tuple[Sample, Detail | None]":
    """`core.transcript.usage_reading` of the same object, from its struct. Raises
    msgspec.DecodeError where an iteration is not what the struct says (an item that is not an
    object, a count that is not an int): the caller then takes the JSON path, as for any such line."""
    top = counts_sample(u)
    items = u.iterations
    if items is None or len(items) < 2:
        return top, None
    parts: list[Iteration] = []
    for raw in items:
        it = _decode_iteration(raw)
        parts.append((it.type if isinstance(it.type, str) else None, model_name(it.model), counts_sample(it)))
    return iteration_detail(top, parts)


# --- the records: every field any reader takes, each typed as the JSON reading reads it ------------
# `Any` where a reader tests the value itself (`is True`, isinstance); a struct where it must be an
# object (another type: msgspec refuses the line and the caller's JSON path decides). Absent and null
# read alike everywhere (`.get`), so a field msgspec does not find is None.


class Input(msgspec.Struct):
    """The keys read of a tool's input: a file tool's (`transcript.use_info`) and a label's (the page's)."""

    file_path: Any = None
    notebook_path: Any = None
    path: Any = None
    new_string: Any = None
    old_string: Any = None
    edits: Any = None
    content: Any = None
    new_source: Any = None
    offset: Any = None
    limit: Any = None
    command: Any = None
    pattern: Any = None
    url: Any = None
    query: Any = None
    description: Any = None
    prompt: Any = None
    skill: Any = None


class Block(msgspec.Struct):
    """One block of a message's content: a tool use, a tool result, a text."""

    type: Any = None
    id: Any = None
    name: Any = None
    input: Input | None = None
    tool_use_id: Any = None
    is_error: Any = None
    text: msgspec.Raw = msgspec.Raw(b"null")  # kept encoded: read only for a user's prompt (the page's)


# msgspec takes Raw alone, never in a union (`Raw | None` admits only null): hence the default above
CONTENT = str | list[Block] | None


class Message(msgspec.Struct):
    mid: Any = msgspec.field(default=None, name="id")
    model: Any = None
    usage: Usage | None = None
    content: CONTENT = None


class File(msgspec.Struct):
    filePath: Any = None
    content: Any = None
    startLine: Any = None


class Result(msgspec.Struct):
    """A record's `toolUseResult` when it is an object (a Read's: its file)."""

    file: File | None = None


class Record(msgspec.Struct):
    type: Any = None
    timestamp: Any = None
    isSidechain: Any = None
    isMeta: Any = None
    isCompactSummary: Any = None
    requestId: Any = None
    sessionId: Any = None
    requestSessionId: Any = None  # on a fork's copy of its parent's call: the session that made it
    forkedFrom: Any = None  # on a branch's copies: {sessionId, messageUuid} of the record copied
    cwd: Any = None
    subtype: Any = None
    compactMetadata: Any = None
    version: Any = None
    message: Message | None = None
    toolUseResult: Result | str | list[Any] | bool | int | float | None = None


# --- the report's view: a `Record` of only the fields a call's row reads, the same names, types
# and defaults (test_decoders holds them to `Record`'s). msgspec passes over the other keys, checked
# as JSON but not built: no content, no tool result.


class CallMessage(msgspec.Struct):
    """A `Message` as a call's row reads it: its id, model and usage."""

    mid: Any = msgspec.field(default=None, name="id")
    model: Any = None
    usage: Usage | None = None


class CallRecord(msgspec.Struct):
    """A `Record` as a call's row reads it (`reports.parse`)."""

    type: Any = None
    timestamp: Any = None
    isSidechain: Any = None
    requestId: Any = None
    sessionId: Any = None
    requestSessionId: Any = None  # a fork's copy of its parent's call names the session that made it
    forkedFrom: Any = None  # a branch's copy: {sessionId, messageUuid} of the record it copies
    message: CallMessage | None = None


class DirPayload(msgspec.Struct):
    """A record's `payload` as its folder is read from it (a Codex rollout's `session_meta`)."""

    cwd: Any = None


class DirRecord(msgspec.Struct):
    """A record as its folder is read (`reports.parse.head_dir`, replay's rule: `agents.record_cwd`):
    its own `cwd`, and its payload's."""

    cwd: Any = None
    payload: DirPayload | None = None


# --- replay's view of a line that holds the usage marker and no tool's (`bulkparse`): a `Record`
# of the fields an API call's events read, each block of its content by its type alone. It takes
# every line `Record` takes (and more: the fields it passes over are not type-checked), and reads
# the fields it has as `Record` does; a line holding a tool use is read again whole.


class Kind(msgspec.Struct):
    """A content block by its type alone."""

    type: Any = None


class LineMessage(msgspec.Struct):
    """A `Message` as a call's line without a tool's marker reads it."""

    mid: Any = msgspec.field(default=None, name="id")
    model: Any = None
    usage: Usage | None = None
    content: str | list[Kind] | None = None


class CallLine(msgspec.Struct):
    """A `Record` as the events of a call's line without a tool's marker read it."""

    type: Any = None
    timestamp: Any = None
    isSidechain: Any = None
    requestId: Any = None
    sessionId: Any = None
    requestSessionId: Any = None
    forkedFrom: Any = None
    version: Any = None
    message: LineMessage | None = None


_decode_record = msgspec.json.Decoder(Record).decode
_decode_call = msgspec.json.Decoder(CallRecord).decode
_decode_dir = msgspec.json.Decoder(DirRecord).decode
_decode_line = msgspec.json.Decoder(CallLine).decode
NOT_JSON = (msgspec.DecodeError, RecursionError)  # msgspec's refusals (ValidationError is a DecodeError)


def decode(line: bytes | bytearray, int_digits: int) -> Record | None:
    """The line as a Record, or None where only the caller's JSON reading can say what it is: bytes
    that are not UTF-8 (json.loads refuses them, msgspec does not look at a field it skips), an
    integer of more digits than `int()` takes (`int_digits`, sys.get_int_max_str_digits(), or 0
    where the caller found no such run in the chunk the line is from: json.loads refuses it, msgspec
    does not), and whatever msgspec refuses (a JSON extension such as NaN or Infinity, a lone
    surrogate, a field of another type than its struct's, a number past a float).

    msgspec's recursion guard is one level more lenient than json's C scanner, both count Python
    frames: call this one frame deeper than the scanner and both refuse a line at the same depth."""
    if _json_only(line, int_digits):
        return None
    try:
        return _decode_record(line)
    except NOT_JSON:
        return None


def decode_dir(line: bytes | bytearray, int_digits: int) -> DirRecord | None:
    """`decode`'s reading and rule, into a record's folders (`DirRecord`): None where only the
    caller's JSON reading can say (a payload that is no object among them)."""
    if _json_only(line, int_digits):
        return None
    try:
        return _decode_dir(line)
    except NOT_JSON:
        return None


def decode_line(line: bytes | bytearray, int_digits: int) -> CallLine | None:
    """`decode`'s rule and depth, into replay's view of a call's line (`CallLine`): None where only
    the JSON reading can say what the line is (or where `CallLine` refuses it, and so `Record`)."""
    if _json_only(line, int_digits):
        return None
    try:
        return _decode_line(line)
    except NOT_JSON:
        return None


def decode_call(line: bytes | bytearray, int_digits: int) -> CallRecord | None:
    """`decode`'s reading and rule, into the report's view (`CallRecord`): msgspec called at the
    same depth, so the same recursion rule holds (`_json_only` written out: once per call line)."""
    if not line.isascii():
        try:
            line.decode()
        except UnicodeDecodeError:
            return None
    if int_digits and len(line) > int_digits and long_digit_run(line, int_digits):
        return None
    try:
        return _decode_call(line)
    except NOT_JSON:
        return None


def _json_only(line: bytes | bytearray, int_digits: int) -> bool:
    """True where msgspec's reading of the line could differ from json.loads's before any field is
    looked at: bytes that are not UTF-8, or a run of digits past `int_digits` (see `decode`)."""
    if not line.isascii():
        try:
            line.decode()
        except UnicodeDecodeError:
            return True
    return bool(int_digits and len(line) > int_digits and long_digit_run(line, int_digits))


_SECONDS = {f"{n:02d}": n for n in range(100)}
_FRACTIONS = {f".{n:03d}Z": float(f"0.{n:03d}") for n in range(1000)}
_MINUTES: dict[str, int | None] = {}  # 'YYYY-MM-DDTHH:MM:' -> the epoch second it starts at, or None
_HOURS: dict[str, int | None] = {}  # 'YYYY-MM-DDTHH:' -> the same, for the hour
_LAST: list[tuple[object, float | None]] = [(None, None)]  # the last stamp read and its epoch second


def _minute(head: str) -> int | None:
    """The epoch second 'YYYY-MM-DDTHH:MM:' starts at (iso_to_epoch's, as an int), remembered, and
    made from its hour's, remembered too: a generated or sparse history has a new minute every few
    lines, most of them in an hour seen before."""
    if len(_MINUTES) >= 4096:  # transcripts run in time order: recent minutes are the ones asked
        _MINUTES.clear()
    hour = _HOURS.get(head[:14], -1)
    if hour == -1:
        if len(_HOURS) >= 4096:
            _HOURS.clear()
        whole = iso_to_epoch(head[:14] + "00:00Z")
        hour = _HOURS[head[:14]] = None if whole is None else int(whole)
    try:
        minute = None if hour is None else hour + 60 * int(head[14:16])  # iso_to_epoch's int() of the minute
    except ValueError:
        minute = None
    _MINUTES[head] = minute
    return minute


# `stamp_to_epoch`'s tables and its minute's reading, and msgspec's decoder of a `CallRecord`
# without `decode_call`'s checks: for the report's parse loop, which writes both out once per call
# line (`reports.parse._call_rows`; the tables are only ever cleared in place, never replaced)
STAMP_TABLES: "StampTables" = (_FRACTIONS.get, _SECONDS.get, _MINUTES.get, _minute)
decode_call_unchecked = _decode_call


def stamp_to_epoch(text: object) -> float | None:
    """`iso_to_epoch`, the same float, with the minute's part remembered: transcripts stamp every
    line as 'YYYY-MM-DDTHH:MM:SS.mmmZ', and all but a few lines share their minute with the line
    before (remembering the second as well paid on real sessions, whose lines of one call share it,
    and cost twice as much on the generated corpus, whose lines do not). The last stamp read is
    remembered as the very string it was: the session page reads each record replay's parse reads."""
    last = _LAST[0]
    if text is last[0]:
        return last[1]
    if not isinstance(text, str):
        return iso_to_epoch(text)
    frac = _FRACTIONS.get(text[19:])  # exactly '.mmmZ' after the first 19 characters: 24 in all
    minute = _MINUTES.get(text[:17], -1)
    if minute == -1:
        minute = _minute(text[:17])
    sec = _SECONDS.get(text[17:19])
    if frac is None or minute is None or sec is None:
        return iso_to_epoch(text)
    epoch = minute + sec + frac - 0  # iso_to_epoch's own sum, term for term: the same float
    _LAST[0] = (text, epoch)  # one store: a reader in another thread sees the pair before or after
    return epoch
