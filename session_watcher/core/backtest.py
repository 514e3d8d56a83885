"""Backtest: what following the advice would have cost, against the session's own history. Pure.

SPEC v3, "Backtest: is the advice right?". Input: one `Call` per main-chain API call of a session,
in order (`core.closedloop.observe` folds them from the transcript's events; `calls_from_trace`
builds them from replay's trace rows), the session's `shared` prefix (cr of its first call), and
the restarts the closed-loop policies took (`core.closedloop.follow`). Output: plain JSON-able dicts.

Cost of a call, in read units of its own model (tokens x that model's cache-read price):
cr + cw5m * W / rm + cw1h * W1h / rm, rm = its cache-read multiplier, W its 5-minute-class write
multiplier (WRITE_5M on every Claude model), W1h its 1-hour one (WRITE_1H unless the user's prices
say otherwise); in dollars,
units x base input price x rm / 1e6 (core.prices). A cw not split by TTL counts as 5-minute.
Uncached input and output do not depend on when you restart and are left out.

Counterfactual, per segment (an automatic compaction happens where the counterfactual's own context
reaches it, `core.chains`; a manual one stays where it was). A restart after call k:

* call k+1 starts a fresh session carrying S = Bd + (T(k+1) - T(k)) tokens, T = in + cr + cw,
  Bd = min(bDefault(k), T(k)) (a restart never carries more than the session did); it reads the
  shared prefix and writes the rest at call k+1's TTL class (`eoq.fresh_split`, the one rule);
* every later call of the segment, up to the next restart, carries D = T(k) - Bd fewer tokens.
  Where the real call was a cache miss (SPEC: cr below the previous call's L by more than
  max(1,000, 2 %)), it re-wrote min(cw, L(n-1) - cr) tokens of old context: that re-write shrinks
  first, then the cache read; everything floors at 0.

Bd and T are the real session's: what the work needs at call k is what its path map knows there,
whatever restarts came before. So what a call costs depends only on the last restart before it,
which is what lets `Segment.best_schedule` (`core.segment`) find the best of all schedules in
O(n^2), and `Chain.best` across the segments automatic compactions join (O(n x cycle)).

Policies: `actual`; `alert` and `sweetSpot` (closed loop: the restarts come in, see
core.closedloop); `hindsight` (the best schedule, any number of restarts per segment);
`hindsight1` (the best single restart per chain of segments).
"""

from __future__ import annotations

import math
from bisect import bisect_right
from itertools import pairwise
from typing import TYPE_CHECKING, Any, TypedDict

from session_watcher.core.chains import Auto, Chain
from session_watcher.core.chains import chains as _joined
from session_watcher.core.eoq import G_MIN, real_request
from session_watcher.core.segment import Call, Segment, _price, by_segment
from session_watcher.core.status import rounded

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence

__all__ = ["Call", "Segment", "_price"]  # the call type and one segment's pricing (core.segment), as before

POLICIES = ("actual", "alert", "sweetSpot", "hindsight", "hindsight1")
CLOSED_LOOP = ("alert", "sweetSpot")  # their restarts come from core.closedloop.follow
FLAT_SEGMENT_PCT = 2.0  # SPEC target: no alert in a segment whose best restart saves under 2 %
STABLE_AFTER = 10  # g's floor share counts calls after a segment's 10th
LAMP_SEGMENT = 20  # a segment shorter than this has no lamp rate of its own (one change there is 5 %+)


class Policy(TypedDict):
    """One policy's cost over a segment or a session, and its saving over the actual one."""

    usd: float | None
    units: float  # read-price tokens
    savingUsd: float | None
    savingUnits: float
    savingPct: float | None  # in dollars when priced, else in units
    restartsAfter: list[int]  # the calls the policy restarts after


class Stability(TypedDict):
    lampChanges: int
    callsPerLampChange: float | None
    lampChangesPerCall: float | None  # changes between calls of one segment, per call
    lampWorstSegment: float | None  # the same in the segment that changes most (of LAMP_SEGMENT calls or more)
    xSweetMoveP95: float | None
    gFloorShare: float | None
    gFloorCalls: int
    lateCalls: int


def _int(v: object) -> int:
    """A count of the trace: a number above 0, else 0."""
    if type(v) is int:  # the trace's own counts
        return v if v > 0 else 0
    return int(v) if isinstance(v, int | float) and not isinstance(v, bool) and v > 0 else 0


def _num(v: object) -> float | None:
    if type(v) is float:  # the trace's own figures
        return v
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None


def call_from_trace(row: Mapping[str, Any]) -> Call:
    """A `replay` trace row (the status document after the call, plus its own usage and alerts)."""
    return call_of(row.get("call"), row.get("segment"), row.get("bDefault"), row.get("model"), row.get("x"),
                   row.get("xSweet"), row.get("g"), row.get("lamp"), row.get("alerts"), row.get("usage") or {},
                   row.get("ts"))


def call_of(n: object, segment: object, b_default: object, model: Any, x: object, x_sweet: object,  # noqa: PLR0913, PLR0917
            g: object, lamp: Any, alerts: object, u: Mapping[str, Any], ts: object) -> Call:
    """The call a trace row's figures give (`call_from_trace`'s, its values given by the fold
    where it has no row: the page's story, the closed loop); `u` the call's own usage."""
    inp, cr, cw = _int(u.get("in")), _int(u.get("cr")), _int(u.get("cw"))
    cw1h = min(_int(u.get("cw1h")), cw)
    kinds = {a.get("kind") for a in alerts if isinstance(a, dict)} if alerts else ()  # type: ignore[attr-defined]  # most calls: none
    others = u.get("iter")
    extra = tuple((it[0] if isinstance(it[0], str) else None, _int(it[1]), _int(it[2]), _int(it[3]))
                  for it in others if isinstance(it, list | tuple) and len(it) == 4) if others else ()
    return Call(  # by position (Call's order): a call a trace row, for a long session's page too
        _int(n), _int(segment), inp + cr + cw,
        int(b_default) if isinstance(b_default, int | float) else None,
        cr, cw - cw1h, cw1h, u.get("model") or model,
        _num(x), _num(x_sweet), _num(g),
        lamp, "gate" in kinds, "guard" in kinds, extra,
        float(ts) if isinstance(ts, int | float) and not isinstance(ts, bool) else None, inp,
    )


def calls_from_trace(rows: Iterable[Mapping[str, Any]]) -> list[Call]:
    return [call_from_trace(r) for r in rows]


def shared_prefix(status: Mapping[str, Any] | None, calls: Sequence[Call]) -> int:
    """The status document's `shared`, else the first call's cache read (0 without calls)."""
    v = (status or {}).get("shared")
    if isinstance(v, int | float) and not isinstance(v, bool):
        return int(v)
    return next((c.cr for c in calls if real_request(c.total)), 0)


# ----------------------------------------------------------------------------- figures

def _policy(units: float, usd: float | None, base_units: float, base_usd: float | None,
            restarts: list[int]) -> Policy:
    if usd is not None and base_usd is not None:
        saving_pct = 100 * (base_usd - usd) / base_usd if base_usd > 0 else None
    else:
        saving_pct = 100 * (base_units - units) / base_units if base_units > 0 else None
    return {
        "usd": rounded(usd, 6),
        "units": round(units, 1),
        "savingUsd": None if usd is None or base_usd is None else round(base_usd - usd, 6),
        "savingUnits": round(base_units - units, 1),
        "savingPct": rounded(saving_pct, 3),
        "restartsAfter": restarts,
    }


def _capture(alert: Mapping[str, Any], hindsight: Mapping[str, Any]) -> float | None:
    """saving(alert) / saving(hindsight), in USD when priced. None when the best restart saves under
    FLAT_SEGMENT_PCT: there the right advice is none (see `alertInFlatSegment`), and a ratio of two
    crumbs would call silence a failure."""
    pct = hindsight["savingPct"]
    if pct is None or pct < FLAT_SEGMENT_PCT:
        return None
    # in read units where the dollars are not known, or round to nothing (a saving under half a
    # millionth of a dollar: a small model's cheap reads, or prices near the config's floor, where
    # dividing by it stopped the backtest); read units are the dollars over the read price, the same ratio
    key = "savingUsd" if hindsight["savingUsd"] else "savingUnits"
    best = hindsight.get(key)
    if not best:
        return None
    return round(float(alert[key]) / float(best), 4)


def segments(calls: Sequence[Call], shared: int) -> list[Segment]:
    return [Segment(seg, shared) for seg in by_segment(calls)]


def chains(segs: Sequence[Segment], autos: Mapping[int, Auto] | None) -> list[Chain]:
    """The segments joined by the automatic compactions `autos` (core.chains)."""
    return _joined(segs, autos)


def _gaps(restarts: Sequence[int]) -> dict[str, float | int | None]:
    """Calls between consecutive restarts: how often the advice asks (median, shortest)."""
    gaps = [b - a for a, b in pairwise(sorted(restarts))]
    return {"count": len(gaps), "median": rounded(percentile(gaps, 50), 1), "min": min(gaps) if gaps else None}


def backtest(calls: Sequence[Call], shared: int, follow: Mapping[str, Sequence[int]] | None = None,
             autos: Mapping[int, Auto] | None = None) -> dict[str, Any]:
    """Per segment and for the session: each policy's cost and saving, capture, and stability.

    `follow`: the restarts (call numbers, 1-based) of the closed-loop policies (CLOSED_LOOP), as
    core.closedloop.follow found them; a policy not given restarts nowhere. `autos`: the session's
    automatic compactions by the call number after them (`core.chains`: a restart's effect runs on
    across them, and they happen where the counterfactual's context reaches them); None: every
    compaction stays where it was."""
    follow = follow or {}
    seg_docs: list[dict[str, Any]] = []

    def points(ch: Chain) -> dict[str, list[int]]:
        best, one = ch.best()
        return {"actual": [], "alert": ch.local(follow.get("alert", ())),
                "sweetSpot": ch.local(follow.get("sweetSpot", ())), "hindsight": best,
                "hindsight1": [] if one is None else [one]}

    def seg_doc(seg: Segment, pol: dict[str, Policy], whole: Policy) -> None:
        fired = any(c.gate or c.guard for c in seg.calls)
        best_pct = pol["hindsight"]["savingPct"] or 0.0
        seg_docs.append({
            "segment": seg.calls[0].segment,
            "calls": len(seg.calls),
            "firstCall": seg.calls[0].call,
            "lastCall": seg.calls[-1].call,
            "alertFired": fired,
            "bestSavingPct": round(best_pct, 3),
            "alertInFlatSegment": fired and (whole["savingPct"] or 0.0) < FLAT_SEGMENT_PCT,
            "capture": _capture(pol["alert"], pol["hindsight"]),
            "policies": pol,
        })

    policies, priced, restarts = _policies(chains(segments(calls, shared), autos), POLICIES, points, seg_doc)
    models = [c.model for c in calls if c.model]
    return {
        "calls": len(calls),
        "segments": len(seg_docs),
        "model": models[-1] if models else None,
        "shared": shared,
        "priced": priced and bool(calls),
        "policies": policies,
        "capture": _capture(policies["alert"], policies["hindsight"]),
        "restartGaps": _gaps(restarts["alert"]),
        "alertInFlatSegment": sum(1 for s in seg_docs if s["alertInFlatSegment"]),
        "segmentList": seg_docs,
        "stability": stability(calls),
    }


def best_restarts(calls: Sequence[Call], shared: int, autos: Mapping[int, Auto] | None = None) -> dict[str, Any]:
    """`backtest`'s policies `actual`, `alert` (no advice followed: no restart) and `hindsight`, the
    same figures given the same `autos`, and nothing else (the session page's line where the closed
    loop is not run)."""
    def points(ch: Chain) -> dict[str, list[int]]:
        return {"actual": [], "alert": [], "hindsight": ch.best(single=False)[0]}

    return {"policies": _policies(chains(segments(calls, shared), autos), ("actual", "alert", "hindsight"),
                                  points)[0]}


def _policies(chained: Iterable[Chain], names: Sequence[str], points: Callable[[Chain], dict[str, list[int]]],
              per_segment: Callable[[Segment, dict[str, Policy], Policy], None] | None = None,
              ) -> tuple[dict[str, Policy], bool, dict[str, list[int]]]:
    """(each policy's session figures, every call priced, each policy's restarts) of the chains,
    each restarting where `points` says (chain indices); `per_segment` is told each real segment's
    figures (its calls' costs under the chain's schedule) and its chain's best schedule's (whether
    advice there is right is the chain's: its restarts move the compactions of the segments after)."""
    sums: dict[str, list[float]] = {p: [] for p in names}
    usd_sums: dict[str, list[float]] = {p: [] for p in names}
    restarts: dict[str, list[int]] = {p: [] for p in names}
    priced = True
    for ch in chained:
        chosen = points(ch)
        # a policy without a restart costs the real calls (`schedule_costs([])` is `actual`): their sums, once
        costs = {name: ch.schedule_costs(ks) for name, ks in chosen.items() if ks}
        whole = _policy(*ch.total(costs.get("hindsight", ch.actual)), *ch.total(ch.actual), []) \
            if per_segment is not None else None
        # each policy's restarts by segment, in their order (a pass over them, not one per segment)
        by_seg: dict[str, list[list[int]]] = {name: [[] for _ in ch.segs] for name in chosen}
        for name, ks in chosen.items():
            for k in ks:
                if 0 <= k < len(ch.calls):
                    by_seg[name][bisect_right(ch.starts, k) - 1].append(ch.calls[k].call)
        for b, seg in enumerate(ch.segs):
            lo = ch.starts[b]
            hi = lo + len(seg.calls)
            priced = priced and seg.priced()
            base_units, base_usd = seg.total(seg.actual)
            pol: dict[str, Policy] = {}
            for name, ks in chosen.items():
                units, usd = seg.total(costs[name][lo:hi]) if ks else (base_units, base_usd)
                after = by_seg[name][b]
                pol[name] = _policy(units, usd, base_units, base_usd, after)
                sums[name].append(units)
                usd_sums[name].append(usd or 0.0)
                restarts[name].extend(after)
            if per_segment is not None and whole is not None:
                per_segment(seg, pol, whole)
    base_units = math.fsum(sums["actual"])
    base_usd = math.fsum(usd_sums["actual"]) if priced else None
    policies = {
        name: _policy(math.fsum(sums[name]), math.fsum(usd_sums[name]) if priced else None,
                      base_units, base_usd, restarts[name])
        for name in names
    }
    return policies, priced, restarts


# ----------------------------------------------------------------------------- stability

def percentile(values: Sequence[float], q: float) -> float | None:
    """The q-th percentile (0-100), linear between closest ranks (numpy's default); None if empty."""
    if not values:
        return None
    v = sorted(values)
    pos = (len(v) - 1) * q / 100
    lo = math.floor(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def stability(calls: Sequence[Call]) -> Stability:
    """Issue 12's and 24's steadiness targets: lamp changes (<= 1 per 20 calls, <= 0.05 per call within
    a segment), xSweet's call-to-call move within a segment (<= 10 % at the 95th percentile), g at its
    floor after a segment's 10th call (<= 5 % of those calls)."""
    changes = sum(1 for a, b in pairwise(calls) if a.lamp != b.lamp)
    within = 0
    worst: float | None = None
    for seg in by_segment(calls):
        n = sum(1 for a, b in pairwise(seg) if a.lamp != b.lamp)
        within += n
        if len(seg) >= LAMP_SEGMENT:
            worst = max(worst or 0.0, n / len(seg))
    moves = [abs(b.x_sweet / a.x_sweet - 1) for a, b in pairwise(calls)
             if a.segment == b.segment and a.x_sweet and b.x_sweet is not None]
    late = [c.g for seg in by_segment(calls) for c in seg[STABLE_AFTER:] if c.g is not None]
    at_floor = sum(1 for g in late if g <= G_MIN + 1e-6)
    p95 = percentile(moves, 95)
    return {
        "lampChanges": changes,
        "callsPerLampChange": round(len(calls) / changes, 2) if changes else None,
        "lampChangesPerCall": round(within / len(calls), 4) if calls else None,
        "lampWorstSegment": rounded(worst, 4),
        "xSweetMoveP95": rounded(p95, 4),
        "gFloorShare": round(at_floor / len(late), 4) if late else None,
        "gFloorCalls": at_floor,
        "lateCalls": len(late),
    }


# ----------------------------------------------------------------------------- totals

def totals(sessions: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Summed over the priced sessions (dollars add up across models; read units do not), with the
    median and minimum of the sessions' captures; `capture` is the dollars' (sum of the advice's
    savings over the sum of the best schedules')."""
    priced = [s for s in sessions if s["priced"]]
    base = math.fsum(s["policies"]["actual"]["usd"] for s in priced)
    policies: dict[str, dict[str, float | None]] = {}
    for name in POLICIES:
        usd = math.fsum(s["policies"][name]["usd"] for s in priced)
        policies[name] = {
            "usd": round(usd, 6),
            "savingUsd": round(base - usd, 6),
            "savingPct": round(100 * (base - usd) / base, 3) if base > 0 else None,
        }
    caps = sorted(s["capture"] for s in sessions if s["capture"] is not None)
    gaps = [s["restartGaps"]["median"] for s in sessions if s["restartGaps"]["median"] is not None]
    return {
        "sessions": len(sessions),
        "pricedSessions": len(priced),
        "calls": sum(s["calls"] for s in sessions),
        "policies": policies,
        "capture": _capture(policies["alert"], policies["hindsight"]),
        "captureMedian": rounded(percentile(caps, 50), 4),
        "captureMin": caps[0] if caps else None,
        "costMore": sum(1 for s in sessions if s["policies"]["alert"]["savingUnits"] < 0),
        "restartGapMin": min(gaps) if gaps else None,
        "alertInFlatSegment": sum(s["alertInFlatSegment"] for s in sessions),
    }


# ----------------------------------------------------------------------------- one sentence

def _amount(p: Mapping[str, Any], usd_key: str, units_key: str) -> str:
    from session_watcher.core.numbers import dollars, tokens

    v = p[usd_key]
    if v is not None:
        return dollars(abs(v))
    return f"{tokens(abs(p[units_key]))} read-price tokens"


def sentence(doc: Mapping[str, Any], advice: bool = True) -> str:
    """The session page's line: what following the advice would have saved, and the best schedule
    (`advice` False: the best schedule only, for a document whose advice was not followed)."""
    pol = doc["policies"]
    best, alert = pol["hindsight"], pol["alert"]
    if not best["restartsAfter"]:
        return "No restart would have made this session cheaper."
    n_best = len(best["restartsAfter"])
    best_text = f"{_amount(best, 'savingUsd', 'savingUnits')} ({best['savingPct']:.0f} %) " \
                f"with {n_best} restart{'s' if n_best != 1 else ''}"
    if not advice:
        return f"The best restarts would have saved {best_text}."
    if not alert["restartsAfter"]:
        return f"The advice never said to restart; the best restarts would have saved {best_text}."
    amount = _amount(alert, "savingUsd", "savingUnits")
    pct = alert["savingPct"] or 0.0
    n = len(alert["restartsAfter"])
    times = f"restarting {n} time{'s' if n != 1 else ''}"
    if alert["savingUnits"] < 0:
        return f"Following the advice ({times}) would have cost {amount} more ({-pct:.0f} %); the best " \
               f"restarts would have saved {best_text}."
    return f"Following the advice ({times}) would have saved {amount} ({pct:.0f} %); the best restarts, {best_text}."
