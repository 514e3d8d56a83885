"""Transcript bytes -> the rows the warmth report keeps. Pure: bytes in, tuples out.

Only two kinds of line matter here: an assistant line with `message.usage` (one sample of an API
call) and a `compact_boundary` record. Everything else (progress, snapshots, tool results: most of a
file) is passed over by a substring test before any JSON parsing.

Counting rules shared with the rest of the project (`core.transcript`): an API call is keyed by
`message.id` plus `requestId`; a `<synthetic>` model record is skipped; usage is read by the hooks'
own `usage_reading` (with its iterations: a call's other models' tokens are rows of their own).

The markers are found over the whole chunk by `core.markscan` (replay's parser finds its own the same
way): stringzilla's SIMD substring search, several times bytes.find's and re's pace (both searches
read every byte of every transcript; docs/benchmarks.md); without the `fast` extra, by bytes.find and re,
with the same results.

A line with a marker is decoded by the one msgspec schema (`agents.claude_code.records`, shared with
replay and the session page), through its view of a call (`CallRecord`: `Record`'s fields a row
reads, nothing else built): it checks the whole line as strictly as `json.loads`. Where its verdict
could differ from `json.loads`'s (`records.decode_call` says None), the line goes through the hooks'
JSON reading (`load_line`): the rows are the same either way (test_decoders). A run that reads
little (PLAIN_BELOW: a warm report, a session grown by a few calls) reads every line that way and
never imports msgspec (`parse_chunk`'s `plain`). This module keeps only the mapping from a record to
rows.
"""

from __future__ import annotations

import sys

from session_watcher.agents.claude_code.transcript import (  # the hooks' counting rules
    COMPACT,
    USAGE,
    call_key,
    iso_to_epoch,
    made_by,
    usage_reading,
)
from session_watcher.core import fastjson, markscan
from session_watcher.core.caps import MAX_ID_CHARS, model_name
from session_watcher.core.markscan import finder, long_digit_run, marked_lines
from session_watcher.reports.kinds import KIND_CALL, KIND_COMPACT, KIND_DIR, KIND_INHERITED, KIND_OTHER

TYPE_CHECKING = False  # typing is slow to import (a report's start-up), and only the checker needs it

if TYPE_CHECKING:
    from collections.abc import Callable

    from session_watcher.agents.claude_code.records import CallRecord, DirRecord, StampTables, Usage
    from session_watcher.core.shapes import Detail, Sample

# the schema's decoder and readings (`records`: msgspec), bound by `_schema` when a read is large
# enough to pay for msgspec's import (PLAIN_BELOW); until then a line is read the JSON way only
NOT_JSON: tuple[type[BaseException], ...]
decode_call: Callable[[bytes | bytearray, int], CallRecord | None]
decode_dir: Callable[[bytes | bytearray, int], DirRecord | None]
decode_call_unchecked: Callable[[bytes | bytearray], CallRecord]
STAMP_TABLES: StampTables
counts_sample: Callable[[Usage], Sample]
stamp_to_epoch: Callable[[object], float | None]
struct_reading: Callable[[Usage], tuple[Sample, Detail | None]]

_scan = fastjson.scanner()

MAX_LINE_BYTES = 8 << 20  # longer lines are skipped unparsed
# a run that reads fewer bytes than this (a warm report: the sessions in use grew by a few calls)
# reads them the JSON way: msgspec's import would cost it more than the schema's decoding saves
PLAIN_BELOW = 1 << 20
_MARKERS = (USAGE, COMPACT)  # the hooks' markers (`transcript.MARKERS`) of a call and a compaction
_FINDERS = tuple(finder(m) for m in _MARKERS)  # core.markscan: stringzilla's, else bytes.find and re
# a marked line's bits (`markscan.marked_lines`': bit i for _MARKERS[i]; `_call_rows` sets them so too)
_CALL_BIT, _COMPACT_BIT = 1 << _MARKERS.index(USAGE), 1 << _MARKERS.index(COMPACT)

DIR_MARKER = b'"cwd"'  # then `:` and the value's opening quote, JSON's blanks allowed around the colon
_BLANKS = b" \t\r\n"
DIR_SEARCH_BYTES = 64 << 10  # Claude Code names the cwd in a transcript's first records (0.3-9 kB in)


# A row: one sample of an API call (kind "c"), one of its iterations run by another model (kind "o",
# as an advisor's: counted in the totals under that model, not a call of the chain) or one
# compaction mark (kind "k") at byte `offset`; a fork's copy of a call its parent made is kind "i",
# the session that made it in `model` (`kinds.KIND_INHERITED`). Its fields, in order:
ROW_FIELDS = ("offset", "kind", "ts", "key", "model", "side", "inp", "out", "cr", "cw", "cw5m", "cw1h")
# A plain tuple, not a named one: the index keeps each file's rows as marshal data, which takes a
# tuple as it is and a named tuple only copied into one (a copy of every row of a cold report, and
# each element then counted twice by marshal's references); read back, they are tuples again.
if TYPE_CHECKING:
    Row = tuple[int, str, float | None, str | None, str | None, bool, int, int, int, int, int, int]
else:
    Row = tuple


def load_line(line: bytes | bytearray) -> object:
    """The line's JSON value as the hooks read it (`core.transcript.parse_lines`: the C scanner, and
    where it refuses, `core.fastjson.loads`'s verdict: UTF-8 only, no byte-order mark), or None where
    it is not JSON. The scanner is called one frame above msgspec's call (`_decoded`)."""
    try:
        text = line.decode()
        obj, end = _scan(text, 0)
        if end == len(text):
            return obj
    except (ValueError, SystemError, StopIteration, RecursionError):
        pass
    try:
        return fastjson.loads(line)
    except ValueError:
        return None


def other_rows(row: Row, detail: Detail) -> list[Row]:
    """The rows of a call's iterations run by other models (`core.transcript.iteration_detail`)."""
    offset, _kind, ts, key, _model, side = row[:6]
    return [(offset, KIND_OTHER, ts, f"{key}#{n}", other, side, inp, out, cr, cw, cw5, cw1)
            for n, (other, (inp, cr, cw, out, cw5, cw1)) in enumerate(detail[1]) if other is not None]


def record_row(rec: dict[str, object], offset: int, usage_marked: bool = True,
               compact_marked: bool = True) -> Row | list[Row] | None:
    """The row one parsed record gives, if any (a list: the call and its other models' iterations).
    `usage_marked`, `compact_marked`: the line holds that marker as written (what the search found
    it by; `core.transcript.record_events`'s rule)."""
    kind = rec.get("type")
    if kind == "assistant":
        msg = rec.get("message")
        if not isinstance(msg, dict) or not usage_marked:
            return None
        usage, model = msg.get("usage"), model_name(msg.get("model"))
        key = call_key(msg.get("id"), rec.get("requestId"))
        if not isinstance(usage, dict) or key is None or model == "<synthetic>":
            return None
        (inp, cr, cw, out, cw5, cw1), detail = usage_reading(usage)
        ts, side = iso_to_epoch(rec.get("timestamp")), rec.get("isSidechain") is True
        maker = made_by(rec.get("requestSessionId"), rec.get("forkedFrom"), rec.get("sessionId"))
        if maker is not None:
            return (offset, KIND_INHERITED, ts, key, maker, side, inp, out, cr, cw, cw5, cw1)
        row = (offset, KIND_CALL, ts, key, model, side, inp, out, cr, cw, cw5, cw1)
        return row if detail is None else [row, *other_rows(row, detail)]
    if kind == "system" and rec.get("subtype") == "compact_boundary" and compact_marked:
        ts = iso_to_epoch(rec.get("timestamp"))
        return (offset, KIND_COMPACT, ts, None, None, rec.get("isSidechain") is True, 0, 0, 0, 0, 0, 0)
    return None


def _decoded(line: bytes | bytearray, int_digits: int) -> CallRecord | None:
    """`records.decode_call`, one frame deeper than `load_line` calls the C scanner (both then refuse
    a line nested too deeply at the same depth: see `records.decode`)."""
    return decode_call(line, int_digits)


def _plain(_line: bytes | bytearray, _int_digits: int) -> CallRecord | None:
    """The decoder of a small read (PLAIN_BELOW): none, every line is read the JSON way (`load_line`)."""
    return None


def bind_schema() -> None:
    """The schema's decoder bound now (msgspec imported), once, before the readers fork; so is each
    agent's own (`Agent.bind_schema`: a Codex rollout's lines through msgspec too)."""
    from session_watcher.agents import AGENTS

    _schema()
    for agent in AGENTS:
        agent.bind_schema()


def _schema() -> Callable[[bytes | bytearray, int], CallRecord | None]:
    """`_decoded`, the schema's names bound first (msgspec imported, once)."""
    global NOT_JSON, STAMP_TABLES, counts_sample, decode_call, decode_call_unchecked, decode_dir  # noqa: PLW0603
    global stamp_to_epoch, struct_reading  # noqa: PLW0603
    if "decode_call" not in globals():
        from session_watcher.agents.claude_code.records import (
            NOT_JSON,
            STAMP_TABLES,
            counts_sample,
            decode_call,
            decode_call_unchecked,
            decode_dir,
            stamp_to_epoch,
        )
        from session_watcher.agents.claude_code.records import usage_reading as struct_reading
    return _decoded


def _iterated_row(rec: CallRecord, usage: Usage, line: bytes | bytearray, offset: int,
                  key: str) -> Row | list[Row] | None:
    """The rows of a decoded call whose usage lists several iterations; an iteration the structs do
    not take (an item that is no object, a count that is no int) sends the line through json."""
    try:
        (inp, cr, cw, out, cw5, cw1), detail = struct_reading(usage)
    except NOT_JSON:
        obj = load_line(line)
        return record_row(obj, offset) if isinstance(obj, dict) else None  # usage marked: the caller checked
    ts, side = stamp_to_epoch(rec.timestamp), rec.isSidechain is True
    maker = made_by(rec.requestSessionId, rec.forkedFrom, rec.sessionId)
    if maker is not None:  # a fork's copy: the session that made it in `model`, no iterations
        return (offset, KIND_INHERITED, ts, key, maker, side, inp, out, cr, cw, cw5, cw1)
    model = model_name(rec.message.model) if rec.message is not None else None
    row = (offset, KIND_CALL, ts, key, model, side, inp, out, cr, cw, cw5, cw1)
    return [row, *other_rows(row, detail)] if detail is not None else row


def line_row(line: bytes | bytearray, offset: int, int_digits: int, usage_marked: bool,
             compact_marked: bool, decoded: Callable[[bytes | bytearray, int], CallRecord | None],
             ) -> Row | list[Row] | None:
    """The row(s) of one line with a marker: `record_row(load_line(line))`, through msgspec when it
    can (`decoded`: `_decoded`, or `_plain` for none). `usage_marked`, `compact_marked`: which markers
    the search found in the line."""
    rec = decoded(line, int_digits)
    if rec is not None:
        kind = rec.type
        if kind == "assistant":
            msg = rec.message
            if msg is None or not usage_marked:
                return None
            usage, model = msg.usage, model_name(msg.model)
            key = call_key(msg.mid, rec.requestId)
            if usage is None or key is None or model == "<synthetic>":
                return None
            its = usage.iterations
            if its is not None and len(its) > 1:  # several requests in one call (rare): their own reading
                return _iterated_row(rec, usage, line, offset, key)
            inp, cr, cw, out, cw5, cw1 = counts_sample(usage)  # usage_sample's reading, from the struct
            ts, side = stamp_to_epoch(rec.timestamp), rec.isSidechain is True
            kind = KIND_CALL
            if (rec.requestSessionId is not None or rec.forkedFrom is not None) and (
                    maker := made_by(rec.requestSessionId, rec.forkedFrom, rec.sessionId)):
                kind, model = KIND_INHERITED, maker  # a fork's copy: the session that made it in `model`
            return (offset, kind, ts, key, model, side, inp, out, cr, cw, cw5, cw1)
        if kind != "system":  # a compaction mark (rare) takes the plain path
            return None
    obj = load_line(line)
    return record_row(obj, offset, usage_marked, compact_marked) if isinstance(obj, dict) else None


def _spaced_dir(head: bytes | bytearray, at: int, end: int, filled: int) -> tuple[int, int]:
    """(the offset of the first `"cwd"` key from `at` on whose value is a string, its value's opening
    quote), JSON's blanks around the colon allowed; (-1, -1) without one before `end`."""
    simd = markscan.simd_find
    while at >= 0:
        start = at + len(DIR_MARKER)
        while start < filled and head[start] in _BLANKS:
            start += 1
        if start < filled and head[start] == 0x3A:  # the key's colon (no colon: a value "cwd")
            start += 1
            while start < filled and head[start] in _BLANKS:
                start += 1
            if start < filled and head[start] == 0x22:  # a string (a null or a number: the next "cwd")
                return at, start
        at += len(DIR_MARKER)
        at = head.find(DIR_MARKER, at, end) if simd is None else simd(head, DIR_MARKER, at, end)
    return -1, -1


def _record_dir(line: bytes | bytearray) -> str | None:
    """The folder replay takes from one record's line (`agents.record_cwd`: its own `cwd`, else its
    `payload`'s, a Codex rollout's), None where it names none or is no JSON. The schema's struct
    where msgspec is bound already (a large read: it passes over a tool's result unbuilt), else
    the JSON way (`load_line`)."""
    if "decode_dir" in globals():
        rec = decode_dir(line, sys.get_int_max_str_digits())
        if rec is not None:
            if isinstance(rec.cwd, str):
                return rec.cwd
            inner = rec.payload.cwd if rec.payload is not None else None
            return inner if isinstance(inner, str) else None
    obj = load_line(line)
    if not isinstance(obj, dict):
        return None
    own = obj.get("cwd")
    if isinstance(own, str):
        return own
    inner = obj.get("payload")
    inner = inner.get("cwd") if isinstance(inner, dict) else None
    return inner if isinstance(inner, str) else None


def _own_key(head: bytes | bytearray, start: int, at: int) -> bool:
    """Whether the `"cwd"` at `at`, in the line that begins at `start`, is a key of that record itself
    or of its `payload` object (a Codex rollout's `session_meta`), where replay takes a record's folder
    (`agents.record_cwd`); not a key of an object nested deeper (a tool's result, `{"cwd": ...}`), nor
    text inside a string. Where no bracket comes between the record's own `{` and it, it is one (the
    common line: two searches). Else the brackets outside the strings before it are counted: the
    escaped backslashes and quotes taken out, the text split at its quotes (the pieces between are
    strings), all in C; only a key two deep is walked piece by piece, to see whose object holds it."""
    if head[start : start + 1] != b"{":
        return False  # not a record's line (JSON's blanks first: no writer's)
    if head.find(b"[", start, at) < 0 and head.find(b"{", start + 1, at) < 0:
        return True
    pieces = bytes(head[start:at]).replace(b"\\\\", b"").replace(b'\\"', b"").split(b'"')
    if len(pieces) % 2 == 0:
        return False  # inside a string
    outside = b"".join(pieces[::2])
    depth = outside.count(b"{") + outside.count(b"[") - outside.count(b"}") - outside.count(b"]")
    if depth != 2:
        return depth == 1
    depth = 0
    payload = False
    for k in range(0, len(pieces), 2):
        for n, c in enumerate(pieces[k]):
            if c in b"{[":
                depth += 1
                if depth == 2:  # the object the key two deep is in: the record's `payload`?
                    payload = (c == 0x7B and k > 0 and pieces[k - 1] == b"payload"
                               and pieces[k][:n].strip(_BLANKS) == b":")
            elif c in b"}]":
                depth -= 1
    return payload


def head_dir(head: bytes | bytearray, size: int | None = None) -> Row | None:
    """The row of the first `"cwd"` key with a string value in the first DIR_SEARCH_BYTES of a file
    (of `head`'s first `size` bytes), compact or spaced JSON alike (`"cwd":"/x"`, `"cwd": "/x"`), a key
    of its record's own (or of its `payload`, a Codex rollout's), as replay reads one: taken as found
    where no object or array opens before it in its line (the common line), else its line read whole
    as replay reads it (`_record_dir`), or, cut short by the read, the brackets before it counted
    (`_own_key`): kind KIND_DIR, the folder in `key`, at the offset of its record. None without one."""
    filled = len(head) if size is None else size
    end = min(filled, DIR_SEARCH_BYTES)
    simd = markscan.simd_find
    at = head.find(DIR_MARKER, 0, end) if simd is None else simd(head, DIR_MARKER, 0, end)
    while True:
        if at < 0:
            return None
        start = at + len(DIR_MARKER) + 1  # the opening quote, as Claude Code writes it (`"cwd":"/x"`)
        if head[start - 1 : start + 1] != b':"' or start >= filled:  # spaced, or not the key: looked for on
            at, start = _spaced_dir(head, at, end, filled)
            if at < 0:
                continue  # none: said above
        nl = head.rfind(b"\n", 0, at)
        if head[nl + 1 : nl + 2] == b"{" and head.find(b"[", nl + 1, at) < 0 and head.find(b"{", nl + 2, at) < 0:
            break  # no object or array opened before it in its record: the record's own (the common line)
        stop = head.find(b"\n", at, filled)
        if stop < 0:  # its line goes on past what was read: the brackets before it say
            if _own_key(head, nl + 1, at):
                break
            stop = at + len(DIR_MARKER)
        else:  # the whole line read as replay reads it
            folder = _record_dir(head[nl + 1 : stop])
            if folder is not None:
                return (nl + 1, KIND_DIR, None, folder, None, False, 0, 0, 0, 0, 0, 0) if folder else None
        at = head.find(DIR_MARKER, stop, end) if simd is None else simd(head, DIR_MARKER, stop, end)
    limit = min(start + 8192, filled)
    close = head.find(b'"', start + 1, limit)
    while close > 0 and head[close - 1] == 0x5C:  # after a backslash: its own end only after an even run
        k = close - 1
        while head[k] == 0x5C:
            k -= 1
        if (close - 1 - k) % 2 == 0:
            break
        close = head.find(b'"', close + 1, limit)
    if close < 0:  # cut short
        return None
    try:
        folder, _end = _scan(bytes(head[start : close + 1]).decode("utf-8", "replace"), 0)
    except (ValueError, StopIteration, SystemError):  # not a JSON string (`core.fastjson.loads` says why SystemError)
        return None
    if not isinstance(folder, str) or not folder:
        return None
    return (nl + 1, KIND_DIR, None, folder, None, False, 0, 0, 0, 0, 0, 0)


def parse_chunk(chunk: bytes | bytearray, base: int = 0, size: int | None = None,
                plain: bool = False) -> tuple[list[Row], int]:
    """Rows of the complete lines of `chunk`'s first `size` bytes (all by default; the chunk starts
    at file offset `base`) and the bytes used; `plain`: every line read the JSON way, without the
    schema's decoder (the same rows: a small read need not import msgspec, see PLAIN_BELOW).

    A last line without its newline is not complete yet: it is left for the next run. Lines without
    a marker are never cut out of the chunk: the search jumps from one marker to the next. A call
    line is read by `_call_rows`' loop; a line it does not settle (a compaction mark, a line msgspec
    does not take, a call of several iterations: rare) by `line_row`, as every line was before.
    """
    end = chunk.rfind(b"\n", 0, len(chunk) if size is None else size)
    if end < 0:
        return [], 0
    rows: list[Row] = []
    int_digits = sys.get_int_max_str_digits()
    if plain:
        for start, stop, which in marked_lines(chunk, _FINDERS, end + 1):
            if stop - start <= MAX_LINE_BYTES:
                _add(rows, line_row(chunk[start:stop], base + start, int_digits, bool(which & _CALL_BIT),
                                    bool(which & _COMPACT_BIT), _plain))
        return rows, end + 1
    decoded = _schema()
    left: list[tuple[int, int, int, int]] = []  # (how many rows came before it, start, stop, markers)
    _rows_at_depth(chunk, base, end + 1, int_digits, rows, left)
    for before, start, stop, which in reversed(left):  # from the last: the places before it hold
        row = line_row(chunk[start:stop], base + start, int_digits, bool(which & _CALL_BIT), bool(which & _COMPACT_BIT),
                       decoded)
        if row is not None:
            if row.__class__ is list:  # a call with other models' iterations (rare)
                rows[before:before] = row
            else:
                rows.insert(before, row)  # type: ignore[arg-type]
    return rows, end + 1


def _add(rows: list[Row], row: Row | list[Row] | None) -> None:
    if row is not None:
        if row.__class__ is list:  # a call with other models' iterations (rare)
            rows += row
        else:
            rows.append(row)  # type: ignore[arg-type]


def _rows_at_depth(chunk: bytes | bytearray, base: int, end: int, int_digits: int, rows: list[Row],
                   left: list[tuple[int, int, int, int]]) -> None:
    """`_call_rows`, called two frames below `parse_chunk`: its msgspec call is then as deep as
    `line_row`'s was (`line_row` -> `_decoded` -> `decode_call`), so a line nested to the recursion
    limit is refused at the very depth it was (and goes to `line_row`, which reads it as before)."""
    _call_rows_below(chunk, base, end, int_digits, rows, left)


def _call_rows_below(chunk: bytes | bytearray, base: int, end: int, int_digits: int, rows: list[Row],
                     left: list[tuple[int, int, int, int]]) -> None:
    _call_rows(chunk, base, end, int_digits, rows, left)


def _call_rows(chunk: bytes | bytearray, base: int, end: int, int_digits: int,  # noqa: C901
               rows: list[Row], left: list[tuple[int, int, int, int]]) -> None:
    """The rows of chunk[:end]'s call lines, into `rows`: `markscan.marked_lines`' search, and for
    each line `line_row` through the schema (`decode_call`'s checks, `call_key`, `model_name`,
    `counts_sample`, `stamp_to_epoch`), written out in one loop, where they were eight Python calls
    and a generator's step for each of the 115,000 lines with a marker in a GB of transcripts.
    A later sample of the call on the line before (half of all call lines: Claude Code writes a
    call's usage again with each block it streams) takes that line's key where its ids are the same
    strings and its counts where its usage struct is equal (the same functions of the same values).
    A line this loop does not settle goes into `left` with the number of rows before it, for
    `line_row` (`parse_chunk`); the rows are the same either way (tests/test_report_parse_loop.py)."""
    fa, fb = _FINDERS  # `markscan.marked_lines`' search of two markers, written out: bit i for fa's, fb's
    call_only = _CALL_BIT
    rfind, find = chunk.rfind, chunk.find
    decode = decode_call_unchecked  # msgspec's decoder of `CallRecord`, as `decode_call` calls it
    not_json = NOT_JSON
    sample = counts_sample
    fractions, seconds, minutes, minute_of = STAMP_TABLES
    iso = iso_to_epoch
    top = MAX_ID_CHARS
    append = rows.append
    last_mid: object = None
    last_rid: object = None
    last_key: str | None = None
    last_usage: object = None
    last_counts: tuple[int, int, int, int, int, int] = (0, 0, 0, 0, 0, 0)
    none = end + 1
    a, b = fa(chunk, 0, end), fb(chunk, 0, end)
    a, b = none if a < 0 else a, none if b < 0 else b
    at = a if a < b else b
    while at < none:
        stop = find(b"\n", at, end)
        if stop < 0:
            stop = end
        which = 0
        if a < stop:
            which = 1
            a = fa(chunk, stop + 1, end)
            a = none if a < 0 else a
        if b < stop:
            which |= 2
            b = fb(chunk, stop + 1, end)
            b = none if b < 0 else b
        start = rfind(b"\n", 0, at) + 1
        at = a if a < b else b
        if stop - start > MAX_LINE_BYTES:
            continue
        if which != call_only:  # a compaction mark (rare): `line_row`
            left.append((len(rows), start, stop, which))
            continue
        line = chunk[start:stop]
        # `decode_call`'s checks: a line msgspec could read otherwise than json.loads goes to `line_row`
        if not line.isascii():
            try:
                line.decode()
            except UnicodeDecodeError:
                left.append((len(rows), start, stop, which))
                continue
        if int_digits and len(line) > int_digits and long_digit_run(line, int_digits):
            left.append((len(rows), start, stop, which))
            continue
        try:
            rec = decode(line)
        except not_json:
            left.append((len(rows), start, stop, which))
            continue
        if rec.type != "assistant":
            if rec.type == "system":  # `line_row` reads it the JSON way
                left.append((len(rows), start, stop, which))
            continue
        msg = rec.message
        if msg is None:
            continue
        usage, model = msg.usage, msg.model
        model = model if isinstance(model, str) and len(model) <= top else None  # `model_name`
        mid, rid = msg.mid, rec.requestId
        if mid == last_mid and rid == last_rid and mid.__class__ is str:
            key = last_key  # `call_key` of the same values (a str equals only a str: the same key)
        else:
            key = call_key(mid, rid)
            last_mid, last_rid, last_key = mid, rid, key
        if usage is None or key is None or model == "<synthetic>":
            continue
        its = usage.iterations
        if its is not None and len(its) > 1:  # several requests in one call (rare): `line_row`
            left.append((len(rows), start, stop, which))
            continue
        if usage != last_usage:  # a struct equal to the last one: the same counts
            inp, cr, cw, out, cw5, cw1 = sample(usage)
            last_usage, last_counts = usage, (inp, out, cr, cw, cw5, cw1)
        # `stamp_to_epoch`: the minute remembered, the second and its thousandths looked up
        text = rec.timestamp
        if text.__class__ is str:
            frac = fractions(text[19:])
            minute = minutes(text[:17], -1)
            if minute == -1:
                minute = minute_of(text[:17])
            sec = seconds(text[17:19])
            ts = iso(text) if frac is None or minute is None or sec is None else minute + sec + frac - 0
        else:
            ts = iso(text)
        kind, side = KIND_CALL, rec.isSidechain is True
        if (rec.requestSessionId is not None or rec.forkedFrom is not None) and (
                maker := made_by(rec.requestSessionId, rec.forkedFrom, rec.sessionId)):
            kind, model = KIND_INHERITED, maker  # a fork's copy: the session that made it in `model`
        append((base + start, kind, ts, key, model, side) + last_counts)  # noqa: RUF005 (2.5x unpacking's pace)
