"""Lamp, gate and backstop (SPEC "Lamp, gate, backstop").

`reference` below is a second, deliberately naive implementation of the SPEC for sessions made of
API calls and compactions only (no file reads, so B_default is the floor): L with the cache-miss
rule, floor, residual, Holt, g, the EOQ figures, bill progress, deep water, dwell, gate and
backstop, written from the SPEC text without looking at core.engine. Random usage sequences go
through the real parser and `core.engine.fold`; the alerts must be the same, call for call.
"""

from __future__ import annotations

import itertools
import math
import random
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from bench.synth import MODEL, Transcript
from session_watcher.base import config
from session_watcher.core import engine, prices, status
from tests.test_replay_invariants import expected_lamp

if TYPE_CHECKING:
    from collections.abc import Mapping

    from session_watcher.core.shapes import Alert, ModelParams

CFG = config.merge()


# --------------------------------------------------------------------------- the reference

def _fresh_segment() -> dict[str, Any]:
    return {"floor": None, "L": None, "calls": 0, "rent": 0.0, "progress": 0.0, "last_bill": None,
            "dwell": 0, "dwell_bills": 0, "fired": False, "since": 0, "lamp": "white", "reminders": 0,
            "gate_saving": None, "units": 0.0}


def _grow(seg: dict[str, Any], est: dict[str, Any], n: int, inp: int, cr: int, cw: int) -> None:
    """A call's context L (the cache-miss rule), and its residual into the growth level g."""
    if seg["floor"] is None:
        seg["floor"] = inp + cr + cw  # the whole first prompt
        if est["shared"] is None and not est["compacted"]:  # the session's first real call
            est["shared"] = cr
        seg["L"] = cr
        return
    prev = seg["L"]
    new_l = cr + cw if cr < prev - max(1000, 0.02 * prev) else cr
    before = seg["floor"] if seg["calls"] == 2 else prev
    residual = float(max(0, new_l - before))
    level, seen = est["level"], est["seen"]
    if level is None:
        level = residual
    else:  # running mean for 20 residuals, then weight 0.05; past 20, a residual counts at most 4x g
        if seen >= 20:
            residual = min(residual, 4 * max(level, 100.0))
        w = max(0.05, 1 / (seen + 1))
        level = w * residual + (1 - w) * level
    est["level"], est["seen"] = level, seen + 1  # residuals seen are kept across segments
    seg["L"] = new_l


def _lamp(seg: dict[str, Any], c: float, g: float, shared: int | None, cfg: Mapping[str, Any]
          ) -> tuple[str, float, int | None, float]:
    """(lamp, rent of this call, N_back, saving over the optimal cycle in read units) from the EOQ
    figures at the segment's floor B."""
    b = seg["floor"]
    if b <= 0:
        return "white", 0.0, None, 0.0
    amber, red = cfg["bp_amber"], cfg["bp_red"]
    x = seg["L"] / b
    s = min(shared or 0, b)
    c_eff = (c * (b - s) + s) / b
    dhat = math.sqrt(2 * c_eff * g / b)
    mf = dhat / (1 + dhat + c * g / b)
    r = (x - 1) / dhat
    bp = mf * (r + 1 / r) / 2 - mf if r > 0 else None
    rent = max(0, seg["L"] - b) / (c_eff * b)
    was = seg["lamp"]
    lit = was in ("amber", "red")
    if x <= 1:
        lamp = "white" if was == "white" else "green"
    elif x < 1 + dhat or bp is None:  # a lit lamp holds down to 0.8 of the way to the sweet spot
        lamp = "amber" if lit and x - 1 >= 0.8 * dhat else "green"
    elif bp >= red or was == "red":  # red, like amber, holds for as long as x is past the sweet spot
        lamp = "red"
    elif bp >= amber or lit:  # amber holds for as long as x is past the sweet spot
        lamp = "amber"
    else:
        lamp = "green"
    # priced over the optimal cycle, or up to the automatic compaction when it comes first: at the
    # window (1M once a prompt above 200k was seen, else 200k) less compact_reserve, unset: the
    # reserve of the synthetic transcripts' client (2.1.39: 33k)
    reserve = 33_000 if cfg["compact_reserve"] is None else cfg["compact_reserve"]
    point = (1_000_000 if seg["peak"] > 200_000 else 200_000) - reserve
    horizon = min(dhat * b / g, max(0.0, (point - seg["prompt"]) / g))
    saving = horizon * (seg["L"] - b) - c_eff * b
    seg["x"], seg["x_sweet"] = x, 1 + dhat
    return lamp, rent, math.ceil(cfg["backstop_base"] * 0.4142 / mf) if mf > 0 else None, saving


def _bills(seg: dict[str, Any], rent: float) -> int:
    """Bill cycles the call completes (the rent's trapezoid added to the segment's progress)."""
    seg["progress"] += (seg["rent"] + rent) / 2
    seg["rent"] = rent
    completed = 0
    while seg["progress"] >= 1:
        seg["progress"] -= 1
        completed += 1
    if completed:
        seg["last_bill"] = seg["calls"]  # the segment's call that completed its latest bill cycle
    return completed


def _worth(seg: dict[str, Any], saving: float, cfg: Mapping[str, Any]) -> bool:
    """The advice floor: a saving of at least advice_min_usd dollars (the synthetic model's read price)
    and at least advice_min_share of the segment's cache cost so far."""
    if saving <= 0 or prices.read_usd(MODEL, saving) < cfg["advice_min_usd"]:
        return False
    return bool(saving >= cfg["advice_min_share"] * seg["units"])


def _alert(seg: dict[str, Any], completed: int, n_back: int | None, saving: float, right: bool,
           cfg: Mapping[str, Any]) -> str | None:
    """In deep water: the gate once (per segment) when the dwell, a counted bill, the segment's
    calls and the floor allow; then reminders after N_back, 2 N_back, 4 N_back ... bill cycles in deep
    water, at most remind_cap unless the saving doubled again since the gate (twice, then 4 times)."""
    seg["dwell"] += 1
    seg["dwell_bills"] += completed
    if not right:  # amber held on the left arm: the dwell goes on, nothing is said
        return None
    if not seg["fired"]:
        # a bill cycle completed during the dwell, or in the `lookback` calls before it began
        dwell_began = seg["calls"] - seg["dwell"] + 1
        counted = seg["last_bill"] is not None and seg["last_bill"] >= dwell_began - cfg["bill_lookback"]
        if (seg["dwell"] >= cfg["notify_dwell"] and counted and seg["calls"] >= cfg["gate_min_calls"]
                and _worth(seg, saving, cfg)):
            seg["fired"] = True
            seg["since"] = 0
            seg["gate_saving"] = saving
            return "gate"
        return None
    seg["since"] += completed
    if n_back is None or seg["since"] < n_back * cfg["remind_backoff"] ** seg["reminders"]:
        return None
    over = seg["reminders"] - cfg["remind_cap"] + 1
    if over > 0 and saving < seg["gate_saving"] * 2 ** over:
        return None
    if not _worth(seg, saving, cfg):
        return None
    seg["since"] = 0
    seg["reminders"] += 1
    return "backstop"


def reference(seq: list[tuple[Any, ...]], cfg: Mapping[str, Any]) -> list[tuple[int, str]]:
    """(call number, "gate" | "backstop") for each alert the SPEC says fires.

    `seq` items: ("call", inp, cr, cw, ttl) or ("compact",).
    """
    out: list[tuple[int, str]] = []
    est: dict[str, Any] = {"level": None, "seen": 0, "shared": None, "compacted": False, "peak": 0}  # across segments
    ttl = None
    n = 0
    seg = _fresh_segment()
    for item in seq:
        if item[0] == "compact":
            seg = _fresh_segment()
            est["compacted"] = True
            continue
        _, inp, cr, cw, t = item
        n += 1
        if inp + cr + cw < 1024:  # no request of the conversation: it shapes nothing
            continue
        seg["calls"] += 1
        if cw > 0:
            ttl = t
        c = cfg["cRatio"] or (20.0 if ttl == "1h" else 12.5)  # the synthetic model reads at 0.1x
        seg["units"] += cr + cw * (20.0 if t == "1h" else 12.5)  # the call's cache cost, in read units
        _grow(seg, est, n, inp, cr, cw)
        seg["prompt"] = inp + cr + cw
        est["peak"] = max(est["peak"], seg["prompt"])
        seg["peak"] = est["peak"]
        g = 100.0 if est["level"] is None else max(100.0, est["level"])
        lamp, rent, n_back, saving = _lamp(seg, c, g, est["shared"], cfg)
        seg["lamp"] = lamp
        completed = _bills(seg, rent)
        if lamp not in ("amber", "red"):
            seg["dwell"] = seg["dwell_bills"] = 0  # the gate given stays given: one per segment
            continue
        alert = _alert(seg, completed, n_back, saving, seg["x"] >= seg["x_sweet"], cfg)
        if alert is not None:
            out.append((n, alert))
    return out


def to_transcript(seq: list[tuple[Any, ...]]) -> Transcript:
    t = Transcript()
    for item in seq:
        if item[0] == "compact":
            t.compact()
        elif item[0] == "read":
            _, path, lines, cr = item
            t.read(path, "".join(f"{i:04d} some code here\n" for i in range(lines)), cr=cr, cw=0)
        else:
            _, inp, cr, cw, ttl = item
            t.call(cr, cw, inp, ttl=ttl)
    return t


def run_engine(seq: list[tuple[Any, ...]], cfg: ModelParams,
               trace: list[dict[str, Any]] | None = None) -> list[Alert]:
    """The engine's overstay alerts (the synthetic calls come seconds apart: no cold return)."""
    state = engine.new_state("gate")
    hook = None if trace is None else status.tracer(trace, cfg)
    alerts = engine.fold(state, to_transcript(seq).events(), cfg, call_hook=hook)
    assert all(a["kind"] != "guard" for a in alerts)
    return alerts


# --------------------------------------------------------------------------- random sessions

def session_from(ops: list[tuple[int, int]], first: int, ttl: str) -> list[tuple[Any, ...]]:
    """Turn abstract steps into usage. Step kinds: 0-5 grow by k, 6 cache miss, 7 jump,
    8 a real drop, 9 compaction, 10 a Read (its tokens are not added to the context)."""
    seq: list[tuple[Any, ...]] = [("call", 3, first, 400, ttl)]
    ctx = first + 400
    for kind, k in ops:
        if kind <= 5:
            seq.append(("call", 1, ctx, k, ttl))
            ctx += k
        elif kind == 6:  # the cache expired: little read, the rest written again
            part = k % max(1, ctx // 4)
            seq.append(("call", 1, part, ctx - part + k % 500, ttl))
            ctx += k % 500
        elif kind == 7:
            seq.append(("call", 1, ctx, 20 * k, ttl))
            ctx += 20 * k
        elif kind == 8:  # a genuine drop without a compaction record (not a cache miss)
            ctx = ctx // 3
            seq.append(("call", 1, ctx, 0, ttl))
        elif kind == 10:  # a Read of one of three files (only where no reference is compared)
            seq.append(("read", f"/p/f{k % 3}.py", k // 4, ctx))
        else:
            seq.append(("compact",))
            ctx = first
            seq.append(("call", 2, 0, ctx + 300, ttl))
            ctx += 300
    return seq


ops_strategy = st.lists(
    st.tuples(st.integers(min_value=0, max_value=9), st.integers(min_value=0, max_value=4000)),
    min_size=1, max_size=160)


def random_session(rng: random.Random) -> list[tuple[Any, ...]]:
    ops: list[tuple[int, int]] = []
    g = rng.choice([150, 400, 900, 1500, 3000])
    for _ in range(rng.randint(20, 220)):
        u = rng.random()
        if u < 0.9:
            ops.append((0, max(0, int(rng.gauss(g, g / 2)))))
        elif u < 0.95:
            ops.append((6, rng.randint(0, 4000)))
        elif u < 0.98:
            ops.append((7, rng.randint(0, 4000)))
        else:
            ops.append((9, 0))
    return session_from(ops, rng.randint(8000, 40_000), rng.choice(["5m", "5m", "1h"]))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops_strategy, st.integers(min_value=0, max_value=60_000), st.sampled_from(["5m", "1h"]))
def test_gate_matches_the_reference_on_random_sessions(ops: list[tuple[int, int]], first: int, ttl: str) -> None:
    seq = session_from(ops, first, ttl)
    got = [(a["call"], a["kind"]) for a in run_engine(seq, CFG)]
    assert got == reference(seq, CFG)


V2 = {"bp_amber": 0.10, "notify_dwell": 3, "bill_lookback": 0}  # the v2 gate: a bill within the dwell


@pytest.mark.parametrize("overrides", [
    {},
    V2,
    {"notify_dwell": 1, "bp_amber": 0.05},
    {"notify_dwell": 2, "bp_amber": 0.02, "bill_lookback": 5},
    {"notify_dwell": 6, "backstop_base": 1.0, "bp_amber": 0.2, "bp_red": 0.3},
    {"cRatio": 4.0},
])
def test_gate_matches_the_reference_on_realistic_sessions(overrides: dict[str, Any]) -> None:
    cfg = config.merge(overrides)
    rng = random.Random(20260211)
    fired_sessions = backstops = 0
    for _ in range(120):
        seq = random_session(rng)
        want = reference(seq, cfg)
        got = [(a["call"], a["kind"]) for a in run_engine(seq, cfg)]
        assert got == want
        fired_sessions += any(k == "gate" for _, k in want)
        backstops += sum(k == "backstop" for _, k in want)
    # the sample is not vacuous: the gate and the backstop both fire in it
    assert fired_sessions >= 20
    assert backstops >= 5


ops_with_reads = st.lists(
    st.tuples(st.sampled_from([0, 0, 0, 0, 1, 6, 7, 8, 9, 10, 10]), st.integers(min_value=0, max_value=4000)),
    min_size=1, max_size=160)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops_with_reads, st.integers(min_value=0, max_value=60_000))
# a Read joins B past the gate: amber holds on the left arm (x 3.261 against 3.270), where nothing is said
@example([(0, 0)] * 6 + [(0, 2103), (0, 4000), (10, 580), (0, 0)], 623)
def test_gate_never_on_the_left_arm_and_once_per_segment(ops: list[tuple[int, int]], first: int) -> None:
    trace: list[dict[str, Any]] = []
    alerts = run_engine(session_from(ops, first, "5m"), CFG, trace)
    by_call = {row["call"]: row for row in trace}
    for a in alerts:
        row = by_call[a["call"]]
        assert row["x"] is not None
        assert row["xSweet"] is not None
        assert row["x"] >= row["xSweet"]
        assert row["lamp"] in ("amber", "red")
        assert a["x"] is not None
        assert a["xSweet"] is not None
        assert a["x"] >= a["xSweet"]
    calls = [a["call"] for a in alerts]
    assert len(calls) == len(set(calls))  # never twice for the same call
    # at most one gate per segment, whether or not the session left deep water in between
    gates = [a["call"] for a in alerts if a["kind"] == "gate"]
    for first_gate, second_gate in itertools.pairwise(gates):
        assert by_call[second_gate]["segment"] != by_call[first_gate]["segment"]
    # a backstop reminder only ever follows a gate alert of the same episode
    for a in alerts:
        if a["kind"] == "backstop":
            assert by_call[a["call"]]["dwell"]["alerted"]


def test_gate_ignores_sidechain_calls() -> None:
    seq = [("call", 1, 20_000, 0, "5m")] + [("call", 1, 20_000 + 1500 * i, 1500, "5m") for i in range(1, 90)]
    assert reference(seq, CFG)  # the main-chain version fires
    t = Transcript()
    t.call(20_000, 0)
    for i in range(1, 90):
        t.call(20_000 + 1500 * i, 1500, sidechain=True)
    state = engine.new_state("side")
    assert engine.fold(state, t.events(), CFG) == []
    assert state["engine"]["calls"] == 1


# --------------------------------------------------------------------------- a synthetic overstaying session

def overstaying(tmp_path: Any, g: int = 1000, calls: int = 130, compact_at: int | None = None,
                start: float | None = None) -> Any:
    """`start`: its first call's time (epoch seconds; bench.synth's T0 by default, long past: a prompt
    after it finds the cache cold for sure)."""
    t = Transcript(session_id="overstay", cwd=str(tmp_path))
    if start is not None:
        t.ts = start
    t.call(0, 19_999)  # floor 20k (1 input + 19,999 written), nothing cached before: shared 0
    cr = 20_000
    for i in range(1, calls):
        if compact_at is not None and i == compact_at:
            t.compact()
            cr = 20_000
            t.call(0, cr - 1)
            continue
        t.user()
        cr += g
        t.call(cr, g)
    return t.save(tmp_path / "overstay.jsonl")


def expected_from_trace(trace: list[dict[str, Any]], cfg: Mapping[str, Any]) -> list[tuple[int, str]]:
    """The alerts the SPEC's three conditions call for, read off each call's published figures."""
    out: list[tuple[int, str]] = []
    dwell = dwell_bills = since = reminders = seg_calls = 0
    fired = False
    prev_bills, prev_seg = 0, 0
    lamp: str | None = None
    at_gate = 0.0
    for row in trace:
        if row["segment"] != prev_seg:
            prev_bills, prev_seg, lamp = 0, row["segment"], None
            fired, since, reminders, seg_calls = False, 0, 0, 0
        seg_calls += 1
        done = row["bills"] - prev_bills
        prev_bills = row["bills"]
        lamp = expected_lamp(row["x"], row["xSweet"], row["br"], lamp, cfg["bp_amber"], cfg["bp_red"])  # hysteresis
        deep = lamp in ("amber", "red")
        if not deep:
            dwell = dwell_bills = 0
            continue
        dwell += 1
        dwell_bills += done
        if row["x"] < row["xSweet"]:  # amber held on the left arm: nothing is said
            continue
        # the sessions here cost far more than the floor's share: its dollar part is the one that counts
        worth = row["savingUsd"] is not None and row["savingUsd"] >= cfg["advice_min_usd"]
        if not fired:
            if dwell >= cfg["notify_dwell"] and dwell_bills >= 1 and seg_calls >= cfg["gate_min_calls"] and worth:
                fired, since, at_gate = True, 0, row["saving"]
                out.append((row["call"], "gate"))
        else:
            since += done
            over = reminders - cfg["remind_cap"] + 1
            if (since >= row["backstop"]["base"] * cfg["remind_backoff"] ** reminders and worth
                    and (over <= 0 or row["saving"] >= at_gate * 2 ** over)):
                since, reminders = 0, reminders + 1
                out.append((row["call"], "backstop"))
    return out


CFG_V2 = config.merge(V2)


def test_overstaying_session_alerts(tmp_path: Any) -> None:
    """The v2 gate (bp >= 0.10 for 3 calls, a bill cycle within them) on the closed-form session."""
    from session_watcher.sessions.replay import replay

    path = overstaying(tmp_path)
    doc, trace = replay(str(path), cwd=str(tmp_path), cfg=CFG_V2)
    alerts = [(row["call"], a["kind"]) for row in trace for a in row["alerts"]]
    assert alerts == expected_from_trace(trace, CFG_V2)
    gates = [c for c, k in alerts if k == "gate"]
    assert len(gates) == 1
    gate = gates[0]
    rows = {row["call"]: row for row in trace}
    # bills completed and bp was far above amber on the left arm, and nothing fired there
    left = [r for r in trace if r["x"] > 1 and r["x"] < r["xSweet"]]
    assert len(left) > 10
    assert max(r["br"] for r in left) > 1.0
    assert all(c > left[-1]["call"] for c, _ in alerts)
    # the gate fires at the first call where the three conditions hold together
    first_deep = min(r["call"] for r in trace if r["x"] >= r["xSweet"] and r["br"] >= 0.10)
    # bill cycles completed before deep water (a gate that skipped a condition would fire early)
    assert rows[first_deep - 1]["bills"] >= 1
    assert gate >= first_deep + 2  # NOTIFY_DWELL = 3 calls in deep water
    assert rows[gate]["dwell"]["bills"] >= 1
    assert rows[gate - 1]["dwell"]["calls"] < 3 or rows[gate - 1]["dwell"]["bills"] == 0
    # closed form for this session: g = 1000, B = 20k, cRatio 12.5 -> xSweet 2.118, bp = 10 % at x 3.222
    assert rows[gate]["xSweet"] == pytest.approx(1 + math.sqrt(2 * 12.5 * 1000 / 20_000), rel=1e-3)
    assert first_deep == math.ceil((3.2223 * 20_000 - 20_000) / 1000) + 1
    # reminders after N, 2 N, 4 N bill cycles in deep water after the gate (each ignored one doubles
    # the next interval), then none: the saving has not doubled again since the gate
    n_back = rows[gate]["backstop"]["base"]
    assert n_back == 3
    reminders = [c for c, k in alerts if k == "backstop"]
    assert len(reminders) == 3
    bills = [rows[c]["bills"] - rows[gate]["bills"] for c in reminders]
    assert bills == [n_back, 3 * n_back, 7 * n_back]
    assert trace[-1]["bills"] - rows[gate]["bills"] < 15 * n_back  # the fourth's interval, 8 N, not reached
    assert doc["dwell"]["reminders"] == len(reminders)


def test_the_shipped_gate_speaks_at_the_sweet_spot(tmp_path: Any) -> None:
    """The same session with the defaults: xSweet = 1 + sqrt(2 * 12.5 * 1,000 / 20,000) = 2.118, reached
    at call 24 (x = 1 + 23 / 20 = 2.15); the rent integral, (n - 1)^2 / 500 bills after call n, reaches
    one bill at call 24 too (the EOQ's own cycle: one restart's price paid in extra reads); bp there is
    0.0002 (green), from call 25 0.0015 >= bp_amber 0.001: the gate fires at call 25, one call past
    the sweet spot (v2: call 48)."""
    from session_watcher.sessions.replay import replay

    _, trace = replay(str(overstaying(tmp_path)), cwd=str(tmp_path), cfg=CFG)
    rows = {row["call"]: row for row in trace}
    first_right = min(r["call"] for r in trace if r["x"] >= r["xSweet"])
    assert first_right == 24
    assert rows[24]["bills"] == 1
    assert rows[23]["bills"] == 0
    assert rows[24]["lamp"] == "green"
    assert rows[25]["lamp"] == "amber"
    alerts = [(row["call"], a["kind"]) for row in trace for a in row["alerts"]]
    assert alerts[0] == (25, "gate")
    assert alerts == reference([("call", 1, 0, 19_999, "5m")] + [
        ("call", 1, 20_000 + 1000 * i, 1000, "5m") for i in range(1, 130)], CFG)


@pytest.mark.parametrize("cfg", [CFG, CFG_V2], ids=["shipped", "v2"])
def test_the_horizon_is_priced_only_where_the_saving_is_weighed(tmp_path: Any, monkeypatch: Any,
                                                                cfg: Any) -> None:
    """The fold prices a call by `eoq.figures` and fills in the advice's horizon (the window, the
    compaction point) only where the gate or a reminder weighs the saving: a few of the calls, with
    the same alerts, trace and status as a fold that prices every call's horizon."""
    from session_watcher.core import eoq
    from session_watcher.sessions.replay import replay

    path = str(overstaying(tmp_path, calls=200, compact_at=90))
    horizons: list[float] = []
    real_horizon = eoq.session_horizon

    def counted(*a: Any) -> float:
        horizons.append(a[2])
        return real_horizon(*a)

    monkeypatch.setattr(eoq, "session_horizon", counted)
    lazy, _ = replay(path, cwd=str(tmp_path), cfg=cfg, with_trace=False)
    assert 0 < len(horizons) < lazy["calls"] / 4  # 8 (7 with v2) of 200 calls; every call before
    _, lazy_trace = replay(path, cwd=str(tmp_path), cfg=cfg)
    monkeypatch.setattr(eoq, "session_horizon", real_horizon)
    real_figures = eoq.figures
    monkeypatch.setattr(eoq, "figures", lambda st, c: eoq.with_horizon(st, c, real_figures(st, c)))
    eager, eager_trace = replay(path, cwd=str(tmp_path), cfg=cfg)
    assert (lazy, lazy_trace) == (eager, eager_trace)
    assert sum(len(row["alerts"]) for row in eager_trace) >= 4  # gates and reminders in both segments


def test_a_new_episode_after_compaction_fires_again(tmp_path: Any) -> None:
    from session_watcher.sessions.replay import replay

    path = overstaying(tmp_path, calls=200, compact_at=90)
    _, trace = replay(str(path), cwd=str(tmp_path), cfg=CFG_V2)
    alerts = [(row["call"], a["kind"], row["segment"]) for row in trace for a in row["alerts"]]
    assert [(c, k) for c, k, _ in alerts] == expected_from_trace(trace, CFG_V2)
    gates = [(c, s) for c, k, s in alerts if k == "gate"]
    assert [s for _, s in gates] == [0, 1]


def test_status_line_counts_bills_toward_the_next_alert(tmp_path: Any) -> None:
    from session_watcher.sessions.replay import replay

    _, trace = replay(str(overstaying(tmp_path)), cwd=str(tmp_path), cfg=CFG_V2)
    for row in trace:
        n, big_n = row["backstop"]["n"], row["backstop"]["N"]
        if row["dwell"]["alerted"]:
            assert 0 <= n < big_n
        else:
            assert n == row["dwell"]["bills"]
