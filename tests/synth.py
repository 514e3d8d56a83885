"""Synthetic Claude Code transcripts for tests: API calls with chosen usage, Read pairs, compactions.

The records have the shape Claude Code writes (see tests/fixtures/transcripts/): an assistant record
per API call carrying `message.usage` (and any tool_use blocks), a user record per tool result
(with `toolUseResult.file` for a Read), a `system`/`compact_boundary` record for a compaction.

    t = Transcript(cwd="/proj")
    t.call(cr=20_000, cw=500)                      # one API call, usage as given
    t.read("a.py", "x = 1\\n", cr=20_500, cw=300)  # a call that issues a Read, then its result
    t.compact()
    t.save(tmp_path / "s.jsonl")                   # or t.text(), t.lines(), t.events()

Usage numbers are taken literally: `cr` = cache_read_input_tokens, `cw` = cache_creation_input_tokens,
`inp` = input_tokens, `out` = output_tokens. `ttl` picks the cache-write split ("5m" or "1h").
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

MODEL = "claude-opus-4-6"
T0 = 1_770_000_000.0  # 2026-02-02, any fixed instant will do


def iso(ts: float) -> str:
    """Epoch seconds -> '2026-02-02T02:40:00.000Z' (UTC, milliseconds)."""
    import datetime as dt

    d = dt.datetime.fromtimestamp(ts, tz=dt.UTC)
    return d.strftime("%Y-%m-%dT%H:%M:%S.") + f"{d.microsecond // 1000:03d}Z"


def usage(cr: int, cw: int = 0, inp: int = 1, out: int = 10, ttl: str = "5m") -> dict[str, Any]:
    split = {"ephemeral_5m_input_tokens": cw if ttl == "5m" else 0,
             "ephemeral_1h_input_tokens": cw if ttl == "1h" else 0}
    return {"input_tokens": inp, "cache_creation_input_tokens": cw, "cache_read_input_tokens": cr,
            "cache_creation": split, "output_tokens": out, "service_tier": "standard"}


class Transcript:
    """An append-only list of transcript records; every method appends and returns an id."""

    def __init__(self, session_id: str = "synth", cwd: str = "/proj", model: str = MODEL,
                 step: float = 10.0) -> None:
        self.session_id, self.cwd, self.model, self.step = session_id, cwd, model, step
        self.records: list[dict[str, Any]] = []
        self.ts = T0
        self.n = 0  # records written, for unique ids

    # ------------------------------------------------------------------ building blocks

    def _base(self, kind: str, sidechain: bool = False) -> dict[str, Any]:
        self.n += 1
        self.ts += self.step
        return {"parentUuid": None, "isSidechain": sidechain, "userType": "external", "cwd": self.cwd,
                "sessionId": self.session_id, "version": "2.1.39", "type": kind,
                "uuid": f"u-{self.n:06d}", "timestamp": iso(self.ts)}

    def call(self, cr: int, cw: int = 0, inp: int = 1, out: int = 10, *, ttl: str = "5m",
             sidechain: bool = False, tools: list[dict[str, Any]] | None = None, samples: int = 1) -> str:
        """One API call. `tools`: tool_use blocks to put in its content. `samples`: how many lines
        the response is written as (each repeats the usage, as Claude Code does). Returns the
        message id."""
        mid = f"msg_{self.n + 1:06d}"
        content: list[dict[str, Any]] = [{"type": "text", "text": "ok"}, *(tools or [])]
        for i in range(samples):
            rec = self._base("assistant", sidechain)
            rec["requestId"] = f"req_{mid}"
            block = content if samples == 1 else [content[min(i, len(content) - 1)]]
            rec["message"] = {"model": self.model, "id": mid, "type": "message", "role": "assistant",
                              "content": block, "stop_reason": None,
                              "usage": usage(cr, cw, inp, out, ttl)}
            self.records.append(rec)
        return mid

    def tool_result(self, tool_id: str, text: str, result: dict[str, Any] | None = None,
                    is_error: bool = False) -> None:
        rec = self._base("user")
        block: dict[str, Any] = {"tool_use_id": tool_id, "type": "tool_result", "content": text}
        if is_error:
            block["is_error"] = True
        rec["message"] = {"role": "user", "content": [block]}
        if result is not None:
            rec["toolUseResult"] = result
        self.records.append(rec)

    # ------------------------------------------------------------------ conveniences

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
        self.call(cr, cw, inp, ttl=ttl, tools=[{"type": "tool_use", "id": tid, "name": "Read", "input": args}])
        lines = content.split("\n")
        if lines[-1] == "":
            lines.pop()
        shown = "\n".join(f"{start + i:>6}→{line}" for i, line in enumerate(lines))
        self.tool_result(tid, shown, {"type": "text", "file": {
            "filePath": path, "content": content, "numLines": len(lines), "startLine": start,
            "totalLines": start - 1 + len(lines)}})
        return tid

    def edit(self, path: str, old: str, new: str, cr: int, cw: int = 0, inp: int = 1) -> str:
        """An API call that issues an Edit of `path`, then its (successful) result."""
        tid = f"toolu_{self.n + 1:06d}"
        args = {"file_path": path, "old_string": old, "new_string": new}
        self.call(cr, cw, inp, tools=[{"type": "tool_use", "id": tid, "name": "Edit", "input": args}])
        self.tool_result(tid, f"The file {path} has been updated.", {"filePath": path})
        return tid

    def compact(self, trigger: str = "auto", pre_tokens: int = 0) -> None:
        rec = self._base("system")
        rec.update({"subtype": "compact_boundary", "content": "Conversation compacted", "level": "info",
                    "compactMetadata": {"trigger": trigger, "preTokens": pre_tokens}})
        self.records.append(rec)

    def user(self, text: str = "go on") -> None:
        rec = self._base("user")
        rec["message"] = {"role": "user", "content": text}
        self.records.append(rec)

    # ------------------------------------------------------------------ output

    def lines(self) -> list[bytes]:
        return [json.dumps(r, separators=(",", ":")).encode() for r in self.records]

    def text(self) -> str:
        return "".join(line.decode() + "\n" for line in self.lines())

    def save(self, path: str | Path) -> Path:
        p = Path(path)
        p.write_text(self.text(), encoding="utf-8")
        return p

    def events(self) -> list[tuple[Any, ...]]:
        """The records as `core.transcript` events (the real parser), ready for `core.engine.fold`."""
        from session_watcher.core.transcript import parse_lines

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
