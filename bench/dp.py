"""The best schedule's dynamic programme on long segments: ``python -m bench.dp [--calls 3000] [--repeat 5]``.

`core.segment.Segment.best_schedule` (any number of restarts, candidates pruned by dominance)
against two references timed in the same run on the same segment: the plain O(n^2) programme
written here (every last restart for every call, no pruning; the same costs, so the same optimum)
and the best single restart (`Segment.values`, one pass). The segment is seeded and realistic:
growth of a few hundred tokens a call with bursts, file reads moving B, cache misses after idle
gaps, 1-hour writes, a shared prefix. Prints seconds (median of --repeat) and the ratios; nothing
here asserts a time.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import time
from typing import TYPE_CHECKING, TypeVar

from session_watcher.core import backtest as bt

if TYPE_CHECKING:
    from collections.abc import Callable

T = TypeVar("T")

MODEL = "claude-opus-4-6"


def segment(calls: int, seed: int = 24) -> bt.Segment:
    rng = random.Random(seed)
    out: list[bt.Call] = []
    context, bd = 30_000, 30_000
    for n in range(1, calls + 1):
        growth = rng.choice([150, 300, 500, 800]) if rng.random() > 0.03 else rng.randint(10_000, 60_000)
        if rng.random() < 0.1:
            bd += rng.randint(500, 5_000)  # a file read joins what a restart carries
        if n > 1 and rng.random() < 0.01:  # a cold return: the cache expired, all of it written again
            cr, cw = 12_000, context - 12_000 + growth
        else:
            cr, cw = (0, context) if n == 1 else (context, growth)
        out.append(bt.Call(n, 0, cr + cw, min(bd, cr + cw), cr, 0, cw, MODEL))
        context = cr + cw
    return bt.Segment(out, 12_000)


def plain_dp(seg: bt.Segment) -> float:
    """The reference: best[r] = min over every last restart q < r, no pruning, O(n^2)."""
    n = len(seg.calls)
    w = seg.weights()
    act = [a * x for a, x in zip(seg.actual, w, strict=True)]
    drops = [seg._drop(k)[1] for k in range(n)]
    best = [math.inf] * n  # the value of calls 0..r with a restart right after r
    run = 0.0
    for r in range(n):
        run += act[r]
        best[r] = run  # no restart before
    for q in range(n - 1):
        v = best[q] + seg._restart_call(q) * w[q + 1]
        best[q + 1] = min(best[q + 1], v)
        for j in range(q + 2, n):
            v += seg._lighter_call(j, drops[q]) * w[j]
            if v < best[j]:
                best[j] = v
    return best[n - 1]


def timed(fn: Callable[[], T], repeat: int) -> tuple[float, T | None]:
    times: list[float] = []
    got: T | None = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        got = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), got


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=3000)
    ap.add_argument("--repeat", type=int, default=5)
    ns = ap.parse_args(argv)
    seg = segment(ns.calls)
    w = seg.weights()
    t_dp, schedule = timed(seg.best_schedule, ns.repeat)
    t_plain, plain = timed(lambda: plain_dp(seg), max(1, ns.repeat // 2))
    t_one, _ = timed(seg.values, ns.repeat)
    assert isinstance(schedule, list)
    value = math.fsum(c * x for c, x in zip(seg.schedule_costs(schedule), w, strict=True))
    none = math.fsum(a * x for a, x in zip(seg.actual, w, strict=True))
    print(f"segment of {ns.calls} calls: best schedule {len(schedule)} restarts, ${value:.2f} "
          f"(plain programme ${plain:.2f}; no restart ${none:.2f})")
    print(f"best_schedule  {t_dp:.3f} s")
    print(f"plain O(n^2)   {t_plain:.3f} s  (best_schedule is {t_plain / t_dp:.0f}x faster)")
    print(f"best single    {t_one:.3f} s  (best_schedule takes {t_dp / t_one:.1f}x its time)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
