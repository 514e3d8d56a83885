"""The session's eviction hazard (docs/model.md, "The session's eviction hazard"): a restart's lighter
reads weighed by 1 + rate (cRatio - 1), the rate the session's evictions (misses before the cache's
lifetime) over its calls plus `evict_prior`; on a 1-hour cache from `evict_min_1h` evictions on. The
factor on its own, the count on a real calibration session (the fold, then the hooks as replay)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from session_watcher.base import config
from session_watcher.core import engine, eoq
from session_watcher.sessions import backtest as shell
from session_watcher.sessions.replay import replay
from tests.calibration import unpack
from tests.live_driver import Live, synthetic_schedule
from tests.statefile import load_state

if TYPE_CHECKING:
    from pathlib import Path

    from session_watcher.core.shapes import State

CFG = config.merge()
OFF = config.merge({"evict_prior": 0})
SID = "266b3f40-6f1d-491c-aeca-825cbb3fcbc5"  # Opus 4.6, a 1-hour cache, 201 calls, evictions at 88, 103, 108, 139


def _state(ttl: str, model: str, evictions: list[int] | None) -> State:
    state = engine.new_state("t")
    state["engine"]["ttl"] = ttl
    state["context"]["model"] = model
    if evictions is not None:
        state["engine"]["evictions"] = evictions
    return state


def test_the_factor() -> None:
    """Two evictions in 100 calls on a 5-minute cache, cRatio 12.5: 1 + 2 / 150 x 11.5. None seen, no
    count kept (an older version's state) or the rule off: 1. On a 1-hour cache, two are not enough
    (the default asks three); three in 100, cRatio 20: 1 + 3 / 150 x 19. A Codex model's cache is not
    Claude's 1-hour one, whatever the ttl label says."""
    assert eoq.evict_factor(_state("5m", "claude-opus-4-6", [2, 100]), CFG, 12.5) == pytest.approx(1 + 2 / 150 * 11.5)
    assert eoq.evict_factor(_state("5m", "claude-opus-4-6", [0, 100]), CFG, 12.5) == 1.0
    assert eoq.evict_factor(_state("5m", "claude-opus-4-6", None), CFG, 12.5) == 1.0
    assert eoq.evict_factor(_state("5m", "claude-opus-4-6", [2, 100]), OFF, 12.5) == 1.0
    assert eoq.evict_factor(_state("1h", "claude-opus-4-6", [2, 100]), CFG, 20.0) == 1.0
    assert eoq.evict_factor(_state("1h", "claude-opus-4-6", [3, 100]), CFG, 20.0) == pytest.approx(1 + 3 / 150 * 19)
    assert eoq.evict_factor(_state("1h", "gpt-5.5", [1, 100]), CFG, 10.0) == pytest.approx(1 + 1 / 150 * 9)


def _alerts(path: Path, cfg: Any) -> tuple[list[tuple[int, str, float]], list[tuple[int, int]], State]:
    """The alerts of the real session (call, kind, promised dollars), the calls where its count of
    evictions grew (call, evictions), and the state at its end."""
    loaded = shell.load(str(path))
    state = loaded.fresh()
    alerts: list[tuple[int, str, float]] = []
    grew: list[tuple[int, int]] = []

    def hook(st: Any, got: list[Any], _usage: Any) -> None:
        e = st["engine"]
        n = (e.get("evictions") or [0, 0])[0]
        if n > (grew[-1][1] if grew else 0):
            grew.append((e["calls"], n))
        alerts.extend((e["calls"], a["kind"], round(a.get("savingUsd") or 0.0, 2)) for a in got)

    engine.fold(state, loaded.events, config.merge(shell.config_for(str(path), {}), cfg), call_hook=hook)
    return alerts, grew, state


def test_a_real_session_counts_its_evictions(tmp_path: Path) -> None:
    """266b3f40 (a calibration session on a 1-hour cache): four misses come within the hour (calls 88,
    103, 108, 139), of 200 calls after the first. Up to the third nothing moves; from it a restart is
    worth more: the reminder of call 122 ($0.60) comes at 121 ($1.62), and one more gate on call 201.
    Asking four evictions, or the rule off: the alerts are the same."""
    path = unpack(SID, tmp_path)
    on, grew, state = _alerts(path, {})
    off, grew_off, _ = _alerts(path, {"evict_prior": 0})
    assert grew == grew_off == [(88, 1), (103, 2), (108, 3), (139, 4)]
    assert state["engine"].get("evictions") == [4, 200]
    assert [a for a in on if a[0] <= 108] == [a for a in off if a[0] <= 108] == [
        (32, "gate", 0.37), (72, "backstop", 1.52)]
    assert [a for a in off if a[0] > 108] == [(122, "backstop", 0.60)]
    assert [a for a in on if a[0] > 108] == [(121, "backstop", 1.62), (201, "gate", 0.52)]
    assert _alerts(path, {"evict_min_1h": 5})[0] == off


@pytest.mark.slow
def test_the_hooks_count_them_as_replay_does(tmp_path: Path) -> None:
    """Live equals replay on that session: the hooks, run as the client runs them (in a folder of no
    repository: its reads priced as carried), count the same evictions, price the same savings call
    for call and send the same alerts; before the third eviction as with the rule off, from it not."""
    path = unpack(SID, tmp_path / "src")
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
    assert load_state(SID)["engine"]["evictions"] == [4, 200]
    _doc, off = replay(str(live.transcript), cwd=str(cwd), cfg=OFF)
    assert [r["saving"] for r in off if r["call"] < 108] == [r["saving"] for r in rows if r["call"] < 108]
    said = [(r["call"], a["kind"]) for r in rows for a in r["alerts"]]
    said_off = [(r["call"], a["kind"]) for r in off for a in r["alerts"]]
    assert [a for a in said if a[0] < 108] == [a for a in said_off if a[0] < 108]
    assert said != said_off, said
