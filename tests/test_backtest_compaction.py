"""The backtest's counterfactual and the session's automatic compactions (docs/backtest.md,
"Compactions in the counterfactual"): a restarted session's smaller context compacts where it
reaches the client's point, not where the real one did."""

from __future__ import annotations

import itertools
import math
import random
from fractions import Fraction
from typing import TYPE_CHECKING

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from bench.synth import Transcript
from session_watcher.base import config
from session_watcher.base.config import model_params
from session_watcher.core import backtest as bt
from session_watcher.core import closedloop, prices
from session_watcher.core.chains import Auto, _Lazy, point_of
from session_watcher.sessions import backtest as shell
from tests.calibration import LONG_FIXTURES, unpack

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from session_watcher.core.chains import Chain
    from session_watcher.core.engine import Resolved
    from session_watcher.core.shapes import Event, ModelParams, State

OPUS = "claude-opus-4-6"
W5 = 12.5  # a 5-minute write in read units


def call(n: int, seg: int, cr: int, cw: int = 0, bd: int | None = None) -> bt.Call:
    return bt.Call(call=n, segment=seg, total=cr + cw, b_default=cr + cw if bd is None else bd, cr=cr,
                   cw5m=cw, cw1h=0, model=OPUS)


def real_shaped(tmp_path: Path) -> Path:
    """A real Claude Code session (03a1382e, client 2.1.33, 200k window) cut 4 calls after its one
    automatic compaction (168,483 tokens before, call 159): its own lines, in their order."""
    lines = unpack("03a1382e-ecd5-42c4-b3d4-5c659e165904", tmp_path).read_bytes().splitlines()
    at = next(i for i, line in enumerate(lines) if b'"compact_boundary"' in line)
    after = [i for i in range(at, len(lines)) if b'"type":"assistant"' in lines[i]]
    out = tmp_path / "cut.jsonl"
    out.write_bytes(b"\n".join(lines[:after[12] + 1]) + b"\n")
    return out


class TestARealShapedSession:
    def test_the_advice_s_restarts_keep_the_context_under_the_point_and_it_never_compacts(
            self, tmp_path: Path) -> None:
        """The advice restarts four times before call 159 (the last at 148): the fresh session's
        context stays far under the 167k point, so in the counterfactual the client never compacts
        and the engine folds no compaction; the real session compacted once."""
        path = real_shaped(tmp_path)
        loaded = shell.load(str(path))
        cfg = model_params(shell.config_for(str(path), {}))
        real = loaded.fresh()
        seen = closedloop.observe(real, loaded.events, cfg, loaded.paths)
        assert real["engine"]["compactions"] == 1
        state = loaded.fresh()
        restarts = closedloop.follow(state, seen, cfg, "alert")
        assert restarts == [38, 76, 108, 148]
        assert state["engine"]["compactions"] == 0
        assert seen.autos == {159: Auto(168_483, 167_000.0)}  # the client's point, 200k less 33k

    def test_the_calls_after_it_are_priced_without_the_compaction(self, tmp_path: Path) -> None:
        """The real call 159 wrote the summary afresh; the restarted session, never compacting, reads
        its whole context from the cache there and carries it on, so the segment after the real
        compaction costs less under the advice than it did (before: the compaction stayed and the
        segment cost what it cost)."""
        doc = shell.run_one(str(real_shaped(tmp_path)))
        after = doc["segmentList"][1]
        assert (after["firstCall"], after["lastCall"]) == (159, 162)
        pol = after["policies"]
        assert pol["alert"]["restartsAfter"] == []
        assert pol["alert"]["usd"] < 0.5 * pol["actual"]["usd"]
        # the calls after it as the trail says: 159 reads the context the restart at 148 left
        seen = closedloop.observe(*_inputs(real_shaped(tmp_path)))
        chain = bt.chains(bt.segments(seen.calls, seen.shared), seen.autos)[0]
        k = chain.local([148])[0]
        steps = {s.j: s for s in chain.trail(k)}
        step = steps[next(j for j, c in enumerate(chain.calls) if c.call == 159)]
        assert step.compact == "skipped"
        _carry, shed = chain.segs[0]._drop(k)
        assert step.usage == (0, 168_483 - shed, 0, 0)


def _inputs(path: Path) -> tuple[State, list[Event], ModelParams, Resolved]:
    loaded = shell.load(str(path))
    return loaded.fresh(), loaded.events, model_params(shell.config_for(str(path), {})), loaded.paths


def two(pre: int = 100_000, point: float = 95_000.0) -> Chain:
    """Two segments joined by an automatic compaction: the first grows 40k -> 90k by 10k a call, the
    second starts from a 30k summary and grows by 10k a call to 80k. Every call a cache hit."""
    first = [call(1, 0, 30_000, 10_000, bd=20_000)] + [call(n, 0, 30_000 + 10_000 * (n - 1), 10_000, bd=20_000)
                                                        for n in range(2, 7)]
    second = [call(7, 1, 0, 30_000)] + [call(n, 1, 30_000 + 10_000 * (n - 8), 10_000, bd=20_000)
                                         for n in range(8, 13)]
    segs = bt.segments([*first, *second], 0)
    return bt.chains(segs, {7: Auto(pre, point)})[0]


class TestTheChain:
    def test_no_restart_is_the_real_session(self) -> None:
        ch = two()
        assert ch.schedule_costs([]) == ch.actual
        assert [s.compact for s in ch.trail(-1)][6] == "here"
        assert all(s.usage is None for s in ch.trail(-1))

    def test_a_restart_under_the_point_skips_the_compaction(self) -> None:
        """A restart after call 2 (T 50k, carrying 20k) sheds 30k: the context before call 7 is
        100k - 30k = 70k, under the 95k point. Call 7 reads those 70k; the later calls carry what
        they did plus 40k (70k against the real 30k summary), read from the cache."""
        ch = two()
        steps = list(ch.trail(1))
        by = {s.j: s for s in steps}
        assert by[6].compact == "skipped"
        assert by[6].usage == (0, 70_000, 0, 0)
        assert by[7].usage == (0, 30_000 + 40_000, 10_000, 0)
        assert by[7].units == 70_000 + 10_000 * W5

    def test_the_compaction_it_skipped_comes_where_its_context_reaches_the_point(self) -> None:
        """Carrying 40k more, the second segment's prompt reaches 95k at call 10 (real 60k + 40k =
        100k): the client compacts before it, and call 10 starts afresh from the real summary (30k)
        and its growth; after it the calls carry 20k less than the real ones (the summary is 30k,
        the real call 9 carried 50k)."""
        by = {s.j: s for s in two().trail(1)}
        assert by[9].compact == "moved"
        assert by[9].usage == (0, 0, 40_000, 0)
        assert by[10].usage == (0, 40_000, 10_000, 0)
        assert [s.compact for s in by.values()].count("moved") == 1

    def test_a_restart_that_sheds_less_than_the_overshoot_compacts_where_the_real_one_did(self) -> None:
        """The real context went to 100k where the point is 75k: a restart after call 1 (T 40k,
        carrying 20k) sheds 20k and still reaches it (80k), so the compaction stays and the second
        segment is the real one; one after call 5 (T 80k) sheds 60k and does not (40k)."""
        ch = two(point=75_000.0)
        early = {s.j: s for s in ch.trail(0)}
        assert early[6].compact == "here"
        assert all(early[j].usage is None for j in range(6, 12))
        assert {s.j: s for s in ch.trail(4)}[6].compact == "skipped"

    def test_the_point_is_the_client_s_within_what_the_real_session_did(self) -> None:
        assert point_of(167_000, 168_483, 166_100) == 167_000
        assert point_of(213_400, 241_000, 230_000) == 230_000  # it ran past 213k without compacting
        assert point_of(213_400, 190_000, 185_000) == 190_000  # it compacted before the client's point
        assert point_of(None, 0, 150_000) == 150_000


rows_st = st.lists(st.tuples(st.integers(0, 60_000), st.integers(0, 20_000), st.integers(0, 60_000),
                             st.sampled_from([OPUS, OPUS, "claude-haiku-4-5", "claude-nonesuch-9"])),
                   min_size=2, max_size=10)


@given(rows_st, st.integers(1, 8), st.integers(0, 100_000), st.integers(0, 120_000), st.integers(0, 30_000))
@settings(max_examples=300, deadline=None)
@example(rows=[(30_000, 10_000, 20_000, OPUS)] * 3 + [(0, 30_000, 20_000, OPUS)] + [(40_000, 10_000, 20_000, OPUS)] * 3,
         cut=3, pre=60_000, point=55_000, shared=0)
def test_the_best_schedule_is_the_cheapest_of_all_across_a_compaction(
        rows: list[tuple[int, int, int, str]], cut: int, pre: int, point: int, shared: int) -> None:
    """The chain's dynamic programme against every subset of its restart points (a segment's last
    call is none), compactions kept, skipped and moved alike."""
    cut = min(cut, len(rows) - 1)
    calls = [bt.Call(i + 1, 0 if i < cut else 1, cr + w + 3, bd, cr, w, 0, model)
             for i, (cr, w, bd, model) in enumerate(rows)]
    ch = bt.chains(bt.segments(calls, shared), {cut + 1: Auto(pre, float(min(point, pre)))})[0]
    assert len(ch.segs) == 2
    w = ch.weights()

    def value(ks: tuple[int, ...]) -> float:
        return math.fsum(c * x for c, x in zip(ch.schedule_costs(ks), w, strict=True))

    points = ch.points()
    cheapest = min(value(ks) for r in range(len(points) + 1) for ks in itertools.combinations(points, r))
    got, one = ch.best()
    assert value(tuple(got)) == pytest.approx(cheapest, rel=1e-9, abs=1e-9)
    if got:
        assert value(tuple(got)) < value(())
    singles = [value((k,)) for k in points]
    if one is None:
        assert all(v >= value(()) * (1 - 1e-9) for v in singles)
    else:
        assert value((one,)) == pytest.approx(min(singles), rel=1e-9, abs=1e-9)


def cold_return_then_compaction(tmp_path: Path) -> Path:
    """A 200k-window session growing 2k a call from 40k, back after two hours at call 56 (its cache
    cold: it re-writes all but 4k), compacting on its own at 167.5k after call 64 into a 20k summary,
    then growing 1k a call to 160k (204 calls)."""
    t = Transcript(model=OPUS)
    ctx = 40_000
    t.call(0, ctx)
    n = 1
    while ctx + 2000 < 167_500:
        if n == 55:
            t.call(4000, ctx + 2000 - 4000, at=t.ts + 7200)
        else:
            t.call(ctx, 2000)
        ctx += 2000
        n += 1
    t.compact("auto", 167_500)
    t.call(0, 20_000)
    ctx = 20_000
    while ctx + 1000 < 160_000:
        t.call(ctx, 1000)
        ctx += 1000
    return t.save(tmp_path / "cold.jsonl")


def test_the_closed_loop_folds_a_skipped_compaction_where_the_counterfactual_reaches_the_point(
        tmp_path: Path) -> None:
    """With gates and reminders priced out (advice_min_usd $1,000) the advice restarts once, before
    the cold return (after call 55, carrying 40k of 150k): the compaction after call 64 is not
    reached (57.5k + the call's growth), the session runs on 37.5k heavier than the real 20k summary
    and reaches the 167k point before call 173, where the engine folds the compaction (before: after
    call 64, 140 calls before the end)."""
    path = cold_return_then_compaction(tmp_path)
    loaded = shell.load(str(path))
    cfg = model_params(config.merge({"advice_min_usd": 1000}))
    seen = closedloop.observe(loaded.fresh(), loaded.events, cfg, loaded.paths)
    state = loaded.fresh()
    assert closedloop.follow(state, seen, cfg, "alert") == [55]
    e = state["engine"]
    assert (e["compactions"], e["segCalls"], e["compactAt"]) == (1, 204 - 173 + 1, 167_500)
    chain = bt.chains(bt.segments(seen.calls, seen.shared), seen.autos)[0]
    moved = [(chain.calls[s.j].call, s.compact) for s in chain.trail(chain.local([55])[0]) if s.compact]
    assert moved == [(65, "skipped"), (173, "moved")]


def _walked(ch: Chain) -> tuple[list[int], int | None]:
    return _walked_sums(ch)[0]


def _walked_sums(ch: Chain) -> tuple[tuple[list[int], int | None], Fraction, dict[int, Fraction]]:
    """`Chain.best` as it was first written: each restart's trail walked to the chain's end, one
    after another (O(n^2)), its sums exact (the terms of each call's read units times its weight, as
    fractions: `best`'s sums are exact too, so a tie is a tie whatever the order of additions)."""
    w = [Fraction(x) for x in ch.weights()]
    real = math.fsum(a * x for a, x in zip(ch.actual, ch.weights(), strict=True))
    prefix = [Fraction(0)]
    for j, x in enumerate(w):
        prefix.append(prefix[-1] + sum(map(Fraction, ch._terms(j, None, 0))) * x)
    points = ch.points()
    arrive: dict[int, tuple[Fraction, int]] = {}
    back: dict[int, int] = {}
    end_v: Fraction | None = None
    end_from, one_v, one = -1, Fraction(real), None
    alone: dict[int, Fraction] = {}
    for k in [-1, *points]:
        acc, single = (Fraction(0), Fraction(0)) if k < 0 else (arrive[k][0], prefix[k + 1])
        if k >= 0:
            back[k] = arrive[k][1]
        walk = ch._start(k)
        for j in range(k + 1, len(ch.calls)):  # `Chain.trail`, each call's terms kept (`Chain._terms`)
            usage, _compact, walk = ch._call(j, walk)
            v = sum(map(Fraction, ch._terms(j, usage, walk[0]))) * w[j]
            acc += v
            single += v
            if j in points and (j not in arrive or acc < arrive[j][0]):
                arrive[j] = (acc, k)
        if end_v is None or acc < end_v:
            end_v, end_from = acc, k
        if k >= 0:
            alone[k] = single
        if k >= 0 and single < one_v * Fraction(1 - 1e-12):
            one_v, one = single, k
    assert end_v is not None
    if end_v >= real * (1 - 1e-12):
        return ([], one), end_v, alone
    out = []
    while end_from >= 0:
        out.append(end_from)
        end_from = back[end_from]
    return (out[::-1], one), end_v, alone


def cycles(n: int, growth: list[int], summary: int, point: int, bd: int, hour: bool = False, miss: int = 0) -> Chain:
    """`n` segments joined by automatic compactions: each starts from a `summary`-token summary
    and grows by `growth` (in turn) a call until it passes `point`, where the client compacts;
    `hour`: written to the 1-hour cache; `miss`: every so many calls a cache miss (the context
    written again)."""
    calls: list[bt.Call] = []
    autos: dict[int, Auto] = {}

    def add(seg: int, total: int, cr: int) -> None:
        cw = total - cr
        calls.append(bt.Call(len(calls) + 1, seg, total, min(bd, total), cr, 0 if hour else cw, cw if hour else 0,
                             OPUS))

    for seg in range(n):
        ctx, i = summary, 0
        if seg:
            autos[len(calls) + 1] = Auto(calls[-1].total, float(point))
        add(seg, ctx, 0)
        while ctx < point:
            g = growth[i % len(growth)]
            i += 1
            add(seg, ctx + g, 0 if miss and len(calls) % miss == 0 else ctx)
            ctx += g
    return bt.chains(bt.segments(calls, 0), autos)[0]


@given(st.integers(2, 4), st.lists(st.integers(2000, 9000), min_size=1, max_size=4), st.integers(5_000, 40_000),
       st.integers(50_000, 90_000), st.integers(2_000, 60_000), st.booleans(), st.sampled_from([0, 0, 7, 25]))
@settings(max_examples=40, deadline=None)
@example(n=3, growth=[3000], summary=20_000, point=60_000, bd=15_000, hour=False, miss=0)
def test_the_best_schedule_walks_every_trail_at_once_to_the_same_figures(
        n: int, growth: list[int], summary: int, point: int, bd: int, hour: bool, miss: int) -> None:
    """The chain's programme, its trails walked together and those in one state priced once, gives
    the schedule and the single restart of walking each trail to the end, over several compactions
    kept, skipped and moved, cache misses among the calls."""
    ch = cycles(n, growth, summary, point, bd, hour, miss)
    assert ch.best() == _walked(ch)
    assert ch.best(single=False) == (_walked(ch)[0], None)


def mixed_chain(rng: random.Random) -> Chain:
    """A chain of 2-5 segments joined by automatic compactions whose calls differ in every way the
    programme reads: growth, what a restart carries (so each restart sheds its own D), the model (two
    weights), the cache class, cache misses, failed requests, an advisor's iteration, a compaction
    with and without its tokens before."""
    calls: list[bt.Call] = []
    autos: dict[int, Auto] = {}
    point = rng.randrange(40_000, 90_000)
    for seg in range(rng.randint(2, 5)):
        if seg:
            pre = rng.choice([0, calls[-1].total, calls[-1].total + rng.randrange(0, 5_000)])
            autos[len(calls) + 1] = Auto(pre, float(point_of(point, pre, calls[-1].total)))
        ctx = rng.randrange(3_000, 30_000)
        for i in range(rng.randint(2, 14)):
            model = rng.choice([OPUS, OPUS, "claude-haiku-4-5"])
            if (i or seg) and rng.random() < 0.1:  # a failed request: no usage (a compaction's next call too)
                calls.append(bt.Call(len(calls) + 1, seg, 0, None, 0, 0, 0, model))
                continue
            grow = rng.randrange(500, 12_000)
            cr = 0 if i == 0 else ctx if rng.random() > 0.1 else rng.randrange(0, ctx // 2 + 1)
            cw = ctx + grow - cr
            hour = rng.random() < 0.2
            extra = ((None, cr // 2, 0, 100),) if rng.random() < 0.05 else ()
            calls.append(bt.Call(len(calls) + 1, seg, ctx + grow, rng.randrange(0, ctx + grow + 1), cr,
                                 0 if hour else cw, cw if hour else 0, model, extra=extra))
            ctx += grow
    return bt.chains(bt.segments(calls, rng.choice([0, 2_000])), autos)[0]


def test_the_best_schedule_drops_no_restart_that_could_win() -> None:
    """The programme that keeps one restart a state and looks for the least sum only where another
    may have passed it gives, over 150 seeded chains of many states each, what walking every
    restart's trail to the end with exact sums gives: a restart dropped that could have won, or a
    least sum missed, changes a schedule or a single restart."""
    rng = random.Random(35)
    restarted = 0
    for _ in range(150):
        ch = mixed_chain(rng)
        if len(ch.segs) < 2:
            continue
        want = _walked(ch)
        assert ch.best() == want
        assert ch.best(single=False) == (want[0], None)
        restarted += len(want[0]) > 1
    assert restarted > 20  # schedules of several restarts, not just none


def test_each_segment_s_restarts_are_its_own_calls() -> None:
    """The backtest's figures by segment name each policy's restarts after that segment's calls, and
    all of them together are the session's (the best schedule's restarts across the chain's
    compactions, the advice's, the single restart's): one pass over a policy's restarts puts each in
    the segment it falls in, the first call of a segment included."""
    rng = random.Random(3538)
    placed = 0
    for _ in range(40):
        ch = mixed_chain(rng)
        if len(ch.segs) < 2:
            continue
        autos = {ch.segs[b + 1].calls[0].call: a for b, a in enumerate(ch.autos)}
        firsts = [s.calls[0].call for s in ch.segs]
        follow = {"alert": sorted(rng.sample([c.call for c in ch.calls], 4) + firsts[1:]),
                  "sweetSpot": firsts[1:]}
        doc = bt.backtest(ch.calls, ch.shared, follow, autos)
        for name, whole in doc["policies"].items():
            seen: list[int] = []
            for seg in doc["segmentList"]:
                after = seg["policies"][name]["restartsAfter"]
                assert all(seg["firstCall"] <= n <= seg["lastCall"] for n in after), (name, seg)
                seen += after
                placed += sum(1 for n in after if n == seg["firstCall"])
            assert seen == whole["restartsAfter"]
    assert placed > 20  # restarts after a segment's first call, where a wrong segment is easiest taken


@pytest.fixture
def awkward_prices() -> Iterator[None]:
    """The user's own prices (the config's `[prices]`), none a short binary fraction: the read price
    a third or a tenth of input, writes dearer or cheaper than input, one model 1e-7 USD/MTok."""
    prices.use({"claude-opus-4-6": {"input": 3.0, "cache_read": 0.3, "cache_write": 3.75, "cache_write_1h": 6.1},
                "claude-haiku-4-5": {"input": 1e-7, "cache_read": 1 / 3, "cache_write": 0.1,
                                     "cache_write_1h": 7e-3}})
    yield
    prices.use({})


@pytest.mark.usefixtures("awkward_prices")
def test_the_best_schedule_s_sums_are_exact_at_any_prices() -> None:
    """At prices whose write terms are long binary fractions (a call's float units round), the sums
    `best` compares are still exactly the walked ones, term for term: a call added to every state at
    once costs what it costs stepped alone; and the schedules are the same."""
    rng = random.Random(3535)
    for _ in range(40):
        ch = mixed_chain(rng)
        if len(ch.segs) < 2:
            continue
        want, end, alone = _walked_sums(ch)
        got = ch._exact_best(True)
        assert got is not None
        (common, scale), (got_end, _k), ones, _back = got
        assert Fraction(got_end * common, scale) == end
        assert all(Fraction(v * common, scale) == alone[k] for k, v in ones)
        assert ch.best() == want


def odd_chain(rng: random.Random) -> Chain:
    """A chain of 2-15 segments whose calls are odd in the ways a restart's first call and a call
    added to every state at once read: token counts of a few tokens or of billions, calls that grow
    by nothing, failed requests (a restart's first call among them), uncached input, every call
    alike (ties), what a restart carries left unknown, three models, another model's iteration."""
    calls: list[bt.Call] = []
    autos: dict[int, Auto] = {}
    tiny = rng.random() < 0.25
    scale = 1 if tiny else rng.choice([1, 1, 1000, 10**6])
    point = rng.randrange(40, 200) if tiny else rng.randrange(40_000, 90_000) * scale
    alike = rng.random() < 0.3
    grow0 = rng.randrange(1, 30) if tiny else rng.randrange(500, 12_000) * scale
    models = [OPUS, "claude-haiku-4-5", "claude-sonnet-4-5"][:rng.randint(1, 3)]
    for seg in range(rng.choice([2, 3, 5, 8, 15])):
        if seg:
            pre = rng.choice([0, calls[-1].total, calls[-1].total + rng.randrange(0, 5_000)])
            autos[len(calls) + 1] = Auto(pre, point_of(rng.choice([point, None, point // 2]), pre, calls[-1].total))
        ctx = 20 if tiny and alike else rng.randrange(1, 40) if tiny else 10_000 * scale if alike else \
            rng.randrange(3_000, 30_000) * scale
        for i in range(rng.randint(1, 14)):
            model = rng.choice(models)
            if (i or seg) and rng.random() < 0.12:
                calls.append(bt.Call(len(calls) + 1, seg, 0, None, 0, 0, 0, model))
                continue
            grow = 0 if rng.random() < 0.05 else grow0 if alike else \
                rng.randrange(0, 30) if tiny else rng.randrange(500, 12_000) * scale
            cr = 0 if i == 0 else ctx if rng.random() > 0.1 else rng.randrange(0, ctx // 2 + 1)
            cw = ctx + grow - cr
            hour = rng.random() < 0.2
            extra = ((rng.choice([None, "claude-haiku-4-5"]), cr // 2, rng.randrange(0, 50), 100),) \
                if rng.random() < 0.07 else ()
            bd = None if rng.random() < 0.1 else (ctx + grow) // 2 if alike else rng.randrange(0, ctx + grow + 1)
            inp = rng.choice([0, 0, 3, 100])
            calls.append(bt.Call(len(calls) + 1, seg, ctx + grow + inp, bd, cr, 0 if hour else cw, cw if hour else 0,
                                 model, extra=extra, inp=inp))
            ctx += grow
    return bt.chains(bt.segments(calls, rng.choice([0, 2_000, 10**7])), autos)[0]


@pytest.mark.parametrize("rows", [
    {},
    {"claude-opus-4-6": {"input": 1 / 7, "cache_read": 1 / 11, "cache_write": 1 / 13, "cache_write_1h": 1 / 17},
     "claude-haiku-4-5": {"input": 1e-7, "cache_read": 1 / 3, "cache_write": 0.1, "cache_write_1h": 7e-3}},
    {"claude-opus-4-6": {"input": 1e4, "cache_read": 1e-12, "cache_write": 1e4, "cache_write_1h": 1e4},
     "claude-sonnet-4-5": {"input": 1e-6, "cache_read": 1e4, "cache_write": 1e-300}},
], ids=["tables", "non-dyadic", "far"])
def test_the_best_schedule_s_sums_are_exact_on_odd_chains(rows: dict[str, dict[str, float]]) -> None:
    """On chains of odd calls (`odd_chain`) at the tables' prices, at prices no short binary fraction
    holds, and at prices 16 orders of magnitude apart (a write 1e16 reads, a read 1e-300 writes), the
    sums `best` compares, with the single restart and without, are the walked ones, and so is the
    schedule. The single restart itself is not compared: of two restarts whose sums are within
    1e-12 of each other the walk keeps the earlier, where `best` may have dropped it for the later,
    cheaper one in the same state (sums the far prices make)."""
    prices.use(rows)
    try:
        rng = random.Random(3536)
        for _ in range(40):
            ch = odd_chain(rng)
            if len(ch.segs) < 2:
                continue
            want, end, alone = _walked_sums(ch)
            for single in (True, False):
                got = ch._exact_best(single)
                assert got is not None
                (common, scale), (got_end, _k), ones, _back = got
                assert Fraction(got_end * common, scale) == end
                assert all(Fraction(v * common, scale) == alone[k] for k, v in ones)
                assert bool(ones) == single
            assert ch.best()[0] == want[0]
            assert ch.best(single=False) == (want[0], None)
    finally:
        prices.use({})


def test_the_best_schedule_at_prices_whose_costs_overflow_is_none() -> None:
    """A read price the config takes (more than 0) so far below the writes' that a write's cost in
    read units is infinite: no schedule beats the real session (its cost infinite too), as the
    float sums said, and nothing raises."""
    prices.use({"claude-opus-4-6": {"input": 1e4, "cache_read": 1e-300}})
    try:
        ch = mixed_chain(random.Random(7))
        assert len(ch.segs) > 1
        assert ch.best() == ([], None)
        assert ch.best(single=False) == ([], None)
    finally:
        prices.use({})


def test_the_best_schedule_where_a_call_s_finite_terms_overflow_its_sum_is_none() -> None:
    """A read price the config takes (more than 0) at which one call's writes of each class cost
    1.5e308 read units: each term a float, the call's cost (their sum) infinite, so the real
    session's cost is infinite while every sum `best` adds exactly is finite. No schedule beats it
    (as where a term is infinite), and nothing raises."""
    prices.use({OPUS: {"input": 1e4, "cache_read": 1e-299, "cache_write": 1e4, "cache_write_1h": 1e4}})
    try:
        calls = [bt.Call(1, 0, 300_000, 150_000, 0, 150_000, 150_000, OPUS),
                 bt.Call(2, 0, 310_000, 155_000, 300_000, 10_000, 0, OPUS),
                 bt.Call(3, 0, 320_000, 160_000, 310_000, 10_000, 0, OPUS),
                 bt.Call(4, 1, 30_000, 15_000, 0, 30_000, 0, OPUS),
                 bt.Call(5, 1, 40_000, 20_000, 30_000, 10_000, 0, OPUS)]
        ch = bt.chains(bt.segments(calls, 0), {4: Auto(320_000, 300_000.0)})[0]
        assert len(ch.segs) == 2
        assert ch.actual[0] == math.inf
        assert all(math.isfinite(x) for t in (ch._terms(j, None, 0) for j in range(5)) for x in t)
        assert ch.best() == ([], None)
        assert ch.best(single=False) == ([], None)
    finally:
        prices.use({})


def test_the_least_sum_is_looked_for_again_when_another_comes_down_to_it_exactly() -> None:
    """`_Lazy.least` at the lift where an earlier restart's sum, falling faster (a larger D), comes
    down to the least one exactly: a tie, so the earlier restart is the least from that lift on (the
    bound where another sum may reach the least one is (14 - 10) / (2 - 0) = 2, whole: rounded up it
    is 2; one past it, the tie is missed and the later restart kept)."""
    lazy = _Lazy()
    lazy.put(5, 10, (0, None, None, None), math.inf)  # restart 5: D 0, sum 10
    assert lazy.least() == (10, 5)
    lazy.put(3, 14, (2, None, None, None), math.inf)  # restart 3: D 2, sum 14, 2 less a unit of lift
    lazy.advance(0, 1, 100)
    assert lazy.least() == (10, 5)  # 10 against 12
    lazy.advance(0, 1, 100)
    assert lazy.least() == (10, 3)  # 10 against 10: the earlier
    lazy.advance(0, 1, 100)
    assert lazy.least() == (8, 3)


def test_the_best_schedule_prices_a_state_once_not_each_restart_s_trail(monkeypatch: pytest.MonkeyPatch) -> None:
    """40 cycles of 60 calls: walking each restart's trail to the end priced about n^2 / 2 calls
    (2.9 million) one by one; the trails in one state are priced once, and a call that only
    carries fewer tokens without a pending compaction to move is priced in place."""
    from session_watcher.core.chains import Chain

    ch = cycles(40, [1000], 20_000, 80_000, 10_000)
    assert len(ch.calls) == 40 * 61
    priced = 0
    one_by_one = Chain._terms  # what `best` prices a call by (never `_units`)

    def counted(self: Chain, j: int, usage: tuple[int, int, int, int] | None,
                drop: int) -> tuple[int, float, float, float]:
        nonlocal priced
        priced += 1
        return one_by_one(self, j, usage, drop)

    monkeypatch.setattr(Chain, "_terms", counted)
    got = ch.best()
    assert got[0]  # restarting saves: the trails are real ones
    assert len(ch.calls) <= priced < 100 * len(ch.calls)  # each real call once at least (the counter counts)


def _eager_autos(path: Path) -> dict[int, Auto]:
    """The automatic compactions as a fold that prices the client's point after every call finds
    them (`client_point` of the state the call left, `AutoWatch` fed in the fold's order)."""
    from session_watcher.core import engine
    from session_watcher.core.chains import AutoWatch
    from session_watcher.core.status import client_point

    state, events, cfg, paths = _inputs(path)
    watch = AutoWatch()

    def hook(st: State, fired: object, usage: dict[str, object]) -> None:
        e = st["engine"]
        watch.call(bt.call_of(e["calls"], e["segment"], None, None, None, None, None, None, (), usage,
                              usage["ts"]), client_point(st, cfg))

    def watched() -> Iterator[Event]:
        for ev in events:
            if ev[0] == "compact":
                watch.compaction(ev[2], ev[3])
            yield ev

    engine.fold(state, watched(), cfg, paths, call_hook=hook)  # type: ignore[arg-type]
    return watch.autos


@pytest.mark.parametrize("name", ["258c7280-ae70-4798-800f-63464d01a85d", "fa812bfe-b295-4cca-9c2f-fdf01028cb46"])
def test_observe_prices_the_point_where_a_compaction_follows_as_after_every_call(name: str) -> None:
    """`observe` prices the client's point after a call only where a compaction follows it, from the
    figures the call left (not as the fold stands at the compaction): the same automatic compactions,
    each with the point after the call before it, as pricing it after every call."""
    path = LONG_FIXTURES / f"{name}.jsonl"
    seen = closedloop.observe(*_inputs(path))
    want = _eager_autos(path)
    assert want  # the session compacts on its own
    assert any(a.point < a.pre for a in want.values())  # the client's point, not the tokens before
    assert seen.autos == want


def test_observe_prices_the_point_of_a_real_shaped_session(tmp_path: Path) -> None:
    path = real_shaped(tmp_path)
    assert closedloop.observe(*_inputs(path)).autos == _eager_autos(path) == {159: Auto(168_483, 167_000.0)}
