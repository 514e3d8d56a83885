"""What a person sees of the advice, and the advice's floors, chosen leave-one-session-out:
``python -m bench.advice [--before] [--quick] [--compact | --client | --payback] [--at-prompt | --at-stop]
[--with KEY=VALUE ...] [TRANSCRIPT ...]`` (--at-prompt: the closed loop acts on the advice at the agent's
turn's end, core.closedloop's `alertAtPrompt`, docs/model.md "The advice acted on at the turn's end";
--at-stop: the gates and reminders are sent at the agent's stop, priced there, if they still hold there,
and acted on at the next prompt, `alertAtStop`, in closed loop and in what is sent (`deliveries`; alerts
lost priced at delivery), "The advice sent at the turn's end";
--compact: one `compact_reserve` for every session instead of the floors; --client:
Claude Code's reserve by its client's version, before 2.1.22 and from it, as the transcript's autocompact
events say; docs/model.md "The horizon and the compaction"; --payback: `compact_payback`, "The compaction
within a restart's payback"; --with: a config key, its value JSON, set under every setting, to measure a
variant; with more than one setting, each session's capture and alerts lost under each).

Over the calibration sessions (default: the 15 of tests/calibration.py) each setting of the floors
(`advice_min_usd`, `advice_min_share`, `gate_min_calls`) is followed in closed loop
(bench.calibrate.score: the hooks' own fold, priced against the best schedule of restarts), and the
real session (a user who never restarts) is folded with it for what that user is shown:

* alerts whose promised saving the backtest's own counterfactual shows lost: a gate or reminder
  after call k promises `savingUsd` over `cycle` calls; restarting after k, those calls of the real
  session (to the end of its chain at most: the segments its automatic compactions join, core.chains)
  would have cost more than they did (a cold return: the same, from before its call);
* reminders per segment after the gate (the most in one segment, and segments over 3), and of the
  segments over 3 those where a reminder past the 3rd came before the saving had grown past twice
  the gate's (issue 37's allowance: more than 3 only once the session has grown so);
* interruptions per hour of work (gate, reminders and cold returns per hour, the gaps between calls
  counted up to 15 minutes each), and lamp changes per call within segments.

A setting is chosen on the other sessions (feasible on each: following the advice saves >= 0, the
median spacing of its restarts >= MIN_SPACING calls, no advice in a flat segment; then the largest
slack to the targets 0.90 / 0.85 / 0.50, among equals the fewest alerts lost) and scored on the one
left out. The
back-off and the cap change nothing in closed loop (a user who follows the gate never sees a
reminder): they are compared on the real sessions' reminders and interruptions alone. Prints the
tables docs/model.md quotes. Nothing here asserts anything.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import statistics
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench import calibrate as cal
from session_watcher.base import config
from session_watcher.core import backtest as bt
from session_watcher.core import closedloop, engine, eoq
from session_watcher.core.eoq import quantities

if TYPE_CHECKING:
    from session_watcher.core.chains import Chain
    from session_watcher.core.shapes import Alert, CallUsage, Config, Quantities, State

GRID: dict[str, list[Any]] = {
    "advice_min_usd": [0.0, 0.01, 0.02, 0.05, 0.10, 0.20],
    "advice_min_share": [0.0, 0.02, 0.05, 0.10, 0.20],
    "gate_min_calls": [1, 10, 20, 30],
}
QUICK: dict[str, list[Any]] = {"advice_min_usd": [0.0, 0.05], "advice_min_share": [0.0, 0.02],
                               "gate_min_calls": [1, 20]}
# where the agent compacts on its own before the session shows it: its window less this (the floors as shipped)
COMPACT: dict[str, list[Any]] = {"compact_reserve": [0, 20_000, 33_000, 45_000, 60_000]}
# the reserve by Claude Code's client version (a Codex thread: the config's fallback), the floors as shipped
CLIENT: dict[str, list[Any]] = {"before": [33_000, 45_000, 60_000],
                                "since": [20_000, 27_000, 33_000, 39_000, 45_000]}
# no advice while the compaction is within this many times a restart's payback (0: no such hold), the floors
# as shipped
PAYBACK: dict[str, list[Any]] = {"compact_payback": [0.0, 0.5, 1.0, 1.5, 2.0, 3.0]}
BACKOFF = [(1.0, 1000), (1.5, 3), (2.0, 3), (2.0, 5), (3.0, 3)]  # (remind_backoff, remind_cap)
TARGETS = {"dollar": 0.90, "median": 0.85, "lowest": 0.50}
MIN_SPACING = 20
IDLE_CAP = 900.0  # seconds: a longer gap between calls counts as this much work
CAP = 3  # reminders in a segment after its gate, past which issue 37 wants the saving doubled


@dataclass
class Shown:
    """What a user who never restarts is shown under one setting."""

    alerts: int
    lost: int  # alerts that promised a saving the counterfactual shows lost
    promised: float
    realized: float
    reminders_max: int  # the most reminders after a gate in one segment
    over_cap: int  # segments with more than 3
    hours: float
    lamp: float  # lamp changes per call within segments
    unearned: int = 0  # of those, segments with a reminder past the 3rd before the saving doubled the gate's


def _hours(stamps: list[object]) -> float:
    """Hours of work between calls made at `stamps` (a gap counts IDLE_CAP at most; a call without a
    time is left out)."""
    ts = [t for t in stamps if isinstance(t, int | float)]
    return sum(min(b - a, IDLE_CAP) for a, b in itertools.pairwise(ts) if b > a) / 3600


def _realized(seg: Chain, k: int, horizon: int) -> float:
    """Dollars (read units when unpriced) the real calls k+1..k+horizon save with a restart after
    call index k (of its chain: the segments its automatic compactions join, core.chains)."""
    end = min(len(seg.calls), k + 1 + horizon)
    w = seg.weights()
    after = seg.schedule_costs([k])
    return sum((seg.actual[j] - after[j]) * w[j] for j in range(k + 1, end))


def shown(s: cal.Session, cfg: Config, at_stop: bool = False) -> Shown:
    """What a user who never restarts is shown (`at_stop`: the gates and reminders sent at the agent's
    first stop after their call, priced there, only if they still hold there: `deliveries`)."""
    fired: list[tuple[int, Alert]] = []
    calls: list[bt.Call] = []
    state = s.loaded.fresh()
    there: list[tuple[float, float | None, int | None] | None] = []  # per call, at_stop: the advice priced

    def hook(st: State, alerts: list[Alert], usage: CallUsage) -> None:
        q = quantities(st, cfg)
        calls.append(closedloop._call(st, q, alerts, usage))
        fired.extend((len(calls) - 1, a.copy()) for a in alerts)
        if at_stop:
            there.append(_priced(st, cfg, q) if closedloop.holds(st, cfg) else None)

    engine.fold(state, s.loaded.events, cfg, s.loaded.paths, call_hook=hook)
    where: list[tuple[Chain, int]] = []
    for seg in bt.chains(bt.segments(calls, s.seen.shared), s.seen.autos):
        where.extend((seg, i) for i in range(len(seg.calls)))
    sent = deliveries(s, calls, fired, there) if at_stop else [(j, a, 0) for j, a in fired]
    lost = 0
    promised = realized = 0.0
    per_seg: dict[int, int] = {}
    gate: dict[int, float] = {}  # the gate's promised saving (read units), by segment
    unearned: set[int] = set()
    for j, a, wait in sent:
        seg, i = where[j]
        # every alert promises `savingUsd` over `cycle` calls (eoq.restart_saving); a cold return's
        # advice was to restart before its call; one sent at a stop, before the next prompt's call
        k = i - 1 if a["kind"] == "guard" else i + wait
        cycle = a.get("cycle")
        horizon = math.ceil(cycle) if cycle else len(seg.calls)
        n = calls[j].segment
        if a["kind"] == "gate":
            gate[n] = a.get("saving") or 0.0
        if a["kind"] == "backstop":
            per_seg[n] = per_seg.get(n, 0) + 1
            if per_seg[n] > CAP and (n not in gate or (a.get("saving") or 0.0) < 2 * gate[n]):
                unearned.add(n)
        if k < 0 or k >= len(seg.calls) or k not in seg.points():  # no restart at a segment's last call
            continue
        got = _realized(seg, k, horizon)
        usd = a.get("savingUsd")
        promise = usd if usd is not None else a.get("saving") or 0.0
        promised += promise
        realized += got
        lost += promise > 0 and got < 0
    return Shown(len(sent), lost, promised, realized, max(per_seg.values(), default=0),
                 sum(1 for n in per_seg.values() if n > CAP), _hours([c.ts for c in s.seen.calls]),
                 bt.stability(calls)["lampChangesPerCall"] or 0.0, len(unearned))


def _priced(st: State, cfg: Config, q: Quantities) -> tuple[float, float | None, int | None]:
    """A restart's saving on the state after a call (read units, dollars) and its horizon (calls)."""
    q = eoq.with_horizon(st, cfg, q)
    saving, usd = eoq.restart_saving(st, q)
    h = q["horizon"]
    return saving or 0.0, usd, None if h is None else math.ceil(h)


def deliveries(s: cal.Session, calls: list[bt.Call], fired: list[tuple[int, Alert]],
               there: list[tuple[float, float | None, int | None] | None]) -> list[tuple[int, Alert, int]]:
    """The alerts sent at the agent's stops (closedloop's `alertAtStop`): each gate or reminder after
    call index j waits for the first stop after it (call m - 1, whose next call m has its key in
    `s.stops`; the session's last call when none comes) and is sent there, as one alert with the figures
    after that call (`there`: None where the advice no longer holds), unless a compaction came in
    between (the segment's own advice is gone). Returned at the stop's index with the wait: the calls
    from there to the last call before the next prompt (where the user restarts), more than the session
    has when no prompt comes in the segment (a stop on its or the session's last call: sent, nothing to
    act on). Cold returns as they were (wait 0)."""
    from bench.turns import opens

    stops, turns = opens(s, s.stops), opens(s, s.turns)
    out: list[tuple[int, Alert, int]] = []
    pending: dict[int, Alert] = {}  # by the stop's call index: the advice waiting there
    for j, a in fired:
        if a["kind"] not in closedloop.ADVICE:
            out.append((j, a, 0))
            continue
        at = next((m - 1 for m in range(j + 1, len(calls)) if stops[m]), len(calls) - 1)
        if calls[at].segment != calls[j].segment:
            continue  # a compaction within the turn: superseded
        if at not in pending or a["kind"] == "gate":
            pending[at] = a
    for at, a in sorted(pending.items()):
        priced = there[at]
        if priced is None:
            continue
        saving, usd, h = priced
        r = next((r for r in range(at + 1, len(calls)) if turns[r]), None)
        same = r is not None and all(calls[x].segment == calls[at].segment for x in range(at, r + 1))
        wait = r - 1 - at if r is not None and same else len(calls)
        out.append((at, {**a, "saving": saving, "savingUsd": usd, "cycle": h}, wait))
    return sorted(out, key=lambda t: t[0])


def client_setting(s: cal.Session, setting: dict[str, Any]) -> dict[str, Any]:
    """A --client setting as the session's config: the reserve of its client's era (the last autocompact
    event of its transcript), none for a session without one (the fallback)."""
    if "before" not in setting:
        return setting
    rest = {k: v for k, v in setting.items() if k not in CLIENT}  # --with's keys, under every setting
    era = None
    for ev in s.loaded.events:
        if ev[0] == "autocompact":
            era = ev[2]
    if era is None:
        return rest
    from session_watcher.agents.claude_code.transcript import RESERVE_SINCE

    return {**rest, "compact_reserve": setting["since"] if era == RESERVE_SINCE else setting["before"]}


def spaced(sc: cal.Score) -> bool:
    sp = sc.spacing()
    return sp is None or sp >= MIN_SPACING


def feasible(scores: list[cal.Score], unspaced: frozenset[int] = frozenset()) -> bool:
    """Following the advice saves >= 0, none in a flat segment, restarts MIN_SPACING apart (but on the
    sessions in `unspaced`, which no setting of the grid spaces so: a bound no candidate meets ranks none)."""
    for i, sc in enumerate(scores):
        if sc.saving < 0 or sc.flat_advice or (i not in unspaced and not spaced(sc)):
            return False
    return True


def slack(f: dict[str, float]) -> float:
    gaps = [f[k] - TARGETS[k] for k in TARGETS]
    return min(gaps) + 0.1 * sum(gaps)


def choose(sessions: list[cal.Session], table: dict[tuple[Any, ...], tuple[list[cal.Score], list[Shown]]],
           keep: list[int], grid: dict[str, list[Any]]) -> tuple[Any, ...] | None:
    """The largest slack of the setting's worst neighbour on the grid; among equals the fewest alerts
    lost, then the fewest interruptions, then the higher floors (the later in the grid): the most
    conservative advice that costs nothing."""
    sub = [sessions[i] for i in keep]
    raw = {key: slack(cal.figures(sub, [scores[i] for i in keep])) for key, (scores, _seen) in table.items()}
    unspaced = frozenset(n for n, i in enumerate(keep) if not any(spaced(sc[i]) for sc, _ in table.values()))
    best: tuple[tuple[float, ...], tuple[Any, ...]] | None = None
    for n, (key, (scores, seen)) in enumerate(table.items()):
        sc, sh = [scores[i] for i in keep], [seen[i] for i in keep]
        if not feasible(sc, unspaced):
            continue
        hours = sum(x.hours for x in sh)
        # a plateau, not a lone peak
        worst = min(raw[k] for k in cal.neighbours(key, grid) if k in raw)
        v = (round(worst, 6), -sum(x.lost for x in sh), -round(sum(x.alerts for x in sh) / hours, 6), n)
        if best is None or v > best[0]:
            best = (v, key)
    return None if best is None else best[1]


def summary(sessions: list[cal.Session], scores: list[cal.Score], seen: list[Shown]) -> str:
    f = cal.figures(sessions, scores)
    spacings = [sp for sc in scores if (sp := sc.spacing()) is not None]
    hours = sum(sh.hours for sh in seen)
    return (f"| {f['dollar']:.3f} | {f['median']:.3f} | {f['lowest']:.3f} | "
            f"{sum(1 for sc in scores if sc.saving < 0)} | {sum(sh.lost for sh in seen)} of "
            f"{sum(sh.alerts for sh in seen)} | {max(sh.reminders_max for sh in seen)} "
            f"({sum(sh.over_cap for sh in seen)}) | "
            f"{statistics.median(spacings) if spacings else float('nan'):.0f} (min {min(spacings, default=0):.0f}) | "
            f"{max(sh.lamp for sh in seen):.4f} | {sum(sh.alerts for sh in seen) / hours:.2f} | "
            f"{sum(sh.unearned for sh in seen)} |")


HEAD = ["| setting | dollar capture | median | lowest | negative | alerts lost | "
        "reminders/segment max (over 3) | restart spacing median (lowest session) | "
        "lamp changes/call, worst | interruptions/hour | over 3 before the saving doubled the gate's |",
        "|---|---|---|---|---|---|---|---|---|---|---|"]


def variant(ap: argparse.ArgumentParser, items: list[str], chosen: set[str]) -> dict[str, Any]:
    """The config keys `--with` sets under every setting (each KEY=VALUE, a JSON value), or a usage
    error: a value without KEY=, an unknown or a table's key, a value not JSON, a key the grid chooses."""
    extra: dict[str, Any] = {}
    for item in items:
        key, eq, value = item.partition("=")
        if not eq:
            ap.error(f"--with {item}: KEY=VALUE")
        if "." in key or key not in config.known_keys():  # a table's key would be set beside its table
            ap.error(f"--with {key}: not a top-level config key (session-watcher config)")
        try:
            extra[key] = json.loads(value)
        except json.JSONDecodeError:
            ap.error(f"--with {item}: the value is not JSON (a string is quoted: KEY='\"text\"')")
        if key in chosen:
            ap.error(f"--with {key}: a key the grid chooses")
    return extra


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("transcripts", nargs="*", type=Path)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--before", action="store_true", help="the shipped defaults only (runs on older code too)")
    ap.add_argument("--compact", action="store_true", help="choose compact_reserve, the floors as shipped")
    ap.add_argument("--client", action="store_true", help="choose the reserve by client version, the floors "
                    "as shipped")
    ap.add_argument("--payback", action="store_true", help="choose compact_payback, the floors as shipped")
    ap.add_argument("--at-prompt", action="store_true", help="the closed loop acted on at the agent's turn's "
                    "end (closedloop's alertAtPrompt) instead of right after the call")
    ap.add_argument("--at-stop", action="store_true", help="the gates and reminders sent at the agent's stop "
                    "if they still hold there, priced there, acted on at the next prompt (closedloop's "
                    "alertAtStop)")
    ap.add_argument("--with", dest="extra", action="append", default=[], metavar="KEY=VALUE",
                    help="a config key (a JSON value) set under every setting: a variant measured")
    ns = ap.parse_args(argv)
    if len(ns.transcripts) == 1:
        ap.error("two transcripts or more: each is scored by a choice made on the others (leave one out)")
    grid = ({} if ns.before else QUICK if ns.quick else COMPACT if ns.compact else CLIENT if ns.client
            else PAYBACK if ns.payback else GRID)
    extra = variant(ap, ns.extra, {*grid, *(["compact_reserve"] if ns.client else [])})
    with tempfile.TemporaryDirectory() as tmp:
        # the built-in defaults, whoever runs it: no user's config, prices or inferred cliff (a replay of a
        # session whose folder is gone, as every calibration session's is, folds with the user's config)
        os.environ["SESSION_WATCHER_HOME"] = str(Path(tmp) / "home")
        if ns.transcripts:
            paths = ns.transcripts
        else:
            from tests.calibration import all_sessions

            paths = all_sessions(Path(tmp))
        sessions = [cal.prepare(p) for p in paths]
    names = list(grid)
    policy = "alertAtStop" if ns.at_stop else "alertAtPrompt" if ns.at_prompt else "alert"
    out = ["| setting | " + HEAD[0][12:], HEAD[1]]
    table: dict[tuple[Any, ...], tuple[list[cal.Score], list[Shown]]] = {}
    for key in itertools.product(*grid.values()):
        setting = {**extra, **dict(zip(names, key, strict=True))}
        scores = [cal.score(s, client_setting(s, setting), policy) for s in sessions]
        seen = [shown(s, config.merge(s.cfg, client_setting(s, setting)), ns.at_stop) for s in sessions]
        table[key] = (scores, seen)
    for key, (scores, seen) in table.items():
        out.append(f"| {key} " + summary(sessions, scores, seen))
    if len(table) > 1:  # each session's capture (alerts lost) under each setting: where a setting moves
        out += ["", "| session | " + " | ".join(str(k) for k in table) + " |", "|---" * (len(table) + 1) + "|"]
        out += [f"| {s.name} | " + " | ".join(f"{sc[i].capture(s):.2f} ({sh[i].lost})" for sc, sh in table.values())
                + " |" for i, s in enumerate(sessions)]
    everyone = list(range(len(sessions)))
    chosen = choose(sessions, table, everyone, grid)
    out += ["", f"In sample: {chosen}", "", "Leave one session out:", ""]
    left_scores: list[cal.Score] = []
    left_seen: list[Shown] = []
    for i, s in enumerate(sessions):
        left = choose(sessions, table, [j for j in everyone if j != i], grid)
        if left is None:
            out.append(f"{s.name}: none feasible")
            continue
        left_scores.append(table[left][0][i])
        left_seen.append(table[left][1][i])
        out.append(f"{s.name}: {left} capture {table[left][0][i].capture(s):.2f} lost {table[left][1][i].lost}")
    if len(left_scores) == len(sessions):
        out += ["", *HEAD, "| left out " + summary(sessions, left_scores, left_seen)]
    if chosen is not None and grid and not (ns.compact or ns.client or ns.payback):
        base = dict(zip(names, chosen, strict=True))
        out += ["", "Back-off and cap at the chosen floors (real sessions, nobody restarts):", "", *HEAD]
        for backoff, cap in BACKOFF:
            setting = {**extra, **base, "remind_backoff": backoff, "remind_cap": cap}
            seen = [shown(s, config.merge(s.cfg, setting), ns.at_stop) for s in sessions]
            out.append(f"| backoff {backoff:g}, cap {cap} " + summary(sessions, table[chosen][0], seen))
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
