"""`report`'s days and weeks are the user's calendar days in their own zone, daylight saving included:
a call at 00:30 on a summer night in Berlin is that day's, though the report runs in winter (+1 h)."""

from __future__ import annotations

import calendar
import json
import time
from typing import TYPE_CHECKING

import pytest

from bench.synth import Transcript
from session_watcher.reports.collect import run_report_json

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path


@pytest.fixture
def berlin(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("TZ", "Europe/Berlin")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def _session(folder: Path, sid: str, at: float) -> None:
    t = Transcript(session_id=sid, cwd="/proj")
    t.user("go", at=at)
    t.call(cr=20_000, cw=2_000)
    t.call(cr=22_000, cw=500)
    t.save(folder / f"{sid}.jsonl")


def _utc(text: str) -> float:
    return float(calendar.timegm(time.strptime(text, "%Y-%m-%dT%H:%M")))


def test_days_and_weeks_follow_daylight_saving(tmp_path: Path, berlin: None) -> None:
    proj = tmp_path / "projects" / "-proj"
    proj.mkdir(parents=True)
    _session(proj, "winter", _utc("2026-01-09T22:30"))  # 23:30 on the 9th in Berlin (+1 h)
    _session(proj, "summer", _utc("2026-07-09T22:30"))  # 00:30 on the 10th in Berlin (+2 h)
    _session(proj, "spring", _utc("2026-03-29T22:10"))  # 00:10 on Monday the 30th, after the change
    db = str(tmp_path / "index.db")
    for k, now in enumerate((_utc("2026-12-06T04:00"), _utc("2027-04-01T04:00"))):  # in winter, then summer
        doc = json.loads(run_report_json([str(tmp_path / "projects")], db, now=now))
        assert doc["index"]["cached"] is bool(k), "a change of season keeps the cache (it rebuilt it cold)"
        days = [d["date"] for d in doc["totals"]["days"]]
        assert days == ["2026-01-09", "2026-03-30", "2026-07-10"], days
        weeks = [w["week"] for w in doc["totals"]["weeks"]]
        assert weeks == ["2026-01-05", "2026-03-30", "2026-07-06"], weeks
