"""Restart schedules priced across the session's automatic compactions: the backtest's honest
counterfactual (docs/backtest.md, "Compactions in the counterfactual"). Pure.

A real automatic compaction happened because the real context reached the client's point. A
counterfactual that restarted carries less, so it need not reach it: the compaction happens in the
counterfactual only where its context reaches the point. A chain is the run of real segments joined
by automatic compactions; a restart's effect runs on across them:

* at a real automatic compaction (tokens before `pre`), the counterfactual carrying D fewer tokens
  reaches it when pre - D >= the point; then it compacts there as the real session did (from there
  on it is the real session again). Else it does not compact: its next real request reads its
  whole context from the cache (what it adds beyond the summary is not seen: nothing), and the later
  calls carry what they carry in the real session plus the difference (a miss re-writes it, else it
  is read), until
* the counterfactual's prompt would reach the point: the compaction it skipped happens before that
  call, carrying what the real one carried (the real segment's first prompt), as a restart does.

The point: the client's (the window less its reserve, `eoq.compact_reserve`, by client version),
never below the last prompt the real session sent without compacting, nor above where it compacted.
A user's restart starts a new conversation: a compaction the old one skipped is gone. A manual
compaction is the user's act and stays where it was (it ends the chain). One segment alone is priced
by `core.segment.Segment` itself (no compaction to move: the figures of before).
"""

from __future__ import annotations

import math
from heapq import heappop, heappush
from itertools import repeat
from operator import mul, sub
from typing import TYPE_CHECKING, NamedTuple

from session_watcher.core.eoq import fresh_split, real_request

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

    from session_watcher.core.segment import Call, Segment

    # the counterfactual between two calls: what it carries less than the real session (D), the
    # compaction it skipped (not yet come), the context the next call sends as a fresh conversation's
    # first, the call that reads the whole context (and that context)
    Walk = tuple[int, int | None, int | None, tuple[int, int] | None]


class Auto(NamedTuple):
    """A real automatic compaction, before the first call of a segment."""

    pre: int  # its tokens before (else the last call's prompt)
    point: float  # where the client compacts, as the counterfactual is tested against


class Step(NamedTuple):
    """One call of the counterfactual."""

    j: int  # its index in the chain
    usage: tuple[int, int, int, int] | None  # (in, cr, cw5m, cw1h); None: the real call's
    units: float  # its cost in its model's read units
    compact: str | None  # before it: "here" (a real compaction, kept), "skipped", "moved" (one skipped, now)


def point_of(client: float | None, pre: int, last_prompt: int) -> float:
    """The compaction's point: the client's, within [the last prompt sent without compacting, pre]."""
    top = pre if pre > 0 else last_prompt
    if client is None:
        return float(top)
    return float(min(top, max(client, last_prompt)))


class AutoWatch:
    """A real fold's automatic compactions, by the call number after them (`autos`), as the
    counterfactual takes them: the last compaction folded since the last call (its trigger and
    tokens before) and the client's point after that call. The closed loop's fold and the session
    page's trace feed one each (`compaction` before `call`, in the fold's order)."""

    def __init__(self) -> None:
        self.autos: dict[int, Auto] = {}
        self._seen: tuple[str | None, int] | None = None
        self._point: float | None = None
        self._last: Call | None = None

    def compaction(self, trigger: str | None, before: int | None) -> None:
        self._seen = (trigger, int(before or 0))

    def point(self, point: float | None) -> None:
        """The client's point after the last call, given after it (the page's trace prices it only
        where a compaction follows the call: only then is it read)."""
        self._point = point

    def call(self, c: Call, point: float | None) -> None:
        """Call `c` folded, the client's point after it `point` (None: its window unknown)."""
        got, last = self._seen, self._last
        if last is not None and c.segment != last.segment and got is not None and got[0] == "auto":
            self.autos[c.call] = Auto(got[1] or last.total, point_of(self._point, got[1], last.total))
        self._seen, self._point, self._last = None, point, c


class Chain:
    """Real segments joined by automatic compactions (`autos[b]` before `segs[b + 1]`)."""

    def __init__(self, segs: Sequence[Segment], autos: Sequence[Auto]) -> None:
        self.segs = list(segs)
        self.autos = list(autos)
        self.calls: list[Call] = [c for s in self.segs for c in s.calls]
        self.shared = self.segs[0].shared
        self.where = [(s, i) for s in self.segs for i in range(len(s.calls))]
        self.starts: list[int] = []
        at = 0
        for s in self.segs:
            self.starts.append(at)
            at += len(s.calls)
        self.boundary = {start: b for b, start in enumerate(self.starts[1:])}
        self.prompt = [c.total for c in self.calls]  # T = in + cr + cw
        self.actual = [a for s in self.segs for a in s.actual]  # each call's real cost, read units
        # per boundary: the first real request of the segment after it (its prompt is the compacted carry)
        self.first_real = [next((j for j in range(self.starts[b + 1], self.starts[b + 1] + len(s.calls))
                                 if real_request(self.prompt[j])), self.starts[b + 1])
                           for b, s in enumerate(self.segs[1:])]
        self.points_at = [a.point for a in self.autos]

    # ------------------------------------------------------------------ pricing one call

    def _units(self, j: int, usage: tuple[int, int, int, int] | None, drop: int) -> float:
        seg, i = self.where[j]
        if usage is None:
            return seg.actual[i]
        cr, w5m, w1h, extra = self._terms(j, usage, drop)
        return cr + w5m + w1h + extra

    def _terms(self, j: int, usage: tuple[int, int, int, int] | None, drop: int) -> tuple[int, float, float, float]:
        """Call j's cost in read units as the terms `_units` adds, in its order (None: the real call's):
        the tokens read, each class's writes times its price, its other iterations. `best` adds
        them exactly (their float sum rounds, and a call priced for every state at once cannot
        round as one priced alone)."""
        seg, i = self.where[j]
        c, p = seg.calls[i], seg.price[i]
        if usage is None:
            usage, drop = (c.inp, c.cr, c.cw5m, c.cw1h), 0
        _inp, cr, w5m, w1h = usage
        return cr, w5m * p.w5m, w1h * p.w1h, seg._extra(c, p, drop)

    def _shifted(self, j: int, d: int) -> tuple[int, int, int, int] | None:
        """Call j carrying d fewer tokens (d < 0: more): a lighter call as `Segment` prices it, or a
        heavier one whose miss re-writes the more (in its TTL class), else reads it."""
        if d == 0 or not real_request(self.prompt[j]):
            return None
        seg, i = self.where[j]
        c = seg.calls[i]
        if d > 0:
            return (c.inp, *seg.lighter_usage(i, d))
        more = -d
        if seg.rewrite[i] and seg.ttl[i] == "1h":
            return c.inp, c.cr, c.cw5m, c.cw1h + more
        if seg.rewrite[i]:
            return c.inp, c.cr, c.cw5m + more, c.cw1h
        return c.inp, c.cr + more, c.cw5m, c.cw1h

    def _fresh(self, j: int, carry: int) -> tuple[int, int, int, int]:
        """Call j as a fresh conversation's first call sending `carry` tokens."""
        seg, i = self.where[j]
        read, written = fresh_split(max(0, carry), seg.shared)
        if seg.ttl[i] == "1h":
            return 0, int(read), 0, int(written)
        return 0, int(read), int(written), 0

    # ------------------------------------------------------------------ the walk

    def trail(self, k: int) -> Iterator[Step]:
        """The counterfactual's calls after a restart after call k (-1: none), to the chain's end."""
        walk = self._start(k)
        for j in range(k + 1, len(self.calls)):
            step, walk = self._step(j, walk)
            yield step

    def _start(self, k: int) -> Walk:
        """Where a restart after call k (-1: none) leaves the counterfactual: nothing carried less
        than the real session and nothing pending, or the fresh conversation it sends next."""
        if k < 0:
            return 0, None, None, None
        seg, i = self.where[k]
        bd, d = seg._drop(i)
        return d, None, bd, None

    def _step(self, j: int, walk: Walk) -> tuple[Step, Walk]:
        """Call j of the counterfactual in the state `walk` leaves it (`Walk`), and the state after it:
        the calls after depend on nothing else."""
        usage, compact, after = self._call(j, walk)
        return Step(j, usage, self._units(j, usage, after[0]), compact), after

    def _call(self, j: int, walk: Walk) -> tuple[tuple[int, int, int, int] | None, str | None, Walk]:
        """`_step`'s call j as (its usage, `Step.compact`, the state after it)."""
        t = self.prompt
        d, hold, fresh, cont = walk
        compact = None
        b = self.boundary.get(j)
        if b is not None:
            auto = self.autos[b]
            pre = auto.pre or t[j - 1]
            if d <= 0 or pre - d >= auto.point:
                d, hold, fresh, cont, compact = 0, None, None, None, "here"
            else:
                r = self.first_real[b]
                cont = (r, pre - d)
                d, hold, fresh, compact = t[r] - (pre - d), b, None, "skipped"
        elif (hold is not None and fresh is None and cont is None and real_request(t[j])
              and real_request(t[j - 1]) and t[j] - d >= self.autos[hold].point):
            carry = t[self.first_real[hold]]
            fresh, d, hold, compact = carry, t[j - 1] - carry, None, "moved"
        if fresh is not None:
            usage: tuple[int, int, int, int] | None = self._fresh(j, fresh + t[j] - t[j - 1])
        elif cont is not None and cont[0] == j:
            usage, cont = (0, cont[1], 0, 0), None
        elif cont is not None:  # a failed request before the first real one: as it was
            usage = None
        else:
            usage = self._shifted(j, d)
        return usage, compact, (d, hold, None, cont)

    # ------------------------------------------------------------------ schedules

    def local(self, calls: Iterable[int]) -> list[int]:
        """Restarts given as call numbers (1-based), as indices into the chain (a segment's last call
        is no restart point)."""
        firsts = {c.call: j for j, c in enumerate(self.calls)}
        ends = {s - 1 for s in self.starts[1:]} | {len(self.calls) - 1}
        return sorted({firsts[n] for n in calls if n in firsts and firsts[n] not in ends})

    def points(self) -> list[int]:
        ends = {s - 1 for s in self.starts[1:]} | {len(self.calls) - 1}
        return [j for j in range(len(self.calls)) if j not in ends]

    def schedule_costs(self, restarts: Iterable[int]) -> list[float]:
        """Each call's cost in read units with a restart after each of the chain indices `restarts`."""
        if len(self.segs) == 1:
            return self.segs[0].schedule_costs(restarts)
        ends = set(self.points())
        starts = sorted(k for k in set(restarts) if k in ends)
        out = list(self.actual)  # before the first restart the real calls (no restart keeps every compaction)
        for n, k in enumerate(starts):
            stop = starts[n + 1] if n + 1 < len(starts) else len(self.calls) - 1
            for step in self.trail(k):
                out[step.j] = step.units
                if step.j >= stop:
                    break
        return out

    def total(self, costs: Sequence[float]) -> tuple[float, float | None]:
        """(read units, USD or None when a call's model has no dollar price), segment by segment."""
        units, usd = 0.0, 0.0
        priced = True
        for b, seg in enumerate(self.segs):
            u, d = seg.total(costs[self.starts[b]:self.starts[b] + len(seg.calls)])
            units += u
            priced = priced and d is not None
            usd += d or 0.0
        return units, usd if priced else None

    def weights(self) -> list[float]:
        if not all(s.priced() for s in self.segs):
            return [1.0] * len(self.calls)
        return [w for s in self.segs for w in s.weights()]

    def best(self, single: bool = True) -> tuple[list[int], int | None]:
        """(the cheapest schedule of restarts, the cheapest single restart: None without `single`), []
        and None when none beats the real session: a dynamic programme over the last restart (a
        restart's effect depends on the compactions it moves, so the one-segment pruning does not hold).

        Every restart's trail is walked at once, call by call (`_price`). Trails in the same state
        (`Walk`) cost the same from there on, so the state is priced once for all of them and only the
        cheapest of their restarts is kept (ties: the earliest). The states alive at once are about a
        cycle's restarts (they meet again at each compaction the trails keep or move): O(n * cycle)
        states, not O(n^2) calls.

        The sums are exact: each call's cost (its read units' terms, floats, `_terms`, times its
        weight, a float) as an integer in one fixed point (`_Fixed`; the weights as integers times
        one common factor, `_exact_best`),
        so no order of additions can round them apart: two restarts in one state keep their order, a
        tie is a tie. That lets a call that only carries D fewer tokens than the real one (most calls)
        be added to every state at once (`_Lazy`: a state's sum is its base plus what every state
        was added, less its D times the tokens' price so far), and the least sum found only when
        another may have passed it."""
        if len(self.segs) == 1:
            return self.segs[0].best_schedule(), self.segs[0].best_point() if single else None
        real = math.fsum(a * wj for a, wj in zip(self.actual, self.weights(), strict=True))
        if not math.isfinite(real):  # a call's float terms overflow as its cost: as a term infinite
            return [], None
        got = self._exact_best(single)
        if got is None:  # a cost no float holds: none is priced (as the real session's is not)
            return [], None
        (common, scale), (end_v, end_from), ones, back = got
        # a sum s is worth s * common / scale; compared with a float's exact fraction
        one_n, one_d = real.as_integer_ratio()
        below_n, below_d = (1 - 1e-12).as_integer_ratio()
        one = None
        for k, v in ones:
            if v * common * one_d * below_d < one_n * below_n * scale:  # v < one's * (1 - 1e-12)
                one_n, one_d, one = v * common, scale, k
        top_n, top_d = (real * (1 - 1e-12)).as_integer_ratio()
        if end_v * common * top_d >= top_n * scale:
            return [], one
        out: list[int] = []
        k = end_from
        while k >= 0:
            out.append(k)
            k = back[k]
        return out[::-1], one

    def _exact_best(self, single: bool
                    ) -> tuple[tuple[int, int], tuple[int, int], list[tuple[int, int]], dict[int, int]] | None:
        """`_best` in integers that hold every sum exactly, and (common, scale): a sum s is worth
        s * common / scale; None when a cost is infinite."""
        w = self.weights()
        # each weight an integer times one common factor: w[j] = q[j] * common / den, exactly (a
        # session's calls name a model or two: the weights converted once each)
        ratios = {x: x.as_integer_ratio() for x in set(w)}
        den = max(d for _n, d in ratios.values())
        nums = {x: n * (den // d) for x, (n, d) in ratios.items()}
        common = math.gcd(*nums.values()) or 1
        q = [nums[x] // common for x in w]
        # as many binary places as the real calls' terms have (Anthropic's prices: 0 or 1); a
        # counterfactual's term with more (fewer tokens at a long fraction's price) makes the pass again
        probe = _Fixed(0)
        for j in range(len(self.calls)):
            probe.terms(self._terms(j, None, 0))
        bits = probe.need
        while True:
            fixed = _Fixed(bits)
            end, ones, back = self._best(single, q, fixed)
            if not fixed.finite:
                return None
            if fixed.need <= bits:
                return (common, den << bits), end, ones, back
            bits = fixed.need

    def _best(self, single: bool, q: Sequence[int], fixed: _Fixed
              ) -> tuple[tuple[int, int], list[tuple[int, int]], dict[int, int]]:
        """(the least sum at the chain's end and its last restart, each restart's sum alone in order,
        the restart before each on its cheapest schedule), `q` the weights as integers."""
        open_ = set(self.points())
        back: dict[int, int] = {}  # restart -> the restart before it on its cheapest schedule
        cheapest, alone = _Lazy(), _Lazy()
        cheapest.put(-1, 0, self._start(-1), math.inf)  # no restart; it is none alone
        kinds = (cheapest, alone) if single else (cheapest,)
        born: list[tuple[int, int] | None] = [None, None]  # a restart after the last call: its sums, it
        prefix = 0  # the real calls' sum so far
        for j in range(len(self.calls)):
            self._price(j, kinds, q[j], born, fixed)
            if single:  # the real calls' sum: a restart alone's start
                prefix += q[j] * fixed.terms(self._terms(j, None, 0))
            if j in open_:  # the cheapest way to a restart after call j (ties: the earliest restart)
                acc, k = cheapest.least()
                back[j] = k
                born = [(acc, j), (prefix, j)]
            else:
                born = [None, None]
        ones = sorted((k, alone.total(k)) for k in alone.base)
        return cheapest.least(), ones, back

    def _price(self, j: int, kinds: tuple[_Lazy, ...], qj: int, born: list[tuple[int, int] | None],
               fixed: _Fixed) -> None:
        """Call j added to every restart's sums (and the restart after call j - 1 `born`: its sums of
        each kind), its cost (times `qj`) priced once per state, each state moved to the one after
        it. A call that only carries D fewer (or more) tokens than the real one and moves no
        compaction, as most do, is added to every state at once (`_Lazy.advance`): its cost is the
        call's cache read less D (nothing below 0) plus its writes, exactly what `_call` and
        `_units` price it at; only the states `due` are stepped one by one (`_stepper`), and the
        restart born before call j (`_born`); a failed request costs its real cost in every state."""
        t = self.prompt
        seg, i = self.where[j]
        c, p = seg.calls[i], seg.price[i]
        step: Callable[[Walk], tuple[int, Walk, float]] | None = None  # made when a state is stepped
        plain = j not in self.boundary and not seg.rewrite[i] and not c.extra
        tj: float | None = None  # every state stepped
        add = lift = 0
        if not plain:
            pass
        elif real_request(t[j]):  # D tokens fewer: its cache read less D, at one read unit each
            tj, lift = float(t[j]), qj << fixed.bits
            add = qj * fixed.terms((c.cr, c.cw5m * p.w5m, c.cw1h * p.w1h, 0.0))
        else:
            tj, add = -math.inf, qj * fixed.terms(self._terms(j, None, 0))
        moves = tj is not None and tj > 0 and real_request(t[j - 1])  # a held compaction may move now
        born_at: tuple[int, Walk] | None = None
        for runs, new in zip(kinds, born, strict=False):  # born: one for each kind
            taken = runs.take(tj)
            if moves and len(taken) > 1:
                taken = self._moved_once(j, taken)
            if taken and step is None:
                step = self._stepper(j, qj, fixed)
            out = [(k, total + cost, after, due) for k, walk, total in taken for cost, after, due in (step(walk),)] \
                if step is not None else []
            if plain:
                runs.advance(add, lift, c.cr)
            if new is not None:
                if born_at is None:
                    born_at = self._born(j, qj, fixed)
                out.append((new[1], new[0] + born_at[0], born_at[1], math.inf))
            for k, total, after, due in out:
                runs.put(k, total, after, due)

    def _born(self, j: int, qj: int, fixed: _Fixed) -> tuple[int, Walk]:
        """The first call of a restart after call j - 1 (not a segment's last: call j is no
        compaction's), as `_call` and `_units` price it (a fresh conversation, nothing held): its
        cost times `qj` and the state after it (whose `_due` is never: nothing held or pending)."""
        t = self.prompt
        seg, i = self.where[j]  # call j - 1's segment too
        bd, d = seg._drop(i - 1)  # `_start`'s
        read, written = fresh_split(max(0, bd + t[j] - t[j - 1]), seg.shared)  # `_fresh`'s
        w5m, w1h = (0, int(written)) if seg.ttl[i] == "1h" else (int(written), 0)
        c, p = seg.calls[i], seg.price[i]  # `_terms`'s
        terms = (int(read), w5m * p.w5m, w1h * p.w1h, seg._extra(c, p, d) if c.extra else 0.0)
        return qj * fixed.terms(terms), (d, None, None, None)

    def _stepper(self, j: int, qj: int, fixed: _Fixed) -> Callable[[Walk], tuple[int, Walk, float]]:
        """A state's call j, priced once per state: (its cost times `qj`, the state after, its `due`).
        At an automatic compaction, and at the whole context read after one the state skipped, as
        `_call` and `_units` price it, in place (where the call has no other iteration: no `_extra`);
        else by them."""
        t = self.prompt
        seg, i = self.where[j]
        stepped: dict[Walk, tuple[int, Walk, float]] = {}
        b = self.boundary.get(j)
        read = None if seg.calls[i].extra else qj << fixed.bits  # a token read, nothing else
        if b is not None:
            auto, r = self.autos[b], self.first_real[b]
            pre, point, held = auto.pre or t[j - 1], auto.point, self.points_at[b]
            as_was = qj * fixed.terms(self._terms(j, None, 0))

        def step(now: Walk) -> tuple[int, Walk, float]:
            d, hold, fresh, cont = now
            if read is not None and fresh is None:
                if b is not None:  # kept here, or skipped: carrying pre - d, read whole at r
                    if d <= 0 or pre - d >= point:
                        return as_was, (0, None, None, None), math.inf
                    d2 = t[r] - (pre - d)
                    if r == j:
                        return (pre - d) * read, (d2, b, None, None), held + d2
                    return as_was, (d2, b, None, (r, pre - d)), 0.0
                if cont is not None and cont[0] == j:
                    return cont[1] * read, (d, hold, None, None), math.inf if hold is None else self.points_at[hold] + d
            got = stepped.get(now)
            if got is None:
                usage, _compact, after = self._call(j, now)
                got = stepped[now] = (qj * fixed.terms(self._terms(j, usage, after[0])), after, self._due(after))
            return got

        return step

    def _moved_once(self, j: int, taken: list[tuple[int, Walk, int]]) -> list[tuple[int, Walk, int]]:
        """Of the restarts whose held compaction moves before real request j (`_call`), the cheapest
        (the earliest of equal sums) of each held compaction: the others cost as much from here on
        and meet it in one state (a fresh conversation carrying what the compaction did), so they
        are dropped before they are priced."""
        t, points = self.prompt, self.points_at
        out: list[tuple[int, Walk, int]] = []
        first: dict[int, int] = {}  # a held compaction -> where its cheapest is in `out`
        for run in taken:
            _k, (d, hold, fresh, cont), total = run
            if hold is None or fresh is not None or cont is not None or t[j] - d < points[hold]:
                out.append(run)
            elif hold not in first:
                first[hold] = len(out)
                out.append(run)
            elif (total, run[0]) < (out[first[hold]][2], out[first[hold]][0]):
                out[first[hold]] = run
        return out

    def _due(self, walk: Walk) -> float:
        """The prompt from which the state's next call is more than a call carrying D fewer tokens:
        a held compaction's point less D; -inf: now (a fresh conversation's call); 0: the next real
        request (it reads the whole context: the failed requests before it cost what they cost)."""
        d, hold, fresh, cont = walk
        if fresh is not None:
            return -math.inf
        if cont is not None:
            return 0.0
        return math.inf if hold is None else self.points_at[hold] + d


class _Fixed:
    """Floats as integers counting 2^-bits, exactly; `need`: the binary places of a float `bits`
    did not hold (its integer is then wrong: the pass is made again with them); `finite`: no float
    was infinite or not a number (a price of the user's so far from another that a cost overflows)."""

    def __init__(self, bits: int) -> None:
        self.bits = bits
        self.scale = 2.0 ** bits if bits <= 900 else None
        self.need = bits
        self.finite = True

    def __call__(self, x: float) -> int:
        if self.scale is not None:
            y = x * self.scale  # a power of two: exact
            if y.is_integer():
                return int(y)
        if not math.isfinite(x):
            self.finite = False
            return 0
        num, den = x.as_integer_ratio()
        places = den.bit_length() - 1
        if places > self.bits:
            self.need = max(self.need, places)
            return 0
        return num << (self.bits - places)

    def terms(self, xs: tuple[int, float, float, float]) -> int:
        """A call's terms (`Chain._terms`: the tokens read, then floats) summed exactly."""
        read, w5m, w1h, extra = xs
        scale = self.scale
        if scale is not None:  # `__call__`'s own first case, for the three floats at once
            a, b, c = w5m * scale, w1h * scale, extra * scale
            if a.is_integer() and b.is_integer() and c.is_integer():
                return (read << self.bits) + int(a) + int(b) + int(c)
        return (read << self.bits) + self(w5m) + self(w1h) + self(extra)


class _Lazy:
    """One kind of sum (the cheapest schedule with a restart the last so far, or a restart alone)
    of the restarts alive, by restart: each one's state (`Walk`), its D, its `due` (`Chain._due`)
    and its sum, held as `base + add - D * lift`: `add` and `lift` are what the calls priced at
    once added (`advance`: a call's cost at D = 0, and the price of the D tokens it does not read),
    so such a call touches no state. One restart a state (the cheapest, the earliest of equal
    sums); the least sum is looked for again only once `lift` reaches where another restart's sum
    may have come down to it (`until`: a sum with a larger D falls faster)."""

    def __init__(self) -> None:
        self.walk: dict[int, Walk] = {}
        self.d: dict[int, int] = {}
        self.base: dict[int, int] = {}
        self.due: dict[int, float] = {}
        self.at: dict[Walk, int] = {}  # a state -> the restart in it
        self.queue: list[tuple[float, int]] = []  # (due, restart), least first; some no longer so
        self.add = 0
        self.lift = 0
        self.top: float = -math.inf  # no D above it
        self.low: int | None = None  # the restart with the least sum (None: to be found)
        self.until: float = math.inf  # from this lift another sum may be no more than low's (lift is whole)

    def total(self, k: int) -> int:
        return self.base[k] + self.add - self.d[k] * self.lift

    def take(self, tj: float | None) -> list[tuple[int, Walk, int]]:
        """The restarts due at a prompt of `tj` (None: all), as (restart, state, sum), taken out."""
        if tj is None:
            ks = list(self.walk)
            self.queue = []
        else:
            ks = []
            queue, due = self.queue, self.due
            while queue and queue[0][0] <= tj:
                at, k = heappop(queue)
                if due.get(k) == at:
                    ks.append(k)
                    del due[k]  # a second entry of the same is passed by
        out = []
        for k in ks:
            walk = self.walk.pop(k)
            out.append((k, walk, self.base.pop(k) + self.add - self.d.pop(k) * self.lift))
            self.due.pop(k, None)
            del self.at[walk]
            if k == self.low:
                self.low = None
        return out

    def advance(self, add: int, lift: int, cr: int) -> None:
        """Every state's sum plus `add` less its D times `lift`, `cr` the call's cache read: a D above
        it reads nothing (its base lifted back by what it was taken too much)."""
        self.add += add
        self.lift += lift
        if lift and self.top > cr:
            for k, d in self.d.items():
                if d > cr:
                    self.base[k] += (d - cr) * lift
                    if k == self.low:
                        self.low = None
            self.top = max(self.d.values(), default=-math.inf)

    def put(self, k: int, total: int, walk: Walk, due: float) -> None:
        """Restart k in state `walk` with sum `total`, unless the one there is cheaper (or as cheap
        and earlier); else that one is dropped."""
        other = self.at.get(walk)
        if other is not None:
            was = self.total(other)
            if was < total or (was == total and other < k):
                return
            self._drop(other)
        d = walk[0]
        base = total - self.add + d * self.lift
        self.walk[k], self.d[k], self.base[k], self.due[k], self.at[walk] = walk, d, base, due, k
        if due != math.inf:
            heappush(self.queue, (due, k))
        self.top = max(self.top, d)
        low = self.low
        if low is not None:
            low_base, low_d = self.base[low], self.d[low]
            gap = base - low_base - (d - low_d) * self.lift  # its sum less the least one's
            if gap < 0 or (gap == 0 and k < low):
                self.low = None
            elif d > low_d:  # not more once lift reaches (base - low_base) / (d - low_d), rounded up
                self.until = min(self.until, -((low_base - base) // (d - low_d)))

    def _drop(self, k: int) -> None:
        del self.at[self.walk.pop(k)], self.d[k], self.base[k]
        self.due.pop(k, None)
        if k == self.low:
            self.low = None

    def least(self) -> tuple[int, int]:
        """The least sum and its restart (ties: the earliest)."""
        if self.low is None or self.lift >= self.until:
            # base, d and walk hold the restarts in one order (each added and dropped in all three)
            bases, ds = list(self.base.values()), list(self.d.values())
            sums = list(map(sub, bases, map(mul, ds, repeat(self.lift))))
            least = min(sums)
            keys = list(self.base)
            n = sums.index(least)
            if sums.count(least) > 1:
                n = min((keys[i], i) for i, v in enumerate(sums) if v == least)[1]
            self.low = keys[n]
            low_base, low_d = bases[n], ds[n]
            self.until = min([-((low_base - b) // (d - low_d)) for b, d in zip(bases, ds, strict=True) if d > low_d],
                             default=math.inf)
        return self.total(self.low), self.low


def chains(segs: Sequence[Segment], autos: Mapping[int, Auto] | None) -> list[Chain]:
    """The segments as chains: a segment whose first call (its `call` number) began after an automatic
    compaction in `autos` joins the chain before it."""
    out: list[Chain] = []
    run: list[Segment] = []
    joins: list[Auto] = []
    for seg in segs:
        auto = (autos or {}).get(seg.calls[0].call)
        if run and auto is not None:
            run.append(seg)
            joins.append(auto)
            continue
        if run:
            out.append(Chain(run, joins))
        run, joins = [seg], []
    if run:
        out.append(Chain(run, joins))
    return out
