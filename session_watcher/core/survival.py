"""A restart's expected saving where the agent's automatic compaction comes within its horizon. Pure.

The session's remaining length is unknown: it is taken as geometric, with mean `mu` calls (call
n + 1 comes with probability r^n, r = mu / (1 + mu)). Both paths' prompts run as saw-tooths: the
session left alone from its prompt P, the restarted one from what it carries, b, each growing by g a
call and, where it reaches the compaction point, starting again from the summary S the compaction
leaves. The restart saves, call by call, the difference of the two, weighted by the chance the call
comes, less K (docs/model.md, "A restart's saving under a survival model of the session's length").
"""

from __future__ import annotations

import math

TINY = 1e-9  # the weight below which the calls left count for nothing
TEETH_MAX = 10_000  # saw-tooths summed at most (a tiny growth against a wide window: few teeth)


def _piece(r: float, s: int, n: int, c: float, g: float) -> float:
    """sum over j < n of r^(s + j + 1) (c + g j): n calls from s, the first at prompt c."""
    if n <= 0:
        return 0.0
    rn = r**n
    ones = (1 - rn) / (1 - r)  # sum r^j
    ramp = r * (1 - n * r ** (n - 1) + (n - 1) * rn) / (1 - r) ** 2  # sum j r^j
    return r ** (s + 1) * (c * ones + g * ramp)


def path(x0: float, point: float, summary: float, g: float, r: float) -> tuple[float, float]:
    """(the expected prompt tokens read, the expected number of compactions) of a path starting at
    prompt `x0`: its prompt grows by `g` a call and, where it would reach `point`, the agent compacts
    and the call starts from `summary`; call s + 1 weighted by r^(s + 1)."""
    end = math.ceil(math.log(TINY) / math.log(r)) if r > 0 else 1
    total = compactions = 0.0
    s, c = 0, x0
    for _ in range(TEETH_MAX):
        if s >= end:
            break
        if c >= point:
            compactions += r ** (s + 1)
            c = summary
        n = min(max(1, math.ceil((point - c) / g)), end - s)
        total += _piece(r, s, n, c, g)
        s += n
        c += g * n
    return total, compactions


def expected_saving(starts: tuple[float, float], g: float, tooth: tuple[float, float], k: float, *, mu: float,
                    write: float = 0.0) -> float | None:
    """What restarting now saves, in read-price tokens, over a remaining length of mean `mu` calls:
    the session left alone reads from prompt `p`, the restarted one from `b` (`starts`), both compacting at
    `tooth`'s point to its summary; less K (`k`) and, per compaction, `write` (what a compaction's summary costs
    to write beyond reading it). None where the model does not hold (no growth, no room below the
    point, no length)."""
    (p, b), (point, summary) = starts, tooth
    if g <= 0 or mu <= 0 or summary >= point or summary < 0:
        return None
    r = mu / (1 + mu)
    stay, stay_compactions = path(p, point, summary, g, r)
    go, go_compactions = path(b, point, summary, g, r)
    return stay - go - k + write * (stay_compactions - go_compactions)


def _regime(x0: float, k: float, g: float, r: float, start: int, point: float) -> float:
    """The expected prompt tokens read, and restarts paid, of a path that from call `start` on
    restarts to `x0` every optimal cycle (sqrt(2 K / g) calls; fewer where the point comes first)."""
    n = max(1, math.ceil(min(math.sqrt(2 * k / g), max(1.0, (point - x0) / g))))
    rn = r**n
    return r**start * (_piece(r, 0, n, x0, g) + k * r ** (n + 1)) / (1 - rn)


def expected_saving_followed(starts: tuple[float, float], g: float, tooth: tuple[float, float], k: float, *,
                             k_summary: float, mu: float) -> float | None:
    """As `expected_saving`, but each path then follows the advice: the restarted one restarts to `b`
    every optimal cycle; the one left alone runs to `point`, compacts (writing the `summary`,
    `k_summary`) and from then restarts to the summary every optimal cycle."""
    (p, b), (point, summary) = starts, tooth
    if g <= 0 or mu <= 0 or summary >= point or summary < 0:
        return None
    r = mu / (1 + mu)
    h = max(0, math.ceil((point - p) / g))
    stay = _piece(r, 0, h, p, g) + k_summary * r ** (h + 1) + _regime(summary, k_summary, g, r, h, point)
    go = k + _regime(b, k, g, r, 0, point)
    return stay - go
