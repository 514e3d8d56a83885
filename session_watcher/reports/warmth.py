"""Cache warmth, idle-gap cost, the inferred TTL cliff and cold-start causes. Pure: no I/O, no clock.

Definitions (docs/report-schema.json says the same for each JSON field):

* Main chain: the calls of a session's main file not marked `isSidechain`. Subagent files and
  sidechain records count toward token totals only.
* One API call per key (message id + request id). Its usage is the last sample seen (main file
  first, then subagent files); its time and place in the chain are those of its first line.
* A forked session's copies of its parent's calls (`kinds.KIND_INHERITED`: the line names the session
  that made the call) are counted in the session that made them, never in the fork: the fork's row
  holds its own calls, and says how many it inherited and from which session.
* Per call n of the main chain: warmth = cache read / (cache read + cache write) (undefined when
  both are 0); cold start = warmth < 50 %; gap = t(n) - t(n-1) (a backward step counts as 0).
* TTL class of a gap: the kind of the last cache write before it (1-hour when the write holds
  1-hour tokens, else 5-minute; a Codex thread's model's class, codex-30m or codex-10m, with its
  floor for a documented TTL); the next call's own writes when nothing was written before.
* Session warmth: sum of cache reads / sum of (reads + writes) over main-chain calls 2..n (null for a
  one-call session: there is no earlier context to be warm with).
* The inferred TTL of a class: a bucket edge E claimed only with enough returns on both sides of it
  (`infer_ttl`: the returns with gaps from E/3 to E mostly warm, those from E to 4E mostly cold, each
  split one a coin-flip cache would show at most 5 % of the time, 0.1 % for an edge more than a
  bucket from the class's documented TTL); else none ("not enough data yet"). Stated with its
  evidence, as an inference from the user's own calls.
* A cache's lifetime, one rule for the report, the cold-cache guard and the cold-start causes
  (`core.eoq.cache_lifetime`): the claimed edge of its class, else the documented TTL (5 min, 1 h).
* Cause of a cold start, the first that applies: `firstCall`, `idleGap` (gap at or past its
  class's lifetime), `modelSwitch`, `compaction` (a compact boundary since the previous call), else
  `unexplained`.
* Money: a call's cache cost is its cache reads and writes at its own model's prices (every call,
  main chain and subagents); per session, per day, per week (from Monday) and per project (the
  last folder of the transcript's `cwd`).
"""

from __future__ import annotations

from bisect import bisect_right

from session_watcher.agents import FALLBACK  # the agent of a session whose files name none
from session_watcher.reports.fmt import (
    CAUSES,
    a_time,
    apply_now,
    day_date,
    days_later,
    gap_sentence,
    hour_day,
    local_day,
    project_name,
)
from session_watcher.reports.fmt import week_of as monday
from session_watcher.reports.jsontext import dumps
from session_watcher.reports.kinds import KIND_CALL, KIND_COMPACT, KIND_DIR, KIND_INHERITED, KIND_OTHER
from session_watcher.reports.prices import (
    generation,
    input_price,
    read_multiplier,
    write_1h_multiplier,
    write_multiplier,
    write_usd,
)

TYPE_CHECKING = False  # typing is slow to import (a report's start-up), and only the checker needs it

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any, NamedTuple

    from session_watcher.reports.parse import Row
else:
    from session_watcher.core.named import NamedTuple

COLD_BELOW = 0.5
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
# The TTL edge rule (docs/report.md, "Inferred TTL", has the numbers that chose it). A return tests
# an edge E from below when its gap is E / NEAR_BELOW or more (a warm return after 30 s says nothing
# of a 5-minute edge), and from above when under E * NEAR_ABOVE (past an edge every return is cold,
# so a wider window still speaks of it; much further out it speaks of every edge alike).
NEAR_BELOW = 3
NEAR_ABOVE = 4
CHANCE = 0.05  # at most this likely from a cache as often warm as cold, on each side...
CHANCE_FAR = 0.001  # ...and this for an edge more than one bucket from the class's documented TTL
EXACT_UP_TO = 100  # returns on one side: the binomial tail summed exactly; more, approximated
# core.eoq.TTL_SECONDS (not imported on a report's start-up), then OpenAI's classes with their
# floors (core.prices_openai.CLASSES: a Codex thread's cache, gpt-5.6 on and older models)
DOCUMENTED_TTL = {"5m": 300, "1h": 3600, "codex-30m": 1800, "codex-10m": 600}
TTL_CLASSES = ("5m", "1h", "codex-30m", "codex-10m")
CLAUDE_CLASSES = ("5m", "1h")  # in every report; an OpenAI class only where a Codex thread has calls


# Plain classes with __slots__, not dataclasses: `dataclasses` (with `inspect`) is a share of a cold
# report's start-up.


class Call:
    """One main-chain API call, usage folded last-sample-wins."""

    __slots__ = ("compact_before", "cr", "cw", "cw1h", "cw5m", "inp", "key", "model", "out", "ts")

    def __init__(self, key: str, ts: float | None, model: str | None, inp: int, out: int, cr: int, cw: int,  # noqa: PLR0913, PLR0917 - one field each
                 cw5m: int, cw1h: int, compact_before: bool = False) -> None:
        self.key, self.ts, self.model = key, ts, model
        self.inp, self.out, self.cr, self.cw, self.cw5m, self.cw1h = inp, out, cr, cw, cw5m, cw1h
        self.compact_before = compact_before


class Session:
    """A session: its main-chain calls in order, and token totals over main and subagent files."""

    __slots__ = ("api_calls", "calls", "costs", "cwd", "forked_from", "inherited", "last_ts", "project", "session_id",
                 "totals", "unpriced")

    def __init__(self, session_id: str, project: str, calls: list[Call], totals: dict[str, Any],  # noqa: PLR0913, PLR0917 - one field each
                 api_calls: int, last_ts: float | None, cwd: str | None = None,
                 costs: list[tuple[float | None, float, int]] | None = None, unpriced: int = 0) -> None:
        self.session_id, self.project, self.calls, self.totals = session_id, project, calls, totals
        self.api_calls, self.last_ts, self.cwd = api_calls, last_ts, cwd
        # per API call outside the main chain (subagents, sidechain records) and other model's iteration:
        # (time, cache cost in USD, 1 for a call, 0 for an iteration); the main chain's come from `calls`
        self.costs = costs or []
        self.unpriced = unpriced  # of them, of a model without a price (their cost counts as 0)
        self.inherited: dict[str, str] = {}  # a fork's copies of calls another session made: key -> that session
        self.forked_from: str | None = None  # the session that made the main chain's last copy (`_fold_main`)


_PRICES: dict[str | None, tuple[float, float, float] | None] = {}
_PRICED_AT = [0]  # core.prices.generation() the cache was filled at: the user's prices changed since


def call_prices(model: str | None) -> tuple[float, float, float] | None:
    """USD per token of a cache read, a 5-minute write and a 1-hour write of `model` (None: no price)."""
    if _PRICED_AT[0] != generation():
        _PRICES.clear()
        _PRICED_AT[0] = generation()
    if model in _PRICES:
        return _PRICES[model]
    base = input_price(model)
    got = None if base is None else (base * read_multiplier(model) / 1e6, base * write_multiplier(model) / 1e6,
                                     base * write_1h_multiplier(model) / 1e6)
    if len(_PRICES) < 1024:
        _PRICES[model] = got
    return got


def short_class(model: str | None) -> str:
    """The class of a write without a 1-hour part: "5m", or an OpenAI model's own cache class
    (core.prices_openai.cache_class: its floor, and the cliff the user's returns show for it)."""
    if model and model[:4].lower() == "gpt-":  # an OpenAI model's cache: a class of its own
        from session_watcher.core.prices_openai import cache_class

        return cache_class(model)
    return "5m"


class Obs:
    """A cold start: main-chain call `index` of a session, and what may have caused it."""

    __slots__ = ("also", "cause", "compaction", "gap", "in_window", "index", "model_switch", "session_id", "ts",
                 "ttl_class", "warmth")

    def __init__(self, session_id: str, index: int, ts: float | None, gap: float | None,  # noqa: PLR0913, PLR0917 - one field each
                 warmth: float | None, ttl_class: str | None, model_switch: bool, compaction: bool,
                 in_window: bool) -> None:
        self.session_id, self.index, self.ts, self.gap, self.warmth = session_id, index, ts, gap, warmth
        self.ttl_class, self.model_switch, self.compaction = ttl_class, model_switch, compaction
        self.in_window = in_window
        self.cause: str | None = None
        self.also: list[str] = []


def fold_session(session_id: str, project: str, main_rows: list[Row], sub_rows: Iterable[list[Row]]) -> Session:
    """Fold a session's raw rows (main file, then each subagent file, in file order)."""
    usage: dict[str, Row] = {}
    inherited: dict[str, str] = {}
    last_copy: list[str | None] = [None]
    chain, last_ts, cwd = _fold_main(main_rows, usage, inherited, last_copy)
    for rows in sub_rows:
        for r in rows:
            ts, key = r[2], r[3]
            if r[1] == KIND_INHERITED:
                if key is not None and r[4] is not None:
                    inherited[key] = r[4]
                continue
            if ts is not None and (last_ts is None or ts > last_ts):
                last_ts = ts
            if (r[1] == KIND_CALL or r[1] == KIND_OTHER) and key is not None:
                usage[key] = r
    totals, others = _token_totals(usage)
    costs, unpriced = _side_costs(usage, chain) if len(usage) > len(chain) else ([], 0)
    api_calls = len(usage)
    if others is not None:  # the tokens of other models' iterations, in the totals above too
        api_calls -= sum(1 for u in usage.values() if u[1] == KIND_OTHER)
        for o in others.values():
            o["total"] = o["input"] + o["output"] + o["cacheRead"] + o["cacheWrite"]
        totals["otherModels"] = dict(sorted(others.items()))
    s = Session(session_id, project, list(chain.values()), totals, api_calls, last_ts, cwd, costs, unpriced)
    if inherited:  # (a call made here and copied here again is this session's own)
        s.inherited = {k: v for k, v in inherited.items() if k not in usage}
        s.forked_from = last_copy[0]
    return s


def _fold_main(main_rows: list[Row], usage: dict[str, Row], inherited: dict[str, str],
               last_copy: list[str | None]) -> tuple[dict[str, Call], float | None, str | None]:
    """The main file's rows: every call's last sample into `usage`, a fork's copies of another
    session's calls into `inherited` (key -> that session), and the maker of the main chain's last
    copy into `last_copy` (the session it was forked from, as the engine's tally names it); (the main
    chain's calls by key, in order, the latest time, the first working folder)."""
    chain: dict[str, Call] = {}
    compact_pending = False
    last_ts: float | None = None
    cwd: str | None = None
    # rows unpacked, not read by name: a NamedTuple's fields are properties, slow in a loop this long
    for r in main_rows:
        _offset, kind, ts, key, model, side, inp, out, cr, cw, cw5m, cw1h = r
        if kind == KIND_INHERITED:  # counted where it was made; its time is the parent's
            if key is not None and model is not None:
                inherited[key] = model
                if not side:
                    last_copy[0] = model
            continue
        if ts is not None and (last_ts is None or ts > last_ts):
            last_ts = ts
        if kind == KIND_COMPACT:
            if not side:
                compact_pending = True
            continue
        if kind != KIND_CALL or key is None:
            if kind == KIND_OTHER and key is not None:  # another model's iteration: in the totals only
                usage[key] = r
            elif kind == KIND_DIR and cwd is None:
                cwd = key
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
    return chain, last_ts, cwd


def _token_totals(usage: dict[str, Row]) -> tuple[dict[str, Any], dict[str, dict[str, int]] | None]:
    """Token totals over every call and iteration, and those of other models' iterations by model
    (None: there are none)."""
    t_in = t_out = t_cr = t_cw = 0
    others: dict[str, dict[str, int]] | None = None
    for u in usage.values():
        t_in += u[6]
        t_out += u[7]
        t_cr += u[8]
        t_cw += u[9]
        if u[1] == KIND_OTHER:
            others = others if others is not None else {}
            o = others.setdefault(u[4] or "unknown", {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0})
            o["input"] += u[6]
            o["output"] += u[7]
            o["cacheRead"] += u[8]
            o["cacheWrite"] += u[9]
    totals: dict[str, Any] = {"input": t_in, "output": t_out, "cacheRead": t_cr, "cacheWrite": t_cw}
    totals["total"] = t_in + t_out + t_cr + t_cw
    return totals, others


def _side_costs(usage: dict[str, Row], chain: dict[str, Call]) -> tuple[list[tuple[float | None, float, int]], int]:
    """The cache cost of what is not a main-chain call (subagents', sidechain records, other models'
    iterations): per call (time, USD, 1 for a call, 0 for an iteration), and how many had no price.
    The main chain's is added up where its calls are walked (`session_part`)."""
    costs: list[tuple[float | None, float, int]] = []
    unpriced = 0
    for key, u in usage.items():
        if key in chain:
            continue
        p = call_prices(u[4])
        if p is None:
            unpriced += 1
            costs.append((u[2], 0.0, 0 if u[1] == KIND_OTHER else 1))
        else:
            costs.append((u[2], u[8] * p[0] + u[10] * p[1] + u[11] * p[2], 0 if u[1] == KIND_OTHER else 1))
    return costs, unpriced


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


# per gap bucket of one TTL class: [the warmths of its calls, how many were cold, shortest gap, longest];
# a call's bucket is the last edge at or below its gap (gaps are never NaN): bisect_right(BUCKET_EDGES, gap)
if TYPE_CHECKING:
    Bucket = list[Any]


def merge_buckets(into: dict[int, Bucket], more: dict[int, Bucket]) -> None:
    """`more`'s buckets added to `into`'s (`more` is left as it was)."""
    for k, (warmths, cold, lo, hi) in more.items():
        b = into.get(k)
        if b is None:
            into[k] = [list(warmths), cold, lo, hi]
            continue
        b[0] += warmths
        b[1] += cold
        b[2] = min(b[2], lo)
        b[3] = max(b[3], hi)


def gap_buckets(buckets: dict[int, Bucket], ttl_class: str) -> list[dict[str, Any]]:
    """The cliff table for one TTL class from its gap buckets (`Bucket`): per bucket, n, median
    warmth and share cold."""
    edges = (0, *BUCKET_EDGES)
    table = []
    for k, lo in enumerate(edges):
        hi = edges[k + 1] if k + 1 < len(edges) else None
        warmths, colds = buckets[k][:2] if k in buckets else ([], 0)
        n = len(warmths)
        table.append(
            {
                "ttl": ttl_class,
                "label": bucket_label(lo, hi),
                "fromSeconds": lo,
                "toSeconds": hi,
                "n": n,
                "cold": colds,
                "medianWarmth": _median(warmths),
                "coldShare": colds / n if n else None,
            }
        )
    return table


def chance(k: int, n: int) -> float:
    """How often a cache as likely warm as cold shows `k` or more of `n` returns one way: P(X >= k),
    X ~ Binomial(n, 1/2)."""
    if k <= 0:
        return 1.0
    if k > n:
        return 0.0
    import math

    if n <= EXACT_UP_TO:
        return float(sum(math.comb(n, i) for i in range(k, n + 1)) / 2**n)
    # the normal approximation, with continuity correction (its error, under 1e-3 here, decides nothing)
    return 0.5 * math.erfc((k - 0.5 - n / 2) / math.sqrt(n / 2))


def edge_evidence(gaps: dict[int, Bucket], buckets: list[dict[str, Any]], k: int) -> dict[str, Any]:
    """The returns that test the edge at bucket `k`'s lower bound E: below, the buckets from E /
    NEAR_BELOW up to E; above, those from E up to E * NEAR_ABOVE (a bucket wholly inside)."""
    edge = buckets[k]["fromSeconds"]
    below = [j for j in range(k) if buckets[j]["fromSeconds"] * NEAR_BELOW >= edge]
    above = [j for j in range(k, len(buckets))
             if buckets[j]["toSeconds"] is not None and buckets[j]["toSeconds"] <= edge * NEAR_ABOVE]
    nb, cb = sum(buckets[j]["n"] for j in below), sum(buckets[j]["cold"] for j in below)
    na, ca = sum(buckets[j]["n"] for j in above), sum(buckets[j]["cold"] for j in above)
    return {
        "edgeSeconds": edge,
        "below": {"n": nb, "cold": cb, "coldShare": cb / nb if nb else None,
                  "fromSeconds": buckets[below[0]]["fromSeconds"] if below else edge,
                  "maxGapSeconds": max((gaps[j][3] for j in below if j in gaps), default=None)},
        "above": {"n": na, "cold": ca, "coldShare": ca / na if na else None,
                  "toSeconds": buckets[above[-1]]["toSeconds"] if above else edge,
                  "minGapSeconds": min((gaps[j][2] for j in above if j in gaps), default=None)},
        "chance": {"below": chance(nb - cb, nb), "above": chance(ca, na)},
    }


def near_documented(edge: float, ttl_class: str) -> bool:
    """Whether `edge` is the class's documented TTL or a bucket edge next to it."""
    known = BUCKET_EDGES.index(DOCUMENTED_TTL[ttl_class])
    return edge in BUCKET_EDGES[max(0, known - 1) : known + 2]


def infer_ttl(gaps: dict[int, Bucket], buckets: list[dict[str, Any]], ttl_class: str = "5m") -> dict[str, Any] | None:
    """The edge of `buckets` (the table of one class, made of its gap buckets `gaps`) where the
    cache is claimed to expire, with the evidence; None when no edge has enough returns on both sides.

    An edge E is claimed when the returns from E / NEAR_BELOW to E are mostly warm and those from E to
    E * NEAR_ABOVE mostly cold, each side's split one that a cache as often warm as cold would show at
    most CHANCE of the time (at least 5 returns a side: 1/2**5 = 3 %; CHANCE_FAR, 10 returns, for an
    edge more than a bucket from the documented TTL, which 13,569 returns measured elsewhere agree
    with); of the edges claimed, the one with the largest jump in cold share."""
    best: tuple[float, int, dict[str, Any]] | None = None
    for k in range(1, len(buckets)):
        ev = edge_evidence(gaps, buckets, k)
        b, a = ev["below"], ev["above"]
        if not b["n"] or not a["n"]:
            continue
        limit = CHANCE if near_documented(ev["edgeSeconds"], ttl_class) else CHANCE_FAR
        if ev["chance"]["below"] > limit or ev["chance"]["above"] > limit:
            continue
        jump = a["coldShare"] - b["coldShare"]
        if best is None or jump > best[0] + 1e-12:
            best = (jump, k, ev)
    if best is None:
        return None
    jump, _k, ev = best
    return {
        "inferredSeconds": ev["edgeSeconds"],
        "inferred": True,
        "evidence": {"below": ev["below"], "above": ev["above"], "jump": jump, "chance": ev["chance"]},
    }


def tested_at_documented(gaps: dict[int, Bucket], buckets: list[dict[str, Any]], ttl_class: str) -> dict[str, Any]:
    """The returns that would test the documented TTL's edge (what `report` shows when no edge is
    claimed: how far the user's data is from saying where the cache expires)."""
    return edge_evidence(gaps, buckets, 1 + BUCKET_EDGES.index(DOCUMENTED_TTL[ttl_class]))


def assign_causes(colds: Iterable[Obs], lifetime: dict[str, float]) -> None:
    """Name the cause of every cold start (the first that applies), and note the others that apply.
    `lifetime`: the cache's lifetime per TTL class (`core.eoq.cache_lifetime`, the guard's own)."""
    for o in colds:
        applies = []
        if o.index == 0:
            applies.append("firstCall")
        limit = lifetime[o.ttl_class or "5m"]
        if o.gap is not None and o.gap >= limit:
            applies.append("idleGap")
        if o.model_switch:
            applies.append("modelSwitch")
        if o.compaction:
            applies.append("compaction")
        o.cause = applies[0] if applies else "unexplained"
        o.also = applies[1:]


GuardCall = tuple[float | None, int, str | None, int, int]  # (ts, cache write, model, 5-minute, 1-hour writes)


def _guard_call(c: Call) -> GuardCall:
    return (c.ts, c.cw, c.model, c.cw5m, c.cw1h)


FLOAT_MAX = 1.7976931348623157e308  # the largest float (`sys.float_info.max`): a larger int has none


def summarize_guard(warnings: Iterable[dict[str, Any]], calls: dict[str, list[GuardCall]], since: float | None
           ) -> dict[str, Any]:
    """`guard_summary` from each session's calls."""
    out: dict[str, Any] = {"warned": 0, "blocked": 0, "wentAhead": 0, "wentAheadTokens": 0,
                           "wentAheadUsd": 0.0, "notSent": 0, "notSentEstimatedUsd": 0.0}
    for w in warnings:
        ts, after = w.get("ts"), w.get("afterTs")
        # times within +-10^12 s: an integer of 400 digits (a damaged line) has no float to add 0.5 to
        if not (a_time(ts) and a_time(after)) or (since is not None and ts < since):
            continue
        out["warned"] += 1
        out["blocked"] += w.get("mode") == "block" or w.get("asked") is True  # "ask" holds back past guard_x
        sid = str(w.get("sessionId"))
        nxt = next((c for c in calls.get(sid, []) if c[0] is not None and c[0] > after + 0.5), None)
        if nxt is not None and nxt[0] is not None and nxt[0] >= ts - 5:
            out["wentAhead"] += 1
            out["wentAheadTokens"] += nxt[1]
            out["wentAheadUsd"] += write_usd(nxt[2], nxt[3], nxt[4]) or 0.0
        elif nxt is None and sid in calls:  # a session outside this report says nothing
            out["notSent"] += 1
            usd = w.get("usd")
            # a number the log's line says: not `1e999` (an infinity as JSON reads it), NaN, below 0,
            # nor one taking the sum past any float (two of 1.7e308): counted, its estimate not added
            if isinstance(usd, int | float) and not isinstance(usd, bool) and 0 <= usd <= FLOAT_MAX:
                total = out["notSentEstimatedUsd"] + float(usd)
                if total < _INF:
                    out["notSentEstimatedUsd"] = total
    return out


def guard_ids(warnings: Iterable[dict[str, Any]]) -> frozenset[str]:
    """The sessions the guard's log names: the only ones whose calls the guard summary reads."""
    return frozenset(str(w.get("sessionId")) for w in warnings)


class JSONText(str):
    """A field of the document already as its JSON text (`report_of_parts`' `scatter_text`)."""

    __slots__ = ()


_TTL_JSON: dict[str | None, str] = {None: "null", **{cls: f'"{cls}"' for cls in TTL_CLASSES}}
# a session's entry, in order, around its causes (known only once every session's part is in)
_BEFORE_CAUSES = ("sessionId", "project", "calls", "apiCalls", "warmth", "coldStarts")
# ... and around its sentence (which names the largest gap's cause)
_BEFORE_SENTENCE = ("largestGap",)
_AFTER_SENTENCE = ("tokens", "models", "lastActivity", "firstActivity", "cwd", "model", "projectName", "cacheUsd",
                   "unpricedCalls", "subagentCalls", "subagentUsd", "agent")
_FORK_KEYS = ("inheritedCalls", "forkedFrom")  # only on a forked session's entry (`_fork_fields`)
_BOOL_JSON = {True: "true", False: "false"}
_INF = float("inf")


class Part(NamedTuple):
    """What the report takes from one kept session, as plain data: marshal carries it from the
    process that read the session's files to the one that writes the report."""

    entry: dict[str, Any]  # the session's entry; its `causes` are filled once the causes are known
    colds: list[tuple[Any, ...]]  # per cold start: Obs's fields after the session id
    gaps: dict[str, dict[int, Bucket]]  # per TTL class: the gap buckets of its calls in the window
    days: dict[int, list[int]]  # local day -> [cache read, cache write]
    scatter: Any  # the scatter items: dicts, or their JSON text joined by ","
    calls: list[GuardCall] | None  # for the guard, when its log names the session
    # local day -> [main calls, their cache cost in USD, sub-agent calls, theirs], calls in the window
    spend: dict[int, list[Any]]
    # the entry's JSON text before its causes, between them and its sentence, and after (`scatter_text`)
    text: tuple[str, str, str] | None = None


def main_model(calls: list[Call], models: list[str]) -> str | None:
    """The model of most of the main chain's calls (the first in name order on a tie)."""
    if len(models) < 2:
        return models[0] if models else None
    counts = dict.fromkeys(models, 0)
    for c in calls:
        if c.model:
            counts[c.model] += 1
    return max(models, key=lambda m: counts[m])  # max keeps the first of equals


def session_part(s: Session, since: float | None, utc_offset: float | None, scatter_text: bool,
                 guarded: frozenset[str] = frozenset(), agent: str = FALLBACK.name) -> Part | None:
    """What the report takes from one session (None when it ends before `since`): one pass over its
    main chain (`_walk`), the gap buckets and scatter of its returns, the spend of its other calls,
    and its entry (`agent`: whose session it is)."""
    if since is not None and (s.last_ts is None or s.last_ts < since):
        return None
    w = _walk(s.calls, since, utc_offset)
    spend, returns = w.spend, w.returns
    side = _side_spend(s.costs, since, utc_offset, spend)
    unpriced = s.unpriced + w.unpriced
    gaps = _gap_buckets_of(returns)
    entry = _session_entry(s, w, side, unpriced)
    entry["agent"] = agent
    calls = [_guard_call(c) for c in s.calls] if s.session_id in guarded else None
    if not scatter_text:
        scatter = [{"gapSeconds": gap, "tokensRecreated": cw, "ttl": cls, "cold": cold, "sessionId": s.session_id}
                   for gap, _w, cw, cls, cold in returns]
        return Part(entry, w.colds, gaps, w.days, scatter, calls, spend)
    return Part(entry, w.colds, gaps, w.days, _scatter_text(returns, s.session_id), calls, spend, _entry_text(entry))


class Walk(NamedTuple):
    """A session's main chain walked once (`_walk`)."""

    days: dict[int, list[int]]  # local day -> [cache read, cache write] of calls 2..n
    spend: dict[int, list[Any]]  # local day -> [calls, cache cost in USD, 0, 0.0], calls in the window
    spent: float  # the cache cost of every call, window or not
    unpriced: int  # calls of a model without a price
    pair_cr: int  # cache read and write over calls 2..n
    pair_cw: int
    largest: tuple[Call, float, int, bool] | None  # the call after the largest gap: (call, gap, index, cold)
    colds: list[tuple[Any, ...]]  # per cold start: Obs's fields after the session id
    returns: list[tuple[float, float, int, str | None, bool]]  # in the window: (gap, warmth, write, TTL class, cold)


def _walk(calls: list[Call], since: float | None, offset: float | None) -> Walk:
    """One pass over the main chain, inline (it runs once per call of the whole history): per call,
    its gap, warmth, cold start, TTL class (the last write's kind before the gap), cache cost and
    local day."""
    days: dict[int, list[int]] = {}
    spend: dict[int, list[Any]] = {}
    colds: list[tuple[Any, ...]] = []
    returns: list[tuple[float, float, int, str | None, bool]] = []
    last_class: str | None = None
    prev_ts: float | None = None
    prev_model: str | None = None
    pair_cr = pair_cw = 0
    largest: tuple[Call, float, int, bool] | None = None
    spent = 0.0
    unpriced = 0
    price_model: object = spend  # no model yet (a sentinel no model is)
    price: tuple[float, float, float] | None = None
    short = "5m"
    # the local day of every call in the UTC hour [hour_lo, hour_lo + 3600) (`fmt.hour_day`; None: asked per call)
    hour_lo, hour_of = -_INF, None
    for i, c in enumerate(calls):
        ts, model, cr, cw = c.ts, c.model, c.cr, c.cw
        gap = None
        if i and prev_ts is not None and ts is not None:
            step = ts - prev_ts
            gap = step if step > 0.0 else 0.0  # max(0.0, step), without the call
        w = cr / (cr + cw) if cr + cw else None
        cold = w is not None and w < COLD_BELOW
        if model != price_model:  # a session keeps one model for long stretches (each call's name its own str)
            price_model, price, short = model, call_prices(model), short_class(model)
        write_class = "1h" if c.cw1h > 0 else short if cw > 0 else None
        cls = last_class or write_class
        seen = since is None or (ts is not None and ts >= since)
        usd = 0.0 if price is None else cr * price[0] + c.cw5m * price[1] + c.cw1h * price[2]
        unpriced += price is None
        spent += usd
        if ts is not None:
            if not hour_lo <= ts < hour_lo + 3600:  # a session's calls come hours at a time
                hour = int(ts // 3600)
                hour_lo, hour_of = hour * 3600, hour_day(hour, offset)
            day = hour_of if hour_of is not None else local_day(ts, offset)
            if seen:
                sp = spend.get(day)
                if sp is None:
                    spend[day] = [1, usd, 0, 0.0]
                else:
                    sp[0] += 1
                    sp[1] += usd
        if i:
            pair_cr += cr
            pair_cw += cw
            if ts is not None:
                d = days.get(day)
                if d is None:
                    days[day] = [cr, cw]
                else:
                    d[0] += cr
                    d[1] += cw
            if gap is not None:
                if largest is None or gap > largest[1]:
                    largest = (c, gap, i, cold)
                if w is not None and seen:
                    returns.append((gap, w, cw, cls, cold))
        if cold:
            switch = i > 0 and prev_model is not None and model is not None and prev_model != model
            colds.append((i, ts, gap, w, cls, switch, c.compact_before, seen))
        last_class = write_class or last_class
        prev_ts, prev_model = ts, model
    return Walk(days, spend, spent, unpriced, pair_cr, pair_cw, largest, colds, returns)


def _side_spend(costs: list[tuple[float | None, float, int]], since: float | None, offset: float | None,
                spend: dict[int, list[Any]]) -> float:
    """The calls outside the main chain (sub-agents) and other models' iterations (n 0), into
    `spend`'s side figures by local day (those in the window); their whole cache cost. The main
    conversation's figures stay apart: they are what `backtest` prices and a restart replaces."""
    side = 0.0
    for ts, usd, n in costs:
        side += usd
        if ts is None or (since is not None and ts < since):
            continue
        sp = spend.get(day := local_day(ts, offset))
        if sp is None:
            spend[day] = [0, 0.0, n, usd]
        else:
            sp[2] += n
            sp[3] += usd
    return side


def _gap_buckets_of(returns: list[tuple[float, float, int, str | None, bool]]) -> dict[str, dict[int, Bucket]]:
    """Per TTL class, the gap buckets (`Bucket`) of the returns with a class."""
    gaps: dict[str, dict[int, Bucket]] = {cls: {} for cls in TTL_CLASSES}
    for gap, w, _cw, cls, cold in returns:
        if cls is None:
            continue
        bucket = gaps[cls]
        b = bucket.get(k := bisect_right(BUCKET_EDGES, gap))
        if b is None:
            bucket[k] = [[w], int(cold), gap, gap]
            continue
        b[0].append(w)
        b[1] += cold
        if gap < b[2]:
            b[2] = gap
        elif gap > b[3]:
            b[3] = gap
    return gaps


def _scatter_text(returns: list[tuple[float, float, int, str | None, bool]], sid: str) -> str:
    """The scatter items' compact JSON text, joined by "," (json.dumps's own text of each dict,
    written directly where the values allow)."""
    sid_json = dumps(sid)
    return ",".join(
        f'{{"gapSeconds":{gap!r},"tokensRecreated":{cw!r},"ttl":{_TTL_JSON[cls]},'
        f'"cold":{_BOOL_JSON[cold]},"sessionId":{sid_json}}}'
        if gap.__class__ is float and gap < _INF and cw.__class__ is int else
        dumps({"gapSeconds": gap, "tokensRecreated": cw, "ttl": cls, "cold": cold, "sessionId": sid})
        for gap, _w, cw, cls, cold in returns)


def _session_entry(s: Session, w: Walk, side: float, unpriced: int) -> dict[str, Any]:
    """A session's entry in the report (its causes and sentence once every session's part is in)."""
    biggest = None
    if w.largest is not None:
        largest, gap, index, cold = w.largest
        biggest = {
            "seconds": gap,
            "tokensRecreated": largest.cw,
            "usd": write_usd(largest.model, largest.cw5m, largest.cw1h),
            "cold": cold,
            "callIndex": index,
        }
    pairs = len(s.calls) > 1
    models = sorted({c.model for c in s.calls if c.model})
    return {
        "sessionId": s.session_id,
        "project": s.project,
        "calls": len(s.calls),
        "apiCalls": s.api_calls,
        "warmth": (w.pair_cr / (w.pair_cr + w.pair_cw) if w.pair_cr + w.pair_cw else None) if pairs else None,
        "coldStarts": len(w.colds),
        "causes": None,
        "largestGap": biggest,
        "sentence": None,  # once the causes are known (`report_of_parts`)
        "tokens": s.totals,
        "models": sorted({*models, *s.totals.get("otherModels", ())}),
        "lastActivity": s.last_ts,
        "firstActivity": s.calls[0].ts if s.calls else None,
        "cwd": s.cwd,
        "model": main_model(s.calls, models),
        "projectName": project_name(s.cwd, s.project),
        "cacheUsd": w.spent if unpriced < len(s.calls) + len(s.costs) else None,
        "unpricedCalls": unpriced,
        "subagentCalls": s.api_calls - len(s.calls),
        "subagentUsd": side,
        **(_fork_fields(s.inherited, s.forked_from) if s.inherited else {}),
    }


def _fork_fields(inherited: dict[str, str], last: str | None) -> dict[str, Any]:
    """A fork's entry's own keys: how many of its parent's calls it holds (counted there, not here)
    and the session it was forked from: the one that made the last of them in its main chain (`last`;
    `status`, `replay` and `backtest` name the same: a branch of a fork names the fork, not the
    grandparent whose calls it copied first), else the last copy's maker anywhere in its files."""
    return {"inheritedCalls": len(inherited), "forkedFrom": last or list(inherited.values())[-1]}


_ENTRY_KEYS = (*_BEFORE_CAUSES, "causes", *_BEFORE_SENTENCE, "sentence", *_AFTER_SENTENCE)
_CAUSES_AT = ',"causes":null,"largestGap":'
_SENTENCE_AT = ',"sentence":null,"tokens":'


def _entry_text(entry: dict[str, Any]) -> tuple[str, str, str]:
    """The entry's JSON text before its causes, between them and its sentence, and after: where its
    keys are those, in that order (a fork's come after `agent` in the text, not in the entry), one
    text cut at the two nulls (a `,"` is never inside a JSON string: its quotes are escaped), else
    three."""
    if entry["causes"] is None and entry["sentence"] is None and tuple(entry) == _ENTRY_KEYS:
        text = dumps(entry)
        at = text.find(_CAUSES_AT)
        to = text.find(_SENTENCE_AT, at)
        if at > 0 and to > 0:
            return (text[:at] + ',"causes":', text[at + 14:to] + ',"sentence":', "," + text[to + 17:])
    head = dumps({k: entry[k] for k in _BEFORE_CAUSES})[:-1] + ',"causes":'
    mid = "," + dumps({k: entry[k] for k in _BEFORE_SENTENCE})[1:-1] + ',"sentence":'
    tail = "," + dumps({k: entry[k] for k in (*_AFTER_SENTENCE, *_FORK_KEYS) if k in entry})[1:]
    return head, mid, tail


_CAUSE_AT = {c: k for k, c in enumerate(CAUSES)}


def cause_counts(colds: list[Obs]) -> list[int]:
    """How many of a session's cold starts each cause names, in CAUSES' order."""
    counts = [0] * len(CAUSES)
    for o in colds:
        counts[_CAUSE_AT[o.cause or "unexplained"]] += 1
    return counts


_CAUSES_JSON: dict[tuple[int, ...], str] = {}


def causes_json(counts: list[int]) -> str:
    """json.dumps of the causes dict `cause_counts` stands for (most sessions share a few)."""
    key = tuple(counts)
    text = _CAUSES_JSON.get(key)
    if text is None:
        if len(_CAUSES_JSON) >= 4096:
            _CAUSES_JSON.clear()
        text = _CAUSES_JSON[key] = "{" + ",".join(f'"{c}":{n}' for c, n in zip(CAUSES, counts, strict=True)) + "}"
    return text


def largest_sentence(entry: dict[str, Any], colds: list[Obs]) -> tuple[str, str | None]:
    """The largest gap in words, and the cause of the cold start after it (None: warm, or no gap)."""
    gap = entry["largestGap"]
    if gap is None or entry["calls"] < 2:
        return gap_sentence(None), None
    cause = next((o.cause for o in colds if o.index == gap["callIndex"]), None) if gap["cold"] else None
    return gap_sentence(gap, cause), cause


def _entry(entry: dict[str, Any], causes: dict[str, int], sentence: str, cause: str | None) -> dict[str, Any]:
    """A session's entry whole, its keys in the text path's order."""
    out: dict[str, Any] = {}
    for k, v in entry.items():
        out[k] = causes if k == "causes" else sentence if k == "sentence" else v
        if k == "sentence":
            out["largestGapCause"] = cause
    return out


def _add(into: dict[Any, list[Any]], key: Any, sessions: int, figures: tuple[int, int, int, int]) -> None:
    """Add a session count and (main calls, their USD, sub-agent calls, theirs; USD as `exact`) to `into[key]`."""
    t = into.get(key)
    if t is None:
        into[key] = [sessions, *figures]
        return
    t[0] += sessions
    t[1] += figures[0]
    t[2] += figures[1]
    t[3] += figures[2]
    t[4] += figures[3]


_EXACT_BITS = 1074  # 2**-1074, the least float: every float is a whole multiple of it


def exact(x: float) -> int:
    """`x` as a whole number of 2**-1074: sums of them are exact, in any order, and a part can be
    taken out again (`reports.merge`)."""
    n, d = x.as_integer_ratio()
    return n << (_EXACT_BITS + 1 - d.bit_length())


def inexact(n: int) -> float:
    """The float nearest a sum of `exact`s (int true division rounds correctly)."""
    return n / (1 << _EXACT_BITS)


def totals(kept: list[Part], days: dict[int, list[int]], utc_offset: float | None) -> dict[str, list[dict[str, Any]]]:
    """Sessions, API calls and cache cost by local day, by week (from Monday), by project (the
    last folder of the sessions' working folder; one project per folder) and by agent (claude-code,
    codex), calls in the window only. The USD sums exact (`exact`): the same float whatever order
    the sessions come in.
    A day's and a week's warmth are their cache reads over reads and writes (calls 2..n, as `days`)."""

    by_day: dict[int, list[Any]] = {}
    by_week: dict[int, list[Any]] = {}
    by_project: dict[str, list[Any]] = {}
    by_agent: dict[str, list[Any]] = {}
    named: dict[str, tuple[str, str | None, float | None]] = {}
    week_of: dict[int, int] = {}
    for p in kept:
        e = p.entry
        agent = e.get("agent") or FALLBACK.name
        _add(by_agent, agent, 1, (0, 0, 0, 0))
        where = e["cwd"] or e["project"]
        last = named.get(where, (None, None, None))[2]
        activity = e["lastActivity"] if last is None or (e["lastActivity"] or 0) > last else last
        named[where] = (e["projectName"], e["cwd"], activity)
        _add(by_project, where, 1, (0, 0, 0, 0))
        weeks: dict[int, list[Any]] = {}
        for day, (n, usd, side_n, side_usd) in p.spend.items():
            figures = (n, exact(usd), side_n, exact(side_usd))
            _add(by_day, day, 1, figures)
            _add(by_project, where, 0, figures)
            _add(by_agent, agent, 0, figures)
            week = week_of.get(day)
            if week is None:  # once a day, not once a session and day
                week = week_of[day] = monday(day, utc_offset)
            _add(weeks, week, 0, figures)
        for week, (_s, *figures_w) in weeks.items():
            _add(by_week, week, 1, tuple(figures_w))

    def warmth(lo: int, hi: int) -> float | None:
        cr = sum(v[0] for d, v in days.items() if lo <= d < hi)
        cw = sum(v[1] for d, v in days.items() if lo <= d < hi)
        return cr / (cr + cw) if cr + cw else None

    return totals_doc(by_day, by_week, by_project, by_agent, named, warmth, utc_offset)


def totals_doc(by_day: dict[int, list[Any]], by_week: dict[int, list[Any]], by_project: dict[str, list[Any]],  # noqa: PLR0913, PLR0917
               by_agent: dict[str, list[Any]], named: dict[str, tuple[str, str | None, float | None]],
               warmth: Callable[[int, int], float | None], utc_offset: float | None) -> dict[str, list[dict[str, Any]]]:
    """The totals from their sums per key ([sessions, calls, USD as `exact`, sub-agent calls, their USD])."""

    def date(day: int) -> str:
        return day_date(day, utc_offset)

    return {
        "days": [{"date": date(d), "sessions": v[0], "calls": v[1], "cacheUsd": inexact(v[2]),
                  "warmth": warmth(d, d + 1), "subagentCalls": v[3], "subagentUsd": inexact(v[4])}
                 for d, v in sorted(by_day.items())],
        "weeks": [{"week": date(w), "sessions": v[0], "calls": v[1], "cacheUsd": inexact(v[2]),
                   "warmth": warmth(w, days_later(w, 7, utc_offset)), "subagentCalls": v[3],
                   "subagentUsd": inexact(v[4])}
                  for w, v in sorted(by_week.items())],
        "projects": [{"project": named[k][0], "cwd": named[k][1], "sessions": v[0], "calls": v[1],
                      "cacheUsd": inexact(v[2]), "lastActivity": named[k][2], "subagentCalls": v[3],
                      "subagentUsd": inexact(v[4])}
                     for k, v in sorted(by_project.items(), key=lambda kv: (-inexact(kv[1][2]), kv[0]))],
        "agents": [{"agent": k, "sessions": v[0], "calls": v[1], "cacheUsd": inexact(v[2]), "subagentCalls": v[3],
                    "subagentUsd": inexact(v[4])} for k, v in sorted(by_agent.items())],
    }


def report_of_parts(parts: Iterable[Part | None], now: float, utc_offset: float | None, since: float | None,
                    warnings: Iterable[dict[str, Any]], *, scatter_text: bool) -> dict[str, Any]:
    """The document from each session's `Part` (None: a session left out), in session order; the
    parts' scatter and entry are text too (then the document's scatter and sessions are `JSONText`)
    when `scatter_text`."""
    kept = [p for p in parts if p is not None]
    gaps: dict[str, dict[int, Bucket]] = {cls: {} for cls in TTL_CLASSES}
    colds: list[Obs] = []  # every cold start, window or not (each session names its causes)
    own: list[list[Obs]] = []
    days: dict[int, list[int]] = {}
    calls: dict[str, list[GuardCall]] = {}
    for p in kept:
        sid = p.entry["sessionId"]
        mine = [Obs(sid, *o) for o in p.colds]
        own.append(mine)
        colds += mine
        for cls in TTL_CLASSES:
            merge_buckets(gaps[cls], p.gaps[cls])
        for day, (cr, cw) in p.days.items():
            d = days.get(day)
            if d is None:
                days[day] = [cr, cw]
            else:
                d[0] += cr
                d[1] += cw
        if p.calls is not None:
            calls[sid] = p.calls

    buckets: list[dict[str, Any]] = []
    ttl: dict[str, dict[str, Any] | None] = {}
    documented: dict[str, dict[str, Any]] = {}
    seen = {o.ttl_class for o in colds}
    classes = [cls for cls in TTL_CLASSES if cls in CLAUDE_CLASSES or gaps[cls] or cls in seen]
    for cls in classes:
        b = gap_buckets(gaps[cls], cls)
        buckets.extend(b)
        ttl[cls] = infer_ttl(gaps[cls], b, cls)
        documented[cls] = {"seconds": DOCUMENTED_TTL[cls], **tested_at_documented(gaps[cls], b, cls)}
    from session_watcher.core.eoq import cache_lifetime  # the guard's own rule (imported here, once)

    cliff = {cls: (v["inferredSeconds"] if v is not None else None) for cls, v in ttl.items()}
    lifetime = {cls: cache_lifetime(cls, cliff) or float(DOCUMENTED_TTL[cls]) for cls in classes}
    assign_causes(colds, lifetime)

    causes = dict.fromkeys(CAUSES, 0)
    cold_list = [o for o in colds if o.in_window]
    for co in cold_list:
        causes[co.cause or "unexplained"] += 1
    n_cold = len(cold_list)
    shares = {k: (v / n_cold if n_cold else None) for k, v in causes.items()}

    order = sorted(range(len(kept)), key=lambda i: float(kept[i].entry["lastActivity"] or 0.0), reverse=True)
    counted = [cause_counts(mine) for mine in own]
    said = [largest_sentence(p.entry, mine) for p, mine in zip(kept, own, strict=True)]
    sessions: Any
    if scatter_text:
        sessions = JSONText("[" + ",".join(f"{kept[i].text[0]}{causes_json(counted[i])}{kept[i].text[1]}"  # type: ignore[index]
                                           f'{dumps(said[i][0])},"largestGapCause":{dumps(said[i][1])}'
                                           f"{kept[i].text[2]}"  # type: ignore[index]
                                           for i in order) + "]")
        scatter: Any = JSONText("[" + ",".join(p.scatter for p in kept if p.scatter) + "]")
    else:
        sessions = [_entry(kept[i].entry, dict(zip(CAUSES, counted[i], strict=True)), *said[i]) for i in order]
        scatter = [item for p in kept for item in p.scatter]
    doc = {
        "schema": 1,
        "generatedAt": now,
        "since": since,
        "sessions": sessions,
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
            cls: {"seconds": lifetime[cls], "from": "inferred" if ttl[cls] is not None else "ttl"}
            for cls in classes
        },
        "gapBuckets": buckets,
        "ttl": ttl,
        "warmthToday": None,
        "warmthWeek": None,
        "guard": summarize_guard(warnings, calls, since),
        "documentedTtl": documented,
        "totals": totals(kept, days, utc_offset),
        "days": [[d, cr, cw] for d, (cr, cw) in sorted(days.items())],
        "scatter": scatter,
    }
    return apply_now(doc, now, utc_offset)
