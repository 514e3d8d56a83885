"""The status document (`status --json`, `replay --json`, each `--trace` line). Pure.

Field names are the seed's API names; a value that is not valid yet is None, never NaN or a guess.
"""

from __future__ import annotations

from session_watcher.core import health
from session_watcher.core.eoq import quantities
from session_watcher.core.window import context_window

TYPE_CHECKING = False  # typing costs ~3 ms to import; this module is on the hot path
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from session_watcher.core.engine import CallHook
    from session_watcher.core.shapes import Alert, CallUsage, State


def _round(v: float | None, nd: int = 6) -> float | None:
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


def window_of(state: State) -> int | None:
    ctx = state["context"]
    return context_window(ctx.get("window"), [ctx.get("modelId"), ctx.get("modelName"), ctx.get("model")],
                          ctx.get("peak"))


def status_document(state: State, cfg: Mapping[str, Any], with_buckets: bool = True) -> dict[str, Any]:
    """The document; `with_buckets=False` leaves the per-file list empty (the status line does not
    show it, and its shell loads only part of the path map)."""
    e = state["engine"]
    q = quantities(state, cfg)
    ctx = state["context"]
    pressure = ctx.get("pressure")
    window = window_of(state)
    b_full = q["bFull"]
    display_b = None if b_full is None else (min(b_full, pressure) if pressure is not None else b_full)
    n_back = q["backstopN"]
    return {
        "sessionId": state["sessionId"],
        "model": ctx.get("model"),
        "segment": e["segment"],
        "calls": e["calls"],
        "L": q["L"],
        "B": display_b,
        "bFull": b_full,
        "bDefault": q["bDefault"],
        "floor": e["floor"],
        "x": _round(q["x"]),
        "g": _round(q["g"], 3),
        "residual": e["residual"],
        "dhat": _round(q["dhat"]),
        "xSweet": _round(q["xSweet"]),
        "br": _round(q["br"]),
        "mf": _round(q["mf"]),
        "cRatio": q["cRatio"],
        "cEff": _round(q["cEff"]),
        "shared": e["shared"],
        "restartCost": _round(q["K"], 1),
        "saving": _round(q["saving"], 1),
        "burnRate": _round(q["burnRate"]),
        "rateLamp": {"wallP": q["wallP"], "burnRate": _round(q["burnRate"])},
        "lamp": q["lamp"],
        "billProgress": round(e["billProgress"], 6),
        "bills": e["bills"],
        "backstop": {"n": e["sinceAlert"] if e["fired"] else e["dwellBills"], "N": n_back},
        "dwell": {"calls": e["dwell"], "bills": e["dwellBills"], "alerted": e["fired"],
                  "reminders": e["reminders"]},
        "ledger": {"open": len(e["ledger"]), "tokens": sum(item[1] for item in e["ledger"])},
        "compactions": e["compactions"],
        "cacheTtl": e["ttl"],
        "buckets": buckets(state) if with_buckets else [],
        "tokenUsage": dict(state["meter"]["main"]),
        "subagentUsage": dict(state["meter"]["sub"]),
        # server-side iterations of other models (an advisor's), by model: spent in this session's calls
        "otherModelUsage": {m: dict(b) for m, b in sorted((state["meter"].get("other") or {}).items())},
        "contextPressure": {"pressureTokens": pressure, "contextWindow": window},
        "health": health.grade(state["health"], window),
        "alerts": list(state["alerts"]),
        "badLines": state["bad"],
    }


def tracer(trace: list[dict[str, Any]], cfg: Mapping[str, Any]) -> CallHook:
    """A `fold` call hook that appends one trace row per main-chain API call: the status document
    after the call, with the call's number, time, own usage and the alerts it fired."""

    def add(state: State, fired: list[Alert], usage: CallUsage) -> None:
        row = status_document(state, cfg)
        row["ts"], row["call"], row["alerts"], row["usage"] = usage["ts"], state["engine"]["calls"], fired, usage
        trace.append(row)

    return add
