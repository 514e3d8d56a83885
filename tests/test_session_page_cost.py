"""The session page's own work over its replay's: story rows from the quantities the engine priced
each call by, the backtest's line from the policies it reads, the rows' JSON written by a format a
row with the text json.dumps of their dicts gives."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from session_watcher.core import backtest, status
from session_watcher.core.eoq import quantities, real_request
from session_watcher.core.fastjson import finite
from session_watcher.core.text import clean_data
from session_watcher.reports import session_page, session_page_data
from session_watcher.sessions.replay import fold

FIXTURES = Path(__file__).parent / "fixtures"
S258 = FIXTURES / "transcripts" / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"
CLEAN = ["plain", "back\\slash", "</script>", 'a "quote"', "tab\\t spelled"]  # JSON with no escape clean_data changes
ODD = ["plain", "tab\there", "new\nline", "bell\x07", "del\x7f", "caf\u00e9", "lone\udc80", "back\\slash",
       "\\u0041 spelled", "</script>", 'a "quote"']


def test_story_rows_take_the_quantities_the_engine_priced_each_call_by(monkeypatch: pytest.MonkeyPatch) -> None:
    """A story row prices no call again (before: `story_document` priced each call a second time),
    and its rows are the ones pricing it again gives."""
    priced: list[int] = []
    real = quantities  # the name status imported

    def counted(state: Any, cfg: Any) -> Any:
        priced.append(1)
        return real(state, cfg)

    monkeypatch.setattr(status, "quantities", counted)
    trace = session_page_data.StoryTrace()
    fold(str(S258), trace=trace)
    assert len(trace) > 100
    first = len(priced)
    assert first == sum(1 for c in trace.calls if not real_request(c.total))  # only calls the engine did not price

    init = status.Tracer.__init__

    def unpriced(self: status.Tracer, trace: list[dict[str, Any]], cfg: Any) -> None:
        init(self, trace, cfg)
        self.priced = None  # the engine hands nothing over: every row priced again

    monkeypatch.setattr(status.Tracer, "__init__", unpriced)
    again = session_page_data.StoryTrace()
    fold(str(S258), trace=again)
    assert len(priced) - first == len(trace)
    assert list(again) == list(trace)
    assert again.calls == trace.calls


def test_the_pages_best_restarts_are_the_backtests() -> None:
    """`best_restarts` gives the policies of `backtest` the page's line reads, the same figures."""
    trace = session_page_data.StoryTrace()
    state, cfg, _ = fold(str(S258), trace=trace)
    final = status.status_document(state, cfg)
    shared = backtest.shared_prefix(final, trace.calls)
    full = backtest.backtest(trace.calls, shared)
    got = backtest.best_restarts(trace.calls, shared)
    assert got["policies"] == {p: full["policies"][p] for p in ("actual", "alert", "hindsight")}
    assert got["policies"]["hindsight"]["restartsAfter"]  # a session with restarts worth making
    assert session_page_data.backtest_summary(trace.calls, final) == {
        "policies": {p: {k: full["policies"][p][k] for k in ("usd", "savingUsd", "savingPct", "restartsAfter")}
                     for p in ("actual", "alert", "hindsight")},
        "capture": None, "sentence": backtest.sentence(full, advice=False)}


def test_the_pages_best_restarts_past_its_closed_loop_take_the_compactions_as_backtest_does(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A transcript past PAGE_BACKTEST_MAX: the page's line prices the best schedule from its story's
    calls with the automatic compactions where the counterfactual's own context reaches them, as
    `backtest` does (258c7280 compacts on its own; priced segment by segment, its best schedule
    saves another sum)."""
    from session_watcher.sessions.backtest import run_one

    monkeypatch.setattr(session_page_data, "PAGE_BACKTEST_MAX", 0)
    line = session_page_data.load_model(str(S258))["backtest"]
    doc = run_one(str(S258))
    keep = ("usd", "savingUsd", "savingPct", "restartsAfter")
    assert line["capture"] is None  # the closed loop not run
    assert {p: line["policies"][p] for p in ("actual", "hindsight")} == \
        {p: {k: doc["policies"][p][k] for k in keep} for p in ("actual", "hindsight")}  # "alert": none followed
    trace = session_page_data.StoryTrace()
    state, cfg, _ = fold(str(S258), trace=trace)
    assert trace.autos.autos  # an automatic compaction, the call after it
    by_segment = backtest.best_restarts(trace.calls, backtest.shared_prefix(status.status_document(state, cfg),
                                                                            trace.calls))
    assert by_segment["policies"]["hindsight"]["usd"] != line["policies"]["hindsight"]["usd"]


def _builder(words: list[str]) -> session_page_data.PageBuilder:
    """Calls and tool calls with odd labels, paths, an unfinished call, a re-read and an error."""
    b = session_page_data.PageBuilder("s")
    for i in range(2 * session_page.BLOCK + 9):
        t = f"2026-01-01T00:{i // 60 % 60:02d}:{i % 60:02d}.{i % 1000:03d}Z"
        done = f"2026-01-01T01:{i // 60 % 60:02d}:{i % 60:02d}.500Z"
        name, inp = ("Read", {"file_path": f"/p/{words[i % len(words)]}{i % 3}"}) if i % 2 else \
            ("Bash", {"command": words[i % len(words)] + f" {i}"})
        b.add({"type": "assistant", "timestamp": t, "sessionId": "s", "cwd": "/w", "requestId": f"r{i}",
               "message": {"id": f"m{i}", "model": words[i % len(words)] if i % 5 == 0 else "claude-opus-4-6",
                           "usage": {"input_tokens": i, "cache_read_input_tokens": 1000 * i,
                                     "cache_creation_input_tokens": 7 * i, "output_tokens": 3},
                           "content": [{"type": "tool_use", "id": f"t{i}", "name": name, "input": inp}]}})
        if i % 4:  # the rest stay open
            b.add({"type": "user", "timestamp": done, "sessionId": "s",
                   "message": {"content": [{"type": "tool_result", "tool_use_id": f"t{i}", "is_error": i % 8 == 1}]}})
    return b


def test_rows_written_by_their_format_read_as_their_dicts() -> None:
    """The rows' JSON written by `rows_json` is the text json.dumps (and `clean_data` where a string
    needs it) gives of the rows' dicts, whatever the strings hold; a time that is not finite is
    written null, as every JSON the CLI writes (it raised json.dumps's error)."""
    for words in (CLEAN, ODD):
        b = _builder(words)
        packed = b.model(packed=True)
        plain = b.model()
        assert any(r.get("reread") for r in plain["rows"])
        assert any(r.get("end") is None for r in plain["rows"])
        got = "".join(session_page.model_json(packed))
        assert got == json.dumps(clean_data(plain), separators=(",", ":"), allow_nan=False)
    b = _builder(CLEAN)
    rows = b.ordered()
    assert b.rows_json(rows) == [json.dumps(b.row_dict(r), separators=(",", ":")) for r in rows]

    b.call_times[1] = math.inf
    assert b.rows_json([0]) is None
    got = "".join(session_page.model_json(b.model(packed=True)))
    assert got == json.dumps(finite(clean_data(b.model())), separators=(",", ":"), allow_nan=False)
    assert json.loads(got)["rows"][0]["end"] is None


def test_story_rows_written_by_the_block_read_as_their_dicts() -> None:
    """The story rows' JSON by one json.dumps of their values, cut and named, is the text of their
    dicts (a row with alerts by its dict); a figure that is none of a story row's is the dicts' to write."""
    packed = session_page_data.load_model(str(S258), now=1.8e9, packed=True)
    plain = session_page_data.load_model(str(S258), now=1.8e9)
    story = packed["story"]
    quiet = [r for r in story if not r[10]]
    loud = [r for r in story if r[10]]
    assert len(quiet) > 100
    assert loud  # the session's alerts
    assert session_page_data.story_json(quiet) == [
        json.dumps(session_page_data.story_dict(r), separators=(",", ":")) for r in quiet]
    mixed = quiet[:3] + loud[:2] + quiet[3:5]
    assert session_page_data.story_json(mixed) == [
        json.dumps(session_page_data.story_dict(r), separators=(",", ":")) for r in mixed]
    assert session_page_data.story_json([(*quiet[0][:6], "a,b", *quiet[0][7:])]) is None
    assert "".join(session_page.model_json(packed)) == json.dumps(clean_data(plain), separators=(",", ":"),
                                                                 allow_nan=False)


@pytest.mark.parametrize("command", [
    "ls -la", "x" * 5000, "word " * 2000, "a" + " " * 5000 + "tail words", ("w" * 119 + " ") + "z" * 5000,
    "  lead\tand\nbreaks " * 400, ("w" * 121 + " ") * 40, "é " * 3000,
    "w" * 239 + " tail", " " * 300 + "word", "ab " * 80 + "c" * 300, "a  " * 100 + "b" * 5000, "x " * 59 + "y" * 200,
])
def test_a_long_commands_label_is_read_from_its_head(command: str) -> None:
    """A tool call's label, read from the first words of its text, is the label of its whole text."""
    from session_watcher.agents.claude_code.records import Input

    label, path = session_page_data._summary("Bash", Input(command=command), "/w")
    assert path is None
    assert label == " ".join(command.split())[:120]


def test_the_lines_between_two_offsets_are_the_lines_found_from_the_start() -> None:
    """`marked_lines` from a line's start finds the lines the whole search finds from there on."""
    from session_watcher.core import markscan

    chunk = b"".join(b'{"type":"%s","n":%d}\n' % (kind, i)
                     for i, kind in enumerate([b"user", b"progress", b"assistant", b"x\\u0041", b"system"] * 40))
    finders = session_page_data._RECORD_FINDERS
    whole = list(markscan.marked_lines(chunk, finders, len(chunk)))
    starts = [0, *(i + 1 for i, c in enumerate(chunk) if c == ord("\n"))]
    for begin in starts[::7]:
        assert list(markscan.marked_lines(chunk, finders, len(chunk), begin)) == [w for w in whole if w[0] >= begin]


class RowTrace(session_page_data.StoryTrace):
    """The page's trace as it was: a `story_document` row a call (`append`), no `called`."""

    called = None  # type: ignore[assignment]


@pytest.mark.parametrize("path", [S258, FIXTURES / "transcripts" / "ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl",
                                  FIXTURES / "transcripts" / "fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl",
                                  FIXTURES / "codex" / "rollout-019f8c04-f40a-75a1-80a3-75c564780b42.jsonl"])
def test_the_story_made_from_the_folds_figures_is_the_rows(path: Path) -> None:
    """`StoryTrace.called` (the figures without a row) keeps what `append` kept of `story_document`'s
    rows: the same story rows, calls, lamp thresholds and automatic compactions, each with the client's
    point after the call before it (priced there only)."""
    fast, rows = session_page_data.StoryTrace(), RowTrace()
    fold(str(path), trace=fast)
    fold(str(path), trace=rows)
    assert len(fast) > 10
    assert list(fast) == list(rows)
    assert fast.calls == rows.calls
    assert fast.lamp_at == rows.lamp_at
    assert fast.autos.autos == rows.autos.autos


def test_a_compaction_reads_the_point_after_the_call_before_it() -> None:
    """258c7280's automatic compactions come with the client's point after the call before each; the
    trace prices it there, from the figures as they were after that call (not as the fold stands)."""
    fast, rows = session_page_data.StoryTrace(), RowTrace()
    fold(str(S258), trace=fast)
    fold(str(S258), trace=rows)
    assert fast.autos.autos  # the session compacts on its own
    assert fast.autos.autos == rows.autos.autos


@pytest.mark.parametrize("back", [1, 0])
def test_a_live_page_keeps_the_point_of_a_call_folded_before_the_append(tmp_path: Path, back: int) -> None:
    """The live page folds what was appended (`live_view._Story`): where the append begins at the
    automatic compaction (`back` 0) or on the line before it, the call before the compaction was folded
    by the read before, and the compaction reached in the next read is priced from that call's figures
    (`StoryTrace` keeps them between folds): the same compactions, with the client's point, as one fold
    of the whole transcript (a point lost between folds is the tokens before the compaction)."""
    from session_watcher.reports import live_view

    lines = S258.read_bytes().splitlines(keepends=True)
    cut = next(i for i, ln in enumerate(lines) if b"compact_boundary" in ln) - back
    whole = RowTrace()
    fold(str(S258), trace=whole)
    (auto,) = whole.autos.autos.values()
    assert auto.point < auto.pre  # the client's point, not the tokens before
    tr = tmp_path / S258.name
    tr.write_bytes(b"".join(lines[:cut]))
    story = live_view._Story(str(tr))
    assert story.advance()[2] is None
    assert not story.trace.autos.autos
    with tr.open("ab") as fh:
        fh.write(b"".join(lines[cut:]))
    _doc, trace, error = story.advance()
    assert error is None
    assert trace is not None
    assert trace.autos.autos == whole.autos.autos
    assert list(trace) == list(whole)
    assert trace.calls == whole.calls
