"""The status document (`status --json`, `replay --json`, each `--trace` line). Pure.

Field names are the seed's API names; a value that is not valid yet is None, never NaN or a guess.
"""

from __future__ import annotations

from session_watcher.core import health, prices
from session_watcher.core.eoq import (
    bill_counted,
    cache_cold,
    cache_edge,
    cache_lifetime,
    compact_reserve,
    quantities,
    reminder_interval,
    restart_saving,
)
from session_watcher.core.window import context_window

TYPE_CHECKING = False  # typing is slow to import; this module is on the hot path
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    from session_watcher.core.shapes import Alert, CallUsage, Context, ModelParams, Quantities, State


def rounded(v: float | None, nd: int = 6) -> float | None:
    """A figure as the status document and the session page write it: `nd` decimals, None kept."""
    return None if v is None else round(v, nd)


def buckets(state: State) -> list[dict[str, Any]]:
    e = state["engine"]
    out: list[dict[str, Any]] = []
    if e["floor"] is not None:
        out.append({"type": "system", "path": None, "tokens": e["floor"], "defaultDiscardReason": None,
                    "included": True})
    files = sorted(state["paths"].items(), key=lambda kv: (-kv[1]["tokens"], kv[0]))
    for path, entry in files:
        out.append({
            "type": "file", "path": path, "tokens": entry["tokens"],
            "defaultDiscardReason": entry["reason"], "included": entry["include"],
            "lines": entry["lines"], "overhead": entry["overhead"],
            "pendingEdit": entry["pendingEdit"], "calibration": entry["calibration"],
            "reads": entry["reads"],
        })
    return out


def tally_document(state: State) -> dict[str, Any]:
    """What the session did so far (the engine's tally): the advice given by kind, the cold returns
    and what they re-wrote, the warmth of calls 2..n (None before a second call with cache use) and
    the cache reads and writes it is made of, and when the first call was; for a fork, how many of
    its calls are its parent's, copied (`inheritedCalls`, the first ones, to call `inheritedTo`), the
    session that made them (`forkedFrom`) and their tokens (`inheritedUsage`, in `tokenUsage`):
    `own_calls` and `own_usage` are the fork's own."""
    t = state["engine"]["tally"]
    read, write = t["warmRead"], t["warmWrite"]
    doc: dict[str, Any] = {
        "firstTs": t["firstTs"],
        "warmth": rounded(read / (read + write)) if read + write else None,
        "warmthTokens": {"read": read, "write": write},
        "advice": {"gate": t["gate"], "reminder": t["backstop"], "coldReturn": t["guard"]},
        "coldReturns": {"n": t["cold"], "tokens": t["coldTokens"], "usd": rounded(t["coldUsd"]),
                        "unpriced": t["coldUnpriced"]},
    }
    if t.get("inherited"):  # a fork's copies of its parent's calls: in `calls`, not in the tally; the last one's number
        doc.update(inheritedCalls=t.get("inherited", 0), inheritedTo=t.get("inheritedTo", 0),
                   forkedFrom=t.get("forkedFrom"), inheritedUsage=_copies_usage(state))
    return doc


def _copies_usage(state: State) -> dict[str, Any] | None:
    """A fork's copies' tokens: the main stream's before its first own call (`engine.on_call`), all of
    it before one; None where a state saved before they were kept has own calls already."""
    t, e = state["engine"]["tally"], state["engine"]
    got = t.get("inheritedUsage")
    if got is None and e["calls"] == t.get("inheritedTo"):
        got = state["meter"]["main"]
    return None if got is None else dict(got)


def own_calls(doc: Mapping[str, Any]) -> int:
    """The calls a status document's session made itself: its `calls`, less a fork's copies of its
    parent's (`inheritedCalls`)."""
    return int(doc["calls"]) - int(doc.get("inheritedCalls") or 0)


def own_usage(doc: Mapping[str, Any]) -> dict[str, int]:
    """A status document's `tokenUsage` less a fork's copies' (`inheritedUsage`): its own calls' tokens."""
    copied = doc.get("inheritedUsage") or {}
    return {k: v - int(copied.get(k) or 0) for k, v in doc["tokenUsage"].items()}


def window_of(state: State) -> int | None:
    ctx = state["context"]
    return context_window(ctx.get("window"), [ctx.get("modelId"), ctx.get("modelName"), ctx.get("model")],
                          ctx.get("peak"))


def cold_now(state: State, cfg: ModelParams, now: float) -> bool:
    """Whether the session's cache has expired at `now`, as the status line and `status` judge it
    for the restart saving: by the client's own `prompt_cache` (what the status line was told: cold
    unless warm and short of its expiry) when it said, else by `eoq.cache_cold` (the last request
    older than the cache lives)."""
    pc = state["context"].get("promptCache")
    if isinstance(pc, dict) and isinstance(pc.get("warm"), bool):
        expires = pc.get("expires_at")
        past = isinstance(expires, int | float) and not isinstance(expires, bool) and expires <= now
        return not pc["warm"] or past
    return cache_cold(state, cfg, now)


def surely_cold(state: State, cfg: ModelParams, now: float | None) -> bool:
    """The cache is gone for sure at `now`: the client says so (`cold_now`'s reading of it), or the
    last request is past the edge (the lifetime + `eoq.EDGE_MARGIN`), where the guard holds and the
    engine advises a cold return; short of it the cache only may have expired."""
    if now is None:
        return False
    pc = state["context"].get("promptCache")
    if isinstance(pc, dict) and isinstance(pc.get("warm"), bool):
        return cold_now(state, cfg, now)
    e = state["engine"]
    life = cache_lifetime(e["ttl"], cfg.get("cliff"), state["context"].get("model"))
    return life is not None and e["lastTs"] is not None and now - e["lastTs"] > cache_edge(life)


def status_document(state: State, cfg: ModelParams, with_buckets: bool = True,
                    with_health: bool = True, cold: bool = False, now: float | None = None) -> dict[str, Any]:
    """The document; `with_buckets=False` leaves the per-file list empty (the status line does not
    show it, and its shell loads only part of the path map); `with_health=False` leaves `health`
    None (its grade counts the session's tool calls: a long replay's trace spent a third of its
    time there). `saving` / `savingUsd` are eoq.restart_saving's: `cold`, the cache has expired
    (the status line and `status` judge it at their time: `cold_now`), and a restart spares the
    re-write; `now`, a live view's time, at which a handoff the guard prepared prices the restart
    (the fold's trace rows and replay have none)."""
    e = state["engine"]
    q = quantities(state, cfg)
    saving, saving_usd = restart_saving(state, q, cold=cold, now=now)
    ctx = state["context"]
    pressure = ctx.get("pressure")
    window = window_of(state)
    b_full = q["bFull"]
    display_b = None if b_full is None else (min(b_full, pressure) if pressure is not None else b_full)
    n_back = reminder_interval(e, q["backstopN"], cfg)  # the back-off included
    return {
        "sessionId": state["sessionId"],
        "agent": ctx.get("agent"),  # the agent whose log the state follows (state.session names it)
        "parentSession": state.get("parentSession"),  # the session whose handoff this one started with
        "model": ctx.get("model"),
        "segment": e["segment"],
        "calls": e["calls"],
        "L": q["L"],
        "B": display_b,
        "bFull": b_full,
        "bDefault": q["bDefault"],
        "floor": e["floor"],
        "x": rounded(q["x"]),
        "g": rounded(q["g"], 3),
        "residual": e["residual"],
        "dhat": rounded(q["dhat"]),
        "xSweet": rounded(q["xSweet"]),
        "br": rounded(q["br"]),
        "mf": rounded(q["mf"]),
        "cRatio": q["cRatio"],
        "cEff": rounded(q["cEff"]),
        "shared": e["shared"],
        "restartCost": rounded(q["K"], 1),
        "saving": rounded(saving, 1),
        "savingUsd": rounded(saving_usd),
        # the calls `saving` is counted over, and whether the automatic compaction ends them first
        "horizon": rounded(q["horizon"], 3),
        "untilCompaction": q["untilCompaction"],
        "burnRate": rounded(q["burnRate"]),
        "rateLamp": {"wallP": q["wallP"], "burnRate": rounded(q["burnRate"])},
        "lamp": q["lamp"],
        # the cache is cold for sure now, x >= guard_x and a restart saves: the advice whatever the lamp
        # (a cold return, as the guard and the engine take it); the status line then quotes `savingUsd` too
        "coldReturn": bool(cold and surely_cold(state, cfg, now) and q["x"] is not None and q["x"] >= cfg["guard_x"]
                           and (saving or 0) > 0),
        "lampAt": {"amber": cfg["bp_amber"], "red": cfg["bp_red"]},
        "billProgress": round(e["billProgress"], 6),
        "bills": e["bills"],
        # N: bill cycles from the last advice to the next reminder (the back-off included); base: before it
        "backstop": {"n": e["sinceAlert"] if e["fired"] else e["dwellBills"], "N": n_back, "base": q["backstopN"]},
        "dwell": {"calls": e["dwell"], "bills": e["dwellBills"], "alerted": e["fired"],
                  "reminders": e["reminders"], "billCounted": bool(e["dwell"]) and bill_counted(e, cfg)},
        "billsTotal": e["billsTotal"],
        "notice": notice(state),
        "ledger": {"open": len(e["ledger"]), "tokens": sum(item[1] for item in e["ledger"])},
        "compactions": e["compactions"],
        "cacheTtl": e["ttl"],
        "buckets": buckets(state) if with_buckets else [],
        "tokenUsage": dict(state["meter"]["main"]),
        "subagentUsage": dict(state["meter"]["sub"]),
        # server-side iterations of other models (an advisor's), by model: spent in this session's calls
        "otherModelUsage": {m: dict(b) for m, b in sorted((state["meter"].get("other") or {}).items())},
        "contextPressure": {"pressureTokens": pressure, "contextWindow": window},
        "health": health.graded(state["health"], window, e["calls"]) if with_health else None,
        "alerts": list(state["alerts"]),
        "badLines": state["bad"],
        "plan": plan_view(ctx.get("plan"), saving, ctx.get("model")),
        **tally_document(state),
    }


def client_point(state: State, cfg: ModelParams) -> float | None:
    """Where the session's client compacts on its own: its window less its reserve (None: the
    window unknown)."""
    return context_point(state["context"], cfg)


def context_point(ctx: Context, cfg: ModelParams) -> float | None:
    """`client_point` of a session whose context is `ctx` (its window, model, peak and the reserve its
    client said)."""
    window = context_window(ctx.get("window"), [ctx.get("model")], ctx.get("peak"))
    return None if window is None else window - compact_reserve(ctx, cfg)


def story_document(state: State, cfg: ModelParams, q: Quantities | None = None) -> dict[str, Any]:
    """The figures of `status_document` a session page's story row and the backtest's call read
    (the same values), and the client's compaction point after the call (the backtest's
    counterfactual compacts there): a long session's trace made a status document a call. `q`: the
    state's quantities, already priced (`engine.on_call`)."""
    e = state["engine"]
    q = quantities(state, cfg) if q is None else q
    return {
        "model": state["context"].get("model"), "segment": e["segment"], "L": q["L"], "bDefault": q["bDefault"],
        "x": rounded(q["x"]), "g": rounded(q["g"], 3), "xSweet": rounded(q["xSweet"]), "br": rounded(q["br"]),
        "lamp": q["lamp"], "lampAt": {"amber": cfg["bp_amber"], "red": cfg["bp_red"]},
        "billProgress": round(e["billProgress"], 6), "bills": e["bills"], "billsTotal": e["billsTotal"],
        "compactPoint": client_point(state, cfg),  # the backtest's compactions (core.chains.AutoWatch)
    }


def notice(state: State) -> dict[str, int] | None:
    """What the user was shown of the current deep-water episode (notifier.throttle keeps it in
    `notified`): {"shown": gate and reminders delivered, "bills": bill cycles since the last one},
    or None when none was (or out of deep water). The status line counts from it, so a reminder held
    back by notify.remind_min does not reset its `bill n/N`."""
    e = state["engine"]
    note = state.get("notified")
    if not isinstance(note, dict) or not e["dwell"] or note.get("segment") != e["segment"]:
        return None
    shown, bills = note.get("shown"), note.get("bills")
    if note.get("episode") != e["calls"] - e["dwell"] + 1 or not isinstance(shown, int) or not shown \
            or not isinstance(bills, int):
        return None
    return {"shown": shown, "bills": max(0, e["billsTotal"] - bills)}


def tracer(trace: list[dict[str, Any]], cfg: ModelParams) -> Tracer:
    """The fold's call hook that keeps `trace` (`Tracer`)."""
    return Tracer(trace, cfg)


class Tracer:
    """A `fold` call hook that appends one trace row per main-chain API call: the status document
    after the call, with the call's number, time, own usage and the alerts it fired. A trace whose
    `brief` is true gets `story_document`'s rows, from the quantities the engine priced the call by
    (`priced`: `engine.fold` hands them over); one with a `called` method (the session page's
    `StoryTrace`) is handed the state, those quantities, the alerts and the usage instead, and keeps
    what it reads of them: no row made a call."""

    def __init__(self, trace: list[dict[str, Any]], cfg: ModelParams) -> None:
        self.trace, self.cfg = trace, cfg
        self.full = not getattr(trace, "brief", False)
        self.priced: list[Quantities | None] | None = None if self.full else []
        # a brief trace that reads the figures itself (the page's StoryTrace): no row made for it
        self.called: Callable[[State, ModelParams, Quantities, list[Alert], CallUsage], None] | None = \
            None if self.full else getattr(trace, "called", None)

    def __call__(self, state: State, fired: list[Alert], usage: CallUsage) -> None:
        if self.full:
            row = status_document(state, self.cfg)
            del row["notice"]  # what was delivered is the hook's, not the fold's: live and replay fold alike
        else:
            q = self.priced.pop() if self.priced else None
            if self.called is not None:
                self.called(state, self.cfg, quantities(state, self.cfg) if q is None else q, fired, usage)
                return
            row = story_document(state, self.cfg, q)
        row["ts"], row["call"], row["alerts"], row["usage"] = usage["ts"], state["engine"]["calls"], fired, usage
        self.trace.append(row)


# ----------------------------------------------------------------------------- a subscriber's plan

# The status line's `rate_limits` (subscribers only): the plan's 5-hour and 7-day windows, each with
# `used_percentage` and `resets_at`. The plan's price of a dollar of API-priced work is estimated from
# the user's own samples: how far `used_percentage` moved while the client's `cost.total_cost_usd`
# for this session grew, over one span within one window (docs/statusline.md).
PLAN_WINDOWS = {"five_hour": "fiveHour", "seven_day": "sevenDay"}
PLAN_MIN_POINTS = 2.0  # the use must have moved this many percentage points over the span
PLAN_MIN_USD = 0.05  # and the session's API-priced cost this many dollars
PLAN_SAME_WINDOW = 60.0  # seconds two `resets_at` may differ and still name one window


def plan_observe(prev: Mapping[str, Any] | None, limits: Mapping[str, tuple[float, float | None]],
                 cost: float | None, now: float) -> dict[str, Any]:
    """The plan record after one status-line sample: per window the use now, the span's start
    (`ref`: use, session cost, time) and the estimate it gives (`rate`: points per dollar, points,
    dollars, from, to). A new window, a use or cost that went down (a reset, a new process after
    `--resume`) starts a new span; the last estimate is kept until a new span gives one."""
    old = prev.get("windows") if isinstance(prev, dict) else None
    windows: dict[str, Any] = {}
    for key, (used, resets) in limits.items():
        was = old.get(key) if isinstance(old, dict) else None
        was = was if isinstance(was, dict) else {}
        ref, rate = was.get("ref"), was.get("rate")
        before = was.get("resetsAt")
        moved = before is None or resets is None or abs(resets - before) > PLAN_SAME_WINDOW
        if cost is None:
            pass  # no cost to weigh the use against: the span neither starts nor grows
        elif not isinstance(ref, list) or len(ref) != 3 or moved or used < ref[0] or cost < ref[1]:
            ref = [used, cost, now]
        elif used - ref[0] >= PLAN_MIN_POINTS and cost - ref[1] >= PLAN_MIN_USD:
            rate = [(used - ref[0]) / (cost - ref[1]), used - ref[0], cost - ref[1], ref[2], now]
        windows[key] = {"used": used, "resetsAt": resets, "ref": ref, "rate": rate}
    return {"at": now, "cost": cost, "windows": windows}


def plan_view(plan: object, saving: float | None, model: str | None) -> dict[str, Any] | None:
    """The status document's `plan`: each window's use and reset time, the estimate (percentage
    points per API-priced dollar, and the span it was measured over) and what a restart now saves
    in points of that window (an estimate); None when the status line never saw `rate_limits`."""
    if not isinstance(plan, dict) or not isinstance(plan.get("windows"), dict):
        return None
    usd = None if saving is None or saving <= 0 else prices.read_usd(model, saving)
    out: dict[str, Any] = {"seenAt": plan.get("at"), "minPoints": PLAN_MIN_POINTS}
    for key, name in PLAN_WINDOWS.items():
        w = plan["windows"].get(key)
        if not isinstance(w, dict):
            continue
        rate = w.get("rate")
        est, saves = None, None
        if isinstance(rate, list) and len(rate) == 5:
            est = {"percentPerUsd": rounded(rate[0]), "points": rounded(rate[1], 2), "usd": rounded(rate[2], 4),
                   "since": rate[3], "until": rate[4]}
            saves = None if usd is None else rounded(usd * rate[0], 3)
        out[name] = {"usedPercent": w.get("used"), "resetsAt": w.get("resetsAt"), "estimate": est,
                     "restartSaves": saves}
    return out
