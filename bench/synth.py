"""Synthetic Claude Code transcripts: the one writer for the tests and the bench.

Every record has the shape Claude Code writes (see tests/fixtures/transcripts/): an assistant record
per response line carrying `message.usage` (and any tool_use blocks), a user record per tool result
(with `toolUseResult.file` for a Read), a `system`/`compact_boundary` record for a compaction. The
record builders below are the only place those shapes are spelled out; three drivers sit on them:

* `Transcript`: a session built call by call with literal usage numbers (unit tests)::

      t = Transcript(cwd="/proj")
      t.call(cr=20_000, cw=500)                      # one API call, usage as given
      t.read("a.py", "x = 1\\n", cr=20_500, cw=300)  # a call that issues a Read, then its result
      t.compact()
      t.save(tmp_path / "s.jsonl")                   # or t.text(), t.lines(), t.events()

* `SynthSession`: a seeded random session of Read-heavy calls written call by call, with its oracle
  (token sums, reads per path) and the hook payloads a client would send (reliability tests, bench.soak);
* `bench.generate.SessionWriter`: sessions of any size whose call blocks are sampled from the real
  fixtures (the bench corpora).

Usage numbers are taken literally: `cr` = cache_read_input_tokens, `cw` = cache_creation_input_tokens,
`inp` = input_tokens, `out` = output_tokens; `ttl` picks the cache-write split ("5m" or "1h").
"""

from __future__ import annotations

import datetime as dt
import json
import os
import random
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MODEL = "claude-opus-4-6"
VERSION = "2.1.39"
T0 = 1_770_000_000.0  # 2026-02-02, any fixed instant will do


# ---------------------------------------------------------------------- record builders


def iso(t: float | dt.datetime) -> str:
    """Epoch seconds or an aware datetime -> '2026-02-02T02:40:00.000Z' (UTC, milliseconds)."""
    d = t if isinstance(t, dt.datetime) else dt.datetime.fromtimestamp(t, tz=dt.UTC)
    return d.strftime("%Y-%m-%dT%H:%M:%S.") + f"{d.microsecond // 1000:03d}Z"


def line(rec: dict[str, Any]) -> bytes:
    """One JSONL line as Claude Code writes it: compact, UTF-8, newline-terminated."""
    return json.dumps(rec, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def usage(cr: int, cw: int = 0, inp: int = 1, out: int = 10, ttl: str = "5m") -> dict[str, Any]:
    split = {"ephemeral_5m_input_tokens": cw if ttl == "5m" else 0,
             "ephemeral_1h_input_tokens": cw if ttl == "1h" else 0}
    return {"input_tokens": inp, "cache_creation_input_tokens": cw, "cache_read_input_tokens": cr,
            "cache_creation": split, "output_tokens": out, "service_tier": "standard"}


def header(kind: str, session_id: str, cwd: str, *, parent: str | None = None, sidechain: bool = False,
           branch: str | None = None, agent_id: str | None = None) -> dict[str, Any]:
    """The fields every session record starts with, up to its `type`."""
    rec: dict[str, Any] = {"parentUuid": parent, "isSidechain": sidechain, "userType": "external", "cwd": cwd,
                           "sessionId": session_id, "version": VERSION}
    if branch is not None:
        rec["gitBranch"] = branch
    if agent_id:
        rec["agentId"] = agent_id
    rec["type"] = kind
    return rec


def assistant_message(mid: str, use: dict[str, Any], model: str = MODEL) -> dict[str, Any]:
    """An API response's message, before its content: the part every line of the response repeats."""
    return {"model": model, "id": mid, "type": "message", "role": "assistant", "usage": use}


def assistant(rec: dict[str, Any], message: dict[str, Any], content: list[dict[str, Any]],
              request_id: str) -> dict[str, Any]:
    """One line of an API response: `rec` (a header) with `message` carrying `content`."""
    msg = dict(message)
    msg["content"] = content
    msg["stop_reason"] = None
    msg["stop_sequence"] = None
    rec["message"] = msg
    rec["requestId"] = request_id
    return rec


def user_text(rec: dict[str, Any], text: str) -> dict[str, Any]:
    rec["message"] = {"role": "user", "content": text}
    return rec


def tool_use(tool_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": args}


def tool_result(rec: dict[str, Any], tool_id: str, text: str, result: Any = None,
                is_error: bool = False) -> dict[str, Any]:
    """A tool's result: `rec` (a user header) with the result block and, if given, `toolUseResult`."""
    block: dict[str, Any] = {"tool_use_id": tool_id, "type": "tool_result", "content": text}
    if is_error:
        block["is_error"] = True
    rec["message"] = {"role": "user", "content": [block]}
    if result is not None:
        rec["toolUseResult"] = result
    return rec


def numbered(lines: list[str], start: int = 1) -> str:
    """A Read result's text as the model sees it: each line after its number and an arrow."""
    return "\n".join(f"{start + i:>6}\u2192{s}" for i, s in enumerate(lines))


def file_result(path: str, content: str, num_lines: int, start: int = 1, total: int | None = None) -> dict[str, Any]:
    """A Read's `toolUseResult`."""
    return {"type": "text", "file": {"filePath": path, "content": content, "numLines": num_lines,
                                     "startLine": start, "totalLines": num_lines if total is None else total}}


def compact_boundary(rec: dict[str, Any], pre_tokens: int, trigger: str = "auto",
                     logical_parent: str | None = None) -> dict[str, Any]:
    """`rec` (a system header) made a compaction boundary."""
    rec.update({"parentUuid": None, "logicalParentUuid": logical_parent, "subtype": "compact_boundary",
                "content": "Conversation compacted", "isMeta": False, "level": "info",
                "compactMetadata": {"trigger": trigger, "preTokens": pre_tokens}})
    return rec


# ---------------------------------------------------------------------- a session call by call


class Transcript:
    """An append-only list of transcript records; every method appends and returns an id.

    Each record is `step` seconds after the one before, or at `at` (epoch seconds) when given."""

    def __init__(self, session_id: str = "synth", cwd: str = "/proj", model: str = MODEL,
                 step: float = 10.0) -> None:
        self.session_id, self.cwd, self.model, self.step = session_id, cwd, model, step
        self.records: list[dict[str, Any]] = []
        self.ts = T0
        self.n = 0  # records written, for unique ids

    def _base(self, kind: str, sidechain: bool = False, at: float | None = None) -> dict[str, Any]:
        self.n += 1
        self.ts = self.ts + self.step if at is None else at
        rec = header(kind, self.session_id, self.cwd, sidechain=sidechain)
        rec["uuid"] = f"u-{self.n:06d}"
        rec["timestamp"] = iso(self.ts)
        return rec

    def call(self, cr: int, cw: int = 0, inp: int = 1, out: int = 10, *, ttl: str = "5m",
             sidechain: bool = False, tools: list[dict[str, Any]] | None = None, samples: int = 1,
             streamed: bool = False, model: str | None = None, mid: str | None = None,
             at: float | None = None) -> str:
        """One API call. `tools`: tool_use blocks to put in its content. `samples`: how many lines
        the response is written as (each repeats the usage, as Claude Code does; with `streamed`
        all but the last carry a partial output count of 1, one second apart from `at`). Returns
        the message id."""
        mid = mid or f"msg_{self.n + 1:06d}"
        content: list[dict[str, Any]] = [{"type": "text", "text": "ok"}, *(tools or [])]
        for i in range(samples):
            rec = self._base("assistant", sidechain, None if at is None else at + i)
            block = content if samples == 1 else [content[min(i, len(content) - 1)]]
            last = i == samples - 1
            use = usage(cr, cw, inp, out if last or not streamed else 1, ttl)
            self.records.append(assistant(rec, assistant_message(mid, use, model or self.model), block,
                                          f"req_{mid}"))
        return mid

    def tool_result(self, tool_id: str, text: str, result: dict[str, Any] | None = None,
                    is_error: bool = False) -> None:
        self.records.append(tool_result(self._base("user"), tool_id, text, result, is_error))

    def read(self, path: str, content: str, cr: int, cw: int = 0, *, start: int = 1,
             limit: int | None = None, inp: int = 1, ttl: str = "5m") -> str:
        """An API call (usage as given) that issues a Read of `path`, then the Read's result holding
        `content` as lines `start`.. of the file. Returns the tool_use id."""
        tid = f"toolu_{self.n + 1:06d}"
        args: dict[str, Any] = {"file_path": path}
        if start != 1:
            args["offset"] = start
        if limit is not None:
            args["limit"] = limit
        self.call(cr, cw, inp, ttl=ttl, tools=[tool_use(tid, "Read", args)])
        lines = content.split("\n")
        if lines[-1] == "":
            lines.pop()
        self.tool_result(tid, numbered(lines, start),
                         file_result(path, content, len(lines), start, start - 1 + len(lines)))
        return tid

    def edit(self, path: str, old: str, new: str, cr: int, cw: int = 0, inp: int = 1) -> str:
        """An API call that issues an Edit of `path`, then its (successful) result."""
        tid = f"toolu_{self.n + 1:06d}"
        args = {"file_path": path, "old_string": old, "new_string": new}
        self.call(cr, cw, inp, tools=[tool_use(tid, "Edit", args)])
        self.tool_result(tid, f"The file {path} has been updated.", {"filePath": path})
        return tid

    def compact(self, trigger: str = "auto", pre_tokens: int = 0, *, at: float | None = None) -> None:
        self.records.append(compact_boundary(self._base("system", at=at), pre_tokens, trigger))

    def user(self, text: str = "go on", *, at: float | None = None) -> None:
        self.records.append(user_text(self._base("user", at=at), text))

    def api_error(self, *, at: float | None = None) -> None:
        """The client's own stand-in reply after a failed request: model `<synthetic>`, no API call."""
        rec = self._base("assistant", at=at)
        rec.update({"isApiErrorMessage": True, "message": {
            "id": f"synthetic-{self.n}", "model": "<synthetic>", "type": "message", "role": "assistant",
            "usage": {"input_tokens": 999, "output_tokens": 999}, "content": [{"type": "text", "text": "error"}]}})
        self.records.append(rec)

    # ------------------------------------------------------------------ output

    def lines(self) -> list[bytes]:
        """The records as JSONL lines, without their newlines."""
        return [line(r)[:-1] for r in self.records]

    def text(self) -> str:
        return b"".join(line(r) for r in self.records).decode()

    def save(self, path: str | Path) -> Path:
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(self.text(), encoding="utf-8")
        return p

    def events(self) -> list[tuple[Any, ...]]:
        """The records as `core.transcript` events (the real parser), ready for `core.engine.fold`."""
        from session_watcher.agents.claude_code.transcript import parse_lines

        events, bad = parse_lines(self.lines())
        assert bad == 0
        return events


def growing(t: Transcript, start: int, g: int, calls: int, cw_first: int | None = None) -> int:
    """`calls` API calls whose cache read grows by `g` per call from `start` (each call writes the
    `g` new tokens); returns the last cache read."""
    cr = start
    for i in range(calls):
        t.call(cr, cw=g if i or cw_first is None else cw_first)
        cr += g
    return cr - g


# ---------------------------------------------------------------------- a seeded random session


def content_of(call: int, path: str, n: int) -> str:
    """The content a SynthSession's Read of `path` in call `call` returns (`n` lines)."""
    return "".join(f"line {j} of {os.path.basename(path)} in call {call}\n" for j in range(n))


@dataclass
class Call:
    index: int
    inp: int
    cr: int
    cw: int
    out: int
    reads: list[tuple[str, str, int]]  # (tool_use_id, path, lines of content)


@dataclass
class SynthSession:
    """A seeded session written call by call; `lines_of(call)` gives the JSONL bytes in file order.

    Each call is two assistant lines sharing one message id (the first with a partial output count,
    as Claude Code streams them), the second with the call's Read tool uses, then one user line per
    Read result. The oracle is what an exact meter must show: one sample per call (the last one),
    and for each path the number of Read results."""

    session_id: str
    project: str
    seed: int = 1
    files: int = 6
    calls: list[Call] = field(default_factory=list)
    _ctx: int = 0
    start: dt.datetime = dt.datetime(2026, 3, 1, tzinfo=dt.UTC)  # call 0's time

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)
        self.paths = [os.path.join(self.project, "src", f"mod{i}.py") for i in range(self.files)]

    def next_call(self, reads: int | None = None, growth: int | None = None) -> Call:
        """Append one call; the context grows by `growth` tokens (cache write), read from cache next."""
        i = len(self.calls)
        r = self.rng
        if i == 0:
            cr, cw = 0, 18_000
        else:
            cr = self._ctx
            cw = growth if growth is not None else r.randint(2_000, 9_000)
        self._ctx = cr + cw
        n = r.randint(0, 2) if reads is None else reads
        call_reads = [(f"toolu_{self.seed:04d}_{i:05d}_{k}", r.choice(self.paths), r.randint(5, 60))
                      for k in range(n)]
        call = Call(i, r.randint(1, 9), cr, cw, r.randint(50, 900), call_reads)
        self.calls.append(call)
        return call

    def ts(self, i: int, sub: int = 0) -> str:
        """Call `i` starts 20 s after call `i - 1` (`start` moved between calls moves the later ones);
        its lines are `sub` seconds apart."""
        return iso(self.start + dt.timedelta(seconds=i * 20 + sub))

    def records(self, c: Call) -> list[dict[str, Any]]:
        mid, rid = f"msg_{self.seed:04d}_{c.index:05d}", f"req_{self.seed:04d}_{c.index:05d}"

        def head(kind: str, uuid: str, sub: int) -> dict[str, Any]:
            rec = header(kind, self.session_id, self.project)
            rec["uuid"], rec["timestamp"] = uuid, self.ts(c.index, sub)
            return rec

        def message(out: int) -> dict[str, Any]:
            return assistant_message(mid, usage(c.cr, c.cw, c.inp, out))

        recs = [assistant(head("assistant", f"a{c.index}-0", 0), message(1),
                          [{"type": "text", "text": f"step {c.index}"}], rid),
                assistant(head("assistant", f"a{c.index}-1", 1), message(c.out),
                          [tool_use(tid, "Read", {"file_path": p}) for tid, p, _ in c.reads], rid)]
        for k, (tid, path, n) in enumerate(c.reads):
            content = content_of(c.index, path, n)
            recs.append(tool_result(head("user", f"u{c.index}-{k}", 2 + k), tid, content,
                                    file_result(path, content, n)))
        return recs

    def lines_of(self, c: Call) -> bytes:
        return b"".join(line(r) for r in self.records(c))

    def hook_payload(self, transcript: str, event: str = "PostToolUse", read: tuple[str, str, int] | None = None,
                     bash_id: str = "toolu_bash_x") -> dict[str, Any]:
        """What the client sends a hook for `event` (a PostToolUse of `read`, or of a Bash call)."""
        p: dict[str, Any] = {"session_id": self.session_id, "transcript_path": transcript, "cwd": self.project,
                             "hook_event_name": event, "permission_mode": "default"}
        if event == "PostToolUse":
            if read is None:
                p.update({"tool_name": "Bash", "tool_input": {"command": "true"}, "tool_use_id": bash_id,
                          "tool_response": {"stdout": "", "stderr": ""}})
            else:
                tid, path, n = read
                content = content_of(int(tid.split("_")[2]), path, n)
                p.update({"tool_name": "Read", "tool_input": {"file_path": path}, "tool_use_id": tid,
                          "tool_response": file_result(path, content, n)})
        return p

    # ------------------------------------------------------------------ the oracle

    def token_usage(self, upto: int | None = None) -> dict[str, int]:
        calls = self.calls[:upto]
        return {"uncachedInput": sum(c.inp for c in calls), "output": sum(c.out for c in calls),
                "cacheRead": sum(c.cr for c in calls), "cacheWrite": sum(c.cw for c in calls),
                "cacheWrite5m": sum(c.cw for c in calls), "cacheWrite1h": 0, "calls": len(calls)}

    def reads_per_path(self, upto: int | None = None) -> Counter[str]:
        return Counter(p for c in self.calls[:upto] for _, p, _ in c.reads)


def newline_free(path: Path, size: int) -> Path:
    """A transcript whose one line, a user record's text, has no end (a sparse file: cheap to make)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as fh:
        fh.write(b'{"type":"user","timestamp":"2026-01-01T00:00:00.000Z","message":{"content":"')
        fh.truncate(size)
    return path
