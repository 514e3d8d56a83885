"""Transcript lines -> events. Pure: bytes in, plain tuples out.

A transcript is JSONL written by Claude Code; every field is optional and the format changes
between versions, so anything unexpected is skipped and counted, never fatal. Lines that cannot
matter (progress, snapshots, bookkeeping: most of a file) are passed over by a substring test before
any JSON parsing, which is what keeps the incremental fold and `replay` fast.

Events (tuples, first item the kind):

* ("call", key, ts, model, sidechain, inp, cr, cw, out, cw5m, cw1h, detail) - one sample of an API
  call; several lines of one response share `key` (message id + request id) and repeat its usage.
  `detail` is None, or what its `usage.iterations` say when they list several requests
  (`usage_reading`): the context (the last `message` iteration) and the other iterations.
* ("use", ts, tool_use_id, name, info) - a tool call the model made; `info` is what the fold needs
  from its input (file path, edit sizes).
* ("result", ts, tool_use_id, is_error, file) - a tool's result; `file` is the Read payload
  (path, start line, content) or None.
* ("compact", ts, trigger, pre_tokens) - a compaction boundary.
* ("parent", ts, session_id) - the session started with a handoff note (core.handoff) from that
  session, injected by our SessionStart hook (an attachment line holding the note's first line).
* ("autocompact", ts, reserve) - before a call whose line names the client's `version`: the client
  compacts the context on its own at its window less `reserve` tokens (`compact_reserve`).
* ("inherited", ts, session_id) - before a call another session made, copied into this file by a
  fork (`claude --resume ID --fork-session`, `/branch`; `made_by`): the fold counts it in that
  session's tally, not this one's.

Their types, for the checker: `core.shapes.Event`.
"""

from __future__ import annotations

from session_watcher.agents.seam import HANDOFF as HANDOFF  # noqa: PLC0414 (the parsers' names for them)
from session_watcher.agents.seam import MAX_LINE_BYTES as MAX_LINE_BYTES  # noqa: PLC0414
from session_watcher.agents.seam import iso_to_epoch as iso_to_epoch  # noqa: PLC0414
from session_watcher.agents.seam import split_lines as split_lines  # noqa: PLC0414
from session_watcher.core import fastjson
from session_watcher.core.caps import MAX_COUNT, MAX_ID_CHARS, clean_path, model_name, short_id

TYPE_CHECKING = False  # typing is slow to import; this module is on the hot path
if TYPE_CHECKING:
    from collections.abc import Iterator

    from session_watcher.core.shapes import Detail, Event, Iteration, ReadFile, Sample, UseInfo


FILE_TOOLS = ("Read", "Edit", "MultiEdit", "Write", "NotebookEdit")
UNKNOWN_MODEL = "unknown"  # a non-message iteration that names no model (no price: its dollars stay unknown)
USAGE, COMPACT = b'"usage"', b"compact_boundary"  # the markers every parser finds lines by, as written
TOOL = b'"tool_'
# every marker of a line that can matter, in one place: `parse_lines` tests a line for them (spelt out
# there, constants on the hooks' path), replay's parse searches a chunk for them in this order
# (`bulkparse`: the two most lines hold first, the two seldom found last, as `core.markscan`'s
# four-marker loop is written), the report's for the first two it needs (`reports.parse`)
MARKERS = (TOOL, USAGE, COMPACT, HANDOFF)


# Where Claude Code compacts on its own, by the client's version: its window less this many tokens
# (docs/model.md, "The horizon and the compaction": every automatic compaction of clients 2.1.1-2.1.20
# at 155.0k-157.9k tokens on a 200k window, of 2.1.22-2.1.49 at 167.0k-178.1k)
RESERVE_FROM = (2, 1, 22)
RESERVE_BEFORE, RESERVE_SINCE = 45_000, 33_000
_RESERVES: dict[str, int | None] = {}


def compact_reserve(version: object) -> int | None:
    """The reserve of the client `version` (a record's "2.1.49"), None when it is not a version."""
    if not isinstance(version, str):
        return None
    got = _RESERVES.get(version, 0)
    if got != 0:
        return got
    parts = version.split(".", 3)[:3] if len(version) <= 32 else []
    nums = tuple(int(p) for p in parts if p.isascii() and p.isdigit() and len(p) <= 6)  # "²".isdigit()
    out = None if len(nums) < 3 or len(parts) < 3 else RESERVE_SINCE if nums >= RESERVE_FROM else RESERVE_BEFORE
    if len(_RESERVES) < 64:  # a file of many made-up versions costs a parse each, never memory
        _RESERVES[version] = out
    return out


def _int(v: object) -> int:
    """A usage count: a whole number from 1 to MAX_COUNT, else 0 (absent, negative, absurd)."""
    return v if isinstance(v, int) and not isinstance(v, bool) and 0 < v <= MAX_COUNT else 0


def count(v: int) -> int:
    """`_int` of a value already known to be an int (msgspec's usage fields), for the fast parsers."""
    return v if 0 < v <= MAX_COUNT else 0


def call_key(mid: object, rid: object) -> str | None:
    """An API call's key, `message id:request id` (the message id alone without a request id), or
    None when the ids are not ones to keep: the call is a bad event, skipped by every parser."""
    if not short_id(mid):
        return None
    if isinstance(rid, str):
        return f"{mid}:{rid}" if len(rid) <= MAX_ID_CHARS else None
    return mid


def _text_len(v: object) -> int:
    return len(v) if isinstance(v, str) else 0


def use_info(name: str, inp: object) -> UseInfo | None:
    """What the fold keeps of a file tool's input: the path and the size of what it wrote."""
    if name not in FILE_TOOLS or not isinstance(inp, dict):
        return None
    path = inp.get("file_path") or inp.get("notebook_path") or inp.get("path")
    if not isinstance(path, str) or not path or not clean_path(path):
        return None
    info: UseInfo = {"path": path}
    if name == "Edit":
        info["new"] = _text_len(inp.get("new_string"))
        info["old"] = _text_len(inp.get("old_string"))
    elif name == "MultiEdit":
        edits = inp.get("edits")
        edits = edits if isinstance(edits, list) else []
        info["new"] = sum(_text_len(e.get("new_string")) for e in edits if isinstance(e, dict))
        info["old"] = sum(_text_len(e.get("old_string")) for e in edits if isinstance(e, dict))
    elif name == "Write":
        info["new"] = _text_len(inp.get("content"))
        info["write"] = True
    elif name == "NotebookEdit":
        info["new"] = _text_len(inp.get("new_source"))
        info["old"] = 0
    elif name == "Read":
        off, lim = inp.get("offset"), inp.get("limit")
        if isinstance(off, int) and -MAX_COUNT <= off <= MAX_COUNT:
            info["offset"] = off
        if isinstance(lim, int) and -MAX_COUNT <= lim <= MAX_COUNT:
            info["limit"] = lim
    return info


def read_payload(result: object) -> ReadFile | None:
    """The Read tool's result (`tool_response` in a hook, `toolUseResult` in the transcript)."""
    if not isinstance(result, dict):
        return None
    f = result.get("file")
    if not isinstance(f, dict):
        return None
    path, content = f.get("filePath"), f.get("content")
    if not isinstance(path, str) or not isinstance(content, str) or not clean_path(path):
        return None
    start = f.get("startLine")
    return {"path": path, "start": start if isinstance(start, int) and 0 < start <= MAX_COUNT else 1,
            "content": content}


def usage_sample(usage: dict[str, object]) -> Sample:
    """(input, cache read, cache write, output, 5-minute writes, 1-hour writes) of one usage object
    (its top level: `usage_reading` also reads its iterations)."""
    inp = _int(usage.get("input_tokens"))
    cr = _int(usage.get("cache_read_input_tokens"))
    cw = _int(usage.get("cache_creation_input_tokens"))
    out = _int(usage.get("output_tokens"))
    split = usage.get("cache_creation")
    if isinstance(split, dict):
        cw5, cw1 = _int(split.get("ephemeral_5m_input_tokens")), _int(split.get("ephemeral_1h_input_tokens"))
        cw, cw5 = split_writes(cw, cw5, cw1)
    else:
        cw5, cw1 = cw, 0  # without the split, a 5-minute write
    return inp, cr, cw, out, cw5, cw1


def usage_reading(usage: dict[str, object]) -> tuple[Sample, Detail | None]:
    """A usage object as a call event carries it: (the sample, its iterations' detail).

    `usage.iterations` lists the requests one API call made (SPEC, "Inputs"): `message` iterations
    (the model reading the conversation) and others, such as an `advisor_message` of another model.
    The top level adds up the `message` ones (its cache-write split can omit one's), so when the list
    holds more than one iteration the sample is the `message` iterations' sum, each read as a usage,
    and the detail says the rest (`iteration_detail`). Anything else (no list, one iteration, no
    `message` iteration, items that are not objects): the top level as it is, no detail."""
    top = usage_sample(usage)
    items = usage.get("iterations")
    if not isinstance(items, list) or len(items) < 2:
        return top, None
    parts: list[Iteration] = []
    for item in items:
        if isinstance(item, dict):
            kind, model = item.get("type"), item.get("model")
            parts.append((kind if isinstance(kind, str) else None, model_name(model), usage_sample(item)))
    return iteration_detail(top, parts)


def iteration_detail(top: Sample, parts: list[Iteration]) -> tuple[Sample, Detail | None]:
    """(sample, detail) from a call's iterations, read by each parser its own way (`usage_reading`).

    detail = (context, others): `context` is the last `message` iteration's sample, what the call
    read and wrote of the conversation (L, the floor, misses and the restart price come from it);
    `others` are the other iterations, (model, sample): another request's (an advisor's) with its
    model (UNKNOWN_MODEL when it names none), whose tokens count under that model; an earlier
    `message` iteration's with None (the call's own model: the sample's sum holds it already), which
    read the same conversation, so that the backtest can price and shift each read."""
    last = -1
    total = [0, 0, 0, 0, 0, 0]
    for n, (kind, _model, sample) in enumerate(parts):
        if kind in (None, "message"):
            last = n
            for i, v in enumerate(sample):
                total[i] += v
    if last < 0 or len(parts) < 2:
        return top, None
    others = tuple((None if kind in (None, "message") else model or UNKNOWN_MODEL, sample)
                   for n, (kind, model, sample) in enumerate(parts) if n != last)
    inp, cr, cw, out, cw5, cw1 = total
    return (inp, cr, cw, out, cw5, cw1), (parts[last][2], others)


def split_writes(cw: int, cw5: int, cw1: int) -> tuple[int, int]:
    """(cache writes, 5-minute writes) of a usage whose `cache_creation` split says `cw5` and `cw1`."""
    if cw == 0 and cw5 + cw1:  # the nested split is the truth when the total says 0 (fixed in 2.1.152)
        cw = cw5 + cw1
    if cw5 + cw1 != cw:  # a split that does not add up: the remainder counts as 5-minute writes
        cw5 = max(0, cw - cw1)
    return cw, cw5


def made_by(request_session: object, forked_from: object, session: object) -> str | None:
    """The session that made a call whose line, in a file of session `session` (its `sessionId`),
    names another: a fork's or a branch's copy of its parent's call. The client's own rule for it
    (2.1.332): the line's `requestSessionId`, else its `forkedFrom.sessionId` (a branch's copy),
    else its `sessionId`. None: this session's own call."""
    maker = request_session
    if maker.__class__ is not str and forked_from.__class__ is dict:
        maker = forked_from.get("sessionId")
    if maker.__class__ is str and maker and maker != session:
        return maker
    return None


def record_events(rec: dict[str, object], line: bytes | None = None) -> Iterator[Event]:
    """The events one parsed record holds. `line`: the line it was parsed from. Every parser finds
    an API call by the `"usage"` marker and a compaction by `compact_boundary` as written in the
    line (the report's search sees nothing else), so a record whose key or value spells them with a
    JSON escape (`"\\u0075sage"`) counts as neither here either."""
    kind = rec.get("type")
    ts = iso_to_epoch(rec.get("timestamp"))
    side = rec.get("isSidechain") is True
    if kind == "assistant":
        msg = rec.get("message")
        if isinstance(msg, dict):
            yield from _assistant_events(rec, msg, line, ts, side)
    elif kind == "user" and not side:
        msg = rec.get("message")
        content = msg.get("content") if isinstance(msg, dict) else None
        if not isinstance(content, list):
            return
        results = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
        for block in results:
            tid = block.get("tool_use_id")
            if short_id(tid):
                file = read_payload(rec.get("toolUseResult")) if len(results) == 1 else None
                yield ("result", ts, tid, block.get("is_error") is True, file)
    elif kind == "attachment" and not side:
        parent = _handoff_parent(rec.get("attachment"))
        if parent is not None:
            yield ("parent", ts, parent)
    elif kind == "system" and rec.get("subtype") == "compact_boundary" and (line is None or COMPACT in line):
        meta = rec.get("compactMetadata")
        meta = meta if isinstance(meta, dict) else {}
        trig = meta.get("trigger")
        yield ("compact", ts, trig if isinstance(trig, str) else None, _int(meta.get("preTokens")))


def _assistant_events(rec: dict[str, object], msg: dict[str, object], line: bytes | None, ts: float | None,
                      side: bool) -> Iterator[Event]:
    """An assistant record's API call and its tool uses (a subagent's tools are not in the main context)."""
    model = model_name(msg.get("model"))
    usage = msg.get("usage")
    if isinstance(usage, dict) and model != "<synthetic>" and (line is None or USAGE in line):
        key = call_key(msg.get("id"), rec.get("requestId"))
        if key is not None:
            reserve = compact_reserve(rec.get("version"))
            if reserve is not None:
                yield ("autocompact", ts, reserve)
            sample, detail = usage_reading(usage)
            maker = made_by(rec.get("requestSessionId"), rec.get("forkedFrom"), rec.get("sessionId"))
            if maker is not None:
                yield ("inherited", ts, maker)
            yield ("call", key, ts, model, side, *sample, detail)
    content = msg.get("content")
    if isinstance(content, list) and not side:
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                tid, name = block.get("id"), block.get("name")
                if short_id(tid) and short_id(name):
                    yield ("use", ts, tid, name, use_info(name, block.get("input")))


def _handoff_parent(att: object) -> str | None:
    """The parent session named by a SessionStart hook's injected handoff note, if `att` is one."""
    if not isinstance(att, dict) or att.get("type") != "hook_additional_context":
        return None
    if att.get("hookEvent") not in ("SessionStart", None):
        return None
    from session_watcher.core.notehead import parent_of  # only for such a line: rare

    content = att.get("content")
    for part in content if isinstance(content, list) else ():  # a number there is no list of parts
        found = parent_of(part) if isinstance(part, str) else None
        if found:
            return found
    return None


def parse_lines(lines: list[bytes]) -> tuple[list[Event], int]:
    """Events of complete lines, and how many lines were bad (not JSON, not UTF-8, too long)."""
    events: list[Event] = []
    bad = 0
    scan = fastjson.scanner()
    for line in lines:
        if not line:  # an empty line is nothing, and floods of them cost what this test costs
            continue
        if len(line) > MAX_LINE_BYTES:
            bad += 1
            continue
        # a line can matter only if it holds usage, a tool block, a compaction boundary or a handoff
        if not (b'"usage"' in line or b'"tool_' in line or b"compact_boundary" in line or HANDOFF in line):
            if not (line.startswith(b"{") and line.endswith(b"}")):  # else: no copy to strip
                stripped = line.strip()
                if stripped and not (stripped.startswith(b"{") and stripped.endswith(b"}")):
                    bad += 1
            continue
        try:
            # a record as Claude Code writes it straight through the C scanner; anything else (space
            # around it, an error) gets fastjson.loads's own verdict
            text = line.decode()
            rec, end = scan(text, 0)
            if end != len(text):
                raise ValueError(end)
        except (ValueError, SystemError, StopIteration, RecursionError):
            try:
                rec = fastjson.loads(line)
            except ValueError:  # JSONDecodeError and UnicodeDecodeError both
                bad += 1
                continue
        if isinstance(rec, dict):
            events.extend(record_events(rec, line))
        else:
            bad += 1
    return events, bad
