"""The advice a person trusts after a year (issue 37): one gate per segment, reminders that back off
and stop, no advice below a floor, advised restarts apart. Folded with `core.engine` from transcripts
written by bench/synth.py."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import pytest

from bench.synth import Transcript
from session_watcher.base import config
from session_watcher.core import engine, eoq, status

if TYPE_CHECKING:
    from session_watcher.core.shapes import Cliff, Config, ModelParams, State

CFG = config.merge()


def run(t: Transcript, cfg: ModelParams = CFG) -> tuple[State, list[dict[str, Any]]]:
    state = engine.new_state("t")
    trace: list[dict[str, Any]] = []
    engine.fold(state, t.events(), cfg, call_hook=status.tracer(trace, cfg))
    return state, trace


def alerts(trace: list[dict[str, Any]]) -> list[tuple[int, str]]:
    return [(row["call"], a["kind"]) for row in trace for a in row["alerts"]]


def growing(t: Transcript, start: int, g: int, calls: int) -> int:
    cr = start
    for _ in range(calls):
        cr += g
        t.call(cr, g)
    return cr


def test_one_gate_per_segment_though_the_lamp_went_out() -> None:
    """Past the gate, a 40k-token file read joins B: x falls far below the sweet spot and the lamp
    goes green; the session grows past the new sweet spot and the lamp turns amber again. That is
    the same segment: no second gate (the v2 gate fired again there)."""
    t = Transcript(cwd="/p")
    t.call(0, 19_999)
    cr = growing(t, 20_000, 1_000, 30)
    t.read("/p/big.py", "".join(f"{i:05d} " + "y" * 150 + "\n" for i in range(1_000)), cr=cr, cw=0)
    growing(t, cr, 1_000, 150)
    _, trace = run(t)
    lamps = [r["lamp"] for r in trace]
    gate = next(i for i, r in enumerate(trace) if any(a["kind"] == "gate" for a in r["alerts"]))
    assert "green" in lamps[gate:]  # the lamp did go out ...
    back = lamps.index("green", gate)
    assert "amber" in lamps[back:]  # ... and came back
    kinds = [k for _, k in alerts(trace)]
    assert kinds.count("gate") == 1
    assert "backstop" in kinds  # the repeat is a reminder


def test_reminders_beyond_the_cap_need_the_saving_to_double() -> None:
    """A long overstay: reminders after N, 2 N and 4 N bill cycles; a fourth only once both its
    interval (8 N) has passed and the saving is twice the gate's."""
    t = Transcript()
    t.call(0, 19_999)
    growing(t, 20_000, 1_000, 420)
    _, trace = run(t)
    rows = {r["call"]: r for r in trace}
    got = alerts(trace)
    gate = next(c for c, k in got if k == "gate")
    reminders = [c for c, k in got if k == "backstop"]
    assert len(reminders) >= 4
    since = [rows[b]["billsTotal"] - rows[a]["billsTotal"] for a, b in zip([gate, *reminders], reminders)]
    n = rows[gate]["backstop"]["base"]
    assert since[:3] == [n, 2 * n, 4 * n]
    assert since[3] >= 8 * n
    assert rows[reminders[3]]["saving"] >= 2 * rows[gate]["saving"]
    third = rows[reminders[2]]
    due = next(r for r in trace if r["call"] > third["call"] and r["billsTotal"] - third["billsTotal"] >= 8 * n
               and r["saving"] >= 2 * rows[gate]["saving"])
    assert due["call"] == reminders[3]  # the first call where both hold


@pytest.mark.parametrize(("floors", "gated"), [
    ({"advice_min_usd": 0.0, "advice_min_share": 0.0}, True),
    ({"advice_min_usd": 0.05, "advice_min_share": 0.0}, False),  # the saving is worth under 5 cents
    ({"advice_min_usd": 0.0, "advice_min_share": 0.5}, False),  # ... and under half the segment's cost
])
def test_no_advice_below_the_floor(floors: dict[str, float], gated: bool) -> None:
    """A small session (B 2,000 tokens, 100 tokens a call): past its sweet spot (call 25) the lamp turns
    amber, but a restart saves 1.4 to 4 cents over its cycle (28,666 read units at the sweet spot,
    where the segment cost ~100,000 so far): below either floor, no gate, no reminder."""
    t = Transcript()
    t.call(0, 1_999)
    growing(t, 2_000, 100, 45)
    _, trace = run(t, config.merge(floors))
    amber = [r for r in trace if r["lamp"] == "amber"]
    assert len(amber) > 15
    assert bool(alerts(trace)) is gated
    assert all(r["savingUsd"] < 0.05 for r in amber)


def test_no_gate_before_the_segments_tenth_call() -> None:
    """After a compaction the context grows fast (8,000 a call): the lamp is amber from the segment's
    4th call, the gate waits for its 10th (gate_min_calls), so two advised restarts are 10 calls apart."""
    t = Transcript()
    t.call(0, 19_999)
    growing(t, 20_000, 200, 5)
    t.compact()
    t.call(0, 20_000)
    growing(t, 20_000, 8_000, 15)
    _, trace = run(t)
    seg = [r for r in trace if r["segment"] == 1]
    first_amber = next(i for i, r in enumerate(seg) if r["lamp"] == "amber")
    assert first_amber < 9
    gate = next(i for i, r in enumerate(seg) if r["alerts"])
    assert gate == 9  # the segment's 10th call
    _, trace = run(t, config.merge({"gate_min_calls": 1}))
    seg = [r for r in trace if r["segment"] == 1]
    assert next(i for i, r in enumerate(seg) if r["alerts"]) < 9


@pytest.mark.parametrize("amber", [0.001, 0.05])
def test_the_page_draws_amber_where_the_config_starts_it(tmp_path: Any, amber: float) -> None:
    """One definition of where amber starts: the session page's bp scale comes from the fold's
    `lampAt` (the config's bp_amber and bp_red), not from a figure of its own."""
    from pathlib import Path

    from session_watcher.reports import session_page_data as page
    from session_watcher.sessions.replay import replay
    from tests.builders import build_model

    t = Transcript(cwd=str(tmp_path))
    t.call(0, 19_999)
    growing(t, 20_000, 1_000, 40)
    path = t.save(Path(tmp_path) / "s.jsonl")
    cfg = config.merge({"bp_amber": amber})
    _, trace = replay(str(path), cwd=str(tmp_path), cfg=cfg)
    model = build_model(path.read_bytes().splitlines(keepends=True), "s", trace)
    assert model["lampAt"] == {"amber": amber, "red": 0.25}
    js = (Path(page.__file__).parent / "assets" / "session_page.js").read_text()
    assert "M.lampAt" in js
    assert "{v: 0.10" not in js  # no threshold of its own


# --------------------------------------------------------------------------- one price

def test_one_restart_saving_for_the_status_line_the_alert_and_status() -> None:
    """The gate's alert (what the notification prints), the status document and the status line's
    figure are eoq.restart_saving of the same call; with the cache cold the saving adds the re-write
    a restart spares: restart_cost(cRatio, L, shared) - L."""
    t = Transcript()
    t.call(10_000, 10_000)  # 10k of the prefix read from the cache: shared
    growing(t, 20_000, 1_000, 18)  # the gate comes at call 19, one past the sweet spot
    state, trace = run(t)
    gate = trace[-1]
    assert [a["kind"] for a in gate["alerts"]] == ["gate"]
    alert = gate["alerts"][0]
    q = eoq.quantities(state, CFG)
    warm = eoq.restart_saving(state, q)
    assert (alert["saving"], alert["savingUsd"]) == warm
    assert warm[0] is not None
    assert warm[1] is not None
    assert (gate["saving"], gate["savingUsd"]) == (round(warm[0], 1), round(warm[1], 6))
    cold = eoq.restart_saving(state, q, cold=True)
    assert cold[0] is not None
    assert cold[1] is not None
    big_l = state["context"]["pressure"]
    assert big_l == 39_001  # 1 input, 38,000 read, 1,000 written
    assert cold[0] == pytest.approx(warm[0] + 12.5 * (big_l - 10_000) + 10_000 - big_l)
    doc = status.status_document(state, CFG, cold=True)
    assert doc["savingUsd"] == round(cold[1], 6)
    last = state["engine"]["lastTs"]
    assert last is not None
    assert not eoq.cache_cold(state, CFG, last + 300)  # the 5-minute class, to the second
    assert eoq.cache_cold(state, CFG, last + 301)
    own_cliff: Config = {**CFG, "cliff": cast("Cliff", {"5m": 600})}  # the class it is read for
    assert not eoq.cache_cold(state, own_cliff, last + 301)  # the user's own cliff


@pytest.mark.slow
@pytest.mark.parametrize("idle", [5.0, 3600.0])
def test_the_status_line_prices_a_cold_cache(tmp_path: Any, idle: float) -> None:
    """Through the real status line: the session's last call `idle` seconds ago. Warm: the line says
    the alert's saving; cold: the saving with the re-write a restart spares (never the warm one)."""
    import json
    import os
    import time
    from pathlib import Path

    from session_watcher.core.numbers import dollars as money
    from tests.oracle import hook, payload, statusline

    last = time.time() - idle
    t = Transcript(session_id="price", cwd=str(tmp_path), step=1.0)
    t.call(10_000, 10_000, at=last - 30)
    cr = 20_000
    for i in range(18):  # the gate at the last call, 19
        cr += 1_000
        t.call(cr, 1_000, at=last - 17 + i)
    path = t.save(Path(tmp_path) / "price.jsonl")
    assert hook("SessionStart", payload("price", path, "SessionStart", source="startup")).returncode == 0
    state, trace = run(t)
    q = eoq.quantities(state, CFG)
    want = eoq.restart_saving(state, q, cold=idle > 300)[1]
    assert want is not None
    raw = json.dumps({"session_id": "price", "transcript_path": str(path), "cwd": str(tmp_path),
                      "model": {"id": "claude-opus-4-6", "display_name": "Opus 4.6"}}).encode()
    line = statusline(raw, env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200"}).stdout.decode()
    assert f"restart saves {money(want)} " in line, line
    if idle > 300:
        assert money(want) != money(trace[-1]["alerts"][0]["savingUsd"])
    else:
        assert money(want) == money(trace[-1]["alerts"][0]["savingUsd"])
