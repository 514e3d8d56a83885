"""The session page's marks from the files beside the states: the guard's holds (its log) and the
restarts taken with a handoff (the taken records), read for the one session the page shows."""

from __future__ import annotations

import json
import os
from pathlib import Path

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
    from session_watcher.reports.session_page_data import StoryTrace

    story = StoryTrace()
    story.append({"ts": 1.0, "call": 5, "alerts": [{"kind": "guard", "reminder": 0, "gap": 1200.0, "rewrite": 9000}]})
    assert story[0]["alerts"] == [{"kind": "guard", "reminder": 0, "gap": 1200.0, "rewrite": 9000}]
