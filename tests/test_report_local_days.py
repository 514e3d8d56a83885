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


def _zone(monkeypatch: pytest.MonkeyPatch, tz: str) -> None:
    monkeypatch.setenv("TZ", tz)
    time.tzset()


@pytest.fixture
def restore_zone(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    yield monkeypatch
    monkeypatch.undo()
    time.tzset()


def test_a_zone_changed_in_the_process_books_by_the_new_zone(tmp_path: Path,
                                                               restore_zone: pytest.MonkeyPatch) -> None:
    """A process whose zone changes (a test, a long-lived server after `tzset`) books its next report's
    calls by the new zone: the memos of the old one were cleared only after the changed sessions were
    summarized, so a call in an hour the old zone had seen took the old zone's day."""
    for k, (tz, sid) in enumerate((("Europe/Berlin", "before"), ("UTC", "after"))):
        _zone(restore_zone, tz)
        proj = tmp_path / f"p{k}" / "-proj"
        proj.mkdir(parents=True)
        _session(proj, sid, _utc("2026-07-09T22:30"))  # the 10th in Berlin, the 9th in UTC
        if k:
            _session(proj, "noon", _utc("2026-07-09T12:00"))  # the 9th either way
        doc = json.loads(run_report_json([str(tmp_path / f"p{k}")], str(tmp_path / f"i{k}.db"),
                                         now=_utc("2026-12-06T04:00")))
        days = [(d["date"], d["sessions"]) for d in doc["totals"]["days"]]
        assert days == ([("2026-07-10", 1)] if not k else [("2026-07-09", 2)]), (tz, days)


def test_offsets_that_change_off_the_hour_at_midnight(tmp_path: Path, restore_zone: pytest.MonkeyPatch) -> None:
    """A zone half an hour off UTC whose clocks change at midnight (Iran's rule until 2022, as a POSIX
    rule here so no zone files are needed): the offset is not the same for a whole UTC hour, so the
    hour's first offset booked the call at 23:15 on the night the clocks go back on the next day."""
    _zone(restore_zone, "XST-3:30XDT,J80/0,J264/0")  # +3:30, +4:30 from March 21 to September 21
    proj = tmp_path / "projects" / "-proj"
    proj.mkdir(parents=True)
    _session(proj, "autumn", _utc("2026-09-20T19:45"))  # 00:00 DST on the 21st is 19:30 UTC: 23:15 on the 20th
    _session(proj, "spring", _utc("2026-03-20T20:45"))  # 00:00 standard is 20:30 UTC: 01:15 on the 21st
    db = str(tmp_path / "i.db")
    doc = json.loads(run_report_json([str(tmp_path / "projects")], db, now=_utc("2026-12-06T04:00")))
    days = [d["date"] for d in doc["totals"]["days"]]
    assert days == ["2026-03-21", "2026-09-20"], days


def test_two_zones_alike_in_name_and_offsets_keep_apart(tmp_path: Path, restore_zone: pytest.MonkeyPatch) -> None:
    """Zones with the same names and offsets but other dates of change (Cairo and Athens, both EET and
    EEST; Almaty and Aqtau; Asuncion and Buenos Aires) are other days: the cache, keyed by the names
    and offsets alone, gave the second zone the first one's report."""
    proj = tmp_path / "projects" / "-proj"
    proj.mkdir(parents=True)
    _session(proj, "april", _utc("2026-04-10T21:30"))  # 00:30 on the 11th in Athens, 23:30 on the 10th in Cairo
    db = str(tmp_path / "i.db")
    for tz, day in (("EET-2EEST,M3.5.0/3,M10.5.0/4", "2026-04-11"), ("EET-2EEST,M4.5.5/0,M10.5.4/24", "2026-04-10")):
        _zone(restore_zone, tz)
        doc = json.loads(run_report_json([str(tmp_path / "projects")], db, now=_utc("2026-12-06T04:00")))
        assert [d["date"] for d in doc["totals"]["days"]] == [day], tz


@pytest.mark.parametrize("zone", ["Europe/Berlin", "Asia/Kolkata", "America/St_Johns", "Australia/Lord_Howe",
                                  "America/Sao_Paulo", "UTC"])
def test_an_hours_day_is_each_of_its_moments_day(monkeypatch: pytest.MonkeyPatch, zone: str) -> None:
    """`fmt.hour_day` (what a session's walk books its calls by, one lookup per hour) is `local_day`
    of every moment of the hour, or None; across the year's clock changes, in zones whose offset is
    not whole hours (Kolkata +5:30, St John's -3:30, Lord Howe's half-hour daylight saving), and for
    fixed offsets."""
    from session_watcher.reports import fmt

    monkeypatch.setenv("TZ", zone)
    time.tzset()
    try:
        fmt.zone_key(None)  # the memos are the zone's
        start = int(_utc("2026-01-01T00:00")) // 3600
        whole = 0
        for hour in range(start, start + 366 * 24, 5):  # every fifth hour of a year: each hour of the day
            for offset in (None, 3600.0, -5 * 3600, 19800.0):
                day = fmt.hour_day(hour, offset)
                moments = [hour * 3600 + s for s in (0, 0.001, 1799.5, 3599, 3599.999)]
                if day is None:
                    assert (offset is not None and offset % 3600) or offset is None
                    continue
                whole += 1
                assert [fmt.local_day(ts, offset) for ts in moments] == [day] * len(moments), (hour, offset)
        assert whole > 366 * 24 // 5 * 2  # the whole hours' offsets, and a zone's, answered
    finally:
        monkeypatch.undo()
        time.tzset()
        fmt.zone_key(None)
