"""No advice while the automatic compaction is nearer than `compact_payback` restart paybacks (docs/model.md,
"The compaction within a restart's payback"): `eoq.compaction_hold` on the figures of real gates, the fold
on a real calibration session (the hooks as replay), and the hold by a segment's burst, which ends when the
compaction it foresaw does not come."""

from __future__ import annotations

import gzip
from typing import TYPE_CHECKING, Any

import pytest

from bench import calibrate as cal
from bench.synth import Transcript, growing
from session_watcher.base import config
from session_watcher.core import engine, eoq
from session_watcher.sessions.replay import replay
from tests.calibration import CALIBRATION
from tests.live_driver import Live, Step, line_offsets, synthetic_schedule
from tests.statefile import load_state

if TYPE_CHECKING:
    from pathlib import Path

CFG = config.merge()
OFF = config.merge({"compact_payback": 0})
SID = "d29c2adb-9a9e-45ac-b435-bce63d920d59"  # 120 calls; a reminder at call 119, 147.5k, 20k before 167k


def need(k: float, gain: float, c: float = 1.5) -> float:
    return c * k / gain


def test_the_hold_on_the_figures_of_real_gates() -> None:
    """As the fold had them. 8209f1c2's gate at call 52 (unseen, Opus 4.6; the compaction at 167k came at
    call 84): at g, 450 a call, the compaction is 91 calls away, past 1.5 paybacks (38 calls); at the
    segment's mean growth since its first prompt, 1.8k a call, 23: held by the burst, for 23 calls.
    a318ad73's gate at 37 (unseen, Opus 4.5, the point 155k; its compaction came 85 calls later): held
    for 19 calls, the hold then ending. A compaction near at g itself: held outright (0); none known,
    or no payback asked: the advice may speak."""
    k, gain = 1_234_649, 125_812 - 77_416
    assert eoq.compaction_hold(167_000, 126_265, 450.3, (126_265 - 34_118) / 51, need(k, gain)) == 23
    assert eoq.compaction_hold(167_000, 126_265, 450.3, 450.3, need(k, gain)) is None
    assert eoq.compaction_hold(155_000, 110_869, 1018.7, (110_869 - 26_834) / 36,
                               need(826_812, 110_859 - 66_145)) == 19
    assert eoq.compaction_hold(167_000, 126_265, 1_200, 1_200, need(k, gain)) == 0  # 34 calls < 38
    assert eoq.compaction_hold(None, 126_265, 450.3, 1_806.8, need(k, gain)) is None
    assert eoq.compaction_hold(167_000, 126_265, 450.3, 1_806.8, 0.0) is None


@pytest.mark.parametrize("g", [0.0, -450.3])
def test_a_growth_that_never_reaches_the_compaction_holds_by_the_burst_alone(g: float) -> None:
    """g of 0 or less (the fold's is at least G_MIN; the function takes any): at g the compaction never
    comes, so only the segment's mean growth holds the advice, and for as many calls as it says; no
    growth at all, no hold; a prompt at the point or past it, held outright."""
    k, gain = 1_234_649, 125_812 - 77_416
    assert eoq.compaction_hold(167_000, 126_265, g, (126_265 - 34_118) / 51, need(k, gain)) == 23
    assert eoq.compaction_hold(167_000, 126_265, g, g, need(k, gain)) is None
    assert eoq.compaction_hold(167_000, 167_000, g, 1_806.8, need(k, gain)) == 0
    assert eoq.compaction_hold(167_000, 170_000, 450.3, 1_806.8, need(k, gain)) == 0


def _alerts(path: Path, cfg: Any) -> tuple[list[tuple[str, int]], dict[str, Any]]:
    s = cal.prepare(path)
    state = s.loaded.fresh()
    got: list[tuple[str, int]] = []
    engine.fold(state, s.loaded.events, config.merge(s.cfg, cfg), s.loaded.paths,
                call_hook=lambda _st, alerts, _u: got.extend((a["kind"], a["call"]) for a in alerts))
    return got, dict(state["engine"])


def _unpacked(into: Path) -> Path:
    into.mkdir(parents=True, exist_ok=True)
    path = into / f"{SID}.jsonl"
    path.write_bytes(gzip.decompress((CALIBRATION / f"{SID}.jsonl.gz").read_bytes()))
    return path


def test_a_reminder_the_compaction_would_make_moot_is_not_sent(tmp_path: Path) -> None:
    """d29c2adb (a real calibration session, Opus 4.5 on a 200k window): its reminder at call 119 promised
    $1.17 over 49 calls; the session ended at 120, and the counterfactual shows it lost. The segment's
    mean growth puts the compaction 27 calls away, under 1.5 paybacks (27.6): held (by the burst, to its
    146th call). Without the hold it is sent. The closed loop's restarts do not move (a user who follows the
    gate never sees a reminder)."""
    path = _unpacked(tmp_path)
    on, state = _alerts(path, {})
    off, _ = _alerts(path, {"compact_payback": 0})
    assert ("backstop", 119) in off
    assert ("backstop", 119) not in on
    assert [a for a in off if a != ("backstop", 119)] == on
    assert state["burstUntil"] == 146
    s = cal.prepare(path)
    assert cal.score(s, {}).restarts == cal.score(s, {"compact_payback": 0}).restarts == [39]


@pytest.mark.slow
def test_the_hooks_hold_it_as_replay_does(tmp_path: Path) -> None:
    """Live equals replay on that session: the hooks, run as the client runs them, send no reminder at
    call 119 either, and fold the same figures call for call."""
    path = _unpacked(tmp_path / "src")
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    live = Live(tmp_path, path, SID, cwd)
    live.run(synthetic_schedule(live.data, SID))
    _doc, trace = replay(str(live.transcript), cwd=str(cwd))
    rows = live.rows()
    assert [r["call"] for r in rows] == [r["call"] for r in trace]
    for got, want in zip(rows, trace, strict=True):
        assert {k: got[k] for k in ("segment", "L", "x", "g", "lamp", "saving")} == \
            {k: want[k] for k in ("segment", "L", "x", "g", "lamp", "saving")}, want["call"]
        assert [a["kind"] for a in got["alerts"]] == [a["kind"] for a in want["alerts"]], want["call"]
    assert not any(a["kind"] == "backstop" for r in rows if r["call"] == 119 for a in r["alerts"])


def _burst_then_flat(flat: int = 150, session_id: str = "synth") -> Transcript:
    """A 50k first prompt, 25 calls growing 300 tokens each, four file reads of 25k, then `flat` calls
    growing 100 each: the segment's mean growth says the compaction (167k, Opus 4.6's window less the
    reserve) is near, its growth g that it is far, and it never comes."""
    t = Transcript(session_id=session_id)
    t.call(0, 49_999)
    cr = growing(t, 50_000, 300, 25)
    for _ in range(4):
        cr += 25_000
        t.call(cr - 25_000, 25_000)
    growing(t, cr, 100, flat)
    return t


def _gates(t: Transcript, cfg: Any) -> list[tuple[int, int | None]]:
    state = engine.new_state("t")
    got: list[tuple[int, int | None]] = []

    def hook(st: Any, alerts: list[Any], _usage: Any) -> None:
        e = st["engine"]
        got.extend((e["segCalls"], e.get("burstUntil")) for a in alerts if a["kind"] == "gate")

    engine.fold(state, t.events(), cfg, call_hook=hook)
    return got


def test_a_burst_holds_the_gate_only_as_long_as_it_said() -> None:
    """The gate that speaks at the segment's 34th call without the hold is held by the burst; the burst
    said the compaction was 3 calls away, it did not come, and the gate speaks at the 37th."""
    assert _gates(_burst_then_flat(), OFF) == [(34, None)]
    assert _gates(_burst_then_flat(), CFG) == [(37, 37)]


def test_a_new_segment_begins_the_hold_again() -> None:
    """A compaction ends the segment and its hold: the next segment's burst (the gate at its 48th call
    without the hold) holds its gate for as long as that burst says, to its 51st call, not to the
    first segment's 37th."""
    t = _burst_then_flat(10)
    t.compact("manual")
    t.call(0, 49_999)
    cr = growing(t, 50_000, 300, 40)
    for _ in range(4):
        cr += 25_000
        t.call(cr - 25_000, 25_000)
    growing(t, cr, 100, 20)
    assert _gates(t, OFF) == [(34, None), (48, None)]
    assert _gates(t, CFG) == [(37, 37), (51, 51)]


def _hook_per_call(live: Live, session_id: str) -> list[Step]:
    """A hook run after each line of the transcript (each one call): every call folded by a process of
    its own, the state saved and loaded between."""
    ends = line_offsets(live.data)[1:]
    return [(end, "hook", "PostToolUse", {"session_id": session_id, "tool_name": "Bash", "tool_input": {},
                                          "tool_use_id": f"toolu_{n:06d}"}) for n, end in enumerate(ends)]


def _live(tmp_path: Path, session_id: str, flat: int) -> Live:
    src = tmp_path / "src" / f"{session_id}.jsonl"
    src.parent.mkdir()
    _burst_then_flat(flat, session_id).save(src)
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    return Live(tmp_path, src, session_id, cwd)


@pytest.mark.slow
def test_the_hooks_end_a_burst_hold_where_replay_does(tmp_path: Path) -> None:
    """The hold by a burst outlives the process that began it: with a hook process per call (the state
    saved between), the gate held at the segment's 34th call speaks at its 37th, as in replay."""
    sid = "burst-live"
    live = _live(tmp_path, sid, 10)
    live.run(_hook_per_call(live, sid))
    _doc, trace = replay(str(live.transcript), cwd=str(live.cwd))
    rows = live.rows()
    assert [r["call"] for r in rows] == [r["call"] for r in trace] == list(range(1, 41))
    gates = [r["call"] for r in rows for a in r["alerts"] if a["kind"] == "gate"]
    assert gates == [r["call"] for r in trace for a in r["alerts"] if a["kind"] == "gate"] == [37]
    assert load_state(sid)["engine"]["burstUntil"] == 37


def _fold_on(damaged: object, missing: bool = False) -> tuple[list[int], dict[str, Any]]:
    """The burst transcript folded to its 35th call (the gate held to the 37th), `burstUntil` then
    set to `damaged` (or taken out: a state an older version saved), the rest folded: the calls of
    the gates given after, and the engine at the end."""
    events = list(_burst_then_flat(10).events())
    cut = [i for i, ev in enumerate(events) if ev[0] == "call"][34] + 1
    state = engine.new_state("t")
    engine.fold(state, events[:cut], CFG)
    assert state["engine"]["burstUntil"] == 37
    if missing:
        del state["engine"]["burstUntil"]
    else:
        state["engine"]["burstUntil"] = damaged  # type: ignore[typeddict-item]  # what a damaged file holds
    got: list[int] = []
    engine.fold(state, events[cut:], CFG, call_hook=lambda st, alerts, _u: got.extend(
        st["engine"]["segCalls"] for a in alerts if a["kind"] == "gate"))
    assert state["engine"]["segCalls"] == 40
    return got, dict(state["engine"])


@pytest.mark.parametrize("damaged", ["37", [37], {"at": 37}, True, None, float("inf"), float("nan")])
def test_a_damaged_hold_in_a_saved_state_does_not_stop_the_fold(damaged: object) -> None:
    """A saved state whose `burstUntil` is not a number of calls (a damaged file; NaN or an infinity
    read back from JSON; null) folds on as one without the key (an older version's): the hold begins
    again at the next held call. A number the code would not write still ends the hold where it says."""
    got, e = _fold_on(damaged)
    want, e_want = _fold_on(None, missing=True)
    assert (got, e["burstUntil"]) == (want, e_want["burstUntil"])
    assert want == [e_want["burstUntil"]]
    assert _fold_on(37.0)[0] == [37]
    assert _fold_on(-1)[0] == [36]


def test_no_gain_from_a_restart_or_no_price_holds_nothing() -> None:
    """The burst transcript at its 34th call (folded with the rule off: no hold begun), asked with the
    rule on: held, the hold begun to the 37th. With L at B or under it (a restart gains nothing a call:
    no payback to count, no division) or with no K (no baseline yet), nothing is held and nothing
    begun."""
    events = list(_burst_then_flat(10).events())
    cut = [i for i, ev in enumerate(events) if ev[0] == "call"][33] + 1
    state = engine.new_state("t")
    engine.fold(state, events[:cut], OFF)
    q = eoq.figures(state, CFG)
    base = q["bDefault"] or q["bFull"]
    assert base is not None
    assert q["L"] is not None
    assert q["L"] > base
    for at_most in (base, base - 1):
        assert engine.payback_holds(state, {**q, "L": at_most}, CFG)
    assert engine.payback_holds(state, {**q, "K": None}, CFG)
    assert "burstUntil" not in state["engine"]
    assert not engine.payback_holds(state, q, CFG)
    assert state["engine"]["burstUntil"] == 37
