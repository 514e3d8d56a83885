"""Codex rollout lines -> the core's events. Pure: bytes and a small decoder state in, tuples out.

A rollout (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`) is one thread's log, each line
`{"timestamp", "type", "payload"}`. Unlike a Claude Code transcript a line does not stand alone: a
call's model is the latest `turn_context.model`, a `token_count` counts only where the running total
changed, and a subagent thread says so once, in its `session_meta`. That context is the decoder
state (`new_decoder`, plain JSON so that it rides in the reader's cursor between hook runs).

Events (core.transcript's): a model call is ("call", key, ts, model, sidechain, uncached, cr, cw, out,
cw, 0, None) with cr = `cached_input_tokens`, cw = `cache_write_input_tokens` where the line has it
(non-zero), else `input_tokens - cached_input_tokens` (older models write at the input price), uncached the rest,
so that the core's prompt size (uncached + cr + cw) is Codex's `input_tokens`. Per call: a
`token_usage_record` (keyed by its `response_id`); else `event_msg.token_count.info.last_token_usage`
where `total_token_usage` changed (snapshots repeat; deduplicating on `last` would merge two equal
calls). A `compacted` line is ("compact", ts, "auto", the last call's input). A non-default
`service_tier` is carried in the model name, `gpt-5.6-sol[priority]` (core.prices_openai reads it;
its tokens are the model's). A subagent thread's calls are sidechain calls: totals only.
"""

from __future__ import annotations

import sys

from session_watcher.agents.seam import HANDOFF, MAX_LINE_BYTES, iso_to_epoch
from session_watcher.core import fastjson
from session_watcher.core.caps import count, model_name, short_id

TYPE_CHECKING = False  # typing (with re) is several ms of a folding hook's start: annotations only
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, Literal

    from session_watcher.core.shapes import Event

MAX_COUNT = 10**9  # a count above this is a bad value, read as 0 (core.transcript's rule)
USAGE_KEYS = ("input_tokens", "cached_input_tokens", "cache_write_input_tokens", "output_tokens",
              "reasoning_output_tokens")
# the line types a decoder looks at; every other line (messages, tool output: most bytes) is passed
# over by a substring test before any JSON parsing
MARKERS = (b'"session_meta"', b'"turn_context"', b'"token_count"', b'"token_usage_record"', b'"compacted"',
           b'"thread_settings_applied"', HANDOFF)
DEFAULT_TIERS = ("default", "auto", "standard", "")
# a line's marker bits (`line_reader`): where it holds the handoff note's only; where it holds `token_count`
HANDOFF_ONLY = 1 << MARKERS.index(HANDOFF)
COUNT = 1 << MARKERS.index(b'"token_count"')


def new_decoder() -> dict[str, Any]:
    """The state a rollout's decoding starts from (and the reader's cursor keeps)."""
    return {"model": None, "tier": None, "total": None, "sub": False, "calls": 0, "last": None,
            "lastIn": 0, "records": False, "id": None}


_MINUTES: dict[str, int | None] = {}  # 'YYYY-MM-DDTHH:MM' -> the epoch second it starts at, or None
_FRACTIONS: dict[str, float] = {}  # 'mmmZ' -> 0.mmm, as met (a thousand at most)


def epoch(stamp: object) -> float | None:
    """`iso_to_epoch(stamp)`, the same float: a rollout stamps its lines 'YYYY-MM-DDTHH:MM:SS.mmmZ',
    most of them in a minute seen before (its start remembered, a few thousand at most)."""
    if stamp.__class__ is not str or len(stamp) != 24 or stamp[19] != ".":
        return iso_to_epoch(stamp)
    text: str = stamp
    frac = _FRACTIONS.get(text[20:])
    if frac is None:
        digits = text[20:23]
        if text[23] != "Z" or not (digits.isascii() and digits.isdigit()):
            return iso_to_epoch(text)
        frac = _FRACTIONS[text[20:]] = float("0." + digits)
    sec = text[17:19]
    minute = _MINUTES.get(text[:16], -1)
    if minute == -1:
        if len(_MINUTES) >= 4096:
            _MINUTES.clear()
        whole = iso_to_epoch(text[:16] + ":00Z")
        minute = _MINUTES[text[:16]] = None if whole is None else int(whole)
    if minute is None or not (sec.isascii() and sec.isdigit()):
        return iso_to_epoch(text)
    return minute + int(sec) + frac - 0  # iso_to_epoch's own sum, term for term: the same float


def is_rollout_head(line: bytes) -> bool:
    """True when `line` (a file's first line, or its first bytes) opens a Codex rollout."""
    head = line[:512]
    return head.startswith(b'{"timestamp"') and b'"type":"session_meta"' in head


def usage_of(usage: object) -> tuple[int, int, int, int] | None:
    """(input, cached, cache write (-1 where the object has none), output) of a Codex usage object;
    None when it is not one."""
    if not isinstance(usage, dict):
        return None
    write = usage.get("cache_write_input_tokens")
    return (count(usage.get("input_tokens")), count(usage.get("cached_input_tokens")),
            count(write) if write is not None else -1, count(usage.get("output_tokens")))


def sample(usage: tuple[int, int, int, int]) -> tuple[int, int, int, int]:
    """(uncached, cache read, cache write, output) as the core counts them: the sum of the first three
    is Codex's `input_tokens` (a cached count above the input is read as all of it). A write of 0
    reads as none reported: 0.145.0-alpha.30 wrote 0 on every call, the uncached part written all
    the same (the next call read it)."""
    inp, cached, write, out = usage
    cr = min(cached, inp)
    cw = inp - cr if write <= 0 else min(write, inp - cr)
    return inp - cr - cw, cr, cw, out


def _total_key(total: object) -> list[int] | None:
    if not isinstance(total, dict):
        return None
    got = total.get
    return [v if (v := got(k)).__class__ is int and 0 < v <= MAX_COUNT else 0 for k in USAGE_KEYS]


def _model(d: dict[str, Any]) -> str | None:
    model: str | None = d["model"]
    tier = d["tier"]
    if model and tier and tier not in DEFAULT_TIERS:
        return f"{model}[{tier}]"
    return model


def _call(d: dict[str, Any], key: str, stamp: object, usage: tuple[int, int, int, int]) -> Event:
    inp, cr, cw, out = sample(usage)
    d["lastIn"] = usage[0]
    return ("call", key, epoch(stamp), _model(d), bool(d["sub"]), inp, cr, cw, out, cw, 0, None)


def _token_count(d: dict[str, Any], info: object, ts: object) -> Event | None:
    """A `token_count` snapshot: a call where its running total changed, else nothing."""
    if not isinstance(info, dict):
        return None  # the first snapshot of older versions: `info: null`, before any call
    return snapshot(d, _total_key(info.get("total_token_usage")), usage_of(info.get("last_token_usage")), ts)


def snapshot(d: dict[str, Any], total: list[int] | None, usage: tuple[int, int, int, int] | None, ts: object,
             ) -> Event | None:
    """A `token_count` snapshot read (its running total as `_total_key` reads it, its last call's
    usage as `usage_of` does): a call where the total changed, else nothing."""
    if total is None or total == d["total"]:
        return None  # a repeated snapshot (turn start, resume, after a compaction)
    d["total"] = total
    if usage is None or d["records"]:
        return None  # `token_usage_record` lines carry the calls of this rollout
    d["calls"] += 1
    key = f"{d['id'] or 'codex'}#{d['calls']}"
    d["last"] = key
    return _call(d, key, ts, usage)


def _usage_record(d: dict[str, Any], p: dict[str, Any], ts: object) -> Event | None:
    """A `token_usage_record`: one model response, keyed by its `response_id`."""
    usage = usage_of(p.get("usage"))
    rid = p.get("response_id")
    if usage is None or not short_id(rid) or not rid:
        return None
    total = _total_key(p.get("thread_token_usage"))
    key = rid
    if not d["records"] and total is not None and total == d["total"] and d["last"]:
        key = d["last"]  # the call a `token_count` just counted: this sample replaces it
    d["records"] = True
    if total is not None:
        d["total"] = total
    return _call(d, key, ts, usage)


def _event_msg(d: dict[str, Any], p: dict[str, Any], ts: object) -> Event | None:
    sub = p.get("type")
    if sub == "token_count":
        return _token_count(d, p.get("info"), ts)
    if sub == "thread_settings_applied":
        settings = p.get("thread_settings")
        tier = settings.get("service_tier") if isinstance(settings, dict) else None
        d["tier"] = tier if isinstance(tier, str) and len(tier) <= 32 else None
    return None


def _turn(d: dict[str, Any], p: dict[str, Any], _ts: object) -> None:
    model = model_name(p.get("model"))
    if model:
        d["model"] = model


def _compacted(d: dict[str, Any], _p: dict[str, Any], ts: object) -> Event:
    return ("compact", epoch(ts), "auto", d["lastIn"])


def _response_item(d: dict[str, Any], p: dict[str, Any], ts: object) -> Event | None:
    if d["sub"] or p.get("type") != "message" or p.get("role") == "assistant":
        return None
    return _parent(p, ts)


def _meta(d: dict[str, Any], p: dict[str, Any], _ts: object) -> None:
    if d["id"] is None and short_id(p.get("id")):
        d["id"] = p["id"]
    src = p.get("source")
    if isinstance(src, dict) and "subagent" in src:
        d["sub"] = True


# each handler is given the line's `timestamp` as written: read (`epoch`) only for an event
HANDLERS: dict[object, Callable[[dict[str, Any], dict[str, Any], object], Event | None]] = {
    "event_msg": _event_msg, "turn_context": _turn, "token_usage_record": _usage_record,
    "compacted": _compacted, "session_meta": _meta, "response_item": _response_item,
}


def _parent(p: dict[str, Any], ts: object) -> Event | None:
    """The parent session named by a handoff note the SessionStart hook injected, if `p` holds one."""
    from session_watcher.core.notehead import MARKER, parent_of  # only for such a line: rare

    content = p.get("content")
    for part in content if isinstance(content, list) else ():
        text = part.get("text") if isinstance(part, dict) else None
        at = text.find(MARKER) if isinstance(text, str) else -1
        found = parent_of(text[at:]) if isinstance(text, str) and at >= 0 else None
        if found:
            return ("parent", epoch(ts), found)
    return None


_SCHEMA: list[Any] = []  # `lines.record` and `lines.counts` once bound


def bind_schema() -> None:
    """Read marked lines through msgspec (`agents.codex.lines`) from now on: for the readers of
    whole rollouts (replay, the report), never a hook (its few lines would pay for the import)."""
    if not _SCHEMA:
        from session_watcher.agents.codex.lines import counts, record

        _SCHEMA.extend((record, counts))


def parse_lines(lines: list[bytes], d: dict[str, Any]) -> tuple[list[Event], int]:
    """Events of complete rollout lines and how many were bad (not JSON, too long); `d` is updated."""
    events: list[Event] = []
    bad = 0
    take = line_reader(d)
    for line in lines:
        if not line:
            continue
        if len(line) > MAX_LINE_BYTES:
            bad += 1
            continue
        which = first_marker(line)
        if not which:
            continue
        ev = take(line, which)
        if ev is False:
            bad += 1
        elif ev is not None:
            events.append(ev)
    return events, bad


def first_marker(line: bytes) -> int:
    """1 << i for the first of MARKERS that `line` holds (MARKERS[i]), 0 for none."""
    for i, m in enumerate(MARKERS):
        if m in line:
            return 1 << i
    return 0


def line_reader(d: dict[str, Any]) -> Callable[[bytes, int], Event | Literal[False] | None]:
    """`take(line, which)`: the event of one rollout line (in order) or None, False where the line is
    bad (not JSON, not an object); `d` is updated. `which`: bit i set where the line holds MARKERS[i]
    (every marker it holds: `core.markscan.marked_lines`' bits, the report's search; or at least the
    first: `first_marker`), 0 where not looked for yet (a line without any is passed over). A line
    whose only marker is the handoff note's (a message's text) goes the JSON way, as in the Claude
    Code decoder; one with the `token_count` marker is first read as a snapshot (`lines.counts`,
    which hands any other line back)."""
    schema, counts = _SCHEMA if _SCHEMA else (None, None)
    int_digits = sys.get_int_max_str_digits() if schema is not None else 0
    handlers = HANDLERS

    def take(line: bytes, which: int) -> Event | Literal[False] | None:
        if not which:
            which = first_marker(line)
            if not which:
                return None  # messages, tool output: most lines, no JSON read
        if which & COUNT and counts is not None:  # most marked lines: read straight into a snapshot
            snap = counts(line, int_digits)
            if snap is not None:
                return snapshot(d, snap[1], snap[2], snap[0])
        got = schema(line, int_digits) if schema is not None and which != HANDOFF_ONLY else None
        if got is None:
            try:
                rec = fastjson.loads(line)
            except ValueError:
                return False
            if not isinstance(rec, dict):
                return False
            got = rec.get("type"), rec.get("timestamp"), rec.get("payload")
        handler = handlers.get(got[0])
        p = got[2]
        if handler is None or not isinstance(p, dict):
            return None
        return handler(d, p, got[1])

    return take
