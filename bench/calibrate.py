"""The gate's and the cold return's defaults, chosen by the closed-loop backtest, leave-one-session-out:
``python -m bench.calibrate [--quick] [--at-prompt | --at-stop] [--json OUT] [TRANSCRIPT ...]`` (--at-prompt:
the closed loop acts on the advice at the agent's turn's end, core.closedloop's `alertAtPrompt`; --at-stop:
the advice is sent at the agent's stop if it still holds there and acted on at the next prompt,
`alertAtStop`, docs/model.md "The advice sent at the turn's end").

Over the calibration sessions (default: the 15 of tests/calibration.py, SPEC v3 "Backtest"): every
candidate setting of the gate (bp_amber, notify_dwell, bill_lookback) and of the cold return
(guard_x) is followed in closed loop on every session (core.closedloop, the hooks' own fold), and
its restarts priced against the best schedule of any number of restarts (core.backtest). Then, for
each session in turn, the setting is chosen on the others (the constraints below on each of them,
then the objective) and scored on the one left out. Prints the tables docs/model.md quotes: the
figures before (today's defaults, `--before`), each fold's choice and its left-out score, the
left-out totals, the choice on all sessions, and how stable the choice was across folds.

Constraints on every session a choice is made on (issue 24): following the advice saves >= 0; the
median spacing of its advised restarts >= 15 calls; no advice in a segment whose best schedule
saves under 2 %; the lamp at most 0.05 changes per call within segments (xSweet's 95th-percentile
step does not depend on the gate: printed once).

Objective (bigger is better): the smallest slack to the targets, min(dollar capture - 0.80, median
capture - 0.75, lowest capture - 0.30), plus a tenth of the three slacks' sum (which breaks the
ties of the first). A setting is judged by its worst neighbour on the grid (itself and one step
along each axis), then by their mean: a plateau wins over a lone peak, and a setting one step from
a cliff loses to one two steps away; remaining ties go to the grid's order.

Each session is parsed once; each candidate is one fold per session. Nothing here asserts anything.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from session_watcher.base import config
from session_watcher.core import backtest as bt
from session_watcher.core import closedloop
from session_watcher.sessions import backtest as shell

if TYPE_CHECKING:
    from session_watcher.core.chains import Chain
    from session_watcher.core.shapes import Config

GRID: dict[str, list[Any]] = {
    "bp_amber": [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.10],
    "notify_dwell": [1, 2, 3, 5],
    "bill_lookback": [0, 3, 10, 30, 100_000],
    "guard_x": [1.0, 1.02, 1.05, 1.1, 1.2, 1.3, 1.5, 1.7, 2.0, 1000.0],
}
QUICK: dict[str, list[Any]] = {
    "bp_amber": [0.001, 0.01, 0.10],
    "notify_dwell": [1, 3],
    "bill_lookback": [0, 100_000],
    "guard_x": [1.1, 1.3, 1.7],
}
BEFORE = {"bp_amber": 0.10, "notify_dwell": 3, "bill_lookback": 0, "guard_x": 1.7}  # the v2 defaults
TARGETS = {"dollar": 0.80, "median": 0.75, "lowest": 0.30}
MIN_SPACING = 15  # calls between a session's advised restarts, median
MAX_LAMP = 0.05  # lamp changes per call within segments


@dataclass
class Session:
    """One calibration session: parsed once, with what does not depend on the gate."""

    name: str
    loaded: shell.Loaded
    cfg: Config
    seen: closedloop.Observed
    segs: list[Chain]  # the real segments, joined by their automatic compactions (core.chains)
    actual: float  # dollars
    best: float  # the best schedule's saving, dollars
    flat: list[tuple[int, int]]  # (first, last call) of chains whose best schedule saves under 2 %
    hindsight1: float
    sweet: float  # dollars saved following the sweet spot in closed loop
    sweet_restarts: int
    lamp: dict[float, float] = field(default_factory=dict)  # bp_amber -> lamp changes per call in segments
    xsweet_p95: float | None = None
    turns: frozenset[str] = frozenset()  # the calls that open an agent turn (`alertAtPrompt`'s), by key
    stops: frozenset[str] = frozenset()  # the calls after the agent stopped (`alertAtStop`'s Stop hook), by key


def prepare(path: Path) -> Session:
    loaded = shell.load(str(path))
    cfg = shell.config_for(str(path), {})
    seen = closedloop.observe(loaded.fresh(), loaded.events, cfg, loaded.paths)
    segs = bt.chains(bt.segments(seen.calls, seen.shared), seen.autos)
    actual = sum(usd(s, []) for s in segs)
    best, flat, one = 0.0, [], 0.0
    for s in segs:
        schedule, k = s.best()
        best += usd(s, []) - usd(s, schedule)
        one += usd(s, []) - usd(s, [] if k is None else [k])
        base = usd(s, [])
        if base <= 0 or 100 * (base - usd(s, schedule)) / base < bt.FLAT_SEGMENT_PCT:  # the chain's
            flat.append((s.calls[0].call, s.calls[-1].call))
    sweet = closedloop.follow(loaded.fresh(), seen, cfg, "sweetSpot")
    stab = bt.stability(seen.calls)
    from bench.turns import stopped
    from session_watcher.agents.codex.reader import session_id as codex_id  # a Codex rollout: its thread id

    name = (codex_id(str(path)) or path.name.removesuffix(".jsonl"))[:8]
    turns = shell.turns(str(path))
    return Session(name, loaded, cfg, seen, segs, actual, best, flat, one,
                   actual - price(segs, sweet), len(sweet), xsweet_p95=stab["xSweetMoveP95"],
                   turns=turns, stops=stopped(path, turns))


def usd(seg: bt.Segment | Chain, restarts: list[int]) -> float:
    units, dollars = seg.total(seg.schedule_costs(restarts))
    return dollars if dollars is not None else units


def price(segs: list[Chain], restarts: list[int]) -> float:
    """Dollars of the session with a restart after each of the call numbers `restarts`."""
    return sum(usd(s, s.local(restarts)) for s in segs)


@dataclass
class Score:
    """One setting on one session."""

    saving: float
    restarts: list[int]
    flat_advice: int  # restarts in segments whose best schedule saves under 2 %

    def capture(self, s: Session) -> float:
        return self.saving / s.best if s.best > 0 else 1.0

    def spacing(self) -> float | None:
        gaps = [b - a for a, b in itertools.pairwise(self.restarts)]
        return statistics.median(gaps) if gaps else None


def score(s: Session, setting: dict[str, Any], policy: str = "alert") -> Score:
    """The setting followed in closed loop (`policy`: "alert", or "alertAtPrompt", acted on at the
    agent's turn's end, or "alertAtStop", sent at the agent's stop if it still holds there)."""
    cfg = config.merge(s.cfg, setting)
    restarts = closedloop.follow(s.loaded.fresh(), s.seen, cfg, policy, s.turns, s.stops)
    flat = sum(1 for r in restarts if any(a <= r <= b for a, b in s.flat))
    return Score(s.actual - price(s.segs, restarts), restarts, flat)


def lamp_rate(s: Session, bp_amber: float) -> float:
    if bp_amber not in s.lamp:
        cfg = config.merge(s.cfg, {"bp_amber": bp_amber})
        seen = closedloop.observe(s.loaded.fresh(), s.loaded.events, cfg, s.loaded.paths)
        s.lamp[bp_amber] = bt.stability(seen.calls)["lampChangesPerCall"] or 0.0
    return s.lamp[bp_amber]


def figures(sessions: list[Session], scores: list[Score]) -> dict[str, float]:
    caps = [sc.capture(s) for s, sc in zip(sessions, scores, strict=True)]
    best = sum(s.best for s in sessions)
    return {"dollar": sum(sc.saving for sc in scores) / best if best > 0 else 1.0,
            "median": statistics.median(caps), "lowest": min(caps)}


def slack(f: dict[str, float]) -> float:
    """The smallest slack to the targets, plus a tenth of their sum (which breaks its ties)."""
    gaps = [f[k] - TARGETS[k] for k in TARGETS]
    return min(gaps) + 0.1 * sum(gaps)


def feasible(sessions: list[Session], scores: list[Score], setting: dict[str, Any]) -> bool:
    for s, sc in zip(sessions, scores, strict=True):
        spacing = sc.spacing()
        if (sc.saving < 0 or sc.flat_advice or (spacing is not None and spacing < MIN_SPACING)
                or lamp_rate(s, setting["bp_amber"]) > MAX_LAMP):
            return False
    return True


def neighbours(key: tuple[Any, ...], grid: dict[str, list[Any]]) -> list[tuple[Any, ...]]:
    axes = list(grid.values())
    out = [key]
    for i, axis in enumerate(axes):
        at = axis.index(key[i])
        for step in (-1, 1):
            if 0 <= at + step < len(axis):
                out.append((*key[:i], axis[at + step], *key[i + 1:]))
    return out


def choose(sessions: list[Session], table: dict[tuple[Any, ...], list[Score]], keep: list[int],
           grid: dict[str, list[Any]]) -> tuple[tuple[Any, ...], dict[str, float], float] | None:
    """The setting chosen on the sessions `keep` (indices): feasible on each, the best worst neighbour."""
    subset = [sessions[i] for i in keep]
    names = list(grid)
    raw: dict[tuple[Any, ...], float] = {}
    ok: dict[tuple[Any, ...], bool] = {}
    for key, scores in table.items():
        sub = [scores[i] for i in keep]
        raw[key] = slack(figures(subset, sub))
        ok[key] = feasible(subset, sub, dict(zip(names, key, strict=True)))
    robust: dict[tuple[Any, ...], tuple[float, float]] = {}
    for key in table:
        if ok[key]:
            around = [raw[n] for n in neighbours(key, grid) if n in raw]
            robust[key] = (min(around), sum(around) / len(around))
    if not robust:
        return None
    key = max(robust, key=robust.__getitem__)  # the first of equals in the grid's order
    return key, figures(subset, [table[key][i] for i in keep]), robust[key][0]


# ----------------------------------------------------------------------------- output

def _pct(v: float) -> str:
    return f"{100 * v:.1f} %"


def session_table(sessions: list[Session], scores: list[Score], title: str) -> list[str]:
    lines = [f"### {title}", "",
             "| session | calls | cost | best | best single | sweet spot | advice | restarts | spacing | capture |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for s, sc in zip(sessions, scores, strict=True):
        sp = sc.spacing()
        lines.append(f"| {s.name} | {len(s.seen.calls)} | ${s.actual:.2f} | {_pct(s.best / s.actual)} | "
                     f"{_pct(s.hindsight1 / s.actual)} | {_pct(s.sweet / s.actual)} ({s.sweet_restarts}) | "
                     f"{_pct(sc.saving / s.actual)} | {len(sc.restarts)} | {'-' if sp is None else f'{sp:.0f}'} | "
                     f"{sc.capture(s):.2f} |")
    f = figures(sessions, scores)
    actual = sum(s.actual for s in sessions)
    lines += ["", f"Over {len(sessions)} sessions (${actual:.2f} of cache cost): the best schedule saves "
              f"{_pct(sum(s.best for s in sessions) / actual)}, the best single restart "
              f"{_pct(sum(s.hindsight1 for s in sessions) / actual)}, the sweet spot "
              f"{_pct(sum(s.sweet for s in sessions) / actual)}, the advice "
              f"{_pct(sum(sc.saving for sc in scores) / actual)}; capture: dollars {f['dollar']:.2f}, "
              f"median {f['median']:.2f}, lowest {f['lowest']:.2f}; "
              f"{sum(1 for sc in scores if sc.saving < 0)} session(s) where following it costs more.", ""]
    return lines


def fmt(key: tuple[Any, ...]) -> str:
    bp, dwell, lookback, gx = key
    look = "segment" if lookback >= 100_000 else str(lookback)
    return f"bp_amber {bp:g}, dwell {dwell}, lookback {look}, guard_x {'off' if gx >= 1000 else f'{gx:g}'}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("transcripts", nargs="*", type=Path)
    ap.add_argument("--quick", action="store_true", help="a small grid (a smoke run)")
    ap.add_argument("--json", type=Path, help="write every candidate's per-session figures here")
    ap.add_argument("--at-prompt", action="store_true", help="the closed loop acted on at the agent's turn's "
                    "end (closedloop's alertAtPrompt)")
    ap.add_argument("--at-stop", action="store_true", help="the advice sent at the agent's stop if it still "
                    "holds there, acted on at the next prompt (closedloop's alertAtStop)")
    ns = ap.parse_args(argv)
    policy = "alertAtStop" if ns.at_stop else "alertAtPrompt" if ns.at_prompt else "alert"
    grid = QUICK if ns.quick else GRID
    with tempfile.TemporaryDirectory() as tmp:
        # the built-in defaults, whoever runs it: no user's config, prices or inferred cliff (a replay of a
        # session whose folder is gone, as every calibration session's is, folds with the user's config)
        os.environ["SESSION_WATCHER_HOME"] = str(Path(tmp) / "home")
        if ns.transcripts:
            paths = ns.transcripts
        else:
            from tests.calibration import all_sessions

            paths = all_sessions(Path(tmp))
        t0 = time.perf_counter()
        sessions = [prepare(p) for p in paths]
        t_prep = time.perf_counter() - t0
        names = list(grid)
        keys = list(itertools.product(*grid.values()))
        t0 = time.perf_counter()
        table = {key: [score(s, dict(zip(names, key, strict=True)), policy) for s in sessions] for key in keys}
        before_key = tuple(BEFORE[n] for n in names)
        table_before = [score(s, BEFORE, policy) for s in sessions] if before_key not in table else table[before_key]
        t_sweep = time.perf_counter() - t0
    out = [f"Calibration: {len(sessions)} sessions parsed in {t_prep:.1f} s; {len(keys)} settings x "
           f"{len(sessions)} sessions folded in closed loop in {t_sweep:.1f} s.", ""]
    out += session_table(sessions, table_before, f"Before: {fmt(before_key)} (the v2 defaults)")
    everyone = list(range(len(sessions)))
    chosen_all = choose(sessions, table, everyone, grid)
    if chosen_all is None:
        out.append("No setting meets the constraints on every session.")
        print("\n".join(out))
        return 1
    out += session_table(sessions, table[chosen_all[0]], f"After (in sample): {fmt(chosen_all[0])}")
    out += ["### Leave one session out", "",
            f"| left out | chosen on the other {len(sessions) - 1} | capture | saving | restarts | spacing |",
            "|---|---|---|---|---|---|"]
    left: list[Score] = []
    picks: list[tuple[Any, ...]] = []
    for i, s in enumerate(sessions):
        got = choose(sessions, table, [j for j in everyone if j != i], grid)
        if got is None:
            out.append(f"| {s.name} | (none feasible) | | | | |")
            continue
        sc = table[got[0]][i]
        left.append(sc)
        picks.append(got[0])
        sp = sc.spacing()
        out.append(f"| {s.name} | {fmt(got[0])} | {sc.capture(s):.2f} | {_pct(sc.saving / s.actual)} | "
                   f"{len(sc.restarts)} | {'-' if sp is None else f'{sp:.0f}'} |")
    if len(left) == len(sessions):
        f = figures(sessions, left)
        out += ["", f"Left out: dollar capture {f['dollar']:.2f}, median {f['median']:.2f}, lowest "
                f"{f['lowest']:.2f}; {sum(1 for sc in left if sc.saving < 0)} negative. "
                f"Folds choosing the in-sample setting: {sum(1 for p in picks if p == chosen_all[0])} of "
                f"{len(picks)}; distinct choices: "
                + "; ".join(f"{fmt(k)} ({n})" for k, n in sorted(
                    {k: picks.count(k) for k in picks}.items(), key=lambda kv: -kv[1])), ""]
    bp = chosen_all[0][0]
    out += ["### Stability at the chosen bp_amber", "",
            f"Lamp changes per call within segments, worst session: {max(lamp_rate(s, bp) for s in sessions):.3f} "
            f"(at bp_amber 0.10: {max(lamp_rate(s, 0.10) for s in sessions):.3f}); xSweet's 95th-percentile "
            f"step, worst session: {max(s.xsweet_p95 or 0.0 for s in sessions):.3f}.", ""]
    out += ["### The best settings in sample (by their own slack, before the neighbours)", ""]
    ranked = []
    for key in keys:
        f = figures(sessions, table[key])
        ranked.append((slack(f), key, f))
    ranked.sort(key=lambda t: -t[0])
    out += ["| setting | dollar | median | lowest | feasible |", "|---|---|---|---|---|"]
    for _sl, key, f in ranked[:12]:
        ok = feasible(sessions, table[key], dict(zip(names, key, strict=True)))
        out.append(f"| {fmt(key)} | {f['dollar']:.3f} | {f['median']:.3f} | {f['lowest']:.3f} | "
                   f"{'yes' if ok else 'no'} |")
    print("\n".join(out))
    if ns.json:
        ns.json.write_text(json.dumps({
            "sessions": [s.name for s in sessions], "grid": grid,
            "table": [{"setting": list(k), "savings": [sc.saving for sc in v], "restarts": [sc.restarts for sc in v]}
                      for k, v in table.items()],
            "best": [s.best for s in sessions]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
