"""The alerts queued for the next prompt (`state["outbox"]`), for both agents: an async hook (Claude
Code's Stop, Codex's folding hooks) cannot print, and a `codex exec` prompt whose stderr no line can
be added to shows nothing (`Agent.unseen`), so the `message` and `terminal` channels of an alert
wait for a synchronous hook that shows them (hooks.run._route).

What waits is the alert, not its words: `{"alert", "channels", "segment"}`. When a prompt shows it,
it is priced again at that moment by the one function the status line and `status` use
(`eoq.restart_saving` with the cache as `status.cold_now` judges it, a handoff the guard prepared
included), and worded for where that prompt runs (Codex's TUI offers `!session-watcher handoff`,
`codex exec` the other terminal: `notifier.printed`). It is shown only while it still holds: a gate
or reminder of the session's segment as it is now (a compaction or /clear restarted it), its call
not rewound away (how far back does not matter: it was news when its call was folded,
hooks.run._news, and a long turn's later calls do not make it less so), the session still in deep
water (`throttle.release`'s rule), and its saving as priced now over the advice floor
(`engine.above_floor`); of those, the newest alone (one alert per prompt: a later one supersedes
it). A cold return's alert is not shown at a later prompt: its call made the re-write it priced
(with `guard = "off"` its own prompt tells it: hooks.prompt.unguarded). A
prompt or a start past a break beyond the cache's edge drops them all (hooks.run._gone_cold): the
cold return speaks then. An entry an earlier release queued as text is dropped: its words and price
were fixed when it was queued.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing is slow to import; this module is on a hook's path
if TYPE_CHECKING:
    from typing import Any

    from session_watcher.core.shapes import Alert, Config, State

ADVICE = ("gate", "backstop")  # what a queued alert may be shown as at a later prompt


def entry(state: State, alert: Alert, channels: list[str]) -> dict[str, Any]:
    """The outbox's record of an alert whose `channels` wait for a prompt that shows them."""
    return {"alert": {k: v for k, v in alert.items() if k != "pending"}, "channels": channels,
            "segment": state["engine"]["segment"]}


def entries(raw: object) -> list[dict[str, Any]]:
    """The saved outbox's records (an earlier release's text entries, anything else: left out)."""
    if not isinstance(raw, list):
        return []
    return [q for q in raw if isinstance(q, dict) and isinstance(q.get("alert"), dict)
            and isinstance(q.get("channels"), list)]


def pending(state: State, queued: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records that may still hold by the state's counts alone (cheap: asked on every hook run
    with something queued): advice of this segment, its call not rewound away. Not how far back its
    call is: it was news when it was folded (hooks.run._news), and a long turn's later calls do not
    make it less so (the prompt prices it now)."""
    e = state["engine"]
    kept = []
    for q in queued:
        call = q["alert"].get("call")
        if (q["alert"].get("kind") in ADVICE and q.get("segment") == e["segment"] and isinstance(call, int)
                and not isinstance(call, bool) and 0 < call <= e["calls"]):
            kept.append(q)
    return kept


def repriced(state: State, cfg: Config, alert: Alert, now: float) -> Alert | None:
    """`alert` with the figures of the session as it is at `now` (`engine.alert_of`, and the status
    line's restart saving: `eoq.restart_saving`, the cache cold where `status.cold_now` says so),
    its kind, call, reminder count and what the user was shown of its episode kept; None where it
    no longer holds (out of deep water, or its saving now under the advice floor)."""
    from session_watcher.core import engine, eoq
    from session_watcher.core.status import cold_now

    e = state["engine"]
    if not e["dwell"] or e["lamp"] not in ("amber", "red"):
        return None
    q = eoq.quantities(state, cfg)
    saving, saving_usd = eoq.restart_saving(state, q, cold=cold_now(state, cfg, now), now=now)
    if not engine.above_floor(state, saving, cfg):
        return None
    kind, call = alert.get("kind"), alert.get("call")
    if not isinstance(kind, str) or not isinstance(call, int):
        return None
    now_alert = engine.alert_of(state, q, kind, call)
    now_alert["saving"], now_alert["savingUsd"] = saving, saving_usd
    for key in ("reminder", "ts", "shown"):
        if key in alert:
            now_alert[key] = alert[key]
    return now_alert


def shown(state: State, cfg: Config, queued: list[dict[str, Any]], now: float) -> dict[str, str] | None:
    """What a prompt that shows the queue prints: the newest record that holds, priced and worded
    now (`repriced`, `notifier.printed`); None when none does."""
    from session_watcher.notifier import message, printed

    if not queued:
        return None
    newest = message.pick([q["alert"] for q in queued])
    record = next(q for q in reversed(queued) if q["alert"] is newest)
    alert = repriced(state, cfg, newest, now)  # type: ignore[arg-type]
    if alert is None:
        return None
    return printed(alert, record["channels"], agent=state["context"].get("agent"))
