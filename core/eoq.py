"""The EOQ cost model (SPEC "The cost model"): plain functions of plain numbers.

Restarting costs writing B tokens to cache at cRatio x the read price; staying costs reading L
each call; the context grows by g per call. With d = x - 1, the cost per call in units of
B x read price is

    cost(d) = cRatio*g/B + 1 + cRatio*(g/B)/d + d/2

whose minimum is at d = dhat = sqrt(2*cRatio*g/B): the sweet spot xSweet = 1 + dhat.
"""

from __future__ import annotations

import math

G_MIN = 100.0  # tokens per call: floor of the growth rate
HOLT_ALPHA = 0.3
HOLT_BETA = 0.1
MF_MAX = math.sqrt(2) - 1  # the movable fraction's maximum, at dhat = sqrt(2)
CRATIO_5M = 1.25 / 0.10  # 12.5: 5-minute cache write / cache read
CRATIO_1H = 2.0 / 0.10  # 20: 1-hour cache write / cache read


def cost_per_call(d: float, c_ratio: float, g: float, b: float) -> float:
    """cost(d) of the spec, d = x - 1 > 0."""
    return c_ratio * g / b + 1 + c_ratio * (g / b) / d + d / 2


def dhat(c_ratio: float, g: float, b: float) -> float:
    return math.sqrt(2 * c_ratio * g / b)


def movable_fraction(dh: float) -> float:
    """mf = dhat / (1 + dhat + dhat^2/2): the timing-sensitive share of cost at the optimum."""
    return dh / (1 + dh + dh * dh / 2)


def positional_penalty(x: float, dh: float) -> float | None:
    """P = (r - 1)^2 / (2r) with r = (x - 1)/dhat; None where r <= 0 (P is infinite there)."""
    r = (x - 1) / dh
    if r <= 0:
        return None
    return (r - 1) ** 2 / (2 * r)


def bill_premium(x: float, dh: float) -> float | None:
    """bp = mf * P: the relative excess cost of a cycle ending at x over the optimal one."""
    p = positional_penalty(x, dh)
    return None if p is None else movable_fraction(dh) * p


def rent_rate(l_tokens: float, b_default: float, c_ratio: float) -> float:
    """rentRate = max(0, L - B_default) / (cRatio * B_default): 1.0 at the rate wall."""
    return max(0.0, l_tokens - b_default) / (c_ratio * b_default)


def backstop_interval(mf: float, base: float) -> int | None:
    """N = ceil(base * 0.4142 / mf) bill cycles; None (infinite) when mf is 0."""
    if mf <= 0:
        return None
    return max(1, math.ceil(base * 0.4142 / mf))


def holt(level: float | None, trend: float, value: float) -> tuple[float, float]:
    """One step of Holt's double exponential smoothing (alpha 0.3, beta 0.1)."""
    if level is None:
        return value, 0.0
    new_level = HOLT_ALPHA * value + (1 - HOLT_ALPHA) * (level + trend)
    new_trend = HOLT_BETA * (new_level - level) + (1 - HOLT_BETA) * trend
    return new_level, new_trend


def growth(level: float | None, trend: float) -> float:
    """g = max(G_MIN, level + trend)."""
    return G_MIN if level is None else max(G_MIN, level + trend)


def lamp(x: float | None, x_sweet: float | None, bp: float | None, amber: float, red: float) -> str:
    """white before a valid baseline or at x <= 1; green on the left arm; then by bp."""
    if x is None or x_sweet is None or x <= 1:
        return "white"
    if x < x_sweet or bp is None or bp < amber:
        return "green"
    return "amber" if bp < red else "red"
