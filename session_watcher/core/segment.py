"""One segment's calls priced with and without restarts: the counterfactual of the backtest (docs/backtest.md,
"What it computes"; `core.backtest` has the figures, `core.chains` joins segments across automatic
compactions). Pure."""

from __future__ import annotations

import math
from bisect import insort
from operator import mul
from typing import TYPE_CHECKING, NamedTuple

from session_watcher.core import prices
from session_watcher.core.eoq import fresh_split, real_request

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

MISS_MIN_TOKENS = 1000  # SPEC "Per API call": the miss rule
MISS_SHARE = 0.02


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


def by_segment(calls: Sequence[Call]) -> list[list[Call]]:
    """The calls cut into runs of one segment each, in order (the backtest's segments, and the
    restarts taken between them: `core.backtest`, `core.restarts`)."""
    out: list[list[Call]] = []
    for c in calls:
        if not out or out[-1][-1].segment != c.segment:
            out.append([])
        out[-1].append(c)
    return out



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
        self.unpriced = any(_price(m).usd is None for c in self.calls if c.extra for m, *_ in c.extra if m is not None)
        # each call's read unit in USD, when every call has one (`priced`): asked of every segment's totals
        self._usd = None if self.unpriced or any(p.usd is None for p in known.values()) else \
            [p.usd or 0.0 for p in self.price]
        self.actual = [c.cr + c.cw5m * p.w5m + c.cw1h * p.w1h + (self._extra(c, p, 0) if c.extra else 0.0)
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
        return self._usd is not None

    def total(self, costs: Sequence[float]) -> tuple[float, float | None]:
        """(read units, USD or None when a call's model has no dollar price)."""
        units = math.fsum(costs)
        if self._usd is None:
            return units, None
        if len(costs) != len(self._usd):
            raise ValueError("a cost for each call")
        return units, math.fsum(map(mul, costs, self._usd))

    def value(self, k: int | None) -> float:
        """What the policies are compared by: USD when every call is priced, else read units."""
        units, usd = self.total(self.costs(k))
        return usd if usd is not None else units

    def weights(self) -> list[float]:
        """What one read unit of each call is worth in the comparison: USD when priced, else 1."""
        if self._usd is None:
            return [1.0] * len(self.calls)
        return list(self._usd)

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
            a_r, w_r = act[r], w[r]
            top = self.calls[r].cr if plain[r] else 0  # a candidate shedding D up to this saves D on call r
            newest = value.pop()  # the restart after call r - 1, appended last
            value = [v + (a_r if not d else a_r - d * w_r if d <= top else self._lighter_call(r, d) * w_r)
                     for v, d in zip(value, shed, strict=False)]  # the newest not among them
            value.append(newest + self._restart_call(r - 1) * w_r)
            if len(last) > 1:  # the alive ones: by D falling, each cheaper than all that shed more
                alive: list[int] = []
                low = math.inf
                for i in _by_shed(shed, value):
                    v = value[i]
                    if v < low:
                        alive.append(i)
                        low = v
                if len(alive) < len(last) or alive[-1] != len(last) - 1:
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


def _by_shed(shed: list[int], value: list[float]) -> list[int]:
    """The candidates' indices sorted by (D falling, value, index) - all but the newest (the last)
    already are, D strictly falling (the alive ones of the call before): the newest goes where it
    sorts, after those that shed more or as much for no more."""
    k = len(shed) - 1
    dk, vk = shed[k], value[k]
    p = 0
    while p < k and (shed[p] > dk or (shed[p] == dk and value[p] <= vk)):
        p += 1
    return [*range(p), k, *range(p, k)]
