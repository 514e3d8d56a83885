"""UserPromptSubmit's own steps (`hooks.run.EVENTS`' row with `peek` and `guard`): the lock-free look
at the saved state before a prompt, the cold-cache guard and the handoff of a held cold return.
Apart from `hooks.run`, whose other events (every tool result, every turn's end) never run them.
"""

from __future__ import annotations

import time

from session_watcher.base import sysos

TYPE_CHECKING = False  # typing is slow to import; this module is on a hook's path
if TYPE_CHECKING:
    from typing import Any

    from session_watcher.agents.seam import Agent
    from session_watcher.core.shapes import Config, State


def lock_wait(saved: State | None, transcript: str | None, wait: float) -> float | None:
    """How long a prompt's hook waits for the session lock: `wait` (its row's), 0, or None: nothing
    to do. The prompt waits for this hook. A warm saved state at the transcript's end is read, not
    folded or locked; one behind it is folded only if no other hook holds the lock (that one folds,
    and the cache is warm anyway). Otherwise the cache may be cold and the guard's line is the
    point: `wait`, long enough to wait out a neighbour's fold."""
    if saved is None:
        return wait
    return None if _current(saved, transcript) else 0.0


def _current(doc: State, transcript: str | None) -> bool:
    """The saved state's cursor is at the transcript's end: nothing to fold."""
    cursor = doc.get("cursor")
    if not transcript:
        return True
    if not isinstance(cursor, dict) or cursor.get("path") != transcript:
        return False
    try:
        st = sysos.stat(transcript)
    except OSError:
        return False
    return bool(st.st_ino == cursor.get("ino") and st.st_size == cursor.get("offset"))


def warm_and_nothing_queued(session_id: str) -> State | None:
    """Lock-free, before a prompt: the saved state when it shows a warm cache (the guard off: a cache
    not cold for sure, past which the cold return's alert may be due, `unguarded`) and holds
    nothing queued for the user, or only what this prompt could not show anyway (under
    `codex exec` with a stderr no line can be added to, `Agent.unseen`: the queue waits, and a
    prompt on a current state there has nothing else to do), else None. A state behind its
    transcript only makes the last call look older, so warm there is warm for sure; anything else
    (cold, unknown, unreadable) takes the locked path. Read as every reader reads a state
    (state.store: no symlink, bounded, this schema and shape), without the lock and without moving
    anything: a file that cannot be used is the locked path's to quarantine."""
    from session_watcher.core.errors import StateRejected
    from session_watcher.state import store

    try:
        doc = store.load(store.session_file(session_id), session_id, readonly=True)
    except (StateRejected, OSError):
        return None
    if doc is None or any(isinstance(a, dict) and a.get("pending") for a in doc["alerts"]):
        return None
    from session_watcher.core import guard
    from session_watcher.state.shell import load_config

    try:
        cfg, _ = load_config(doc)
        off = cfg.get("guard") == "off"
        got = guard.cold_cache(doc, cfg, time.time())
    except (KeyError, TypeError, ValueError, AttributeError):
        return None
    if (got is None or got["cold"] is not False) and not (off and not (got and got["sure"])):
        return None
    if _held_due(doc, cfg):  # the locked path sends it, or drops it past a break (hooks.run)
        return None
    return doc if not doc.get("outbox") or _unseen_here(doc) else None


def _held_due(doc: State, cfg: Config) -> bool:
    """A gate or reminder held back by the quiet period whose quiet is over (notifier.throttle)."""
    note = doc.get("notified")
    if not isinstance(note, dict) or not isinstance(note.get("held"), dict):
        return False
    from session_watcher.notifier.throttle import quiet

    return not quiet(doc, cfg.get("notify"), time.time())


def _unseen_here(doc: State) -> bool:
    """Nothing this prompt's hook prints would reach anyone (its agent's `unseen`: `codex exec`
    with a stderr no line can be added to): what is queued waits, whatever the lock would find."""
    from session_watcher.agents import agent_named

    agent = agent_named(doc["context"].get("agent"))
    return agent is not None and agent.unseen()


def guard_prompt(state: State, cfg: Config, payload: dict[str, Any],
                 message: bool = False) -> tuple[dict[str, Any] | None, bool]:
    """The cold-cache guard on a prompt (core.guard): (the hook's output or None, state changed).
    `off`: no line of the guard's, only the cold return's alert (`unguarded`; `message`: the
    `message` channel is the hook's whatever the configured channels, as a Codex thread's).

    Shown to the user only. `ask` (the default; `block` is its old name): past guard_x, and past the
    edge where the cache is cold for sure, the prompt is held back once with the priced choices
    (`decision: block`: nothing is sent, and the prompt goes back into the input box) and the
    handoff for a fresh session is prepared (pending for this project: `/clear` starts with it); a
    prompt sent within ASK_WINDOW of that goes ahead, and the handoff is dropped (so is it on
    /compact: the user goes on here), but for one that ends in /clear: the held prompt was left in
    the input line, and Enter would send it cold. Otherwise, and in `warn` mode, a `systemMessage`; short of the
    edge, "may have expired". Slash commands pass untouched (/compact, /clear, the handoff), but where
    the agent has none (`codex exec` sends `/compact` to the model as a prompt: `held_words`' compact).
    """
    mode = cfg.get("guard", "ask")
    prompt = payload.get("prompt")
    if mode == "off":
        return unguarded(state, cfg, prompt, message), False
    from session_watcher.agents import FALLBACK, agent_named

    agent = agent_named(state["context"].get("agent")) or FALLBACK
    from session_watcher.core import eoq, guard

    now = time.time()
    cold = guard.cold_cache(state, cfg, now)
    warm = cold is None or not cold["cold"]
    slash = isinstance(prompt, str) and prompt.lstrip().startswith("/")
    compact = slash and isinstance(prompt, str) and prompt.lstrip().startswith("/compact")
    # whether the agent has slash commands here is asked only where the answer changes something (a
    # /compact's handoff dropped, a cold prompt held): Codex's answer is its process tree, a `ps`
    # where there is no /proc (agents.codex.execout)
    if slash and (compact or not warm) and agent.held_words()["compact"]:
        return None, compact and _drop_handoff(state)
    # else (`codex exec`) a slash command is a prompt like any: `/compact` goes to the model, cold
    if cold is None or warm:
        return None, False
    q = eoq.quantities(state, cfg)
    advice = guard.advice(state, q, cold, cfg, now)
    if advice is None:
        return None, False
    e = state["engine"]
    mark = state.setdefault("guard", {})
    gap = [e["lastTs"], e["calls"] + 1]  # the gap and the call that will end it
    first = changed = mark.get("shown") != gap  # first: the first prompt of this gap (logged once)
    mark["shown"] = gap
    if first:
        mark.pop("carry", None)  # the handoff of an earlier gap's hold: the session went on since
    out: dict[str, Any] | None
    if mode == "ask" and advice["restartFirst"] and advice["sure"]:  # "block", its old name, is read as "ask"
        asked = mark.get("blocked")
        if (isinstance(asked, list) and asked[:2] == gap and len(asked) > 2 and isinstance(asked[-1], int | float)
                and 0 <= now - asked[-1] <= guard.ASK_WINDOW):
            return _asked_again(state, prompt, agent)
        mark["blocked"] = [*gap, now]
        changed = True
        if _prepare_handoff(state, cfg, now):  # priced from now on at what its note carries
            advice = guard.advice(state, q, cold, cfg, now) or advice
        words = agent.held_words()
        # a `/compact` typed where the agent has no slash commands (`codex exec`): words to the model
        typed = not words["compact"] and isinstance(prompt, str) and prompt.lstrip().startswith("/compact")
        out = {"decision": "block", "reason": guard.compose({**advice, **words, "typedCompact": typed}, ask=True)}
    else:
        out = {"systemMessage": guard.compose(advice)}
    if first:
        _log_warning({"ts": now, "sessionId": state["sessionId"], "mode": mode,
                      "afterTs": gap[0], "call": gap[1], "asked": "decision" in out, **advice})
    return out, changed


def unguarded(state: State, cfg: Config, prompt: object, message: bool) -> dict[str, str] | None:
    """`guard = "off"`: the prompt is neither held nor warned, but a cold return the advice speaks of
    (`engine.cold_return_due`: past the cache's edge, x >= guard_x) is an alert all the same, and its
    `message` and `terminal` channels (the fallback among them where the desktop cannot be reached:
    `notifier.printing`) are told here, before its call, in the alert's words (the fold
    of that call records it and sends its desktop notification; no later prompt shows it: its call
    made the re-write it priced, hooks.outbox). A slash command (`/clear`, the handoff) is not the
    prompt that re-writes the cache. None: nothing to print."""
    if isinstance(prompt, str) and prompt.lstrip().startswith("/"):
        return None
    from session_watcher.core import engine

    now = time.time()
    q = engine.cold_return_due(state, cfg, now)
    last = state["engine"]["lastTs"]
    if q is None or last is None:
        return None
    from session_watcher.notifier import printed, printing

    notify = cfg["notify"]
    if message and "message" not in notify["channels"]:
        notify = {**notify, "channels": [*notify["channels"], "message"]}
    alert = engine.cold_alert(state, q, now - last, now)
    return printed(alert, printing(notify), agent=state["context"].get("agent"))


def _asked_again(state: State, prompt: object, agent: Agent) -> tuple[dict[str, Any] | None, bool]:
    """A prompt within the minute after the hold: it goes ahead (None), and the session goes on, so
    the guard's handoff is dropped; but one ending in /clear is the held prompt left in the input
    line with /clear typed after it, which Enter would send cold: held again. Where the agent has no
    slash commands (`codex exec`: no input line either), a typed `/clear` is the user reaching for
    one, which would go to the model cold: held again, with the agent's way to the handoff.
    (output, state changed)"""
    from session_watcher.core import guard

    if isinstance(prompt, str) and prompt.rstrip().endswith("/clear"):
        words = agent.held_words()
        if words["compact"]:  # slash commands: the input line held the prompt, /clear typed after it
            return {"decision": "block", "reason": guard.NOT_CLEARED}, False
        if prompt.strip() == "/clear":
            return {"decision": "block", "reason": guard.no_clear(words["clear"])}, False
    return None, _drop_handoff(state)


def _prepare_handoff(state: State, cfg: Config, now: float) -> bool:
    """The handoff of a held cold return, saved pending for the project (the `handoff` command's
    work, without a request to the model), and recorded in the state's guard marks (`carry`: its
    price, for the gap and segment it was made in, until it goes stale), which is how the status
    line, `status` and the guard price a restart while it is pending (`eoq.prepared`). False when it
    cannot be made here."""
    from session_watcher.core.errors import WatcherError

    max_age = float(cfg.get("handoff_stale_min") or 180) * 60
    try:
        from session_watcher.sessions import handoff
        from session_watcher.state import handoffs

        doc = handoff.build(state, cfg, now)
        if not doc["project"]:
            return False
        handoff.save(doc, handoffs.GUARD, max_age)
    except (WatcherError, OSError) as exc:
        from session_watcher.base.logs import log_once

        log_once("guard-handoff", f"cannot prepare the handoff of a cold return: {exc}")
        return False
    e = state["engine"]
    state.setdefault("guard", {})["carry"] = {
        "K": doc["K"], "carryTokens": doc["carryTokens"], "carryUsd": doc["carryUsd"], "createdAt": now,
        "until": now + max_age, "lastTs": e["lastTs"], "segment": e["segment"]}
    return True


def _drop_handoff(state: State) -> bool:
    """The session goes on: the handoff the guard prepared for a fresh one is no longer wanted, nor
    its record in the state (True: there was one, the state changed)."""
    had = (state.get("guard") or {}).pop("carry", None) is not None
    project = state["context"].get("project")
    if isinstance(project, str) and project:
        from session_watcher.state import handoffs

        handoffs.drop(project, state["sessionId"], handoffs.GUARD)
    return had


def _log_warning(record: dict[str, Any]) -> None:
    """One line per cold prompt warned, for the warmth report (append-only, 0600)."""
    from session_watcher.base import paths
    from session_watcher.core.fastjson import dumps

    try:
        flags = sysos.O_WRONLY | sysos.O_APPEND | sysos.O_CREAT
        fd = paths.open_file(paths.guard_log_file(), flags, 0o600, follow=False)
        try:
            sysos.write(fd, (dumps(record) + "\n").encode("utf-8"))
        finally:
            sysos.close(fd)
    except OSError as exc:  # the warning itself still reaches the user
        from session_watcher.base.logs import log_once

        log_once("guard-log", f"cannot log the cold-cache warning: {exc}")
