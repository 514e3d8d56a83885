"""The closed loop: a user who follows the advice, simulated with the hooks' own fold. Pure.

SPEC v3, "Backtest" (closed loop). A user who follows the advice restarts when told, keeps working
in the fresh session, where the watcher keeps watching, and restarts again when told. So after a
restart after call k the counterfactual session is folded by `core.engine` itself, from the same
transcript events: each later call of the segment with the usage `core.backtest.Segment` prices
for it (the context shifted down by D = T(k) - Bd(k), a miss's re-write shrinking first), call k+1
as a fresh session's first call (it reads the shared prefix and writes the rest), and a new segment
in the engine before it (floor, path map, ledger, dwell and bills start again; the growth estimate
keeps what it learned). Every later advice is followed the same way. A real automatic compaction
happens in the counterfactual only where its context reaches the client's point (`core.chains`: one
it does not reach is held back, the engine's segment runs on with the heavier calls, and it is
folded where the counterfactual reaches it); a manual one stays where it was.

`observe` folds the real session (the `Call`s the backtest prices); `follow` folds the
counterfactual one for a policy and returns where it restarted. The advice is followed right after
the call it came on (`alert`, the backtest's), or where a person can act on it, before the first call
after it that opens an agent turn (`alertAtPrompt`: the calls that do, by key, from the shell; docs/model.md
"The advice acted on at the turn's end"), or sent at the agent's next stop only if it still holds there
(`holds`) and acted on at the next prompt (`alertAtStop`, measured, not the hooks' delivery: "The advice
sent at the turn's end"). None reads a file: the shell
parses the transcript (the parser replay uses), resolves its paths, and passes a fresh state.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from session_watcher.core import engine
from session_watcher.core.backtest import Call, call_of, chains, segments
from session_watcher.core.chains import Auto, AutoWatch, Chain, Step
from session_watcher.core.eoq import quantities
from session_watcher.core.status import context_point

if TYPE_CHECKING:
    from collections.abc import Container, Iterable, Iterator, Sequence

    from session_watcher.core.engine import CallHook, Resolved
    from session_watcher.core.shapes import Alert, CallEvent, CallUsage, Event, ModelParams, Quantities, State

POLICIES = ("alert", "sweetSpot", "alertAtPrompt", "alertAtStop")
ADVICE = ("gate", "backstop")  # the alerts after whose call the `alert` policy restarts (a cold return: before)


class _Priced:
    """A `fold` call hook given the quantities each call was priced by (`engine.on_call`'s `priced`):
    `seen(state, cfg)` is the last call's, not computed again."""

    def __init__(self, cfg: ModelParams) -> None:
        self.cfg = cfg
        self.priced: list[Quantities | None] = []

    def seen(self, state: State) -> Quantities:
        q = self.priced.pop() if self.priced else None
        return quantities(state, self.cfg) if q is None else q  # None: a call not priced


def _call(state: State, q: Quantities, fired: list[Alert], usage: CallUsage) -> Call:
    """The backtest's view of the call just folded (`q`: its quantities): what its trace row says
    (`call_of`, as `call_from_trace` reads a row)."""
    e = state["engine"]
    return call_of(e["calls"], e["segment"], q["bDefault"], None, q["x"], q["xSweet"], q["g"], q["lamp"], fired, usage,
                   usage["ts"])


class Observed(NamedTuple):
    """The real session as the closed loop starts from it."""

    events: Sequence[Event]  # the transcript's, in order
    paths: Resolved  # the shell's answers for every path they name
    calls: list[Call]  # one per main-chain API call, as the real fold saw it
    shared: int  # the prefix a restart finds cached (cr of the session's first call)
    autos: dict[int, Auto] = {}  # noqa: RUF012 (never mutated) the automatic compactions, by the call after
    copied: int = 0  # a fork's: its first calls, to this one, copy its parent's (the engine's `inheritedTo`)

    def own(self) -> list[Call]:
        """The calls the session made itself: a fork's after its copies of its parent's (`copied`), which
        the backtest leaves to the parent, as the tally does (counted once, where they were made)."""
        return [c for c in self.calls if c.call > self.copied] if self.copied else self.calls


def observe(state: State, events: Sequence[Event], cfg: ModelParams, paths: Resolved) -> Observed:
    """Fold the real session into `state` (fresh); one `Call` per main-chain API call."""
    calls: list[Call] = []
    watch = AutoWatch()
    # what the client's point after the last call is priced from (`context_point`'s context): priced
    # only where a compaction follows the call (`AutoWatch` reads it there alone), as the page's trace does
    point_from: list[tuple[Any, Any, Any, Any]] = []

    class Hook(_Priced):
        def __call__(self, st: State, fired: list[Alert], usage: CallUsage) -> None:
            c = _call(st, self.seen(st), fired, usage)
            ctx = st["context"]  # `client_point`'s figures, as they are after the call
            point_from[:] = [(ctx.get("window"), ctx.get("model"), ctx.get("peak"), ctx.get("compactReserve"))]
            watch.call(c, None)
            calls.append(c)

    hook = Hook(cfg)

    def watched() -> Iterator[Event]:
        for ev in events:
            if ev[0] == "compact":
                if point_from:
                    window, model, peak, reserve = point_from.pop()
                    ctx = {"window": window, "model": model, "peak": peak, "compactReserve": reserve}
                    watch.point(context_point(ctx, cfg))  # type: ignore[arg-type]  # the context's keys it reads
                watch.compaction(ev[2], ev[3])
            yield ev

    engine.fold(state, watched(), cfg, paths, call_hook=hook)
    return Observed(events, paths, calls, state["engine"]["shared"] or 0, watch.autos,
                    state["engine"]["tally"].get("inheritedTo", 0))


def _with_usage(ev: CallEvent, inp: int, usage: tuple[int, int, int]) -> CallEvent:
    """The call event carrying another context (cache read, 5-minute and 1-hour writes). Its other
    iterations are left out: the fold reads the context only, and the backtest prices them itself."""
    cr, w5m, w1h = usage
    return ("call", ev[1], ev[2], ev[3], ev[4], inp, cr, w5m + w1h, ev[8], w5m, w1h, None)


class _Plan:
    """Where each call of the session sits: its chain and its index there."""

    def __init__(self, calls: Sequence[Call], shared: int, autos: dict[int, Auto]) -> None:
        self.where: list[tuple[Chain, int]] = []
        for ch in chains(segments(calls, shared), autos):
            self.where.extend((ch, i) for i in range(len(ch.calls)))

    def trail(self, j: int, restart: bool) -> Iterator[Step]:
        """The counterfactual from call j on: after a restart after call j - 1, else as it was (call
        j starts its chain)."""
        ch, i = self.where[j]
        return ch.trail(i - 1 if restart else -1)


def _event(ev: CallEvent, step: Step) -> CallEvent:
    """Call j's event in the counterfactual: the real one, or one carrying the step's usage."""
    if step.usage is None:
        return ev
    inp, cr, w5m, w1h = step.usage
    return _with_usage(ev, inp, (cr, w5m, w1h))


def _due(policy: str, due: bool, said: list[Alert], sweet: bool) -> bool:
    """Whether the user following `policy` is to restart after the call just folded (`said`: the
    alerts it fired; `due`: whether they were before it, and did not)."""
    if policy == "sweetSpot":
        return sweet
    # alertAtPrompt, alertAtStop: advice not yet acted on (or not yet sent) waits for the turn's end
    return (due and policy in ("alertAtPrompt", "alertAtStop")) or any(a.get("kind") in ADVICE for a in said)


def holds(state: State, cfg: ModelParams) -> bool:
    """Whether advice the fold gave earlier in the segment still holds on the state after its last
    call: the lamp still past the gate (amber or red, on the right arm) and the saving over its horizon
    above the floors (`engine.worth_saying`, judged on a copy: its compaction hold may begin a burst's
    wait, which this changes nothing of). A turn-end delivery sends the advice only then."""
    e = state["engine"]
    if not e["fired"]:
        return False
    q = quantities(state, cfg)
    if q["lamp"] not in ("amber", "red") or q["x"] is None or q["xSweet"] is None or q["x"] < q["xSweet"]:
        return False
    return engine.worth_saying({**state, "engine": {**e}}, q, cfg)


def _sent(policy: str, waiting: tuple[bool, bool], stopped: bool, state: State,
          cfg: ModelParams) -> tuple[bool, bool, bool]:
    """Before call j, the advice the user acts on at a prompt there, and what waits: (act, due, told).
    `waiting`: advice given and not yet sent, advice sent (alertAtStop); `stopped`: the agent stopped
    after call j - 1, where alertAtStop's Stop hook sends what waits if it still holds (`holds`)."""
    due, told = waiting
    if policy != "alertAtStop":
        return due, due, told
    if due and stopped:
        told, due = told or holds(state, cfg), False
    return told, due, told


def follow(state: State, seen: Observed, cfg: ModelParams, policy: str,
           turns: Container[str] = frozenset(), stops: Container[str] | None = None) -> list[int]:
    """The restarts (call numbers, 1-based) of a user who follows `policy` from the start of the
    session in `state` (fresh, as `observe` had it): "alert" restarts after every gate or reminder
    and before every cold return the watcher would show them; "sweetSpot" restarts whenever x reaches
    xSweet; "alertAtPrompt" follows the same advice where a person can act on it, when the agent has
    stopped and waits for a prompt: a gate or reminder after call k restarts before the first call
    after k that opens a turn (its key in `turns`: it answers the user's next prompt), none where the
    segment ends first; a cold return restarts before its call where that call opens a turn;
    "alertAtStop" sends that advice at the first stop of the agent after it (before a call whose key is
    in `stops`, `turns` when None: the Stop hook), only if it still holds there (`holds`; none where the
    segment ends first), and restarts before the first call at or after that stop that opens a turn.
    `seen`:
    the real session as `observe` saw it (the restarts' carry and the usage the counterfactual calls
    get come from its calls). A fork restarts after a call of its own only: its copies of its parent's
    calls (`seen.copied`) are history, and their advice was the parent's."""
    calls, paths = seen.calls, seen.paths
    plan = _Plan(calls, seen.shared, seen.autos)
    restarts: list[int] = []
    batch: list[Event] = []
    compacts: list[Event] = []  # the compactions since the last call, and the one held back
    held: list[Event] = []
    recent = state["meter"]["recent"]  # the meter's own test of a new call: a key it holds no sample of
    redone: dict[str, CallEvent] = {}  # a call's later samples carry what its first one did
    said: list[Alert] = []
    sweet = [False]

    def said_hook(st: State, fired: list[Alert], _usage: CallUsage) -> None:
        said.extend(fired)

    class SweetHook(_Priced):
        def __call__(self, st: State, fired: list[Alert], _usage: CallUsage) -> None:
            said.extend(fired)
            q = self.seen(st)
            sweet[0] = q["x"] is not None and q["xSweet"] is not None and q["x"] >= q["xSweet"]

    hook: CallHook = SweetHook(cfg) if policy == "sweetSpot" else said_hook

    def flush(first: Iterable[Event] = ()) -> None:
        """Fold the compactions `first` (they came before the events batched since), then the batch."""
        nonlocal batch
        todo = [*first, *batch]
        if todo:
            engine.fold(state, todo, cfg, paths)
            batch = []

    j = -1  # the last main-chain call folded, an index into `calls`
    trail: Iterator[Step] = iter(())
    due = False  # the advice after call j was to restart
    told = False  # alertAtStop: the advice was sent at a stop, the restart waits for the next prompt
    stop_at = turns if stops is None else stops
    for ev in seen.events:
        if ev[0] == "compact":
            flush()
            compacts.append(ev)
            continue
        if ev[0] != "call" or ev[4]:
            batch.append(ev)
            continue
        key = ev[1]
        # a later sample of a call folded already, in its place among the events: folded at once, the
        # batch before it would go before the compactions waiting, and a parse without the lines that
        # repeat a sample (replay's) would fold otherwise than one with them (the page's)
        if key in recent:
            batch.append(redone.get(key, ev))
            continue
        j += 1
        if j >= len(calls):  # not a call `observe` saw: cannot be (the same events, the same meter)
            break
        if j == 0 or plan.where[j][0] is not plan.where[j - 1][0]:  # a new chain: the real session again
            trail, due, told, held = plan.trail(j, False), False, False, []
        elif calls[j - 1].segment != calls[j].segment or calls[j - 1].call <= seen.copied:
            due = told = False  # no restart at a compaction, nor in a fork's copies (its parent's, as they were)
        else:  # the calls' own events first, then the advice after the last call
            flush()
            can = policy not in ("alertAtPrompt", "alertAtStop") or key in turns  # the user is at the prompt
            act, due, told = _sent(policy, (due, told), key in stop_at, state, cfg)
            cold = policy != "sweetSpot" and can and engine.cold_return_due(state, cfg, ev[2]) is not None
            if (act and can) or cold:
                restarts.append(calls[j - 1].call)
                trail, held, due, told = plan.trail(j, True), [], False, False
                engine.new_segment(state)  # a fresh session: the growth estimate keeps what it learned
        step = next(trail)
        if step.compact == "skipped":
            held, compacts = compacts, []
        elif step.compact == "moved":
            compacts, held = [*held, *compacts], []
        flush(compacts)
        compacts = []
        redone[key] = cf = _event(ev, step)
        said.clear()
        engine.fold(state, [cf], cfg, paths, call_hook=hook)
        due = _due(policy, due, said, sweet[0])
    flush(compacts)
    return restarts
