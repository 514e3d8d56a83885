"""bench.advice's check of issue 37's allowance (at most 3 reminders in a segment after its gate,
unless the session has grown past twice the gate's saving), on a real Codex thread: the measure
agrees with the fold's own alerts, finds the rule kept as shipped and broken when the cap is off."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bench import advice
from bench import calibrate as cal
from session_watcher.base import config
from session_watcher.core import engine
from tests.codex_lines import FIXTURES

if TYPE_CHECKING:
    from session_watcher.core.shapes import ModelParams

THREAD = FIXTURES / "rollout-019d7739-95cb-79e3-9de4-3cbe15400b87.jsonl"
# a reminder every tenth of the backstop interval, none backed off, no cap
LOOSE = {"remind_backoff": 1, "remind_cap": 1000, "backstop_base": 0.1}


def early(s: cal.Session, cfg: ModelParams) -> tuple[int, int]:
    """(segments with more than 3 reminders, those with one past the 3rd under twice the gate's saving),
    from the alerts the fold fires, by the engine's segment."""
    gate: dict[int, float] = {}
    reminders: dict[int, list[float]] = {}

    def hook(st: Any, alerts: list[Any], _usage: Any) -> None:
        seg = st["engine"]["segment"]
        for a in alerts:
            if a["kind"] == "gate":
                gate[seg] = a["saving"]
            elif a["kind"] == "backstop":
                reminders.setdefault(seg, []).append(a["saving"])

    engine.fold(s.loaded.fresh(), s.loaded.events, cfg, s.loaded.paths, call_hook=hook)
    over = {seg: said for seg, said in reminders.items() if len(said) > 3}
    return len(over), sum(1 for seg, said in over.items() if min(said[3:]) < 2 * gate[seg])


def test_reminders_past_three_come_only_once_the_saving_doubled() -> None:
    s = cal.prepare(THREAD)
    shipped = config.merge(s.cfg, {})
    seen = advice.shown(s, shipped)
    assert (seen.over_cap, seen.unearned) == early(s, shipped) == (1, 0)
    assert seen.reminders_max == 7  # the 4th to the 7th each once the saving had doubled again
    loose = config.merge(s.cfg, LOOSE)
    seen = advice.shown(s, loose)
    assert (seen.over_cap, seen.unearned) == early(s, loose)
    assert seen.unearned == 1
    assert seen.reminders_max > 100
