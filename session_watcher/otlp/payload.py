"""The metrics and events, as OTLP/JSON documents (ExportMetricsServiceRequest, ExportLogsServiceRequest
in the protobuf JSON mapping the OTLP spec uses). Pure: status documents and attributes in, plain
dicts out; `wire` sends them as JSON or, through the official `opentelemetry-proto` messages, as
protobuf.

Every value is the status document's (`status --json`), so what a collector receives equals what
the user sees. Gauges say where a session stands now; the counters are cumulative sums recomputed
from the session's tally, each with the session's first call as its fixed start time: a lost export
is made good by the next one, a repeated one says the same again, nothing is counted twice. Names
are under `session_watcher.*` and the attributes are Claude Code's own (`session.id`, `user.id`,
`model`, the user's `OTEL_RESOURCE_ATTRIBUTES`), so a collector or a query joins the two on
`session.id`. No prompt, file content or path is in any of them; the project's folder name only
when the user opts in (`[otlp] project = true`).
"""

from __future__ import annotations

import math
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any

    Attrs = Mapping[str, Any]

SCOPE = "session_watcher"
EVENT_BODY = "session_watcher.advice"
LAMPS = ("white", "green", "amber", "red")
CUMULATIVE = 2  # AggregationTemporality.CUMULATIVE
SEVERITY_INFO = 9
ADVICE_KINDS = {"gate": "gate", "backstop": "reminder", "guard": "cold_return"}  # alert kind -> attribute


class Metric:
    """One metric of the catalogue: its OTel name, unit, kind ("gauge" or "counter": a monotonic
    cumulative sum) and description."""

    __slots__ = ("description", "kind", "name", "unit")

    def __init__(self, name: str, unit: str, kind: str, description: str) -> None:
        self.name, self.unit, self.kind, self.description = name, unit, kind, description


LAMP = Metric("session_watcher.lamp", "", "gauge",
              "The session's lamp: 1 for its colour now (attribute state: white, green, amber, red), 0 for the others")
X = Metric("session_watcher.x", "1", "gauge", "x = L / B: the context over what a restart would carry")
X_SWEET = Metric("session_watcher.x_sweet", "1", "gauge", "xSweet: the x at which restarting is cheapest")
CONTEXT = Metric("session_watcher.context.tokens", "{token}", "gauge", "L: the context the last call read")
BASELINE = Metric("session_watcher.baseline.tokens", "{token}", "gauge",
                  "B (bDefault): what a restart would carry, system prompt and files")
SAVING = Metric("session_watcher.restart.saving", "USD", "gauge",
                "What restarting now saves over the next cycle (negative: restarting now costs more)")
WARMTH = Metric("session_watcher.warmth", "1", "gauge",
                "Cache reads / (reads + writes) of the session's calls after its first")
LIFETIME = Metric("session_watcher.cache.lifetime", "s", "gauge",
                  "How long a cache write stays warm, per TTL class (attribute source: inferred from your own "
                  "gaps by `report`, or the class's TTL)")
ADVICE = Metric("session_watcher.advice", "{advice}", "counter",
                "Advice given to restart (attribute kind: gate, reminder, cold_return)")
COLD = Metric("session_watcher.cold_returns", "{return}", "counter",
              "Calls after a gap longer than the cache's lifetime (the cache had expired)")
COLD_TOKENS = Metric("session_watcher.cold_return.tokens", "{token}", "counter",
                     "What the cold returns wrote to the cache again")
COLD_COST = Metric("session_watcher.cold_return.cost", "USD", "counter", "What the cold returns' cache writes cost")
CALLS = Metric("session_watcher.calls", "{call}", "counter", "Main-chain API calls")
CACHE = Metric("session_watcher.cache.tokens", "{token}", "counter",
               "Cache reads and writes of the calls after the first (attribute type: read, write); their ratio "
               "is the warmth")
RESTARTS = Metric("session_watcher.restarts", "{restart}", "counter",
                  "Restarts taken with a handoff: 1 on the fresh session (attribute session.parent.id)")
REALIZED = Metric("session_watcher.restart.realized_saving", "USD", "gauge",
                  "What a restart taken saved against continuing the session it left (attribute kind: handoff, "
                  "idle_compaction; on the fresh session, or the session itself for an idle compaction); "
                  "priced by `export --otlp` as `backtest` prices it")
CATALOGUE: tuple[Metric, ...] = (LAMP, X, X_SWEET, CONTEXT, BASELINE, SAVING, WARMTH, LIFETIME, ADVICE, COLD,
                                 COLD_TOKENS, COLD_COST, CALLS, CACHE, RESTARTS, REALIZED)


def any_value(v: Any) -> dict[str, Any]:
    """An attribute value in OTLP/JSON (64-bit integers as strings, as the JSON mapping has them)."""
    if isinstance(v, bool):
        return {"boolValue": v}
    if isinstance(v, int):
        return {"intValue": str(v)}
    if isinstance(v, float):
        return {"doubleValue": v}
    return {"stringValue": str(v)}


def key_values(attrs: Attrs) -> list[dict[str, Any]]:
    """The attributes in OTLP/JSON, each but a None and a float no number holds (NaN, an infinity: a
    damaged state's alert): left out, so both encodings agree (OTLP/JSON had it null, and protobuf's
    `ParseDict` refused it, which stopped the logs' http/protobuf export)."""
    return [{"key": k, "value": any_value(v)} for k, v in attrs.items()
            if v is not None and not (type(v) is float and v - v != 0.0)]


def nanos(seconds: float) -> str:
    return str(round(seconds * 1e6) * 1000)  # microseconds: exact for the transcripts' milliseconds


def _number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


class Batch:
    """Data points gathered metric by metric, then made into one request."""

    def __init__(self) -> None:
        self.points: dict[str, list[dict[str, Any]]] = {}

    def add(self, metric: Metric, value: Any, attrs: Attrs, at: float, start: float | None = None) -> None:
        """One point; a value that is not a finite number (None: not valid yet) is left out, and so is
        a counter's point without a start time (no call yet: nothing counted)."""
        if not _number(value) or (metric.kind == "counter" and start is None):
            return
        point: dict[str, Any] = {"attributes": key_values(attrs), "timeUnixNano": nanos(at)}
        if metric.kind == "counter":
            assert start is not None
            point["startTimeUnixNano"] = nanos(min(start, at))
        if isinstance(value, int) and not isinstance(value, bool):
            point["asInt"] = str(value)
        else:
            point["asDouble"] = float(value)
        self.points.setdefault(metric.name, []).append(point)

    def request(self, resource: Attrs, version: str) -> dict[str, Any]:
        """The ExportMetricsServiceRequest (catalogue order; metrics without points left out)."""
        metrics = []
        for m in CATALOGUE:
            pts = self.points.get(m.name)
            if not pts:
                continue
            doc: dict[str, Any] = {"name": m.name, "description": m.description, "unit": m.unit}
            if m.kind == "gauge":
                doc["gauge"] = {"dataPoints": pts}
            else:
                doc["sum"] = {"dataPoints": pts, "aggregationTemporality": CUMULATIVE, "isMonotonic": True}
            metrics.append(doc)
        return {"resourceMetrics": [{
            "resource": {"attributes": key_values(resource)},
            "scopeMetrics": [{"scope": {"name": SCOPE, "version": version}, "metrics": metrics}],
        }]} if metrics else {"resourceMetrics": []}


# what of a status document the figures below read (`session_attributes`, `add_session`,
# `lifetime_classes`): all `export --otlp` keeps of a replay between runs (otlp.backfill)
DOC_KEYS = ("sessionId", "agent", "model", "parentSession", "lamp", "x", "xSweet", "L", "bDefault", "savingUsd",
            "warmth", "firstTs", "advice", "coldReturns", "calls", "warmthTokens", "inheritedCalls", "inheritedTo")


def session_attributes(doc: Mapping[str, Any], common: Attrs, project: str | None) -> dict[str, Any]:
    """A session's point attributes: Claude Code's (`session.id`, `model`, and `common`: `user.id`
    and the user's resource attributes, which Claude Code repeats on every point), the `agent`
    whose session it is (`claude-code`, `codex`: Codex's own telemetry joins on the same id), the project's
    folder name when opted in, and the session a handoff started it from."""
    out = {**common, "session.id": doc["sessionId"]}
    if doc.get("agent"):
        out["agent"] = doc["agent"]  # the agent whose log the session is (its state names it: state.session)
    if doc.get("model"):
        out["model"] = doc["model"]
    if project:
        out["project"] = project
    if doc.get("parentSession"):
        out["session.parent.id"] = doc["parentSession"]
    return out


def add_session(batch: Batch, doc: Mapping[str, Any], attrs: Attrs, at: float) -> None:
    """A session's gauges (now: `at`) and cumulative counters (from its first call), from its
    status document."""
    lamp = doc.get("lamp")
    if lamp in LAMPS:
        for state in LAMPS:
            batch.add(LAMP, int(state == lamp), {**attrs, "state": state}, at)
    batch.add(X, doc.get("x"), attrs, at)
    batch.add(X_SWEET, doc.get("xSweet"), attrs, at)
    batch.add(CONTEXT, doc.get("L"), attrs, at)
    batch.add(BASELINE, doc.get("bDefault"), attrs, at)
    batch.add(SAVING, doc.get("savingUsd"), attrs, at)
    batch.add(WARMTH, doc.get("warmth"), attrs, at)
    start = doc.get("firstTs")
    if not _number(start):
        return
    advice = doc.get("advice") or {}
    for kind in ("gate", "reminder", "coldReturn"):
        batch.add(ADVICE, advice.get(kind), {**attrs, "kind": "cold_return" if kind == "coldReturn" else kind},
                  at, start)
    cold = doc.get("coldReturns") or {}
    batch.add(COLD, cold.get("n"), attrs, at, start)
    batch.add(COLD_TOKENS, cold.get("tokens"), attrs, at, start)
    batch.add(COLD_COST, cold.get("usd"), attrs, at, start)
    calls = doc.get("calls")
    if _number(calls) and _number(doc.get("inheritedCalls")):  # a fork's copies: counted in the parent's
        calls = calls - doc["inheritedCalls"]
    batch.add(CALLS, calls, attrs, at, start)
    warm = doc.get("warmthTokens") or {}
    for kind in ("read", "write"):
        batch.add(CACHE, warm.get(kind), {**attrs, "type": kind}, at, start)
    if doc.get("parentSession"):
        batch.add(RESTARTS, 1, attrs, at, start)


def add_restart(batch: Batch, restart: Mapping[str, Any], attrs: Attrs, at: float) -> None:
    """A restart taken (core.restarts' document): its realized saving, on the session it started
    (`attrs`: that session's attributes)."""
    kind = "idle_compaction" if restart.get("kind") == "idleCompaction" else "handoff"
    batch.add(REALIZED, restart.get("savingUsd"),
              {**attrs, "kind": kind, "session.parent.id": restart.get("parent"), "call": restart.get("firstCall")},
              at)


TTL_SECONDS = {"5m": 300.0, "1h": 3600.0}


def lifetime_classes(docs: Iterable[Mapping[str, Any]], cliff: Mapping[str, Any] | None) -> list[str]:
    """The cache classes whose lifetime an export carries: Claude Code's TTL classes always, then the
    class of each OpenAI model among the sessions' (a Codex thread's cache, core.prices_openai), by
    the guard's own rule (core.eoq.cache_class: a model of OpenAI's `gpt-` line; a thread with no
    model yet, or another, is priced at Claude Code's), and any OpenAI class the user's cliff has."""
    from session_watcher.core.eoq import cache_class
    from session_watcher.core.prices_openai import CLASSES

    found = {cache_class("5m", m) for m in (d.get("model") for d in docs) if isinstance(m, str)}
    found |= {c for c in (cliff or {}) if c in CLASSES}
    return [*TTL_SECONDS, *sorted(c for c in found if c in CLASSES)]


def add_lifetimes(batch: Batch, cliff: Mapping[str, Any] | None, attrs: Attrs, at: float,
                  classes: Iterable[str] = tuple(TTL_SECONDS)) -> None:
    """The cache lifetime per class (`lifetime_classes`): the cliff `report` inferred from the user's
    own gaps, else the class's TTL, an OpenAI class's floor (core.eoq.cache_lifetime's rule)."""
    from session_watcher.core.prices_openai import CLASSES

    for ttl in classes:
        default = TTL_SECONDS.get(ttl) or CLASSES[ttl]
        known = (cliff or {}).get(ttl)
        inferred = isinstance(known, int | float) and _number(known) and known > 0
        batch.add(LIFETIME, float(known) if inferred and known is not None else default,
                  {**attrs, "ttl": ttl, "source": "inferred" if inferred else "ttl"}, at)


def own_alerts(doc: Mapping[str, Any], alerts: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The alerts of a session's own calls: a fork's fold fires again the advice its parent was given
    on the calls it copied (up to call `inheritedTo`), the parent's events, sent with the parent's."""
    upto = doc.get("inheritedTo")
    if not _number(upto):
        return list(alerts)
    return [a for a in alerts if not (isinstance(a.get("call"), int) and a["call"] <= upto)]


def alert_key(alert: Mapping[str, Any]) -> str:
    """An advice event's identity within its session: sent once, whatever the export's pace."""
    return f"{alert.get('kind')}:{alert.get('call')}"


def advice_record(alert: Mapping[str, Any], attrs: Attrs, observed: float) -> dict[str, Any] | None:
    """One advice (a gate, backstop or guard alert of the state) as a log record in Claude Code's
    event shape: the body names the event, `event.name` and `event.timestamp` say it again, and the
    attributes carry the figures the user was shown (no path: the alert's `project` stays home)."""
    kind = ADVICE_KINDS.get(str(alert.get("kind")))
    ts = alert.get("ts")
    if kind is None or not isinstance(ts, int | float) or not _number(ts) or not isinstance(alert.get("call"), int):
        return None
    figures = {
        "kind": kind, "call": alert["call"], "lamp": alert.get("lamp"), "x": alert.get("x"),
        "x_sweet": alert.get("xSweet"), "context.tokens": alert.get("L"), "baseline.tokens": alert.get("bDefault"),
        "saving_usd": alert.get("savingUsd"), "reminder": alert.get("reminder"), "gap_seconds": alert.get("gap"),
        "rewrite.tokens": alert.get("rewrite"), "rewrite_usd": alert.get("rewriteUsd"),
        "fresh_usd": alert.get("freshUsd"), "model": alert.get("model"),
    }
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ts)) + f".{int(ts * 1000) % 1000:03d}Z"
    extra = {"event.name": "advice", "event.timestamp": stamp}
    attributes = {**attrs, **extra, **{k: v for k, v in figures.items() if v is not None}}
    return {"timeUnixNano": nanos(ts), "observedTimeUnixNano": nanos(observed), "severityNumber": SEVERITY_INFO,
            "severityText": "INFO", "body": {"stringValue": EVENT_BODY}, "attributes": key_values(attributes)}


def logs_request(records: Iterable[dict[str, Any]], resource: Attrs, version: str) -> dict[str, Any]:
    recs = list(records)
    if not recs:
        return {"resourceLogs": []}
    return {"resourceLogs": [{
        "resource": {"attributes": key_values(resource)},
        "scopeLogs": [{"scope": {"name": SCOPE + ".events", "version": version}, "logRecords": recs}],
    }]}
