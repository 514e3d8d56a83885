"""`session-watcher backtest`: the counterfactual restarts priced by hand, on a synthetic session, on a
real fixture against an independent count, and the command as a user runs it."""

from __future__ import annotations

import json
import shutil
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.synth import Transcript
from session_watcher.core import backtest as bt
from session_watcher.replay import replay
from tests.oracle import TRANSCRIPTS, sw

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

    def test_policies_capture_and_flat_segment(self) -> None:
        """alert follows the guard (before call 4, i.e. after call 3) over the gate at call 4; the
        gate on segment 1's last call changes nothing but is an alert in a segment no restart helps."""
        doc = bt.backtest([*SEG0, *SEG1], SHARED)
        pol = doc["policies"]
        actual = self.actual0 + self.actual1
        assert pol["actual"]["units"] == actual
        assert pol["actual"]["usd"] == pytest.approx(actual * USD_PER_UNIT)
        assert pol["alert"]["restartsAfter"] == [3]
        assert pol["alert"]["units"] == self.after3 + self.actual1
        assert pol["hindsight"]["restartsAfter"] == [3]
        assert pol["hindsight"]["units"] == self.after3 + self.actual1
        assert pol["sweetSpot"]["restartsAfter"] == [2, 7]
        assert pol["sweetSpot"]["units"] == self.after2 + self.seg1_after7
        saving = self.actual0 - self.after3  # 67,500
        assert pol["hindsight"]["savingUsd"] == pytest.approx(saving * USD_PER_UNIT)
        assert pol["hindsight"]["savingPct"] == pytest.approx(100 * saving / actual, abs=1e-3)
        assert pol["sweetSpot"]["savingPct"] < 0  # the sweet spot of these made-up x values is a bad moment
        assert doc["capture"] == 1.0
        s0, s1 = doc["segmentList"]
        assert (s0["advice"], s0["alertFired"], s0["alertInFlatSegment"]) == ("guard", True, False)
        assert s0["bestSavingPct"] == pytest.approx(100 * saving / self.actual0, abs=1e-3)
        assert (s1["advice"], s1["bestSavingPct"], s1["alertInFlatSegment"]) == ("gate", 0.0, True)
        assert s1["policies"]["hindsight"]["restartsAfter"] == []
        assert doc["alertInFlatSegment"] == 1

    def test_a_gate_alone_restarts_after_its_call(self) -> None:
        seg = [c._replace(guard=False) for c in SEG0]
        doc = bt.backtest(seg, SHARED)
        assert doc["policies"]["alert"]["restartsAfter"] == [4]
        assert doc["policies"]["alert"]["units"] == self.after4
        assert doc["capture"] == pytest.approx((self.actual0 - self.after4) / (self.actual0 - self.after3), abs=1e-4)

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
        doc = bt.backtest([c._replace(model="claude-nonesuch-9") for c in SEG0], SHARED)
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
    slow = [seg.value(k) for k in seg.restart_points()]
    assert seg.values() == pytest.approx(slow, rel=1e-9, abs=1e-9)


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

def backtest_file(path: Path | str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    status, trace = replay(str(path))
    calls = bt.calls_from_trace(trace)
    return bt.backtest(calls, bt.shared_prefix(status, calls)), trace


def constant_growth(tmp_path: Path, calls: int, base: int = 20_000, g: int = 1_000) -> Path:
    """A session that writes its first prompt (nothing shared) and then grows by `g` every call."""
    t = Transcript(cwd=str(tmp_path / "no-such-project"))
    t.call(0, cw=base)
    for i in range(1, calls):
        t.call(base + (i - 1) * g, cw=g)
    return t.save(tmp_path / "constant.jsonl")


def test_constant_growth_restarting_at_the_sweet_spot_is_within_2_percent_of_the_best(tmp_path: Path) -> None:
    """48 calls hold two optimal cycles (xSweet = 1 + sqrt(2 * 12.5 * 1,000 / 20,000) = 2.12, about
    call 25), so the best single restart sits at the sweet spot; one 10 calls off would cost more."""
    doc, _trace = backtest_file(constant_growth(tmp_path, 48))
    pol = doc["policies"]
    assert pol["hindsight"]["savingPct"] > 10
    assert pol["sweetSpot"]["usd"] <= 1.02 * pol["hindsight"]["usd"]
    (k_sweet,) = pol["sweetSpot"]["restartsAfter"]
    assert 20 <= k_sweet <= 30
    seg = bt.Segment(bt.calls_from_trace(_trace), doc["shared"])
    off = seg.total(seg.costs(k_sweet - 1 - 10))[1]
    assert off is not None
    assert off > 1.02 * pol["hindsight"]["usd"]  # the 2 % margin tells a good moment from a poor one


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
    comes from the raw JSONL; the best restart of each segment from a brute force written here."""
    path = TRANSCRIPTS / "ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"
    doc, trace = backtest_file(path)
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
    assert doc["policies"]["hindsight"]["usd"] == pytest.approx(best_total, abs=1e-6)
    assert doc["policies"]["hindsight"]["savingPct"] > 5


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


def test_command_text_json_and_ids(machine: Path) -> None:
    """Default: every session on the machine; a session id and a path give the same figures."""
    expected, _ = backtest_file(machine)
    proc = sw("backtest")
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout.decode()
    lines = text.splitlines()
    assert lines[0].split()[:3] == ["session", "calls", "cache"]
    row = next(line for line in lines if line.startswith(FIXTURE))
    actual = expected["policies"]["actual"]["usd"]
    assert f"${actual:,.2f}" in row
    assert f"{expected['policies']['hindsight']['savingPct']:.1f} %" in row
    assert any(line.startswith("total (1 sessions)") for line in lines)

    for target in (FIXTURE, str(machine)):
        proc = sw("backtest", "--json", target)
        assert proc.returncode == 0, proc.stderr
        doc = json.loads(proc.stdout)
        assert doc["version"] == 1
        (s,) = doc["sessions"]
        assert s["sessionId"] == FIXTURE
        assert s["transcript"] == str(machine)
        assert s["policies"] == expected["policies"]
        assert s["capture"] == expected["capture"]
        assert s["stability"] == expected["stability"]
        assert doc["total"]["policies"]["actual"]["usd"] == pytest.approx(actual, abs=1e-6)
        assert doc["total"]["captureMedian"] == expected["capture"]


def test_command_errors(machine: Path, tmp_path: Path) -> None:
    proc = sw("backtest", "0000-no-such-session")
    assert proc.returncode == 1
    assert proc.stdout == b""
    err = proc.stderr.decode()
    assert err.count("\n") == 1
    assert "no session '0000-no-such-session'" in err
    proc = sw("backtest", str(tmp_path / "missing.jsonl"))
    assert proc.returncode == 1
    assert "missing.jsonl: no such file" in proc.stderr.decode()


def test_command_on_an_empty_machine_says_so() -> None:
    proc = sw("backtest")
    assert proc.returncode == 0
    assert b"no session with an API call found" in proc.stdout
    doc = json.loads(sw("backtest", "--json").stdout)
    assert doc["sessions"] == []
    assert doc["total"]["captureMedian"] is None


def test_text_escapes_control_characters(tmp_path: Path) -> None:
    """A session id (a file name) with an escape sequence is printed escaped."""
    t = Transcript(cwd=str(tmp_path))
    t.call(1000, cw=500)
    path = t.save(tmp_path / "evil\x1b[31m.jsonl")
    proc = sw("backtest", str(path))
    assert proc.returncode == 0, proc.stderr
    assert b"\x1b" not in proc.stdout
    assert b"evil\\x1b[31m" in proc.stdout


def test_page_line_says_what_the_advice_would_have_saved(machine: Path, tmp_path: Path) -> None:
    expected, _ = backtest_file(machine)
    alert, best = expected["policies"]["alert"], expected["policies"]["hindsight"]
    assert alert["savingUsd"] > 0
    out = tmp_path / "page.html"
    proc = sw("report", "session", FIXTURE, "--html", str(out))
    assert proc.returncode == 0, proc.stderr
    line = (f'<p id="backtest">Restarting at the advice would have saved ${alert["savingUsd"]:,.2f} '
            f'({alert["savingPct"]:.0f} %); the best single restart, ${best["savingUsd"]:,.2f} '
            f'({best["savingPct"]:.0f} %).</p>')
    assert line in out.read_text(encoding="utf-8")


class TestSentence:
    def test_advice_that_costs_more(self) -> None:
        doc = bt.backtest([c._replace(guard=False) for c in SEG0], SHARED)  # gate: restart after call 4
        more = (TestHandWorked.after4 - TestHandWorked.actual0) * USD_PER_UNIT  # $0.04
        best = (TestHandWorked.actual0 - TestHandWorked.after3) * USD_PER_UNIT  # $0.03
        assert bt.sentence(doc) == (f"Restarting at the advice would have cost ${more:.2f} more (16 %); "
                                    f"the best single restart would have saved ${best:.2f} (15 %).")

    def test_no_advice_and_no_better_restart(self) -> None:
        quiet = bt.backtest([c._replace(guard=False, gate=False) for c in SEG0], SHARED)
        assert bt.sentence(quiet) == ("The advice never said to restart; the best single restart would have "
                                      "saved $0.03 (15 %).")
        assert bt.sentence(bt.backtest(SEG1, SHARED)) == "No single restart would have made this session cheaper."

    def test_unpriced_in_tokens(self) -> None:
        doc = bt.backtest([c._replace(model="claude-nonesuch-9") for c in SEG0], SHARED)
        assert bt.sentence(doc) == ("Restarting at the advice would have saved 68k read-price tokens (15 %); "
                                    "the best single restart, 68k read-price tokens (15 %).")


def test_set_replays_with_a_config_key_changed(machine: Path) -> None:
    """`--set` feeds the replay a changed default; the document says which, and matches a replay
    given that config directly."""
    from session_watcher import config

    status, trace = replay(str(machine), cfg=config.merge({"bp_amber": 0.2, "notify_dwell": 5}))
    calls = bt.calls_from_trace(trace)
    expected = bt.backtest(calls, bt.shared_prefix(status, calls))
    default, _ = backtest_file(machine)
    assert expected["policies"]["alert"] != default["policies"]["alert"]  # the change matters here
    proc = sw("backtest", "--json", "--set", "bp_amber=0.2", "--set", "notify_dwell = 5", FIXTURE)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["config"] == {"bp_amber": 0.2, "notify_dwell": 5}
    assert doc["sessions"][0]["policies"] == expected["policies"]
    for bad, why in (("bp_amber", "expected KEY=VALUE"), ("nope=1", "unknown key 'nope'"),
                     ("notify_dwell=0", "expected a whole number from 1 to 1000")):
        proc = sw("backtest", "--set", bad, FIXTURE)
        assert proc.returncode == 1
        assert why in proc.stderr.decode()
