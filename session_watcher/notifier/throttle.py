"""How often a session may notify: at most once per `notify.remind_min` minutes, cold returns excepted.

Decided in the hook, under the session lock, before the state is saved; pure (the caller passes the
clock) and import-free, so it costs the hook nothing. The time of the session's last notification
and the segment it belonged to are kept in the state (`notified`), so the rule holds across hook
processes. The engine still records every alert and the status line keeps counting; only the
delivery (every channel: desktop, terminal, message) is held back.

The rule, so that a person is not nagged:

* a reminder (`backstop`) or a gate comes at most once per REMIND_MIN per segment: a gate repeated
  within minutes means deep water flickered (bp around bp_amber), not that there is news;
* a cold return (`guard`) always comes: it is advice for the prompt about to be sent, and it only
  follows an idle gap;
* a new segment (after a compaction or /clear) starts afresh: its first alert is about a new
  context;
* remind_min = 0 turns the limit off.

A notification that comes starts the clock again, whatever its kind.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hot path)
if TYPE_CHECKING:
    from collections.abc import Mapping

    from session_watcher.core.shapes import Alert, State

REMIND_MIN = 10.0  # minutes
ALWAYS = ("guard",)


def remind_seconds(notify_cfg: Mapping[str, object] | None) -> float:
    value = (notify_cfg or {}).get("remind_min", REMIND_MIN)
    if not isinstance(value, int | float) or isinstance(value, bool) or not value >= 0:
        value = REMIND_MIN
    return float(value) * 60


def quiet(state: State, notify_cfg: Mapping[str, object] | None, now: float) -> bool:
    """True while the session's last notification, in this segment, is under remind_min old."""
    limit = remind_seconds(notify_cfg)
    last = state.get("notified")
    if not limit or not isinstance(last, dict) or last.get("segment") != state["engine"]["segment"]:
        return False
    at = last.get("at")
    if not isinstance(at, int | float) or isinstance(at, bool):
        return False
    return 0 <= now - at < limit  # a clock set back by more than the gap does not silence us


def admit(
    state: State, alerts: list[Alert], notify_cfg: Mapping[str, object] | None, now: float
) -> list[Alert]:
    """The alerts to deliver now (all, only the cold returns, or none); notes the delivery in the state."""
    if not alerts:
        return alerts
    due = [a for a in alerts if a.get("kind") in ALWAYS] if quiet(state, notify_cfg, now) else list(alerts)
    if due:
        state["notified"] = {"at": now, "segment": state["engine"]["segment"]}
    return due
