"""The status-line command: Claude Code's status JSON on stdin, one line on stdout, never blank.

It records what only the status line is told (the window size, the model's display name, a
subscriber's plan use from `rate_limits`) and folds
new transcript lines when the session lock is free at once; it never waits for the lock: when a hook
holds it, the line is drawn from the state as last saved. So is it when there is nothing to fold or
record (`_as_saved`): then it reads the state without the lock and imports none of the fold.
"""

from __future__ import annotations

import sys
import time

from session_watcher.base import sysos

TYPE_CHECKING = False  # typing is slow to import; this module is on the hot path
if TYPE_CHECKING:
    from typing import Any

    from session_watcher.core.shapes import Config, ContextSeen, State

    Limits = dict[str, tuple[float, float | None]]  # rate_limits: window -> (percent used, resets_at)
    PlanSample = tuple[Limits, float | None, float]  # (rate limits, the client's cost, now)


FOLD_BUDGET = 0.15
PROMPT_CACHE_KEYS = ("warm", "caching_observed", "ttl", "expires_at", "hit_ratio", "last_miss_at",
                     "last_miss_cause", "recache_tokens_if_cold")


WITH_TIMEOUT = 2.0  # seconds the user's own status line may take (`--with CMD`)


def theirs(raw: bytes, args: list[str]) -> str:
    """`--with CMD`: the user's own status-line command run with the same input, its output (ended
    by a newline) to go above ours; "" without `--with`, or when it fails or takes too long."""
    if "--with" not in args or args.index("--with") + 1 >= len(args):
        return ""
    import subprocess

    try:
        got = subprocess.run(["/bin/sh", "-c", args[args.index("--with") + 1]], input=raw, capture_output=True,
                             timeout=WITH_TIMEOUT, check=False)
    except (OSError, subprocess.SubprocessError):
        return ""
    text = got.stdout.decode("utf-8", "replace").rstrip("\n")
    return text + "\n" if text else ""


def _command() -> str:
    """The command a status line's message names: the route's (base.route; imported on those messages
    only). No file is read (`hook`): the status line is install.sh's, and its environment a project's
    settings may add to."""
    from session_watcher.base.route import cli_command

    return cli_command(hook=True)


def main() -> int:
    try:
        raw = sys.stdin.buffer.read(1 << 20)
    except (AttributeError, OSError, ValueError):  # no stdin (closed: sys.stdin is None), or unreadable
        raw = b""
    above = theirs(raw, sys.argv[1:])
    try:
        line = above + run(raw, sysos.environ, "--verbose" in sys.argv[1:])
    except BaseException as exc:
        from session_watcher.base.logs import log_exception

        log_exception("statusline", exc)
        line = f"○ session-watcher: error (see `{_command()} doctor`)"
    # UTF-8 whatever the locale, a lone surrogate as its escape (core.text.utf8's rule, inline: the
    # status line does not import core.text)
    if sys.stdout is None:  # stdout closed (`>&-`): the caller's choice, nothing to show it on
        return 0
    try:
        sys.stdout.buffer.write((line + "\n").encode("utf-8", "backslashreplace"))
        sys.stdout.flush()
    except OSError:  # its reader gone (the client stopped waiting): the line is for no one, exit 0 still
        _stdout_to_null()
    return 0


def _stdout_to_null() -> None:
    """Standard output pointed at the null device, so no later flush of the line left in its buffer
    (the launcher's, the interpreter's at its exit) fails: a traceback and exit 120 (`cli._reader_gone`
    does the same for the commands, with `os`)."""
    try:
        null = sysos.open(sysos.devnull, sysos.O_WRONLY)
        sysos.dup2(null, sys.stdout.fileno())
        sysos.close(null)
    except (OSError, ValueError):  # no descriptor to point: nothing will flush to it either
        pass


def _payload_context(payload: dict[str, Any]) -> ContextSeen:
    """What the state keeps of the payload, each text short (`core.caps.model_name`'s cap) and
    each number bounded (`fastjson.load_payload`), so no payload can make a state too large to load."""
    from session_watcher.core.caps import MAX_COUNT, model_name

    out: ContextSeen = {}
    model = payload.get("model")
    if isinstance(model, dict):
        if model_name(model.get("id")):
            out["modelId"] = model["id"]
        if model_name(model.get("display_name")):
            out["modelName"] = model["display_name"]
    cw = payload.get("context_window")
    if isinstance(cw, dict):
        size = cw.get("context_window_size")
        if isinstance(size, int) and not isinstance(size, bool) and 0 < size <= MAX_COUNT:
            out["window"] = size
    pc = payload.get("prompt_cache")  # 2.1.332+: the client's own cache view (guard, status line)
    if isinstance(pc, dict):
        out["promptCache"] = {k: _kept(pc.get(k)) for k in PROMPT_CACHE_KEYS}
    return out


def _payload_limits(payload: dict[str, Any]) -> Limits:
    """A subscriber's `rate_limits`: per window (five_hour, seven_day) the percentage used and
    when the window resets (epoch seconds); nothing for an API user (the client sends none)."""
    from session_watcher.core.status import PLAN_WINDOWS

    rl = payload.get("rate_limits")
    out: Limits = {}
    if not isinstance(rl, dict):
        return out
    for key in PLAN_WINDOWS:
        w = rl.get(key)
        used = _number(w.get("used_percentage")) if isinstance(w, dict) else None
        if w is None or used is None or not 0 <= used <= 1000:
            continue
        out[key] = (used, _number(w.get("resets_at")))
    return out


def _payload_cost(payload: dict[str, Any]) -> float | None:
    """The client's API-priced cost of this session so far (`cost.total_cost_usd`)."""
    cost = payload.get("cost")
    usd = _number(cost.get("total_cost_usd")) if isinstance(cost, dict) else None
    return usd if usd is not None and usd >= 0 else None


def _kept(v: object, depth: int = 0) -> object:
    """A payload value as the state keeps it: numbers, booleans, short strings, and (two levels
    deep) short lists and objects of them; anything else is None."""
    from session_watcher.core.caps import model_name

    if v is None or isinstance(v, bool | int | float):
        return v
    if isinstance(v, str):
        return model_name(v)
    if depth < 2 and isinstance(v, list):
        return [_kept(x, depth + 1) for x in v[:8]]
    if depth < 2 and isinstance(v, dict):
        return {k: _kept(x, depth + 1) for k, x in list(v.items())[:8] if model_name(k)}
    return None


def cache_view(pc: object, now: float) -> dict[str, Any] | None:
    """What the status line shows of the client's `prompt_cache`: warm and seconds left, and the
    client's `last_miss_cause` when the last response itself was a miss (a cold start, live); None
    when the client did not say (older clients, before the first response)."""
    from session_watcher.core.eoq import TTL_SECONDS  # loaded already, with core.status

    if not isinstance(pc, dict) or not isinstance(pc.get("warm"), bool):
        return None
    expires, miss_at = _number(pc.get("expires_at")), _number(pc.get("last_miss_at"))
    left = None if expires is None else expires - now
    ttl_s = TTL_SECONDS.get(pc.get("ttl"))  # type: ignore[arg-type]
    if left is not None and ttl_s:  # never more than the cache lives (the countdown rounds up: 5:00, not 5:01)
        left = min(left, ttl_s)
    view: dict[str, Any] = {"warm": pc["warm"] and (left is None or left > 0), "left": left, "miss": []}
    cause = pc.get("last_miss_cause")
    causes = cause.get("causes") if isinstance(cause, dict) else None
    if expires is not None and miss_at is not None and ttl_s and miss_at >= expires - ttl_s - 5 \
            and isinstance(causes, list):
        # the client's identifiers (likely_server_side, model_changed); anything else is not shown
        view["miss"] = [c for c in causes if isinstance(c, str) and 0 < len(c) <= 40
                        and all(ch.isascii() and (ch.isalnum() or ch == "_") for ch in c)][:2]
    return view


def _number(v: object) -> float | None:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None


def run(raw: bytes, env: Any, verbose: bool = False) -> str:
    from session_watcher.core.render import render
    from session_watcher.core.status import cold_now, status_document
    from session_watcher.state import shell, store

    try:
        from session_watcher.core.fastjson import load_payload  # NaN, 1e400 and the like: null

        payload = load_payload(raw) if raw.strip() else {}
    except ValueError:
        payload = {}
    if not isinstance(payload, dict):
        payload = {}
    columns = _columns(env)
    color = not env.get("NO_COLOR")
    session_id, transcript, cwd = shell.payload_inputs(payload)
    if session_id is None:
        return "○ session-watcher: no session"
    seen = _payload_context(payload)
    limits = _payload_limits(payload)
    now = time.time()
    try:
        if not store.check_folder():
            return "○ session-watcher: waiting for the first hook"
    except OSError:  # a link or another user's folder in place of ours: never used
        return f"○ session-watcher: state folder refused (see `{_command()} doctor`)"
    workspace = payload.get("workspace")
    stated = workspace.get("project_dir") if isinstance(workspace, dict) else None
    sample = (limits, _payload_cost(payload), now) if limits else None
    quiet = _as_saved(session_id, transcript, (cwd, stated), seen, sample)
    got = quiet or _refresh(session_id, (transcript, cwd, stated), seen, env, sample)
    if got is None:  # the lock is busy (a hook folds), or the disk is read-only: the state as saved
        from session_watcher.core.errors import StateRejected

        try:
            state = shell.saved(session_id)
        except (StateRejected, OSError):
            state = None
        if state is None:
            return "○ session-watcher: waiting for the first hook"
        state["context"].update(seen)
        if sample:  # shown, not kept: nothing is written without the lock
            _observe_plan(state["context"], *sample)
        cfg, _ = shell.load_config(state)
    else:
        state, cfg = got
    cache = cache_view(state["context"].get("promptCache"), now)
    # the one restart saving (eoq.restart_saving), as the cold-cache guard and `status` price it
    # now: with a cold cache (the client says so, or the last request is older than the cache
    # lives) the re-write a restart spares counts, and a handoff the guard prepared is the restart
    doc = status_document(state, cfg, with_buckets=False, cold=cold_now(state, cfg, now), now=now)
    if cache and "promptCache" not in seen:  # a miss of an earlier process (before `--resume`) is not news
        cache["miss"] = []
    doc["cache"] = cache
    if doc["plan"] is not None:
        doc["plan"]["live"] = bool(limits)  # a subscriber's line: what this payload said
    return render(doc, columns, color, verbose)


def _as_saved(session_id: str, transcript: str | None, where: tuple[str | None, object], seen: ContextSeen,
              sample: PlanSample | None) -> tuple[State, Config] | None:
    """The state as saved and its config when this run has nothing to fold and nothing to record
    (the usual refresh: a hook folded the new lines already), read without the lock and without the
    fold's modules (the engine's fold, the reader, the lock, the writer); None when it has."""
    from session_watcher.core.errors import StateRejected
    from session_watcher.state import store

    path = store.session_file(session_id)
    try:
        if transcript is not None and sysos.stat(transcript).st_mtime_ns > sysos.stat(path).st_mtime_ns:
            return None  # written to since the state was saved: lines to fold (two stats, no load)
        state = store.load(path, session_id, readonly=True)
    except (StateRejected, OSError, ValueError):
        return None
    if state is None or not _nothing_new(state, transcript, where, seen, sample):
        return None
    from session_watcher.state.shell import load_config

    cfg, _ = load_config(state)
    return state, cfg


def _nothing_new(state: State, transcript: str | None, where: tuple[str | None, object], seen: ContextSeen,
                 sample: PlanSample | None) -> bool:
    """Whether `_refresh` would change nothing but the plan's sample time: the transcript ends at the
    cursor (same file, same size), the payload says what the state holds, the place is recorded, and a
    subscriber's plan use and cost are those of a sample taken within PLAN_RESAMPLE seconds."""
    ctx: Any = state["context"]
    cwd, stated = where
    if (ctx["cwd"] is None and cwd) or (ctx["project"] is None and (cwd or stated or ctx["cwd"])):
        return False
    if any(ctx.get(key) != value for key, value in seen.items()):
        return False
    if sample is not None and not _same_sample(ctx.get("plan"), *sample):
        return False
    return transcript is None or _at_cursor(state, transcript)


def _at_cursor(state: State, transcript: str) -> bool:
    """The transcript is the cursor's file and ends where the fold stopped (nothing to read)."""
    cursor = state["cursor"]
    if not isinstance(cursor, dict) or cursor.get("path") != transcript or cursor.get("skip"):
        return False
    try:
        st = sysos.stat(transcript)
    except (OSError, ValueError):  # gone, or a NUL in the path: the locked path says so
        return False
    return (cursor.get("dev"), cursor.get("ino"), cursor.get("offset")) == (st.st_dev, st.st_ino, st.st_size)


PLAN_RESAMPLE = 60.0  # seconds an unchanged plan sample is not written again (only its time would change)


def _same_sample(plan: object, limits: Limits, cost: float | None, now: float) -> bool:
    """A subscriber's sample that `plan_observe` would only re-stamp: the same cost, each window's
    same use and reset time, the last sample taken less than PLAN_RESAMPLE seconds ago."""
    if not isinstance(plan, dict) or plan.get("cost") != cost or not isinstance(plan.get("at"), int | float) \
            or not 0 <= now - plan["at"] < PLAN_RESAMPLE:
        return False
    windows = plan.get("windows")
    if not isinstance(windows, dict) or windows.keys() != limits.keys():
        return False
    return all(isinstance(w := windows[key], dict) and (w.get("used"), w.get("resetsAt")) == limits[key]
               for key in limits)


def _observe_plan(ctx: Any, limits: Limits, cost: float | None, now: float) -> None:
    from session_watcher.core.status import plan_observe

    ctx["plan"] = plan_observe(ctx.get("plan"), limits, cost, now)


def _refresh(session_id: str, where: tuple[str | None, str | None, object], seen: ContextSeen, env: Any,
             sample: PlanSample | None) -> tuple[State, Config] | None:
    """With the lock free at once: record what the status line was told (the window, the model, a
    subscriber's plan use, and before any hook ran where the session runs: `where` is the payload's
    transcript, cwd and project folder), fold new lines, save. None when the lock is busy or cannot
    be had (a read-only disk)."""
    from session_watcher.base.paths import write_fails
    from session_watcher.core.errors import LockTimeout, NotOurs, StateTooLarge
    from session_watcher.state import session, shell

    transcript, cwd, stated_project = where
    start = time.monotonic()
    try:
        with shell.open_session(session_id, 0) as opened:
            opened.state["context"].update(seen)
            if sample:  # one more sample of the plan's use
                _observe_plan(opened.state["context"], *sample)
            if cwd is None and transcript and opened.state["context"]["cwd"] is None:  # a payload naming none
                from session_watcher.hooks.run import transcript_folder

                cwd = transcript_folder(transcript)
            opened.place(cwd, stated_project, env)
            cfg = opened.config()
            trace: list[dict[str, Any]] | None = [] if env.get("SESSION_WATCHER_TRACE") else None
            # the status line cannot deliver the alerts the fold fires: the next hook will
            opened.sync(transcript, cfg, start + FOLD_BUDGET, trace=trace, pending=True)
            try:
                opened.save()
            except (OSError, StateTooLarge) as exc:  # a full disk: the line still shows the state
                if isinstance(exc, NotOurs) or (isinstance(exc, OSError) and exc.errno not in write_fails()):
                    raise
                shell.log_once("save", f"cannot save the session state: {exc}")
                return opened.state, cfg
            if trace:
                session.append_trace(env["SESSION_WATCHER_TRACE"], trace)
            return opened.state, cfg
    except LockTimeout:
        return None
    except OSError as exc:  # no lock to be had (a read-only or full disk): the state as saved
        if isinstance(exc, NotOurs) or exc.errno not in write_fails():
            raise
        return None


def _columns(env: Any) -> int:
    try:
        return max(20, int(env.get("COLUMNS", "80")))
    except ValueError:
        return 80
