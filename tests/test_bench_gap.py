"""bench.gap's best schedule within a set of allowed restarts: exact, and the backtest's own when every
point is allowed (a real session's calls, priced as the backtest prices them)."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from bench import calibrate as cal
from bench.gap import best_within, sayable
from session_watcher.core import backtest as bt

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "transcripts" / "ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"


@pytest.fixture(scope="module")
def session() -> cal.Session:
    return cal.prepare(FIXTURE)


def test_every_point_allowed_is_the_best_schedule(session: cal.Session) -> None:
    for seg in session.segs:
        saving, restarts = best_within(seg, set(range(len(seg.calls))))
        assert restarts == seg.best()[0]
        assert saving == pytest.approx(cal.usd(seg, []) - cal.usd(seg, seg.best()[0]), abs=1e-9)


def test_no_point_allowed_saves_nothing(session: cal.Session) -> None:
    seg = max(session.segs, key=lambda s: len(s.calls))
    saving, restarts = best_within(seg, set())
    assert saving == pytest.approx(0.0, abs=1e-12)
    assert restarts == []


def test_exact_against_every_subset(session: cal.Session) -> None:
    seg0 = max(session.segs, key=lambda s: len(s.calls))
    for start in (0, 40, 80):
        seg = bt.Segment(seg0.calls[start:start + 10], seg0.shared)
        allowed = {1, 3, 4, 6, 7}
        brute = max(cal.usd(seg, []) - cal.usd(seg, list(sub))
                    for n in range(len(allowed) + 1) for sub in itertools.combinations(sorted(allowed), n))
        saving, restarts = best_within(seg, allowed)
        assert set(restarts) <= allowed
        assert saving == pytest.approx(brute, abs=1e-9)
        assert saving == pytest.approx(cal.usd(seg, []) - cal.usd(seg, restarts), abs=1e-9)


def test_sayable_holds_every_call_the_advice_spoke_after(session: cal.Session) -> None:
    """`sayable` marks the calls after which the real session's priced saving clears the advice floor
    (`engine.worth_saying`): every gate the real fold gave is after one (the gate speaks only there),
    and so is the call before every cold return it advised on; the floor keeps others out; the
    window is replay's."""
    ok, window = sayable(session)
    calls = session.seen.calls
    assert len(ok) == len(calls)
    gates = [i for i, c in enumerate(calls) if c.gate]
    assert gates
    assert all(ok[i] for i in gates)
    assert all(ok[i - 1] for i, c in enumerate(calls) if c.guard and i)
    assert 0 < sum(ok) < len(ok)
    assert window == 200_000
