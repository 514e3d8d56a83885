"""The session page's marks from the files beside the states: the guard's holds (its log) and the
restarts taken with a handoff (the taken records), read for the one session the page shows."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from session_watcher.base import paths
from session_watcher.reports.session_page_data import load_model
from session_watcher.state import handoffs

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts"
S258 = "258c7280-ae70-4798-800f-63464d01a85d"


def plant(t0: float) -> None:
    """A guard log with this session's two cold prompts (one held, one said) and another session's,
    and a fresh session that took this one's handoff; a taken handoff of another parent."""
    os.makedirs(paths.state_dir(), exist_ok=True)
    with open(paths.guard_log_file(), "w", encoding="utf-8") as f:
        for rec in ({"ts": t0 + 900, "sessionId": S258, "asked": True, "call": 40},
                    {"ts": t0 + 600, "sessionId": S258, "asked": False, "call": 30},
                    {"ts": t0 + 700, "sessionId": "other", "asked": True, "call": 3}):
            f.write(json.dumps(rec) + "\n")
        f.write("not json\n")
    for child, parent, at in (("child-1", S258, t0 + 1800), ("child-2", "other", t0 + 100)):
        os.makedirs(handoffs.folder("taken"), exist_ok=True)
        Path(handoffs.taken_file(child)).write_text(json.dumps(
            {"version": handoffs.VERSION, "parentSession": parent, "createdAt": at, "note": "n", "project": "/p"}))


def test_the_page_model_has_this_sessions_holds_and_restarts() -> None:
    """Only this session's, in time order, with whether the prompt was held."""
    t0 = load_model(str(FIXTURES / f"{S258}.jsonl"), with_story=False)["t0"]
    plant(t0)
    model = load_model(str(FIXTURES / f"{S258}.jsonl"), with_story=False)
    assert model["holds"] == [{"ts": t0 + 600, "call": 30, "asked": False}, {"ts": t0 + 900, "call": 40, "asked": True}]
    assert model["restarts"] == [{"ts": t0 + 1800, "kind": "out", "other": "child-1"}]


def test_a_story_alert_keeps_the_cold_returns_gap() -> None:
    """The trace's alerts keep what the page says of a cold return: its gap and what it re-wrote."""
    from session_watcher.reports.session_page_data import StoryTrace, story_dict

    story = StoryTrace()
    story.append({"ts": 1.0, "call": 5, "alerts": [{"kind": "guard", "reminder": 0, "gap": 1200.0, "rewrite": 9000}]})
    assert story_dict(story[0])["alerts"] == [{"kind": "guard", "reminder": 0, "gap": 1200.0, "rewrite": 9000,
                                   "gapText": "20 min"}]


_OPENED: list[str] = []  # the paths opened or listed while a test watches (WATCHING)
_WATCHING: list[bool] = []


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if _WATCHING and event in ("open", "os.listdir", "os.scandir") and args and isinstance(args[0], str | bytes):
        _OPENED.append(os.fsdecode(args[0]))


sys.addaudithook(_audit)  # an audit hook stays for the process: it records only while a test watches


def test_the_live_page_reads_the_guard_log_and_handoffs_only_when_they_change(tmp_path: Path) -> None:
    """Each transcript change refreshes the live page; the guard log and the taken handoffs are read
    again only after their file (the log, the handoffs' folder) changed, and the page then has the
    new hold and the new restart."""
    from session_watcher.reports import live_view

    src = FIXTURES / f"{S258}.jsonl"
    t0 = load_model(str(src), with_story=False)["t0"]
    plant(t0)
    lines = src.read_bytes().splitlines(keepends=True)
    cuts = [len(lines) * k // 4 for k in range(5)]
    tr = tmp_path / src.name
    tr.write_bytes(b"".join(lines[:cuts[1]]))
    log, taken = paths.guard_log_file(), handoffs.folder("taken")

    def reads() -> tuple[int, int]:
        return (sum(p == log for p in _OPENED), sum(p == taken or p.startswith(taken + os.sep) for p in _OPENED))

    def grow(part: int) -> dict[str, Any]:
        with tr.open("ab") as fh:
            fh.write(b"".join(lines[cuts[part]:cuts[part + 1]]))
        return source.current().model

    source = live_view._Source(str(tr))
    _WATCHING.append(True)
    try:
        first = source.current().model
        once = reads()
        assert once[0] == 1
        assert once[1] >= 1
        assert grow(1)["holds"] == first["holds"]
        assert reads() == once  # the transcript changed, the guard log and the handoffs did not
        _WATCHING.clear()  # the test's own writes are not the page's reads
        with open(log, "a", encoding="utf-8") as f:
            f.write(json.dumps({"ts": t0 + 1000, "sessionId": S258, "asked": True, "call": 45}) + "\n")
        _WATCHING.append(True)
        model = grow(2)
        assert reads() == (2, once[1])
        assert [h["call"] for h in model["holds"]] == [30, 40, 45]
        _WATCHING.clear()
        Path(handoffs.taken_file("child-3")).write_text(json.dumps(
            {"version": handoffs.VERSION, "parentSession": S258, "createdAt": t0 + 2000, "note": "n", "project": "/p"}))
        _WATCHING.append(True)
        model = grow(3)
        assert reads()[0] == 2
        assert reads()[1] > once[1]
        assert [r["other"] for r in model["restarts"]] == ["child-1", "child-3"]
    finally:
        _WATCHING.clear()

