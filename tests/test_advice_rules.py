"""The advice a person trusts after a year (issue 37): one gate per segment, reminders that back off
and stop, no advice below a floor, advised restarts apart. Folded with `core.engine` from transcripts
written by bench/synth.py."""

from __future__ import annotations

from typing import Any

import pytest

from bench.synth import Transcript
from session_watcher import config
from session_watcher.core import engine, status

CFG = config.merge()


def run(t: Transcript, cfg: Any = CFG) -> tuple[dict[str, Any], list[dict[str, Any]]]:
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

    from session_watcher.replay import replay
    from session_watcher.reports import session_page_data as page

    t = Transcript(cwd=str(tmp_path))
    t.call(0, 19_999)
    growing(t, 20_000, 1_000, 40)
    path = t.save(Path(tmp_path) / "s.jsonl")
    cfg = config.merge({"bp_amber": amber})
    _, trace = replay(str(path), cwd=str(tmp_path), cfg=cfg)
    model = page.build_model(path.read_bytes().splitlines(keepends=True), "s", trace)
    assert model["lampAt"] == {"amber": amber, "red": 0.25}
    js = (Path(page.__file__).parent / "assets" / "session_page.js").read_text()
    assert "M.lampAt" in js
    assert "{v: 0.10" not in js  # no threshold of its own
