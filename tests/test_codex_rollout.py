"""Codex rollouts -> the core's events (agents.codex.rollout, agents.codex.reader): per call once, from
`token_usage_record` or else the `token_count` snapshots whose total changed; cr / cw / L as SPEC v4
"Agents" says; the model, the tier, compactions, subagent threads, resumes; on the ten real rollouts
(Codex 0.118 to 0.145) against an oracle written here from the raw JSON, and on 0.171-shaped lines."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from session_watcher.agents import FALLBACK, agent_for_head, codex
from session_watcher.agents.codex import reader, rollout
from session_watcher.sessions.replay import fold
from tests.codex_lines import FIXTURES, THREAD, Thread, line, meta, tier, turn, write_rollout

if TYPE_CHECKING:
    from pathlib import Path

ROLLOUTS = sorted(FIXTURES.glob("rollout-*.jsonl"))
# calls and compactions per file, as the fixtures' INDEX.md counts them
INDEX = {"019d7739": (217, 1), "019dc0d3": (293, 1), "019ddaf2": (101, 0), "019e260b": (190, 0),
         "019e7da4": (107, 0), "019ed893": (278, 1), "019f1f6f": (101, 1), "019f5cfd": (403, 2),
         "019f6bcb": (234, 1), "019f8c04": (81, 0)}


def oracle(path: Path) -> dict[str, Any]:
    """Per-call usage read straight from the JSON: a `token_count` whose whole `total_token_usage`
    differs from the one before is a call; its `last_token_usage` is the call's usage."""
    prev = None
    calls: list[dict[str, int]] = []
    models: list[str] = []
    model = ""
    compactions = 0
    for raw in path.read_text().splitlines():
        rec = json.loads(raw)
        p = rec["payload"]
        if rec["type"] == "turn_context":
            model = p["model"]
        elif rec["type"] == "compacted":
            compactions += 1
        elif rec["type"] == "event_msg" and p.get("type") == "token_count" and p["info"]:
            total = p["info"]["total_token_usage"]
            if total != prev:
                calls.append(p["info"]["last_token_usage"])
                models.append(model)
            prev = total
    return {"calls": calls, "models": models, "compactions": compactions}


def decode(lines: list[str], chunks: int = 1) -> list[Any]:
    """Events of `lines` decoded in `chunks` reads, the decoder state carried between them."""
    d = rollout.new_decoder()
    raw = [s.encode() for s in lines]
    size = -(-len(raw) // chunks)
    events: list[Any] = []
    for at in range(0, len(raw), size):
        got, bad = rollout.parse_lines(raw[at:at + size], d)
        assert bad == 0
        events += got
        d = json.loads(json.dumps(d))  # as the cursor saves it
    return events


def calls_of(events: list[Any]) -> list[Any]:
    return [e for e in events if e[0] == "call"]


def per_call(events: list[Any]) -> list[Any]:
    """The last sample of each call key, in the order the calls came (the meter's rule)."""
    last: dict[str, Any] = {}
    for e in calls_of(events):
        last[e[1]] = e
    return list(last.values())


@pytest.mark.parametrize("path", ROLLOUTS, ids=lambda p: p.name[8:16])
def test_every_fixture_rollout_decodes_to_its_calls(path: Path) -> None:
    """Each real call once, its cr = cached, its prompt size = input_tokens, the model of its turn."""
    want = oracle(path)
    assert (len(want["calls"]), want["compactions"]) == INDEX[path.name[8:16]]
    d = rollout.new_decoder()
    events, bad = rollout.parse_lines(path.read_bytes().splitlines(), d)
    assert bad == 0
    calls = calls_of(events)
    assert len(calls) == len(want["calls"])
    for ev, u, model in zip(calls, want["calls"], want["models"], strict=True):
        _, _key, ts, got_model, side, inp, cr, cw, out, cw5, cw1, detail = ev
        assert (cr, inp + cr + cw, out) == (u["cached_input_tokens"], u["input_tokens"], u["output_tokens"])
        assert cw == u["input_tokens"] - u["cached_input_tokens"]  # none of these reports a write: all of it
        assert (cw5, cw1, detail, side) == (cw, 0, None, False)
        assert got_model.split("[")[0] == model
        assert ts is not None
    assert len({ev[1] for ev in calls}) == len(calls)  # one key per call
    assert sum(1 for e in events if e[0] == "compact") == want["compactions"]


def test_a_tier_other_than_default_is_carried_in_the_model_name() -> None:
    """019f8c04 switched to the priority tier mid-thread: the calls after it say so."""
    path = next(p for p in ROLLOUTS if p.name.startswith("rollout-019f8c04"))
    calls = calls_of(rollout.parse_lines(path.read_bytes().splitlines(), rollout.new_decoder())[0])
    names = [c[3] for c in calls]
    assert names[0] == "gpt-5.6-sol"
    assert names[-1] == "gpt-5.6-sol[priority]"
    assert names.index("gpt-5.6-sol[priority]") > 0
    assert decode([meta(), tier(0, "default"), turn(0, "gpt-6.2-sol"), *_one_call()])[0][3] == "gpt-6.2-sol"


def _one_call() -> list[str]:
    t = Thread()
    t.call(1, 30_000, 20_000, 500, 9_000)
    return t.lines


@pytest.mark.parametrize("record_first", [False, True])
def test_0171_usage_records_count_each_call_once(record_first: bool) -> None:
    """A 0.171 rollout logs each call twice (a usage record and a snapshot): one call, the record's
    key; a reported cache write is cw, the rest of the uncached input stays uncached."""
    t = Thread(record_first=record_first)
    t.call(1, 30_000, 20_000, 500, 9_000)
    t.repeat(2)
    t.call(3, 31_000, 29_000, 400, 2_000)
    events = calls_of(decode([meta(), turn(0, "gpt-6.2-sol"), *t.lines]))
    calls = per_call(events)
    assert [c[5:9] for c in calls] == [(1_000, 20_000, 9_000, 500), (0, 29_000, 2_000, 400)]
    if record_first:
        assert [c[1] for c in calls] == ["resp_0001", "resp_0002"]
    else:  # the snapshot came first: the record replaces its sample under the same key (the meter's rule)
        assert [c[1] for c in events] == [f"{THREAD}#1", f"{THREAD}#1", "resp_0002"]


def test_usage_records_alone() -> None:
    t = Thread(counts=False)
    for n in range(3):
        t.call(n, 10_000 * (n + 1), 10_000 * n, 100)
    calls = calls_of(decode([meta(), turn(0, "gpt-5.5"), *t.lines]))
    assert [(c[1], c[6], c[7]) for c in calls] == [("resp_0001", 0, 10_000), ("resp_0002", 10_000, 10_000),
                                                   ("resp_0003", 20_000, 10_000)]


def test_repeated_snapshots_count_once_and_a_reset_total_still_counts() -> None:
    """Snapshots repeat (turn starts, resumes, compactions); equal calls are still two calls; a running
    total that drops (019e7da4) is a change like any other."""
    t = Thread(records=False)
    t.call(1, 20_000, 10_000, 100)
    t.repeat(2)
    t.repeat(3)
    t.call(4, 20_000, 10_000, 100)  # the same usage as the first: a call of its own
    lines, t.lines = t.lines, []
    t.total = {}
    t.call(5, 21_000, 20_000, 100)  # the total starts again
    calls = calls_of(decode([meta(), turn(0, "gpt-5.4"), *lines, *t.lines]))
    assert len(calls) == 3


def test_the_model_is_the_latest_turn_context() -> None:
    t = Thread(records=False)
    t.call(1, 20_000, 0, 100)
    first = [*t.lines]
    t.lines = []
    t.call(3, 21_000, 20_000, 100)
    calls = calls_of(decode([meta(), turn(0, "gpt-5.5"), *first, turn(2, "gpt-5.6-sol"), *t.lines]))
    assert [c[3] for c in calls] == ["gpt-5.5", "gpt-5.6-sol"]


def test_a_compaction_starts_a_segment_with_the_last_calls_size() -> None:
    t = Thread(records=False)
    t.call(1, 200_000, 190_000, 100)
    events = decode([meta(), turn(0, "gpt-5.5"), *t.lines, line(2, "compacted", {"message": ""}), turn(2, "gpt-5.5")])
    assert events[-1][0] == "compact"
    assert events[-1][2:] == ("auto", 200_000)


def test_a_subagent_threads_calls_count_to_totals_only() -> None:
    src = {"subagent": {"thread_spawn": {"parent_thread_id": THREAD, "depth": 1}}}
    calls = calls_of(decode([meta(source=src), turn(0, "gpt-5.5"), *_one_call()]))
    assert {(c[1], c[4]) for c in calls} == {(f"{THREAD}#1", True)}  # a snapshot, then its record


def test_decoding_in_pieces_equals_decoding_at_once() -> None:
    """A hook reads a few lines at a time (the decoder state saved in the cursor between runs)."""
    path = next(p for p in ROLLOUTS if p.name.startswith("rollout-019f5cfd"))
    lines = path.read_text().splitlines()
    assert decode(lines, 1) == decode(lines, 37)


def _message(at: float, role: str, text: str) -> str:
    content = [{"type": "input_text", "text": text}]
    return line(at, "response_item", {"type": "message", "role": role, "content": content})


def test_a_handoff_note_the_start_hook_gave_names_the_parent() -> None:
    """As Codex 0.171.0 records a SessionStart hook's additionalContext (tests/e2e: a `developer`
    message, the text as given); a tool's output quoting the note names nothing."""
    note = "[session-watcher handoff from session 019f0000-aaaa-7000-8000-000000000009, 3 files]\nwhat was done"
    tool = line(0.6, "response_item", {"type": "function_call_output", "output": note})
    events = decode([meta(), turn(0, "gpt-5.5"), _message(0.5, "developer", note), tool])
    assert events == [("parent", events[0][1], "019f0000-aaaa-7000-8000-000000000009")]


def test_a_handoff_marker_in_a_users_message_or_mid_text_names_no_parent() -> None:
    """A repository's AGENTS.md (a `user` message, as Codex gives it) or a prompt holding the marker,
    and a developer text with it past its start, claimed a parent session: backtest then counted a
    restart that never was."""
    head = "[session-watcher handoff from session 019f0000-aaaa-7000-8000-00000000000a, 3 files]\n"
    agents_md = f"# AGENTS.md instructions for /repo\n\n<INSTRUCTIONS>\n{head}</INSTRUCTIONS>"
    lines = [meta(), turn(0, "gpt-5.5"), _message(0.5, "user", agents_md), _message(0.6, "user", head),
             _message(0.7, "developer", f"Context for this repo.\n{head}")]
    assert [e for e in decode(lines) if e[0] == "parent"] == []


def test_the_reader_recognizes_a_rollout_and_its_thread_id(tmp_path: Path) -> None:
    path = write_rollout(tmp_path / f"rollout-2026-11-20T10-00-00-{THREAD}.jsonl", [meta(), turn(0, "gpt-5.5")])
    assert agent_for_head(path.read_bytes()) is codex.AGENT
    assert reader.session_id(str(path)) == THREAD
    claude = tmp_path / "a.jsonl"
    claude.write_text('{"type":"user","timestamp":"2026-11-20T10:00:00.000Z"}\n')
    assert agent_for_head(claude.read_bytes()) is FALLBACK
    assert reader.session_id(str(claude)) is None
    assert agent_for_head(b"") is FALLBACK


def test_a_finished_rollout_without_a_last_newline_keeps_its_last_call(tmp_path: Path) -> None:
    """Six of the fixtures end without a newline; their last line is a whole record, and counts."""
    t = Thread(records=False)
    t.call(1, 20_000, 0, 100)
    t.call(2, 21_000, 20_000, 100)
    path = write_rollout(tmp_path / f"rollout-{THREAD}.jsonl", [meta(), turn(0, "gpt-5.5"), *t.lines],
                         newline_at_end=False)
    state, _cfg, _trace = fold(str(path))
    assert state["meter"]["main"]["calls"] == 2
    assert state["sessionId"] == THREAD
    half = path.read_bytes()[:-5]  # a last line cut short: not a record yet
    path.write_bytes(half)
    assert fold(str(path))[0]["meter"]["main"]["calls"] == 1


def test_live_folding_in_pieces_equals_one_replay(tmp_path: Path) -> None:
    """The hook path (a file growing, folded again after each append) ends where one replay ends."""
    from session_watcher.base import config
    from session_watcher.state import session

    src = next(p for p in ROLLOUTS if p.name.startswith("rollout-019f1f6f")).read_bytes().splitlines(keepends=True)
    path = tmp_path / "rollout-019f1f6f-311c-7543-b0f9-f126da3c5434.jsonl"
    path.write_bytes(b"")
    cfg = config.merge()
    from session_watcher.core import engine

    state = engine.new_state("019f1f6f-311c-7543-b0f9-f126da3c5434")
    step = 97
    for at in range(0, len(src), step):
        with path.open("ab") as fh:
            fh.write(b"".join(src[at:at + step]))
        state, _alerts, done = session.sync(state, str(path), cfg, float("inf"))
        assert done
    whole, _cfg, _trace = fold(str(path))
    assert whole["meter"]["main"]["calls"] == 101
    assert whole["engine"]["compactions"] == 1
    assert state["meter"] == whole["meter"]
    assert state["engine"] == whole["engine"]


@pytest.mark.parametrize("record_first", [False, True])
def test_a_0171_rollout_folds_each_call_once(tmp_path: Path, record_first: bool) -> None:
    """Through the reader and the meter: a call logged as a snapshot and a usage record is one call,
    its reported cache writes the meter's, the rest of its uncached input uncached."""
    t = Thread(record_first=record_first)
    t.call(1, 30_000, 20_000, 500, 9_000)
    t.repeat(2)
    t.call(3, 31_000, 29_000, 400, 2_000)
    t.call(4, 33_000, 31_000, 300, 2_000)
    path = write_rollout(tmp_path / f"rollout-{THREAD}.jsonl", [meta(), turn(0, "gpt-6.2-sol"), *t.lines])
    state, _cfg, trace = fold(str(path))
    main = state["meter"]["main"]
    assert (main["calls"], main["uncachedInput"], main["cacheRead"], main["cacheWrite"], main["output"]) == (
        3, 1_000, 80_000, 13_000, 1_200)
    assert len(trace) == 3
    assert state["engine"]["floor"] == 30_000  # the first call's input_tokens
