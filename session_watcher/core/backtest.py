"""Backtest: what restarting at the advice would have cost, against the session's own history. Pure.

SPEC v2, "Backtest: is the advice right?". Input: one `Call` per main-chain API call of a session,
in order (`calls_from_trace` builds them from replay's trace rows), and the session's `shared`
prefix (cr of its first call). Output: plain JSON-able dicts.

Cost of a call, in read units of its own model (tokens x that model's cache-read price):
cr + cw5m * WRITE_5M / rm + cw1h * WRITE_1H / rm, rm = its cache-read multiplier; in dollars,
units x base input price x rm / 1e6 (core.prices). A cw not split by TTL counts as 5-minute.
Uncached input and output do not depend on when you restart and are left out.

Counterfactual, per segment (compactions stay where they happened). Restart after call k:

* call k+1 starts a fresh session carrying S = Bd + (T(k+1) - T(k)) tokens, T = in + cr + cw,
  Bd = min(bDefault(k), T(k)) (a restart never carries more than the session did); it reads
  min(shared, S) and writes the rest at call k+1's TTL class (floored at 0);
* every later call of the segment carries D = T(k) - Bd fewer tokens. Where the real call was a
  cache miss (SPEC: cr below the previous call's L by more than max(1,000, 2 %)), it re-wrote
  min(cw, L(n-1) - cr) tokens of old context: that re-write shrinks first, then the cache read;
  everything floors at 0.

Policies per segment: `actual`; `alert` (restart at the first advice: after the first `gate` call,
or before the first `guard` call, i.e. after the call before it, whichever is earlier); `sweetSpot`
(after the first call with x >= xSweet); `hindsight` (the cheapest single restart, or none).
"""

from __future__ import annotations

import math
from bisect import insort
from itertools import pairwise
from typing import TYPE_CHECKING, Any, NamedTuple, TypedDict

from session_watcher.core import prices
from session_watcher.core.eoq import G_MIN

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

POLICIES = ("actual", "alert", "sweetSpot", "hindsight")
FLAT_SEGMENT_PCT = 2.0  # SPEC target: no alert in a segment whose best restart saves under 2 %
MISS_MIN_TOKENS = 1000  # SPEC "Per API call": the miss rule
MISS_SHARE = 0.02
STABLE_AFTER = 10  # g's floor share counts calls after a segment's 10th


class Call(NamedTuple):
    """One main-chain API call as the backtest needs it."""

    call: int  # its number in the session (1-based)
    segment: int
    total: int  # T = in + cr + cw
    b_default: int | None
    cr: int
    cw5m: int
    cw1h: int  # cw5m + cw1h = the call's cw
    model: str | None
    x: float | None = None
    x_sweet: float | None = None
    g: float | None = None
    lamp: str | None = None
    gate: bool = False
    guard: bool = False
    # the call's other iterations when its usage lists several (the fields above are its context, the
    # last `message` iteration): (model, None for the call's own, cr, cw5m, cw1h) each
    extra: tuple[tuple[str | None, int, int, int], ...] = ()


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
    xSweetMoveP95: float | None
    gFloorShare: float | None
    gFloorCalls: int
    lateCalls: int


def _int(v: object) -> int:
    return int(v) if isinstance(v, int | float) and not isinstance(v, bool) else 0


def _num(v: object) -> float | None:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None


def call_from_trace(row: Mapping[str, Any]) -> Call:
    """A `replay` trace row (the status document after the call, plus its own usage and alerts)."""
    u = row.get("usage") or {}
    cr, cw = _int(u.get("cr")), _int(u.get("cw"))
    cw1h = min(_int(u.get("cw1h")), cw)
    kinds = {a.get("kind") for a in row.get("alerts") or () if isinstance(a, dict)}
    b_default = row.get("bDefault")
    extra = tuple((it[0] if isinstance(it[0], str) else None, _int(it[1]), _int(it[2]), _int(it[3]))
                  for it in u.get("iter") or () if isinstance(it, list | tuple) and len(it) == 4)
    return Call(
        call=_int(row.get("call")),
        segment=_int(row.get("segment")),
        total=_int(u.get("in")) + cr + cw,
        b_default=int(b_default) if isinstance(b_default, int | float) else None,
        cr=cr, cw5m=cw - cw1h, cw1h=cw1h,
        model=u.get("model") or row.get("model"),
        x=_num(row.get("x")), x_sweet=_num(row.get("xSweet")), g=_num(row.get("g")),
        lamp=row.get("lamp"), gate="gate" in kinds, guard="guard" in kinds, extra=extra,
    )


def calls_from_trace(rows: Iterable[Mapping[str, Any]]) -> list[Call]:
    return [call_from_trace(r) for r in rows]


def shared_prefix(status: Mapping[str, Any] | None, calls: Sequence[Call]) -> int:
    """The status document's `shared`, else the first call's cache read (0 without calls)."""
    v = (status or {}).get("shared")
    if isinstance(v, int | float) and not isinstance(v, bool):
        return int(v)
    return calls[0].cr if calls else 0


# ----------------------------------------------------------------------------- one segment

class _Priced(NamedTuple):
    """Per call: its write prices in its model's read units, and what one read unit costs in USD."""

    w5m: float
    w1h: float
    usd: float | None


def _price(model: str | None) -> _Priced:
    rm = prices.read_multiplier(model)
    base = prices.input_price(model)
    return _Priced(prices.WRITE_5M / rm, prices.WRITE_1H / rm, None if base is None else base * rm / 1e6)


class Segment:
    """The calls of one segment with what the counterfactual needs precomputed."""

    def __init__(self, calls: Sequence[Call], shared: int) -> None:
        self.calls = list(calls)
        self.shared = max(0, shared)
        self.price = [_price(c.model) for c in self.calls]
        self.unpriced = any(_price(m).usd is None for c in self.calls for m, *_ in c.extra if m is not None)
        self.actual = [c.cr + c.cw5m * p.w5m + c.cw1h * p.w1h + self._extra(c, p, 0)
                       for c, p in zip(self.calls, self.price, strict=True)]
        # the TTL class each call writes at (an unsplit or empty write inherits the last one seen)
        self.ttl: list[str] = []
        last = "5m"
        for c in self.calls:
            last = "1h" if c.cw1h > 0 else ("5m" if c.cw5m > 0 else last)
            self.ttl.append(last)
        # re-writes of old context after a cache miss (SPEC's miss rule, L as the spec defines it)
        self.rewrite = [0] * len(self.calls)
        big_l: int | None = None
        for i, c in enumerate(self.calls):
            cw = c.cw5m + c.cw1h
            if big_l is not None and c.cr < big_l - max(MISS_MIN_TOKENS, MISS_SHARE * big_l):
                self.rewrite[i] = min(cw, big_l - c.cr)
                big_l = c.cr + cw
            else:
                big_l = c.cr

    @staticmethod
    def _extra(c: Call, p: _Priced, drop: int) -> float:
        """The call's other iterations, in its own model's read units: its own earlier `message`
        iterations read the conversation too (`drop` fewer tokens each after a restart); another
        model's (an advisor's) cost what they cost, at that model's price."""
        total = 0.0
        for model, cr, cw5m, cw1h in c.extra:
            if model is None:
                total += max(0, cr - drop) + cw5m * p.w5m + cw1h * p.w1h
            else:
                q = _price(model)
                other = cr + cw5m * q.w5m + cw1h * q.w1h
                total += other * q.usd / p.usd if q.usd is not None and p.usd else 0.0
        return total

    def restart_points(self) -> range:
        """k such that a restart after call k changes something (not after the last call)."""
        return range(len(self.calls) - 1)

    def _drop(self, k: int) -> tuple[int, int]:
        """(what a restart after call k carries from it, D = what every later call carries less)."""
        ck = self.calls[k]
        bd = min(ck.b_default if ck.b_default is not None else ck.total, ck.total)
        return bd, ck.total - bd

    def _restart_call(self, k: int) -> float:
        """Call k+1 as a fresh session's first call: reads the shared prefix, writes the rest."""
        bd, _drop = self._drop(k)
        nxt, p = self.calls[k + 1], self.price[k + 1]
        carry = max(0, bd + nxt.total - self.calls[k].total)
        read = min(self.shared, carry)
        first = read + (carry - read) * (p.w1h if self.ttl[k + 1] == "1h" else p.w5m)
        return first + self._extra(nxt, p, self._drop(k)[1])

    def _lighter_call(self, j: int, drop: int) -> float:
        """Call j carrying `drop` fewer tokens: its re-write of old context shrinks first (in its own
        TTL class), then its cache read; nothing below 0."""
        c, p = self.calls[j], self.price[j]
        cut = min(drop, self.rewrite[j])
        own, other = (c.cw1h, c.cw5m) if self.ttl[j] == "1h" else (c.cw5m, c.cw1h)
        from_own = min(cut, own)
        own, other = own - from_own, other - min(cut - from_own, other)
        w1h, w5m = (own, other) if self.ttl[j] == "1h" else (other, own)
        return max(0, c.cr - (drop - cut)) + w5m * p.w5m + w1h * p.w1h + self._extra(c, p, drop)

    def costs(self, k: int | None) -> list[float]:
        """Each call's cost in its model's read units with a restart after call index k (None: none)."""
        out = list(self.actual)
        if k is None or not 0 <= k < len(self.calls) - 1:
            return out
        out[k + 1] = self._restart_call(k)
        _bd, drop = self._drop(k)
        for j in range(k + 2, len(self.calls)):
            out[j] = self._lighter_call(j, drop)
        return out

    def priced(self) -> bool:
        return not self.unpriced and all(p.usd is not None for p in self.price)

    def total(self, costs: Sequence[float]) -> tuple[float, float | None]:
        """(read units, USD or None when a call's model has no dollar price)."""
        units = math.fsum(costs)
        if not self.priced():
            return units, None
        return units, math.fsum(v * (p.usd or 0.0) for v, p in zip(costs, self.price, strict=True))

    def value(self, k: int | None) -> float:
        """What the policies are compared by: USD when every call is priced, else read units."""
        units, usd = self.total(self.costs(k))
        return usd if usd is not None else units

    def advice_point(self) -> tuple[int | None, str | None]:
        """Where the `alert` policy restarts (call index) and which advice it followed."""
        for i, c in enumerate(self.calls):
            if c.guard and i >= 1:
                return i - 1, "guard"
            if c.gate:
                return i, "gate"
        return None, None

    def sweet_point(self) -> int | None:
        for i, c in enumerate(self.calls):
            if c.x is not None and c.x_sweet is not None and c.x >= c.x_sweet:
                return i
        return None

    def weights(self) -> list[float]:
        """What one read unit of each call is worth in the comparison: USD when priced, else 1."""
        if not self.priced():
            return [1.0] * len(self.calls)
        return [p.usd or 0.0 for p in self.price]

    def values(self) -> list[float]:
        """value(k) for every restart point, in one pass instead of one per point.

        Every later call's cost drops by exactly D read units, except a call that re-wrote old
        context (a miss) or reads fewer than D tokens; those few are priced one by one. The calls
        after k, sorted by their cache read, are kept as k walks backwards, so each point looks
        only at the calls that read less than its D.
        """
        n = len(self.calls)
        w = self.weights()
        weighted = [a * wj for a, wj in zip(self.actual, w, strict=True)]
        before = [0.0] * (n + 1)  # before[i]: calls 0..i-1 as they were
        for i in range(n):
            before[i + 1] = before[i] + weighted[i]
        after_cost = after_weight = 0.0  # calls k+2.. as they were, and their weights
        by_read: list[tuple[int, int]] = []  # (cr, j) of the plain calls after k+1, sorted
        misses: list[int] = []  # calls after k+1 that re-wrote old context
        out = [0.0] * max(0, n - 1)
        for k in range(n - 2, -1, -1):
            j = k + 2
            if j < n:
                after_cost += weighted[j]
                after_weight += w[j]
                if self.rewrite[j] or self.calls[j].extra:  # priced one by one
                    misses.append(j)
                else:
                    insort(by_read, (self.calls[j].cr, j))
            _bd, drop = self._drop(k)
            v = before[k + 1] + self._restart_call(k) * w[k + 1] + after_cost - drop * after_weight
            for cr, jj in by_read:
                if cr >= drop:
                    break
                v += (drop - cr) * w[jj]  # its read floors at 0: it saves cr, not D
            for jj in misses:
                v += (self._lighter_call(jj, drop) - (self.actual[jj] - drop)) * w[jj]
            out[k] = v
        return out

    def best_point(self) -> int | None:
        """The cheapest single restart, or None when no restart beats the real session."""
        best, best_v = None, self.value(None)
        for k, v in enumerate(self.values()):
            if v < best_v * (1 - 1e-12):  # a tie within rounding is no saving
                best, best_v = k, v
        return best


# ----------------------------------------------------------------------------- figures

def _round(v: float | None, nd: int) -> float | None:
    return None if v is None else round(v, nd)


def _policy(units: float, usd: float | None, base_units: float, base_usd: float | None,
            restarts: list[int]) -> Policy:
    if usd is not None and base_usd is not None:
        saving_pct = 100 * (base_usd - usd) / base_usd if base_usd > 0 else None
    else:
        saving_pct = 100 * (base_units - units) / base_units if base_units > 0 else None
    return {
        "usd": _round(usd, 6),
        "units": round(units, 1),
        "savingUsd": None if usd is None or base_usd is None else round(base_usd - usd, 6),
        "savingUnits": round(base_units - units, 1),
        "savingPct": _round(saving_pct, 3),
        "restartsAfter": restarts,
    }


def _capture(alert: Mapping[str, Any], hindsight: Mapping[str, Any]) -> float | None:
    """saving(alert) / saving(hindsight), in USD when priced. None when the best restart saves under
    FLAT_SEGMENT_PCT: there the right advice is none (see `alertInFlatSegment`), and a ratio of two
    crumbs would call silence a failure."""
    pct = hindsight["savingPct"]
    if pct is None or pct < FLAT_SEGMENT_PCT:
        return None
    key = "savingUsd" if hindsight["savingUsd"] is not None else "savingUnits"
    best = hindsight[key]
    return round(float(alert[key]) / float(best), 4)


def _segments(calls: Sequence[Call]) -> list[list[Call]]:
    out: list[list[Call]] = []
    for c in calls:
        if not out or out[-1][-1].segment != c.segment:
            out.append([])
        out[-1].append(c)
    return out


def backtest(calls: Sequence[Call], shared: int) -> dict[str, Any]:
    """Per segment and for the session: each policy's cost and saving, capture, and stability."""
    seg_docs: list[dict[str, Any]] = []
    sums: dict[str, list[float]] = {p: [] for p in POLICIES}
    usd_sums: dict[str, list[float]] = {p: [] for p in POLICIES}
    restarts: dict[str, list[int]] = {p: [] for p in POLICIES}
    priced = True
    for seg_calls in _segments(calls):
        seg = Segment(seg_calls, shared)
        priced = priced and seg.priced()
        advice, kind = seg.advice_point()
        points = {"actual": None, "alert": advice, "sweetSpot": seg.sweet_point(), "hindsight": seg.best_point()}
        base_units, base_usd = seg.total(seg.actual)
        pol: dict[str, Policy] = {}
        for name, k in points.items():
            units, usd = seg.total(seg.costs(k))
            after = [seg.calls[k].call] if k is not None and k < len(seg.calls) - 1 else []
            pol[name] = _policy(units, usd, base_units, base_usd, after)
            sums[name].append(units)
            usd_sums[name].append(usd or 0.0)
            restarts[name].extend(after)
        fired = any(c.gate or c.guard for c in seg.calls)
        best_pct = pol["hindsight"]["savingPct"] or 0.0
        seg_docs.append({
            "segment": seg.calls[0].segment,
            "calls": len(seg.calls),
            "firstCall": seg.calls[0].call,
            "lastCall": seg.calls[-1].call,
            "advice": kind,
            "alertFired": fired,
            "bestSavingPct": round(best_pct, 3),
            "alertInFlatSegment": fired and best_pct < FLAT_SEGMENT_PCT,
            "capture": _capture(pol["alert"], pol["hindsight"]),
            "policies": pol,
        })
    base_units = math.fsum(sums["actual"])
    base_usd = math.fsum(usd_sums["actual"]) if priced else None
    policies = {
        name: _policy(math.fsum(sums[name]), math.fsum(usd_sums[name]) if priced else None,
                      base_units, base_usd, restarts[name])
        for name in POLICIES
    }
    models = [c.model for c in calls if c.model]
    return {
        "calls": len(calls),
        "segments": len(seg_docs),
        "model": models[-1] if models else None,
        "shared": shared,
        "priced": priced and bool(calls),
        "policies": policies,
        "capture": _capture(policies["alert"], policies["hindsight"]),
        "alertInFlatSegment": sum(1 for s in seg_docs if s["alertInFlatSegment"]),
        "segmentList": seg_docs,
        "stability": stability(calls),
    }


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
    """Issue 12's steadiness targets: lamp changes (<= 1 per 20 calls), xSweet's call-to-call move
    within a segment (<= 10 % at the 95th percentile), g at its floor after a segment's 10th call
    (<= 5 % of those calls)."""
    changes = sum(1 for a, b in pairwise(calls) if a.lamp != b.lamp)
    moves = [abs(b.x_sweet / a.x_sweet - 1) for a, b in pairwise(calls)
             if a.segment == b.segment and a.x_sweet and b.x_sweet is not None]
    late = [c.g for seg in _segments(calls) for c in seg[STABLE_AFTER:] if c.g is not None]
    at_floor = sum(1 for g in late if g <= G_MIN + 1e-6)
    p95 = percentile(moves, 95)
    return {
        "lampChanges": changes,
        "callsPerLampChange": round(len(calls) / changes, 2) if changes else None,
        "xSweetMoveP95": _round(p95, 4),
        "gFloorShare": round(at_floor / len(late), 4) if late else None,
        "gFloorCalls": at_floor,
        "lateCalls": len(late),
    }


# ----------------------------------------------------------------------------- totals

def totals(sessions: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Summed over the priced sessions (dollars add up across models; read units do not), with the
    median and minimum of the sessions' captures."""
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
    return {
        "sessions": len(sessions),
        "pricedSessions": len(priced),
        "calls": sum(s["calls"] for s in sessions),
        "policies": policies,
        "capture": _capture(policies["alert"], policies["hindsight"]),
        "captureMedian": _round(percentile(caps, 50), 4),
        "captureMin": caps[0] if caps else None,
        "alertInFlatSegment": sum(s["alertInFlatSegment"] for s in sessions),
    }


# ----------------------------------------------------------------------------- one sentence

def _amount(p: Mapping[str, Any], usd_key: str, units_key: str) -> str:
    from session_watcher.core.render import human

    v = p[usd_key]
    if v is not None:
        return f"${abs(v):,.2f}"
    return f"{human(abs(p[units_key]))} read-price tokens"


def sentence(doc: Mapping[str, Any]) -> str:
    """The session page's line: what restarting at the advice would have saved, and the best restart."""
    pol = doc["policies"]
    best, alert = pol["hindsight"], pol["alert"]
    if not best["restartsAfter"]:
        return "No single restart would have made this session cheaper."
    best_text = f"{_amount(best, 'savingUsd', 'savingUnits')} ({best['savingPct']:.0f} %)"
    if not alert["restartsAfter"]:
        return f"The advice never said to restart; the best single restart would have saved {best_text}."
    amount = _amount(alert, "savingUsd", "savingUnits")
    pct = alert["savingPct"] or 0.0
    if alert["savingUnits"] < 0:
        return f"Restarting at the advice would have cost {amount} more ({-pct:.0f} %); the best single " \
               f"restart would have saved {best_text}."
    return f"Restarting at the advice would have saved {amount} ({pct:.0f} %); the best single restart, {best_text}."
