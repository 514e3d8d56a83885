"""Cache warmth, idle-gap cost, the inferred TTL cliff and cold-start causes. Pure: no I/O, no clock.

Definitions (docs/report-schema.json says the same for each JSON field):

* Main chain: the calls of a session's main file not marked `isSidechain`. Subagent files and
  sidechain records count toward token totals only.
* One API call per key (message id + request id). Its usage is the last sample seen (main file
  first, then subagent files); its time and place in the chain are those of its first line.
* Per call n of the main chain: warmth = cache read / (cache read + cache write) (undefined when
  both are 0); cold start = warmth < 50 %; gap = t(n) - t(n-1) (a backward step counts as 0).
* TTL class of a gap: the kind of the last cache write before it (1-hour when the write holds
  1-hour tokens, else 5-minute); the next call's own writes when nothing was written before.
* Session warmth: sum of cache reads / sum of (reads + writes) over main-chain calls 2..n (null for a
  one-call session: there is no earlier context to be warm with).
* The inferred TTL of a class: the bucket edge that best splits its gaps into a warm side and a cold
  side (largest jump in the pooled cold share), when each side has enough calls and the jump is
  large. It is an inference from the user's own calls, stated with its evidence.
* Cause of a cold start, the first that applies: `firstCall`, `idleGap` (gap at or past the
  inferred TTL of its class, or 30 minutes when no TTL could be inferred), `modelSwitch`,
  `compaction` (a compact boundary since the previous call), else `unexplained`.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from session_watcher.reports.fmt import CAUSES, apply_now, day_start, gap_sentence
from session_watcher.reports.parse import KIND_CALL, KIND_COMPACT
from session_watcher.reports.prices import write_usd

if TYPE_CHECKING:
    from collections.abc import Iterable

    from session_watcher.reports.parse import Row

COLD_BELOW = 0.5
DEFAULT_IDLE_SECONDS = 30 * 60  # SPEC's idle-gap rule, used only when no TTL can be inferred
# bucket edges in seconds: round minutes, roughly log-spaced (ratio <= 1.5) from 1 min to 2 h
BUCKET_EDGES: tuple[int, ...] = (
    60,
    90,
    120,
    180,
    240,
    300,
    360,
    450,
    600,
    900,
    1200,
    1800,
    2400,
    3000,
    3600,
    4200,
    5400,
    7200,
)
MIN_BELOW = 5  # calls needed on the warm side of an inferred boundary
MIN_ABOVE = 3  # calls needed on the cold side
MIN_JUMP = 0.5  # cold share above minus cold share below
TTL_CLASSES = ("5m", "1h")


@dataclass(slots=True)
class Call:
    """One main-chain API call, usage folded last-sample-wins."""

    key: str
    ts: float | None
    model: str | None
    inp: int
    out: int
    cr: int
    cw: int
    cw5m: int
    cw1h: int
    compact_before: bool = False

    @property
    def warmth(self) -> float | None:
        total = self.cr + self.cw
        return self.cr / total if total else None

    @property
    def write_class(self) -> str | None:
        if self.cw1h > 0:
            return "1h"
        if self.cw > 0:
            return "5m"
        return None


@dataclass(slots=True)
class Session:
    """A session: its main-chain calls in order, and token totals over main and subagent files."""

    session_id: str
    project: str
    calls: list[Call]
    totals: dict[str, int]
    api_calls: int
    last_ts: float | None


@dataclass(slots=True)
class Obs:
    """What the report says about main-chain call `index` of a session."""

    session_id: str
    index: int
    ts: float | None
    gap: float | None
    warmth: float | None
    cold: bool
    ttl_class: str | None
    tokens_recreated: int
    usd: float | None
    model_switch: bool
    compaction: bool
    call: Call
    cause: str | None = None
    also: list[str] = field(default_factory=list)


def fold_session(session_id: str, project: str, main_rows: list[Row], sub_rows: Iterable[list[Row]]) -> Session:
    """Fold a session's raw rows (main file, then each subagent file, in file order)."""
    usage: dict[str, Row] = {}
    chain: dict[str, Call] = {}
    compact_pending = False
    last_ts: float | None = None
    # rows unpacked, not read by name: a NamedTuple's fields are properties, slow in a loop this long
    for r in main_rows:
        _offset, kind, ts, key, model, side, inp, out, cr, cw, cw5m, cw1h = r
        if ts is not None and (last_ts is None or ts > last_ts):
            last_ts = ts
        if kind == KIND_COMPACT:
            if not side:
                compact_pending = True
            continue
        if kind != KIND_CALL or key is None:
            continue
        usage[key] = r
        if side:
            continue
        c = chain.get(key)
        if c is None:
            chain[key] = Call(key, ts, model, inp, out, cr, cw, cw5m, cw1h, compact_pending)
            compact_pending = False
        else:  # a later sample of the same call replaces the usage, keeps the time and place
            c.inp, c.out, c.cr, c.cw, c.cw5m, c.cw1h = inp, out, cr, cw, cw5m, cw1h
            c.model = model or c.model
    for rows in sub_rows:
        for r in rows:
            ts, key = r[2], r[3]
            if ts is not None and (last_ts is None or ts > last_ts):
                last_ts = ts
            if r[1] == KIND_CALL and key is not None:
                usage[key] = r
    t_in = t_out = t_cr = t_cw = 0
    for u in usage.values():
        t_in += u[6]
        t_out += u[7]
        t_cr += u[8]
        t_cw += u[9]
    totals = {"input": t_in, "output": t_out, "cacheRead": t_cr, "cacheWrite": t_cw}
    totals["total"] = sum(totals.values())
    return Session(session_id, project, list(chain.values()), totals, len(usage), last_ts)


def observe(session: Session) -> list[Obs]:
    """Per main-chain call: gap, warmth, cold start, TTL class and the cause candidates."""
    out: list[Obs] = []
    append, sid = out.append, session.session_id
    last_class: str | None = None
    prev_ts: float | None = None
    prev_model: str | None = None
    for i, c in enumerate(session.calls):  # Call.warmth and .write_class, inline: this loop is long
        ts, model, cr, cw = c.ts, c.model, c.cr, c.cw
        gap = None
        if i and prev_ts is not None and ts is not None:
            gap = max(0.0, ts - prev_ts)
        w = cr / (cr + cw) if cr + cw else None
        write_class = "1h" if c.cw1h > 0 else "5m" if cw > 0 else None
        switch = i > 0 and prev_model is not None and model is not None and prev_model != model
        append(Obs(sid, i, ts, gap, w, w is not None and w < COLD_BELOW, last_class or write_class, cw,
                   write_usd(model, c.cw5m, c.cw1h), switch, c.compact_before, c))
        last_class = write_class or last_class
        prev_ts, prev_model = ts, model
    return out


def bucket_label(lo: float, hi: float | None) -> str:
    def fmt(s: float) -> str:
        return f"{s / 3600:g}h" if s >= 3600 and s % 1800 == 0 else f"{s / 60:g}m"

    if lo == 0:
        return f"<{fmt(hi or 0)}"
    if hi is None:
        return f">{fmt(lo)}"
    return f"{fmt(lo)}-{fmt(hi)}"


def _median(values: list[float]) -> float | None:
    if not values:
        return None
    s = sorted(values)
    mid = len(s) // 2
    return s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2


def gap_buckets(obs: Iterable[Obs], ttl_class: str) -> list[dict[str, Any]]:
    """The cliff table for one TTL class: per gap bucket, n, median warmth and share cold."""
    edges = (0, *BUCKET_EDGES)
    warmths: list[list[float]] = [[] for _ in edges]
    colds = [0] * len(edges)
    for o in obs:
        if o.gap is None or o.warmth is None or o.ttl_class != ttl_class:
            continue
        k = bisect_right(BUCKET_EDGES, o.gap)  # the last edge at or below the gap (gaps are never NaN)
        warmths[k].append(o.warmth)
        colds[k] += o.cold
    table = []
    for k, lo in enumerate(edges):
        hi = edges[k + 1] if k + 1 < len(edges) else None
        n = len(warmths[k])
        table.append(
            {
                "ttl": ttl_class,
                "label": bucket_label(lo, hi),
                "fromSeconds": lo,
                "toSeconds": hi,
                "n": n,
                "cold": colds[k],
                "medianWarmth": _median(warmths[k]),
                "coldShare": colds[k] / n if n else None,
            }
        )
    return table


def infer_ttl(obs: Iterable[Obs], buckets: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Where the cold share jumps in `buckets` (one class), with the evidence; None when unclear."""
    best: tuple[float, int] | None = None
    for k in range(1, len(buckets)):
        below, above = buckets[:k], buckets[k:]
        nb, na = sum(b["n"] for b in below), sum(b["n"] for b in above)
        if nb < MIN_BELOW or na < MIN_ABOVE:
            continue
        jump = sum(b["cold"] for b in above) / na - sum(b["cold"] for b in below) / nb
        if jump >= MIN_JUMP and (best is None or jump > best[0] + 1e-12):
            best = (jump, k)
    if best is None:
        return None
    k = best[1]
    edge = buckets[k]["fromSeconds"]
    cls = buckets[k]["ttl"]
    below_gaps = [o.gap for o in obs if o.ttl_class == cls and o.gap is not None and o.warmth is not None]
    nb = sum(b["n"] for b in buckets[:k])
    na = sum(b["n"] for b in buckets[k:])
    cb = sum(b["cold"] for b in buckets[:k])
    ca = sum(b["cold"] for b in buckets[k:])
    lower = max((g for g in below_gaps if g < edge), default=None)
    upper = min((g for g in below_gaps if g >= edge), default=None)
    return {
        "inferredSeconds": edge,
        "inferred": True,
        "evidence": {
            "below": {"n": nb, "cold": cb, "coldShare": cb / nb, "maxGapSeconds": lower},
            "above": {"n": na, "cold": ca, "coldShare": ca / na, "minGapSeconds": upper},
            "jump": best[0],
        },
    }


def assign_causes(obs: list[Obs], idle_seconds: dict[str, float]) -> None:
    """Name the cause of every cold start (the first that applies), and note the others that apply."""
    for o in obs:
        if not o.cold:
            continue
        applies = []
        if o.index == 0:
            applies.append("firstCall")
        limit = idle_seconds.get(o.ttl_class or "5m", DEFAULT_IDLE_SECONDS)
        if o.gap is not None and o.gap >= limit:
            applies.append("idleGap")
        if o.model_switch:
            applies.append("modelSwitch")
        if o.compaction:
            applies.append("compaction")
        o.cause = applies[0] if applies else "unexplained"
        o.also = applies[1:]


def _warmth(pairs: Iterable[Obs]) -> float | None:
    cr = cw = 0
    for o in pairs:
        cr += o.call.cr
        cw += o.call.cw
    return cr / (cr + cw) if cr + cw else None


def guard_summary(warnings: Iterable[dict[str, Any]], sessions: list[Session],
                  since: float | None = None) -> dict[str, Any]:
    """The cold prompts the guard warned about (its log's lines) and what they cost.

    A warning `went ahead` when its session has a main-chain call after the warning, before any other
    call after the gap it warned about: that call's cache writes are what the cold prompt cost. Else
    the prompt was `not sent` in that session (a restart, /compact in a new session, or no return):
    its estimated re-write did not happen there.
    """
    calls = {s.session_id: s.calls for s in sessions}
    out: dict[str, Any] = {"warned": 0, "blocked": 0, "wentAhead": 0, "wentAheadTokens": 0,
                           "wentAheadUsd": 0.0, "notSent": 0, "notSentEstimatedUsd": 0.0}
    for w in warnings:
        ts, after = w.get("ts"), w.get("afterTs")
        if not isinstance(ts, int | float) or not isinstance(after, int | float) or (since is not None and ts < since):
            continue
        out["warned"] += 1
        out["blocked"] += w.get("mode") == "block"
        sid = str(w.get("sessionId"))
        nxt = next((c for c in calls.get(sid, []) if c.ts is not None and c.ts > after + 0.5), None)
        if nxt is not None and nxt.ts is not None and nxt.ts >= ts - 5:
            out["wentAhead"] += 1
            out["wentAheadTokens"] += nxt.cw
            out["wentAheadUsd"] += write_usd(nxt.model, nxt.cw5m, nxt.cw1h) or 0.0
        elif nxt is None and sid in calls:  # a session outside this report says nothing
            out["notSent"] += 1
            usd = w.get("usd")
            out["notSentEstimatedUsd"] += usd if isinstance(usd, int | float) else 0.0
    return out


def build_report(
    sessions: list[Session],
    now: float,
    utc_offset: float = 0.0,
    since: float | None = None,
    warnings: Iterable[dict[str, Any]] = (),
) -> dict[str, Any]:
    """The whole report as the JSON document (docs/report-schema.json). `warnings`: the cold-cache
    guard's log lines."""
    keep = [s for s in sessions if since is None or (s.last_ts is not None and s.last_ts >= since)]
    all_obs: list[Obs] = []
    per_session: dict[str, list[Obs]] = {}
    for s in keep:
        o = observe(s)
        per_session[s.session_id + "\0" + s.project] = o
        all_obs.extend(o)
    window = [o for o in all_obs if since is None or (o.ts is not None and o.ts >= since)]

    buckets: list[dict[str, Any]] = []
    ttl: dict[str, dict[str, Any] | None] = {}
    for cls in TTL_CLASSES:
        b = gap_buckets(window, cls)
        buckets.extend(b)
        ttl[cls] = infer_ttl(window, b)
    idle = {cls: float(v["inferredSeconds"]) for cls, v in ttl.items() if v is not None}
    assign_causes(all_obs, idle)

    causes = dict.fromkeys(CAUSES, 0)
    cold_list = [o for o in window if o.cold]
    for co in cold_list:
        causes[co.cause or "unexplained"] += 1
    n_cold = len(cold_list)
    shares = {k: (v / n_cold if n_cold else None) for k, v in causes.items()}

    out_sessions: list[dict[str, Any]] = []
    for s in keep:
        obs = per_session[s.session_id + "\0" + s.project]
        colds = [o for o in obs if o.cold]
        pairs = [o for o in obs if o.index > 0]
        largest = None
        gapped = [o for o in pairs if o.gap is not None]
        if gapped:
            g = max(gapped, key=lambda o: o.gap or 0.0)
            largest = {
                "seconds": g.gap,
                "tokensRecreated": g.tokens_recreated,
                "usd": g.usd,
                "cold": g.cold,
                "callIndex": g.index,
            }
        models = sorted({c.model for c in s.calls if c.model})
        out_sessions.append(
            {
                "sessionId": s.session_id,
                "project": s.project,
                "calls": len(s.calls),
                "apiCalls": s.api_calls,
                "warmth": _warmth(pairs) if pairs else None,
                "coldStarts": len(colds),
                "causes": {k: sum(1 for o in colds if o.cause == k) for k in CAUSES},
                "largestGap": largest,
                "sentence": gap_sentence(largest) if pairs else gap_sentence(None),
                "tokens": s.totals,
                "models": models,
                "lastActivity": s.last_ts,
            }
        )
    out_sessions.sort(key=lambda d: float(d["lastActivity"] or 0.0), reverse=True)

    days: dict[int, list[int]] = {}
    for ob in all_obs:
        if ob.index > 0 and ob.ts is not None:
            d = days.setdefault(int(day_start(ob.ts, utc_offset)), [0, 0])
            d[0] += ob.call.cr
            d[1] += ob.call.cw
    scatter = [
        {
            "gapSeconds": o.gap,
            "tokensRecreated": o.tokens_recreated,
            "ttl": o.ttl_class,
            "cold": o.cold,
            "sessionId": o.session_id,
        }
        for o in window
        if o.index > 0 and o.gap is not None and o.warmth is not None
    ]
    doc = {
        "schema": 1,
        "generatedAt": now,
        "since": since,
        "sessions": out_sessions,
        "coldStarts": n_cold,
        "causes": causes,
        "causeShares": shares,
        "coldStartList": [
            {
                "sessionId": o.session_id,
                "callIndex": o.index,
                "ts": o.ts,
                "gapSeconds": o.gap,
                "warmth": o.warmth,
                "ttl": o.ttl_class,
                "cause": o.cause,
                "alsoApplies": o.also,
            }
            for o in cold_list
        ],
        "idleGapRule": {
            cls: {
                "seconds": idle.get(cls, DEFAULT_IDLE_SECONDS),
                "from": "inferred" if cls in idle else "default",
            }
            for cls in TTL_CLASSES
        },
        "gapBuckets": buckets,
        "ttl": ttl,
        "warmthToday": None,
        "warmthWeek": None,
        "guard": guard_summary(warnings, keep, since),
        "days": [[d, cr, cw] for d, (cr, cw) in sorted(days.items())],
        "scatter": scatter,
    }
    return apply_now(doc, now, utc_offset)
