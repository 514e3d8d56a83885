"""The hook process: stdin JSON -> fold the session's new transcript lines -> save -> alerts.

Runs on every tool result and at the end of every turn, so it must never break or slow the agent:
it raises nothing to its entry point (`hooks.entry`, which logs and exits 0), gives up after
LOCK_TIMEOUT when another hook holds the session (the lines stay for the next run), stops folding at
its time budget, and logs what went wrong instead of raising.
Imports: the core, the session shell (state/shell.py: the lock, load, quarantine, rebuild and save,
shared with the status line and the CLI), the system calls through base/sysos (not `os`); nothing else
unless needed.

The transcript is the only source of the state: a hook is a signal to fold what is new, so the
client's event order (PostToolUse before the tool's own lines are written, Stop before the turn's
last call) cannot change what the state becomes. What differs from event to event is one table,
EVENTS (an event's row: its `Plan`), read by one flow (`hooks.entry.main` -> `run` -> `_locked` ->
`_deliver_and_save`); UserPromptSubmit's own steps (the look before the lock, the cold-cache
guard) are `hooks.prompt`'s, loaded by that event alone. Every event but UserPromptSubmit,
SessionEnd and the SessionStart inject is registered `"async": true` (the agent does not wait) and
prints nothing, because an async hook's
output goes to the model; its alerts go to the desktop, and the alert whose `message` and
`terminal` channels must be printed is queued in the state (`outbox`) for UserPromptSubmit, whose
output reaches the user only, and which prices and words it when it shows it (hooks.outbox; where
nobody would see it, under `codex exec` with a stderr no line can be added to, it stays queued for a
prompt that shows it). The async Stop hook first waits, bounded, for the
turn's last API call to be written; SessionEnd runs synchronously (print mode kills async hooks
at exit) and folds the rest, so a session's state is complete when the client exits.
"""

from __future__ import annotations

import time

from session_watcher.base import sysos

TYPE_CHECKING = False  # typing is slow to import; this module is on the hot path
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, Literal, TypedDict

    from session_watcher.core.shapes import Alert, Config, State
    from session_watcher.state.shell import Session

    class Plan(TypedDict):
        """What the hook does for one event: a row of EVENTS."""

        sync: bool  # registered synchronous (session_watcher/hooks/hooks.json, install.py): the client waits for it
        run: Literal["fold", "inject"]  # inject: the pending handoff as additionalContext; no fold, no lock
        lock: float  # seconds to wait for the session lock (busy: the new lines are left for the next run)
        turnEnd: bool  # first wait, bounded and without the lock, for the turn's last API call line
        peek: bool  # first read the saved state without the lock: warm and current needs no fold at all
        budgetAtLock: bool  # the fold's time budget starts once the lock is held, not at the start
        subagents: bool  # fold the session's subagent transcripts too, not only the payload's agent one
        apply: Callable[[State, dict[str, Any]], None] | None  # what the payload says, once caught up
        guard: bool  # the cold-cache guard speaks before the prompt is sent
        # it runs before the session's next call (a prompt, a start or resume), a break perhaps behind
        # it: what it folds after one past the cache's lifetime fires alerts of then (`_gone_cold`)
        beforeCall: bool
        prints: bool  # its output reaches the user (synchronous); else it is queued for the next that prints
        saveAlways: bool  # False: the state is written only when the run changed it
        flush: bool  # the session is over: the OTLP exporter sends its figures now
        message: bool  # alerts also as a `systemMessage` for the next prompt (Codex: no status line)
        tidy: bool  # after the fold, at most once a day: sweep the states of transcripts gone (state.tidy)
        # a handoff this session took (state.handoffs' lent note): "sent" with its first request (the
        # prompt), given back pending when the session "end"s without having sent it
        lent: Literal["", "sent", "end"]


LOCK_TIMEOUT = 0.25  # seconds to wait for another hook of the same session
# a prompt whose saved state does not show a warm cache: the guard's line is what the prompt waits
# for, and the hook holding the lock is most likely a resume's SessionStart folding the same lines
PROMPT_LOCK_TIMEOUT = 1.0
STOP_WAIT = 1.2  # seconds the Stop hook waits for the turn's last call line (well past its lateness)
STOP_WAIT_MAX = 5.0  # SESSION_WATCHER_STOP_WAIT may set it from 0 to this (the hook's timeout is 10 s)
STOP_LOCK_TIMEOUT = 0.6  # the turn's last call must be folded: wait longer for a busy neighbour
# SessionEnd is the last chance to fold (print mode kills the async hooks at exit): it waits out an
# async Stop folding the same lines (<= its 0.4 s budget + a save), within SessionEnd's 1.5 s budget
SESSION_END_LOCK_TIMEOUT = 0.9
FOLD_BUDGET = 0.4  # seconds of transcript folding per run; the rest waits for the next run
OUTBOX_MAX = 8  # queued alerts kept for the next synchronous hook (the newest; hooks.outbox shows one)
TIDY_EVERY = 86400.0  # state.tidy's: its sweep is due once a day
NEWS_CALLS = 5  # an alert fired further back than this many calls is history (a first fold, a rebuild)
# seconds since the last call under which no cache is cold for sure (core.eoq.EDGE_MARGIN, past the
# shortest lifetime): a hook run this soon after it asks the guard nothing (`_gone_cold`)
COLD_MIN = 180.0


def _session_start(state: State, payload: dict[str, Any]) -> None:
    """What a SessionStart payload says that the transcript does not (yet): a compaction or /clear
    starts a segment, the model, and on a resume whether the client thinks the cache expired."""
    from session_watcher.core import engine

    source = payload.get("source")
    if source == "compact":
        engine.on_compaction(state, from_hook=True)
        return
    if source == "clear":
        if state["engine"]["segCalls"]:
            engine.new_segment(state)
        return
    from session_watcher.core.caps import model_name

    model = model_name(payload.get("model"))  # a short string or nothing (the state's cap)
    if model:
        state["context"]["modelId"] = model
    expired = payload.get("prompt_cache_likely_expired")
    if source == "resume" and isinstance(expired, bool):  # for the cold-cache guard
        seconds = payload.get("seconds_since_last_response")
        state["context"]["resume"] = {
            "expired": expired, "at": time.time(), "lastTs": state["engine"]["lastTs"],
            "seconds": seconds if isinstance(seconds, int | float) and not isinstance(seconds, bool) else None}


def _session_end(state: State, payload: dict[str, Any]) -> None:
    """A session ended by /clear has restarted: the handoff its guard prepared was for the session
    /clear starts (which takes it), so the record that priced this one's restart by it goes (taking
    it clears it too, when this session's lock is free then: state.handoffs.forget)."""
    if payload.get("reason") == "clear":
        (state.get("guard") or {}).pop("carry", None)


# An event not listed (PreToolUse, PreCompact, ...: not registered, but a user may) is folded as FOLD.
FOLD: Plan = {"sync": False, "run": "fold", "lock": LOCK_TIMEOUT, "turnEnd": False, "peek": False,
              "budgetAtLock": False, "subagents": False, "apply": None, "guard": False, "beforeCall": False,
              "prints": False, "saveAlways": True, "flush": False, "message": False, "tidy": False, "lent": ""}
# Every hook the plugin (its hooks.json) and install.py register, `hook EVENT [inject]` -> its plan
# (install.py registers exactly these; tests/test_hook_events.py holds hooks.json to them).
EVENTS: dict[str, Plan] = {
    "PostToolUse": FOLD,
    "PostToolUseFailure": FOLD,
    # the turn's last call must be in the fold: wait for its line, then for a busy neighbour
    "Stop": {**FOLD, "turnEnd": True, "lock": STOP_LOCK_TIMEOUT, "subagents": True, "tidy": True},
    # a subagent's own file, and a compaction agent's (listed in the session's subagents folder)
    "SubagentStop": {**FOLD, "subagents": True},
    "SessionStart": {**FOLD, "subagents": True, "apply": _session_start, "beforeCall": True},
    # at every start: the project's pending handoff, which must reach the first request (an async
    # hook's output would come with the next one, as a bare system message)
    # (hooks.entry sends this row to the inject by its name, INJECT, without this table)
    "SessionStart inject": {**FOLD, "sync": True, "run": "inject", "lock": 0.0, "prints": True},
    # the prompt waits for the guard's line, which is shown to the user with what async hooks queued;
    # a prompt on a current state writes nothing
    "UserPromptSubmit": {**FOLD, "sync": True, "lock": PROMPT_LOCK_TIMEOUT, "peek": True, "budgetAtLock": True,
                         "guard": True, "beforeCall": True, "prints": True, "saveAlways": False, "lent": "sent"},
    # print mode kills async hooks at exit, and waits for this one: it folds what is left. Its output
    # is queued like an async hook's (nothing of the session follows to show it). No wait for the
    # turn's end: by then the line is written (print mode's Stop saw it 30 of 30 times)
    "SessionEnd": {**FOLD, "sync": True, "lock": SESSION_END_LOCK_TIMEOUT, "subagents": True, "flush": True,
                   "apply": _session_end, "lent": "end"},
}


def main(argv: list[str] | None = None) -> int:
    """The entry point of launchers written before `hooks.entry` (the next install writes new ones):
    without it, such a launcher's every hook would stop on an ImportError while an install runs."""
    from session_watcher.hooks.entry import main as entry

    return entry(argv)


def run(event: str, raw: bytes, message: bool = False) -> dict[str, Any] | None:
    """Do one hook's work; returns the hook's stdout object, or None for silence. `message`: the
    alerts also go to the next prompt as a `systemMessage` (the agent has no status line)."""
    start = time.monotonic()
    try:
        from session_watcher.core.fastjson import load_payload  # NaN, 1e400 and the like: null

        payload = load_payload(raw) if raw.strip() else None
    except ValueError:
        return None
    if not isinstance(payload, dict):
        return None
    from session_watcher.state import shell

    session_id, transcript, cwd = shell.payload_inputs(payload)
    if session_id is None:
        return None
    plan = EVENTS.get(event or str(payload.get("hook_event_name") or ""), FOLD)
    if message:
        plan = {**plan, "message": True}

    if plan["lent"]:
        _lent(plan["lent"], session_id)

    from session_watcher.core.errors import LockTimeout

    lock_timeout = plan["lock"]
    if plan["turnEnd"] and transcript:
        from session_watcher.state.tail import wait_turn_end

        wait_turn_end(transcript, start + stop_wait(sysos.environ.get("SESSION_WATCHER_STOP_WAIT")))
        start = time.monotonic()
    if plan["peek"]:
        from session_watcher.hooks.prompt import lock_wait, warm_and_nothing_queued

        wait = lock_wait(warm_and_nothing_queued(session_id), transcript, lock_timeout)
        if wait is None:
            return None
        lock_timeout = wait
    out = None
    try:
        with shell.open_session(session_id, lock_timeout, log_once) as opened:
            if plan["budgetAtLock"]:
                start = time.monotonic()
            out = _locked(opened, plan, payload, transcript, cwd, start)
    except LockTimeout:
        if lock_timeout:
            log_once("lock", f"session lock busy over {lock_timeout} s: new lines left for the next run")
    if plan["tidy"]:
        _tidy()
    return out


def _lent(step: str, session_id: str) -> None:
    """A handoff this session took and has not sent (state.handoffs): its first prompt sends it; a
    session that ends without having sent it gives it back, pending for its project again (before
    the fold: a stat when none is lent, and SessionEnd's budget is tight)."""
    from session_watcher.state import handoffs

    if step == "sent":
        handoffs.sent(session_id)
    elif sysos.lexists(handoffs.lent_file(session_id)):
        from session_watcher.hooks.inject import stale_s

        handoffs.give_back(session_id, time.time(), stale_s)


def _tidy() -> None:
    """The once-a-day sweep of states whose transcript is gone (`state.tidy`, imported only when
    due: its marker's `stat` is all a run pays otherwise)."""
    from session_watcher.base import paths

    try:
        if 0 <= time.time() - sysos.stat(paths.tidy_marker()).st_mtime < TIDY_EVERY:
            return  # swept within the day (a marker from the future is due: a clock set back)
    except OSError:
        pass
    from session_watcher.state import tidy

    try:
        tidy.maybe_tidy()
    except Exception as exc:  # a sessions folder not ours (paths refuses it), ...: said once, never raised
        log_once("tidy", f"sweeping old states: {exc}")


def transcript_folder(transcript: str) -> str | None:
    """For a payload naming no cwd (every client sends one: none of this is on a hook's usual path),
    the folder its transcript says the session ran in, as `replay` takes it (`transcript_cwd`), so
    the fold resolves relative paths from where replay does; None where it names none or cannot be read."""
    from session_watcher.sessions.replay import transcript_cwd
    from session_watcher.state.shell import usable_path

    try:
        cwd = transcript_cwd(transcript)
    except (OSError, ValueError):
        return None
    return cwd if usable_path(cwd) else None


def log_once(key: str, message: str) -> None:
    from session_watcher.base.logs import log_once as write  # only when there is something to say

    write(key, message)


def _locked(opened: Session, plan: Plan, payload: dict[str, Any], transcript: str | None, cwd: str | None,
            start: float) -> dict[str, Any] | None:
    from session_watcher.state import session
    from session_watcher.state.shell import usable_path

    if cwd is None and transcript and opened.state["context"]["cwd"] is None:
        cwd = transcript_folder(transcript)
    opened.place(cwd)
    cfg = opened.config()
    subs: list[str] = []
    if plan["subagents"] and transcript:
        subs = session.subagent_files(transcript, opened.id)
    agent_path = payload.get("agent_transcript_path")
    if isinstance(agent_path, str) and usable_path(agent_path) and agent_path not in subs:
        subs.append(agent_path)
    cursor_before = opened.state["cursor"]
    trace: list[dict[str, Any]] | None = [] if sysos.environ.get("SESSION_WATCHER_TRACE") else None
    alerts, caught_up = opened.sync(transcript, cfg, start + FOLD_BUDGET, subs, trace=trace)
    held = _hold_termination()
    try:
        moved = opened.state["cursor"] != cursor_before
        return _deliver_and_save(opened, cfg, plan, payload, (alerts, caught_up, moved), trace)
    finally:
        _release_termination(held)


def _deliver_and_save(opened: Session, cfg: Config, plan: Plan, payload: dict[str, Any],
                      folded: tuple[list[Alert], bool, bool], trace: list[dict[str, Any]] | None,
                      ) -> dict[str, Any] | None:
    """Deliver what the fold found, save, write the trace: one step as far as the client's SIGTERM goes."""
    from session_watcher.state import session

    alerts, caught_up, moved = folded  # moved: the fold advanced the cursor
    state = opened.state
    said = None
    apply = plan["apply"]
    if caught_up and apply is not None:
        apply(state, payload)
    marked = False
    if plan["guard"] and caught_up:
        from session_watcher.hooks.prompt import guard_prompt

        said, marked = guard_prompt(state, cfg, payload, plan["message"])
    for alert in state["alerts"]:  # fired by a status line's or the CLI's fold, which cannot deliver them
        if alert.pop("pending", False):
            alerts.append(alert)
            marked = True
    if not caught_up:  # behind the transcript: the run that catches up delivers them, if still news
        for alert in alerts:
            alert["pending"] = True
        alerts = []
    now = time.time()
    gone_cold = _asked_once(lambda: _gone_cold(state, cfg, now))  # by the first step that needs it
    alerts = _unshown(state, _news(state, alerts, plan["beforeCall"] and bool(alerts) and gone_cold()))
    if alerts:  # at most one notification per notify.remind_min, noted in the state saved below
        from session_watcher.notifier.throttle import admit

        note = state.get("notified")
        held = note.get("held") if isinstance(note, dict) else None
        alerts = admit(state, alerts, cfg["notify"], now)
        note = state.get("notified")
        marked = marked or bool(alerts) or (note.get("held") if isinstance(note, dict) else None) != held
    elif caught_up and isinstance(state.get("notified"), dict) and "held" in state["notified"]:
        from session_watcher.notifier.throttle import release  # held back by the quiet period: now?

        before = len(state["notified"])
        if plan["beforeCall"] and gone_cold():  # priced on a cache gone since: history
            state["notified"].pop("held")
        alerts = release(state, cfg["notify"], now)
        marked = marked or bool(alerts) or len(state["notified"]) != before
    new = None
    if alerts:
        from session_watcher import notifier

        notify = cfg["notify"]
        if plan["message"] and "message" not in notify["channels"]:
            notify = {**notify, "channels": [*notify["channels"], "message"]}
        channels = notifier.send(alerts, notify, agent=state["context"].get("agent"))
        if channels:  # printed by a prompt that shows it, priced and worded then (hooks.outbox)
            from session_watcher.hooks import outbox
            from session_watcher.notifier.message import pick

            new = outbox.entry(state, pick(alerts), channels)  # type: ignore[arg-type]
    out, queued = _route(state, cfg, plan, said, new, (now, gone_cold))
    marked = marked or queued
    if plan["saveAlways"] or opened.fresh or marked or moved:
        opened.save()  # a prompt on a current state changes nothing
    if trace:
        session.append_trace(sysos.environ["SESSION_WATCHER_TRACE"], trace)
    _export(cfg, plan, opened.id)
    return out


def _route(state: State, cfg: Config, plan: Plan, said: dict[str, Any] | None, new: dict[str, Any] | None,
           when: tuple[float, Callable[[], bool]]) -> tuple[dict[str, Any] | None, bool]:
    """(what this run prints, whether the state's outbox changed). `new`: this run's alert, whose
    `message` / `terminal` channels are to be printed (hooks.outbox.entry). A printing hook prints
    the guard's line, then the newest queued alert that still holds, priced and worded now
    (hooks.outbox: one price, the words of where it is shown); an async hook's output would go to the
    model, so it queues the alert for the next synchronous hook. So does a printing hook whose
    messages nobody sees where it runs (`Agent.unseen`: under `codex exec`, a stderr our lines cannot
    be added to): they wait for a prompt that shows them; the guard's line is printed all the same
    (its block holds the prompt). A prompt's or a start's hook past a break beyond the cache's edge
    (`when`: the time and `_gone_cold`), or a prompt the guard holds, drops them all, as it delivers
    none of the alerts of then: they were priced on a warm cache, and the cold return speaks for a
    restart (the hold's reason names the way that sends nothing to the model)."""
    raw = state.pop("outbox", None)
    if raw is None and new is None:  # the usual run: nothing queued, nothing new (no import)
        return (_merge([said]) if plan["prints"] else None), False
    from session_watcher.hooks import outbox

    now, gone_cold = when
    queued = outbox.entries(raw)
    if new is not None:
        queued.append(new)
    held = said is not None and said.get("decision") == "block"  # the guard holds it: the cache is cold
    if queued and plan["beforeCall"] and (held or gone_cold()):
        queued = []
    queued = outbox.pending(state, queued)[-OUTBOX_MAX:]
    out = None
    if plan["prints"] and queued and not _unseen(state):
        out = outbox.shown(state, cfg, queued, now)
        queued = []  # shown, or no longer holding: used up
    if queued:
        state["outbox"] = queued
    return (_merge([said, out]) if plan["prints"] else None), (raw or None) != (queued or None)


def _unseen(state: State) -> bool:
    """Whether the messages a printing hook would show reach no one where it runs (its agent's say)."""
    from session_watcher.agents import agent_named

    agent = agent_named(state["context"].get("agent"))
    return agent is not None and agent.unseen()


def _export(cfg: Config, plan: Plan, session_id: str) -> None:
    """OpenTelemetry export: at most a stat here, and a spawn per interval."""
    otlp = cfg.get("otlp")
    if otlp and (otlp.get("enabled") is True
                 or (otlp.get("enabled") == "auto" and sysos.environ.get("CLAUDE_CODE_ENABLE_TELEMETRY"))):
        from session_watcher.otlp import trigger

        if trigger.on(otlp, sysos.environ):
            trigger.due(otlp, plan["flush"], session_id, time.time(), sysos.environ)


def _hold_termination() -> Any:
    """Hold back SIGTERM, SIGHUP and SIGINT (print mode SIGTERMs async hooks at exit, SIGKILL
    follows ~1.5 s later) until `_release_termination`, so that a notification sent is also noted as
    sent and a saved fold also has its trace rows; the held signal ends the process on release.
    The fold before it stays killable: a fold not saved is redone by the next run."""
    import _signal  # type: ignore[import-not-found]  # loaded at start-up; `signal` is not

    block = getattr(_signal, "pthread_sigmask", None)
    if block is None:  # pragma: no cover - Windows
        return None
    return block(_signal.SIG_BLOCK, (_signal.SIGTERM, _signal.SIGHUP, _signal.SIGINT))


def _release_termination(held: Any) -> None:
    if held is not None:
        import _signal

        _signal.pthread_sigmask(_signal.SIG_SETMASK, held)


def _merge(outs: list[dict[str, Any] | None]) -> dict[str, Any] | None:
    """One stdout object from several: messages one after another, other keys from the first."""
    merged: dict[str, Any] = {}
    for out in outs:
        for key, value in (out or {}).items():
            if not isinstance(value, str):
                continue
            if key not in merged:
                merged[key] = value
            elif key == "systemMessage":
                merged[key] += "\n" + value
            elif key == "terminalSequence":
                merged[key] += value
    return merged or None


def stop_wait(raw: str | None) -> float:
    """How long the Stop hook waits for the turn's last line: STOP_WAIT, or `raw` (the environment's
    SESSION_WATCHER_STOP_WAIT) in seconds from 0 to STOP_WAIT_MAX, anything else ignored. A harness
    that writes whole turns before it runs Stop (the test suite's synthetic sessions) sets 0."""
    try:
        wait = float(raw) if raw else STOP_WAIT
    except ValueError:
        return STOP_WAIT
    return wait if 0 <= wait <= STOP_WAIT_MAX else STOP_WAIT


def _news(state: State, alerts: list[Alert], gone_cold: bool = False) -> list[Alert]:
    """The alerts about where the session is now. A hook that folds a backlog (the first runs on a
    long session after install, a state quarantined and folded again from the transcript) fires the
    session's past alerts; they stay in the state for `status` and the page, but are not delivered
    as news. (A rebuild's fold returns none it had dealt with: `state.session.unseen`.) Nor are the
    alerts of a fork's copies of its parent's calls (up to the tally's `inheritedTo`): the parent's
    advice, told in the parent. Nor, at a prompt or a start, any at all once the cache of the last call
    has expired for sure (`gone_cold`, `_gone_cold`)."""
    if gone_cold:
        return []
    e = state["engine"]
    since = max(e["calls"] - NEWS_CALLS, e["tally"].get("inheritedTo", 0))
    return [a for a in alerts if not isinstance(a.get("call"), int) or a["call"] > since]


def _gone_cold(state: State, cfg: Config, now: float) -> bool:
    """Whether the cache of the session's last call has expired for sure by `now` (the guard's
    `cold_cache`). A prompt's or a start's hook that folds calls after such a break (the first run on
    yesterday's session after an install, or the prompt of a `codex exec` folding the last call of
    the exec before, whose own async hook was cut off at its exit) would deliver their alerts hours
    late, priced on a warm cache, their saving over calls that never came. Whatever `guard` says:
    it decides whether the prompt is held or warned, not what an alert is worth; the advice for the
    cache as it is comes with the cold return's alert, which the fold of the prompt's call records
    whatever the setting (and the notifier always lets through). The hooks after a call fold the
    call just made: no break lies behind them."""
    last = state["engine"].get("lastTs")
    if not isinstance(last, int | float) or now - last < COLD_MIN:
        return False
    from session_watcher.core.guard import cold_cache

    cold = cold_cache(state, cfg, now)
    return bool(cold and cold["sure"])


def _asked_once(ask: Callable[[], bool]) -> Callable[[], bool]:
    """`ask`, called by the first call at most, its answer kept for the later ones: a run's
    `_gone_cold` serves the news, a held reminder and the kept messages, one guard reading."""
    answer: list[bool] = []

    def once() -> bool:
        if not answer:
            answer.append(ask())
        return answer[0]

    return once


def _unshown(state: State, alerts: list[Alert]) -> list[Alert]:
    """Drop the `guard` alert of a cold return the prompt hook already told the user about (it stays
    in the state, marked, for `status` and the page)."""
    shown = (state.get("guard") or {}).get("shown")
    if not shown or not alerts:
        return alerts
    kept = []
    for alert in alerts:
        if alert.get("kind") == "guard" and alert.get("call") == shown[1]:
            alert["shownBy"] = "prompt"
        else:
            kept.append(alert)
    return kept
