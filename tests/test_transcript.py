"""core.transcript: the pure parser, against hand-made records and the real fixtures."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest

from session_watcher.agents.claude_code.transcript import (
    iso_to_epoch,
    parse_lines,
    read_payload,
    record_events,
    split_lines,
    usage_sample,
)
from tests.oracle import REAL_CLIENT, TRANSCRIPTS, complete_lines, oracle


@pytest.mark.parametrize("text", [
    "2026-02-10T21:11:56.906Z", "2026-02-10T21:11:56Z", "1999-12-31T23:59:59.5+02:00",
    "2024-02-29T00:00:00.000001-05:30", "2026-03-01 00:00:00", "1970-01-01T00:00:00Z",
])
def test_iso_to_epoch_matches_datetime(text: str) -> None:
    ref = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    if ref.tzinfo is None:
        ref = ref.replace(tzinfo=dt.UTC)
    assert iso_to_epoch(text) == pytest.approx(ref.timestamp(), abs=1e-6)


@pytest.mark.parametrize("text", [None, 5, "", "yesterday", "2026-13-01T00:00:00Z", "2026-02-10X21:11:56",
                                  "2026-aa-10T21:11:56Z"])
def test_iso_to_epoch_rejects(text: object) -> None:
    assert iso_to_epoch(text) is None


def test_split_lines_keeps_the_unfinished_line() -> None:
    assert split_lines(b"") == ([], 0)
    assert split_lines(b'{"a":1}') == ([], 0)
    assert split_lines(b'{"a":1}\n{"b"') == ([b'{"a":1}'], 8)
    assert split_lines(b"a\n\nb\n") == ([b"a", b"", b"b"], 5)


def test_usage_sample_cache_write_split() -> None:
    base = {"input_tokens": 3, "cache_read_input_tokens": 100, "output_tokens": 7}
    # no split: a 5-minute write
    assert usage_sample({**base, "cache_creation_input_tokens": 50}) == (3, 100, 50, 7, 50, 0)
    # the nested split decides 5m vs 1h
    split = {"ephemeral_5m_input_tokens": 20, "ephemeral_1h_input_tokens": 30}
    assert usage_sample({**base, "cache_creation_input_tokens": 50, "cache_creation": split}) == (3, 100, 50, 7, 20, 30)
    # a total of 0 with a non-zero split: the split is the truth
    assert usage_sample({**base, "cache_creation_input_tokens": 0, "cache_creation": split}) == (3, 100, 50, 7, 20, 30)
    # wrong types and negatives count as 0
    assert usage_sample({"input_tokens": "3", "output_tokens": -1, "cache_read_input_tokens": True}) == (0,) * 6


def assistant(mid: str, rid: str | None = "r", *, side: bool = False, model: str = "claude-x",
              content: list[Any] | None = None, usage: dict[str, Any] | None = None) -> dict[str, Any]:
    rec: dict[str, Any] = {"type": "assistant", "isSidechain": side, "timestamp": "2026-01-01T00:00:01Z",
                           "message": {"id": mid, "model": model, "content": content or [],
                                       "usage": usage if usage is not None else {"input_tokens": 1}}}
    if rid is not None:
        rec["requestId"] = rid
    return rec


def test_record_events_assistant() -> None:
    tool = {"type": "tool_use", "id": "tu1", "name": "Edit",
            "input": {"file_path": "a.py", "old_string": "xy", "new_string": "hello"}}
    evs = list(record_events(assistant("m1", "r1", content=[{"type": "text", "text": "hi"}, tool])))
    assert evs[0][:5] == ("call", "m1:r1", 1767225601.0, "claude-x", False)
    assert evs[1] == ("use", 1767225601.0, "tu1", "Edit", {"path": "a.py", "new": 5, "old": 2})
    assert len(evs) == 2
    # no request id: the message id alone; <synthetic>: no call
    assert next(iter(record_events(assistant("m2", None))))[1] == "m2"
    assert list(record_events(assistant("m3", model="<synthetic>"))) == []
    # a sidechain record: a call marked as such, its tools ignored
    evs = list(record_events(assistant("m4", side=True, content=[tool])))
    assert [e[0] for e in evs] == ["call"]
    assert evs[0][0] == "call"  # (the checker's: a call event has a sidechain flag)
    assert evs[0][4] is True


def test_record_events_results_and_compaction() -> None:
    rec: dict[str, object] = {
        "type": "user", "timestamp": "2026-01-01T00:00:02Z",
        "message": {"content": [{"type": "tool_result", "tool_use_id": "tu1", "is_error": True}]},
        "toolUseResult": {"file": {"filePath": "/p/a.py", "content": "x\n", "startLine": 3}}}
    assert list(record_events(rec)) == [("result", 1767225602.0, "tu1", True,
                                          {"path": "/p/a.py", "start": 3, "content": "x\n"})]
    boundary: dict[str, object] = {"type": "system", "subtype": "compact_boundary",
                                   "compactMetadata": {"trigger": "auto", "preTokens": 155000}}
    assert list(record_events(boundary)) == [("compact", None, "auto", 155000)]
    assert read_payload({"file": {"filePath": 3, "content": "x"}}) is None
    assert read_payload("text") is None


def test_parse_lines_counts_bad_lines() -> None:
    good = json.dumps(assistant("m1")).encode()
    lines = [good, b"", b"   ", b"not json at all", b'{"usage": ', b"\xff\xfe\xfd", b"[1,2]",
             b'{"type":"progress","data":{}}', b'{"usage":1,"type":"assistant"} trailing']
    events, bad = parse_lines(lines)
    assert [e[0] for e in events] == ["call"]
    assert bad == 5  # not json, cut-off json, non-UTF-8, not a record ([1,2]), trailing garbage


@pytest.mark.parametrize("path", [*sorted(TRANSCRIPTS.glob("*.jsonl")), REAL_CLIENT / "transcript_interactive.jsonl"],
                         ids=lambda p: p.stem[:12])
def test_parse_real_fixture_calls_agree_with_oracle(path: Any) -> None:
    events, bad = parse_lines(complete_lines(path.read_bytes()))
    assert bad == 0
    main_keys = []
    for e in events:
        if e[0] == "call" and not e[4] and e[1] not in main_keys:
            main_keys.append(e[1])
    expect = oracle(path)
    assert main_keys == [f"{m}:{r}" if r is not None else m for m, r in expect["mainKeys"]]
    boundaries = sum(1 for line in complete_lines(path.read_bytes())
                     if json.loads(line).get("subtype") == "compact_boundary")
    assert sum(1 for e in events if e[0] == "compact") == boundaries
    assert boundaries == (2 if "interactive" in path.name else 1 if len(path.stem) == 36 else 0)
