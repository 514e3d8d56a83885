"""No advice whose restart needs more calls to pay back its carry than `advice_age` times the calls its
segment has run (docs/model.md, "The restart's payback against the segment's age"): the fold on the real
session whose gate the counterfactual shows lost, with the bound and without (off by default)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bench import calibrate as cal
from session_watcher.base import config
from session_watcher.core import engine
from tests.calibration import LONG_FIXTURES

if TYPE_CHECKING:
    from pathlib import Path

SESSION = LONG_FIXTURES / "fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"  # 157 calls, compacted at 126


def _alerts(path: Path, cfg: Any) -> list[tuple[str, int]]:
    s = cal.prepare(path)
    state = s.loaded.fresh()
    got: list[tuple[str, int]] = []
    engine.fold(state, s.loaded.events, config.merge(s.cfg, cfg), s.loaded.paths,
                call_hook=lambda _st, alerts, _u: got.extend((a["kind"], a["call"]) for a in alerts))
    return got


def test_off_by_default() -> None:
    assert config.merge()["advice_age"] == 0
    assert _alerts(SESSION, {}) == _alerts(SESSION, {"advice_age": 0})


def test_a_gate_whose_payback_outruns_its_young_segment_waits() -> None:
    """fa812bfe's gate at call 149, the 23rd call of the segment after its compaction: a restart pays back
    in K / (L - B) = 14.5 calls, 0.63 of the segment's age; the session ended at 157. Bounded at 0.55 the
    gate waits until the payback falls to 0.55 of the age (call 152); at 0.45 to the session's last call
    (0.447 there), where no restart is left to judge; at 0.4 past the end. The gate and reminder of the
    first segment (0.42 and 0.22) stand at 0.45."""
    assert ("gate", 149) in _alerts(SESSION, {})
    late = _alerts(SESSION, {"advice_age": 0.55})
    assert ("gate", 149) not in late
    assert [c for k, c in late if k == "gate"] == [25, 152]
    at = _alerts(SESSION, {"advice_age": 0.45})
    assert [c for k, c in at if k == "gate"] == [25, 157]
    assert ("backstop", 53) in at
    assert ("gate", 157) not in _alerts(SESSION, {"advice_age": 0.4})
