"""`session-watcher backtest`: the counterfactual restarts priced by hand, on a synthetic session, on a
real fixture against an independent count, and the command as a user runs it."""

from __future__ import annotations

import itertools
import json
import math
import os
import shutil
from typing import TYPE_CHECKING, Any, ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.synth import Transcript
from session_watcher.core import backtest as bt
from session_watcher.core import closedloop
from session_watcher.sessions import backtest as shell
from session_watcher.sessions.replay import replay
from tests.calibration import ADVISOR_SESSION, unpack
from tests.oracle import TRANSCRIPTS, one_message, sw

if TYPE_CHECKING:
    from pathlib import Path

OPUS = "claude-opus-4-6"  # $5/MTok base: cache read $0.50, 5-minute write $6.25, 1-hour write $10
USD_PER_UNIT = 0.5e-6  # one read-price token of this model
W5, W1 = 12.5, 20.0  # write prices in read units


def call(n: int, seg: int, cr: int, cw5m: int = 0, cw1h: int = 0, bd: int | None = None, *,
         gate: bool = False, guard: bool = False, sweet: bool = False) -> bt.Call:
    """A call without uncached input, so T = cr + cw."""
    total = cr + cw5m + cw1h
    return bt.Call(call=n, segment=seg, total=total, b_default=total if bd is None else bd, cr=cr,
                   cw5m=cw5m, cw1h=cw1h, model=OPUS, x=2.0 if sweet else 1.0, x_sweet=1.5,
                   gate=gate, guard=guard)


SHARED = 10_000
# Segment 0, 5-minute writes. Call 4 is a cold return after an idle gap: it reads only the shared
# prefix and re-writes 8,000 tokens of old context (L was 18,000) plus 8,000 new ones.
SEG0 = [
    call(1, 0, 10_000, cw5m=5_000),                                   # T 15,000
    call(2, 0, 15_000, cw5m=3_000, bd=16_000, sweet=True),            # T 18,000
    call(3, 0, 18_000, cw5m=4_000, bd=17_000),                        # T 22,000
    call(4, 0, 10_000, cw5m=16_000, bd=17_000, gate=True, guard=True),  # T 26,000, a miss
    call(5, 0, 26_000, cw5m=2_000),                                   # T 28,000
]
# Segment 1 (after a compaction), 1-hour writes; its last call splits its write 1,000 5m + 3,000 1h.
SEG1 = [
    call(6, 1, 10_000, cw1h=20_000),                       # T 30,000
    call(7, 1, 30_000, cw1h=6_000, bd=31_000, sweet=True),  # T 36,000
    call(8, 1, 36_000, cw5m=1_000, cw1h=3_000, gate=True),  # T 40,000
]


class TestHandWorked:
    """Every figure below is worked out from the literal usage above."""

    actual0 = (10_000 + 5_000 * W5) + (15_000 + 3_000 * W5) + (18_000 + 4_000 * W5) \
        + (10_000 + 16_000 * W5) + (26_000 + 2_000 * W5)  # 454,000
    actual1 = (10_000 + 20_000 * W1) + (30_000 + 6_000 * W1) + (36_000 + 1_000 * W5 + 3_000 * W1)  # 668,500

    # restart after call 3: carry Bd 17,000 + growth 4,000 = 21,000 into call 4 (reads the 10,000 shared,
    # writes 11,000); call 5 carries D = 22,000 - 17,000 = 5,000 fewer: reads 21,000
    after3 = 72_500 + 52_500 + 68_000 + (10_000 + 11_000 * W5) + (21_000 + 2_000 * W5)  # 386,500
    # restart after call 2: carry 16,000 + 4,000 = 20,000 into call 3; D = 2,000. Call 4's re-write of
    # 8,000 shrinks first (to 6,000, cw 14,000) and its cache read stays 10,000; call 5 reads 24,000.
    after2 = 72_500 + 52_500 + (10_000 + 10_000 * W5) + (10_000 + 14_000 * W5) + (24_000 + 2_000 * W5)  # 494,000
    after1 = 72_500 + (10_000 + 8_000 * W5) + 68_000 + 210_000 + 51_000  # D = 0: 511,500
    after4 = 72_500 + 52_500 + 68_000 + 210_000 + (10_000 + 9_000 * W5)  # 525,500
    # segment 1: restart after call 7 carries 31,000 + 4,000 = 35,000 into call 8 at its 1-hour class
    seg1_after7 = 410_000 + 150_000 + (10_000 + 25_000 * W1)  # 1,070,000
    seg1_after6 = 410_000 + (10_000 + 26_000 * W1) + 108_500  # 1,048,500

    def test_each_restart_point_costs_what_the_hand_count_says(self) -> None:
        """The counterfactual per restart point, including the miss whose re-write shrinks first."""
        seg = bt.Segment(SEG0, SHARED)
        assert sum(seg.costs(None)) == self.actual0 == 454_000
        assert [sum(seg.costs(k)) for k in range(4)] == [self.after1, self.after2, self.after3, self.after4]
        assert seg.rewrite == [0, 0, 0, 8_000, 0]
        seg1 = bt.Segment(SEG1, SHARED)
        assert sum(seg1.costs(None)) == self.actual1 == 668_500
        assert [sum(seg1.costs(k)) for k in range(2)] == [self.seg1_after6, self.seg1_after7]

    # two restarts, after calls 3 and 4: call 4 as above (147,500); call 5 is the second fresh call, carrying
    # Bd(4) 17,000 + growth 2,000 = 19,000 (reads 10,000, writes 9,000): 122,500
    after3_4 = 72_500 + 52_500 + 68_000 + 147_500 + (10_000 + 9_000 * W5)  # 463,000
    # after calls 2 and 3: call 3 fresh (135,000), call 4 fresh after call 3 (147,500), call 5 then D(3) = 5,000
    after2_3 = 72_500 + 52_500 + (10_000 + 10_000 * W5) + 147_500 + (21_000 + 2_000 * W5)  # 453,500

    def test_a_schedule_costs_what_its_last_restart_makes_each_call_cost(self) -> None:
        seg = bt.Segment(SEG0, SHARED)
        assert sum(seg.schedule_costs([2, 3])) == self.after3_4 == 463_000
        assert sum(seg.schedule_costs([1, 2])) == self.after2_3 == 453_500
        assert seg.schedule_costs([2]) == seg.costs(2)
        assert seg.schedule_costs([]) == seg.costs(None) == seg.actual
        assert seg.schedule_costs([4, 9, -1]) == seg.actual  # after the last call (or outside): nothing changes

    def test_policies_capture_and_flat_segment(self) -> None:
        """The closed-loop policies' restarts come in (here: the guard before call 4, i.e. after call 3,
        and a sweet spot after calls 2 and 7); the best schedule is the single restart after call 3 (no
        pair of the 15 schedules of segment 0 beats it: the two above cost 463,000 and 453,500); the gate
        on segment 1's last call changes nothing but is an alert in a segment no restart helps."""
        doc = bt.backtest([*SEG0, *SEG1], SHARED, {"alert": [3], "sweetSpot": [2, 7]})
        pol = doc["policies"]
        actual = self.actual0 + self.actual1
        assert pol["actual"]["units"] == actual
        assert pol["actual"]["usd"] == pytest.approx(actual * USD_PER_UNIT)
        assert pol["alert"]["restartsAfter"] == [3]
        assert pol["alert"]["units"] == self.after3 + self.actual1
        for best in ("hindsight", "hindsight1"):
            assert pol[best]["restartsAfter"] == [3]
            assert pol[best]["units"] == self.after3 + self.actual1
        assert pol["sweetSpot"]["restartsAfter"] == [2, 7]
        assert pol["sweetSpot"]["units"] == self.after2 + self.seg1_after7
        saving = self.actual0 - self.after3  # 67,500
        assert pol["hindsight"]["savingUsd"] == pytest.approx(saving * USD_PER_UNIT)
        assert pol["hindsight"]["savingPct"] == pytest.approx(100 * saving / actual, abs=1e-3)
        assert pol["sweetSpot"]["savingPct"] < 0  # the sweet spot of these made-up x values is a bad moment
        assert doc["capture"] == 1.0
        assert doc["restartGaps"] == {"count": 0, "median": None, "min": None}
        s0, s1 = doc["segmentList"]
        assert (s0["alertFired"], s0["alertInFlatSegment"]) == (True, False)
        assert s0["bestSavingPct"] == pytest.approx(100 * saving / self.actual0, abs=1e-3)
        assert (s1["alertFired"], s1["bestSavingPct"], s1["alertInFlatSegment"]) == (True, 0.0, True)
        assert s1["policies"]["hindsight"]["restartsAfter"] == []
        assert doc["alertInFlatSegment"] == 1

    def test_restarts_outside_a_segment_or_after_its_last_call_are_none(self) -> None:
        doc = bt.backtest([*SEG0, *SEG1], SHARED, {"alert": [5, 8, 99], "sweetSpot": []})
        assert doc["policies"]["alert"]["restartsAfter"] == []
        assert doc["policies"]["alert"]["units"] == self.actual0 + self.actual1
        doc = bt.backtest(SEG0, SHARED, {"alert": [1, 3, 4]})
        assert doc["policies"]["alert"]["restartsAfter"] == [1, 3, 4]
        assert doc["restartGaps"] == {"count": 2, "median": 1.5, "min": 1}

    def test_a_best_restart_under_2_percent_has_no_capture(self) -> None:
        """Slow growth: the best restart saves a crumb, so silence is the right advice (no capture to
        score) and an alert there is counted as one in a flat segment."""
        slow = [call(1, 0, 10_000, cw5m=5_000)] + [
            call(n, 0, 15_000 + 100 * (n - 2), cw5m=100, bd=15_000, gate=n == 30) for n in range(2, 51)]
        doc = bt.backtest(slow, SHARED)
        assert 0 < doc["policies"]["hindsight"]["savingPct"] < 2
        assert doc["capture"] is None
        assert doc["segmentList"][0]["capture"] is None
        assert doc["alertInFlatSegment"] == 1
        assert bt.totals([doc])["captureMedian"] is None

    def test_an_unpriced_model_keeps_read_units_and_no_dollars(self) -> None:
        doc = bt.backtest([c._replace(model="claude-nonesuch-9") for c in SEG0], SHARED, {"alert": [3]})
        assert not doc["priced"]
        assert doc["policies"]["actual"]["usd"] is None
        assert doc["policies"]["actual"]["units"] == self.actual0  # read multiplier 0.1 as for the table
        assert doc["policies"]["hindsight"]["savingUnits"] == self.actual0 - self.after3
        assert doc["capture"] == 1.0

    def test_trace_rows_become_calls(self) -> None:
        row = {"call": 4, "segment": 0, "bDefault": 17_000, "x": 1.9, "xSweet": 1.7, "g": 100.0, "lamp": "amber",
               "model": "m", "alerts": [{"kind": "guard"}, {"kind": "backstop"}],
               "usage": {"model": OPUS, "in": 3, "cr": 10_000, "cw": 16_000, "cw5m": 0, "cw1h": 6_000}}
        c = bt.call_from_trace(row)
        assert (c.total, c.cr, c.cw5m, c.cw1h, c.model) == (26_003, 10_000, 10_000, 6_000, OPUS)
        assert (c.guard, c.gate, c.b_default, c.lamp) == (True, False, 17_000, "amber")
        assert bt.shared_prefix({"shared": 12_345}, [c]) == 12_345
        assert bt.shared_prefix({}, [c]) == 10_000


calls_st = st.lists(
    st.tuples(st.integers(0, 300_000), st.integers(0, 40_000), st.integers(0, 40_000), st.integers(0, 300_000),
              st.sampled_from([OPUS, "claude-haiku-4-5", "claude-nonesuch-9"])),
    min_size=1, max_size=40)


@given(calls_st, st.integers(0, 50_000))
@settings(max_examples=300, deadline=None)
def test_one_pass_values_equal_pricing_each_restart(rows: list[tuple[int, int, int, int, str]], shared: int) -> None:
    """The fast scan behind `hindsight` gives what pricing each restart call by call gives, misses,
    reads below D, mixed TTL classes and models included."""
    calls = [bt.Call(i + 1, 0, cr + w5 + w1, bd, cr, w5, w1, model)
             for i, (cr, w5, w1, bd, model) in enumerate(rows)]
    seg = bt.Segment(calls, shared)
    slow = [seg.value(k) for k in range(len(seg.calls) - 1)]
    assert seg.values() == pytest.approx(slow, rel=1e-9, abs=1e-9)


segment_st = st.lists(
    st.tuples(st.integers(0, 60_000), st.integers(0, 20_000), st.integers(0, 20_000), st.integers(0, 60_000),
              st.sampled_from([OPUS, OPUS, OPUS, "claude-haiku-4-5", "claude-nonesuch-9"]), st.booleans()),
    min_size=1, max_size=9)


@given(segment_st, st.integers(0, 30_000))
@settings(max_examples=400, deadline=None)
def test_best_schedule_is_the_cheapest_of_all_schedules(rows: list[tuple[int, int, int, int, str, bool]],
                                                        shared: int) -> None:
    """The dynamic programme against every subset of restart points (up to 2^8 schedules), misses,
    reads below D, mixed TTL classes, models and unpriced calls included."""
    calls = [bt.Call(i + 1, 0, cr + w5 + w1 + 3, bd, cr, w5, 0 if one_hour else w1, model)
             for i, (cr, w5, w1, bd, model, one_hour) in enumerate(rows)]
    seg = bt.Segment(calls, shared)
    w = seg.weights()

    def value(ks: tuple[int, ...]) -> float:
        return math.fsum(c * x for c, x in zip(seg.schedule_costs(ks), w, strict=True))

    points = range(len(calls) - 1)
    cheapest = min(value(ks) for r in range(len(calls)) for ks in itertools.combinations(points, r))
    got = seg.best_schedule()
    assert value(tuple(got)) == pytest.approx(cheapest, rel=1e-9, abs=1e-12)
    assert got == sorted(set(got))
    if got:
        assert value(tuple(got)) < value(())
    one = seg.best_point()
    assert value(tuple(got)) <= value(() if one is None else (one,)) + 1e-12


class TestStability:
    def test_lamp_changes_xsweet_moves_and_g_floor(self) -> None:
        lamps = ["white", "green", "green", "amber", "amber", "green"] + ["green"] * 14
        xs = [2.0, 2.2, 2.2, 1.1] + [1.1] * 16  # moves 10 %, 0 %, 50 %, then 0
        gs = [500.0] * 10 + [100.0, 100.0, 900.0, 100.0] + [800.0] * 6  # 3 of the 10 late calls at the floor
        calls = [bt.Call(i + 1, 0, 1000, 1000, 1000, 0, 0, OPUS, 1.0, xs[i], gs[i], lamps[i]) for i in range(20)]
        st = bt.stability(calls)
        assert st["lampChanges"] == 3
        assert st["callsPerLampChange"] == pytest.approx(20 / 3, abs=0.01)
        moves = sorted([0.1, 0.0, 0.5] + [0.0] * 16)
        assert st["xSweetMoveP95"] == pytest.approx(bt.percentile(moves, 95), abs=1e-4)
        assert st["xSweetMoveP95"] == pytest.approx(0.1 + (0.5 - 0.1) * (0.95 * 18 - 17), abs=1e-4)
        assert (st["gFloorShare"], st["gFloorCalls"], st["lateCalls"]) == (0.3, 3, 10)

    def test_xsweet_moves_stop_at_a_segment_boundary(self) -> None:
        calls = [bt.Call(1, 0, 1, 1, 1, 0, 0, OPUS, 1.0, 2.0), bt.Call(2, 1, 1, 1, 1, 0, 0, OPUS, 1.0, 4.0)]
        assert bt.stability(calls)["xSweetMoveP95"] is None

    def test_percentile(self) -> None:
        assert bt.percentile([], 95) is None
        assert bt.percentile([3.0], 95) == 3.0
        assert bt.percentile([1.0, 2.0, 3.0, 4.0, 5.0], 50) == 3.0
        assert bt.percentile([0.0, 10.0], 95) == pytest.approx(9.5)


# ----------------------------------------------------------------------------- replayed sessions

def backtest_file(path: Path | str, **setting: Any) -> dict[str, Any]:
    """The closed-loop backtest of a transcript, as the command runs it (`setting`: config keys)."""
    from session_watcher.base import config

    return shell.session_doc(shell.load(str(path)), config.merge(setting))


def constant_growth(tmp_path: Path, calls: int, base: int = 20_000, g: int = 1_000) -> Path:
    """A session that writes its first prompt (nothing shared) and then grows by `g` every call."""
    t = Transcript(cwd=str(tmp_path / "no-such-project"))
    t.call(0, cw=base)
    for i in range(1, calls):
        t.call(base + (i - 1) * g, cw=g)
    return t.save(tmp_path / "constant.jsonl")


def test_constant_growth_restarting_at_the_sweet_spot_every_cycle_is_within_2_percent_of_the_best(
        tmp_path: Path) -> None:
    """The EOQ's own case: 240 calls growing by 1,000 from a 20,000 first prompt (5-minute writes,
    nothing shared). A fresh session carries B = 21,000 (the last baseline and one call's growth), so
    xSweet = 1 + sqrt(2 * 12.5 * 1,000 / 21,000) = 2.09 and the optimal cycle is m = dhat * B / g =
    22.9 calls. Restarting whenever x reaches xSweet, in closed loop, lands within 2 % of the best
    schedule (the dynamic programme), about every m calls; restarting twice as often, or half as
    often, or once at the best single point, costs clearly more."""
    path = constant_growth(tmp_path, 240)
    doc = backtest_file(path)
    pol = doc["policies"]
    best = pol["hindsight"]["usd"]
    assert pol["sweetSpot"]["usd"] <= 1.02 * best
    gaps = [b - a for a, b in itertools.pairwise(pol["sweetSpot"]["restartsAfter"])]
    assert len(gaps) >= 8
    assert all(20 <= gap <= 27 for gap in gaps), gaps
    seen = closedloop.observe(*_fold_inputs(path))
    seg = bt.Segment(seen.calls, seen.shared)
    for every in (11, 46):
        usd = seg.total(seg.schedule_costs(range(every, 239, every)))[1]
        assert usd is not None
        assert usd > 1.05 * best
    assert pol["hindsight1"]["usd"] > 1.5 * best
    assert pol["alert"]["usd"] <= 1.05 * best  # the shipped gate follows the sweet spot closely here


def _fold_inputs(path: Path) -> tuple[Any, ...]:
    from session_watcher.base import config

    loaded = shell.load(str(path))
    return loaded.fresh(), loaded.events, config.merge(), loaded.paths


def test_the_real_fold_of_the_backtest_is_replay_s(tmp_path: Path) -> None:
    """`observe` folds the parsed events once with the hooks' fold: call for call it sees what replay's
    trace says (the iterations' session and a compaction's included)."""
    for path in (TRANSCRIPTS / "ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl",
                 unpack(ADVISOR_SESSION, tmp_path)):
        _status, trace = replay(str(path))
        seen = closedloop.observe(*_fold_inputs(path))
        want = bt.calls_from_trace(trace)
        assert len(seen.calls) == len(want) > 100
        for got, row in zip(seen.calls, want, strict=True):
            assert got._replace(x=None, x_sweet=None, g=None) == row._replace(x=None, x_sweet=None, g=None)
            for a, b in ((got.x, row.x), (got.x_sweet, row.x_sweet), (got.g, row.g)):
                assert a == pytest.approx(b, abs=1e-3)
        assert seen.shared == bt.shared_prefix(_status, want)


class TestClosedLoop:
    """A user who follows the advice, on a session worked out by hand.

    The session (5-minute writes, claude-opus-4-6 at $0.50 per million read-price tokens, no files,
    so B = the floor): call 1 reads nothing and writes 20,000 (floor F = 20,000, nothing shared); call
    n >= 2 reads cr(n) = 18,000 + 2,000 n (what call n-1 sent) and writes 2,000, so T(n) = 20,000 +
    2,000 n. Every residual is 2,000 (call 2's over the floor too): g = 2,000. With nothing shared,
    K = 12.5 B and cEff = 12.5.

    Real session: dhat = sqrt(2 * 12.5 * 2,000 / 20,000) = 1.5811, xSweet = 2.5811; x(n) = 0.9 + 0.1 n
    reaches it at call 17 (2.6). mf = 1.5811 / (1 + 1.5811 + 1.25) = 0.41271; bp(17) = mf (r - 1)^2 /
    (2r) with r = 1.6 / 1.5811 = 1.0119: 0.00003, green; bp(18) (r = 1.0752) = 0.00109 >= bp_amber
    0.001: deep water from call 18. rent(n) = (L - B) / (12.5 B) = (n - 1) / 125, so the bill
    progress after call n is (n - 1)^2 / 250: the first bill completes at call 17, one call before
    the dwell: the gate (dwell 1, a bill in the 30 calls before it) fires at call 18. Restart after 18.

    Counterfactual: call 19 is a fresh session's first call, carrying Bd(18) + T(19) - T(18) =
    22,000 (it reads nothing shared and writes it all). Later calls carry D = T(18) - Bd(18) = 36,000
    fewer: call j reads 2,000 j - 18,000 and writes 2,000. The new floor is 22,000 and call 20's
    residual over it is 0, so the growth estimate (a running mean for its first 20 residuals, then
    alpha 0.05) is 17 x 2,000 and a 0: 1,888.9 after call 20, 1,894.7, 1,900 (call 22), then
    2,000 - 100 x 0.95^(j - 22). B' = 22,000: rent'(j) = (2,000 j - 40,000) / 275,000, progress'
    (j - 20)^2 / 275, a bill at call 37; x' = (2,000 j - 18,000) / 22,000 passes xSweet' = 1 +
    sqrt(25 g / 22,000) at call 37 (1.545 against 1.490; call 36: 1.455 < 1.489), bp' there 0.00028,
    at call 38 0.0018: the gate fires at call 38. Restart after 38: D = T(38) - 20,000 = 76,000, call 39
    fresh (22,000 written), calls 40-45 read 2,000 j - 58,000.

    Costs in read units (cr + 12.5 cw): actual 250,000 + sum over n = 2..45 of 43,000 + 2,000 n; the
    advice: calls 1-18 as they were, calls 19 and 39 275,000 each, calls 20-38 2,000 j + 7,000, calls
    40-45 2,000 j - 33,000.
    """

    SETTING: ClassVar[dict[str, Any]] = {"bp_amber": 0.001, "notify_dwell": 1, "bill_lookback": 30,
                                         "guard_x": 1000.0}

    def session(self, tmp_path: Path, calls: int = 45) -> Path:
        t = Transcript(cwd=str(tmp_path / "no-such-project"))
        t.call(0, cw=20_000, inp=0)
        for n in range(2, calls + 1):
            t.call(18_000 + 2_000 * n, cw=2_000, inp=0)
        return t.save(tmp_path / "hand.jsonl")

    def test_every_advice_is_followed_and_priced(self, tmp_path: Path) -> None:
        doc = backtest_file(self.session(tmp_path), **self.SETTING)
        alert = doc["policies"]["alert"]
        assert alert["restartsAfter"] == [18, 38]
        actual = 250_000 + sum(43_000 + 2_000 * n for n in range(2, 46))
        advice = (250_000 + sum(43_000 + 2_000 * n for n in range(2, 19)) + 2 * 275_000
                  + sum(2_000 * j + 7_000 for j in range(20, 39)) + sum(2_000 * j - 33_000 for j in range(40, 46)))
        assert doc["policies"]["actual"]["units"] == actual
        assert alert["units"] == advice
        assert alert["usd"] == pytest.approx(advice * USD_PER_UNIT)
        assert alert["savingPct"] == pytest.approx(100 * (actual - advice) / actual, abs=1e-3)
        assert doc["restartGaps"] == {"count": 1, "median": 20.0, "min": 20}
        # the best schedule is at least as good, and pricing the advice's schedule gives the same
        assert doc["policies"]["hindsight"]["units"] <= advice
        assert doc["capture"] == pytest.approx((actual - advice) / (actual - doc["policies"]["hindsight"]["units"]),
                                               abs=1e-4)

    def test_the_real_session_alone_alerts_once(self, tmp_path: Path) -> None:
        """Without the closed loop (the session as it ran) the gate fires once, at call 18, and the
        lamp stays amber: the later restart comes from the counterfactual session's own fold."""
        from session_watcher.base import config

        path = self.session(tmp_path)
        _status, trace = replay(str(path), cfg=config.merge(self.SETTING))
        assert [(r["call"], a["kind"]) for r in trace for a in r["alerts"]] [:1] == [(18, "gate")]
        assert trace[16]["lamp"] == "green"
        assert trace[17]["lamp"] == "amber"

    def test_a_cold_return_restarts_before_its_call(self, tmp_path: Path) -> None:
        """An idle gap longer than the cache's lifetime before call 10 (x = 1.9 >= guard_x 1.5): the
        advice is to restart before it, i.e. after call 9, and call 10 is the fresh session's first."""
        t = Transcript(cwd=str(tmp_path / "no-such-project"))
        t.call(0, cw=20_000, inp=0)
        for n in range(2, 21):
            if n == 10:
                t.user(at=t.ts + 3_600)  # an hour later: the 5-minute cache is gone
                t.call(0, cw=18_000 + 2_000 * n + 2_000, inp=0)  # re-writes everything
            else:
                t.call(18_000 + 2_000 * n, cw=2_000, inp=0)
        path = t.save(tmp_path / "cold.jsonl")
        doc = backtest_file(path, **{**self.SETTING, "guard_x": 1.5})
        assert doc["policies"]["alert"]["restartsAfter"][0] == 9
        assert doc["segmentList"][0]["alertFired"]
        quiet = backtest_file(path, **{**self.SETTING, "guard_x": 2.5})
        assert 9 not in quiet["policies"]["alert"]["restartsAfter"]


def _usage_calls(path: Path) -> list[dict[str, Any]]:
    """The main chain's API calls straight from the JSONL: one per message id + request id, the last
    usage sample wins, `<synthetic>` records skipped."""
    calls: dict[str, dict[str, Any]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        msg = rec.get("message")
        if rec.get("type") != "assistant" or rec.get("isSidechain") or not isinstance(msg, dict):
            continue
        u = msg.get("usage")
        if not isinstance(u, dict) or msg.get("model") == "<synthetic>":
            continue
        split = u.get("cache_creation") or {}
        cw = u.get("cache_creation_input_tokens") or 0
        w1h = split.get("ephemeral_1h_input_tokens") or 0
        calls[f"{msg['id']}|{rec.get('requestId')}"] = {
            "model": msg["model"], "cr": u.get("cache_read_input_tokens") or 0, "w5m": cw - w1h, "w1h": w1h}
    return list(calls.values())


# base input price per MTok, written out here rather than taken from core.prices
BASE = {"claude-opus-4-6": 5.0, "claude-haiku-4-5-20251001": 1.0}


def test_real_fixture_against_an_independent_count() -> None:
    """ae4a77f8 switches from Opus to Haiku: each call is priced at its own model. The actual cost
    comes from the raw JSONL; the best single restart of each segment from a brute force written here,
    and the best schedule of any number of restarts is at least as good."""
    path = TRANSCRIPTS / "ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"
    doc = backtest_file(path)
    _status, trace = replay(str(path))
    raw = _usage_calls(path)
    assert len(raw) == len(trace) == 217

    def usd(model: str, cr: float, w5m: float, w1h: float) -> float:
        return BASE[model] * (0.1 * cr + 1.25 * w5m + 2.0 * w1h) / 1e6

    actual = sum(usd(c["model"], c["cr"], c["w5m"], c["w1h"]) for c in raw)
    assert doc["policies"]["actual"]["usd"] == pytest.approx(actual, abs=1e-6)
    assert 4.6 < actual < 4.8  # $4.68: 5-minute writes, mostly Opus

    shared = raw[0]["cr"]
    best_total = 0.0
    for seg in sorted({r["segment"] for r in trace}):
        rows = [(r, c) for r, c in zip(trace, raw, strict=True) if r["segment"] == seg]
        costs = [usd(c["model"], c["cr"], c["w5m"], c["w1h"]) for _r, c in rows]
        seg_best = sum(costs)
        big_l = None
        rewrite = []
        for _r, c in rows:  # SPEC's miss rule: cr below the previous L by more than max(1,000, 2 %)
            cw = c["w5m"] + c["w1h"]
            miss = big_l is not None and c["cr"] < big_l - max(1000, 0.02 * big_l)
            rewrite.append(min(cw, big_l - c["cr"]) if miss and big_l is not None else 0)
            big_l = c["cr"] + cw if miss else c["cr"]
        for k in range(len(rows) - 1):
            t_k = rows[k][0]["contextPressure"]["pressureTokens"]
            bd = min(rows[k][0]["bDefault"], t_k)
            r1, c1 = rows[k + 1]
            carry = bd + r1["contextPressure"]["pressureTokens"] - t_k
            one_hour = c1["w1h"] > 0
            cost = sum(costs[: k + 1]) + usd(c1["model"], min(shared, carry),
                                            0 if one_hour else carry - min(shared, carry),
                                            carry - min(shared, carry) if one_hour else 0)
            d = t_k - bd
            for j in range(k + 2, len(rows)):
                c = rows[j][1]
                cut = min(d, rewrite[j])
                cost += usd(c["model"], max(0, c["cr"] - (d - cut)), c["w5m"] - cut, c["w1h"])
            seg_best = min(seg_best, cost)
        best_total += seg_best
    assert doc["policies"]["hindsight1"]["usd"] == pytest.approx(best_total, abs=1e-6)
    assert doc["policies"]["hindsight1"]["savingPct"] > 5
    assert doc["policies"]["hindsight"]["usd"] < doc["policies"]["hindsight1"]["usd"]


# ----------------------------------------------------------------------------- the command

FIXTURE = "fa812bfe-b295-4cca-9c2f-fdf01028cb46"


@pytest.fixture
def machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home whose Claude Code config folder holds one project with a copied fixture session."""
    config = tmp_path / "home" / ".claude"
    project = config / "projects" / "-work-proj"
    project.mkdir(parents=True)
    shutil.copy(TRANSCRIPTS / f"{FIXTURE}.jsonl", project / f"{FIXTURE}.jsonl")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    return project / f"{FIXTURE}.jsonl"


@pytest.mark.slow
def test_command_text_json_and_ids(machine: Path) -> None:
    """Default: every session on the machine; a session id and a path give the same figures; the text
    fits 100 columns."""
    expected = backtest_file(machine)
    proc = sw("backtest")
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout.decode()
    lines = text.splitlines()
    assert lines[0].split()[:3] == ["session", "calls", "cache"]
    assert max(len(line) for line in lines if not line.startswith("restart")) <= 100
    row = next(line for line in lines if line.startswith(FIXTURE[:8]))
    actual = expected["policies"]["actual"]["usd"]
    assert f"${actual:,.2f}" in row
    assert f"{expected['policies']['hindsight']['savingPct']:.1f} %" in row
    assert f"{expected['policies']['alert']['savingPct']:.1f} %" in row
    assert f"{expected['capture']:.2f}" in row
    assert any(line.startswith("total (1)") for line in lines)
    assert any(line.startswith("capture (the advice's saving / the best schedule's): dollars") for line in lines)

    for target in (FIXTURE, str(machine)):
        proc = sw("backtest", "--json", target)
        assert proc.returncode == 0, proc.stderr
        doc = json.loads(proc.stdout)
        assert doc["version"] == 2
        (s,) = doc["sessions"]
        assert s["sessionId"] == FIXTURE
        assert s["transcript"] == str(machine)
        assert s["policies"] == expected["policies"]
        assert set(s["policies"]) == {"actual", "alert", "sweetSpot", "hindsight", "hindsight1"}
        assert s["capture"] == expected["capture"]
        assert s["restartGaps"] == expected["restartGaps"]
        assert s["stability"] == expected["stability"]
        assert doc["total"]["policies"]["actual"]["usd"] == pytest.approx(actual, abs=1e-6)
        assert doc["total"]["captureMedian"] == expected["capture"]
        assert doc["total"]["costMore"] == 0


@pytest.mark.slow
def test_command_errors(machine: Path, tmp_path: Path) -> None:
    proc = sw("backtest", "0000-no-such-session")
    assert proc.returncode == 1
    assert proc.stdout == b""
    err = one_message(proc.stderr.decode())
    assert "no session '0000-no-such-session'" in err
    proc = sw("backtest", str(tmp_path / "missing.jsonl"))
    assert proc.returncode == 1
    assert "missing.jsonl: no such file" in one_message(proc.stderr.decode())


@pytest.mark.slow
def test_command_on_an_empty_machine_says_so(tmp_path: Path) -> None:
    fresh = tmp_path / "home"
    env = {**os.environ, "HOME": str(fresh), "CLAUDE_CONFIG_DIR": str(fresh / ".claude"),
           "XDG_CONFIG_HOME": str(fresh / ".config")}
    proc = sw("backtest", env=env)
    assert proc.returncode == 0
    out = proc.stdout.decode()
    assert out == ("no Claude Code or Codex session with an API call found; no folder of Claude\n"
                   "  Code's or Codex's sessions exists yet\n")  # not four folders that are not there; within 80
    (fresh / ".claude" / "projects").mkdir(parents=True)
    (fresh / ".codex" / "sessions").mkdir(parents=True)
    out = " ".join(sw("backtest", env=env).stdout.decode().split())
    assert out.startswith("no Claude Code or Codex session with an API call found; looked in ")
    assert f"{fresh}/.claude/projects" in out  # where it looked: both agents' folders, those that are there
    assert f"{fresh}/.codex/sessions" in out
    assert "archived_sessions" not in out
    spaced = fresh / "My Claude settings"  # a folder with a space in its name: never broken at it
    (spaced / "projects").mkdir(parents=True)
    lines = sw("backtest", env={**env, "CLAUDE_CONFIG_DIR": str(spaced), "COLUMNS": "40"}).stdout.decode().splitlines()
    assert f"{spaced}/projects" in [line.strip().rstrip(",") for line in lines], lines
    doc = json.loads(sw("backtest", "--json").stdout)
    assert doc["sessions"] == []
    assert doc["total"]["captureMedian"] is None


@pytest.mark.slow
def test_text_escapes_control_characters(tmp_path: Path) -> None:
    """A session id (a file name) with an escape sequence is printed escaped (its first 8 characters,
    the short id `report` names it by)."""
    t = Transcript(cwd=str(tmp_path))
    t.call(1000, cw=500)
    path = t.save(tmp_path / "evil\x1b[31m.jsonl")
    proc = sw("backtest", str(path))
    assert proc.returncode == 0, proc.stderr
    assert b"\x1b" not in proc.stdout
    assert b"evil\\x1b[31 " in proc.stdout


@pytest.mark.slow
def test_page_line_says_what_the_advice_would_have_saved(machine: Path, tmp_path: Path) -> None:
    expected = backtest_file(machine)
    alert, best = expected["policies"]["alert"], expected["policies"]["hindsight"]
    assert alert["savingUsd"] > 0
    out = tmp_path / "page.html"
    proc = sw("report", "session", FIXTURE, "--html", str(out))
    assert proc.returncode == 0, proc.stderr
    n, n_best = len(alert["restartsAfter"]), len(best["restartsAfter"])
    line = (f'<p id="backtest">Following the advice (restarting {n} time{"s" if n != 1 else ""}) would have '
            f'saved ${alert["savingUsd"]:,.2f} ({alert["savingPct"]:.0f}\u00a0%); the best restarts, '
            f'${best["savingUsd"]:,.2f} ({best["savingPct"]:.0f}\u00a0%) with {n_best} restart'
            f'{"s" if n_best != 1 else ""}.</p>')  # a number keeps its unit (core.text.keep_units)
    assert line in out.read_text(encoding="utf-8")


class TestSentence:
    def test_advice_that_costs_more(self) -> None:
        doc = bt.backtest(SEG0, SHARED, {"alert": [4]})  # restart after call 4
        more = (TestHandWorked.after4 - TestHandWorked.actual0) * USD_PER_UNIT  # $0.04
        best = (TestHandWorked.actual0 - TestHandWorked.after3) * USD_PER_UNIT  # $0.03
        assert bt.sentence(doc) == (f"Following the advice (restarting 1 time) would have cost ${more:.2f} more "
                                    f"(16 %); the best restarts would have saved ${best:.2f} (15 %) with 1 restart.")

    def test_no_advice_and_no_better_restart(self) -> None:
        quiet = bt.backtest(SEG0, SHARED)
        assert bt.sentence(quiet) == ("The advice never said to restart; the best restarts would have "
                                      "saved $0.03 (15 %) with 1 restart.")
        assert bt.sentence(bt.backtest(SEG1, SHARED)) == "No restart would have made this session cheaper."

    def test_unpriced_in_tokens(self) -> None:
        doc = bt.backtest([c._replace(model="claude-nonesuch-9") for c in SEG0], SHARED, {"alert": [2, 3]})
        assert bt.sentence(doc) == ("Following the advice (restarting 2 times) would have saved 500 read-price "
                                    "tokens (0 %); the best restarts, 68k read-price tokens (15 %) with 1 restart.")
        doc = bt.backtest([c._replace(model="claude-nonesuch-9") for c in SEG0], SHARED, {"alert": [3]})
        assert bt.sentence(doc) == ("Following the advice (restarting 1 time) would have saved 68k read-price "
                                    "tokens (15 %); the best restarts, 68k read-price tokens (15 %) with 1 restart.")


@pytest.mark.slow
def test_set_replays_with_a_config_key_changed(machine: Path) -> None:
    """`--set` feeds the folds a changed default; the document says which, and matches a backtest
    given that config directly."""
    expected = backtest_file(machine, bp_amber=0.2, notify_dwell=5)
    default = backtest_file(machine)
    assert expected["policies"]["alert"] != default["policies"]["alert"]  # the change matters here
    proc = sw("backtest", "--json", "--set", "bp_amber=0.2", "--set", "notify_dwell = 5", FIXTURE)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["config"] == {"bp_amber": 0.2, "notify_dwell": 5}
    assert doc["sessions"][0]["policies"] == expected["policies"]
    for bad, why in (("bp_amber", "expected KEY=VALUE"), ("nope=1", "unknown key 'nope'"),
                     ("notify_dwell=0", "expected a whole number from 1 to 1000"),
                     ("bp_amber=5", "key 'bp_amber': the effective bp_red (0.25) would be below bp_amber (5)")):
        proc = sw("backtest", "--set", bad, FIXTURE)
        assert proc.returncode == 2  # a command line that cannot work (README's exit codes), as argparse's
        assert why in one_message(proc.stderr.decode())  # its one message


@pytest.mark.slow
def test_text_lists_the_sessions_newest_first_as_report_does(tmp_path: Path) -> None:
    """`backtest` listed every session in the order its folders were found, `report` newest first:
    the text now follows report's order (its last call's time); `--json` keeps the order found
    (programs and bench.backtest_many compare it byte for byte), and sessions named stay as named."""
    from tests.fuzz_synth import env_for

    env = {**env_for(tmp_path), "COLUMNS": "100"}
    for name in ("short", "subagent", "tool_heavy"):  # folder order: oldest first
        project = tmp_path / "claude" / "projects" / f"p-{name}"
        project.mkdir(parents=True)
        shutil.copyfile(TRANSCRIPTS / f"{name}.jsonl", project / f"{name}.jsonl")
    newest = [s["sessionId"] for s in json.loads(sw("report", "--json", env=env).stdout)["sessions"]]
    found = [s["sessionId"] for s in json.loads(sw("backtest", "--json", env=env).stdout)["sessions"]]
    assert sorted(newest) == sorted(found)
    assert found != newest  # the case this is about: folder order is not time order
    lines = sw("backtest", env=env).stdout.decode().splitlines()[2:2 + len(newest)]
    assert [line.split()[0] for line in lines] == [sid[:8] for sid in newest], lines
    named = sw("backtest", *found, env=env).stdout.decode().splitlines()[2:2 + len(found)]
    assert [line.split()[0] for line in named] == [sid[:8] for sid in found], named
