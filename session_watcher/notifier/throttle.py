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
* remind_min = 0 turns the limit off;
* a gate or reminder held back is kept (`notified.held`, the latest one) and sent by the first hook
  run after the quiet period ends, if it still holds: the same segment, still in deep water, nothing
  newer was shown meanwhile, and the state's alerts still hold it (a transcript rewound to before
  its call, the state started again, does not; one only older than all the state keeps, cold returns
  having pushed it out of the list, still holds) (`release`).

A notification that comes starts the clock again, whatever its kind.

What the user was shown is kept with it, so that the words and the status line count what they saw
(`notified`: `at`, `segment`; for a gate or a reminder also `episode`, the call its deep-water episode
began with, `shown`, how many of the episode's gate and reminders reached them, and `bills`, the
engine's bill cycles so far): a reminder held back does not reset the status line's `bill n/N`
(core.status, `notice`), and the title of the first alert a person sees in an episode is the gate's,
whatever the engine counted before (a first fold after a mid-session install), then "Reminder 1",
"Reminder 2" (each delivered alert carries `shown`, read by notifier.message).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hot path)
if TYPE_CHECKING:

    from session_watcher.core.shapes import Alert, NotifyConfig, State

REMIND_MIN = 10.0  # minutes
ALWAYS = ("guard",)


def remind_seconds(notify_cfg: NotifyConfig | None) -> float:
    value: object = notify_cfg.get("remind_min", REMIND_MIN) if notify_cfg else REMIND_MIN
    if not isinstance(value, int | float) or isinstance(value, bool) or not value >= 0:
        value = REMIND_MIN
    return float(value) * 60


def quiet(state: State, notify_cfg: NotifyConfig | None, now: float) -> bool:
    """True while the session's last notification, in this segment, is under remind_min old."""
    limit = remind_seconds(notify_cfg)
    last = state.get("notified")
    if not limit or not isinstance(last, dict) or last.get("segment") != state["engine"]["segment"]:
        return False
    at = last.get("at")
    if not isinstance(at, int | float) or isinstance(at, bool):
        return False
    return 0 <= now - at < limit  # a clock set back by more than the gap does not silence us


def episode(state: State) -> int | None:
    """The call the session's current deep-water episode began with (None out of deep water)."""
    e = state["engine"]
    return e["calls"] - e["dwell"] + 1 if e["dwell"] else None


def admit(
    state: State, alerts: list[Alert], notify_cfg: NotifyConfig | None, now: float
) -> list[Alert]:
    """The alerts to deliver now (all, only the cold returns, or none); notes the delivery in the
    state. A gate or reminder delivered is a copy carrying `shown`: how many of its episode's the user
    saw before it."""
    if not alerts:
        return alerts
    hushed = quiet(state, notify_cfg, now)
    due = [a for a in alerts if a.get("kind") in ALWAYS] if hushed else list(alerts)
    held = [a for a in alerts if a.get("kind") not in ALWAYS] if hushed else []
    if held and isinstance(state.get("notified"), dict):
        state["notified"]["held"] = {k: v for k, v in held[-1].items() if k != "pending"}
    if not due:
        return due
    last = state.get("notified")
    note: dict[str, object] = dict(last) if isinstance(last, dict) else {}
    segment, ep = state["engine"]["segment"], episode(state)
    if note.get("segment") != segment or note.get("episode") != ep:
        note = {"episode": ep, "shown": 0}  # a new segment or episode: nothing of it was shown yet
    shown = note.get("shown")
    count = shown if isinstance(shown, int) and not isinstance(shown, bool) else 0
    # copies: the state's alerts stay what the fold made; one notification shows them (message.pick)
    due = [a if a.get("kind") in ALWAYS else {**a, "shown": count} for a in due]
    if any(a.get("kind") not in ALWAYS for a in due):
        note.update(shown=count + 1, bills=state["engine"]["billsTotal"])
        note.pop("held", None)  # what was held back is superseded by what is shown now
    note.update(at=now, segment=segment)
    state["notified"] = note
    return due


def release(state: State, notify_cfg: NotifyConfig | None, now: float) -> list[Alert]:
    """The gate or reminder held back by the quiet period, once it is over and if it still holds (the
    same segment, the session still in deep water, and the fold still has it: a transcript rewound to
    before its call no longer does); delivered as `admit` delivers. [] otherwise; a held alert that
    no longer holds is dropped."""
    note = state.get("notified")
    if not isinstance(note, dict) or not isinstance(note.get("held"), dict) or quiet(state, notify_cfg, now):
        return []
    held = note.pop("held")
    e = state["engine"]
    if note.get("segment") != e["segment"] or not e["dwell"] or e["lamp"] not in ("amber", "red"):
        return []
    mark = (held.get("kind"), held.get("call"), held.get("ts"))  # state.session.alert_mark's
    alerts = state["alerts"]
    if not any((a.get("kind"), a.get("call"), a.get("ts")) == mark for a in alerts) and not _left_out(held, alerts):
        return []  # its call's lines were discarded (a rewind): the state started again without it
    return admit(state, [held], notify_cfg, now)


def _left_out(held: Alert, alerts: list[Alert]) -> bool:
    """Whether `held` is older than every alert of a full list (the fold keeps the last
    ALERTS_MAX; cold returns, delivered as they always are, push a held one out): the list's
    oldest left out, not a call a rewind discarded."""
    from session_watcher.core.engine import ALERTS_MAX

    ts = held.get("ts")
    return (len(alerts) >= ALERTS_MAX and type(ts) in (int, float)
            and all(type(a.get("ts")) in (int, float) and a["ts"] > ts for a in alerts))  # type: ignore[operator]
