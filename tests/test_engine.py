"""The fold (core.engine): segments, L, floor, the deferred settlement ledger, growth, bills, B.

Sessions are built with bench/synth.py (the one transcript writer) and go through the real transcript parser.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from bench.synth import Transcript
from session_watcher.base import config
from session_watcher.core import engine, eoq, status
from session_watcher.core.status import status_document
from tests.test_eoq import simulate

if TYPE_CHECKING:
    from session_watcher.core.shapes import ModelParams, State

CFG = config.merge()


def run(t: Transcript, cfg: ModelParams | None = None, reasons: dict[str, str | None] | None = None,
        state: State | None = None) -> tuple[State, list[dict[str, Any]]]:
    state = state if state is not None else engine.new_state("t")
    trace: list[dict[str, Any]] = []
    engine.fold(state, t.events(), cfg or CFG, ({}, reasons or {}), call_hook=status.tracer(trace, cfg or CFG))
    return state, trace


def file_text(lines: int, width: int = 60) -> str:
    return "".join(f"{i:05d} " + "x" * (width - 6) + "\n" for i in range(lines))


def estimate(content: str, start: int = 1) -> int:
    """What the engine adds to B for a first Read of `content` in a fresh session."""
    t = Transcript()
    t.read("/p/f.py", content, cr=20_000, start=start)
    state, _ = run(t)
    return int(state["paths"]["/p/f.py"]["tokens"])


# --------------------------------------------------------------------------- L, floor, segments

def test_nothing_is_made_up_before_the_first_call() -> None:
    state = engine.new_state("t")
    q = eoq.quantities(state, CFG)
    assert q["L"] is None
    assert q["x"] is None
    assert q["xSweet"] is None
    assert q["br"] is None
    assert q["lamp"] == "white"
    doc = status_document(state, CFG)
    assert doc["B"] is None
    assert doc["bDefault"] is None
    assert doc["contextPressure"] == {"pressureTokens": None, "contextWindow": None}


def test_floor_is_the_first_call_of_the_segment() -> None:
    t = Transcript()
    t.call(cr=3_000, cw=18_000, inp=5)  # the first prompt: a cached system prompt + a write
    t.call(cr=24_005, cw=40_000)  # a bigger write later does not move the floor
    state, trace = run(t)
    # the floor is the whole first prompt (v1's max(cr, cw, in) = 18,000 undercounted it)
    assert [r["floor"] for r in trace] == [21_005, 21_005]
    assert [r["shared"] for r in trace] == [3_000, 3_000]  # what a restart finds already cached
    assert [r["L"] for r in trace] == [3_000, 24_005]
    # reaching the floor is not growth: dL of the 2nd call is measured from the floor
    assert trace[1]["residual"] == 3_000
    assert state["engine"]["level"] == 3_000


def test_cache_miss_reconstructs_l_and_a_real_drop_does_not() -> None:
    t = Transcript()
    t.call(cr=50_000, cw=0, inp=0)
    t.call(cr=51_000, cw=1_000)
    t.call(cr=0, cw=52_500)  # the cache expired: everything written again
    t.call(cr=10_000, cw=43_000)  # a partial miss
    t.call(cr=53_500, cw=500)
    t.call(cr=52_500, cw=1_500)  # 1,000 short of L: within noise (max(1,000, 2 %)), not a miss
    t.call(cr=40_000, cw=15_000)  # 12,500 short: a partial miss, the re-write is not growth
    _, trace = run(t)
    assert [r["L"] for r in trace] == [50_000, 51_000, 52_500, 53_000, 53_500, 52_500, 55_000]
    assert [r["residual"] for r in trace][1:] == [1_000, 1_500, 500, 500, 0, 2_500]
    assert {r["segment"] for r in trace} == {0}


def test_compaction_starts_a_segment_and_keeps_the_growth_level() -> None:
    t = Transcript()
    t.call(cr=20_000)
    for i in range(1, 30):
        t.call(cr=20_000 + 800 * i, cw=800)
    t.read("/p/a.py", file_text(50), cr=20_000 + 800 * 30, cw=800)
    t.compact(pre_tokens=45_000)
    t.call(cr=0, cw=15_000)
    t.call(cr=15_000, cw=900)
    state, trace = run(t, reasons={"/p/a.py": None})
    before, first, second = trace[-3], trace[-2], trace[-1]
    assert before["segment"] == 0
    assert first["segment"] == second["segment"] == 1
    assert first["floor"] == 15_001  # in + cr + cw of the segment's first call
    assert first["L"] == 0
    assert first["bFull"] == 15_001  # path map reset
    assert [b["type"] for b in first["buckets"]] == ["system"]
    assert first["billProgress"] == 0
    assert first["bills"] == 0
    assert first["dwell"]["calls"] == 0
    assert first["ledger"]["open"] == 0
    assert first["g"] == pytest.approx(before["g"])  # the pace of work did not change
    assert second["residual"] == 0  # from the floor, not from L = 0
    assert first["compactions"] == 1
    assert state["meter"]["main"]["calls"] == 33  # the token meter is durable across compaction


def test_sidechain_calls_count_in_tokens_not_in_l() -> None:
    t = Transcript()
    t.call(cr=20_000)
    t.call(cr=90_000, cw=5_000, sidechain=True)
    t.call(cr=20_500, cw=500)
    state, trace = run(t)
    assert [r["L"] for r in trace] == [20_000, 20_500]
    assert state["meter"]["sub"]["calls"] == 1
    assert state["meter"]["sub"]["cacheRead"] == 90_000
    assert state["meter"]["main"]["cacheRead"] == 40_500


def test_each_call_counts_once_and_the_last_sample_wins() -> None:
    t = Transcript()
    t.call(cr=20_000, out=5, samples=3)
    t.records[-1]["message"]["usage"]["output_tokens"] = 321  # the final sample carries the full output
    t.call(cr=21_000, cw=1_000, samples=2)
    state, trace = run(t)
    assert len(trace) == 2
    assert state["meter"]["main"]["calls"] == 2
    assert state["meter"]["main"]["output"] == 321 + 10
    assert state["meter"]["main"]["cacheRead"] == 41_000


def test_cratio_from_cache_ttl_and_config() -> None:
    t = Transcript()
    t.call(cr=20_000, cw=100, ttl="5m")
    assert run(t)[1][-1]["cRatio"] == 12.5
    t.call(cr=20_100, cw=100, ttl="1h")
    assert run(t)[1][-1]["cRatio"] == 20.0
    assert run(t, config.merge({"cRatio": 7.0}))[1][-1]["cRatio"] == 7.0


# --------------------------------------------------------------------------- the ledger

C = 300  # conversational growth per call in these sessions


def ledger_session(content: str, arrivals: list[float], after: int = 8) -> Transcript:
    """Steady growth of C per call; a Read of `content`; its tokens reach L over the next calls in
    the given shares of the engine's estimate."""
    big_e = estimate(content)
    t = Transcript()
    cr = 20_000
    t.call(cr - 1)  # a first prompt of 20,000 tokens: 1 uncached input + 19,999 read
    for _ in range(10):
        cr += C
        t.call(cr, C)
    cr += C
    t.read("/p/big.py", content, cr=cr, cw=C)
    for share in [*arrivals, *[0.0] * after]:
        grow = C + round(share * big_e)
        cr += grow
        t.call(cr, grow)
    return t


@pytest.mark.parametrize("arrivals", [[1.0], [0.5, 0.5], [0.0, 1.0], [0.3, 0.7], [0.95], [1.05]])
def test_a_read_that_reaches_l_leaves_no_residual_spike(arrivals: list[float]) -> None:
    content = file_text(700)
    big_e = estimate(content)
    assert big_e > 20 * C  # the file dwarfs a call's conversational growth
    _, trace = run(ledger_session(content, arrivals))
    residuals = [r["residual"] for r in trace[1:]]
    # never a spike: at most the conversational growth of the calls the file's arrival borrowed from
    assert max(residuals) <= len(arrivals) * C + 0.06 * big_e
    # on average the residual is the conversational growth
    assert sum(residuals) / len(residuals) == pytest.approx(C, rel=0.25)
    assert trace[-1]["g"] == pytest.approx(C, rel=0.3)
    assert trace[-1]["ledger"]["open"] == 0
    # the control: the same usage without the Read being seen is a spike
    control = Transcript()
    control.records = [r for r in ledger_session(content, arrivals).records
                       if r["type"] != "user" and not any(b.get("type") == "tool_use"
                                                          for b in r["message"]["content"])]
    _, ctrace = run(control)
    assert max(r["residual"] for r in ctrace[1:]) > 0.45 * big_e


def test_an_exact_estimate_settles_to_the_conversational_growth() -> None:
    _, trace = run(ledger_session(file_text(400), [1.0]))
    assert [r["residual"] for r in trace[1:]] == [C] * (len(trace) - 1)
    assert trace[-1]["g"] == pytest.approx(C)


def test_a_read_that_never_shows_up_is_written_off_into_calibration() -> None:
    content = file_text(300)
    big_e = estimate(content)
    t = ledger_session(content, [], after=0)
    state = engine.new_state("t")
    engine.fold(state, t.events(), CFG)
    entry = state["paths"]["/p/big.py"]
    assert entry["tokens"] == big_e
    assert state["engine"]["ledger"][0][1] == big_e
    cr = t.records[-2]["message"]["usage"]["cache_read_input_tokens"]
    seen = []
    for i in range(1, 5):  # only conversational growth: the file never reaches L
        t2 = Transcript()
        t2.n = 10_000 + i
        t2.call(cr + C * i, C)
        engine.fold(state, t2.events(), CFG)
        seen.append((len(state["engine"]["ledger"]), entry["calibration"], state["engine"]["residual"]))
    # open for two calls (C retired from it each time, residual 0), written off at the third
    assert seen[0] == (1, 0, 0)
    assert seen[1] == (1, 0, 0)
    assert seen[2] == (0, big_e - 3 * C, 0)
    assert seen[3] == (0, big_e - 3 * C, C)
    assert entry["tokens"] == 3 * C
    assert entry["calibration"] == entry["lines"] + entry["overhead"] - 3 * C
    # the evidence moved the chars-per-token ratio: the file cost fewer tokens than estimated
    assert state["engine"]["cal"]["tokens"] == 3 * C
    buckets = status_document(state, CFG)["buckets"]
    assert buckets[1]["calibration"] == big_e - 3 * C


def test_calibration_learns_chars_per_token_from_settled_reads() -> None:
    from session_watcher.core import paths as pathmap

    t = Transcript()
    cr = 20_000
    t.call(cr)
    for i in range(12):
        content = file_text(200)
        big_e = estimate(content)
        cr += C
        t.read(f"/p/f{i}.py", content, cr=cr, cw=C)
        grow = C + big_e // 2  # every file costs half of the default estimate
        cr += grow
        t.call(cr, grow)
        t.call(cr + C, C)
        cr += C
    state, _ = run(t)
    assert pathmap.chars_per_token(state["engine"]["cal"]) > pathmap.CPT_DEFAULT * 1.3


# --------------------------------------------------------------------------- the path map in the fold

def test_line_level_reads_and_edits() -> None:
    from session_watcher.core import paths as pathmap

    lines = [f"line {i:03d} " + "y" * 40 for i in range(1, 101)]
    t = Transcript()
    t.call(20_000)
    t.read("/p/a.py", "\n".join(lines[:50]) + "\n", cr=20_000)
    state, _ = run(t)
    first_half = state["paths"]["/p/a.py"]["lines"]
    t.read("/p/a.py", "\n".join(lines[20:50]) + "\n", cr=20_000, start=21)  # already seen: nothing
    state, _ = run(t)
    entry = state["paths"]["/p/a.py"]
    assert entry["lines"] == first_half
    assert entry["overhead"] == 2 * 40
    t.read("/p/a.py", "\n".join(lines[40:]) + "\n", cr=20_000, start=41)  # lines 51-100 are new
    state, _ = run(t)
    entry = state["paths"]["/p/a.py"]
    assert entry["lines"] == pytest.approx(2 * first_half, abs=2)
    assert entry["ranges"] == [[1, 101]]
    t.edit("/p/a.py", "y" * 40, "z" * 40 + "\n" + "w" * 700, cr=20_000)
    before_result = Transcript()
    before_result.records = t.records[:-1]
    # the ratio as the edit's result arrives: calibrated by then (the reads never reached L)
    cpt = pathmap.chars_per_token(run(before_result)[0]["engine"]["cal"])
    assert cpt > 3.5
    state, _ = run(t)
    entry = state["paths"]["/p/a.py"]
    assert entry["pendingEdit"] == round(701 / cpt)
    t.read("/p/a.py", "\n".join(lines[:10]) + "\n", cr=20_000)  # a Read after the edit recounts
    state, _ = run(t)
    entry = state["paths"]["/p/a.py"]
    assert entry["pendingEdit"] == 0
    assert entry["ranges"] == [[1, 11]]
    assert 0 < entry["lines"] < first_half / 4
    assert entry["reads"] == 4


# --------------------------------------------------------------------------- properties of B

step = st.one_of(
    st.tuples(st.just("grow"), st.integers(0, 6_000)),
    st.tuples(st.just("miss"), st.integers(0, 6_000)),
    st.tuples(st.just("read"), st.integers(0, 4), st.integers(0, 300), st.integers(1, 400)),
    st.tuples(st.just("edit"), st.integers(0, 4), st.integers(0, 3_000), st.integers(0, 3_000)),
    st.tuples(st.just("compact"), st.integers(0, 30_000)),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(step, min_size=1, max_size=60), st.integers(0, 40_000),
       st.lists(st.sampled_from([None, "gitignore", "outside-project"]), min_size=5, max_size=5),
       st.sampled_from([[], ["/p/f1.py"], ["*"]]), st.sampled_from([[], ["/p/f2.py"]]))
# a bill that completes to within float rounding (progress 0.9999999999999964 after 25 bills)
@example([("compact", 270), ("grow", 5870), ("grow", 0), ("grow", 0), ("grow", 935), ("grow", 228), ("grow", 0)],
         271, [None] * 5, [], [])
def test_b_properties(steps: list[tuple[Any, ...]], first: int, why: list[str | None],
                      include: list[str], exclude: list[str]) -> None:
    t = Transcript()
    ctx = first
    t.call(ctx, 500)
    for s in steps:
        if s[0] == "grow":
            ctx += s[1]
            t.call(ctx, s[1])
        elif s[0] == "miss":
            ctx += s[1]
            t.call(s[1] % max(1, ctx // 3), ctx - s[1] % max(1, ctx // 3))
        elif s[0] == "read":
            t.read(f"/p/f{s[1]}.py", file_text(s[3], 30), cr=ctx, start=1 + s[2])
        elif s[0] == "edit":
            t.edit(f"/p/f{s[1]}.py", "o" * s[2], "n" * s[3], cr=ctx)
        else:
            t.compact()
            ctx = s[1]
            t.call(0, ctx)
    cfg = config.merge({"include": include, "exclude": exclude})
    reasons = {f"/p/f{i}.py": why[i] for i in range(5)}
    _, trace = run(t, cfg, reasons)
    assert trace
    real: dict[int, bool] = {}  # segment -> a real request seen in it (eoq.real_request)
    for row in trace:
        u = row["usage"]
        real[row["segment"]] = real.get(row["segment"], False) or eoq.real_request(u["in"] + u["cr"] + u["cw"])
        assert (row["floor"] is None) is not real[row["segment"]]
        if row["floor"] is None:  # only failed requests so far: nothing of the model is made up
            assert row["L"] is None
            assert row["bDefault"] is None
            assert row["x"] is None
            assert row["lamp"] == "white"
            assert row["billProgress"] == 0
            assert not row["alerts"]
            continue
        assert 0 <= row["bDefault"] <= row["bFull"]
        assert row["B"] <= row["contextPressure"]["pressureTokens"]
        assert row["B"] == min(row["bFull"], row["contextPressure"]["pressureTokens"])
        files = [b for b in row["buckets"] if b["type"] == "file"]
        assert all(b["tokens"] >= 0 for b in files)
        assert row["bFull"] == row["floor"] + sum(b["tokens"] for b in files)
        assert row["bDefault"] == row["floor"] + sum(b["tokens"] for b in files if b["included"])
        for b in files:
            want = b["defaultDiscardReason"] is None
            if b["path"] in include or include == ["*"]:
                want = True
            if b["path"] in exclude:
                want = False
            assert b["included"] is want
        for key in ("x", "g", "dhat", "xSweet", "br", "mf", "burnRate", "billProgress"):
            v = row[key]
            assert v is None or math.isfinite(v)
        assert 0 <= row["billProgress"] < 1


# --------------------------------------------------------------------------- the sweet spot of a constant-pace session

@pytest.mark.parametrize(("b", "g", "ttl"), [(30_000, 600, "5m"), (60_000, 250, "1h"), (18_000, 1_200, "5m")])
def test_engine_sweet_spot_is_the_cheapest_restart(b: int, g: int, ttl: str) -> None:
    t = Transcript()
    t.call(0, b - 1, ttl=ttl)  # the first prompt (the floor) is b tokens, nothing of it cached before
    for i in range(1, 40):
        t.call(b + g * i, g, ttl=ttl)
    _, trace = run(t)
    row = trace[-1]
    assert row["g"] == pytest.approx(g)
    c = row["cRatio"]
    k_star = math.sqrt(2 * c * b / g)
    costs = {k: simulate(b, g, c, k, 3 * k) for k in range(max(2, int(k_star / 2)), int(2 * k_star) + 3)}
    best = min(costs, key=costs.__getitem__)
    assert row["xSweet"] == pytest.approx((b + best * g) / b, rel=0.02)
    assert row["x"] == pytest.approx((b + 39 * g) / b)
    assert row["burnRate"] == pytest.approx(39 * g / (c * b))


@pytest.mark.parametrize(("b", "g", "shared"), [(30_000, 600, 15_000), (60_000, 250, 20_000)])
def test_a_shared_prefix_moves_the_sweet_spot_to_the_cheapest_restart(b: int, g: int, shared: int) -> None:
    """A restart reads the prefix earlier sessions left cached (cEff < cRatio): simulated with that
    restart price, the cheapest cycle still ends at xSweet."""
    t = Transcript()
    t.call(shared, b - shared - 1)  # the first prompt reads `shared`, writes the rest
    for i in range(1, 40):
        t.call(b + g * i, g)
    _, trace = run(t)
    row = trace[-1]
    c = row["cRatio"]
    k = c * (b - shared) + shared
    assert row["shared"] == shared
    assert row["cEff"] == pytest.approx(k / b, rel=1e-6)
    assert row["cEff"] < c

    def cost(calls: int) -> float:  # per call, read-price tokens, over three whole cycles
        total, big_l = 0.0, float(b)
        for n in range(3 * calls):
            if n % calls == 0:
                total += k
                big_l = b
            total += big_l + c * g
            big_l += g
        return total / (3 * calls)

    k_star = math.sqrt(2 * (k / b) * b / g)
    costs = {n: cost(n) for n in range(max(2, int(k_star / 2)), int(2 * k_star) + 3)}
    best = min(costs, key=costs.__getitem__)
    assert row["xSweet"] == pytest.approx((b + best * g) / b, rel=0.02)
    v1_sweet = 1 + math.sqrt(2 * c * g / b)  # v1 priced the restart as if it wrote everything
    assert row["xSweet"] < v1_sweet


# --------------------------------------------------------------------------- one compaction, two witnesses

def _segment_after(order: list[str]) -> tuple[int, int]:
    t = Transcript()
    t.call(20_000)
    t.call(21_000, 1_000)
    state, _ = run(t)
    for source in order:
        if source == "hook":
            engine.on_compaction(state, from_hook=True)
        else:
            b = Transcript()
            b.n = 500 + len(source)
            b.compact()
            engine.fold(state, b.events(), CFG)
    after = Transcript()
    after.n = 900
    after.call(0, 12_000)
    engine.fold(state, after.events(), CFG)
    return state["engine"]["segment"], state["engine"]["compactions"]


@pytest.mark.parametrize("order", [["hook", "boundary"], ["boundary", "hook"], ["boundary"], ["hook"]])
def test_hook_and_boundary_of_one_compaction_start_one_segment(order: list[str]) -> None:
    assert _segment_after(order) == (1, 1)


def test_two_compactions_are_two_segments() -> None:
    assert _segment_after(["boundary", "hook", "boundary"]) == (2, 2)
