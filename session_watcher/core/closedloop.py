"""The closed loop: a user who follows the advice, simulated with the hooks' own fold. Pure.

SPEC v3, "Backtest" (closed loop). A user who follows the advice restarts when told, keeps working
in the fresh session, where the watcher keeps watching, and restarts again when told. So after a
restart after call k the counterfactual session is folded by `core.engine` itself, from the same
transcript events: each later call of the segment with the usage `core.backtest.Segment` prices
for it (the context shifted down by D = T(k) - Bd(k), a miss's re-write shrinking first), call k+1
as a fresh session's first call (it reads the shared prefix and writes the rest), and a new segment
in the engine before it (floor, path map, ledger, dwell and bills start again; the growth estimate
keeps what it learned). Every later advice is followed the same way, to the segment's end. Real
compactions stay where they were: a real segment starts with the real session's usage again.

`observe` folds the real session (the `Call`s the backtest prices); `follow` folds the
counterfactual one for a policy and returns where it restarted. Neither reads a file: the shell
parses the transcript (the parser replay uses), resolves its paths, and passes a fresh state.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from session_watcher.core import engine
from session_watcher.core.backtest import Call, Segment, call_from_trace, segments
from session_watcher.core.eoq import quantities

if TYPE_CHECKING:
    from collections.abc import Sequence

    from session_watcher.core.engine import Resolved
    from session_watcher.core.shapes import Alert, CallEvent, CallUsage, Event, ModelParams, State

POLICIES = ("alert", "sweetSpot")
ADVICE = ("gate", "backstop")  # the alerts after whose call the `alert` policy restarts (a cold return: before)


def _call(state: State, cfg: ModelParams, fired: list[Alert], usage: CallUsage) -> Call:
    """The backtest's view of the call just folded: what its trace row says (call_from_trace)."""
    q = quantities(state, cfg)
    e = state["engine"]
    return call_from_trace({"call": e["calls"], "segment": e["segment"], "bDefault": q["bDefault"], "x": q["x"],
                            "xSweet": q["xSweet"], "g": q["g"], "lamp": q["lamp"], "alerts": fired, "usage": usage,
                            "ts": usage["ts"]})


class Observed(NamedTuple):
    """The real session as the closed loop starts from it."""

    events: Sequence[Event]  # the transcript's, in order
    paths: Resolved  # the shell's answers for every path they name
    calls: list[Call]  # one per main-chain API call, as the real fold saw it
    shared: int  # the prefix a restart finds cached (cr of the session's first call)
    rows: list[dict[str, Any]]  # per call, what a trace row says of it: call, segment, ts, usage


def observe(state: State, events: Sequence[Event], cfg: ModelParams, paths: Resolved) -> Observed:
    """Fold the real session into `state` (fresh); one `Call` per main-chain API call."""
    calls: list[Call] = []
    rows: list[dict[str, Any]] = []

    def hook(st: State, fired: list[Alert], usage: CallUsage) -> None:
        calls.append(_call(st, cfg, fired, usage))
        e = st["engine"]
        rows.append({"call": e["calls"], "segment": e["segment"], "ts": usage["ts"], "usage": usage})

    engine.fold(state, events, cfg, paths, call_hook=hook)
    return Observed(events, paths, calls, state["engine"]["shared"] or 0, rows)


def _with_usage(ev: CallEvent, inp: int, usage: tuple[int, int, int]) -> CallEvent:
    """The call event carrying another context (cache read, 5-minute and 1-hour writes). Its other
    iterations are left out: the fold reads the context only, and the backtest prices them itself."""
    cr, w5m, w1h = usage
    return ("call", ev[1], ev[2], ev[3], ev[4], inp, cr, w5m + w1h, ev[8], w5m, w1h, None)


class _Plan:
    """Where each call of the session sits: its segment's pricing and its index there."""

    def __init__(self, calls: Sequence[Call], shared: int) -> None:
        self.calls = calls
        self.where: list[tuple[Segment, int]] = []
        for seg in segments(calls, shared):
            self.where.extend((seg, i) for i in range(len(seg.calls)))

    def event(self, ev: CallEvent, j: int, restart: int) -> CallEvent:
        """Call j's event in the counterfactual whose last restart was after call `restart` (-1:
        none in this segment yet): the real one, a fresh session's first call, or a lighter one."""
        if restart < 0:
            return ev
        seg, i = self.where[j]
        c = self.calls[j]
        if restart == j - 1:
            return _with_usage(ev, 0, seg.fresh_usage(i - 1))  # the carry is all cached or written
        k = self.where[restart][1]
        return _with_usage(ev, c.total - c.cr - c.cw5m - c.cw1h, seg.lighter_usage(i, seg._drop(k)[1]))


def follow(state: State, seen: Observed, cfg: ModelParams, policy: str) -> list[int]:
    """The restarts (call numbers, 1-based) of a user who follows `policy` from the start of the
    session in `state` (fresh, as `observe` had it): "alert" restarts after every gate or reminder
    and before every cold return the watcher would show them; "sweetSpot" restarts whenever x reaches
    xSweet. `seen`: the real session as `observe` saw it (the restarts' carry and the usage the
    counterfactual calls get come from its calls)."""
    calls, paths = seen.calls, seen.paths
    plan = _Plan(calls, seen.shared)
    restarts: list[int] = []
    batch: list[Event] = []
    recent = state["meter"]["recent"]  # the meter's own test of a new call: a key it holds no sample of
    redone: dict[str, CallEvent] = {}  # a call's later samples carry what its first one did
    said: list[Alert] = []
    sweet = [False]

    def hook(st: State, fired: list[Alert], _usage: CallUsage) -> None:
        said.extend(fired)
        if policy == "sweetSpot":
            q = quantities(st, cfg)
            sweet[0] = q["x"] is not None and q["xSweet"] is not None and q["x"] >= q["xSweet"]

    j = -1  # the last main-chain call folded, an index into `calls`
    restart = -1  # the last restart in this segment (an index into `calls`), -1: none
    due = False  # the advice after call j was to restart
    for ev in seen.events:
        if ev[0] != "call" or ev[4]:
            batch.append(ev)
            continue
        if batch:
            engine.fold(state, batch, cfg, paths)
            batch = []
        key = ev[1]
        if key in recent:  # a later sample of a call folded already
            engine.fold(state, [redone.get(key, ev)], cfg, paths)
            continue
        j += 1
        if j >= len(calls):  # not a call `observe` saw: cannot be (the same events, the same meter)
            break
        if j == 0 or calls[j - 1].segment != calls[j].segment:
            restart, due = -1, False
        elif due or (policy == "alert" and engine.cold_return_due(state, cfg, ev[2]) is not None):
            restart = j - 1
            restarts.append(calls[restart].call)
            engine.new_segment(state)  # a fresh session: the growth estimate keeps what it learned
        redone[key] = cf = plan.event(ev, j, restart)
        said.clear()
        engine.fold(state, [cf], cfg, paths, call_hook=hook)
        due = any(a.get("kind") in ADVICE for a in said) if policy == "alert" else sweet[0]
    if batch:
        engine.fold(state, batch, cfg, paths)
    return restarts
