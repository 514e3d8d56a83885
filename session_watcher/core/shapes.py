"""The shapes of the session state, its parts and the transcript events, for the type checker only.

The state is plain JSON (dicts, lists, numbers) so it saves and loads with `fastjson` as it is; these
TypedDicts and tuple aliases describe it. Import this module only under `if TYPE_CHECKING:` (it
imports `typing`, which the hook cannot afford); at run time nothing here exists.

A change to the on-disk shape bumps `fresh.SCHEMA` and adds a step to `state.migrate.migrate`.
(No `from __future__ import annotations` here: TypedDict needs the annotations evaluated to tell
required keys from `NotRequired` ones, which tests/test_shapes.py checks against the constructors.)
"""

from typing import Any, Literal, NotRequired, TypedDict

Lamp = Literal["white", "green", "amber", "red"]
Stream = Literal["main", "sub"]  # the token meter's streams: the main chain, subagents
BucketField = Literal["uncachedInput", "cacheRead", "cacheWrite", "output", "cacheWrite5m", "cacheWrite1h"]

# ----------------------------------------------------------------------------- events (core.transcript)

# ("call", key, ts, model, sidechain, input, cache read, cache write, output, 5-minute writes, 1-hour writes,
#  iteration detail)
CallEvent = tuple[Literal["call"], str, float | None, str | None, bool, int, int, int, int, int, int,
                  "Detail | None"]
# ("use", ts, tool_use_id, name, what the fold keeps of the input)
UseEvent = tuple[Literal["use"], float | None, str, str, "UseInfo | None"]
# ("result", ts, tool_use_id, is_error, the Read payload)
ResultEvent = tuple[Literal["result"], float | None, str, bool, "ReadFile | None"]
# ("compact", ts, trigger, tokens before)
CompactEvent = tuple[Literal["compact"], float | None, str | None, int]
# ("parent", ts, the session a handoff note came from)
ParentEvent = tuple[Literal["parent"], float | None, str]
# ("autocompact", ts, reserve): the agent's client compacts on its own at its window less `reserve`
AutocompactEvent = tuple[Literal["autocompact"], float | None, int]
# ("inherited", ts, the session that made it): the next call is a fork's copy of another session's
InheritedEvent = tuple[Literal["inherited"], float | None, str]
Event = CallEvent | UseEvent | ResultEvent | CompactEvent | ParentEvent | AutocompactEvent | InheritedEvent

# (input, cache read, cache write, output, 5-minute writes, 1-hour writes) of one usage object
Sample = tuple[int, int, int, int, int, int]
# one of `usage.iterations`: (its type, its model, its sample), as a parser read it
Iteration = tuple[str | None, str | None, Sample]
# a call's iterations when they list several (core.transcript.iteration_detail): (the context: the
# last `message` iteration's sample, the others: (model, None for the call's own, sample) each)
Detail = tuple[Sample, tuple[tuple[str | None, Sample], ...]]


class UseInfo(TypedDict, total=False):
    """A file tool's input as the fold keeps it: the path and the sizes of what it wrote."""

    path: str
    more: list[str]  # a shell command's other files printed (agents.codex.rollout): health's reads only
    new: int  # characters written
    old: int  # characters replaced
    write: bool  # Write: the file's whole new content
    offset: int  # Read's offset / limit
    limit: int


class ReadFile(TypedDict):
    """The Read tool's result: the path, the first line's number and the text."""

    path: str
    start: int
    content: str


# One main-chain API call as `fold`'s call hook sees it ("in" is a keyword: the functional form)
# (its context: the last `message` iteration's when its usage lists several; `iter`: the other
# iterations then, [model or None for the call's own, cr, cw5m, cw1h] each, for the backtest's cost)
CallUsage = TypedDict("CallUsage", {
    "ts": float | None, "model": str | None, "in": int, "cr": int, "cw": int, "cw5m": int, "cw1h": int, "out": int,
    "iter": NotRequired[list[list[Any]]],
})

# ----------------------------------------------------------------------------- the state's parts

# [path, open tokens, calls seen, chars behind the estimate, original tokens]; a list once loaded
LedgerEntry = tuple[str, int, int, int, int]
# tool_use_id -> (name, input info) of a tool use waiting for its result
PendingUse = tuple[str, "UseInfo | None"]
# call key -> (stream, *sample): the last sample of a recent call
RecentSample = tuple[str, int, int, int, int, int, int]  # stream: "main", "sub" or meter.OTHER + a model


class Cal(TypedDict):
    """Evidence for the chars-per-token ratio: what settled ledger entries carried."""

    chars: float
    tokens: float


class Bucket(TypedDict):
    """A token meter stream's totals."""

    uncachedInput: int
    output: int
    cacheRead: int
    cacheWrite: int
    cacheWrite5m: int
    cacheWrite1h: int
    calls: int


class Meter(TypedDict):
    main: Bucket
    sub: Bucket
    recent: dict[str, RecentSample]
    other: NotRequired[dict[str, Bucket]]  # by model: server-side iterations run by another model


class PathEntry(TypedDict):
    """One file of the path map (core.paths): the parts of its token estimate."""

    lines: int
    ranges: list[list[int]]  # merged [start, end) line ranges read
    overhead: int
    pendingEdit: int
    calibration: int
    tokens: int
    reason: str | None  # the default discard reason ("outside-project", "gitignore") or None
    include: bool
    reads: int
    edited: bool


class Health(TypedDict):
    """Context health's counters (core.health)."""

    prompt: int | None
    compactions: int
    reads: int
    rereads: int
    head: list[int]  # the first half of the tool calls: [calls, errors, productive]
    tail: str | bytearray  # the second half, one character per tool call (bytes in a fold)


class Tally(TypedDict):
    """What a session did, counted from its first call (engine.new_tally); it only grows."""

    firstTs: float | None
    gate: int
    backstop: int
    guard: int
    cold: int
    coldTokens: int
    coldUsd: float
    coldUnpriced: int
    warmRead: int
    warmWrite: int
    inherited: NotRequired[int]  # a fork's copies of its parent's calls: folded, counted in the parent only
    inheritedTo: NotRequired[int]  # the number of the last of them (their alerts are the parent's)
    forkedFrom: NotRequired[str]  # the session that made the last of them: the one forked from
    inheritedUsage: NotRequired[Bucket]  # their tokens (the main stream's before the fork's first own call)


class Engine(TypedDict):
    """The fold's own figures (core.engine)."""

    segment: int
    segCalls: int
    calls: int
    compactions: int
    expectBoundary: bool
    floor: int | None
    L: int | None
    lastTs: float | None
    ttl: str | None
    shared: int | None
    lamp: Lamp | None
    gN: int
    bFull: int
    bIncl: int
    ledger: list[LedgerEntry]
    residual: int | None
    level: float | None
    trend: float
    rent: float
    billProgress: float
    bills: int
    billsTotal: int
    lastBill: NotRequired[int]  # segCalls when this segment's latest bill cycle completed (0: none yet)
    dwell: int
    dwellBills: int
    fired: bool  # the segment's gate was given (at most one per segment; reminders are the repeat)
    sinceAlert: int  # bill cycles in deep water since the gate or the last reminder
    reminders: int  # reminders given in this segment (their back-off and cap count them)
    gateSaving: NotRequired[float | None]  # the gate's priced saving (read units): the cap's reference
    segUnits: NotRequired[float]  # the segment's cache cost so far, in read units (the advice floor's share)
    compactAt: NotRequired[int]  # tokens before the session's last automatic compaction (the advice's horizon)
    burstUntil: NotRequired[int]  # segCalls until which the segment's burst alone holds the advice back
    cal: Cal
    globs: str | None  # a digest of the (include, exclude) the inclusion was decided with (core.paths.globs_key)
    tally: Tally


class Tools(TypedDict):
    pending: dict[str, PendingUse]
    done: dict[str, int]  # tool_use_ids already counted (values 1), oldest first


class Context(TypedDict):
    """What the hooks, the status line and the transcript say about the session."""

    model: str | None
    window: int | None
    pressure: int | None
    project: str | None
    cwd: str | None
    peak: NotRequired[int]
    modelId: NotRequired[str | None]
    modelName: NotRequired[str | None]
    promptCache: NotRequired[dict[str, object] | None]  # the status line's `prompt_cache`
    resume: NotRequired[dict[str, object] | None]  # what SessionStart said of the cache on a resume
    plan: NotRequired[dict[str, Any] | None]  # a subscriber's plan use, as the status line saw it (core.status)
    agent: NotRequired[str]  # the agent whose log the state follows (state.session, from the registry)
    compactReserve: NotRequired[int]  # where its client compacts: the window less this (an autocompact event)


class ContextSeen(TypedDict, total=False):
    """Some of a Context's keys: what a status line payload said (merged into the state's context)."""

    model: str | None
    window: int | None
    pressure: int | None
    project: str | None
    cwd: str | None
    peak: int
    modelId: str | None
    modelName: str | None
    promptCache: dict[str, object] | None
    resume: dict[str, object] | None
    plan: dict[str, Any] | None
    agent: str  # (never said by a status line: the keys mirror Context's for `update`)
    compactReserve: int  # (never said by a status line either)


class Alert(TypedDict):
    """A gate, backstop or guard alert (engine.alert_of); guard alerts add what a cold return costs."""

    kind: str
    call: int
    sessionId: str
    lamp: str
    x: float | None
    xSweet: float | None
    br: float | None
    B: int | None
    bDefault: int | None
    L: int | None
    bills: int
    backstopN: int | None
    reminder: int
    model: str | None
    project: str | None
    ts: float | None
    system: int | None
    files: int
    cRatio: float
    cEff: float | None
    K: float | None
    ttl: str | None
    saving: float | None
    savingUsd: float | None
    cycle: float | None  # the calls `saving` is counted over: the optimal cycle, or up to the compaction
    untilCompaction: bool  # `cycle` stops at the session's automatic compaction (it comes first)
    gap: NotRequired[float]
    rewrite: NotRequired[int]
    rewriteUsd: NotRequired[float | None]
    freshUsd: NotRequired[float | None]
    pending: NotRequired[bool]  # set by the shells: fired where it could not be delivered yet
    shownBy: NotRequired[str]  # "prompt": the prompt hook already warned of this cold return
    shown: NotRequired[int]  # set on delivery (notifier.throttle): the episode's alerts shown before it


class GuardMarks(TypedDict, total=False):
    """The cold-cache guard's marks (hooks): the gap warned of, and the prompt blocked in it."""

    shown: list[Any]  # [last call's time, the call that ends the gap]
    blocked: list[Any]  # the same and the prompt's key
    # the handoff a hold prepared, while pending (eoq.prepared): K, carryTokens, carryUsd, createdAt,
    # until (stale after), and the lastTs and segment it was made in
    carry: dict[str, Any]


# ----------------------------------------------------------------------------- the config (session_watcher.base.config)


class NotifyConfig(TypedDict):
    """`[notify]`: how alerts reach the user (notifier, notifier.throttle)."""

    channels: list[Literal["desktop", "terminal", "message"]]
    fallback: Literal["desktop", "terminal", "message", "none"]
    remind_min: float  # minutes between two alerts of a segment; 0: no limit


class OtlpConfig(TypedDict):
    """`[otlp]`: the OpenTelemetry export (docs/otlp.md); "" / empty: from OTEL_* or Claude Code's settings."""

    enabled: bool | Literal["auto"]  # "auto": when Claude Code's own telemetry is on
    endpoint: str
    protocol: Literal["", "http/protobuf", "http/json"]
    headers: dict[str, str]
    interval: float  # seconds between exports while a session is live
    timeout: float  # seconds one request may take
    resource_attributes: dict[str, str | int | float | bool]
    project: bool  # name the project (its folder's name) in the figures
    events: bool  # send the advice events too


# the TTL cliffs `report` inferred ({"5m": s, "1h": s}, None where the evidence was too thin) and the
# returns each rests on ({class: [returns below, cold of them, returns above, cold of them]})
# the inferred cliff per cache class: Claude Code's "5m" and "1h", an OpenAI model's codex-30m and
# codex-10m (core.prices_openai.CLASSES) where `report` found one
Cliff = TypedDict("Cliff", {"5m": float | None, "1h": float | None, "codex-30m": NotRequired[float | None],
                            "codex-10m": NotRequired[float | None], "evidence": NotRequired[dict[str, list[int]]]})


class ModelParams(TypedDict):
    """What the core reads of the config: the model's parameters, which are also exactly what a
    project's file may set (config.PROJECT_KEYS), and the cliff. config.model_params builds it."""

    include: list[str]  # globs of paths a restart carries although the work did not read them
    exclude: list[str]  # globs of paths it never carries
    cRatio: float | None  # cache write / cache read price; None: from the model and the TTL class
    bp_amber: float  # the gate: deep water from this bill progress on (docs/model.md)
    bp_red: float
    notify_dwell: int  # calls in deep water before the gate alerts
    bill_lookback: int  # calls before the dwell in which a completed bill cycle still counts
    backstop_base: float
    guard_x: float  # a cold return advises a restart from this x on
    gate_min_calls: int  # calls of a segment (a fresh session's) before its gate may speak
    remind_backoff: float  # each ignored reminder multiplies the next one's interval by this
    remind_cap: int  # reminders per segment before only a doubled saving brings another
    advice_min_usd: float  # no gate or reminder whose saving over its horizon is under this many dollars
    advice_min_share: float  # ... or under this share of the segment's cache cost so far
    compact_reserve: int | None  # the window less this is where the agent compacts, until the session shows it
    compact_payback: float  # no advice while the automatic compaction is within this many restart paybacks
    cliff: NotRequired[Cliff]  # read from `<state dir>/cliff.json` by the loader; none in `merge()` alone


class Config(ModelParams):
    """The effective config, settled once: the defaults with the user's file, then the project's, on
    top, every value checked (config.load, config.merge, config.load_cached). Keys as in the TOML:
    the model's parameters, and the user's own keys below."""

    notify: NotifyConfig
    guard: Literal["ask", "warn", "off"]  # the cold-cache guard on each prompt ("block" is read as "ask")
    handoff_stale_min: float  # minutes a pending handoff waits for a fresh session
    prices: dict[str, dict[str, float]]  # the user's prices by model id, USD/MTok (core.prices.use)
    otlp: OtlpConfig


class ConfigCache(TypedDict, total=False):
    """The config as a session's state keeps it (`state["config"]`, config.load_cached): the stamps
    of what it was read from, the values, the model's parameters out of them, and the error of a file
    left out (logged once)."""

    stamp: list[Any]  # [[file, mtime_ns, size], ...]: the config files, the cliff file, base/config.py
    values: Config
    params: ModelParams  # config.model_params(values): a fold's, without the key table
    error: str | None


class State(TypedDict):
    """A session's state file (state.store), schema `engine.SCHEMA`."""

    schema: int
    sessionId: str
    cursor: dict[str, Any] | None  # state.reader's cursor of the main transcript
    subCursors: dict[str, dict[str, Any] | None]
    meter: Meter
    engine: Engine
    paths: dict[str, PathEntry]
    reasons: dict[str, str | None]
    readPaths: dict[str, int]
    health: Health
    alerts: list[Alert]
    tools: Tools
    context: Context
    config: ConfigCache  # the effective config and the stamps of its files (config.load_cached)
    bad: int
    rev: int
    shards: dict[str, int]  # path-map shard number -> revision (state.pathstore)
    guard: NotRequired[GuardMarks]
    notified: NotRequired[dict[str, Any]]  # when the user was last notified (notifier.throttle)
    outbox: NotRequired[list[dict[str, Any]]]  # hook output an async hook left for the next synchronous one
    # after a rebuild (state.session.rebuild): [kind, call, ts] of the alerts dealt with before it
    seen: NotRequired[list[list[Any]]]
    parentSession: NotRequired[str]  # the session whose handoff note this one started with (core.handoff)
    # SESSION_WATCHER_TRACE only: while a fold from the start takes several runs, the calls already traced
    # and a cursor at the transcript's line end when it started again (state.reader.line_end): past it,
    # every call is new
    traced: NotRequired[int]
    tracedTo: NotRequired[dict[str, Any]]


class Quantities(TypedDict):
    """Every figure of the cost model for a state (eoq.quantities); None where not valid yet."""

    L: int | None
    cRatio: float
    cEff: float | None
    K: float | None
    shared: int
    g: float
    bFull: int | None
    bDefault: int | None
    x: float | None
    dhat: float | None
    xSweet: float | None
    mf: float | None
    br: float | None
    burnRate: float | None
    wallP: float | None
    lamp: Lamp
    backstopN: int | None
    saving: float | None
    horizon: float | None  # the calls `saving` is counted over: the optimal cycle, or up to the compaction
    untilCompaction: bool  # the horizon stops at the session's automatic compaction (it comes first)
