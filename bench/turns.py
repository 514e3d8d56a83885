"""The advice acted on where a person can act: at the agent's turn's end. ``python -m bench.turns
[--json OUT] TRANSCRIPT ...`` (the shipped defaults; each session's own config, as bench.advice).

A person restarts when the agent has stopped and waits for the next prompt; an alert from a hook in the
middle of an agent turn (a PostToolUse after a tool result) can be acted on only at the turn's end. For
each session (the turns from its log: `sessions.backtest.turns`, the first call answering a prompt the
user typed, a Codex turn's first call):

* the closed loop as shipped (`alert`: a restart right after the call the advice came on) and the
  turn-bounded one (`alertAtPrompt`: the same advice, a restart before the first call after it that
  opens a turn, none where the segment ends first; a cold return only where its call opens one),
  priced against the best schedule (bench.calibrate.score's figures: capture, median, lowest,
  negatives); and the best schedule whose restarts all fall before a turn's first call (a user who
  knew the future but acted at prompts only), as a share of the best;
* the real session (a user who never restarts) folded for the alerts it shows (bench.advice.shown):
  each gate or reminder after call k, whether it came mid-turn (call k + 1 opens no turn), how many
  calls the turn ran on after it (to the turn's last call), and its promise (`savingUsd` over `cycle`
  calls) against what a restart realizes: after call k (bench.advice's measure: alerts lost), and at
  the turn's end, over the `cycle` calls from k (the calls before the restart save nothing) and over
  `cycle` calls from the restart (the promise priced from the turn's end); none where the segment or
  the session ends before the turn. A cold return is acted on before its call where that call opens a
  turn, else never;
* the closed loop's own restarts (`alert`): how many fall mid-turn, and how far the turn's end is.

Prints one table row a figure; nothing here asserts anything.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import statistics
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from bench import calibrate as cal
from session_watcher.base import config
from session_watcher.core import backtest as bt
from session_watcher.core import closedloop, engine, eoq
from session_watcher.core.eoq import quantities
from session_watcher.sessions import backtest as shell

if TYPE_CHECKING:
    from session_watcher.core.chains import Chain
    from session_watcher.core.shapes import Alert, CallUsage, State


def stopped(path: Path, turns: frozenset[str]) -> frozenset[str]:
    """`turns` and, in a Claude Code transcript, every call after a main-chain call that issued no tool
    (the agent ended its turn: what started it again may be no prompt the user typed, a background
    task's notification, a slash command): the widest reading of where the agent waited."""
    from session_watcher.agents.claude_code.transcript import call_key
    from session_watcher.core import fastjson

    if path.read_bytes()[:200].find(b'"session_meta"') >= 0:  # a Codex rollout: its turns
        return turns
    tools: dict[str, bool] = {}
    order: list[str] = []
    for line in path.read_bytes().splitlines():
        if b'"assistant"' not in line:
            continue
        try:
            rec = fastjson.loads(line)
        except ValueError:
            continue
        msg = rec.get("message") if isinstance(rec, dict) and rec.get("isSidechain") is not True else None
        if not isinstance(msg, dict) or not isinstance(msg.get("usage"), dict) or msg.get("model") == "<synthetic>":
            continue
        key = call_key(msg.get("id"), rec.get("requestId"))
        if key is None:
            continue
        if key not in tools:
            order.append(key)
            tools[key] = False
        content = msg.get("content")
        tools[key] = tools[key] or (isinstance(content, list) and any(
            isinstance(b, dict) and b.get("type") == "tool_use" for b in content))
    return turns | frozenset(b for a, b in itertools.pairwise(order) if not tools[a])


def opens(s: cal.Session, turns: frozenset[str]) -> list[bool]:
    """Per main-chain call (the order `observe` counts them in), whether it opens a turn."""
    seen: set[str] = set()
    out: list[bool] = []
    for ev in s.loaded.events:
        if ev[0] == "call" and not ev[4] and ev[1] not in seen:
            seen.add(ev[1])
            out.append(ev[1] in turns)
    if len(out) != len(s.seen.calls):
        raise SystemExit(f"{s.name}: {len(out)} call keys, {len(s.seen.calls)} calls")
    return out


def best_at(seg: Chain, points: list[int]) -> float:
    """Dollars (read units when unpriced) the cheapest schedule of restarts after the chain indices
    `points` saves (a dynamic programme over the last restart: a call's cost depends on it alone)."""
    w = seg.weights()
    costs = {-1: [a * x for a, x in zip(seg.actual, w, strict=True)]}
    for k in points:
        costs[k] = [c * x for c, x in zip(seg.schedule_costs([k]), w, strict=True)]
    n = len(seg.calls)
    value = {-1: 0.0}  # the cheapest cost of the calls up to and including k, a restart after k
    for b in points:
        value[b] = min(value[a] + sum(costs[a][a + 1:b + 1]) for a in value)
    end = min(value[a] + sum(costs[a][a + 1:n]) for a in value)
    return sum(costs[-1]) - end


def next_open(starts: list[bool], j: int) -> int | None:
    """The first call after call index j that opens a turn, None when the session ends first."""
    return next((m for m in range(j + 1, len(starts)) if starts[m]), None)


@dataclass
class Alerts:
    """The real session's alerts (gates, reminders, cold returns) and what each is worth acted on."""

    n: int = 0
    lost_now: int = 0  # restarted right after its call: the promise lost (bench.advice's)
    lost_turn: int = 0  # restarted at the turn's end, over the horizon from k
    lost_turn_from_end: int = 0  # at the turn's end, over the horizon from the restart
    never: int = 0  # advice no user could act on: the segment or the session ends before the turn
    promised: float = 0.0
    promised_turn: float = 0.0  # of the alerts a user could act on at the turn's end
    realized_now: float = 0.0
    realized_turn: float = 0.0
    realized_turn_from_end: float = 0.0
    ratios_now: list[float] = field(default_factory=list)  # realized / promised, per alert acted on
    ratios_turn: list[float] = field(default_factory=list)
    ratios_turn_from_end: list[float] = field(default_factory=list)
    # priced at the turn's end (what the alert would say if sent there: the state after the turn's last
    # call), against a restart there over its own horizon
    promised_at_end: float = 0.0
    realized_at_end: float = 0.0
    lost_at_end: int = 0
    ratios_at_end: list[float] = field(default_factory=list)
    advice: int = 0  # gates and reminders
    mid_turn: int = 0  # of those, after a call that did not end its turn
    waits: list[int] = field(default_factory=list)  # calls the turn ran on after a mid-turn one (it ended)
    unended: int = 0  # mid-turn ones whose turn ran to the session's end
    cold: int = 0
    cold_mid_turn: int = 0


def realized(seg: Chain, restart: int, start: int, horizon: int) -> float:
    """What the real calls start..start + horizon - 1 of the chain save with a restart after index `restart`."""
    end = min(len(seg.calls), start + horizon)
    w = seg.weights()
    after = seg.schedule_costs([restart])
    return sum((seg.actual[j] - after[j]) * w[j] for j in range(start, end))


def alerts(s: cal.Session, starts: list[bool], out: Alerts) -> None:
    cfg = config.merge(s.cfg, {})
    fired: list[tuple[int, Alert]] = []
    calls: list[bt.Call] = []
    state = s.loaded.fresh()

    priced: list[tuple[float | None, int | None]] = []  # per call: a restart's saving then, its horizon

    def hook(st: State, got: list[Alert], usage: CallUsage) -> None:
        q = eoq.with_horizon(st, cfg, quantities(st, cfg))
        calls.append(closedloop._call(st, q, got, usage))
        fired.extend((len(calls) - 1, a.copy()) for a in got)
        saving, usd = eoq.restart_saving(st, q)
        h = q["horizon"]
        priced.append((usd if usd is not None else saving, None if h is None else math.ceil(h)))

    engine.fold(state, s.loaded.events, cfg, s.loaded.paths, call_hook=hook)
    where: list[tuple[Chain, int]] = []
    for seg in bt.chains(bt.segments(calls, s.seen.shared), s.seen.autos):
        where.extend((seg, i) for i in range(len(seg.calls)))
    for j, a in fired:
        out.n += 1
        seg, i = where[j]
        cycle = a.get("cycle")
        horizon = math.ceil(cycle) if cycle else len(seg.calls)
        usd = a.get("savingUsd")
        promise = usd if usd is not None else a.get("saving") or 0.0
        if a["kind"] == "guard":  # advice to restart before call j
            out.cold += 1
            out.cold_mid_turn += not starts[j]
            k, at = i - 1, (i - 1 if starts[j] else None)
        else:
            out.advice += 1
            k = i
            m = next_open(starts, j)
            if m is None or m - 1 > j:
                out.mid_turn += 1
                if m is None:
                    out.unended += 1
                else:
                    out.waits.append(m - 1 - j)
            # the turn's end within the segment (a real compaction first: no restart)
            at = None
            if m is not None and i + m - j < len(seg.calls) and calls[j].segment == calls[m].segment:
                at = i + (m - j) - 1
        if k < 0 or k not in seg.points():  # no restart at a segment's last call (bench.advice's rule)
            continue
        out.promised += promise
        now = realized(seg, k, k + 1, horizon)
        out.realized_now += now
        out.lost_now += promise > 0 and now < 0
        if promise > 0:
            out.ratios_now.append(now / promise)
        if at is None or at not in seg.points():
            out.never += 1
            continue
        turn = realized(seg, at, k + 1, horizon)
        end = realized(seg, at, at + 1, horizon)
        out.promised_turn += promise
        out.realized_turn += turn
        out.realized_turn_from_end += end
        out.lost_turn += promise > 0 and turn < 0
        out.lost_turn_from_end += promise > 0 and end < 0
        if promise > 0:
            out.ratios_turn.append(turn / promise)
            out.ratios_turn_from_end.append(end / promise)
        there, h_end = priced[j + at - k] if a["kind"] != "guard" else (promise, horizon)
        if there is not None and there > 0:
            got = realized(seg, at, at + 1, h_end or len(seg.calls))
            out.promised_at_end += there
            out.realized_at_end += got
            out.lost_at_end += got < 0
            out.ratios_at_end.append(got / there)


@dataclass
class Row:
    name: str
    best: float
    best_at_prompts: float
    alert: float  # savings
    at_prompt: float
    alert_restarts: list[int]
    at_prompt_restarts: list[int]
    loop_mid_turn: int  # the closed loop's (alert) restarts after a call that did not end its turn
    loop_waits: list[int]  # how many calls its turn ran on
    loop_unended: int  # its turn ran to the session's end


def session(path: Path, shown: Alerts, wide: bool = False) -> Row:
    s = cal.prepare(path)
    turns = shell.turns(str(path))
    if wide:
        turns = stopped(path, turns)
    starts = opens(s, turns)
    params = config.model_params(s.cfg)
    alert = closedloop.follow(s.loaded.fresh(), s.seen, params, "alert")
    at = closedloop.follow(s.loaded.fresh(), s.seen, params, "alertAtPrompt", turns)
    first = {c.call: n for n, c in enumerate(s.seen.calls)}
    best_at_prompts = 0.0
    for seg in s.segs:
        base = first[seg.calls[0].call]
        points = [k for k in seg.points() if starts[base + k + 1]]
        best_at_prompts += best_at(seg, points)
    mid, waits, unended = 0, [], 0
    for r in alert:
        j = first[r]  # the restart after call index j
        m = next_open(starts, j)
        if m is None or m - 1 > j:
            mid += 1
            if m is None:
                unended += 1
            else:
                waits.append(m - 1 - j)
    alerts(s, starts, shown)
    return Row(s.name, s.best, best_at_prompts, s.actual - cal.price(s.segs, alert), s.actual - cal.price(s.segs, at),
               alert, at, mid, waits, unended)


def pct(values: list[int], q: float) -> float:
    """The q-th percentile, linear between the closest ranks (numpy's default)."""
    v = sorted(values)
    if not v:
        return math.nan
    at = (len(v) - 1) * q
    lo = math.floor(at)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (at - lo)


def capture(rows: list[Row], saving: str) -> tuple[float, float, float, int]:
    caps = [getattr(r, saving) / r.best if r.best > 0 else 1.0 for r in rows]
    best = sum(r.best for r in rows)
    return (sum(getattr(r, saving) for r in rows) / best, statistics.median(caps), min(caps),
            sum(1 for r in rows if getattr(r, saving) < 0))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("transcripts", nargs="+", type=Path)
    ap.add_argument("--json", type=Path, help="write each session's figures here")
    ap.add_argument("--stopped", action="store_true", help="a Claude Code turn's end also where a call "
                    "issued no tool (`stopped`), not only before a prompt the user typed")
    ns = ap.parse_args(argv)
    shown = Alerts()
    rows = [session(p, shown, ns.stopped) for p in ns.transcripts]
    out = ["| session | best | best at prompts | alert: capture (restarts) | at prompt: capture (restarts) | "
           "alert's restarts mid-turn |", "|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r.name} | {r.best:.2f} | {r.best_at_prompts / r.best if r.best > 0 else 1.0:.2f} | "
                   f"{r.alert / r.best if r.best > 0 else 1.0:.2f} ({len(r.alert_restarts)}) | "
                   f"{r.at_prompt / r.best if r.best > 0 else 1.0:.2f} ({len(r.at_prompt_restarts)}) | "
                   f"{r.loop_mid_turn} of {len(r.alert_restarts)} |")
    a, t = capture(rows, "alert"), capture(rows, "at_prompt")
    reach = sum(r.best_at_prompts for r in rows) / sum(r.best for r in rows)
    waits = [w for r in rows for w in r.loop_waits]
    out += ["", f"{len(rows)} sessions; the best schedule at prompts saves {reach:.3f} of the best's dollars.",
            f"alert: capture {a[0]:.3f} / median {a[1]:.3f} / lowest {a[2]:.3f}, {a[3]} negative; "
            f"{sum(len(r.alert_restarts) for r in rows)} restarts",
            f"alertAtPrompt: capture {t[0]:.3f} / median {t[1]:.3f} / lowest {t[2]:.3f}, {t[3]} negative; "
            f"{sum(len(r.at_prompt_restarts) for r in rows)} restarts; of the best at prompts "
            f"{sum(r.at_prompt for r in rows) / sum(r.best_at_prompts for r in rows):.3f}",
            f"closed loop (alert) restarts mid-turn: {sum(r.loop_mid_turn for r in rows)} of "
            f"{sum(len(r.alert_restarts) for r in rows)} ({sum(r.loop_unended for r in rows)} in a turn that "
            f"ran to the session's end); the turn's end after them: median {pct(waits, 0.5):g}, p90 "
            f"{pct(waits, 0.9):g} calls",
            "",
            f"Real sessions' alerts: {shown.n} ({shown.advice} gates and reminders, {shown.cold} cold returns); "
            f"gates and reminders mid-turn: {shown.mid_turn} ({shown.unended} in a turn that ran to the session's "
            f"end); the turn's end after them: median {pct(shown.waits, 0.5):g}, p90 {pct(shown.waits, 0.9):g} "
            f"calls; cold returns mid-turn: {shown.cold_mid_turn}",
            f"lost: restarted after the call {shown.lost_now}; at the turn's end {shown.lost_turn} (from k), "
            f"{shown.lost_turn_from_end} (from the turn's end); never actionable {shown.never}",
            f"realized / promised (sums): after the call {shown.realized_now / shown.promised:.3f}; at the turn's "
            f"end (the alerts a user could act on), from k {shown.realized_turn / shown.promised_turn:.3f}, from "
            f"the end {shown.realized_turn_from_end / shown.promised_turn:.3f}; medians "
            f"{statistics.median(shown.ratios_now):.3f}, {statistics.median(shown.ratios_turn):.3f}, "
            f"{statistics.median(shown.ratios_turn_from_end):.3f}",
            f"priced at the turn's end (the state after its last call), a restart there over its own horizon: "
            f"realized / promised {shown.realized_at_end / shown.promised_at_end:.3f} (sums), median "
            f"{statistics.median(shown.ratios_at_end):.3f}; lost {shown.lost_at_end} of {len(shown.ratios_at_end)}"]
    print("\n".join(out))
    if ns.json:
        ns.json.write_text(json.dumps({"rows": [asdict(r) for r in rows], "alerts": asdict(shown)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
