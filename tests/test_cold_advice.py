"""The cold return's advice says what the guard says (issue 37): no restart advised short of the edge
(the guard only warns there, and the prompt goes), and no cold return recorded on a call that found
the cache warm. The fold (core.engine), the backtest's closed loop (core.closedloop) and the guard's
verdict (core.guard) on one rule; on synthetic sessions and on the two real returns that had promised
a saving their own call then lost."""

from __future__ import annotations

import gzip
from typing import TYPE_CHECKING, Any

import pytest

from bench.synth import Transcript
from session_watcher.base import config
from session_watcher.core import engine, eoq, guard, status
from session_watcher.sessions import backtest as shell
from session_watcher.sessions.replay import replay
from tests.calibration import CALIBRATION

if TYPE_CHECKING:
    from pathlib import Path

    from session_watcher.core.shapes import State

CFG = config.merge()


def session(gap: float, warm: bool = False) -> Transcript:
    """Twenty calls 10 s apart growing 4k a call from a 20k first prompt (x about 4 at call 20),
    then a return after `gap` seconds that re-writes its context (cold) or reads it all (`warm`)."""
    t = Transcript()
    t.call(0, 20_000, inp=0)
    cr = 20_000
    for _ in range(19):
        t.call(cr, 4_000, inp=0)
        cr += 4_000
    last = t.ts
    t.user(at=last + gap - 1)
    if warm:
        t.call(cr, 500, inp=0, at=last + gap)
    else:
        t.call(0, cr + 500, inp=0, at=last + gap)
    return t


def fold(t: Transcript) -> tuple[State, list[dict[str, Any]]]:
    state = engine.new_state("t")
    trace: list[dict[str, Any]] = []
    engine.fold(state, t.events(), CFG, call_hook=status.tracer(trace, CFG))
    return state, trace


def guards(trace: list[dict[str, Any]]) -> list[int]:
    return [row["call"] for row in trace for a in row["alerts"] if a["kind"] == "guard"]


def test_the_edge_is_the_lifetime_and_a_margin() -> None:
    assert eoq.EDGE_MARGIN == 180.0  # the guard's own, imported: its `sure` and `edge` add the same
    assert guard.edge(300.0) == eoq.cache_edge(300.0) == 480.0


@pytest.mark.parametrize(("gap", "advised"), [(400.0, False), (480.0, False), (500.0, True), (3_000.0, True)])
def test_a_cold_return_is_advice_only_past_the_edge(gap: float, advised: bool) -> None:
    """Between a 5-minute cache's lifetime (300 s) and the edge (480 s) the guard says "may have
    expired" and lets the prompt go: the fold records no advice there either (it did from 300 s), but
    the return counts as one the cache may have lapsed on (the tally)."""
    state, trace = fold(session(gap))
    assert guards(trace) == ([21] if advised else [])
    t = state["engine"]["tally"]
    assert (t["cold"], t["guard"]) == (1, int(advised))


@pytest.mark.parametrize(("gap", "due"), [(299.0, False), (400.0, False), (481.0, True)])
def test_the_closed_loop_asks_the_same_question(gap: float, due: bool) -> None:
    """`cold_return_due`, which the backtest's closed loop asks before a call, is due past the edge only."""
    t = session(gap)
    state = engine.new_state("t")
    events = t.events()
    last_call = max(i for i, ev in enumerate(events) if ev[0] == "call")
    engine.fold(state, events[:last_call], CFG)
    at = events[last_call][2]
    assert (engine.cold_return_due(state, CFG, at) is not None) is due


def test_a_call_past_the_edge_that_found_the_cache_warm_is_no_cold_return() -> None:
    """33 minutes idle, and yet the call reads its whole context (a request the user interrupted in
    the meantime, whose usage no transcript logs, kept the cache warm): nothing was re-written, so no
    cold return is advised on it; it still counts as a gap the cache may have lapsed over."""
    state, trace = fold(session(1_983.0, warm=True))
    assert guards(trace) == []
    assert (state["engine"]["tally"]["cold"], state["engine"]["tally"]["guard"]) == (1, 0)
    _, cold_trace = fold(session(1_983.0))
    assert guards(cold_trace) == [21]


def test_an_openai_models_cache_is_judged_by_its_own_lifetime() -> None:
    """gpt-5.6-sol keeps its cache 30 minutes (prices_openai.cache_floor): 11 minutes idle is warm to
    the guard and to the status line's pricing (both judged by 5 minutes before)."""
    state = engine.new_state("c")
    state["engine"]["lastTs"], state["engine"]["ttl"] = 1_000.0, "5m"
    state["context"]["model"] = "gpt-5.6-sol"
    got = guard.cold_cache(state, {"cliff": None}, 1_000.0 + 660)  # type: ignore[typeddict-item]  # no cliff
    assert got is not None
    assert (got["lifetimeSeconds"], got["cold"], got["sure"]) == (1_800.0, False, False)
    assert guard.verdict(660.0, "5m", None, "gpt-5.6-sol") == "warm"
    assert guard.verdict(660.0, "5m", None) == "cold"  # a Claude model's 5-minute cache
    assert eoq.cache_cold(state, {"cliff": None}, 1_000.0 + 660) is False  # type: ignore[typeddict-item]
    assert eoq.cache_cold(state, {"cliff": None}, 1_000.0 + 1_801) is True  # type: ignore[typeddict-item]


@pytest.mark.parametrize(("session_id", "call"), [
    ("08940314-9e93-46b1-a598-06bada65ed55", 187),  # 1,983 s after a request the user interrupted: read 145,631
    ("fe3ed705-946a-49c1-9c31-0a5ec7a62aba", 363),  # 336 s on a 5-minute cache: read 391,887 (warm)
])
def test_the_real_returns_that_promised_a_saving_their_call_lost(tmp_path: Path, session_id: str, call: int) -> None:
    """The two cold-return alerts of the calibration sessions whose promise the backtest's own
    counterfactual showed lost: both calls found the cache warm. Neither is advice now, and the
    closed loop does not restart before the one short of the edge."""
    path = tmp_path / f"{session_id}.jsonl"
    path.write_bytes(gzip.decompress((CALIBRATION / f"{session_id}.jsonl.gz").read_bytes()))
    _doc, rows = replay(str(path), cfg=CFG)
    row = next(r for r in rows if r["call"] == call)
    # no cold return (08940314's reminder, due since call 184, comes there now: its saving up to the
    # compaction cleared the floor only then)
    assert "guard" not in [a["kind"] for a in row["alerts"]]
    if session_id.startswith("fe3ed705"):
        doc = shell.session_doc(shell.load(str(path)), CFG)
        assert call - 1 not in doc["policies"]["alert"]["restartsAfter"]
