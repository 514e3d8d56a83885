"""`core.transcript.parse_lines` for a whole transcript at once (`replay`): the same events and bad
count, with the few fields the events need decoded by msgspec. Pure: bytes in, tuples out.

A line with a marker is checked by msgspec as strictly as by `json.loads` (it skips what it does not
keep, tool output and message text, most of a line, without building it). Where msgspec's verdict or
reading could differ from the C scanner's (bytes that are not UTF-8, an integer too long for `int()`,
a JSON extension such as NaN, a value of another type than the field's, a system record), the line
goes through the scanner and `record_events` as in `parse_lines`. The decoder is called at the same
stack depth as the scanner, so both refuse a line nested too deeply at the same depth. Not for hooks:
msgspec costs an import they need not pay.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

# shared with the report's parser
from session_watcher.agents.claude_code.records import Usage, msgspec, stamp_to_epoch, usage_reading
from session_watcher.agents.claude_code.transcript import (
    FILE_TOOLS,
    HANDOFF,
    MAX_LINE_BYTES,
    USAGE,
    call_key,
    model_name,
    read_payload,
    record_events,
    short_id,
    use_info,
)
from session_watcher.core import fastjson

if TYPE_CHECKING:
    from session_watcher.core.shapes import Event


# Each field typed as `core.transcript` reads it: `Any` where it tests the value itself (`is True`,
# isinstance), a struct or an int where it must be one (another type: the scanner's path decides).
class _Input(msgspec.Struct):
    """The keys `use_info` reads of a file tool's input (None stands for absent: it reads both alike)."""

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


class _Block(msgspec.Struct):
    type: Any = None
    id: Any = None
    name: Any = None
    input: _Input | None = None
    tool_use_id: Any = None
    is_error: Any = None


class _Message(msgspec.Struct):
    mid: Any = msgspec.field(default=None, name="id")
    model: Any = None
    usage: Usage | None = None
    content: str | list[_Block] | None = None


class _File(msgspec.Struct):
    filePath: Any = None
    content: Any = None
    startLine: Any = None


class _Result(msgspec.Struct):
    file: _File | None = None


class _Record(msgspec.Struct):
    type: Any = None
    timestamp: Any = None
    isSidechain: Any = None
    requestId: Any = None
    message: _Message | None = None
    toolUseResult: _Result | str | list[Any] | bool | int | float | None = None


_decode_record = msgspec.json.Decoder(_Record).decode


def _decode(line: bytes) -> _Record:
    """The line as a record. Called one frame deeper than the scanner: msgspec's recursion guard is
    one level more lenient than the scanner's, both count Python frames, so the frame makes it refuse
    a line exactly where the scanner does."""
    return _decode_record(line)
_NOT_JSON = (msgspec.DecodeError, RecursionError)
_DIGITS = b"0123456789"

def _input_info(name: str, inp: _Input | None) -> Any:
    if name not in FILE_TOOLS or inp is None:
        return None
    return use_info(name, {"file_path": inp.file_path, "notebook_path": inp.notebook_path, "path": inp.path,
                           "new_string": inp.new_string, "old_string": inp.old_string, "edits": inp.edits,
                           "content": inp.content, "new_source": inp.new_source, "offset": inp.offset,
                           "limit": inp.limit})


def _events(rec: _Record, events: list[Event], line: bytes) -> bool:
    """Append the events of a decoded record as `record_events` gives them; False: the record is one
    `record_events` must read itself (a system record, iterations the structs do not take); then
    nothing was appended."""
    kind = rec.type
    if kind == "assistant":
        return _assistant_events(rec, events, line)
    if kind == "user":
        _user_events(rec, events)
    elif kind == "system":
        return False
    return True


def _assistant_events(rec: _Record, events: list[Event], line: bytes) -> bool:
    """An API call's usage (a `call`) and its main-chain tool uses (`use`)."""
    msg = rec.message
    if msg is None:
        return True
    ts = stamp_to_epoch(rec.timestamp)
    side = rec.isSidechain is True
    model = model_name(msg.model)
    usage = msg.usage
    # the marker as written, as record_events asks (usage sits near the line's end: rfind)
    key = call_key(msg.mid, rec.requestId) if usage is not None and model != "<synthetic>" else None
    if key is not None and usage is not None and line.rfind(USAGE) >= 0:
        try:
            (inp, cr, cw, out, cw5, cw1), detail = usage_reading(usage)
        except msgspec.DecodeError:  # an iteration the structs do not take: the scanner's reading
            return False
        events.append(("call", key, ts, model, side, inp, cr, cw, out, cw5, cw1, detail))
    content = msg.content
    if isinstance(content, list) and not side:
        for block in content:
            if block.type == "tool_use":
                tid, name = block.id, block.name
                if short_id(tid) and short_id(name):
                    events.append(("use", ts, tid, name, _input_info(name, block.input)))
    return True


def _user_events(rec: _Record, events: list[Event]) -> None:
    """A main-chain user record's tool results (`result`; a lone result's file read with it)."""
    if rec.isSidechain is True:
        return
    msg = rec.message
    content = msg.content if msg is not None else None
    if not isinstance(content, list):
        return
    results = [b for b in content if b.type == "tool_result"]
    if not results:
        return
    ts = stamp_to_epoch(rec.timestamp)
    for block in results:
        tid = block.tool_use_id
        if short_id(tid):
            file = None
            if len(results) == 1:
                tur = rec.toolUseResult
                if isinstance(tur, _Result) and tur.file is not None:
                    f = tur.file
                    file = read_payload({"file": {"filePath": f.filePath, "content": f.content,
                                                  "startLine": f.startLine}})
            events.append(("result", ts, tid, block.is_error is True, file))


def parse_lines(lines: list[bytes]) -> tuple[list[Event], int]:
    """Events of complete lines, and how many lines were bad: `core.transcript.parse_lines`'s own."""
    events: list[Event] = []
    bad = 0
    scan = fastjson.scanner()
    decode = _decode
    int_digits = sys.get_int_max_str_digits()
    for line in lines:
        if not line:  # an empty line is nothing, and floods of them cost what this test costs
            continue
        if len(line) > MAX_LINE_BYTES:
            bad += 1
            continue
        # a line can matter only if it holds usage, a tool block or a compaction boundary
        marked = HANDOFF in line  # a handoff note (an attachment): the scanner's path reads it
        if not (b'"tool_' in line or b'"usage"' in line or b"compact_boundary" in line or marked):  # tool_: early
            if not (line.startswith(b"{") and line.endswith(b"}")):  # else: no copy to strip
                stripped = line.strip()
                if stripped and not (stripped.startswith(b"{") and stripped.endswith(b"}")):
                    bad += 1
            continue
        rec: Any = None
        if not marked and (line.isascii() or _utf8(line)):
            # json.loads refuses an integer of more digits than int() takes, msgspec does not: such a
            # run of digits covers one of these bytes (a line without a digit there has none)
            probe = line[int_digits - 1 :: int_digits] if int_digits and len(line) >= int_digits else b""
            if not probe or len(probe.translate(None, _DIGITS)) == len(probe):
                try:
                    rec = decode(line)
                except _NOT_JSON:
                    rec = None
        if rec is not None and _events(rec, events, line):
            continue
        try:  # the scanner's path, as in core.transcript.parse_lines
            text = line.decode()
            rec, end = scan(text, 0)
            if end != len(text):
                raise ValueError(end)
        except (ValueError, SystemError, StopIteration, RecursionError):
            try:
                rec = fastjson.loads(line)
            except ValueError:
                bad += 1
                continue
        if isinstance(rec, dict):
            events.extend(record_events(rec, line))
        else:
            bad += 1
    return events, bad


def _utf8(line: bytes) -> bool:
    try:
        line.decode()
    except UnicodeDecodeError:
        return False
    return True
