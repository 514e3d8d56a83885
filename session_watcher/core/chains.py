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
from typing import TYPE_CHECKING, NamedTuple

from session_watcher.core.eoq import fresh_split, real_request

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping, Sequence

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
        _inp, cr, w5m, w1h = usage
        p = seg.price[i]
        return cr + w5m * p.w5m + w1h * p.w1h + seg._extra(seg.calls[i], p, drop)

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

        Every restart's trail is walked at once, call by call (`_price_all`). Trails in the same
        state (`Walk`) cost the same from there on, so the state is priced once for all of them, and
        of their restarts only those that may still win are kept (`_staircase`). The states alive at
        once are about a cycle's restarts (they meet again at each compaction the trails keep or
        move): O(n * cycle), not O(n^2), with the figures of walking each trail to the end (the same
        sums, term for term; ties to the earlier restart; `_margin`)."""
        if len(self.segs) == 1:
            return self.segs[0].best_schedule(), self.segs[0].best_point() if single else None
        w = self.weights()
        actual = [a * wj for a, wj in zip(self.actual, w, strict=True)]
        real = math.fsum(actual)
        prefix = [0.0]
        for a in actual:
            prefix.append(prefix[-1] + a)
        open_ = set(self.points())
        back: dict[int, int] = {}  # restart -> the restart before it on its cheapest schedule
        margin = self._margin(w)
        cheapest, alone = _Runs(margin), _Runs(margin)  # no restart is none alone
        cheapest.add(self._start(-1), math.inf, 0.0, -1)
        kinds = (cheapest, alone) if single else (cheapest,)
        born: list[tuple[float, int] | None] = [None, None]  # a restart after the last call: its sums, it
        for j in range(len(self.calls)):
            self._price_all(j, kinds, w[j], born)
            if j in open_:  # the cheapest way to a restart after call j (ties: the earliest restart)
                acc, k = cheapest.least()
                back[j] = k
                born = [(acc, j), (prefix[j + 1], j)]
            else:
                born = [None, None]
        end_v, end_from = cheapest.least()
        one_v, one = real, None
        for k, v in sorted(zip(alone.ks, alone.sums, strict=True)):
            if v < one_v * (1 - 1e-12):
                one_v, one = v, k
        if end_v >= real * (1 - 1e-12):
            return [], one
        out: list[int] = []
        k = end_from
        while k >= 0:
            out.append(k)
            k = back[k]
        return out[::-1], one

    def _price_all(self, j: int, kinds: tuple[_Runs, ...], wj: float, born: list[tuple[float, int] | None]) -> None:
        """Call j added to every restart's sums (and the restart after call j - 1 `born`: its sums
        of each kind), its cost (times `wj`) priced once per state, each state moved to the one after
        it. A call that only carries D fewer (or more) tokens than the real one and moves no
        compaction, as most do, is priced in one pass over the sums as `_step` prices it (the same
        terms in the same order) and leaves the state as it was."""
        t = self.prompt
        seg, i = self.where[j]
        c, p = seg.calls[i], seg.price[i]
        # a call priced alike for every state but those `due`: one that carries D fewer (or more) tokens;
        # a failed request (no compaction moves before it), as it was
        plain = j not in self.boundary and not seg.rewrite[i] and not c.extra
        real = real_request(t[j])
        # a float's D and cache read (ints under 2**53: exact, so `cr - d` and the rest are the same floats
        # the ints give), each term float by float (an int's and a float's sum takes a slower path)
        cr, w5m, w1h, tj = float(c.cr), c.cw5m * p.w5m, c.cw1h * p.w1h, float(t[j]) if real else -math.inf
        stepped: dict[Walk, tuple[float, Walk, float]] = {}  # a state's cost, the state after, its `due`

        def step(now: Walk) -> tuple[float, Walk, float]:
            got = stepped.get(now)
            if got is None:
                usage, _compact, after = self._call(j, now)
                got = stepped[now] = (self._units(j, usage, after[0]) * wj, after, self._due(after))
            return got

        for runs, new in zip(kinds, born, strict=False):  # born: one for each kind
            sums = runs.sums
            if not plain:  # every state stepped (`was`: its sum before, in `due`'s order)
                due, was = list(range(len(sums))), sums
            else:  # D 0: its actual; a write term 0.0 adds nothing (most calls write to one cache)
                due = [n for n, at in enumerate(runs.due) if at <= tj] if runs.soonest <= tj else []
                was, ds = [sums[n] for n in due], runs.ds
                if not real:
                    a = seg.actual[i] * wj
                    runs.sums = [v + a for v in sums]
                elif not w1h or not w5m:
                    write = w5m or w1h
                    runs.sums = [v + ((cr - d if d < cr else 0.0) + write) * wj for v, d in zip(sums, ds, strict=True)]
                else:
                    runs.sums = [v + ((cr - d if d < cr else 0.0) + w5m + w1h) * wj
                                 for v, d in zip(sums, ds, strict=True)]
                sums = runs.sums
            for n, before in zip(due, was, strict=True):
                cost, after, at = step(runs.walks[n])
                sums[n] = before + cost
                runs.move(n, after, at)
            if due:
                runs.soonest = min(runs.due)
            if new is not None:
                cost, after, at = step(self._start(j - 1))
                runs.add(after, at, new[0] + cost, new[1])
            runs.merge()

    def _margin(self, w: Sequence[float]) -> float:
        """How much more than another in its state a restart may cost and still win (`_staircase`):
        the same costs are added to both sums, each addition off by at most 2^-53 of the sum, n times,
        and no sum is more than every call at its dearest (a context of at most twice the chain's
        largest: a lighter call carries less than the real one, a heavier no more than a compaction's
        tokens more; every token at the dearest write price, times `w`); besides, a best single
        restart beats an earlier one only by more than 1e-12 of its cost (`best`)."""
        top = 2 * max([*self.prompt, *(a.pre for a in self.autos)])
        dearest = 0.0
        for j, (seg, i) in enumerate(self.where):
            p = seg.price[i]
            dearest += (top * max(1.0, p.w5m, p.w1h) + seg._extra(seg.calls[i], p, -top)) * w[j]
        return (len(self.calls) * 2.0 ** -51 + 2e-12) * dearest

    def _due(self, walk: Walk) -> float:
        """The prompt from which the state's next call is more than a call carrying D fewer tokens:
        a held compaction's point less D; -inf: now (a fresh conversation's call, a whole context read)."""
        d, hold, fresh, cont = walk
        if fresh is not None or cont is not None:
            return -math.inf
        return math.inf if hold is None else self.points_at[hold] + d


class _Runs:
    """One kind of sum (the cheapest schedule with a restart the last so far, or a restart alone)
    of the restarts alive, in parallel lists: each one's state (`Walk`), its D and `due`
    (`Chain._due`), its sum and its restart. Of the restarts in one state only those that may still
    win are kept (`merge`)."""

    def __init__(self, margin: float) -> None:
        self.margin = margin
        self.walks: list[Walk] = []
        self.ds: list[float] = []  # each state's D as a float (`Chain._price_all`)
        self.due: list[float] = []
        self.sums: list[float] = []
        self.ks: list[int] = []
        self.met: list[Walk] = []  # states a restart just moved to that another restart is in
        self.count: dict[Walk, int] = {}
        self.soonest = math.inf  # the least `due`

    def add(self, walk: Walk, due: float, total: float, k: int) -> None:
        self.walks.append(walk)
        self.ds.append(float(walk[0]))
        self.due.append(due)
        self.sums.append(total)
        self.ks.append(k)
        self.soonest = min(self.soonest, due)
        self._enter(walk)

    def _enter(self, walk: Walk) -> None:
        n = self.count[walk] = self.count.get(walk, 0) + 1
        if n > 1:
            self.met.append(walk)

    def move(self, n: int, walk: Walk, due: float) -> None:
        """Restart n's state moved on to `walk`."""
        was = self.walks[n]
        if was != walk:
            self.count[was] -= 1
            if not self.count[was]:
                del self.count[was]
            self.walks[n], self.ds[n], self.due[n] = walk, float(walk[0]), due
            self._enter(walk)

    def least(self) -> tuple[float, int]:
        """The least sum and its restart (ties: the earliest, the first in the lists: restarts are
        added in their order)."""
        low = min(self.sums)
        return low, self.ks[self.sums.index(low)]

    def merge(self) -> None:
        """Of the restarts in each state several just met in, those that may still win (`_staircase`)."""
        if not self.met:
            return
        met = set(self.met)
        self.met = []
        ds = {float(walk[0]) for walk in met}  # D looked up first (as `ds` holds it): most states differ in D
        groups: dict[Walk, list[int]] = {}
        for n in [n for n, d in enumerate(self.ds) if d in ds and self.walks[n] in met]:
            groups.setdefault(self.walks[n], []).append(n)
        drop: list[int] = []
        for walk, ns in groups.items():
            kept = {n for _k, _v, n in _staircase([(self.ks[n], self.sums[n], n) for n in ns], self.margin)}
            drop += [n for n in ns if n not in kept]
            self.count[walk] = len(kept)
        for n in sorted(drop, reverse=True):
            del self.walks[n], self.ds[n], self.due[n], self.sums[n], self.ks[n]
        self.soonest = min(self.due, default=math.inf)


def _staircase(runs: list[tuple[int, float, int]], margin: float) -> list[tuple[int, float, int]]:
    """Restarts whose trails are in one state (the same costs from here on), as (restart, sum, ...),
    less those that cost no less than an earlier one (the same sums rounded alike never pass it,
    and a tie goes to the earlier) and those that cost more than a later one by more than `margin`
    (`Chain._margin`)."""
    kept: list[tuple[int, float, int]] = []
    for run in sorted(runs):
        if not kept or run[1] < kept[-1][1]:
            kept.append(run)
    low = kept[-1][1] + margin
    return [run for run in kept if run[1] <= low]


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
