"""`session-watcher replay FILE --json` against an independent oracle on every real transcript."""

from __future__ import annotations

import json
import shutil
from typing import TYPE_CHECKING, Any

import pytest

from tests.oracle import REAL_CLIENT, TRANSCRIPTS, complete_lines, oracle, sw

pytestmark = pytest.mark.slow  # starts processes (tests/conftest.py: the quick tier)

if TYPE_CHECKING:
    from pathlib import Path

SPOTTER = sorted(TRANSCRIPTS.glob("*.jsonl"))
REAL = ["transcript_print", "transcript_interactive"]


def subagents_of(transcript: Path) -> list[Path]:
    return sorted((transcript.parent / transcript.stem / "subagents").glob("*.jsonl"))


def replay(path: Path, *extra: str) -> dict[str, Any]:
    proc = sw("replay", str(path), "--json", *extra)
    assert proc.returncode == 0, proc.stderr.decode()
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def check(doc: dict[str, Any], expect: dict[str, Any]) -> None:
    assert doc["tokenUsage"] == expect["main"]
    assert doc["subagentUsage"] == expect["sub"]
    assert doc["contextPressure"]["pressureTokens"] == expect["pressure"]
    assert doc["calls"] == expect["main"]["calls"]


def test_fixtures_are_present() -> None:
    assert len(SPOTTER) == 6
    assert sum(1 for t in SPOTTER if subagents_of(t)) == 3


@pytest.mark.parametrize("transcript", SPOTTER, ids=lambda p: p.stem[:12])
def test_replay_matches_oracle(transcript: Path) -> None:
    expect = oracle(transcript, subagents_of(transcript))
    assert expect["main"]["calls"] > 0
    check(replay(transcript), expect)


@pytest.mark.parametrize("name", REAL)
def test_replay_real_client_with_subagent_layout(name: str, tmp_path: Path) -> None:
    """The 2.1.197 transcripts, laid out as Claude Code does: <id>.jsonl and <id>/subagents/."""
    src = REAL_CLIENT / f"{name}.jsonl"
    session_id = next(json.loads(line)["sessionId"] for line in complete_lines(src.read_bytes())
                      if b'"sessionId"' in line)
    main = tmp_path / f"{session_id}.jsonl"
    shutil.copy(src, main)
    subdir = tmp_path / session_id / "subagents"
    subdir.mkdir(parents=True)
    sub = subdir / "agent-a1.jsonl"
    shutil.copy(REAL_CLIENT / f"{name}_subagent.jsonl", sub)
    expect = oracle(main, [sub])
    assert expect["sub"]["calls"] > 0, "the subagent file must contribute"
    doc = replay(main)
    check(doc, expect)
    # the 1M window of these sessions is read from the model, never invented
    assert doc["contextPressure"]["contextWindow"] == 1_000_000


@pytest.mark.parametrize("name", REAL)
def test_subagent_transcript_alone_counts_as_subagent(name: str) -> None:
    path = REAL_CLIENT / f"{name}_subagent.jsonl"
    expect = oracle(path)
    assert expect["main"]["calls"] == 0
    assert expect["sub"]["calls"] > 0
    check(replay(path), expect)
    assert replay(path)["contextPressure"]["pressureTokens"] is None


def test_dedupe_matters_on_the_fixtures() -> None:
    """A sum over lines would double-count: the fixtures repeat usage across a response's lines."""
    t = TRANSCRIPTS / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"
    naive = 0
    for line in complete_lines(t.read_bytes()):
        rec = json.loads(line)
        if rec.get("type") == "assistant" and isinstance(rec["message"].get("usage"), dict):
            naive += rec["message"]["usage"].get("cache_read_input_tokens", 0)
    expect = oracle(t, subagents_of(t))
    doc = replay(t)
    assert naive > doc["tokenUsage"]["cacheRead"] == expect["main"]["cacheRead"]


def test_trace_writes_one_line_per_main_call(tmp_path: Path) -> None:
    t = TRANSCRIPTS / "subagent.jsonl"
    trace = tmp_path / "trace.jsonl"
    replay(t, "--trace", str(trace))
    rows = [json.loads(line) for line in trace.read_text().splitlines()]
    expect = oracle(t)
    assert len(rows) == expect["main"]["calls"] == 12
    assert [r["call"] for r in rows] == list(range(1, 13))
    assert rows[-1]["tokenUsage"]["calls"] == 12


def test_synthetic_and_sidechain_records(tmp_path: Path) -> None:
    """Hand-made edge cases: <synthetic> is no call, a sidechain record goes to subagentUsage, a later
    sample replaces an earlier one, the same message id under two request ids is two calls."""
    def rec(mid: str, rid: str | None, out: int, side: bool = False, model: str = "claude-sonnet-4-5",
            cr: int = 1000) -> str:
        r: dict[str, Any] = {"type": "assistant", "isSidechain": side, "timestamp": "2026-01-01T00:00:00Z",
                             "message": {"id": mid, "model": model, "role": "assistant", "content": [],
                                         "usage": {"input_tokens": 3, "output_tokens": out,
                                                   "cache_read_input_tokens": cr,
                                                   "cache_creation_input_tokens": 10}}}
        if rid is not None:
            r["requestId"] = rid
        return json.dumps(r)

    lines = [rec("m1", "r1", 1), rec("m1", "r1", 50), rec("m2", "r2", 7, side=True),
             rec("m3", "r3", 9, model="<synthetic>"), rec("m4", "rA", 5), rec("m4", "rB", 6, cr=2000),
             "not json", rec("m5", None, 4, cr=3000)]
    t = tmp_path / "edge.jsonl"
    t.write_text("\n".join(lines) + "\n")
    doc = replay(t)
    expect = oracle(t)
    check(doc, expect)
    assert doc["tokenUsage"]["calls"] == 4
    assert doc["tokenUsage"]["output"] == 50 + 5 + 6 + 4
    assert doc["subagentUsage"]["calls"] == 1
    assert doc["subagentUsage"]["output"] == 7
    assert doc["contextPressure"]["pressureTokens"] == 3 + 3000 + 10
    assert doc["badLines"] == 1
