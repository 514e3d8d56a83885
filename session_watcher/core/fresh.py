"""A new session's state: its schema number and its empty parts. Pure.

Apart from the fold (`core.engine`, which re-exports them) so that reading a saved state
(`state.store`: its shape checked against a new one) does not import the fold.
"""

from __future__ import annotations

from session_watcher.core import health, meter

TYPE_CHECKING = False  # typing is slow to import; this module is on the hot path
if TYPE_CHECKING:
    from session_watcher.core.shapes import Engine, State, Tally

SCHEMA = 4  # 2: model v2 (floor, miss rule, shared prefix, growth smoother, lamp hysteresis);
# 3: tool ids done kept as an object (one lookup, not a scan), health's first half kept as counts;
# 4: the session's running tally (`new_tally`: advice given, cold returns and their cost, warmth)


def new_engine() -> Engine:
    return {
        "segment": 0, "segCalls": 0, "calls": 0, "compactions": 0, "expectBoundary": False,
        "floor": None, "L": None, "lastTs": None, "ttl": None, "shared": None, "lamp": None, "gN": 0,
        "bFull": 0, "bIncl": 0, "ledger": [], "residual": None,
        "level": None, "trend": 0.0,
        "rent": 0.0, "billProgress": 0.0, "bills": 0, "billsTotal": 0,
        "dwell": 0, "dwellBills": 0, "fired": False, "sinceAlert": 0, "reminders": 0,
        "cal": {"chars": 0.0, "tokens": 0.0}, "globs": None, "tally": new_tally(),
    }


def new_tally() -> Tally:
    """What the session did, counted from its first call on and kept across segments: the advice
    given (gate, backstop reminders, cold returns advised), every cold return (a main-chain call
    after a gap longer than the cache's lifetime) with what it re-wrote (tokens, and dollars where
    the model is priced; `coldUnpriced` counts the others), and the cache reads and writes of calls
    2..n (the session's warmth, as the warmth report counts it). Only ever grows, so the sums made
    from it (OpenTelemetry's cumulative counters) count each thing once however often they are read."""
    return {"firstTs": None, "gate": 0, "backstop": 0, "guard": 0, "cold": 0, "coldTokens": 0, "coldUsd": 0.0,
            "coldUnpriced": 0, "warmRead": 0, "warmWrite": 0}


def new_state(session_id: str) -> State:
    return {
        "schema": SCHEMA, "sessionId": session_id, "cursor": None, "subCursors": {},
        "meter": meter.new_meter(), "engine": new_engine(), "paths": {}, "reasons": {}, "readPaths": {},
        "health": health.new_health(), "alerts": [],
        "tools": {"pending": {}, "done": {}},
        "context": {"model": None, "window": None, "pressure": None, "project": None, "cwd": None},
        "config": {}, "bad": 0,
        "rev": 0, "shards": {},  # the path map's shard files on disk (state.pathstore); shells only
    }
