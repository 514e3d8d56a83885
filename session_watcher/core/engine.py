"""The fold: events -> session state. Pure.

`fold(state, events, ...)` applies transcript events (core.transcript) and hook events in order,
mutating the plain-dict state in place and returning the alerts that fired; it gates on the cost
model's figures (`core.eoq.quantities`). No I/O, no clock, no globals: the shell canonicalizes paths
and classifies them (git, project root) before calling.
"""

from __future__ import annotations

from session_watcher.core import eoq, health, meter, prices
from session_watcher.core import paths as pathmap
from session_watcher.core.eoq import bill_counted, cache_edge, cache_lifetime, quantities, reminder_interval

# a new state's parts (apart: reading a saved state does not import the fold), named here too
from session_watcher.core.fresh import SCHEMA as SCHEMA  # noqa: PLC0414 (the same names: re-exported)
from session_watcher.core.fresh import new_engine as new_engine  # noqa: PLC0414
from session_watcher.core.fresh import new_state as new_state  # noqa: PLC0414
from session_watcher.core.fresh import new_tally as new_tally  # noqa: PLC0414

TYPE_CHECKING = False  # typing is slow to import; this module is on the hot path
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

    from session_watcher.core.shapes import (
        Alert,
        Bucket,
        CallEvent,
        CallUsage,
        Engine,
        Event,
        LedgerEntry,
        ModelParams,
        PathEntry,
        Quantities,
        ReadFile,
        ResultEvent,
        State,
        UseInfo,
    )

    Globs = tuple[list[str], list[str]]  # (include, exclude) of the config
    # (state, alerts fired by this call, the call's own usage and time) after each main-chain call
    CallHook = Callable[[State, list[Alert], CallUsage], None]
    # the shell's answers for the paths of a batch: raw -> canonical path, canonical -> discard reason
    Resolved = tuple[Mapping[str, str], Mapping[str, str | None]]

LEDGER_CALLS = 3  # a ledger entry still open after this many API calls is written off
# tool results remembered so an id counts once (no real session repeats one: 292 of them, 242 MB); read
# and rewritten with the state by every hook run
DONE_MAX = 128
PENDING_MAX = 256  # tool uses waiting for their result
ALERTS_MAX = 20


# ----------------------------------------------------------------------------- segments

def new_segment(state: State) -> None:
    """After a compaction or /clear: floor, path map, ledger, dwell and bill progress start over;
    the growth smoother keeps its level (the work's pace did not change)."""
    e = state["engine"]
    e["segment"] += 1
    e["segCalls"] = 0
    e["floor"] = None
    e["L"] = None
    e["bFull"] = e["bIncl"] = 0
    e["ledger"] = []
    e["residual"] = None
    e["rent"] = e["billProgress"] = 0.0
    e["bills"] = e["lastBill"] = 0
    e["dwell"] = e["dwellBills"] = e["sinceAlert"] = e["reminders"] = 0
    e["fired"] = False
    e["gateSaving"] = None
    e.pop("burstUntil", None)
    e["segUnits"] = 0.0
    e["lamp"] = None
    state["paths"] = {}


def on_compaction(state: State, from_hook: bool, trigger: str | None = None, before: int = 0) -> None:
    """A compaction seen in the transcript (compact_boundary) or announced by a hook.

    Both sources report the same compaction; whichever comes first starts the segment and the
    other is absorbed: a boundary after a hook's announcement clears `expectBoundary`, and an
    announcement with no call since the boundary changes nothing. An automatic one's tokens before
    (`before`, the boundary's) are where this session compacts (`compactAt`, the advice's horizon).
    """
    e = state["engine"]
    if trigger == "auto" and before > 0:
        e["compactAt"] = before
    if from_hook:
        if e["segCalls"] == 0 and e["segment"] > 0:
            return
        e["expectBoundary"] = True
    elif e["expectBoundary"]:
        e["expectBoundary"] = False
        return
    e["compactions"] += 1
    health.on_compaction(state["health"])
    new_segment(state)


# ----------------------------------------------------------------------------- path map

def _set_path_tokens(state: State, entry: PathEntry) -> int:
    """Recompute an entry's total and keep the B sums in step; returns the change."""
    e = state["engine"]
    new = pathmap.total(entry)
    delta = new - entry["tokens"]
    entry["tokens"] = new
    e["bFull"] += delta
    if entry["include"]:
        e["bIncl"] += delta
    return delta


def apply_globs(state: State, cfg: ModelParams) -> None:
    """Re-decide inclusion for every path when the include/exclude globs changed (the state keeps
    their digest, `core.paths.globs_key`)."""
    e = state["engine"]
    include, exclude = cfg["include"], cfg["exclude"]
    key = pathmap.globs_key(include, exclude)
    if e["globs"] == key:
        return
    e["globs"] = key
    root = state["context"]["project"]
    e["bIncl"] = 0
    for path, entry in state["paths"].items():
        entry["include"] = pathmap.included(path, entry["reason"], root, include, exclude)
        if entry["include"]:
            e["bIncl"] += entry["tokens"]


def _path_entry(state: State, path: str, reason: str | None, globs: Globs) -> PathEntry:
    """The path map's entry for `path`, new (inclusion decided) on its first use."""
    entry = state["paths"].get(path)
    if entry is None:
        entry = pathmap.new_entry(reason)
        entry["include"] = pathmap.included(path, reason, state["context"]["project"], *globs)
        state["paths"][path] = entry
    return entry


def _read(entry: PathEntry, file: ReadFile | None, cpt: float) -> int:
    """A Read: its lines not counted before join the estimate. Returns the characters added."""
    entry["reads"] += 1
    if file is None:
        return 0
    if entry["edited"]:  # a Read after edits recounts the file
        entry["lines"], entry["ranges"], entry["pendingEdit"], entry["edited"] = 0, [], 0, False
    chars = pathmap.add_lines(entry, int(file["start"]), str(file["content"]))
    entry["lines"] += round(chars / cpt)
    return chars


def _edit(entry: PathEntry, info: UseInfo | None, cpt: float) -> int:
    """An edit or write: its size joins the pending-edit estimate. Returns the characters added."""
    if info is None:
        return 0
    new_chars, old_chars = int(info.get("new", 0)), int(info.get("old", 0))
    if info.get("write"):
        entry["pendingEdit"] = round(new_chars / cpt) - int(entry["lines"])
    else:
        entry["pendingEdit"] += round((new_chars - old_chars) / cpt)
    entry["edited"] = True
    return max(0, new_chars - old_chars)


def _file_op(state: State, path: str, entry: PathEntry, chars: int) -> None:
    """A file tool call's framing joins the path's estimate; what it added waits in the ledger."""
    entry["overhead"] += pathmap.TOOL_OVERHEAD
    delta = _set_path_tokens(state, entry)
    if delta > 0:
        state["engine"]["ledger"].append((path, delta, 0, chars, delta))


def on_tool_result(state: State, result: ResultEvent, paths: Resolved, use: tuple[str, UseInfo | None] | None = None,
                   globs: Globs = ([], [])) -> None:
    """A finished tool call, from the transcript or a hook payload (`use`: the tool's name and input
    when the payload says them); each id counts once. `paths`: the shell's answers for its path;
    `globs`: the config's (include, exclude), which `apply_globs` applied."""
    _, _, tool_id, is_error, file = result
    tools = state["tools"]
    done = tools["done"]  # insertion-ordered: the oldest id goes first
    if tool_id in done:
        return
    done[tool_id] = 1
    while len(done) > DONE_MAX:
        del done[next(iter(done))]
    pending = tools["pending"].pop(tool_id, None)
    name, info = use if use is not None else (None, None)
    if name is None and pending is not None:
        name = pending[0]
        info = info if info is not None else pending[1]
    if name is None:
        name = "Read" if file is not None else "unknown"
    raw = (file["path"] if file is not None else None) or (info.get("path") if info else None)
    canon, reasons = paths
    path = canon.get(raw, raw) if isinstance(raw, str) else None
    reread = _reads(state, path, info, canon) if name in health.READS and path else False
    health.on_tool(state["health"], name, reread, is_error)
    if path and not is_error and name in ("Read", "Edit", "MultiEdit", "Write", "NotebookEdit"):
        entry = _path_entry(state, path, reasons.get(path), globs)
        cpt = pathmap.chars_per_token(state["engine"]["cal"])
        chars = _read(entry, file, cpt) if name == "Read" else _edit(entry, info, cpt)
        _file_op(state, path, entry, chars)


def _reads(state: State, path: str, info: UseInfo | None, canon: Mapping[str, str]) -> bool:
    """A read's paths joined to those read before: whether its own was (a shell command's other
    files, `info["more"]`, go to health here: they never enter the path map)."""
    seen = state["readPaths"]
    reread = path in seen
    seen.setdefault(path, 1)
    for raw in (info.get("more") or ()) if info else ():
        other = canon.get(raw, raw)
        health.on_read(state["health"], other in seen)
        seen.setdefault(other, 1)
    return reread


def on_tool_use(state: State, tool_id: str, name: str, info: UseInfo | None) -> None:
    pending = state["tools"]["pending"]
    if tool_id in state["tools"]["done"]:
        return
    pending[tool_id] = (name, info)
    while len(pending) > PENDING_MAX:
        del pending[next(iter(pending))]


# ----------------------------------------------------------------------------- API calls

def _settle(state: State, d_l: int) -> int:
    """Retire ledger entries oldest first against the L growth; write off stale ones. Residual.

    An entry is [path, open tokens, calls seen, chars behind the estimate, original tokens]. What
    settles is evidence for the chars-per-token ratio; what is written off after LEDGER_CALLS calls
    becomes the path's calibration correction (the file cost less than estimated).
    """
    e = state["engine"]
    left = max(0, d_l)
    cal = e["cal"]
    kept: list[LedgerEntry] = []
    for path, was_open, was_age, chars, original in e["ledger"]:
        take = min(was_open, left)
        left -= take
        open_tokens = was_open - take
        age = was_age + 1
        if open_tokens > 0 and age < LEDGER_CALLS:
            kept.append((path, open_tokens, age, chars, original))
            continue
        if open_tokens > 0:
            entry = state["paths"].get(path)
            if entry is not None:
                entry["calibration"] += open_tokens
                _set_path_tokens(state, entry)
        if chars > 0:
            cal["chars"] += chars
            cal["tokens"] += original - open_tokens
    e["ledger"] = kept
    return left


def on_call(state: State, cfg: ModelParams, call: CallEvent, priced: list[Quantities | None] | None = None,
            inherited: str | None = None) -> list[Alert]:
    """A new main-chain API call: cold return, L, floor, ledger, growth, bills, dwell and the gate.
    `priced`: the quantities the call was priced by are appended to it (None: a call not priced),
    the state's own after the call (`lamp` holds what they said): a trace reads them, not again.
    They are `eoq.figures`', the advice's horizon filled in only where the gate or a reminder weighs
    the saving, as without a trace: neither the page's story nor the closed loop reads it.
    `inherited`: the session that made the call when it is a fork's copy of it (the context is the
    fork's all the same), left out of the tally, which counts what this session did: counted once,
    in the parent's; the tally names the last copy's maker (`forkedFrom`: the session it was forked
    from, whose own calls are the last it copied)."""
    t = state["engine"]["tally"]
    if not inherited:
        if t.get("inherited") and state["engine"]["calls"] == t.get("inheritedTo"):  # a fork's first own call:
            t["inheritedUsage"] = _before(state["meter"]["main"], call)  # the tokens before it are its copies'
        return _on_call(state, cfg, call, priced)
    kept = t.copy()
    alerts = _on_call(state, cfg, call, priced)
    t.update(kept)
    t["inherited"] = kept.get("inherited", 0) + 1
    t["inheritedTo"] = state["engine"]["calls"]
    t["forkedFrom"] = inherited
    return alerts


def _before(main: Bucket, call: CallEvent) -> Bucket:
    """The main stream's totals before `call`, its first sample just added (`meter.add_sample`)."""
    inp, cr, cw, out, cw5m, cw1h = call[5:11]
    return {"uncachedInput": main["uncachedInput"] - inp, "output": main["output"] - out,
            "cacheRead": main["cacheRead"] - cr, "cacheWrite": main["cacheWrite"] - cw,
            "cacheWrite5m": main["cacheWrite5m"] - cw5m, "cacheWrite1h": main["cacheWrite1h"] - cw1h,
            "calls": main["calls"] - 1}


def _on_call(state: State, cfg: ModelParams, call: CallEvent, priced: list[Quantities | None] | None,
             ) -> list[Alert]:
    _, _, ts, model, _, inp, cr, cw, _, cw5m, cw1h, detail = call
    written = (cw, cw5m, cw1h)
    if detail is not None:  # the call's context: its last `message` iteration (SPEC, "Inputs")
        inp, cr, cw = detail[0][0], detail[0][1], detail[0][2]
        written = (cw, detail[0][4], detail[0][5])
    e = state["engine"]
    ctx = state["context"]
    if not eoq.real_request(inp + cr + cw):  # numbered and in the totals, nothing more (eoq.real_request)
        _tally_call(e, ts, cr, cw)
        e["calls"] += 1
        if priced is not None:
            priced.append(None)
        return []
    alerts = _cold_return(state, cfg, ts, model, written, cr)
    _tally_call(e, ts, cr, cw)
    e["calls"] += 1
    e["segCalls"] += 1
    if ts is not None:
        e["lastTs"] = ts
    if cw1h > 0:
        e["ttl"] = "1h"
    elif cw5m > 0:
        e["ttl"] = "5m"
    if model:
        ctx["model"] = model
    stock = inp + cr + cw
    ctx["pressure"] = stock
    ctx["peak"] = max(ctx.get("peak") or 0, stock)
    health.on_call(state["health"], stock)
    if e["floor"] is None:
        # what a restart's first call carries: the whole first prompt, read and written parts alike
        e["floor"] = stock
        if e["shared"] is None and e["segment"] == 0:  # the session's first real request
            e["shared"] = cr  # the prefix earlier sessions left cached (unknown mid-session: 0)
        e["L"] = cr
        e["residual"] = None
    else:
        prev = e["L"] or 0
        # a miss, partial ones included: the read fell short of the last context by more than noise
        big_l = cr + cw if _missed(prev, cr) else cr
        ref = e["floor"] if e["segCalls"] == 2 else prev  # reaching the floor is not growth
        residual = _settle(state, big_l - ref)
        e["L"] = big_l
        e["residual"] = residual
        e["level"], e["trend"] = eoq.holt(e["level"], e["trend"], float(residual), e["gN"])
        e["gN"] += 1
    q = eoq.figures(state, cfg)  # the horizon only where the gate asks (`_bills_and_gate`)
    if priced is not None:  # the figures a trace and the closed loop read: no horizon (as the gate's, if it asks)
        priced.append(q)
    return alerts + _bills_and_gate(state, cfg, q, _units(model, cr, written))


def _tally_call(e: Engine, ts: float | None, cr: int, cw: int) -> None:
    """A main-chain call joins the tally (before it is counted): the session's first time, and the
    reads and writes of every call after the first (warmth is undefined for a session's first)."""
    t = e["tally"]
    if t["firstTs"] is None and ts is not None:
        t["firstTs"] = ts
    if e["calls"] > t.get("inherited", 0):  # a fork's first own call is its first
        t["warmRead"] += cr
        t["warmWrite"] += cw


def _expired(e: Engine, cfg: ModelParams, ts: float | None, model: str | None) -> tuple[float, bool] | None:
    """(the idle gap, cold for sure) before a call at `ts` when the cache expired during it (the
    segment's last call, of `model`, wrote at a TTL class shorter than the gap), else None. Sure:
    past the edge (`eoq.cache_edge`), where the guard holds a prompt; short of it the cache only may
    have expired, and the guard warns without a hold."""
    if ts is None or e["lastTs"] is None or not e["segCalls"]:
        return None
    life = cache_lifetime(e["ttl"], cfg.get("cliff"), model)
    gap = ts - e["lastTs"]
    return None if life is None or gap <= life else (gap, gap > cache_edge(life))


def _missed(prev: float, cr: int) -> bool:
    """A cache miss, partial ones included: the read fell short of the last context by more than
    noise (max(1,000 tokens, 2 %); SPEC "Per API call")."""
    return cr < prev - max(1000.0, 0.02 * prev)


def _advised(state: State, cfg: ModelParams) -> Quantities | None:
    """The state's figures when a cold return now is advice to restart (x >= guard_x), else None."""
    q = quantities(state, cfg)
    return q if q["x"] is not None and q["x"] >= cfg["guard_x"] else None


def cold_return_due(state: State, cfg: ModelParams, ts: float | None) -> Quantities | None:
    """The figures of the state when a call at time `ts` would be a cold return the advice speaks
    of (the cache expired for sure since the segment's last call, past the edge where the guard
    holds the prompt, and x >= guard_x), else None. Judged on the state before the call, as
    `_cold_return` judges it; the backtest's closed loop asks it too, to restart before that call
    (short of the edge the guard only warns, and the prompt goes). Changes nothing."""
    gap = _expired(state["engine"], cfg, ts, state["context"]["model"])
    return None if gap is None or not gap[1] else _advised(state, cfg)


def _cold_return(state: State, cfg: ModelParams, ts: float | None, call_model: str | None,
                 written: tuple[int, int, int], cr: int) -> list[Alert]:
    """The advice's second trigger, judged before the call that follows an idle gap: the cache
    expired meanwhile, so this call re-writes all of L, while a fresh session would write only
    what it carries. Recorded on that call (the advice was to restart before it) when the cache
    was cold for sure (past the edge: short of it the guard only says it may have expired) and
    the call did find it cold (a miss, `cr` its read: a request the transcript logs no usage of,
    one the user interrupted, may have kept it warm, and then nothing was re-written). Every call
    after a gap past the lifetime joins the tally with what it re-wrote (`written`: its context's
    cache writes, all, 5-minute and 1-hour), advised or not."""
    cw, cw5m, cw1h = written
    e = state["engine"]
    expired = _expired(e, cfg, ts, state["context"]["model"])
    if expired is None:
        return []
    gap, sure = expired
    t = e["tally"]
    t["cold"] += 1
    t["coldTokens"] += cw
    usd = prices.write_usd(call_model or state["context"]["model"], cw5m, cw1h)
    if usd is None:
        t["coldUnpriced"] += 1
    else:
        t["coldUsd"] += usd
    q = _advised(state, cfg) if sure and _missed(e["L"] or 0, cr) else None
    if q is None:
        return []
    t["guard"] += 1
    alert = cold_alert(state, q, gap, ts)
    state["alerts"].append(alert)
    return [alert]


def cold_alert(state: State, q: Quantities, gap: float, ts: float | None) -> Alert:
    """The `guard` alert of a cold return before the state's next call (`_cold_return`'s, and what
    a prompt with `guard = "off"` says of it: hooks.prompt.unguarded): what that call re-writes,
    what a fresh start costs, what restarting saves."""
    e = state["engine"]
    alert = alert_of(state, q, "guard", e["calls"] + 1)
    model, k = state["context"]["model"], q["K"] or 0.0
    big_l = eoq.cold_context(state, q["L"] or 0)  # the last call's whole context is re-written
    # the one figure (the guard's, the status line's): at the model's K, as the fold has no handoff
    saving, saving_usd = eoq.restart_saving(state, q, cold=True)
    one_hour = e["ttl"] == "1h"
    alert.update({
        "gap": gap, "ts": ts, "rewrite": big_l, "saving": saving, "savingUsd": saving_usd,
        "rewriteUsd": prices.write_usd(model, 0 if one_hour else big_l, big_l if one_hour else 0),
        "freshUsd": prices.read_usd(model, k),
    })
    return alert


def _units(model: str | None, cr: int, written: tuple[int, int, int]) -> float:
    """The call's cache cost in its model's read units: its read, and its writes at their class's
    price (a write without the 5-minute / 1-hour split counts as 5-minute)."""
    cw, cw5m, cw1h = written
    if cw5m + cw1h == 0:
        cw5m = cw
    return cr + cw5m * prices.c_ratio(model, "5m") + cw1h * prices.c_ratio(model, "1h")


def worth_saying(state: State, q: Quantities, cfg: ModelParams) -> bool:
    """An advice's priced saving over its horizon (`saving`, one optimal cycle) is worth a person's
    attention: at least `advice_min_usd` dollars (a model with no price: not judged so) and at least
    `advice_min_share` of what the segment's cache cost so far. Below it the lamp may be amber, but
    nothing is sent. `q`: the call's figures (`eoq.figures`), the horizon filled in here."""
    return above_floor(state, eoq.with_horizon(state, cfg, q)["saving"], cfg) and payback_holds(state, q, cfg)


def above_floor(state: State, saving: float | None, cfg: ModelParams) -> bool:
    """A restart saving (read-price tokens) is over the advice floor: at least `advice_min_usd`
    dollars (a model with no price: not judged so) and `advice_min_share` of the segment's cache
    cost so far (`worth_saying`'s, and a queued alert's when shown: hooks.outbox)."""
    if saving is None or saving <= 0:
        return False
    usd = prices.read_usd(state["context"]["model"], saving)
    if usd is not None and usd < cfg["advice_min_usd"]:
        return False
    return not saving < cfg["advice_min_share"] * state["engine"].get("segUnits", 0.0)


def payback_holds(state: State, q: Quantities, cfg: ModelParams) -> bool:
    """The automatic compaction is not within `compact_payback` times the calls a restart needs to pay
    back its carry, K / (L - B) (`eoq.compaction_hold`). Where only the segment's burst puts it that
    near, the advice is held for as many calls as the burst said it was away (`burstUntil`), and
    speaks after if the compaction has not come (a new segment starts the hold again). A saved
    `burstUntil` that is not a finite number (a damaged state file) counts as no hold begun."""
    e, ctx = state["engine"], state["context"]
    base = q["bDefault"] or q["bFull"] or 0
    big_l, k = q["L"] or 0, q["K"]
    if k is None or big_l <= base or e["floor"] is None:
        return True
    point, _window = eoq.session_point(state, cfg)
    pressure = float(ctx.get("pressure") or 0)
    mean = (pressure - e["floor"]) / max(1, e["segCalls"] - 1)
    hold = eoq.compaction_hold(point, pressure, q["g"], mean, cfg["compact_payback"] * k / (big_l - base))
    if hold is None:
        return True
    until = e.get("burstUntil")
    if not eoq.is_number(until):  # none begun (an older version's state), or a damaged file's: begun now
        until = None
    if hold == 0 or until is None:
        if hold and until is None:
            e["burstUntil"] = e["segCalls"] + hold
        return False
    return e["segCalls"] >= until


def reminder_due(state: State, q: Quantities, cfg: ModelParams) -> bool:
    """A reminder after the gate: `remind_backoff` ** (reminders so far) times the backstop interval
    of bill cycles in deep water since the last advice (each ignored reminder widens the next gap);
    past `remind_cap` reminders in the segment, only when the saving has doubled again (twice the
    gate's after the cap, four times after the next, ...). `q` as `worth_saying`'s."""
    e = state["engine"]
    interval = reminder_interval(e, q["backstopN"], cfg)
    if interval is None or e["sinceAlert"] < interval:
        return False
    over = e["reminders"] - int(cfg["remind_cap"]) + 1
    if over <= 0:
        return True
    at_gate = e.get("gateSaving")
    saving = eoq.with_horizon(state, cfg, q)["saving"]
    return at_gate is not None and saving is not None and saving >= at_gate * 2 ** over


def _bills_and_gate(state: State, cfg: ModelParams, q: Quantities, units: float) -> list[Alert]:
    """The call's bills, dwell, gate and reminders, by `q`: its figures (`eoq.figures`; the horizon
    filled in only where the gate or a reminder weighs the saving)."""
    e = state["engine"]
    rent = q["burnRate"] or 0.0
    e["billProgress"], done = eoq.bill_step(e["billProgress"], e["rent"], rent)
    e["rent"] = rent
    e["bills"] += done
    e["billsTotal"] += done
    e["segUnits"] = e.get("segUnits", 0.0) + units
    if done:
        e["lastBill"] = e["segCalls"]
    e["lamp"] = q["lamp"]
    # deep water is the lamp's amber/red: the same hysteresis keeps an episode from flickering
    deep = q["lamp"] in ("amber", "red")
    alerts: list[Alert] = []
    if not deep:  # the gate stays given (one per segment), its reminders' count and back-off too
        e["dwell"] = e["dwellBills"] = 0
        return alerts
    e["dwell"] += 1
    e["dwellBills"] += done
    if q["x"] is None or q["xSweet"] is None or q["x"] < q["xSweet"]:
        return alerts  # the lamp's hold on the left arm is no advice: nothing is said there
    if not e["fired"]:
        if (e["dwell"] >= cfg["notify_dwell"] and bill_counted(e, cfg) and e["segCalls"] >= cfg["gate_min_calls"]
                and worth_saying(state, q, cfg)):
            e["fired"] = True
            e["sinceAlert"] = 0
            e["gateSaving"] = q["saving"]
            e["tally"]["gate"] += 1
            alerts.append(alert_of(state, q, "gate", e["calls"]))
    else:
        e["sinceAlert"] += done
        if reminder_due(state, q, cfg) and worth_saying(state, q, cfg):
            e["sinceAlert"] = 0
            e["reminders"] += 1
            e["tally"]["backstop"] += 1
            alerts.append(alert_of(state, q, "backstop", e["calls"]))
    state["alerts"].extend(alerts)
    if len(state["alerts"]) > ALERTS_MAX:
        del state["alerts"][: len(state["alerts"]) - ALERTS_MAX]
    return alerts


def alert_of(state: State, q: Quantities, kind: str, call: int) -> Alert:
    """An alert with what the user can act on: what a restart carries (system and files), what it
    costs (K) and what restarting now saves over the next cycle, in tokens and dollars (an alert
    queued for the next prompt is priced again by it when shown: hooks.outbox)."""
    e = state["engine"]
    model = state["context"]["model"]
    base = q["bDefault"] or q["bFull"] or 0
    saving, saving_usd = eoq.restart_saving(state, q)  # the status line's figure (warm: a call just came)
    return {
        "kind": kind, "call": call, "sessionId": state["sessionId"], "lamp": q["lamp"],
        "x": q["x"], "xSweet": q["xSweet"], "br": q["br"], "B": q["bFull"], "bDefault": q["bDefault"],
        "L": q["L"], "bills": e["dwellBills"], "backstopN": q["backstopN"],
        "reminder": e["reminders"], "model": model,
        "project": state["context"]["project"], "ts": e["lastTs"],
        "system": e["floor"], "files": max(0, base - (e["floor"] or 0)), "cRatio": q["cRatio"],
        "cEff": q["cEff"], "K": q["K"], "ttl": e["ttl"],
        "saving": saving, "savingUsd": saving_usd,
        # the calls the saving is counted over: the optimal cycle, or up to the automatic compaction
        "cycle": q["horizon"], "untilCompaction": q["untilCompaction"],
    }


# ----------------------------------------------------------------------------- the fold

def _call_usage(ev: CallEvent) -> CallUsage:
    """The call's own usage as the trace shows it: its context when its iterations list several
    (`iter` then holds the others), else the usage as it is."""
    _, _key, ts, model, _side, inp, cr, cw, out, cw5, cw1, detail = ev
    if detail is None:
        return {"ts": ts, "model": model, "in": inp, "cr": cr, "cw": cw, "cw5m": cw5, "cw1h": cw1, "out": out}
    (inp, cr, cw, _out, cw5, cw1), others = detail
    return {"ts": ts, "model": model, "in": inp, "cr": cr, "cw": cw, "cw5m": cw5, "cw1h": cw1, "out": out,
            "iter": [[other, s[1], s[4], s[5]] for other, s in others]}


def fold(state: State, events: Iterable[Event], cfg: ModelParams, paths: Resolved = ({}, {}), *,
         sidechain_file: bool = False, call_hook: CallHook | None = None) -> list[Alert]:
    """Apply events in order; return the alerts that fired. `paths`: the shell's answers for the
    paths the events name (`Resolved`). `sidechain_file`: a subagent transcript, whose calls count
    toward token totals only. `call_hook` sees the state after each new main-chain API call
    (replay's trace is built from it); a hook with a list as `priced` is given each such call's
    quantities there (`on_call`)."""
    apply_globs(state, cfg)
    health.open_tail(state["health"])
    try:
        return _fold(state, events, cfg, paths, sidechain_file, call_hook)
    finally:
        health.close_tail(state["health"])


def _fold(state: State, events: Iterable[Event], cfg: ModelParams, paths: Resolved, sidechain_file: bool,
          call_hook: CallHook | None) -> list[Alert]:
    globs: Globs = (cfg["include"], cfg["exclude"])
    alerts: list[Alert] = []
    m = state["meter"]
    priced: list[Quantities | None] | None = getattr(call_hook, "priced", None)
    inherited: str | None = None  # the next call is a fork's copy of this session's (an "inherited" event before it)
    for ev in events:
        if ev[0] == "call":
            key, detail = ev[1], ev[11]
            side = ev[4] or sidechain_file
            is_new = meter.add_sample(m, "sub" if side else "main", key, ev[5:11])  # in, cr, cw, out, cw5m, cw1h
            if detail is not None:
                for n, (other, sample) in enumerate(detail[1]):
                    if other is not None:  # another model's iteration: its tokens under that model
                        meter.add_sample(m, meter.OTHER + other, f"{key}#{n}", sample)
            copied, inherited = inherited, None
            if is_new and not side:
                fired = on_call(state, cfg, ev, priced, copied)
                alerts.extend(fired)
                if call_hook is not None:
                    call_hook(state, fired, _call_usage(ev))
        elif ev[0] == "inherited":
            inherited = ev[2]
        elif sidechain_file:
            continue
        elif ev[0] == "autocompact":  # before every call that names the client's version
            state["context"]["compactReserve"] = ev[2]
        elif ev[0] == "use":
            on_tool_use(state, ev[2], ev[3], ev[4])
        elif ev[0] == "result":
            on_tool_result(state, ev, paths, globs=globs)
        elif ev[0] == "compact":
            on_compaction(state, False, ev[2], ev[3])
        elif ev[0] == "parent" and not state.get("parentSession"):
            state["parentSession"] = ev[2]  # the session this one was handed off from (core.handoff)
    return alerts
