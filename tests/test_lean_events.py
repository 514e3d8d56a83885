"""A whole fold's parse (`bulkparse.parse_chunk(..., lean=True)`, replay's) leaves out the events
that change nothing in the fold and reads a call's line without a tool's marker by its call alone:
the fold of its events is the fold of the hooks' scanner's events (`transcript.parse_lines`), state
for state, with the same bad lines."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from session_watcher.agents.claude_code import bulkparse, transcript
from session_watcher.base.config import DEFAULTS, model_params
from session_watcher.core import closedloop
from session_watcher.sessions import backtest
from session_watcher.sessions.replay import scratch_state
from session_watcher.state import session
from tests.test_decoders import TRANSCRIPTS, chunk_of, lines_of, read, tool_lines, tricky_lines

if TYPE_CHECKING:
    from session_watcher.core.shapes import Event

FIXTURES = Path(__file__).parent / "fixtures"


def folded(events: list[Event]) -> str:
    """The state a scratch state folds `events` to, as text (paths resolved as replay resolves them;
    each dict in its order: the meter's recent calls are kept oldest first)."""
    state, cfg = scratch_state("/nowhere/s.jsonl", "/nowhere", find_cwd=False)
    session.fold_events(state, events, model_params(cfg))
    return json.dumps(state, default=repr)


def same_fold(data: bytes) -> tuple[list[Event], list[Event]]:
    """(lean events, the scanner's events) of a chunk, asserted to fold alike with the same bad lines."""
    lean, bad = bulkparse.parse_chunk(data, lean=True)
    full, full_bad = transcript.parse_lines(lines_of(data))
    assert bad == full_bad
    assert folded(lean) == folded(full)
    assert bulkparse.parse_chunk(data) == (full, full_bad)  # without `lean`: the scanner's very events
    return lean, full


@pytest.mark.parametrize("path", [p for p in TRANSCRIPTS if p.suffix == ".jsonl"],
                         ids=lambda p: str(p.relative_to(FIXTURES)))
def test_the_same_fold_on_fixtures(path: Path) -> None:
    same_fold(read(path))


def test_a_real_session_folds_from_about_half_its_events() -> None:
    path = next(p for p in TRANSCRIPTS if p.name.startswith("258c7280") and p.suffix == ".jsonl")
    lean, full = same_fold(read(path))
    calls = [ev for ev in full if ev[0] == "call"]
    assert len({ev[1] for ev in calls}) < len(calls)  # a response's later lines repeat its call
    assert len(lean) < 0.8 * len(full)
    assert [ev for ev in lean if ev[0] not in ("call", "autocompact")] == \
        [ev for ev in full if ev[0] not in ("call", "autocompact")]


def test_the_same_fold_on_tricky_lines() -> None:
    same_fold(tricky_lines())
    same_fold(tool_lines())


def line(mid: str, cache_read: int, blocks: list[dict[str, Any]] | None = None, **extra: Any) -> bytes:
    rec: dict[str, Any] = {
        "type": "assistant", "timestamp": "2026-02-12T16:00:01.250Z", "requestId": f"req_{mid}",
        "version": "2.1.49", "sessionId": "s",
        "message": {"id": mid, "model": "claude-opus-4-6",
                    "usage": {"input_tokens": 3, "output_tokens": 5, "cache_read_input_tokens": cache_read,
                              "cache_creation_input_tokens": 40},
                    "content": blocks if blocks is not None else [{"type": "text", "text": "hi"}]},
    }
    rec.update(extra)
    return json.dumps(rec, separators=(",", ":")).encode()


def test_a_repeat_after_a_line_only_json_reads_is_kept() -> None:
    """The scanner's line between two lines of one call with the same sample moved the meter to
    its own: the third line moves it back, and is kept."""
    nan = line("msg_a", 900).replace(b'"requestId"', b'"odd":NaN,"requestId"')  # msgspec refuses NaN
    lines = [line("msg_a", 700), nan, line("msg_a", 700)]
    lean, _full = same_fold(chunk_of(lines))
    assert [ev[6] for ev in lean if ev[0] == "call"] == [700, 900, 700]


def test_a_repeat_is_left_out_and_a_changed_sample_kept() -> None:
    lines = [line("msg_a", 700), line("msg_a", 700), line("msg_a", 800), line("msg_b", 800)]
    lean, _full = same_fold(chunk_of(lines))
    assert [(ev[1], ev[6]) for ev in lean if ev[0] == "call"] == \
        [("msg_a:req_msg_a", 700), ("msg_a:req_msg_a", 800), ("msg_b:req_msg_b", 800)]
    assert [ev[0] for ev in lean].count("autocompact") == 1  # one reserve, said once


def test_a_tool_use_spelt_with_an_escape_in_a_call_line_is_read_whole() -> None:
    """No `"tool_` as written (the block's type is escaped): the line is read by its call alone
    only until a block turns out to be a tool use; then whole, its use kept."""
    use = {"type": "tool\\u005fuse", "id": "toolu_x1", "name": "Read", "input": {"file_path": "/nowhere/a.py"}}
    text = line("msg_a", 700, [{"type": "text", "text": "x"}, {"type": "TOOLUSE"}]).replace(
        b'{"type":"TOOLUSE"}', json.dumps(use, separators=(",", ":")).replace("\\\\", "\\").encode())
    assert b'"tool_' not in text
    lean, _full = same_fold(chunk_of([text]))
    assert [ev[0] for ev in lean] == ["autocompact", "call", "use"]


def test_the_page_keeps_every_events_of_its_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    """While the session page reads the chunk with its replay (`tap`), every line's events are kept."""
    data = chunk_of([line("msg_a", 700), line("msg_a", 700)])
    seen: list[int] = []
    monkeypatch.setattr(bulkparse, "tap", lambda start, rec: seen.append(start))
    assert bulkparse.parse_chunk(data, lean=True) == transcript.parse_lines(lines_of(data))
    assert len(seen) == 2


def followed(events: list[Event]) -> list[tuple[list[int], str]]:
    """Each closed-loop policy's restarts and the counterfactual state it ends in, from `events`."""
    loaded = backtest.loaded("/nowhere/s.jsonl", "/nowhere", events)
    params = model_params(DEFAULTS)
    seen = closedloop.observe(loaded.fresh(), loaded.events, params, loaded.paths)
    out = []
    for policy in closedloop.POLICIES:
        state = loaded.fresh()
        out.append((closedloop.follow(state, seen, params, policy), json.dumps(state, default=repr)))
    return out


def test_the_closed_loop_follows_the_same_session_from_the_lean_events() -> None:
    """The backtest's counterfactual folds the parse's events too (`closedloop.follow`): a response
    whose later lines come after a compaction (a tool use, its result, a line repeating its sample)
    folds to the same counterfactual without the repeat (the use and result are folded after the
    compaction either way; folding a later sample used to fold them before it)."""
    def result(tid: str, path: str) -> bytes:
        return json.dumps({"type": "user", "timestamp": "2026-02-12T16:00:02.000Z", "message": {"role": "user",
                           "content": [{"type": "tool_result", "tool_use_id": tid, "content": "ok"}]},
                           "toolUseResult": {"file": {"filePath": path, "content": "x\n" * 3000, "startLine": 1}}},
                          separators=(",", ":")).encode()

    def reading(tid: str, path: str) -> list[dict[str, Any]]:
        return [{"type": "tool_use", "id": tid, "name": "Read", "input": {"file_path": path}}]

    boundary = json.dumps({"type": "system", "subtype": "compact_boundary", "timestamp": "2026-02-12T16:00:03.000Z",
                           "compactMetadata": {"trigger": "auto", "preTokens": 150000}}).encode()
    lines = []
    for i in range(24):
        mid, cache_read = f"msg_{i}", 20000 + 4000 * i
        path = f"/nowhere/f{i}.py"
        lines += [line(mid, cache_read, reading(f"toolu_{i}", path)), result(f"toolu_{i}", path)]
        if i == 15:  # the boundary, then the response's later lines: a tool use, its result, a repeat
            lines += [boundary, line(mid, cache_read, reading(f"toolu_x{i}", f"/nowhere/x{i}.py")),
                      result(f"toolu_x{i}", f"/nowhere/x{i}.py"), line(mid, cache_read)]
    lean, full = same_fold(chunk_of(lines))
    assert len(lean) < len(full)
    assert followed(lean) == followed(full)


def test_a_later_line_of_the_same_sample_with_other_iterations_is_kept() -> None:
    """A call whose iterations list another model's request: its sample is its own iterations' sum,
    so a later line may say the same sample and another count for the other model (whose tokens the
    meter keeps apart): that line is kept."""
    def with_advisor(advisor_input: int) -> bytes:
        iterations = [{"type": "message", "input_tokens": 3, "output_tokens": 5, "cache_read_input_tokens": 700},
                      {"type": "advisor_message", "model": "claude-haiku-4-5", "input_tokens": advisor_input}]
        rec = json.loads(line("msg_a", 700))
        rec["message"]["usage"]["iterations"] = iterations
        return json.dumps(rec, separators=(",", ":")).encode()

    lean, full = same_fold(chunk_of([with_advisor(9), with_advisor(9), with_advisor(50)]))
    calls = [ev for ev in full if ev[0] == "call"]
    assert calls[1][5:11] == calls[2][5:11]  # the same sample,
    assert calls[1][11] != calls[2][11]  # another count for the other model
    assert [ev for ev in lean if ev[0] == "call"][-1] == calls[2]
