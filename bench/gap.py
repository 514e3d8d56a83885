"""Where the advice's restarts differ from the best schedule's, per session:
``python -m bench.gap TRANSCRIPT ...`` (docs/model.md, "Why the 200k-window sessions capture less").

For each session (the shipped parameters, no tuning): its window as replay knows it, per chain of real
segments (joined by their automatic compactions, core.chains) the best schedule's restarts and the
advice's (closed loop, `bench.calibrate.score`), what each of the
advice's restarts adds to the session's saving (the schedule priced with and without it), and the
capture against two references: the best schedule (the backtest's) and, as an extra column, the best
schedule restricted to restarts the advice could ever say, the calls where the real session's own
priced saving over its horizon clears the shipped advice floor (`engine.worth_saying`: $0.01 and 5 %
of the segment's cost so far; a cold return past the edge, which has no floor, stays allowed). The
gap between the two references is what the floor (with the horizon it prices over) forgoes by design;
the rest is timing. Nothing here asserts anything.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
from pathlib import Path
from typing import TYPE_CHECKING, cast

from bench import calibrate as cal
from session_watcher.core import backtest as bt
from session_watcher.core import engine
from session_watcher.core.chains import Chain
from session_watcher.core.eoq import cache_edge, cache_lifetime, quantities
from session_watcher.core.window import context_window

if TYPE_CHECKING:
    from session_watcher.core.shapes import Alert, State


def best_within(seg: bt.Segment | Chain, allowed: set[int]) -> tuple[float, list[int]]:
    """(saving, restarts): the best schedule whose restarts (indices into `seg`, a segment or the
    segments its automatic compactions join) all lie in `allowed`, priced as `schedule_costs` prices
    any schedule (a call costs what the last restart before it makes it cost): a dynamic programme
    over the last restart, O(n^2)."""
    n = len(seg.calls)
    w = seg.weights()
    points = set(seg.points()) if isinstance(seg, Chain) else set(range(n - 1))
    sums: dict[int, list[float]] = {}  # restart (-1: none) -> running cost of calls 0..j under it
    for r in [-1, *sorted(k for k in allowed if k in points)]:
        costs = seg.schedule_costs([] if r < 0 else [r])
        sums[r] = [0.0, *itertools.accumulate(c * wj for c, wj in zip(costs, w, strict=True))]

    def run(r: int, a: int, b: int) -> float:  # calls a+1..b with the last restart after call r
        return sums[r][b + 1] - sums[r][a + 1]

    best: dict[int, tuple[float, int | None]] = {-1: (0.0, None)}  # calls 0..k, a restart after k
    for k in sorted(sums):
        if k >= 0:
            best[k] = min((best[p][0] + run(p, p, k), p) for p in best if p < k)
    last: int | None
    total, last = min((v + run(p, p, n - 1), p) for p, (v, _) in best.items())
    out: list[int] = []
    while last is not None and last >= 0:
        out.append(last)
        last = best[last][1]
    return sums[-1][n] - total, out[::-1]


def sayable(s: cal.Session) -> tuple[list[bool], int | None]:
    """Per main-chain call of the real session: may the advice restart after it (its priced saving
    clears the floor, or the next call is a cold return the advice speaks of); and the window."""
    ok: list[bool] = []
    state = s.loaded.fresh()

    def hook(st: State, alerts: list[Alert], _usage: object) -> None:
        # asked on a copy of the engine: the hold by a burst (`engine.payback_holds`) starts its count
        # where the fold's own gate asks, not here
        seen = cast("State", {**st, "engine": dict(st["engine"])})
        ok.append(engine.worth_saying(seen, quantities(seen, s.cfg), s.cfg))
        if ok[:-1] and any(a["kind"] == "guard" for a in alerts):
            ok[-2] = True  # the advice was to restart before this call

    engine.fold(state, s.loaded.events, s.cfg, s.loaded.paths, call_hook=hook)
    ctx = state["context"]
    return ok, context_window(ctx.get("window"), [ctx.get("model")], ctx.get("peak"))


def unforeseen(s: cal.Session, ch: Chain) -> dict[int, tuple[float, float]]:
    """Restart points of the chain `ch` (indices) whose next call re-wrote the context after an idle gap
    short of the cache's edge: index -> (the gap, the lifetime), seconds."""
    out: dict[int, tuple[float, float]] = {}
    for j in range(1, len(ch.where)):
        (seg, i), (pseg, pi) = ch.where[j], ch.where[j - 1]
        c, prev = seg.calls[i], pseg.calls[pi]
        if seg.rewrite[i] <= 0 or c.ts is None or prev.ts is None:
            continue
        life = cache_lifetime(pseg.ttl[pi], s.cfg.get("cliff"), prev.model)
        if life is not None and c.ts - prev.ts <= cache_edge(life):
            out[j - 1] = (c.ts - prev.ts, life)
    return out


def _capture(saving: float, best: float) -> float:
    return saving / best if best > 1e-12 else 1.0  # no restart to find: silence is right


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("transcripts", nargs="+", type=Path)
    ap.add_argument("--window", type=int, help="only sessions of this window (as replay knows it)")
    ap.add_argument("--misses", action="store_true", help="the best schedule without restarts timed by a miss "
                    "nothing announced (an eviction), then none in the band either")
    ns = ap.parse_args(argv)
    rows: list[tuple[float, ...]] = []  # (advice, best, best within the floor[, no eviction, nor band]), dollars
    extra = " without evictions | nor the band | misses the best times (gap / lifetime) |" if ns.misses else ""
    out = ["| session | window | segment: best restarts / advice's (what each adds) | best | within the floor | "
           "advice | capture | capture within the floor |" + extra,
           "|---|---|---|---|---|---|---|---|" + ("---|---|---|" if ns.misses else "")]
    for path in ns.transcripts:
        s = cal.prepare(path)
        ok, window = sayable(s)
        if ns.window is not None and window != ns.window:
            continue
        sc = cal.score(s, {})
        floor_best, parts, at = 0.0, [], 0
        no_evict = no_band = 0.0
        timed: list[str] = []
        for seg in s.segs:
            if ns.misses:
                miss = unforeseen(s, seg)
                points = set(seg.points())
                no_evict += best_within(seg, {k for k in points if not (k in miss and miss[k][0] <= miss[k][1])})[0]
                no_band += best_within(seg, points - set(miss))[0]
                best_k = set(seg.best()[0])
                timed += [f"{seg.calls[k + 1].call} ({gap:.0f} s / {life / 60:.0f} min)"
                          for k, (gap, life) in sorted(miss.items()) if k in best_k]
            n, first = len(seg.calls), seg.calls[0].call
            got, _within = best_within(seg, {k for k in range(n) if ok[at + k]})
            floor_best += got
            at += n
            mine = seg.local(sc.restarts)
            with_all = cal.usd(seg, mine)
            adds = [f"{first + k} ({cal.usd(seg, [x for x in mine if x != k]) - with_all:+.2f})" for k in mine]
            best = [str(first + k) for k in seg.best()[0]]
            if best or adds:
                parts.append(f"{first}-{seg.calls[-1].call}: {', '.join(best) or '-'} / {', '.join(adds) or '-'}")
        rows.append((sc.saving, s.best, floor_best, no_evict, no_band))
        more = (f" ${no_evict:.2f} ({_capture(sc.saving, no_evict):.3f}) | ${no_band:.2f} "
                f"({_capture(sc.saving, no_band):.3f}) | {', '.join(timed) or '-'} |") if ns.misses else ""
        out.append(f"| {s.name} | {window} | {'; '.join(parts) or '-'} | ${s.best:.2f} | ${floor_best:.2f} | "
                   f"${sc.saving:.2f} | {sc.capture(s):.3f} | {_capture(sc.saving, floor_best):.3f} |" + more)
    if rows:
        out.append("")
        refs = [("the best schedule", 1), ("the best schedule within the floor", 2)]
        if ns.misses:
            refs += [("the best schedule without evictions", 3),
                     ("the best schedule without evictions nor the band", 4)]
        for label, col in refs:
            caps = [_capture(r[0], r[col]) for r in rows]
            out.append(f"Against {label}: dollar capture {sum(r[0] for r in rows) / sum(r[col] for r in rows):.3f}, "
                       f"median {statistics.median(caps):.3f}, lowest {min(caps):.3f} ({len(rows)} sessions)")
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
