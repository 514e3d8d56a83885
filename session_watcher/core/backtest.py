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
which is what lets `Segment.best_schedule` find the best of all schedules in O(n^2).

Policies: `actual`; `alert` and `sweetSpot` (closed loop: the restarts come in, see
core.closedloop); `hindsight` (the best schedule, any number of restarts per segment);
`hindsight1` (the best single restart per segment).
"""

from __future__ import annotations

import math
from bisect import insort
from itertools import pairwise
from typing import TYPE_CHECKING, Any, NamedTuple, TypedDict

from session_watcher.core import prices
from session_watcher.core.eoq import G_MIN, fresh_split, real_request

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence

    from session_watcher.core.chains import Auto, Chain

POLICIES = ("actual", "alert", "sweetSpot", "hindsight", "hindsight1")
CLOSED_LOOP = ("alert", "sweetSpot")  # their restarts come from core.closedloop.follow
FLAT_SEGMENT_PCT = 2.0  # SPEC target: no alert in a segment whose best restart saves under 2 %
MISS_MIN_TOKENS = 1000  # SPEC "Per API call": the miss rule
MISS_SHARE = 0.02
STABLE_AFTER = 10  # g's floor share counts calls after a segment's 10th
LAMP_SEGMENT = 20  # a segment shorter than this has no lamp rate of its own (one change there is 5 %+)


class Call(NamedTuple):
    """One main-chain API call of `replay`'s trace: what the backtest and the pricing of the restarts
    taken (core.restarts) read of it. The one call type of the package's trace (`call_from_trace`)."""

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
    ts: float | None = None  # when it was made
    inp: int = 0  # its uncached input (total = inp + cr + cw5m + cw1h)

    @property
    def ttl(self) -> str | None:
        """The cache class it wrote to: "1h", "5m", or None when it wrote nothing."""
        return "1h" if self.cw1h > 0 else "5m" if self.cw5m > 0 else None


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
    u = row.get("usage") or {}
    inp, cr, cw = _int(u.get("in")), _int(u.get("cr")), _int(u.get("cw"))
    cw1h = min(_int(u.get("cw1h")), cw)
    ts = row.get("ts")
    kinds = {a.get("kind") for a in row.get("alerts") or () if isinstance(a, dict)}
    b_default = row.get("bDefault")
    others = u.get("iter")
    extra = tuple((it[0] if isinstance(it[0], str) else None, _int(it[1]), _int(it[2]), _int(it[3]))
                  for it in others if isinstance(it, list | tuple) and len(it) == 4) if others else ()
    return Call(
        call=_int(row.get("call")),
        segment=_int(row.get("segment")),
        total=inp + cr + cw,
        b_default=int(b_default) if isinstance(b_default, int | float) else None,
        cr=cr, cw5m=cw - cw1h, cw1h=cw1h,
        model=u.get("model") or row.get("model"),
        x=_num(row.get("x")), x_sweet=_num(row.get("xSweet")), g=_num(row.get("g")),
        lamp=row.get("lamp"), gate="gate" in kinds, guard="guard" in kinds, extra=extra,
        ts=float(ts) if isinstance(ts, int | float) and not isinstance(ts, bool) else None, inp=inp,
    )


def calls_from_trace(rows: Iterable[Mapping[str, Any]]) -> list[Call]:
    return [call_from_trace(r) for r in rows]


def shared_prefix(status: Mapping[str, Any] | None, calls: Sequence[Call]) -> int:
    """The status document's `shared`, else the first call's cache read (0 without calls)."""
    v = (status or {}).get("shared")
    if isinstance(v, int | float) and not isinstance(v, bool):
        return int(v)
    return next((c.cr for c in calls if real_request(c.total)), 0)


# ----------------------------------------------------------------------------- one segment

class _Priced(NamedTuple):
    """Per call: its write prices in its model's read units, and what one read unit costs in USD."""

    w5m: float
    w1h: float
    usd: float | None


def _price(model: str | None) -> _Priced:
    rm = prices.read_multiplier(model)
    base = prices.input_price(model)
    return _Priced(prices.write_multiplier(model) / rm, prices.write_1h_multiplier(model) / rm,
                   None if base is None else base * rm / 1e6)


class Segment:
    """The calls of one segment with what the counterfactual needs precomputed."""

    def __init__(self, calls: Sequence[Call], shared: int) -> None:
        self.calls = list(calls)
        self.shared = max(0, shared)
        known: dict[str | None, _Priced] = {}  # a session's calls name a model or two
        self.price = [known[c.model] if c.model in known else known.setdefault(c.model, _price(c.model))
                      for c in self.calls]
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
            if not real_request(c.total):  # no L of its own (eoq.real_request)
                continue
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

    def _drop(self, k: int) -> tuple[int, int]:
        """(what a restart after call k carries from it, D = what every later call carries less)."""
        ck = self.calls[k]
        bd = min(ck.b_default if ck.b_default is not None else ck.total, ck.total)
        return bd, ck.total - bd

    def fresh_usage(self, k: int) -> tuple[int, int, int]:
        """(cr, cw5m, cw1h) of call k+1 as a fresh session's first call, after a restart after call k:
        it carries S = Bd + T(k+1) - T(k), reads the shared prefix and writes the rest at its class."""
        bd, _drop = self._drop(k)
        carry = max(0, bd + self.calls[k + 1].total - self.calls[k].total)
        read, written = fresh_split(carry, self.shared)
        if self.ttl[k + 1] == "1h":
            return int(read), 0, int(written)
        return int(read), int(written), 0

    def lighter_usage(self, j: int, drop: int) -> tuple[int, int, int]:
        """(cr, cw5m, cw1h) of call j carrying `drop` fewer tokens: its re-write of old context shrinks
        first (in its own TTL class), then its cache read; nothing below 0."""
        c = self.calls[j]
        cut = min(drop, self.rewrite[j])
        own, other = (c.cw1h, c.cw5m) if self.ttl[j] == "1h" else (c.cw5m, c.cw1h)
        from_own = min(cut, own)
        own, other = own - from_own, other - min(cut - from_own, other)
        w1h, w5m = (own, other) if self.ttl[j] == "1h" else (other, own)
        return max(0, c.cr - (drop - cut)), w5m, w1h

    def _restart_call(self, k: int) -> float:
        """Call k+1 as a fresh session's first call, in read units (its other iterations as they were,
        its own earlier `message` iterations sparing what the restart shed)."""
        cr, w5m, w1h = self.fresh_usage(k)
        p = self.price[k + 1]
        return cr + w5m * p.w5m + w1h * p.w1h + self._extra(self.calls[k + 1], p, self._drop(k)[1])

    def _lighter_call(self, j: int, drop: int) -> float:
        """Call j carrying `drop` fewer tokens, in read units (its other iterations likewise)."""
        cr, w5m, w1h = self.lighter_usage(j, drop)
        p = self.price[j]
        return cr + w5m * p.w5m + w1h * p.w1h + self._extra(self.calls[j], p, drop)

    def costs(self, k: int | None) -> list[float]:
        """Each call's cost in its model's read units with a restart after call index k (None: none)."""
        return self.schedule_costs([] if k is None else [k])

    def schedule_costs(self, restarts: Iterable[int]) -> list[float]:
        """Each call's cost in read units with a restart after each of the call indices `restarts`
        (any number; one after the last call changes nothing): a call costs what the last restart
        before it makes it cost."""
        n = len(self.calls)
        out = list(self.actual)
        points = sorted({k for k in restarts if 0 <= k < n - 1})
        for i, k in enumerate(points):
            out[k + 1] = self._restart_call(k)
            _bd, drop = self._drop(k)
            for j in range(k + 2, points[i + 1] + 1 if i + 1 < len(points) else n):
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

    def best_schedule(self) -> list[int]:
        """The cheapest schedule of restarts (call indices, any number), [] when none beats the real
        session: a dynamic programme over the last restart before each call.

        Walking the calls in order, each candidate is a schedule's last restart so far (or none), with
        what it sheds (D) and the value of the calls up to here under it; after each call the cheapest
        candidate is also where a restart after this call starts from. A candidate that sheds no more
        than another and costs no less never catches up (a later call costs no more the more is shed:
        the lighter call is monotone in D), so it is dropped: the candidates alive are those of the
        last cycle or two, and the work is O(n^2) at worst, about O(n * cycle) on real sessions.
        """
        n = len(self.calls)
        if n < 2:
            return []
        w = self.weights()
        act = [a * wj for a, wj in zip(self.actual, w, strict=True)]
        drops = [self._drop(k)[1] for k in range(n)]
        # a call whose lighter cost is its cost less D read units (no miss, no other iteration to price)
        plain = [not r and not c.extra for r, c in zip(self.rewrite, self.calls, strict=True)]
        last: list[int] = [-1, 0]  # per candidate: its last restart (-1: none yet)
        shed: list[int] = [0, drops[0]]  # what it sheds
        value: list[float] = [act[0], act[0]]  # the value of calls 0..r under it
        back: dict[int, int] = {0: -1}  # restart -> the restart before it on its cheapest schedule
        for r in range(1, n):
            a_r, w_r, cr_r = act[r], w[r], self.calls[r].cr
            for i, q in enumerate(last):
                d = shed[i]
                if q == r - 1:
                    value[i] += self._restart_call(q) * w_r
                elif not d:
                    value[i] += a_r
                elif plain[r] and cr_r >= d:
                    value[i] += a_r - d * w_r
                else:
                    value[i] += self._lighter_call(r, d) * w_r
            if len(last) > 1:  # the alive ones: by D falling, each cheaper than all that shed more
                alive: list[int] = []
                low = math.inf
                order = sorted(zip([-d for d in shed], value, range(len(last)), strict=True))  # i: as a stable sort
                for _d, v, i in order:
                    if v < low:
                        alive.append(i)
                        low = v
                last, shed, value = [last[i] for i in alive], [shed[i] for i in alive], [value[i] for i in alive]
            # values fall strictly along the alive: the last is the cheapest
            if r < n - 1:
                back[r] = last[-1]
                last.append(r)
                shed.append(drops[r])
                value.append(value[-1])
        best = len(last) - 1
        if value[best] >= math.fsum(act) * (1 - 1e-12):  # a tie within rounding is no saving
            return []
        out: list[int] = []
        k = last[best]
        while k >= 0:
            out.append(k)
            k = back[k]
        return out[::-1]


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


def segments(calls: Sequence[Call], shared: int) -> list[Segment]:
    return [Segment(seg, shared) for seg in _segments(calls)]


def chains(segs: Sequence[Segment], autos: Mapping[int, Auto] | None) -> list[Chain]:
    """The segments joined by the automatic compactions `autos` (core.chains)."""
    from session_watcher.core.chains import chains as joined

    return joined(segs, autos)


def _local(seg: Segment, calls: Iterable[int]) -> list[int]:
    """Restarts given as call numbers (1-based, the transcript's), as indices into `seg`."""
    first = seg.calls[0].call
    return sorted({n - first for n in calls if 0 <= n - first < len(seg.calls) - 1})


def _gaps(restarts: Sequence[int]) -> dict[str, float | int | None]:
    """Calls between consecutive restarts: how often the advice asks (median, shortest)."""
    gaps = [b - a for a, b in pairwise(sorted(restarts))]
    return {"count": len(gaps), "median": _round(percentile(gaps, 50), 1), "min": min(gaps) if gaps else None}


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


def best_restarts(calls: Sequence[Call], shared: int) -> dict[str, Any]:
    """`backtest`'s policies `actual`, `alert` (no advice followed: no restart) and `hindsight`, the
    same figures, and nothing else (the session page's line where the closed loop is not run)."""
    def points(ch: Chain) -> dict[str, list[int]]:
        return {"actual": [], "alert": [], "hindsight": ch.best()[0]}

    return {"policies": _policies(chains(segments(calls, shared), None), ("actual", "alert", "hindsight"),
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
        costs = {name: ch.schedule_costs(ks) for name, ks in chosen.items()}
        whole = _policy(*ch.total(costs.get("hindsight", ch.actual)), *ch.total(ch.actual), [])
        for b, seg in enumerate(ch.segs):
            lo = ch.starts[b]
            hi = lo + len(seg.calls)
            priced = priced and seg.priced()
            base_units, base_usd = seg.total(seg.actual)
            pol: dict[str, Policy] = {}
            for name, ks in chosen.items():
                units, usd = seg.total(costs[name][lo:hi])
                after = [ch.calls[k].call for k in ks if lo <= k < hi]
                pol[name] = _policy(units, usd, base_units, base_usd, after)
                sums[name].append(units)
                usd_sums[name].append(usd or 0.0)
                restarts[name].extend(after)
            if per_segment is not None:
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
    for seg in _segments(calls):
        n = sum(1 for a, b in pairwise(seg) if a.lamp != b.lamp)
        within += n
        if len(seg) >= LAMP_SEGMENT:
            worst = max(worst or 0.0, n / len(seg))
    moves = [abs(b.x_sweet / a.x_sweet - 1) for a, b in pairwise(calls)
             if a.segment == b.segment and a.x_sweet and b.x_sweet is not None]
    late = [c.g for seg in _segments(calls) for c in seg[STABLE_AFTER:] if c.g is not None]
    at_floor = sum(1 for g in late if g <= G_MIN + 1e-6)
    p95 = percentile(moves, 95)
    return {
        "lampChanges": changes,
        "callsPerLampChange": round(len(calls) / changes, 2) if changes else None,
        "lampChangesPerCall": round(within / len(calls), 4) if calls else None,
        "lampWorstSegment": _round(worst, 4),
        "xSweetMoveP95": _round(p95, 4),
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
        "captureMedian": _round(percentile(caps, 50), 4),
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
