"""`SESSION_WATCHER_TRACE`: the rows the live folds make, each call's once, to be compared with
`replay --trace` (tests/test_live_equals_replay.py). A session started again from its transcript
(the transcript rewritten under the cursor, a damaged state) folds every call again: those rows were
appended to the trace again, the whole session's a second time. Now the rows of calls the saved state
had folded, and so traced, are not appended again; calls made after a rewind (new calls at the
numbers the discarded ones had) are. Real hook processes on real files."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from session_watcher.sessions.replay import replay
from session_watcher.state import reader
from tests.oracle import hook, payload
from tests.statefile import load_state, state_file
from tests.test_notifier_throttle import overstaying
from tests.test_reset_seen import _rewrite_in_place

pytestmark = pytest.mark.slow  # starts processes (tests/conftest.py: the quick tier)

SID = "traced"
KEYS = ("call", "segment", "L", "x", "g", "lamp", "saving")


def _upto(lines: list[bytes], calls: int) -> bytes:
    """The transcript's first `calls` calls (a call line, then a user line and a call line each)."""
    return b"".join(lines[:1 + 2 * (calls - 1)])


class Traced:
    def __init__(self, tmp_path: Path) -> None:
        cfg = Path(os.environ["SESSION_WATCHER_HOME"]) / "config" / "config.toml"
        cfg.parent.mkdir(parents=True, exist_ok=True)
        cfg.write_text('guard = "off"\n[notify]\nchannels = ["message"]\nfallback = "none"\n')
        self.transcript = tmp_path / f"{SID}.jsonl"
        self.trace = tmp_path / "trace.jsonl"
        self.env = {**os.environ, "SESSION_WATCHER_TRACE": str(self.trace)}
        self.lines = overstaying(tmp_path, SID, calls=40)

    def fold(self) -> None:
        """Hooks until the state has read the whole transcript (a run folds for a bounded time)."""
        for _ in range(50):
            got = hook("PostToolUse", payload(SID, self.transcript, "PostToolUse"), env=self.env)
            assert (got.returncode, got.stderr) == (0, b"")
            if (load_state(SID).get("cursor") or {}).get("offset") == self.transcript.stat().st_size:
                return
        raise AssertionError("not folded to its end after 50 runs")

    def rows(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.trace.read_text().splitlines()]

    def calls(self) -> list[int]:
        return [r["call"] for r in self.rows()]


def test_a_rebuild_traces_no_call_twice(tmp_path: Path) -> None:
    t = Traced(tmp_path)
    t.transcript.write_bytes(_upto(t.lines, 20))
    t.fold()
    assert t.calls() == list(range(1, 21))

    _rewrite_in_place(t.transcript)  # the cursor's hash no longer fits: the state starts again
    doc = json.loads(state_file(SID).read_bytes())
    doc["bad"] = 99  # a mark a rebuild drops: that it did start again
    state_file(SID).write_text(json.dumps(doc))
    t.fold()
    assert load_state(SID)["bad"] == 0
    assert t.calls() == list(range(1, 21))  # before: 1..20 twice

    with t.transcript.open("ab") as fh:  # the session goes on: its new calls are traced
        fh.write(_upto(t.lines, 30)[len(_upto(t.lines, 20)):])
    t.fold()
    assert t.calls() == list(range(1, 31))
    _doc, want = replay(str(t.transcript))
    assert [{k: r[k] for k in KEYS} for r in t.rows()] == [{k: r[k] for k in KEYS} for r in want]

    doc = json.loads(state_file(SID).read_bytes())
    doc["cursor"] = None  # a damaged state (state.store.damage): quarantined, started again
    state_file(SID).write_text(json.dumps(doc))
    t.fold()
    assert load_state(SID)["engine"]["calls"] == 30
    assert t.calls() == list(range(1, 31))


def test_after_a_rewind_the_new_calls_are_traced(tmp_path: Path) -> None:
    """The transcript shrunk to its first 10 calls: the fold from the start traces nothing (those
    calls were traced); the calls made after it, at numbers 11 on, are new calls and are traced."""
    t = Traced(tmp_path)
    t.transcript.write_bytes(_upto(t.lines, 20))
    t.fold()
    t.transcript.write_bytes(_upto(t.lines, 10))
    t.fold()
    assert load_state(SID)["engine"]["calls"] == 10
    assert t.calls() == list(range(1, 21))
    t.transcript.write_bytes(_upto(t.lines, 25))
    t.fold()
    assert t.calls() == list(range(1, 21)) + list(range(11, 26))



def _budgeted(t: Traced) -> int:
    """Hooks, in this process, each folding one read (a few lines: MAX_LINES) before its budget is
    over, until one has read the transcript to its end; how many ran."""
    from session_watcher.hooks.run import run

    for n in range(1, 200):
        run("PostToolUse", json.dumps(payload(SID, t.transcript, "PostToolUse")).encode())
        if (load_state(SID).get("cursor") or {}).get("offset") == t.transcript.stat().st_size:
            return n
    raise AssertionError("not folded to its end after 200 runs")


def test_a_rebuild_over_several_runs_traces_no_call_twice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A long transcript's fold from the start takes several hook runs (each stops at its budget, as
    a session of a few MB does). Its first run left out the rows of the calls the saved state had
    folded; the runs after it, their state's count of calls below the saved one, traced the rest of
    them again (10,324 of 20,000 calls twice). A rewind re-folded over several runs: the calls made
    after it are new calls, traced."""
    from session_watcher.hooks import run

    t = Traced(tmp_path)
    monkeypatch.setenv("SESSION_WATCHER_TRACE", str(t.trace))
    monkeypatch.setattr(run, "FOLD_BUDGET", -1.0)  # over once a read is folded
    monkeypatch.setattr(reader, "MAX_LINES", 6)  # a read hands on 6 lines (3 calls)
    t.transcript.write_bytes(_upto(t.lines, 30))
    assert _budgeted(t) > 3
    assert t.calls() == list(range(1, 31))

    _rewrite_in_place(t.transcript)  # the cursor's hash no longer fits: the state starts again
    assert _budgeted(t) > 3
    assert load_state(SID)["engine"]["calls"] == 30
    assert t.calls() == list(range(1, 31))  # before: 1..30, then 4..30 again

    doc = json.loads(state_file(SID).read_bytes())
    doc["cursor"] = None  # a damaged state (state.store.damage): quarantined, started again
    state_file(SID).write_text(json.dumps(doc))
    assert _budgeted(t) > 3
    assert t.calls() == list(range(1, 31))
    assert "traced" not in load_state(SID)

    t.transcript.write_bytes(_upto(t.lines, 20))  # rewound: its calls 21 on are gone
    assert _budgeted(t) > 3
    assert load_state(SID)["engine"]["calls"] == 20
    assert "traced" not in load_state(SID)  # the mark of the fold from the start: dropped at the end
    t.transcript.write_bytes(_upto(t.lines, 25))  # new calls at the numbers the discarded ones had
    assert _budgeted(t) > 1
    assert t.calls() == list(range(1, 31)) + list(range(21, 26))


def test_calls_written_while_a_rebuild_folds_are_traced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The transcript rewound to 20 calls of 30, its fold from the start taking several runs; the
    session goes on meanwhile: calls 21-25, at the numbers the discarded ones had, are written before
    the fold has caught up. They were left out (numbered at or below the 30 calls the saved state had
    traced, and the mark held until the fold reached the transcript's end): they are new calls, in bytes
    written after the fold started again, and are traced once, as replay makes them."""
    from session_watcher.hooks import run

    t = Traced(tmp_path)
    monkeypatch.setenv("SESSION_WATCHER_TRACE", str(t.trace))
    monkeypatch.setattr(run, "FOLD_BUDGET", -1.0)  # over once a read is folded
    monkeypatch.setattr(reader, "MAX_LINES", 6)  # a read hands on 6 lines (3 calls)
    t.transcript.write_bytes(_upto(t.lines, 30))
    _budgeted(t)
    assert t.calls() == list(range(1, 31))

    t.transcript.write_bytes(_upto(t.lines, 20))  # rewound: the state starts again from the start
    for _ in range(2):
        run.run("PostToolUse", json.dumps(payload(SID, t.transcript, "PostToolUse")).encode())
    assert load_state(SID)["engine"]["calls"] < 20  # the fold from the start is under way
    assert t.calls() == list(range(1, 31))
    with t.transcript.open("ab") as fh:  # the session goes on before the fold has caught up
        fh.write(_upto(t.lines, 25)[len(_upto(t.lines, 20)):])
    _budgeted(t)
    assert load_state(SID)["engine"]["calls"] == 25
    assert t.calls() == list(range(1, 31)) + list(range(21, 26))  # before: 1..30 only
    assert "traced" not in load_state(SID)
    _doc, want = replay(str(t.transcript))
    assert [{k: r[k] for k in KEYS} for r in t.rows()[30:]] == [{k: r[k] for k in KEYS} for r in want[20:]]

    with t.transcript.open("ab") as fh:  # and on: each new call once
        fh.write(_upto(t.lines, 27)[len(_upto(t.lines, 25)):])
    _budgeted(t)
    assert t.calls() == list(range(1, 31)) + list(range(21, 28))


def test_a_damaged_line_end_mark_is_read_as_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fold from the start under way keeps `tracedTo`, a cursor at the transcript's line end then.
    One without a whole offset (a state edited or damaged: the store does not look inside it) made
    every traced hook run fail on it (KeyError) and the fold never went on; it is read as no mark,
    the line end as the file is now."""
    from session_watcher.hooks import run

    t = Traced(tmp_path)
    monkeypatch.setenv("SESSION_WATCHER_TRACE", str(t.trace))
    monkeypatch.setattr(run, "FOLD_BUDGET", -1.0)  # over once a read is folded
    monkeypatch.setattr(reader, "MAX_LINES", 6)  # a read hands on 6 lines (3 calls)
    t.transcript.write_bytes(_upto(t.lines, 30))
    _budgeted(t)
    t.transcript.write_bytes(_upto(t.lines, 20))  # rewound: the fold from the start takes several runs
    run.run("PostToolUse", json.dumps(payload(SID, t.transcript, "PostToolUse")).encode())
    doc = json.loads(state_file(SID).read_bytes())
    assert doc["traced"] == 30
    for bad in (None, -1, 1.5, "9"):
        doc["tracedTo"].pop("offset", None)
        if bad is not None:
            doc["tracedTo"]["offset"] = bad
        got = reader.line_end(str(t.transcript), doc["tracedTo"])
        assert got is not None
        assert got["offset"] == len(_upto(t.lines, 20))
    del doc["tracedTo"]["offset"]
    state_file(SID).write_text(json.dumps(doc))
    _budgeted(t)
    assert load_state(SID)["engine"]["calls"] == 20
    assert t.calls() == list(range(1, 31))


def test_the_run_that_folds_the_last_line_delivers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each run's budget over once a read is folded (a busy machine, a long backlog): the run whose
    read takes the transcript's last line has caught up, and delivers the alerts still news (queued
    here: an async hook's message waits for the next prompt). Before: it counted as behind, every
    alert stayed pending, and only a later run (the next tool call's) delivered them."""
    from session_watcher.hooks import run

    t = Traced(tmp_path)
    monkeypatch.delenv("SESSION_WATCHER_TRACE", raising=False)
    monkeypatch.setattr(run, "FOLD_BUDGET", -1.0)  # over once a read is folded
    monkeypatch.setattr(reader, "MAX_LINES", 6)  # a read hands on 6 lines (3 calls)
    t.transcript.write_bytes(_upto(t.lines, 32))  # its third alert at call 30: news at the end
    assert _budgeted(t) > 3
    state = load_state(SID)
    alerts = state["alerts"]
    assert [a["kind"] for a in alerts][:1] == ["gate"]
    assert not any(a.get("pending") for a in alerts)
    last = alerts[-1]["call"]
    assert last > state["engine"]["calls"] - run.NEWS_CALLS  # news when the fold got there
    assert len(state["outbox"]) == 1
    assert state["outbox"][0]["alert"]["kind"] in ("gate", "backstop")  # worded when a prompt shows it
    assert "message" in state["outbox"][0]["channels"]
