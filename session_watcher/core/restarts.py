"""The restarts a user actually took, priced: what each carried and what it saved. Pure.

SPEC v3, "A restart you can act on": a child session that started with a handoff note names its
parent (its `parentSession`, read from the note its transcript holds); Claude Code 2.1.332's idle
compaction (a 1-hour session of 200k+ tokens compacted at about minute 54 of idleness) is the same
move inside one session: the context after it is a fresh segment's. Each restart is priced from the
calls both sides really made (`core.backtest.Call`s from `replay`'s trace rows):

* the carry priced before (the note's own first line, for a handoff) and the carry written in fact:
  the child's first call, its whole prompt, at what it really cost;
* against continuing the parent: the parent's last context carried on with the child's growth.
  Every child call would have carried D more tokens, D = the parent's last prompt minus what the
  child's first call carried (the priced carry when known: the rest of that first prompt is the
  new request, which continuing would send too). If the parent's cache had expired by the child's
  first call (the gap past the cache lifetime of the parent's last write), that call re-writes
  everything it carries but what the child found cached; else it reads the D tokens more. Later
  calls read D more. Writes of new content are the child's own either way.

saving = continue - actual, in dollars at each call's model price (None for a model with no price,
and for a handoff from one vendor's model to another's: a Codex thread's note taken by a Claude Code
session; the parent's tokens are not the child's measure, so the restart is listed, not priced).
A compaction's own summary request is a subagent's call and is not in either side.
"""

from __future__ import annotations

from itertools import pairwise
from typing import TYPE_CHECKING, Any

from session_watcher.core import prices
from session_watcher.core.eoq import TTL_SECONDS
from session_watcher.core.segment import by_segment
from session_watcher.core.status import rounded

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from session_watcher.core.backtest import Call

IDLE_COMPACTION_S = 45 * 60  # a compaction after this much idleness on a 1-hour cache is the client's own


def _usd(c: Call, read: float, w5m: float, w1h: float) -> float | None:
    r = prices.read_usd(c.model, read)
    w = prices.write_usd(c.model, w5m, w1h)
    return None if r is None or w is None else r + w


def _cost(c: Call) -> float | None:
    return _usd(c, c.cr, c.cw5m, c.cw1h)


def _continued(c: Call, drop: int, cold: bool, first: bool, ttl: str | None) -> float | None:
    """Child call `c` had the parent gone on: `drop` more tokens carried (read, or on the first call
    after an expired cache, written with everything but what the child found cached)."""
    if first and cold:
        written = max(0, c.total - c.cr) + drop
        return _usd(c, c.cr, 0 if ttl == "1h" else written, written if ttl == "1h" else 0)
    return _usd(c, c.cr + drop, c.cw5m, c.cw1h)


def _sum(values: Iterable[float | None]) -> float | None:
    total = 0.0
    for v in values:
        if v is None:
            return None
        total += v
    return total


def price(parent_last: Call, child: Sequence[Call], priced: tuple[int | None, float | None] = (None, None),
          cliff: Mapping[str, Any] | None = None) -> dict[str, Any] | None:
    """One restart: from the parent's last call to the child's calls (its first segment). None when
    the child made no call."""
    from session_watcher.core.eoq import cache_lifetime

    if not child:
        return None
    first = child[0]
    carry_priced, carry_priced_usd = priced
    carried = min(carry_priced, first.total) if carry_priced else first.total
    drop = max(0, parent_last.total - carried)
    ttl = parent_last.ttl or first.ttl
    life = cache_lifetime(ttl, cliff, parent_last.model) or TTL_SECONDS["5m"]
    gap = None if first.ts is None or parent_last.ts is None else max(0.0, first.ts - parent_last.ts)
    cold = gap is not None and gap > life
    actual = _sum(_cost(c) for c in child)
    cont = _sum(_continued(c, drop, cold, i == 0, ttl) for i, c in enumerate(child))
    return {
        "afterCall": parent_last.call, "firstCall": first.call, "calls": len(child),
        "gapSeconds": None if gap is None else round(gap, 3), "parentCold": cold,
        "parentTokens": parent_last.total,
        "pricedCarryTokens": carry_priced, "pricedCarryUsd": carry_priced_usd,
        "carryTokens": first.total, "carryUsd": rounded(_cost(first)),
        "continueExtraTokens": drop,
        "actualUsd": rounded(actual), "continueUsd": rounded(cont),
        "savingUsd": None if actual is None or cont is None else round(cont - actual, 6),
    }


def handoff(parent_id: str, parent: Sequence[Call], child_id: str, child: Sequence[Call],
            priced: tuple[int | None, float | None], cliff: Mapping[str, Any] | None = None,
            ) -> dict[str, Any] | None:
    """A restart through a handoff: the parent's last call to the child's first segment."""
    if not parent:
        return None
    doc = price(parent[-1], by_segment(child)[0] if child else [], priced, cliff)
    if doc is None:
        return None
    theirs, ours = prices.vendor(parent[-1].model), prices.vendor(child[0].model)
    if theirs and ours and theirs != ours:  # across vendors: counted, not priced
        doc.update(continueUsd=None, savingUsd=None, acrossVendors=True)
    return {"kind": "handoff", "parent": parent_id, "child": child_id, **doc}


def idle_compactions(session_id: str, calls: Sequence[Call], cliff: Mapping[str, Any] | None = None,
                     ) -> list[dict[str, Any]]:
    """The client's idle compactions in one session: a new segment after IDLE_COMPACTION_S of
    idleness on a 1-hour cache, priced as a restart from the segment before."""
    out = []
    segs = by_segment(calls)
    for before, after in pairwise(segs):
        last, first = before[-1], after[0]
        if last.ttl != "1h" or last.ts is None or first.ts is None or first.ts - last.ts < IDLE_COMPACTION_S:
            continue
        doc = price(last, after, cliff=cliff)
        if doc is not None:
            out.append({"kind": "idleCompaction", "parent": session_id, "child": session_id, **doc})
    return out


def totals(restarts: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    savings = [r["savingUsd"] for r in restarts if r.get("savingUsd") is not None]
    return {"restarts": len(restarts), "pricedRestarts": len(savings), "savingUsd": round(sum(savings), 6)}
