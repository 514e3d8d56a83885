"""How often a TTL edge rule claims a wrong edge: every subset of a set of real sessions, as the
histories users might have, through the report's own rule and the rule it replaced.

    .venv/bin/python tools/ttl_rule.py DIR [DIR ...]      (folders of transcripts, as `report --projects`)

A claim is right when it lands within one bucket of the documented TTL (5m: 4, 5 or 6 min; 1h: 50,
60 or 70 min; measured on 13,569 returns elsewhere, 1-hour caches almost never expire before 60
minutes), wrong anywhere else, and none is "not enough data yet". With up to 16 sessions every
non-empty subset is tried; with more, 20,000 random ones (seeded). docs/report.md has the figures.
"""

from __future__ import annotations

import itertools
import random
import sys
import tempfile
from bisect import bisect_right
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from session_watcher.reports import warmth  # noqa: E402
from session_watcher.reports.collect import run_report  # noqa: E402

RIGHT = {"5m": {240, 300, 360}, "1h": {3000, 3600, 4200}}


def judged(edge: float | None, cls: str) -> str:
    """none (not enough data), right (within one bucket of the class's documented TTL) or wrong; an
    OpenAI class has no documented TTL to be right about (a floor, `prices_openai.CLASSES`): its edge
    is only claimed."""
    if edge is None:
        return "none"
    if cls not in RIGHT:
        return "claimed"
    return "right" if edge in RIGHT[cls] else "wrong"


def old_rule(buckets: list[dict[str, Any]]) -> float | None:
    """The rule before: pooled cold share above minus below >= 0.5, 5 calls below, 3 above."""
    best = None
    for k in range(1, len(buckets)):
        nb, na = sum(b["n"] for b in buckets[:k]), sum(b["n"] for b in buckets[k:])
        if nb < 5 or na < 3:
            continue
        jump = sum(b["cold"] for b in buckets[k:]) / na - sum(b["cold"] for b in buckets[:k]) / nb
        if jump >= 0.5 and (best is None or jump > best[0] + 1e-12):
            best = (jump, buckets[k]["fromSeconds"])
    return None if best is None else best[1]


def per_session(doc: dict[str, Any]) -> dict[str, dict[str, dict[int, list[Any]]]]:
    """Each session's gap buckets per TTL class, from the report's scatter (warmths stand in as 0/1)."""
    out: dict[str, dict[str, dict[int, list[Any]]]] = {}
    for p in doc["scatter"]:
        if p["ttl"] not in warmth.TTL_CLASSES:
            continue
        b = out.setdefault(p["sessionId"], {c: {} for c in warmth.TTL_CLASSES})[p["ttl"]]
        g, cold = p["gapSeconds"], bool(p["cold"])
        k = bisect_right(warmth.BUCKET_EDGES, g)
        warmth.merge_buckets(b, {k: [[0.0 if cold else 1.0], int(cold), g, g]})
    return out


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        doc, _ = run_report(argv, str(Path(tmp) / "index.sqlite3"))
    sessions = per_session(doc)
    ids = sorted(sessions)
    if len(ids) <= 16:
        subsets = [c for k in range(1, len(ids) + 1) for c in itertools.combinations(ids, k)]
    else:
        rng = random.Random(29)  # noqa: S311 - a sample, not a secret
        subsets = [tuple(rng.sample(ids, rng.randint(1, len(ids)))) for _ in range(20_000)]
    returns = {c: sum(b["n"] for b in warmth.gap_buckets(_merged([sessions[s][c] for s in ids]), c)) for c in
               warmth.TTL_CLASSES}
    print(f"{len(ids)} sessions, {returns} returns by TTL class, {len(subsets)} subsets")
    for name in ("old", "new"):
        for cls in warmth.TTL_CLASSES:
            tally = {"wrong": 0, "right": 0, "none": 0}
            wrong_at: dict[float, int] = {}
            for sub in subsets:
                gaps = _merged([sessions[s][cls] for s in sub])
                table = warmth.gap_buckets(gaps, cls)
                if name == "old":
                    edge = old_rule(table)
                else:
                    got = warmth.infer_ttl(gaps, table, cls)
                    edge = None if got is None else got["inferredSeconds"]
                kind = judged(edge, cls)
                tally[kind] = tally.get(kind, 0) + 1
                if edge is not None and kind != "right":
                    wrong_at[edge] = wrong_at.get(edge, 0) + 1
            all_gaps = _merged([sessions[s][cls] for s in ids])
            whole = (old_rule(warmth.gap_buckets(all_gaps, cls)) if name == "old" else
                     (warmth.infer_ttl(all_gaps, warmth.gap_buckets(all_gaps, cls), cls) or {}).get("inferredSeconds"))
            shares = ", ".join(f"{k} {v / len(subsets):.1%}" for k, v in tally.items())
            where = ", ".join(f"{e / 60:g} min x{n}" for e, n in sorted(wrong_at.items()))
            said = "wrong" if cls in RIGHT else "claimed"
            print(f"{name} rule, {cls}: {shares}; all sessions together: {whole}" + (f"; {said} at {where}" if where
                                                                                      else ""))
    return 0


def _merged(parts: list[dict[int, list[Any]]]) -> dict[int, list[Any]]:
    out: dict[int, list[Any]] = {}
    for p in parts:
        warmth.merge_buckets(out, p)
    return out


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
