"""`transcript.parse_lines` for a whole transcript at once (`replay`): the same events and bad
count, a line with a marker decoded by the one msgspec schema (`records`). Pure: bytes in, tuples out.

msgspec checks a line as strictly as `json.loads` and skips what no reader keeps (tool output and
message text, most of a line) without building it. Where its verdict or reading could differ from
the C scanner's (`records.decode` says None), and for a system record or a handoff note, the line
goes through the scanner and `record_events` as in `parse_lines`. This module keeps only the mapping
from a decoded record to events. Not for hooks: msgspec costs an import they need not pay.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from session_watcher.agents.claude_code.records import (  # the one schema, shared with the report and the page
    CallLine,
    Input,
    LineMessage,
    Message,
    Record,
    Result,
    counts_sample,
    decode,
    decode_line,
    msgspec,
    stamp_to_epoch,
    usage_reading,
)
from session_watcher.agents.claude_code.transcript import (
    COMPACT,
    FILE_TOOLS,
    HANDOFF,
    MAX_LINE_BYTES,
    TOOL,
    USAGE,
    call_key,
    compact_reserve,
    made_by,
    read_payload,
    record_events,
    use_info,
)
from session_watcher.agents.claude_code.transcript import MARKERS as MARKERS  # noqa: PLC0414 (its search's)
from session_watcher.core import fastjson
from session_watcher.core.caps import model_name, short_id
from session_watcher.core.markscan import counter, finder, long_digit_run, marked_lines

if TYPE_CHECKING:
    from collections.abc import Callable

    from session_watcher.core.shapes import Event


def _input_info(name: str, inp: Input | None) -> Any:
    if name not in FILE_TOOLS or inp is None:
        return None
    return use_info(name, {"file_path": inp.file_path, "notebook_path": inp.notebook_path, "path": inp.path,
                           "new_string": inp.new_string, "old_string": inp.old_string, "edits": inp.edits,
                           "content": inp.content, "new_source": inp.new_source, "offset": inp.offset,
                           "limit": inp.limit})


def _events(rec: Record, events: list[Event], usage_marked: bool, seen: list[Any] | None) -> bool:
    """Append the events of a decoded record as `record_events` gives them (`usage_marked`: its line
    holds the usage marker as written; `seen`: see `_call`); False: the record is one `record_events`
    must read itself (a system record, iterations the structs do not take); then nothing was appended."""
    kind = rec.type
    if kind == "assistant":
        return _assistant_events(rec, events, usage_marked, seen)
    if kind == "user":
        _user_events(rec, events)
    elif kind == "system":
        return False
    return True


def _assistant_events(rec: Record, events: list[Event], usage_marked: bool, seen: list[Any] | None) -> bool:
    """An API call's usage (a `call`) and its main-chain tool uses (`use`)."""
    msg = rec.message
    if msg is None:
        return True
    ts = stamp_to_epoch(rec.timestamp)
    side = rec.isSidechain is True
    if not _call(rec, msg, ts, side, events, usage_marked, seen=seen):
        return False
    content = msg.content
    if isinstance(content, list) and not side:
        for block in content:
            if block.type == "tool_use":
                tid, name = block.id, block.name
                if short_id(tid) and short_id(name):
                    events.append(("use", ts, tid, name, _input_info(name, block.input)))
    return True


def _call_line(rec: CallLine, events: list[Event], seen: list[Any] | None) -> bool:
    """`_assistant_events` of a line that holds the usage marker and no tool's, read as `CallLine`;
    False where the line must be read whole (a block of content that is a tool use: the marker
    spelt with an escape; iterations the structs do not take): then nothing was appended."""
    msg = rec.message
    if msg is None:
        return True
    side = rec.isSidechain is True
    content = msg.content
    if isinstance(content, list) and not side:
        for block in content:
            if block.type == "tool_use":
                return False
    return _call(rec, msg, stamp_to_epoch(rec.timestamp), side, events, True, seen=seen)


def _call(rec: Record | CallLine, msg: Message | LineMessage, ts: float | None, side: bool,  # noqa: PLR0913
          events: list[Event], usage_marked: bool, *, seen: list[Any] | None) -> bool:
    """The call event of an assistant record (and the autocompact and inherited events before it), as
    `record_events` gives them; False where its iterations are not what the structs take (nothing
    appended). `seen` (a whole fold's chunk, not the page's): [the reserve of the chunk's last
    autocompact, (key, sidechain, sample) of its last call event without iterations or a maker],
    and an event that changes nothing in the fold after those is left out: an autocompact of the
    same reserve (the fold keeps the last), a later line of the same call repeating its sample (the
    meter holds that sample as the call's newest, and nothing but a call event moves it)."""
    model = model_name(msg.model)
    usage = msg.usage
    # the marker as written, as record_events asks (the chunk's search found it)
    key = call_key(msg.mid, rec.requestId) if usage is not None and usage_marked and model != "<synthetic>" else None
    if key is None or usage is None:
        return True
    if usage.iterations is None:  # most calls: no iterations to read
        sample, detail = counts_sample(usage), None
    else:
        try:
            sample, detail = usage_reading(usage)
        except msgspec.DecodeError:  # an iteration the structs do not take: the scanner's reading
            return False
    reserve = compact_reserve(rec.version)
    maker = made_by(rec.requestSessionId, rec.forkedFrom, rec.sessionId)
    if seen is None:
        if reserve is not None:
            events.append(("autocompact", ts, reserve))
    else:
        if reserve is not None and reserve != seen[0]:
            seen[0] = reserve
            events.append(("autocompact", ts, reserve))
        call = (key, side, sample) if detail is None and maker is None else None
        if call is not None and call == seen[1]:
            return True
        seen[1] = call
    if maker is not None:
        events.append(("inherited", ts, maker))
    events.append(("call", key, ts, model, side, *sample, detail))
    return True


def _user_events(rec: Record, events: list[Event]) -> None:
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
                if isinstance(tur, Result) and tur.file is not None:
                    f = tur.file
                    file = read_payload({"file": {"filePath": f.filePath, "content": f.content,
                                                  "startLine": f.startLine}})
            events.append(("result", ts, tid, block.is_error is True, file))


def parse_lines(lines: list[bytes]) -> tuple[list[Event], int]:
    """Events of complete lines, and how many lines were bad: `core.transcript.parse_lines`'s own
    (`parse_chunk` of the lines joined; one frame deeper, so a line nested to the very recursion
    limit may differ: `parse_chunk` is the one held to the scanner's depth)."""
    return parse_chunk(b"".join(line + b"\n" for line in lines))


def _odd(line: bytes) -> int:
    """1 when a line without a marker is bad (something other than a JSON object's braces), else 0."""
    if line.startswith(b"{") and line.endswith(b"}"):  # else: no copy to strip
        return 0
    stripped = line.strip()
    return 1 if stripped and not (stripped.startswith(b"{") and stripped.endswith(b"}")) else 0


# the markers of `core.transcript.parse_lines` (`transcript.MARKERS`, in its order), searched over a
# whole chunk (`parse_chunk`); a line's bit i is set where it holds MARKERS[i]
_FINDERS = tuple(finder(m) for m in MARKERS)
_COUNTERS = (counter(b"\n"), counter(b"}\n{"))  # (None, None) without stringzilla
_USAGE_BIT, _HANDOFF_BIT = 1 << MARKERS.index(USAGE), 1 << MARKERS.index(HANDOFF)
_CLOSE = ord("}")


# the session page's (reports.session_page_data), while it reads a transcript with its replay: told
# every record parse_chunk decodes, with the offset of its line in the chunk, in the chunk's order
tap: Callable[[int, Record], None] | None = None


def parse_chunk(chunk: bytes, lean: bool = False) -> tuple[list[Event], int]:
    """`core.transcript.parse_lines` of the complete lines of `chunk` (up to its last newline), with the markers found
    over the whole chunk (`core.markscan`): only the lines that hold one are cut out and parsed. The
    lines without one count as bad where it counts them (not a JSON object's braces, too
    long), found by counting over the chunk (a line per newline, each `{...}`) and line by line
    only where that count says some line is not.

    `lean` (a whole fold's read; not while the page is `tap`ped): the events that would change
    nothing in the fold after the chunk's earlier ones are left out (`_call`: about half of them,
    a response's later lines), and a line with the usage marker and no tool's is read as `CallLine`
    (its blocks by their type alone): the same fold, the same bad lines."""
    end = chunk.rfind(b"\n") + 1
    events: list[Event] = []
    bad = 0 if _plain(chunk, end) else _odd_unmarked(chunk, end)
    scan = fastjson.scanner()
    int_digits = sys.get_int_max_str_digits()
    if int_digits and not long_digit_run(chunk, int_digits):
        int_digits = 0  # no line of the chunk holds so long a run: none to look for line by line
    told = tap
    lean = lean and told is None  # the page reads each line whole, and keeps each line's events
    seen: list[Any] | None = [None, None] if lean else None
    for start, stop, which in marked_lines(chunk, _FINDERS, end):
        if stop - start > MAX_LINE_BYTES:
            bad += 1
            continue
        # the same steps as parse_lines's; msgspec one frame deeper than the scanner (records.decode)
        line = chunk[start:stop]
        if which == _USAGE_BIT and lean:  # a call's line without a tool's marker: its call alone
            call = decode_line(line, int_digits)
            if call is not None and call.type == "assistant" and _call_line(call, events, seen):
                continue
        marked = which & _HANDOFF_BIT  # a handoff note (an attachment): the scanner's path reads it
        rec = None if marked else decode(line, int_digits)
        if rec is not None:
            if told is not None:
                told(start, rec)
            if _events(rec, events, bool(which & _USAGE_BIT), seen):
                continue
        if seen is not None:  # the scanner's events are all kept: what they left in the fold is not known here
            seen[0] = seen[1] = None
        try:  # the scanner's path, as in core.transcript.parse_lines
            text = line.decode()
            rec, at = scan(text, 0)
            if at != len(text):
                raise ValueError(at)
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


def _plain(chunk: bytes, end: int) -> bool:
    """Every line of chunk[:end] is `{...}` and none is too long: no line without a marker is bad.
    False where it cannot be counted fast (without stringzilla): the lines are then looked at."""
    newlines, between = _COUNTERS
    if newlines is None or between is None or end > MAX_LINE_BYTES:
        return False
    lines = newlines(chunk, 0, end)  # each newline but the last between `}` and `{`, the last after `}`
    return not lines or (chunk.startswith(b"{") and chunk[end - 2] == _CLOSE
                         and between(chunk, 0, end) == lines - 1)


def _odd_unmarked(chunk: bytes, end: int) -> int:
    """The bad lines without a marker of chunk[:end], line by line as `parse_lines` counts them."""
    bad = 0
    for line in chunk[:end].split(b"\n")[:-1]:
        if not line or TOOL in line or USAGE in line or COMPACT in line or HANDOFF in line:
            continue
        bad += 1 if len(line) > MAX_LINE_BYTES else _odd(line)
    return bad

