"""Codex rollout lines for tests: the shapes `reference/codex.md` and the fixtures' README describe,
written as Codex 0.171 writes them (one JSON object a line, `timestamp`, `type`, `payload`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "codex"
THREAD = "019fa000-0000-7000-8000-000000000001"


def stamp(minute: float) -> str:
    """An ISO time `minute` minutes after 2026-11-20T10:00:00Z, with milliseconds."""
    ms = round(minute * 60_000)
    s, ms = divmod(ms, 1000)
    m, s = divmod(s, 60)
    h, m = divmod(m, 60)
    return f"2026-11-20T{10 + h:02d}:{m:02d}:{s:02d}.{ms:03d}Z"


def line(minute: float, kind: str, payload: dict[str, Any]) -> str:
    return json.dumps({"timestamp": stamp(minute), "type": kind, "payload": payload}, separators=(",", ":"))


def meta(minute: float = 0, thread: str = THREAD, source: object = "cli", version: str = "0.171.0") -> str:
    return line(minute, "session_meta", {"id": thread, "session_id": thread, "cwd": "/proj", "originator": "codex_exec",
                                         "cli_version": version, "source": source, "model_provider": "openai"})


def turn(minute: float, model: str) -> str:
    return line(minute, "turn_context", {"turn_id": f"t{minute}", "model": model, "cwd": "/proj"})


def tier(minute: float, name: str) -> str:
    return line(minute, "event_msg", {"type": "thread_settings_applied",
                                      "thread_settings": {"model": "x", "service_tier": name}})


def usage(inp: int, cached: int, out: int, write: int | None = None) -> dict[str, int]:
    u = {"input_tokens": inp, "cached_input_tokens": cached, "output_tokens": out,
         "reasoning_output_tokens": out // 2, "total_tokens": inp + out}
    if write is not None:
        u["cache_write_input_tokens"] = write
    return u


def add(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
    return {k: a.get(k, 0) + b.get(k, 0) for k in {*a, *b}}


class Thread:
    """Writes one thread's calls both ways Codex logs them: `token_count` snapshots (running total,
    repeated at turn starts) and, from 0.171, `token_usage_record` lines by response id."""

    def __init__(self, records: bool = True, record_first: bool = False, counts: bool = True) -> None:
        self.total: dict[str, int] = {}
        self.records, self.record_first, self.counts = records, record_first, counts
        self.n = 0
        self.lines: list[str] = []

    def call(self, minute: float, inp: int, cached: int, out: int, write: int | None = None) -> None:
        last = usage(inp, cached, out, write)
        self.total = add(self.total, last)
        self.n += 1
        count = line(minute, "event_msg", {"type": "token_count", "info": {
            "total_token_usage": dict(self.total), "last_token_usage": last, "model_context_window": 475000},
            "rate_limits": None})
        record = line(minute, "token_usage_record", {"response_id": f"resp_{self.n:04d}", "usage": last,
                                                     "turn_token_usage": last, "thread_token_usage": dict(self.total)})
        got = [count] if self.counts else []
        if self.records:
            got = [record, *got] if self.record_first else [*got, record]
        self.lines += got

    def repeat(self, minute: float) -> None:
        """A repeated snapshot (what a turn start or a compaction writes): the total unchanged."""
        if self.total:
            self.lines.append(line(minute, "event_msg", {"type": "token_count", "info": {
                "total_token_usage": dict(self.total), "last_token_usage": usage(0, 0, 0),
                "model_context_window": 475000}, "rate_limits": None}))


def write_rollout(path: Path, lines: list[str], newline_at_end: bool = True) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + ("\n" if newline_at_end else ""))
    return path
