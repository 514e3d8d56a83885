"""Is the cold-cache guard sure before it holds? Every return of real sessions replayed through the
guard's own rule (`core.guard.verdict`), against what the call after the gap really did.

    .venv/bin/python tools/guard_returns.py [--before] [--list] FILE_OR_DIR [...]

Each transcript is folded as `replay` folds it; each main-chain call that answers a prompt the user
typed after a gap over a minute (same segment) is a return (the guard runs on UserPromptSubmit). The
guard's decision before it: `hold` (sure it is cold, and the session past guard_x: the default `ask`
holds the prompt), `warn` (sure, below guard_x: a line only; or between the lifetime and the edge:
"may have expired"), or nothing. What the call did: cold when its warmth, cache read / (read +
write), is under 50 % (the report's rule). The cliff a user would have is inferred from the other
sessions' returns (leave-one-session-out, the report's `infer_ttl`). `--before`: the rule this
project had (hold at the lifetime, the quote the whole context); `--list`: every return, one a line.
docs/model.md, "The cold-cache guard, measured", has the table.
"""

from __future__ import annotations

import itertools
import os
import statistics
import sys
from bisect import bisect_right
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from session_watcher.core import guard  # noqa: E402
from session_watcher.core.eoq import TTL_SECONDS, cache_lifetime  # noqa: E402
from session_watcher.reports import warmth  # noqa: E402

MIN_GAP = 60.0  # seconds: a shorter pause is no return
INTERRUPTED = b"[Request interrupted"


def prompted(path: str) -> dict[float, bool]:
    """The main-chain calls that answer a prompt the user typed (the guard runs on UserPromptSubmit:
    a call that answers a tool result is no return it sees), by their time as the fold has it (the
    call's first line): whether a request was interrupted since the last call (its cache write is in
    no usage of the transcript, so what the call after it read says nothing of the gap)."""
    from session_watcher.agents.claude_code.transcript import iso_to_epoch
    from session_watcher.core.fastjson import loads
    from session_watcher.core.handoff import Digest

    out: dict[float, bool] = {}
    seen: set[str] = set()
    digest, prompts, cut = Digest(), 0, False
    with open(path, "rb") as fh:
        for line in fh:
            try:
                rec = loads(line)
            except ValueError:
                continue
            if not isinstance(rec, dict) or rec.get("isSidechain") is True:
                continue
            digest.add(rec)
            cut = cut or (rec.get("type") == "user" and INTERRUPTED in line)
            msg = rec.get("message")
            mid = msg.get("id") if isinstance(msg, dict) else None
            if rec.get("type") != "assistant" or not isinstance(mid, str) or mid in seen:
                continue
            seen.add(mid)
            ts = iso_to_epoch(rec.get("timestamp"))
            if digest.prompts > prompts and ts is not None:
                out[ts] = cut
            prompts, cut = digest.prompts, False
    return out


def returns(path: str) -> list[dict[str, Any]]:
    """The returns of one transcript: gap, TTL class, the figures before the call, what it did."""
    from session_watcher.base import config
    from session_watcher.sessions.replay import replay

    cfg = config.merge()  # the defaults: no user's config or cliff file on this machine counts
    _doc, rows = replay(path, cfg=cfg)
    asked = prompted(path)
    out: list[dict[str, Any]] = []
    for prev, row in itertools.pairwise(rows):
        u, ts, before = row["usage"], row["ts"], prev["ts"]
        if ts is None or before is None or row["segment"] != prev["segment"] or prev["cacheTtl"] not in TTL_SECONDS:
            continue
        if ts not in asked:
            continue
        gap = ts - before
        if gap < MIN_GAP or u["cr"] + u["cw"] <= 0:
            continue
        context = max(prev["L"] or 0, (prev["contextPressure"] or {}).get("pressureTokens") or 0)
        out.append({"session": Path(path).stem, "gap": gap, "ttl": prev["cacheTtl"], "x": prev["x"],
                    "context": context, "shared": prev["shared"] or 0, "cr": u["cr"], "cw": u["cw"],
                    "cold": u["cr"] / (u["cr"] + u["cw"]) < warmth.COLD_BELOW, "interrupted": asked[ts]})
    return out


def cliffs(rs: list[dict[str, Any]]) -> dict[str, Any]:
    """The cliff file `report` would write from these returns: {class: seconds or None, evidence}."""
    out: dict[str, Any] = {**dict.fromkeys(warmth.TTL_CLASSES), "evidence": {}}
    for cls in warmth.TTL_CLASSES:
        gaps: dict[int, list[Any]] = {}
        for r in rs:
            if r["ttl"] == cls:
                k = bisect_right(warmth.BUCKET_EDGES, r["gap"])
                warmth.merge_buckets(gaps, {k: [[0.0 if r["cold"] else 1.0], int(r["cold"]), r["gap"], r["gap"]]})
        got = warmth.infer_ttl(gaps, warmth.gap_buckets(gaps, cls), cls)
        if got is not None:
            ev = got["evidence"]
            out[cls] = float(got["inferredSeconds"])
            out["evidence"][cls] = [ev["below"]["n"], ev["below"]["cold"], ev["above"]["n"], ev["above"]["cold"]]
    return out


def decide(r: dict[str, Any], cliff: dict[str, Any], guard_x: float, before: bool) -> str:
    """hold, warn or none: what the guard does at this return."""
    v: str | None
    if before:
        life = cache_lifetime(r["ttl"], cliff) or TTL_SECONDS[r["ttl"]]
        v = "cold" if r["gap"] > life else "warm"
    else:
        v = guard.verdict(r["gap"], r["ttl"], cliff)
    if v == "warm":
        return "none"
    if v == "maybe":
        return "warn"
    return "hold" if r["x"] is not None and r["x"] >= guard_x else "warn"


def quoted(r: dict[str, Any], before: bool) -> float:
    """The re-write the guard quotes: the whole context (before), or net of the shared prefix."""
    return r["context"] if before else guard.rewritten(r["context"], r["shared"])


def table(all_returns: dict[str, list[dict[str, Any]]], before: bool, guard_x: float) -> dict[str, Any]:
    found: set[str] = set()
    skipped = held = held_warm = cold_past = cold_past_unwarned = maybe = maybe_cold = cold_unwarned = 0
    ratios = []
    for sid, rs in all_returns.items():
        others = [r for s, more in all_returns.items() if s != sid for r in more]
        cliff = cliffs(others)
        found.update(f"{c} {cliff[c]:g} s" for c in warmth.TTL_CLASSES if cliff[c])
        for r in rs:
            if r["interrupted"]:
                skipped += 1
                continue
            d = decide(r, cliff, guard_x, before)
            edge = guard.edge(cache_lifetime(r["ttl"], cliff) or TTL_SECONDS[r["ttl"]])
            held += d == "hold"
            held_warm += d == "hold" and not r["cold"]
            if r["gap"] > edge and r["cold"]:
                cold_past += 1
                cold_past_unwarned += d == "none"
            cold_unwarned += r["cold"] and d == "none"
            if not before and guard.verdict(r["gap"], r["ttl"], cliff) == "maybe":
                maybe += 1
                maybe_cold += r["cold"]
            if d != "none" and r["cold"] and r["cw"] > 0:
                ratios.append(quoted(r, before) / r["cw"])
    n = sum(len(rs) for rs in all_returns.values())
    return {"cliffs": sorted(found) or "none", "returns": n - skipped, "interrupted": skipped, "held": held,
            "heldWarm": held_warm, "coldPastEdge": cold_past,
            "coldPastEdgeUnwarned": cold_past_unwarned, "coldUnwarned": cold_unwarned,
            "maybe": maybe, "maybeCold": maybe_cold,
            "quoteOverReal": statistics.median(ratios) if ratios else None, "quoted": len(ratios)}


def transcripts(args: list[str]) -> list[str]:
    out = []
    for a in args:
        if os.path.isdir(a):
            out += sorted(str(p) for p in Path(a).glob("*.jsonl"))
        else:
            out.append(a)
    return out


def main(argv: list[str]) -> int:
    before, listed = "--before" in argv, "--list" in argv
    args = [a for a in argv if a not in ("--before", "--list")]
    if not args:
        print(__doc__, file=sys.stderr)
        return 2
    from session_watcher.base import config

    all_returns = {}
    for path in transcripts(args):
        rs = returns(path)
        if rs:
            all_returns[Path(path).stem] = rs
    doc = table(all_returns, before, config.DEFAULTS["guard_x"])
    share = doc["heldWarm"] / doc["held"] if doc["held"] else 0.0
    print(f"{'before' if before else 'after'}: {len(all_returns)} sessions, {doc['returns']} returns "
          f"({doc['interrupted']} more "
          f"after an interrupted request, left out); cliffs inferred {doc['cliffs']}; "
          f"held {doc['held']}, of them warm {doc['heldWarm']} ({share:.1%}); cold past the edge "
          f"{doc['coldPastEdge']}, unwarned {doc['coldPastEdgeUnwarned']}; cold and unwarned (any gap) "
          f"{doc['coldUnwarned']}; 'may have expired' {doc['maybe']} (cold {doc['maybeCold']}); quoted re-write "
          f"/ real, median {doc['quoteOverReal'] and round(doc['quoteOverReal'], 3)} over {doc['quoted']}")
    if listed:
        for sid, rs in all_returns.items():
            for r in rs:
                print(sid[:8], r["ttl"], round(r["gap"]), "cold" if r["cold"] else "warm", r["cr"], r["cw"],
                      r["context"], r["shared"], r["x"] and round(r["x"], 2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
