"""The EOQ cost model (SPEC "The cost model"): formulas, their properties, and the claim itself."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from session_watcher.core import eoq

dhats = st.floats(min_value=1e-6, max_value=1e4, allow_nan=False, allow_infinity=False)
c_ratios = st.sampled_from([eoq.CRATIO_5M, eoq.CRATIO_1H, 1.0, 7.3, 50.0])
gs = st.floats(min_value=1.0, max_value=50_000.0)
bs = st.floats(min_value=1_000.0, max_value=900_000.0)


# --------------------------------------------------------------------------- constants

def test_cratio_constants_are_the_price_ratios() -> None:
    assert abs(eoq.CRATIO_5M - 12.5) < 1e-12
    assert abs(eoq.CRATIO_1H - 20.0) < 1e-12
    assert abs(eoq.MF_MAX - 0.41421356) < 1e-8


# --------------------------------------------------------------------------- mf

@given(dhats)
def test_mf_is_in_its_interval(dh: float) -> None:
    mf = eoq.movable_fraction(dh)
    assert 0 < mf <= 0.41422


@given(dhats)
def test_mf_maximum_is_at_sqrt2(dh: float) -> None:
    assert eoq.movable_fraction(dh) <= eoq.movable_fraction(math.sqrt(2)) + 1e-15


def cost_per_call(d: float, c_ratio: float, g: float, b: float, c_eff: float | None = None) -> float:
    """cost(d) of the spec, d = x - 1 > 0; `c_eff` defaults to `c_ratio` (nothing shared)."""
    ce = c_ratio if c_eff is None else c_eff
    return c_ratio * g / b + 1 + ce * (g / b) / d + d / 2



def test_mf_value_at_sqrt2_and_shape() -> None:
    assert eoq.movable_fraction(math.sqrt(2)) == pytest.approx(math.sqrt(2) - 1, rel=1e-12)
    # rises before sqrt(2), falls after
    assert eoq.movable_fraction(0.5) < eoq.movable_fraction(1.0) < eoq.movable_fraction(1.4)
    assert eoq.movable_fraction(1.5) > eoq.movable_fraction(3.0) > eoq.movable_fraction(10.0)
    assert eoq.movable_fraction(1.0) == pytest.approx(1 / 2.5)


# --------------------------------------------------------------------------- dhat and cost

@given(c_ratios, gs, bs)
def test_dhat_minimizes_the_cost(c: float, g: float, b: float) -> None:
    dh = eoq.dhat(c, g, b)
    assert dh == pytest.approx(math.sqrt(2 * c * g / b))
    best = cost_per_call(dh, c, g, b)
    for f in (0.5, 0.9, 0.99, 1.01, 1.1, 2.0):
        assert cost_per_call(dh * f, c, g, b) > best


@given(c_ratios, gs, bs)
def test_mf_is_the_timing_share_of_the_optimal_cost(c: float, g: float, b: float) -> None:
    dh = eoq.dhat(c, g, b)
    total = cost_per_call(dh, c, g, b)
    timing = c * (g / b) / dh + dh / 2
    assert eoq.movable_fraction(dh) == pytest.approx(timing / total, rel=1e-9)


# --------------------------------------------------------------------------- bp

@given(dhats)
def test_bp_is_zero_at_the_sweet_spot(dh: float) -> None:
    bp = eoq.bill_premium(1 + dh, dh)
    assert bp is not None
    assert bp == pytest.approx(0.0, abs=1e-9)


@given(dhats, st.floats(min_value=1.0 + 1e-9, max_value=1e3))
def test_bp_is_nonnegative_right_of_one(dh: float, x: float) -> None:
    bp = eoq.bill_premium(x, dh)
    assert bp is not None
    assert bp >= 0
    assert math.isfinite(bp)


@given(dhats, st.floats(min_value=-10.0, max_value=1.0))
def test_bp_is_undefined_at_or_left_of_one(dh: float, x: float) -> None:
    assert eoq.positional_penalty(x, dh) is None
    assert eoq.bill_premium(x, dh) is None


@given(st.floats(min_value=0.05, max_value=20.0), st.floats(min_value=0.05, max_value=0.95))
def test_bp_grows_on_both_arms(dh: float, f: float) -> None:
    xs = 1 + dh
    left_far, left_near = 1 + dh * f * f, 1 + dh * f
    right_near, right_far = 1 + dh / f, 1 + dh / (f * f)
    bp = [eoq.bill_premium(v, dh) for v in (left_far, left_near, xs, right_near, right_far)]
    assert bp[0] > bp[1] > bp[2] < bp[3] < bp[4]  # type: ignore[operator]
    # symmetric in log r: r and 1/r cost the same
    assert bp[1] == pytest.approx(bp[3], rel=1e-9)


def test_bp_known_values() -> None:
    # dhat = 1: mf = 0.4; at x = 3 (r = 2), P = (2-1)^2 / 4 = 0.25, bp = 0.1
    assert eoq.bill_premium(3.0, 1.0) == pytest.approx(0.1)
    assert eoq.positional_penalty(1.5, 1.0) == pytest.approx(0.25)


# --------------------------------------------------------------------------- rent, backstop, Holt, lamp

def test_rent_rate_is_one_at_the_wall() -> None:
    b, c = 40_000.0, 12.5
    assert eoq.rent_rate(b * (1 + c), b, c) == pytest.approx(1.0)
    assert eoq.rent_rate(b * 0.5, b, c) == 0.0
    assert eoq.rent_rate(b * 2, b, c) == pytest.approx(1 / 12.5)


@given(st.floats(min_value=1e-6, max_value=0.41422), st.sampled_from([1.0, 2.0, 3.5]))
def test_backstop_interval(mf: float, base: float) -> None:
    n = eoq.backstop_interval(mf, base)
    assert n == max(1, math.ceil(base * 0.4142 / mf))
    assert n is not None
    assert n >= 1


def test_backstop_interval_values() -> None:
    assert eoq.backstop_interval(0.0, 2.0) is None
    assert eoq.backstop_interval(0.4142, 2.0) == 2
    assert eoq.backstop_interval(0.2071, 2.0) == 4
    assert eoq.backstop_interval(0.1, 2.0) == 9


def test_growth_smoother_starts_as_a_running_mean_then_forgets_slowly() -> None:
    level, trend = eoq.holt(None, 0.0, 500.0, 0)
    assert (level, trend) == (500.0, 0.0)
    values = [500.0, 1500.0, 0.0, 2000.0]
    for n, v in enumerate(values[1:], start=1):
        level, trend = eoq.holt(level, trend, v, n)
    assert level == pytest.approx(sum(values) / len(values))  # the first residuals weigh equally
    for n in range(len(values), 400):
        level, trend = eoq.holt(level, trend, 700.0, n)
    assert eoq.growth(level, trend) == pytest.approx(700.0, rel=1e-6)
    assert trend == 0.0  # no trend term (docs/model.md: it followed bursts on real sessions)


def test_a_burst_moves_the_warm_estimate_by_at_most_clip_x_alpha() -> None:
    level = 1_000.0
    burst, _ = eoq.holt(level, 0.0, 90_000.0, 50)  # a 90k-token tool output, not a file we track
    assert burst == pytest.approx(1_000 + eoq.HOLT_ALPHA * (eoq.CLIP * 1_000 - 1_000))
    assert burst / level - 1 < 0.2
    early, _ = eoq.holt(level, 0.0, 90_000.0, 3)  # not warm yet: no clipping, a plain mean
    assert early == pytest.approx((3 * 1_000 + 90_000) / 4)


def test_growth_floor() -> None:
    assert eoq.growth(None, 0.0) == eoq.G_MIN == 100.0
    assert eoq.growth(20.0, 5.0) == 100.0
    assert eoq.growth(0.0, -50.0) == 100.0
    assert eoq.growth(900.0, -100.0) == 800.0


@pytest.mark.parametrize(("x", "xs", "bp", "want"), [
    (None, 2.0, None, "white"),
    (1.5, None, None, "white"),
    (1.0, 2.0, 0.5, "white"),
    (0.7, 2.0, None, "white"),
    (1.5, 2.0, 0.9, "green"),  # left arm: green whatever bp says
    (2.5, 2.0, 0.05, "green"),
    (2.5, 2.0, 0.10, "amber"),
    (2.5, 2.0, 0.249, "amber"),
    (2.5, 2.0, 0.25, "red"),
    (2.0, 2.0, 0.0, "green"),
])
def test_lamp(x: float | None, xs: float | None, bp: float | None, want: str) -> None:
    assert eoq.lamp(x, xs, bp, 0.10, 0.25) == want


@pytest.mark.parametrize(("bp", "prev", "want"), [
    (0.09, "amber", "amber"),  # amber is entered only at 0.10 ...
    (0.001, "amber", "amber"),  # ... and holds while the session is past its sweet spot, whatever bp
    (0.09, "green", "green"),
    (0.21, "red", "red"),  # red, too, holds while the session is past its sweet spot, whatever bp
    (0.199, "red", "red"),
    (0.0, "red", "red"),
    (0.24, "amber", "amber"),
])
def test_lamp_hysteresis(bp: float, prev: str, want: str) -> None:
    assert eoq.lamp(2.5, 2.0, bp, 0.10, 0.25, prev=prev) == want


def test_the_e2e_oracle_holds_the_lamp_as_eoq_does() -> None:
    """tests/e2e/spec_model (the e2e scripts' oracle, written apart from the plugin) lights the lamp
    as `eoq.lamp` does, call for call: a session walked well into red, then a prompt that shrinks
    with no compaction (a Codex thread's after an interrupted turn) to bp far under bp_red but past
    the sweet spot still, where red holds."""
    from tests.e2e.spec_model import BP_AMBER, BP_RED, Model

    m = Model()
    rows = [m.call(10, 20_000, 0)]
    rows += [m.call(10, 20_000 + 3_000 * k, 100) for k in range(1, 61)]
    rows.append(m.call(10, 34_000, 0))  # L 200k -> 34k: x 10.0 -> 1.7 (xSweet 1.54), bp 1.16 -> 0.006
    shrunk = rows[-1]
    assert shrunk.bp is not None
    assert shrunk.x > shrunk.x_sweet
    assert shrunk.bp < 0.8 * BP_RED
    assert [r.lamp for r in rows[-2:]] == ["red", "red"]
    prev = None
    for r in rows:
        assert r.lamp == eoq.lamp(r.x, r.x_sweet, r.bp, BP_AMBER, BP_RED, prev=prev), r
        prev = r.lamp


@pytest.mark.parametrize(("x", "prev", "want"), [
    (1.9, "amber", "amber"),  # back on the left arm (xSweet 2.0) but x - 1 >= 0.8 (xSweet - 1)
    (1.8, "amber", "amber"),
    (1.79, "amber", "green"),  # a real fall: the lamp goes out
    (1.9, "red", "amber"),
    (1.9, "green", "green"),  # a green lamp is not lit by the hold
])
def test_a_lit_lamp_holds_near_the_sweet_spot(x: float, prev: str, want: str) -> None:
    """The flicker a user saw (amber, green, amber as xSweet moved with g and reads joined B) is gone:
    amber is left only when x falls a fifth of the way back from the sweet spot."""
    assert eoq.lamp(x, 2.0, 0.5, 0.10, 0.25, prev=prev) == want


def test_a_lit_lamp_stays_lit_when_x_dips_to_one() -> None:
    assert eoq.lamp(0.98, 2.0, None, 0.10, 0.25, prev=None) == "white"
    assert eoq.lamp(0.98, 2.0, None, 0.10, 0.25, prev="green") == "green"


def test_restart_cost_reads_the_shared_prefix() -> None:
    # B 40k, 15k of it already cached: write 25k at 12.5x, read 15k at 1x
    assert eoq.restart_cost(12.5, 40_000, 15_000) == 12.5 * 25_000 + 15_000 == 327_500
    assert eoq.c_eff(12.5, 40_000, 15_000) == pytest.approx(8.1875)
    assert eoq.c_eff(12.5, 40_000, 0) == 12.5  # nothing shared: v1
    assert eoq.c_eff(12.5, 10_000, 15_000) == 1.0  # the prefix never counts above B
    # with cEff the sweet spot moves in: dhat = sqrt(2 * 8.1875 * 600 / 40000)
    assert eoq.dhat(8.1875, 600, 40_000) == pytest.approx(0.495605, rel=1e-5)
    # mf with the write share cRatio*g/B = 0.1875 (not dhat^2/2 = 0.1228)
    assert eoq.movable_fraction(0.495605, 12.5 * 600 / 40_000) == pytest.approx(0.495605 / 1.683105, rel=1e-5)


def test_cycle_saving() -> None:
    # L 90k, B 40k, g 600, dhat 0.5: the optimal cycle is 0.5 * 40000 / 600 = 33.3 calls, each reading
    # 50k fewer tokens after a restart that costs K = 327,500
    m = 0.5 * 40_000 / 600
    assert eoq.cycle_saving(90_000, 40_000, m, 327_500) == pytest.approx(33.3333 * 50_000 - 327_500, rel=1e-4)


# --------------------------------------------------------------------------- the EOQ claim itself

def simulate(b: int, g: int, c: float, restart_after: int, horizon: int) -> float:
    """Token-level simulation of `horizon` calls; returns the cost per call in read-price tokens.

    A cycle starts by writing the baseline B to cache (cRatio x read price). Each call reads the
    whole context L from cache (1 x) and writes the g new tokens (cRatio x); the context grows by g.
    After `restart_after` calls in a cycle the session restarts: L falls back to B.
    """
    cost = 0.0
    calls_in_cycle = 0
    big_l = b
    for _ in range(horizon):
        if calls_in_cycle == 0:
            cost += c * b
            big_l = b
        cost += big_l + c * g
        big_l += g
        calls_in_cycle += 1
        if calls_in_cycle == restart_after:
            calls_in_cycle = 0
    return cost / horizon


@settings(max_examples=25, deadline=None)
@given(st.sampled_from([eoq.CRATIO_5M, eoq.CRATIO_1H, 8.0]),
       st.integers(min_value=15_000, max_value=120_000),
       st.integers(min_value=60, max_value=400))
def test_cheapest_restart_position_is_the_sweet_spot(c: float, b: int, g: int) -> None:
    k_star = math.sqrt(2 * c * b / g)
    ks = range(max(2, int(k_star / 2)), int(2 * k_star) + 3)
    # a horizon of whole cycles for each k: the per-call cost of the steady state
    costs = {k: simulate(b, g, c, k, horizon=k * 3) for k in ks}
    best_k = min(costs, key=costs.__getitem__)
    # where the cheapest cycle ends: the context its last call left behind, in units of the baseline
    x_restart = (b + best_k * g) / b
    x_sweet = 1 + eoq.dhat(c, g, b)
    assert x_restart == pytest.approx(x_sweet, rel=0.02)
    # the cost curve is what the formula says, up to the discreteness of calls
    assert costs[best_k] / b == pytest.approx(cost_per_call(x_sweet - 1, c, g, b), rel=0.02)


@pytest.mark.parametrize("factor", [0.4, 0.7, 1.5, 2.5])
def test_bp_is_the_simulated_excess_cost(factor: float) -> None:
    """bp at a restart position = simulated cost per call there / optimal cost per call - 1."""
    b, g, c = 60_000, 60, eoq.CRATIO_5M
    dh = eoq.dhat(c, g, b)
    k_opt = round(dh * b / g)
    k = round(k_opt * factor)
    best = min(simulate(b, g, c, kk, kk * 3) for kk in range(k_opt - 3, k_opt + 4))
    here = simulate(b, g, c, k, k * 3)
    bp = eoq.bill_premium(1 + k * g / b, dh)
    assert bp is not None
    assert here / best - 1 == pytest.approx(bp, rel=0.05, abs=2e-4)


def test_a_bill_that_completes_to_within_rounding_rolls_over() -> None:
    """Progress that sums to a whole bill but for float rounding is that bill, never 0.99999...; the
    rates are those of test_engine's recorded example (25.999...96 after a step)."""
    left, done = eoq.bill_step(0.05166051660516402, 25.948339483394832, 25.948339483394832)
    assert done == 26
    assert 0 <= left < 1e-6
    assert eoq.bill_step(0.5, 0.2, 0.2) == (0.7, 0)
    assert eoq.bill_step(0.5, 1.0, 1.0) == (0.5, 1)
