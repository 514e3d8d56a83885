"""The shape of real transcripts, measured from the fixtures, that the generator reproduces.

A transcript is cut into *call blocks*: the lines from the first line of one API reply (a new
``message.id``) up to the next one. Each block is kept as a list of ``(kind, line length)``; the
generator samples whole blocks, so the record-type mix, the progress lines, the lines per call and
the line-length distribution all follow the real sessions. Usage growth per call, output tokens, the
first call's prompt size and the compaction threshold are sampled from the same sessions.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "transcripts"

# Kinds the generator writes from the usage model, never from a sampled block.
_GENERATED = {"system:compact_boundary", "user:compact_summary"}


@dataclass
class Profile:
    """Empirical shape of a set of transcripts."""

    blocks: list[list[tuple[str, int]]] = field(default_factory=list)
    preamble: list[tuple[str, int]] = field(default_factory=list)
    stock_deltas: list[int] = field(default_factory=list)
    first_stocks: list[int] = field(default_factory=list)
    outputs: list[int] = field(default_factory=list)
    compact_at: list[int] = field(default_factory=list)
    summary_lengths: list[int] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)

    def describe(self) -> dict[str, Any]:
        """Summary numbers, for the results file and for tests comparing generated output."""
        kinds: dict[str, int] = {}
        lengths: list[int] = []
        for block in self.blocks:
            for kind, n in block:
                kinds[kind] = kinds.get(kind, 0) + 1
                lengths.append(n)
        lines = sum(len(b) for b in self.blocks)
        return {
            "sources": self.sources,
            "calls": len(self.blocks),
            "linesPerCall": round(lines / max(1, len(self.blocks)), 2),
            "lineLength": quantiles(lengths),
            "kindShare": {k: round(v / max(1, lines), 4) for k, v in sorted(kinds.items(), key=lambda kv: -kv[1])},
            "stockDeltaMedian": statistics.median(self.stock_deltas) if self.stock_deltas else None,
            "compactAt": self.compact_at,
        }


def quantiles(values: list[int]) -> dict[str, float]:
    """Median, p90, p99 and max of a list (empty: zeros)."""
    if not values:
        return {"p50": 0.0, "p90": 0.0, "p99": 0.0, "max": 0.0}
    s = sorted(values)

    def q(p: float) -> float:
        return float(s[min(len(s) - 1, int(p * len(s)))])

    return {"p50": q(0.5), "p90": q(0.9), "p99": q(0.99), "max": float(s[-1])}


def classify(rec: dict[str, Any], tool_names: dict[str, str]) -> str:
    """A record's kind, e.g. ``assistant:tool_use:Read`` or ``progress:hook_progress:PostToolUse``."""
    t = rec.get("type")
    if t == "assistant":
        content = rec.get("message", {}).get("content") or [{}]
        block = content[0] if isinstance(content, list) and content else {}
        btype = block.get("type", "text")
        if btype == "tool_use":
            tool_names[block.get("id", "")] = block.get("name", "?")
            return f"assistant:tool_use:{block.get('name', '?')}"
        return f"assistant:{btype}"
    if t == "user":
        if rec.get("isCompactSummary"):
            return "user:compact_summary"
        content = rec.get("message", {}).get("content")
        if isinstance(content, list):
            for b in content:
                if isinstance(b, dict) and b.get("type") == "tool_result":
                    return f"user:tool_result:{tool_names.get(b.get('tool_use_id', ''), '?')}"
        return "user:text"
    if t == "progress":
        data = rec.get("data") or {}
        dtype = data.get("type", "?")
        if dtype == "hook_progress":
            return f"progress:hook_progress:{data.get('hookEvent', '?')}"
        return f"progress:{dtype}"
    if t == "system":
        return f"system:{rec.get('subtype', '?')}"
    return str(t)


class _FileReader:
    """One transcript's lines into a profile: the call blocks (a new main-chain message id starts
    one), the stock's growth per call within a segment, and the compactions."""

    def __init__(self, prof: Profile) -> None:
        self.prof = prof
        self.tool_names: dict[str, str] = {}
        self.current: list[tuple[str, int]] | None = None
        self.last_id: str | None = None
        self.prev_stock: int | None = None
        self.seg_start = True

    def line(self, rec: dict[str, Any], length: int) -> None:
        prof = self.prof
        kind = classify(rec, self.tool_names)
        if kind == "system:compact_boundary":
            pre = (rec.get("compactMetadata") or {}).get("preTokens")
            if isinstance(pre, int):
                prof.compact_at.append(pre)
            self.seg_start = True
        if kind == "user:compact_summary":
            prof.summary_lengths.append(length)
        if rec.get("type") == "assistant" and not rec.get("isSidechain"):
            self.assistant(rec.get("message") or {})
        if kind in _GENERATED:
            return
        if self.current is None:
            prof.preamble.append((kind, length))
        else:
            self.current.append((kind, length))

    def assistant(self, msg: dict[str, Any]) -> None:
        """A main-chain reply: a new message id starts a call block and samples its usage."""
        prof = self.prof
        mid = msg.get("id")
        if mid == self.last_id:
            return
        self.last_id = mid
        self.current = []
        prof.blocks.append(self.current)
        u = msg.get("usage") or {}
        stock = (
            int(u.get("input_tokens", 0))
            + int(u.get("cache_read_input_tokens", 0))
            + int(u.get("cache_creation_input_tokens", 0))
        )
        prof.outputs.append(int(u.get("output_tokens", 0)))
        if self.seg_start or self.prev_stock is None:
            prof.first_stocks.append(stock)
            self.seg_start = False
        elif stock >= self.prev_stock:
            prof.stock_deltas.append(stock - self.prev_stock)
        self.prev_stock = stock


def load(paths: list[Path] | None = None) -> Profile:
    """Measure the fixtures' main-chain transcripts (or the given files)."""
    if paths is None:
        paths = sorted(FIXTURES.glob("*.jsonl"))
    prof = Profile()
    for path in paths:
        prof.sources.append(path.name)
        reader = _FileReader(prof)
        with path.open("rb") as fh:
            for raw in fh:
                line = raw.rstrip(b"\n")
                if line:
                    reader.line(json.loads(line), len(line))
    # Output tokens on an intermediate streamed line are a few; keep the realistic final counts.
    prof.outputs = [o for o in prof.outputs if o > 0] or [100]
    if not prof.compact_at:
        prof.compact_at = [167_000]
    if not prof.summary_lengths:
        prof.summary_lengths = [15_000]
    return prof
