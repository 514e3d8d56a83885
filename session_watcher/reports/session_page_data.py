"""One session's story as plain data for the session page: timeline rows, health over time, compactions.

`PageBuilder` reads transcript records one at a time (`feed` takes lines as they come: the live view
feeds it only the bytes appended since) and `model()` gives the page's JSON-able dict.
`load_model(path)` reads the transcript once (`PageRead`: one open, chunk by chunk with the hooks'
reader, `state.reader.read_new`: complete lines only, a line over 8 MiB skipped, an API call's usage
kept from it): each chunk goes to the engine's replay, whose parse hands the builder every record it
decodes (`bulkparse.tap`: no line decoded twice) and whose fold makes the watcher's own trace, kept as
the page's story rows as it is made (`StoryTrace`), never as whole status documents; the closed-loop
backtest folds the replay's parsed events again. The page's renderer and the live view both draw
from this one dict. Memory follows the session's calls and tool calls, not its bytes: rows are kept
as their values (calls in columns, tool calls as lists, story rows as tuples), dicts only as written.

A line is decoded by the one msgspec schema (`agents.claude_code.records`, shared with replay and the
report: the rest, tool output and message text, is checked but not built); where msgspec's reading
could differ from `json.loads`'s (`records.decode` says None; or a line `str` with a lone surrogate),
the line goes through `json.loads` as before (its record made the same structs, `_from_dict`), so the
records read are the ones `json.loads` gives.

Timeline rows, in start order:

* `call` - one main-chain API call (message id + request id, the last usage sample wins). It starts
  when its request was sent (the newest main-chain user, tool-result or compaction record before its
  first sample; else the first sample) and ends at its last sample.
* `tool` - one tool call: from the assistant record that holds its `tool_use` block to the record that
  holds its `tool_result` (open, `end` null, while the result has not arrived). A Read of a canonical
  path read before in the session is a re-read; `firstReadAt` is when that path was first read.

Health is fed through `core.health` in record order (every usage sample, tool result and compaction),
exactly as the fold feeds it; `healthBar` samples the score at each 5 % of the session's time.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from array import array
from json.encoder import encode_basestring_ascii
from typing import TYPE_CHECKING, Any

from session_watcher.agents.claude_code import bulkparse
from session_watcher.agents.claude_code.records import (
    NOT_JSON,
    Block,
    Input,
    Message,
    Record,
    Usage,
    decode,
    msgspec,
    stamp_to_epoch,
)
from session_watcher.agents.claude_code.records import usage_reading as struct_reading
from session_watcher.agents.claude_code.transcript import usage_reading
from session_watcher.core import health
from session_watcher.core.backtest import call_from_trace, call_of
from session_watcher.core.chains import AutoWatch
from session_watcher.core.eoq import real_request
from session_watcher.core.handoff import after_reminders
from session_watcher.core.markscan import finder, marked_lines
from session_watcher.core.numbers import duration, tokens
from session_watcher.core.status import context_point, rounded
from session_watcher.reports import jsontext

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from session_watcher.core.backtest import Call
    from session_watcher.core.chains import Auto
    from session_watcher.core.shapes import (
        Alert,
        CallUsage,
        Config,
        Detail,
        Event,
        ModelParams,
        Quantities,
        Sample,
        State,
        UseInfo,
    )

    Row = int | list[Any]  # a call's number, a tool's values (PageBuilder)

DEFAULT_WINDOW = 200_000
LARGE_WINDOW = 1_000_000
BAR_STEPS = 20  # 0 %, 5 %, ..., 100 %
SUMMARY_KEYS = ("command", "pattern", "url", "query", "description", "prompt", "skill")


def _summary(name: str, inp: Input | None, cwd: str | None, canon_of: dict[tuple[str, str], str] | None = None,
             ) -> tuple[str, str | None]:
    """A short label for a tool call, and its canonical file path (file tools only; `canon_of`:
    the paths made so far, by folder and path as written: a session reads a few hundred)."""
    if inp is None:
        return "", None
    path = inp.file_path or inp.notebook_path
    if isinstance(path, str) and path:
        where = (cwd or "/", path)
        canon = canon_of.get(where) if canon_of is not None else None
        if canon is None:
            canon = os.path.normpath(os.path.join(*where))
            if canon_of is not None:
                canon_of[where] = canon
        return canon, canon
    for key in SUMMARY_KEYS:
        v = getattr(inp, key)
        if isinstance(v, str) and v:
            return _label(v), None
    return "", None


def _label(v: str) -> str:
    """The first LABEL_CHARS of the text's words, one space between: `" ".join(v.split())`'s, from
    as little of it as holds them (a head's words are the text's, but its last may go on)."""
    text = " ".join(v[:LABEL_HEAD].split())
    if len(v) <= LABEL_HEAD or (len(text) >= LABEL_CHARS and (len(v) <= LABEL_READ or text.rfind(" ") > LABEL_CHARS)):
        return text[:LABEL_CHARS]
    text = " ".join(v[:LABEL_READ].split())
    if len(v) > LABEL_READ and text.rfind(" ") <= LABEL_CHARS:  # its last word may go on: the whole
        text = " ".join(v.split())
    return text[:LABEL_CHARS]


LABEL_CHARS = 120
LABEL_HEAD = 2 * LABEL_CHARS  # most labels' words are in this much of their text
LABEL_READ = 4096  # else in this much, where they are enough


PROMPT_CHARS = 120
TAG = re.compile(r"</?[A-Za-z][\w-]{0,40}(?:\s[^<>]{0,200})?>")  # markup the client wraps text in
COMMAND = re.compile(r"<command-name>(.*?)</command-name>(?:.*?<command-args>(.*?)</command-args>)?", re.S)
# a background task's notification: its summary, else its description, titles the turn (not its bare id)
TASK_SAYS = (re.compile(r"<summary>(.*?)</summary>", re.S), re.compile(r"<description>(.*?)</description>", re.S))


def _text(value: object) -> str | None:
    """A text block's text: a str (json.loads's record), or kept encoded (msgspec's)."""
    if isinstance(value, msgspec.Raw):
        try:
            value = msgspec.json.decode(value)
        except msgspec.DecodeError:
            return None
    return value if isinstance(value, str) else None


# a user record that answers what was entered, or is the client's note: no turn of its own (a local
# command's output, `/exit`'s "Goodbye!" or a compaction's "Compacted", bash mode's output, the caveat
# before a local command, an interruption)
NOT_TURNS = ("<local-command-stdout", "<local-command-stderr", "<local-command-caveat", "<bash-stdout",
             "<bash-stderr", "[Request interrupted")


def prompt_text(rec: Record, content: object) -> str | None:
    """The start of the user's prompt when this user record is one (not a tool result, the client's
    own meta text or a compaction's summary, a local command's or bash mode's output: NOT_TURNS, a
    text block of it so led left out as the handoff note leaves it out), else None; a slash command by
    its name and arguments. The system reminders the client sends around the words are no part of
    them (`core.handoff.after_reminders`, the handoff note's rule): a record of reminders alone is no
    prompt."""
    if rec.isMeta or rec.isCompactSummary:
        return None
    if isinstance(content, str):
        text = after_reminders(content)
    elif isinstance(content, list):
        if any(b.type == "tool_result" for b in content):
            return None
        text = " ".join(t for b in content if b.type == "text" and (t := _text(b.text)) is not None
                        and (t := after_reminders(t)) and not t.startswith(NOT_TURNS))  # each block's own
    else:
        return None
    if text.startswith(NOT_TURNS):
        return None
    command = COMMAND.search(text[:4096])
    if command:
        text = f"{command.group(1)} {command.group(2) or ''}"
    elif text.startswith("<task-notification>"):
        said = next((m.group(1) for pattern in TASK_SAYS if (m := pattern.search(text[:8192])) and m.group(1).strip()),
                    None)
        text = said if said is not None else text
    text = " ".join(TAG.sub(" ", text[:4096]).split())
    if len(text) > PROMPT_CHARS:  # cut between words, and said to be cut
        head = text[:PROMPT_CHARS - 1]
        text = (head.rsplit(" ", 1)[0] if " " in head else head) + "…"
    return text or None


def window_for(models: list[str], peak_prompt: int, reported: int | None = None) -> int:
    """The session's context window (SPEC "The context window"), from what a transcript holds."""
    if reported:
        return reported
    for m in models:
        low = m.lower()
        if "[1m]" in low or "1m context" in low:
            return LARGE_WINDOW
    return LARGE_WINDOW if peak_prompt > DEFAULT_WINDOW else DEFAULT_WINDOW


# a page's peak memory follows its rows (under 1 kB each as kept, its block of text included); a
# transcript holds at most a few hundred a megabyte (real sessions 290, bench.generate's 120): per
# byte, on the safe side
PAGE_MEMORY_BASE = 32 << 20
PAGE_MEMORY_PER_BYTE = 2


def page_memory(size: int) -> int:
    """The most a session page of a transcript of `size` bytes is expected to take (`report
    --pages` runs no more at once than the memory holds), well above what is measured
    (docs/benchmarks.md: bench.generate's 1 GB transcript peaks under 150 MB)."""
    return PAGE_MEMORY_BASE + PAGE_MEMORY_PER_BYTE * max(0, size)


# --- decoding: the fields the page reads, as json.loads would give them --------------------------


def _from_dict(rec: dict[str, Any]) -> Record:
    """json.loads's record as the structs msgspec's decoding gives (the fields the page reads, each
    value as it is: a struct's constructor checks no type), so the page reads one kind of record."""
    raw = rec.get("message")
    message = None
    if isinstance(raw, dict):
        content = raw.get("content")
        if isinstance(content, list):
            content = [
                Block(type=b.get("type"), id=b.get("id"), name=b.get("name"), tool_use_id=b.get("tool_use_id"),
                      is_error=b.get("is_error"), text=b.get("text"),  # type: ignore[arg-type]  # _text reads either
                      input=Input(**{k: i.get(k) for k in _INPUT}) if isinstance(i := b.get("input"), dict) else None)
                for b in content if isinstance(b, dict)
            ]
        message = Message(mid=raw.get("id"), model=raw.get("model"), usage=raw.get("usage"), content=content)
    return Record(type=rec.get("type"), isSidechain=rec.get("isSidechain"), timestamp=rec.get("timestamp"),
                  sessionId=rec.get("sessionId"), cwd=rec.get("cwd"), subtype=rec.get("subtype"),
                  compactMetadata=rec.get("compactMetadata"), requestId=rec.get("requestId"),
                  isMeta=rec.get("isMeta"), isCompactSummary=rec.get("isCompactSummary"), message=message)


_INPUT = Input.__struct_fields__
_KINDS = ("assistant", "user", "system")


def decode_record(line: bytes | str) -> Record | None:
    """One transcript line as the record the page reads (None: not a JSON object, or one the page
    passes over: a sidechain record, or not a conversation record)."""
    if isinstance(line, str):
        try:
            data = line.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: only json.loads reads it
            data = b""
    else:
        data = line
    r = decode(data, sys.get_int_max_str_digits()) if data else None
    if r is not None and _iterations_read(r):
        return r if r.type in _KINDS and not r.isSidechain else None
    try:
        rec = json.loads(line if isinstance(line, str) else line.decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        return None
    return _from_dict(rec) if isinstance(rec, dict) else None


def _iterations_read(r: Record) -> bool:
    """False when the record's usage lists iterations its structs do not take (an item that is no
    object, a count that is no int): json.loads's record is then the one read."""
    usage = r.message.usage if r.message is not None else None
    if usage is None or usage.iterations is None or len(usage.iterations) < 2:
        return True
    try:
        struct_reading(usage)
    except NOT_JSON:
        return False
    return True


def _reading(usage: object) -> tuple[Sample, Detail | None] | None:
    """The usage's reading by the hooks' rule (a bad value counts 0), from its struct or its dict."""
    if isinstance(usage, Usage):
        return struct_reading(usage)
    return usage_reading(usage) if isinstance(usage, dict) else None


# --- the page's rows: kept as their values, made dicts as they are written ---------------------------

CALL_KEYS = ("kind", "id", "n", "start", "end", "model", "turn", "input", "cacheRead", "cacheWrite", "output",
             "prompt", "promptText", "durText")
TOOL_KEYS = ("kind", "id", "name", "label", "path", "start", "end", "durText", "isError", "reread", "firstReadAt",
             "call", "turn")
T_NAME, T_PATH, T_START, T_END, T_ERROR, T_REREAD, T_FIRST_READ = 2, 4, 5, 6, 8, 9, 10
COUNTS = 5  # a call's input, cache read, cache write, output and prompt tokens


def _tool_dict(row: list[Any]) -> dict[str, Any]:
    out = dict(zip(TOOL_KEYS, row, strict=True))
    if row[T_END] is not None:
        out["durText"] = duration(row[T_END] - row[T_START])
    return out


class Packed(list[Any]):
    """Rows kept as their values, and the function that makes one the page's dict (`row_dict`,
    `story_dict`): the page's writer makes them a block at a time (reports.session_page); `as_json`,
    where there is one, writes a block's text as `json.dumps` of their dicts would (`rows_json`)."""

    def __init__(self, items: Iterable[Any], as_dict: Callable[[Any], dict[str, Any]],
                 as_json: Callable[[list[Any]], list[str] | None] | None = None) -> None:
        super().__init__(items)
        self.as_dict = as_dict
        self.as_json = as_json


_CALL_JSON = ('{"kind":"call","id":%s,"n":%d,"start":%r,"end":%r,"model":%s,"turn":%d,"input":%d,"cacheRead":%d,'
              '"cacheWrite":%d,"output":%d,"prompt":%d,"promptText":%s,"durText":%s}')
_TOOL_JSON = ('{"kind":"tool","id":%s,"name":%s,"label":%s,"path":%s,"start":%r,"end":%s,"durText":%s,"isError":%s,'
              '"reread":%s,"firstReadAt":%s,"call":%s,"turn":%d}')
_BOOL = ("false", "true")
_NOT_FINITE = re.compile(r":-?(?:inf|nan)[,}]")  # a figure JSON cannot hold: the dict's path writes it null
_str = encode_basestring_ascii  # json.dumps's own string writer (ensure_ascii)


# --- the page's reading, record by record -------------------------------------------------------


class PageBuilder:
    """The page's model of a transcript read so far: `feed` it complete lines in file order, ask
    `model()` at any point. `touched` collects the rows added or changed since it was last emptied
    (the live view re-encodes only those; `track` False: none, the page written once)."""

    def __init__(self, session_id: str | None = None, track: bool = True) -> None:
        # a call row is its number (from 0) in columns: its id, model, turn, start and end, counts (COUNTS);
        # a tool row, a list of its values (TOOL_KEYS)
        self.calls: dict[str, int] = {}
        self.call_ids: list[str] = []
        self.call_models: list[str | None] = []
        self.call_turns = array("q")
        self.call_times = array("d")  # start, end
        self.call_counts = array("q")
        self.tools: dict[str, list[Any]] = {}
        self.compactions: list[dict[str, Any]] = []
        # health's inputs in record order: the time, and a call's prompt (int), a tool row, None: a compaction
        self.event_ts = array("d")
        self.event_args: list[int | list[Any] | None] = []
        self.first_read: dict[str, float] = {}
        self.more_paths: dict[str, list[str]] = {}  # tool id -> the other files a shell command printed
        self.more_again: dict[str, list[bool]] = {}  # tool id -> whether each was read before
        self.canon_of: dict[tuple[str, str], str] = {}  # `_summary`'s
        self.last_send: float | None = None
        self.t_first: float | None = None
        self.t_last: float | None = None
        self.models: list[str] = []
        self.turns: list[dict[str, Any]] = []  # the user's prompts: each starts a turn (rows before the first: 0)
        self.sid = session_id
        self.touched: dict[object, Row] = {}  # `key(row)` -> row
        self.track = track

    def feed(self, lines: Iterable[bytes | str]) -> None:
        for line in lines:
            rec = decode_record(line)
            if rec is not None:
                self.take(rec)

    def add(self, rec: dict[str, Any]) -> None:
        """One record as json.loads reads it."""
        self.take(_from_dict(rec))

    def take(self, rec: Record) -> None:
        """One decoded record."""
        kind = rec.type
        if kind not in _KINDS or rec.isSidechain:
            return
        ts = stamp_to_epoch(rec.timestamp)
        if ts is None:
            return
        if not self.sid:
            self.sid = rec.sessionId if isinstance(rec.sessionId, str) else None
        if self.t_first is None or ts < self.t_first:
            self.t_first = ts
        if self.t_last is None or ts > self.t_last:
            self.t_last = ts
        msg = rec.message
        content = msg.content if msg is not None else None
        if kind == "system" and rec.subtype == "compact_boundary":
            meta = rec.compactMetadata if isinstance(rec.compactMetadata, dict) else {}
            trigger, pre = meta.get("trigger"), meta.get("preTokens")  # data: only the types the page draws
            self.compactions.append({"ts": ts, "trigger": trigger if isinstance(trigger, str) else None,
                                     "preTokens": pre if isinstance(pre, int) and not isinstance(pre, bool) else None})
            self.event_ts.append(ts)
            self.event_args.append(None)
            self.last_send = ts
            return
        if kind == "user":
            self.last_send = ts
            said = prompt_text(rec, content)
            if said is not None:  # the user's prompt: a new turn
                self.turns.append({"n": len(self.turns) + 1, "ts": ts, "text": said})
            if isinstance(content, list):
                self._results(content, ts)
            return
        if kind == "assistant" and msg is not None:
            key = f"{msg.mid}|{rec.requestId}"
            reading = _reading(msg.usage)
            # an API call as the hooks count one: a `<synthetic>` record (the client's own) is none
            if reading is not None and isinstance(msg.mid, str) and msg.model != "<synthetic>":
                self._sample(key, reading, msg.model, ts)
            if isinstance(content, list):
                cwd = rec.cwd if isinstance(rec.cwd, str) else None
                self._uses(content, key, cwd, ts)

    def take_events(self, events: list[Event], path: str) -> None:
        """Another agent's log at `path` (a Codex rollout, whose lines `take` does not read): the
        calls and compactions its decoder found, as a transcript's records would give them (a call's
        start is unknown there: drawn at its end); the session's id as its path names it."""
        if not self.sid:
            from session_watcher.agents import session_id

            self.sid = session_id(path)
        for ev in events:
            ts = ev[2] if ev[0] == "call" else ev[1]
            if not isinstance(ts, float | int) or (ev[0] == "call" and ev[4]):  # a subagent's call: totals only
                continue
            ts = float(ts)
            self.t_first = ts if self.t_first is None else min(self.t_first, ts)
            self.t_last = ts if self.t_last is None else max(self.t_last, ts)
            if ev[0] == "call":
                self._sample(str(ev[1]), ((ev[5], ev[6], ev[7], ev[8], 0, 0), None), ev[3], ts)
            elif ev[0] == "compact":
                self.compactions.append({"ts": ts, "trigger": ev[2], "preTokens": ev[3]})
                self.event_ts.append(ts)
                self.event_args.append(None)
            elif ev[0] == "use" and ev[2] not in self.tools:
                self._event_use(ev[2], ev[3], ev[4], ts)
            elif ev[0] == "result":
                self._end(ev[2], bool(ev[3]), ts)

    def _event_use(self, tid: str, name: str, info: UseInfo | None, ts: float) -> None:
        """A tool call a decoder found (the fold's event): labelled by the file it reads, else
        nothing: the page writes its name before the label (the name there too read `Edit Edit`)."""
        raw = info.get("path") if info else None
        path = os.path.normpath(os.path.expanduser(raw)) if isinstance(raw, str) and raw else None
        tool = self.tools[tid] = ["tool", tid, sys.intern(name), path or "", path, ts, None, None, False, False,
                                  None, None, len(self.turns)]  # its call: logged after it, not known here
        more = info.get("more") if info else None
        if more:  # a shell command that printed several files
            self.more_paths[tid] = [os.path.normpath(os.path.expanduser(p)) for p in more]
        if self.track:
            self.touched[id(tool)] = tool

    def _results(self, content: list[Block], ts: float) -> None:
        for block in content:
            if block.type == "tool_result":
                self._end(str(block.tool_use_id), bool(block.is_error), ts)

    def _end(self, tid: str, is_error: bool, ts: float) -> None:
        """A tool call's result: its end, whether it failed, whether it read a file read before."""
        tool = self.tools.get(tid)
        if tool is not None and tool[T_END] is None:
            tool[T_END] = max(ts, tool[T_START])
            tool[T_ERROR] = is_error
            path = tool[T_PATH]
            if tool[T_NAME] in health.READS and path:
                if path in self.first_read:
                    tool[T_REREAD] = True
                    tool[T_FIRST_READ] = self.first_read[path]
                else:
                    self.first_read[path] = tool[T_START]
                for other in self.more_paths.get(tid, ()):
                    self.more_again.setdefault(tid, []).append(other in self.first_read)
                    self.first_read.setdefault(other, tool[T_START])
            self.event_ts.append(ts)
            self.event_args.append(tool)
            if self.track:
                self.touched[id(tool)] = tool

    def _sample(self, key: str, reading: tuple[Sample, Detail | None], model: object, ts: float) -> None:
        (inp, cr, cw, out, _cw5, _cw1), detail = reading
        prompt = inp + cr + cw if detail is None else sum(detail[0][:3])  # the context: its last message
        n = self.calls.get(key)
        if n is None:
            last_send = self.last_send
            start = last_send if last_send is not None and last_send <= ts else ts
            n = self.calls[key] = len(self.call_ids)
            self.call_ids.append(key)
            self.call_models.append(sys.intern(model) if isinstance(model, str) else None)
            self.call_turns.append(len(self.turns))
            self.call_times.extend((start, ts))
            self.call_counts.extend((inp, cr, cw, out, prompt))
        else:  # the call's next record: its last sample wins
            times, counts, i = self.call_times, self.call_counts, COUNTS * n
            times[2 * n + 1] = max(ts, times[2 * n + 1])
            counts[i], counts[i + 1], counts[i + 2], counts[i + 3], counts[i + 4] = inp, cr, cw, out, prompt
        if self.track:
            self.touched[("call", n)] = n
        if isinstance(model, str) and model not in self.models:
            self.models.append(model)
        self.event_ts.append(ts)
        self.event_args.append(prompt)

    def _uses(self, content: list[Block], key: str, cwd: str | None, ts: float) -> None:
        for block in content:
            if block.type != "tool_use":
                continue
            tid = str(block.id)
            if tid in self.tools:
                continue
            name = sys.intern(str(block.name or "?"))
            label, path = _summary(name, block.input, cwd, self.canon_of)
            n = self.calls.get(key)
            tool = self.tools[tid] = ["tool", tid, name, label, path, ts, None, None, False, False, None,
                                      None if n is None else n + 1, len(self.turns)]
            if self.track:
                self.touched[id(tool)] = tool

    def ordered(self) -> list[Row]:
        """Every row, in start order (calls before tools that start at the same time)."""
        times = self.call_times
        return sorted([*range(len(self.call_ids)), *self.tools.values()],
                      key=lambda r: (times[2 * r], False) if isinstance(r, int) else (r[T_START], True))

    def row_dict(self, row: Row) -> dict[str, Any]:
        """A row as the page's data, its figures in the package's one wording (core.numbers)."""
        if not isinstance(row, int):
            return _tool_dict(row)
        times, counts, i = self.call_times, self.call_counts, COUNTS * row
        start, end, prompt = times[2 * row], times[2 * row + 1], counts[i + 4]
        return {"kind": "call", "id": self.call_ids[row], "n": row + 1, "start": start, "end": end,
                "model": self.call_models[row], "turn": self.call_turns[row], "input": counts[i],
                "cacheRead": counts[i + 1], "cacheWrite": counts[i + 2], "output": counts[i + 3], "prompt": prompt,
                "promptText": tokens(prompt), "durText": duration(end - start)}

    def rows_json(self, block: list[Row]) -> list[str] | None:
        """Each row's JSON: `json.dumps(row_dict(r), separators=(",", ":"))`, the same text, written
        without the dict; None where a row is not as the builder makes them (a time not finite: the
        dict's text has it null, `reports.jsontext`)."""
        times, counts, ids, models, turns = self.call_times, self.call_counts, self.call_ids, self.call_models, \
            self.call_turns
        out: list[str] = []
        for row in block:
            if isinstance(row, int):
                start, end, i = times[2 * row], times[2 * row + 1], COUNTS * row
                model = models[row]
                out.append(_CALL_JSON % (
                    _str(ids[row]), row + 1, start, end, "null" if model is None else _str(model), turns[row],
                    counts[i], counts[i + 1], counts[i + 2], counts[i + 3], counts[i + 4],
                    _str(tokens(counts[i + 4])), _str(duration(end - start))))
                continue
            end, path, first, call = row[T_END], row[T_PATH], row[T_FIRST_READ], row[11]
            if end is None and row[7] is not None:
                return None
            out.append(_TOOL_JSON % (
                _str(row[1]), _str(row[2]), _str(row[3]), "null" if path is None else _str(path), row[T_START],
                "null" if end is None else repr(end), "null" if end is None else _str(duration(end - row[T_START])),
                _BOOL[row[T_ERROR]], _BOOL[row[T_REREAD]], "null" if first is None else repr(first),
                "null" if call is None else call, row[12]))
        return out if _NOT_FINITE.search(",".join(out)) is None else None

    def rows(self) -> list[dict[str, Any]]:
        """Every row as the page's data (`row_dict`), in start order."""
        return [self.row_dict(r) for r in self.ordered()]

    @staticmethod
    def key(row: Row) -> object:
        """What tells a row from every other while the builder lives (`touched`'s keys)."""
        return ("call", row) if isinstance(row, int) else id(row)

    def model(self, trace: StoryTrace | None = None, final_status: dict[str, Any] | None = None,
              backtest: dict[str, Any] | None = None, packed: bool = False) -> dict[str, Any]:
        """The page's data from what was fed so far and the replay's trace (None: no story), with the
        session's backtest document when there is one (backtest_summary); `packed`: the rows and story
        rows as `Packed` lists of their values, each made a dict only as the page is written."""
        peak = max(self.call_counts[COUNTS - 1::COUNTS], default=0)
        reported = None
        if final_status:
            cp = final_status.get("contextPressure")
            if isinstance(cp, dict) and isinstance(cp.get("contextWindow"), int):
                reported = cp["contextWindow"]
        window = window_for(self.models, peak, reported)
        t0 = self.t_first if self.t_first is not None else 0.0
        t1 = self.t_last if self.t_last is not None else t0
        for tool in self.tools.values():  # an open tool call runs to the end of what is known
            t1 = max(t1, tool[T_START])
        final, bar = self._health(window, t0, t1)
        fork = fork_of(final_status)
        return {
            **({"fork": fork} if fork else {}),  # a page of a session that is no fork is what it was
            "sessionId": self.sid or (final_status or {}).get("sessionId"),
            "t0": t0,
            "t1": t1,
            "window": window,
            "windowText": tokens(window),
            "durationText": duration(t1 - t0),
            "models": list(self.models),
            "rows": Packed(self.ordered(), self.row_dict, self.rows_json) if packed else self.rows(),
            "compactions": list(self.compactions),
            "turns": list(self.turns),
            # `why` by signal; `nothing`: why a session without a call has no grade (core.health.ungraded)
            "health": {**final, "why": health_why(final),
                       **({"nothing": final["why"]} if final["grade"] is None else {})},
            "healthBar": bar,
            "story": Packed(trace or [], story_dict, story_json) if packed else [story_dict(r) for r in trace or []],
            "backtest": backtest_summary(own_calls(trace.calls, fork) if trace else None, final_status, backtest,
                                         trace.autos.autos if trace else None),
            "storyAvailable": trace is not None,
            "lampAt": trace.lamp_at if trace is not None else None,
            "restartNow": restart_now(final_status) if trace is not None else None,  # no time: no age
            "storyError": None,
        }

    def _health(self, window: int, t0: float, t1: float) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """The final grade and the bar: health record by record, as the fold does it. The bar's
        sample at time t is the grade after the records before the first one later than t (the
        sample times rise, so one pass graded at each of them gives every sample)."""
        h = health.new_health()
        health.open_tail(h)
        times = [t0 + (t1 - t0) * step / BAR_STEPS for step in range(BAR_STEPS + 1)]
        grades: list[dict[str, Any]] = []
        calls = 0  # the final block grades nothing without a call (core.health.graded), the bar its counters
        for ts, arg in zip(self.event_ts, self.event_args, strict=True):
            while len(grades) < len(times) and ts > times[len(grades)]:
                grades.append(health.grade(h, window))
            if isinstance(arg, int):  # a call's prompt
                calls += 1
                if real_request(arg):  # the fold's rule: a failed request shapes nothing
                    health.on_call(h, arg)
            elif arg is None:
                health.on_compaction(h)
            else:
                health.on_tool(h, arg[T_NAME], arg[T_REREAD], arg[T_ERROR])
                for again in self.more_again.get(arg[1], ()):  # its other files read (the fold's order)
                    health.on_read(h, again)
        final = health.graded(h, window, calls)
        grades += [health.grade(h, window)] * (len(times) - len(grades))
        return final, [{"t": t, "score": g["score"], "grade": g["grade"]} for t, g in zip(times, grades, strict=True)]


def health_why(block: dict[str, Any]) -> dict[str, str]:
    """Why each signal of the grade `block` without a number has none, in the words `health` says
    (core.health.no_number): the page's `health.why`, shown where its figure would be."""
    return {name: why for name, _ in health.SIGNALS if (why := health.no_number(block, name))}


# --- the watcher's story: the replay's trace, kept as the page draws it ----------------------------


STORY_KEYS = ("ts", "call", "L", "x", "xSweet", "br", "lamp", "bills", "billDone", "billProgress", "alerts")


_STORY_JSON = '{"ts":%s,"call":%s,"L":%s,"x":%s,"xSweet":%s,"br":%s,"lamp":%s,"bills":%s,"billDone":%s,' \
    '"billProgress":%s,"alerts":[]}'
_LAMPS = frozenset((None, "white", "green", "amber", "red"))
_ENCODE = jsontext.dumps  # json.dumps's text, a figure JSON cannot hold null: as the page writes


def story_json(block: list[tuple[Any, ...]]) -> list[str] | None:
    """Each story row's JSON as `json.dumps` of its dict writes it: their values
    by one json.dumps (the figures a row holds: numbers, null and the lamp, no comma among them),
    cut into rows and named (a row with alerts: its dict); None where a figure is none of those."""
    if any(r[6] not in _LAMPS or len(r) != len(STORY_KEYS) for r in block):
        return None
    text = _ENCODE([r[:10] for r in block])
    cells = [row.split(",") for row in text[2:-2].split("],[")]
    if len(cells) != len(block) or any(len(c) != len(STORY_KEYS) - 1 for c in cells):
        return None  # a value that is no figure (a list, a text with a comma)
    return [_ENCODE(story_dict(r)) if r[10] else _STORY_JSON % tuple(c) for r, c in zip(block, cells, strict=True)]


def story_dict(row: tuple[Any, ...]) -> dict[str, Any]:
    """A story row (StoryTrace's values) as the page's data."""
    out = dict(zip(STORY_KEYS, row, strict=True))
    out["alerts"] = [dict(a) for a in row[-1]]
    return out


class StoryTrace(list[Any]):
    """A replay trace that keeps, of each row (`core.status.story_document` after a call), only the
    page's story row, as a tuple of its values (STORY_KEYS; `story_dict` makes it the page's dict),
    and the backtest's call: a status document a call was most of a long session page's memory and
    a third of a replay's time (`brief` asks `core.status.tracer` for the story document)."""

    brief = True

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[Call] = []
        self.autos = AutoWatch()  # the automatic compactions, as the backtest's counterfactual takes them
        self._prev_total: int | None = None
        self._prev_bills = 0
        self.lamp_at: dict[str, Any] | None = None  # where amber and red start (the config's bp_amber, bp_red)
        # what the client's point after the last call is priced from (`context_point`'s context, the config):
        # priced only where a compaction follows the call (`AutoWatch` reads it there alone)
        self._point_from: tuple[Any, Any, Any, Any, ModelParams] | None = None

    def compaction(self, trigger: str | None, before: int | None) -> None:  # the fold reached one (state.session)
        if self._point_from is not None:
            window, model, peak, reserve, cfg = self._point_from
            self._point_from = None
            ctx = {"window": window, "model": model, "peak": peak, "compactReserve": reserve}
            self.autos.point(context_point(ctx, cfg))  # type: ignore[arg-type]  # the context's keys it reads
        self.autos.compaction(trigger, before)

    def called(self, state: State, cfg: ModelParams, q: Quantities, fired: list[Alert], usage: CallUsage) -> None:
        """A call folded (`core.status.Tracer`: the state after it, the quantities it was priced by,
        the alerts it fired, its own usage): the story row and the backtest's call `append` makes of
        `story_document`'s row, made from the same figures without the row."""
        e = state["engine"]
        self.lamp_at = {"amber": cfg["bp_amber"], "red": cfg["bp_red"]}
        bills, done = self._bills(e["billsTotal"], e["bills"])
        ts, n, x, x_sweet, lamp = usage["ts"], e["calls"], rounded(q["x"]), rounded(q["xSweet"]), q["lamp"]
        super().append((
            ts, n, q["L"], x, x_sweet, rounded(q["br"]), lamp, bills, done, round(e["billProgress"], 6),
            _story_alerts(fired),
        ))
        call = call_of(n, e["segment"], q["bDefault"], state["context"].get("model"), x, x_sweet, rounded(q["g"], 3),
                       lamp, fired, usage, ts)
        ctx = state["context"]  # `client_point`'s figures, as they are after the call
        self._point_from = (ctx.get("window"), ctx.get("model"), ctx.get("peak"), ctx.get("compactReserve"), cfg)
        self.autos.call(call, None)
        self.calls.append(call)

    def append(self, row: dict[str, Any]) -> None:  # a trace row in, its story row kept
        at = row.get("lampAt")
        if isinstance(at, dict):
            self.lamp_at = at
        bills, done = self._bills(row.get("billsTotal"), row.get("bills"))
        super().append((
            row.get("ts"), row.get("call"), row.get("L"), row.get("x"), row.get("xSweet"), row.get("br"),
            row.get("lamp"), bills, done, row.get("billProgress"), _story_alerts(row.get("alerts")),
        ))
        call = call_from_trace(row)
        self._point_from = None
        self.autos.call(call, row.get("compactPoint"))
        self.calls.append(call)

    def _bills(self, total: object, count: object) -> tuple[int, int]:
        """(the row's bill cycles, those its call completed): from the engine's running total where
        it keeps one, else from the growth of its count."""
        bills = count if isinstance(count, int) else 0
        if isinstance(total, int):
            done = total - (self._prev_total or 0)
            self._prev_total = total
        else:
            done = bills - self._prev_bills
        self._prev_bills = bills
        return bills, max(0, done)

    def clear(self) -> None:  # the fold started again from the beginning
        super().clear()
        self.calls.clear()
        self.autos = AutoWatch()
        self._point_from = None
        self._prev_total = None
        self._prev_bills = 0


def _story_alerts(alerts: Any) -> tuple[dict[str, Any], ...]:
    """A story row's alerts (a call's fired, a trace row's): of each, what the page shows (its gap as
    text too)."""
    if not alerts:
        return ()
    return tuple({"kind": a.get("kind"), "reminder": a.get("reminder"), "gap": a.get("gap"),
                  "rewrite": a.get("rewrite"), "gapText": duration(a["gap"]) if a.get("gap") else None}
                 for a in alerts if isinstance(a, dict))


def fork_of(final: dict[str, Any] | None) -> dict[str, Any] | None:
    """A fork's page leaves its copies of its parent's calls out of its figures (its calls, the
    backtest's dollars), as `status` does, and says so: the status document's `inheritedCalls`,
    `inheritedTo`, `forkedFrom` and `status`'s sentence (`core.statustext.fork_words`); None for a
    session that is no fork, or without the watcher's replay."""
    if not final or not final.get("inheritedCalls"):
        return None
    from session_watcher.core.statustext import fork_words

    return {"inheritedCalls": final["inheritedCalls"], "inheritedTo": final.get("inheritedTo"),
            "forkedFrom": final.get("forkedFrom"), "text": fork_words(final),
            **({"forkedFromFound": False} if final.get("forkedFromFound") is False else {})}


def own_calls(calls: list[Call], fork: dict[str, Any] | None) -> list[Call]:
    """The trace's calls the session made itself: a fork's after its copies (`fork_of`), as the
    backtest prices them (`closedloop.Observed.own`)."""
    upto = (fork or {}).get("inheritedTo")
    return [c for c in calls if c.call > upto] if isinstance(upto, int) and upto > 0 else calls


def backtest_summary(calls: list[Call] | None, final: dict[str, Any] | None,
                     doc: dict[str, Any] | None = None, autos: dict[int, Auto] | None = None) -> dict[str, Any] | None:
    """Following the advice (closed loop) vs the best schedule of restarts, for the page's one line:
    from the session's backtest document (`doc`, session_watcher.sessions.backtest.run_one) when there is one;
    else from the trace's calls alone, which price the best schedule but cannot follow the advice (the
    closed loop folds the transcript's events again): the line then gives the best schedule only."""
    from session_watcher.core import backtest

    if doc is None:
        if not calls:
            return None
        doc = backtest.best_restarts(calls, backtest.shared_prefix(final, calls), autos)
        followed = False
    else:
        followed = bool(doc.get("calls"))
        if not followed:
            return None
    keep = ("usd", "savingUsd", "savingPct", "restartsAfter")
    return {
        "policies": {p: {k: doc["policies"][p][k] for k in keep} for p in ("actual", "alert", "hindsight")},
        "capture": doc["capture"] if followed else None,
        "sentence": backtest.sentence(doc, advice=followed),
    }


# --- reading a transcript -------------------------------------------------------------------------


class TranscriptFeed:
    """A transcript read into a `PageBuilder` from where the last read stopped (the hooks' reader:
    complete lines, at most a chunk a read, a line over 8 MiB skipped with its usage kept). A file
    rewritten, shrunk or replaced starts a new builder from its beginning."""

    def __init__(self, path: str, session_id: str | None = None) -> None:
        self.path = path
        self.session_id = session_id
        self.builder = PageBuilder(session_id)
        self.cursor: dict[str, Any] | None = None

    def read(self) -> bool:
        """Feed what is new; True when anything was (or the builder started again)."""
        from session_watcher.core.errors import Reset
        from session_watcher.state.reader import read_new

        moved = False
        for _attempt in range(2):
            try:
                while True:
                    before = self.cursor
                    lines, self.cursor, skipped = read_new(self.path, before)
                    lines, self.cursor, events = other_agents(self.path, before, self.cursor, lines, False)
                    if events is not None:  # another agent's log: what its decoder found
                        self.builder.take_events(events, self.path)
                        moved = moved or bool(lines)
                    elif lines:
                        self.builder.feed(lines)
                        moved = True
                    if not lines and not skipped and (before or {}).get("skip") == self.cursor.get("skip"):
                        return moved
            except Reset:
                self.builder = PageBuilder(self.session_id)
                self.cursor = None
                moved = True
        return moved


def other_agents(path: str, before: dict[str, Any] | None, cursor: dict[str, Any], lines: list[bytes],
                 whole: bool) -> tuple[list[bytes], dict[str, Any], list[Event] | None]:
    """A read of another agent's log (a Codex rollout) decoded by its agent, as the fold decodes it
    (its decoder's state kept in the cursor): (lines, cursor, events); events None for a Claude Code
    transcript, whose records the builder reads itself."""
    from session_watcher.agents import agent_reading

    agent = agent_reading(before, lines)
    if agent.fallback:
        return lines, cursor, None
    from session_watcher.state.session import read_events

    lines, cursor, events, _bad = read_events(path, before, cursor, lines, whole, agent)
    return lines, cursor, events


PAGE_BACKTEST_MAX = 64 << 20  # a larger transcript's page prices the best schedule only
# the lines PageBuilder can take a record from: a conversation record's type as written, or an
# escape that may spell it (a line with neither cannot decode to one it reads)
_RECORD_FINDERS = tuple(finder(m) for m in (b'"assistant"', b'"user"', b'"system"', b"\\u"))


class PageRead:
    """The transcript read once for its page (`load_model`): one open, read chunk by chunk with the
    hooks' reader (whole chunks: complete lines, a line over 8 MiB skipped with its usage kept). Each
    chunk feeds the page's builder (only the lines that can hold a record it reads) and, as the
    replay's fold asks for it (`state.session.ChunkReader`), replay's parser, whose events are kept
    for the closed-loop backtest up to PAGE_BACKTEST_MAX bytes. What the fold needs before its first
    chunk (the session's folder) comes from the first chunk, the handoff note the page marks from
    the first lines as they are read."""

    def __init__(self, path: str, session_id: str | None = None) -> None:
        from session_watcher.base.paths import open_file
        from session_watcher.state.reader import read_new

        self.path = os.path.abspath(path)
        self.session_id = session_id
        self.builder = PageBuilder(session_id, track=False)
        self.events: list[Event] = []
        self.fd = open_file(self.path)
        try:
            size = os.fstat(self.fd).st_size
            self.keep = size <= PAGE_BACKTEST_MAX
            self._first: tuple[list[bytes], dict[str, Any], int] | None = read_new(self.path, None, whole=True,
                                                                                    fd=self.fd)
            self.cwd = self._start(*self._first, size)
        except BaseException:
            os.close(self.fd)
            raise
        self.head: list[bytes] | None = []  # the first lines, for `add_marks`
        self._chunk = b""  # the chunk read last, fed to the builder up to `_at`, its next line's offset
        self._at = self._end = 0  # `_end`: just past the chunk's last newline
        self._next = [0] * len(_RECORD_FINDERS)  # `_between`'s: each marker's next place in the chunk
        self._low = -1  # the least of them
        self._head_done = False
        self._buf: bytearray | None = None  # `_buffer`'s
        self.foreign = False  # the chunk read last is another agent's log (`read`)

    def _start(self, lines: list[bytes], cursor: dict[str, Any], skipped: int, size: int) -> str | None:
        """The session's folder as `transcript_cwd` finds it: from the first chunk where it decides
        it, else from the first lines read again (through the same open)."""
        from session_watcher.agents.claude_code.transcript import split_lines
        from session_watcher.sessions.replay import CWD_SCAN_HEAD, CWD_SCAN_LINES, cwd_in_head, transcript_cwd

        # the lines `transcript_cwd` reads: CWD_SCAN_LINES, and those that begin in the first CWD_SCAN_HEAD bytes
        most = max(CWD_SCAN_LINES, lines[0].count(b"\n", 0, CWD_SCAN_HEAD) + 1) if lines else 0
        head = split_lines(lines[0], most)[0] if lines and not skipped else []  # a salvaged line is no head
        known, cwd = cwd_in_head(head, bool(lines) and not skipped and cursor["offset"] == size)
        return cwd if known else transcript_cwd(self.path, self.fd)

    def _note_lines(self, lines: list[bytes], cursor: dict[str, Any], skipped: int) -> None:
        """The first NOTE_LINES complete lines (`add_marks` looks for a handoff note there), as they
        are read; `head` None where a line was skipped among them (`add_marks` then reads them)."""
        from session_watcher.agents.claude_code.transcript import split_lines
        from session_watcher.sessions.restarts import NOTE_LINES

        if self._head_done:
            return
        if skipped or "skip" in cursor:
            self.head, self._head_done = None, True
        elif lines:
            assert self.head is not None
            self.head += split_lines(lines[0], NOTE_LINES - len(self.head))[0]
            self._head_done = len(self.head) >= NOTE_LINES
        else:
            self._head_done = True  # the end of the file

    def __enter__(self) -> PageRead:
        return self

    def __exit__(self, *exc: object) -> None:
        bulkparse.tap = None
        self._buf = None
        os.close(self.fd)

    def read(self, path: str, before: dict[str, Any] | None) -> tuple[list[bytes], dict[str, Any], int]:
        """The chunk after `before`, read whole through the one open, fed to the builder (from the
        beginning: a new builder)."""
        from session_watcher.state.reader import read_new

        if before is None and self._first is not None:
            got, self._first = self._first, None
        else:
            got = read_new(path, before, whole=True, fd=self.fd, buf=self._buffer(before))
        if before is None:
            self.builder = PageBuilder(self.session_id, track=False)
            self.events = []
            self.head, self._head_done = [], False
        lines = got[0]
        from session_watcher.agents import agent_reading

        self.foreign = not agent_reading(before, lines).fallback  # another agent's log: `took` feeds the builder
        self._note_lines(*got)
        self._begin(lines[0] if lines else b"")
        return got

    def _buffer(self, before: dict[str, Any] | None) -> bytearray | None:
        """The one buffer each whole chunk after the first is read into (`read_new`'s `buf`) of a
        Claude Code transcript, whose parse and builder keep none of a chunk (only lines cut from
        it); None for the first chunk (read before the fold asks for it), another agent's log, and
        where the platform has no `os.preadv`."""
        from session_watcher.agents import agent_reading
        from session_watcher.state.reader import WHOLE_READ

        if not before or not before.get("offset") or not agent_reading(before, []).fallback \
                or not hasattr(os, "preadv"):
            return None
        if self._buf is None:
            self._buf = bytearray(WHOLE_READ)
        return self._buf

    def _begin(self, chunk: bytes) -> None:
        """The chunk's records fed as replay's parse of the chunk decodes them (`bulkparse.tap`:
        `_upto`), the lines between them (which it passes over) by the builder's own decoding."""
        self._chunk = chunk
        self._at, self._end = 0, chunk.rfind(b"\n") + 1
        self._next = [-1] * len(_RECORD_FINDERS)  # not yet looked for
        self._low = -1
        bulkparse.tap = self._upto

    def _upto(self, start: int, decoded: Record | None = None) -> None:
        """Feed the lines before offset `start` (`_between`), then the line at `start` as replay's
        parse decoded it (`decoded`, taken as it is)."""
        at = self._at
        if start > at:  # the lines between: none to read where no marker is before `end` (`_between`'s `_low`)
            end = start if start < self._end else self._end
            at = end if self._low >= end else self._between(at, end)
        if decoded is None or start != at or at >= self._end:
            self._at = at
            return
        stop = self._chunk.find(b"\n", start)
        self._at = stop + 1
        msg = decoded.message
        usage = msg.usage if msg is not None else None
        if usage is None or usage.iterations is None or len(usage.iterations) < 2 or _iterations_read(decoded):
            if decoded.type in _KINDS and not decoded.isSidechain:
                self.builder.take(decoded)
        elif (rec := decode_record(self._chunk[start:stop])) is not None:
            self.builder.take(rec)

    def _between(self, at: int, end: int) -> int:
        """Feed the lines of chunk[at:end] (whole lines: `end` just past a newline) that can hold a
        record the builder reads, each decoded here; `end` back. Each marker's next place in the
        chunk is kept (`_next`), looked for again only once passed: most stretches between the
        records replay decodes hold none, and are passed over without a search."""
        chunk, nxt = self._chunk, self._next
        for i, find in enumerate(_RECORD_FINDERS):
            if nxt[i] < at:
                got = find(chunk, at, self._end)
                nxt[i] = self._end if got < 0 else got
        self._low = min(nxt)  # no marker before it: `_upto` passes a stretch that ends there without a call
        if self._low >= end:
            return end
        take = self.builder.take
        for first, stop, _which in marked_lines(chunk, _RECORD_FINDERS, end, at):
            rec = decode_record(chunk[first:stop])
            if rec is not None:
                take(rec)
        return end

    def took(self, events: list[Event]) -> None:
        """The events replay's fold decoded from the chunk just read (kept for the backtest), and the
        rest of the chunk fed to the builder."""
        if self.keep:
            self.events += events
        if self.foreign:
            self.builder.take_events(events, self.path)
        self._feed()

    def _feed(self) -> None:
        """The rest of the chunk last read into the builder."""
        bulkparse.tap = None
        self._upto(self._end)
        self._chunk, self._at, self._end = b"", 0, 0


    def drain(self) -> None:
        """Read the whole transcript into the builder from its beginning (no fold)."""
        from session_watcher.core.errors import Reset

        cursor: dict[str, Any] | None = None
        for _attempt in range(2):
            try:
                while True:
                    lines, after, skipped = self.read(self.path, cursor)
                    lines, after, events = other_agents(self.path, cursor, after, lines, True)
                    if events is not None:
                        self.builder.take_events(events, self.path)
                    self._feed()
                    if not lines and not skipped and (cursor or {}).get("skip") == after.get("skip"):
                        return
                    cursor = after
            except Reset:
                cursor = None


def page_backtest(path: str, read: PageRead | None = None, cfg: Config | None = None) -> dict[str, Any] | None:
    """The session's backtest document for its page (the advice followed in closed loop: the events
    folded again, session_watcher.sessions.backtest), None past PAGE_BACKTEST_MAX bytes, where the
    page keeps to what the trace prices. `read` and `cfg`: the page's read, whose fold (with `cfg`)
    parsed the events already; else the transcript is parsed again (`run_one`)."""
    if read is not None and cfg is not None:
        from session_watcher.sessions.backtest import loaded, session_doc

        return session_doc(loaded(read.path, read.cwd, read.events), cfg) if read.keep else None
    try:
        if os.path.getsize(path) > PAGE_BACKTEST_MAX:
            return None
    except OSError:
        return None
    from session_watcher.sessions.backtest import run_one

    return run_one(path)


def hooks_view(state: State) -> State:
    """The state `status` prices a restart by: the hooks' saved state of this session when it stands
    at the page's last call (it holds what the transcript does not say: the handoff the guard
    prepared, `guard.carry`, and what the client said of its cache, `context.promptCache`), else
    the page's own fold."""
    from session_watcher.core.errors import StateRejected
    from session_watcher.state import shell, store

    sid = state.get("sessionId")
    if not store.valid_session_id(sid):
        return state
    try:
        saved = shell.saved(sid)
    except (StateRejected, OSError, ValueError):
        return state
    here = state["engine"]
    if saved is None or [saved["engine"].get(k) for k in ("calls", "segment", "lastTs")] != \
            [here["calls"], here["segment"], here["lastTs"]]:
        return state
    return saved


def now_document(state: State, cfg: Config, now: float | None = None) -> dict[str, Any]:
    """The status document `status` shows at `now` (default: the clock's), with `asOf`: the restart
    saving priced as `status` and the status line price it (`core.status.cold_now`: the cache cold
    once it has expired; a handoff the guard prepared, pending at `now`: `hooks_view`), and
    `lastCallAt`, when its last call was (the time `status` counts its idle time from)."""
    from session_watcher.core.status import cold_now, status_document

    at = time.time() if now is None else now
    state = hooks_view(state)
    doc = status_document(state, cfg, cold=cold_now(state, cfg, at), now=at)
    doc["asOf"] = at
    doc["lastCallAt"] = state["engine"]["lastTs"]
    return doc


def restart_now(final: dict[str, Any] | None) -> dict[str, Any] | None:
    """The page's line of what a restart saves now (`now_document`'s): `status`'s words for the lamp
    and the saving (`core.render.lamp_words`), its figures and when it was priced; `since`, an hour
    or more after the session's last call (`lastCallAt`: the time `status` counts from, not the last
    record's, a prompt that got no answer), how long after it ('124 days after its last call'), so
    a session left long ago does not read as one running now. Both sentences as the page shows them:
    a number held with its unit by a no-break space ("297 days": `core.text.keep_units`), which the
    page's script only puts together."""
    if not final or not final.get("lamp"):
        return None
    from session_watcher.core.render import lamp_words
    from session_watcher.core.text import keep_units

    keep = ("lamp", "saving", "savingUsd", "horizon", "untilCompaction", "coldReturn", "asOf")
    at, last = final.get("asOf"), final.get("lastCallAt")
    idle = at - last if isinstance(at, int | float) and isinstance(last, int | float) else None
    since = keep_units(f"{duration(idle)} after its last call") if idle is not None and idle >= 3600 else None
    return {"text": keep_units(lamp_words(final, idle)), **{k: final.get(k) for k in keep}, "since": since}


def story_of(path: str, read: PageRead | None = None,
             now: float | None = None) -> tuple[dict[str, Any], StoryTrace, Config]:
    """The replay's final status document at `now` (`now_document`), its trace as story rows and the
    config it folded with (`read`: the page's one read of the transcript; else the replay reads it)."""
    from session_watcher.sessions.replay import fold, fold_read

    trace = StoryTrace()
    if read is None:
        state, cfg, _ = fold(path, trace=trace)
    else:
        state, cfg = fold_read(read.path, read.cwd, trace, read)
    return now_document(state, cfg, now), trace, cfg


def load_model(path: str, session_id: str | None = None, with_story: bool = True,
               now: float | None = None, packed: bool = False) -> dict[str, Any]:
    """Read a transcript (once: `PageRead`) and, when the engine's replay is there, the watcher's trace
    (its restart saving priced at `now`, default the clock's: `now_document`; `packed`: the rows as
    `PageBuilder.model` keeps them, for the page's writer)."""
    trace: StoryTrace | None = None
    final: dict[str, Any] | None = None
    doc: dict[str, Any] | None = None
    error: str | None = None
    with PageRead(path, session_id) as read:
        if with_story:
            try:
                final, trace, cfg = story_of(path, read, now)
                doc = page_backtest(path, read, cfg)
            except Exception as exc:  # the page still shows the transcript's own story
                trace = None
                error = f"{type(exc).__name__}: {exc}"
                read.drain()
        else:
            read.drain()
    if final is not None and final.get("inheritedCalls"):  # a fork: is its parent's file there?
        from session_watcher.sessions.naming import mark_parent

        mark_parent(final, path)
    model = read.builder.model(trace, final, doc, packed)  # the read's buffer given back first
    model["storyError"] = error
    from session_watcher.reports.session_marks import add_marks

    add_marks(model, path, read.head)
    return model
