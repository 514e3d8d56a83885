"""The cold-cache guard as Claude Code runs it: `session-watcher hook UserPromptSubmit` on real sessions
whose timestamps are shifted so that their last API call was N minutes ago, in a temp home."""

from __future__ import annotations

import json
import os
import re
import time
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import filelock
import pytest

from bench import synth
from session_watcher.hooks.prompt import lock_wait, warm_and_nothing_queued
from session_watcher.hooks.run import EVENTS, PROMPT_LOCK_TIMEOUT, _unshown
from tests.oracle import TRANSCRIPTS, hook, payload, statusline, sw
from tests.statefile import load_state, state_file

pytestmark = pytest.mark.slow  # starts processes (tests/conftest.py: the quick tier)

if TYPE_CHECKING:
    import subprocess

    from session_watcher.core.shapes import Alert, Config, State

FIVE_MIN = TRANSCRIPTS / "fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"  # 5m writes, L 76,178, opus-4-6
ONE_HOUR = TRANSCRIPTS / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"  # 1h writes, L 77,272, opus-4-6
CLIENT_332 = TRANSCRIPTS.parent / "real-client-2.1.332"


def _ts(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def shifted(src: Path, dst: Path, minutes_ago: float) -> float:
    """Copy `src` with every timestamp moved so that its last main-chain API call (its last assistant
    line) was `minutes_ago` before now; returns that call's new time."""
    lines = src.read_bytes().split(b"\n")
    docs = [json.loads(line) if line.strip() else None for line in lines]
    last = max(_ts(d["timestamp"]) for d in docs if d and d.get("type") == "assistant"
               and not d.get("isSidechain") and isinstance(d.get("timestamp"), str))
    delta = time.time() - minutes_ago * 60 - last
    out = []
    for line, d in zip(lines, docs, strict=True):
        if d and isinstance(d.get("timestamp"), str):
            d["timestamp"] = synth.iso(_ts(d["timestamp"]) + delta)
            out.append(synth.line(d)[:-1])
        else:
            out.append(line)
    dst.write_bytes(b"\n".join(out))
    return last + delta


def session(tmp_path: Path, src: Path, minutes_ago: float, sid: str = "g1") -> Path:
    """A shifted copy of `src`, folded to its end by Stop hooks as it would be live. The session's own
    alerts are not the guard's: they are taken out, whether a Stop hook queued them for the next prompt
    or left them pending for it (a run whose fold budget ran out as it reached the end: how many runs a
    loaded machine takes decides which), so no test depends on what a budgeted run got done."""
    t = tmp_path / f"{sid}.jsonl"
    shifted(src, t, minutes_ago)
    for _ in range(100):  # a run folds for 0.4 s: a loaded machine takes more than one for a long session
        assert hook("Stop", payload(sid, t)).returncode == 0
        if (load_state(sid).get("cursor") or {}).get("offset") == t.stat().st_size:
            break
    drop_outbox(sid)
    return t


def recorded(path: Path) -> list[dict[str, Any]]:
    """The payloads the real client gave, as recorded in a fixture file."""
    return [json.loads(line)["payload"] for line in path.read_text().splitlines() if line.strip()]


def drop_outbox(sid: str) -> None:
    """Nothing queued for the next prompt: the outbox emptied, no alert left pending."""
    from session_watcher.state import store

    state = store.load(str(state_file(sid)), sid)
    assert state is not None
    pending = [a.pop("pending") for a in state["alerts"] if a.get("pending")]
    if state.pop("outbox", None) or pending:
        store.save(str(state_file(sid)), state)


def prompt(sid: str, t: Path, text: str = "carry on") -> subprocess.CompletedProcess[bytes]:
    return hook("UserPromptSubmit", payload(sid, t, "UserPromptSubmit", prompt=text, prompt_id="p1"))


def said(proc: subprocess.CompletedProcess[bytes]) -> dict[str, Any] | None:
    """The hook's output: nothing, or exactly one JSON object for the user (never for the model)."""
    assert proc.returncode == 0
    assert proc.stderr == b""
    if not proc.stdout:
        return None
    lines = proc.stdout.decode().splitlines()
    assert len(lines) == 1
    out: dict[str, Any] = json.loads(lines[0])
    assert "hookSpecificOutput" not in out
    assert "additionalContext" not in out
    # a held prompt: the guard's line is the reason; what the session queued may come with it
    assert set(out) in ({"systemMessage"}, {"decision", "reason"}, {"decision", "reason", "systemMessage"}), out
    return out


def line(out: dict[str, Any] | None) -> str:
    """What the user reads: the `systemMessage`, or the reason a prompt was held back."""
    assert out is not None
    return str(out.get("systemMessage") or out["reason"])


def config(text: str) -> None:
    cfg = Path(os.environ["SESSION_WATCHER_HOME"]) / "config" / "config.toml"
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_text(text)


def pending_handoffs() -> list[dict[str, Any]]:
    """The handoffs waiting for a fresh session (state.handoffs' pending folder)."""
    folder = Path(os.environ["SESSION_WATCHER_HOME"]) / "state" / "handoffs" / "pending"
    return [json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))] if folder.is_dir() else []


def warnings_logged() -> list[dict[str, Any]]:
    log = Path(os.environ["SESSION_WATCHER_HOME"]) / "state" / "guard-warnings.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


# ----------------------------------------------------------------------------- warm, cold, silent

def test_five_minute_session_two_minutes_ago_is_silent(tmp_path: Path) -> None:
    t = session(tmp_path, FIVE_MIN, 2)
    assert said(prompt("g1", t)) is None
    assert warnings_logged() == []


def test_five_minute_session_twenty_minutes_ago_gets_tokens_and_dollars(tmp_path: Path) -> None:
    t = session(tmp_path, FIVE_MIN, 20)
    out = said(prompt("g1", t))
    assert out is not None
    assert out["decision"] == "block"  # the default, "ask": x >= guard_x, so the prompt is held back once
    assert set(out) == {"decision", "reason"}  # nothing else was queued
    text = out["reason"]
    assert text.startswith("session-watcher: cold cache (last call 20 min ago; the 5-minute cache has expired). "
                           "Nothing was sent.")
    # the last call's whole context, 76,350 (it read 76,178), less the 17,842 shared prefix a cold call
    # still reads: 58,508 re-written at the 5-minute write price of Opus 4.6 ($6.25/MTok), the prefix
    # read at $0.50: $0.37
    assert "Continue: send this prompt again within a minute, re-writing 59k tokens ($0.37)." in text
    # the whole context, which /compact reads (it said "reads the same 76k" right after "re-writing 59k")
    assert "Or /compact: reads all 76k of the context cold once ($0.37)" in text
    # the fresh session: /clear alone, the handoff prepared; nothing named sends the cold conversation
    pending = pending_handoffs()
    assert len(pending) == 1
    doc = pending[0]
    assert (doc["parentSession"], doc["by"]) == ("g1", "guard")
    carry = f"~{round(doc['carryTokens'] / 1000)}k tokens (${doc['carryUsd']:.2f})"
    assert carry == "~33k tokens ($0.10)"  # bDefault 31.9k and the note
    # what a restart now saves (the status line's one figure: eoq.restart_saving, cold, at the handoff's K)
    assert re.search(r"Or a fresh session, \$0\.\d\d less over the next ~\d+ calls: a handoff is ready; clear the "
                     r"input line \(Ctrl\+U\), then /clear, and the new session starts with it: it carries "
                     + re.escape(carry) + r"\.$", text), text
    assert "session-watcher handoff" not in text
    assert "session-watcher:handoff" not in text
    [logged] = warnings_logged()
    assert (logged["sessionId"], logged["mode"], logged["tokens"], logged["ttl"]) == ("g1", "ask", 76_350, "5m")
    assert logged["asked"] is True
    assert logged["call"] == load_state("g1")["engine"]["calls"] + 1


def test_one_hour_session_twenty_minutes_ago_is_silent(tmp_path: Path) -> None:
    t = session(tmp_path, ONE_HOUR, 20)
    assert said(prompt("g1", t)) is None


def test_one_hour_session_ninety_minutes_ago_warns_at_one_hour_prices(tmp_path: Path) -> None:
    config('guard = "warn"\n')
    t = session(tmp_path, ONE_HOUR, 90)
    out = said(prompt("g1", t))
    assert out is not None
    assert "(last call 1 h 30 min ago; the 1-hour cache has expired)" in out["systemMessage"]
    # ~77k, less the 18k shared prefix it reads: 59k x $10/MTok and 18k x $0.50
    assert "this prompt re-writes 59k tokens ($0.60)" in out["systemMessage"]
    assert out["systemMessage"].endswith("; a fresh session would carry ~34k tokens ($0.17).")
    assert pending_handoffs() == []  # the prompt went ahead: no fresh session to prepare


def test_a_session_with_no_call_yet_is_silent(tmp_path: Path) -> None:
    t = tmp_path / "new.jsonl"
    first_user = next(line for line in FIVE_MIN.read_text().splitlines() if '"type":"user"' in line)
    t.write_text(first_user + "\n")
    assert said(prompt("new", t)) is None


def test_garbage_stdin_exits_0_silently() -> None:
    for raw in (b"\x00\xffnot json{", b"[1, 2]", b'{"session_id": 5}', b"", b'{"session_id": "../x", "prompt": 1}'):
        proc = hook("UserPromptSubmit", raw)
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")


def test_the_warning_comes_even_when_its_log_cannot_be_written(tmp_path: Path) -> None:
    t = session(tmp_path, FIVE_MIN, 20)
    log = Path(os.environ["SESSION_WATCHER_HOME"]) / "state" / "guard-warnings.jsonl"
    log.mkdir(parents=True)  # a folder where the log belongs
    assert "re-writing 59k tokens ($0.37)" in line(said(prompt("g1", t)))


def test_a_prompt_on_a_current_warm_state_does_not_rewrite_it(tmp_path: Path) -> None:
    t = session(tmp_path, FIVE_MIN, 1)
    before = state_file("g1").stat().st_mtime_ns
    assert said(prompt("g1", t)) is None
    assert state_file("g1").stat().st_mtime_ns == before


def test_new_lines_are_folded_before_judging(tmp_path: Path) -> None:
    """At the prompt the state may be behind its transcript (the async hook that folds the turn's
    last call has not run): a state that looks cold is brought up to date before judging, and the
    call it had missed, a moment ago, makes the cache warm."""
    t = session(tmp_path, FIVE_MIN, 20)
    last_folded = load_state("g1")["engine"]["lastTs"]
    append_cold_call(t)
    out = said(prompt("g1", t))
    # no warning; the fold may hand on the engine's own alert about the call it found
    assert out is None or "cold cache" not in out["systemMessage"]
    assert load_state("g1")["engine"]["lastTs"] > last_folded + 1000


def test_how_long_a_prompt_waits_for_the_lock(tmp_path: Path) -> None:
    """Warm and current: no wait, nothing to do. Warm and behind: fold only if the lock is free.
    Cold, or no state yet: the guard's line is the point, so a neighbour's fold is waited out."""
    t = session(tmp_path, FIVE_MIN, 1)
    warm = warm_and_nothing_queued("g1")
    assert warm is not None
    assert lock_wait(warm, str(t), PROMPT_LOCK_TIMEOUT) is None
    append_cold_call(t)
    assert lock_wait(warm, str(t), PROMPT_LOCK_TIMEOUT) == 0.0
    t2 = session(tmp_path, FIVE_MIN, 20, "g2")  # its last call 20 minutes ago: cold
    assert warm_and_nothing_queued("g2") is None
    assert lock_wait(None, str(t2), EVENTS["UserPromptSubmit"]["lock"]) == PROMPT_LOCK_TIMEOUT > 0.25


def test_the_lock_free_read_is_the_stores_read_only_one(tmp_path: Path) -> None:
    """Before a prompt the hook reads the saved state without the lock as every reader does
    (state.store, read-only): a warm state planted through a symlink, one of a newer schema or one
    over the size limit is no warm state, and the lock-free read leaves each where it is; the
    locked run that follows quarantines it."""
    session(tmp_path, FIVE_MIN, 1)
    main = state_file("g1")
    assert warm_and_nothing_queued("g1") is not None
    warm = main.read_bytes()
    elsewhere = tmp_path / "planted.json"
    elsewhere.write_bytes(warm)
    main.unlink()
    main.symlink_to(elsewhere)
    assert warm_and_nothing_queued("g1") is None
    assert main.is_symlink()
    main.unlink()
    newer = json.loads(warm)
    newer["schema"] += 1  # a newer program's
    main.write_text(json.dumps(newer))
    assert warm_and_nothing_queued("g1") is None
    assert json.loads(main.read_bytes())["schema"] == newer["schema"]
    from session_watcher.state import store

    main.write_bytes(warm[:-1] + b" " * (store.MAX_STATE_BYTES + 1 - len(warm)) + b"}")
    assert warm_and_nothing_queued("g1") is None
    assert main.stat().st_size > store.MAX_STATE_BYTES


def test_a_warm_prompt_does_not_wait_for_the_lock(tmp_path: Path) -> None:
    """A warm cache is known from the saved state alone: the prompt is not held behind another
    hook of the session (an async Stop still folding)."""
    t = session(tmp_path, FIVE_MIN, 1)
    with filelock.FileLock(str(state_file("g1")) + ".lock"):
        assert said(prompt("g1", t)) is None
    t2 = session(tmp_path, FIVE_MIN, 20, "g2")
    with filelock.FileLock(str(state_file("g2")) + ".lock"):  # cold: it needs the lock, and gives up
        assert said(prompt("g2", t2)) is None
    assert said(prompt("g2", t2)) is not None


# ----------------------------------------------------------------------------- modes

@pytest.mark.parametrize("mode", ["", 'guard = "ask"\n', 'guard = "block"\n'])  # block: ask's old name
def test_ask_holds_the_prompt_back_once_then_a_prompt_within_the_minute_goes_ahead(tmp_path: Path, mode: str
                                                                                   ) -> None:
    config(mode)
    t = session(tmp_path, FIVE_MIN, 20)
    out = said(prompt("g1", t, "carry on"))
    assert out is not None
    assert out["decision"] == "block"
    assert "carry on" not in state_file("g1").read_text()  # the prompt's text is kept nowhere
    assert said(prompt("g1", t, "carry on, please")) is None  # the user chose: it goes ahead
    assert len(warnings_logged()) == 1


def test_ask_asks_again_after_the_minute(tmp_path: Path) -> None:
    from session_watcher.state import store

    t = session(tmp_path, FIVE_MIN, 20)
    assert said(prompt("g1", t))["decision"] == "block"  # type: ignore[index]
    state = store.load(str(state_file("g1")), "g1")
    assert state is not None
    state["guard"]["blocked"][-1] -= 61  # the choice was shown 61 s ago
    store.save(str(state_file("g1")), state)
    assert said(prompt("g1", t))["decision"] == "block"  # type: ignore[index]
    assert said(prompt("g1", t)) is None


def test_below_guard_x_ask_only_says_what_the_prompt_rewrites(tmp_path: Path) -> None:
    config("guard_x = 50\n")  # x is about 2.4 here
    t = session(tmp_path, FIVE_MIN, 20)
    assert said(prompt("g1", t)) == {"systemMessage": "session-watcher: cold cache (last call 20 min ago; the "
                                                      "5-minute cache has expired): this prompt re-writes 59k "
                                                      "tokens ($0.37)."}
    assert warnings_logged()[0]["asked"] is False


def test_both_routes_hold_with_the_same_words(tmp_path: Path) -> None:
    """The plugin route and the install.sh route: /clear alone, no command of either route."""
    t = session(tmp_path, FIVE_MIN, 20)
    plugin = line(said(hook("UserPromptSubmit", payload("g1", t, "UserPromptSubmit", prompt="go"),
                            env={**os.environ, "CLAUDE_PLUGIN_ROOT": str(tmp_path)})))
    t2 = session(tmp_path, FIVE_MIN, 20, "g2")
    assert line(said(prompt("g2", t2, "go"))) == plugin
    assert "clear the input line (Ctrl+U), then /clear" in plugin


def test_off_is_silent_and_slash_commands_pass(tmp_path: Path) -> None:
    t = session(tmp_path, FIVE_MIN, 20)
    assert said(prompt("g1", t, "/compact")) is None
    config('guard = "off"\n[notify]\nchannels = ["desktop"]\nfallback = "none"\n')  # nothing printed
    assert said(prompt("g1", t)) is None
    assert warnings_logged() == []


@pytest.mark.parametrize("channels", ['channels = ["message"]\nfallback = "none"', 'channels = ["desktop"]'])
def test_off_tells_a_cold_return_at_its_own_prompt_and_not_at_a_later_one(tmp_path: Path, channels: str) -> None:
    """`guard = "off"`: the prompt is neither held nor warned (no guard's line, nothing logged), but the
    cold return past guard_x is an alert all the same: its `message` channel (the fallback `message`
    where the desktop cannot be reached, as here) tells it at its own prompt, before its call, with
    the saving the fold of that call records; no later prompt shows it (its call made the re-write).
    It was told at no prompt at all: a later prompt no longer shows a cold return's queued alert."""
    from session_watcher.core.numbers import dollars

    config(f'guard = "off"\n[notify]\n{channels}\n')
    env = {k: v for k, v in os.environ.items() if k != "DBUS_SESSION_BUS_ADDRESS"}
    t = session(tmp_path, FIVE_MIN, 20)
    proc = hook("UserPromptSubmit", payload("g1", t, "UserPromptSubmit", prompt="carry on", prompt_id="p1"), env=env)
    out = said(proc)
    assert out is not None
    assert set(out) == {"systemMessage"}, out
    text = out["systemMessage"]
    assert "Your cache expired: a fresh start is cheaper now" in text, text
    assert "/session-watcher:handoff" not in text  # the cold form: nothing that goes to the model
    assert warnings_logged() == []
    append_cold_call(t)
    assert hook("Stop", payload("g1", t)).returncode == 0
    [alert] = [a for a in load_state("g1")["alerts"] if a["kind"] == "guard"]
    assert f"Restarting now saves {dollars(alert['savingUsd'])}" in text, (alert, text)
    assert said(prompt("g1", t)) is None
    assert said(prompt("g1", t, "/clear")) is None


def test_a_bad_guard_value_is_refused_by_config_set() -> None:
    proc = sw("config", "set", "guard", "loud")
    assert proc.returncode != 0
    assert b"guard" in proc.stderr
    assert sw("config", "set", "guard", "block").returncode == 0


# ----------------------------------------------------------------------------- what the client says

def test_the_clients_prompt_cache_is_preferred_and_named(tmp_path: Path) -> None:
    """A 5-minute session 6 minutes after its last call's line, whose response the client says ended
    two minutes later: warm by the client's expiry, cold by the TTL alone."""
    t = tmp_path / "g1.jsonl"
    last = shifted(FIVE_MIN, t, 6)
    assert hook("Stop", payload("g1", t)).returncode == 0
    drop_outbox("g1")
    # a real 2.1.332 status-line payload, its prompt_cache's expiry set to match this session
    status_in = next(p for p in recorded(CLIENT_332 / "tui" / "statusline.jsonl") if p.get("prompt_cache"))
    assert status_in["prompt_cache"]["ttl"] == "5m"
    status_in.update(session_id="g1", transcript_path=str(t), cwd=str(tmp_path))
    status_in["prompt_cache"]["expires_at"] = int(last + 120 + 300)
    assert statusline(status_in).returncode == 0
    assert said(prompt("g1", t)) is None
    doc = json.loads(sw("status", "--session", "g1", "--json").stdout)
    assert (doc["coldCache"]["source"], doc["coldCache"]["cold"]) == ("prompt_cache", False)
    text = sw("doctor", env={**os.environ, "COLUMNS": "1000"}).stdout.decode()  # one line each
    assert "newest session: warm by Claude Code's own countdown (5m cache, lasts 5 min)" in text, text


def test_a_resume_that_says_expired_is_cold_even_within_the_ttl(tmp_path: Path) -> None:
    t = session(tmp_path, ONE_HOUR, 20)
    # the real 2.1.332 payload of a resume 601 s after a 5-minute session's last response
    start = next(p for p in recorded(CLIENT_332 / "resume_5m" / "hooks.jsonl") if p.get("source") == "resume")
    assert start["prompt_cache_likely_expired"] is True
    start.update(session_id="g1", transcript_path=str(t), cwd=str(tmp_path))
    assert said(hook("SessionStart", start)) is None
    assert "Claude Code says the cache has likely expired" in line(said(prompt("g1", t)))
    doc = json.loads(sw("status", "--session", "g1", "--json").stdout)
    assert (doc["coldCache"]["source"], doc["coldCache"]["cold"]) == ("session_start", True)
    text = sw("doctor", env={**os.environ, "COLUMNS": "1000"}).stdout.decode()  # one line each
    assert "newest session: cold by Claude Code's word at the resume (1h cache, lasts 60 min)" in text, text


def test_a_resume_of_absurd_seconds_reads_as_a_long_time_not_a_number_of_days(tmp_path: Path) -> None:
    """`seconds_since_last_response: 1e20` in a resume's payload (a client's or a hand's): doctor said
    "last call 1157407407407407 days ago"; every span past 10,000 days (core.numbers.SPAN_MAX) is said
    "over 10,000 days", the figure itself kept as it came (status --json)."""
    t = session(tmp_path, ONE_HOUR, 20)
    start = next(p for p in recorded(CLIENT_332 / "resume_5m" / "hooks.jsonl") if p.get("source") == "resume")
    start.update(session_id="g1", transcript_path=str(t), cwd=str(tmp_path), seconds_since_last_response=1e20)
    assert said(hook("SessionStart", start)) is None
    told = line(said(prompt("g1", t)))
    doc = json.loads(sw("status", "--session", "g1", "--json").stdout)
    assert (doc["coldCache"]["source"], doc["coldCache"]["idleSeconds"] >= 1e20) == ("session_start", True)
    text = sw("doctor", env={**os.environ, "COLUMNS": "1000"}).stdout.decode()
    assert "last call over 10,000 days ago" in text, text
    status = sw("status", "--session", "g1", env={**os.environ, "COLUMNS": "1000"}).stdout.decode()
    for shown in (told, text, status):
        assert not re.search(r"\d{6,} days", shown), shown


def test_status_and_doctor_say_which_source(tmp_path: Path) -> None:
    session(tmp_path, FIVE_MIN, 20)
    doc = json.loads(sw("status", "--session", "g1", "--json").stdout)
    cc = doc["coldCache"]
    assert (cc["source"], cc["ttl"], cc["lifetimeSeconds"], cc["cold"]) == ("ttl", "5m", 300.0, True)
    assert (cc["edgeSeconds"], cc["sure"]) == (480.0, True)
    assert 1190 < cc["idleSeconds"] < 1500
    text = sw("doctor", env={**os.environ, "COLUMNS": "1000"}).stdout.decode()  # one line each
    # the source in words (it stood as its identifier: "cold by ttl")
    assert ("guard      ask (cold-cache guard); newest session: cold by the documented lifetime (5m cache, "
            "lasts 5 min), last call 2") in text


def test_the_inferred_cliff_file_sets_the_lifetime(tmp_path: Path) -> None:
    """`report` writes the cliffs; with a 5-minute cliff inferred at 30 minutes, 20 minutes is warm."""
    cliff = Path(os.environ["SESSION_WATCHER_HOME"]) / "state" / "cliff.json"
    cliff.parent.mkdir(parents=True, exist_ok=True)
    cliff.write_text('{"5m": 1800, "1h": null}')
    t = session(tmp_path, FIVE_MIN, 20)
    assert said(prompt("g1", t)) is None
    doc = json.loads(sw("status", "--session", "g1", "--json").stdout)
    assert (doc["coldCache"]["source"], doc["coldCache"]["lifetimeSeconds"]) == ("cliff", 1800.0)
    text = sw("doctor", env={**os.environ, "COLUMNS": "1000"}).stdout.decode()  # one line each
    assert "newest session: warm by the lifetime your own returns show (`report`) (5m cache, lasts 30 min)" in text


# ----------------------------------------------------------------------------- one message per cold return

def test_the_engines_guard_alert_is_not_delivered_twice() -> None:
    """Once the prompt hook showed the cold return before call 158, the `guard` alert the fold
    records on call 158 stays in the state (marked) but is not sent again; others still go out."""
    state = cast("State", {"guard": {"shown": [1000.0, 158]}})  # the keys _unshown reads, here and below
    guard_alert = cast("Alert", {"kind": "guard", "call": 158})
    gate = cast("Alert", {"kind": "gate", "call": 158})
    later = cast("Alert", {"kind": "guard", "call": 170})
    assert _unshown(state, [guard_alert, gate, later]) == [gate, later]
    assert guard_alert["shownBy"] == "prompt"
    assert _unshown(cast("State", {}), [guard_alert]) == [guard_alert]


def append_cold_call(t: Path) -> None:
    """The prompt's own API call, now: the session's last call again with a new id, reading nothing
    and re-writing the context (what a call on an expired cache looks like)."""
    lines = t.read_text().splitlines()
    last = json.loads(next(line for line in reversed(lines) if '"type":"assistant"' in line))
    usage = last["message"]["usage"]
    context = usage.get("cache_read_input_tokens", 0) + usage.get("cache_creation_input_tokens", 0)
    last["message"]["usage"] = synth.usage(0, context, usage["input_tokens"], usage["output_tokens"])
    last["message"]["id"] += "-cold"
    last["requestId"] = last.get("requestId", "req") + "-cold"
    last["uuid"] = "00000000-0000-4000-8000-00000000c01d"
    last["timestamp"] = synth.iso(time.time())
    with t.open("ab") as fh:
        fh.write(synth.line(last))


def test_a_cold_return_told_at_the_prompt_is_not_notified_again(tmp_path: Path) -> None:
    """The fold of the prompt's call records the engine's `guard` alert; the prompt hook already
    showed it, so it is not delivered again (without the prompt hook it is: the async Stop hook
    queues it and the next prompt's hook shows it)."""
    config('[notify]\nchannels = ["message"]\n')
    told, untold = session(tmp_path, FIVE_MIN, 20, "told"), session(tmp_path, FIVE_MIN, 20, "untold")
    assert said(prompt("told", told)) is not None
    for sid, t in (("told", told), ("untold", untold)):
        append_cold_call(t)
        assert said(hook("Stop", payload(sid, t))) is None  # an async hook prints nothing
        state = load_state(sid)
        guards = [a for a in state["alerts"] if a["kind"] == "guard"]
        assert len(guards) == 1, (sid, state["alerts"])
        assert guards[0]["call"] == state["engine"]["calls"]
        after = said(prompt(sid, t))  # the next prompt: the cache is warm again
        if sid == "told":
            assert guards[0].get("shownBy") == "prompt"
            assert after is None
        else:
            assert "shownBy" not in guards[0]
            assert after is None
            assert not load_state(sid).get("outbox")


def _idle_session(t: Path, compacted: bool) -> None:
    """A 1-hour session of 252k tokens whose last call was 75 minutes ago; `compacted`: Claude Code
    2.1.332 compacted it while idle, at minute 54 (its idleCompaction), and no call came since."""
    now = time.time()

    def call(n: int, ago_min: float, cr: int, cw: int) -> dict[str, Any]:
        return {"type": "assistant", "isSidechain": False, "timestamp": synth.iso(now - ago_min * 60),
                "requestId": f"req_{n}", "message": {
                    "id": f"msg_{n}", "model": "claude-opus-4-6", "role": "assistant",
                    "content": [{"type": "text", "text": "ok"}],
                    "usage": {"input_tokens": 3, "cache_read_input_tokens": cr, "cache_creation_input_tokens": cw,
                              "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": cw},
                              "output_tokens": 5}}}

    lines = [call(1, 80, 0, 250_000), call(2, 75, 250_000, 2_000)]
    if compacted:
        lines.append({"type": "system", "subtype": "compact_boundary", "isSidechain": False,
                      "timestamp": synth.iso(now - 21 * 60), "content": "Conversation compacted",
                      "compactMetadata": {"trigger": "auto", "preTokens": 252_003}})
    t.write_text("".join(json.dumps(d) + "\n" for d in lines))


def test_no_warning_about_a_cache_an_idle_compaction_already_handled(tmp_path: Path) -> None:
    for compacted in (False, True):
        sid = f"idle-{compacted}"
        t = tmp_path / f"{sid}.jsonl"
        _idle_session(t, compacted)
        assert hook("Stop", payload(sid, t)).returncode == 0
        drop_outbox(sid)
        out = said(prompt(sid, t))
        if compacted:
            assert out is None
        else:
            assert "this prompt re-writes 252k tokens ($2.52)" in line(out)  # 1-hour writes: $10/MTok


# ----------------------------------------------------------------------------- the handoff the guard prepares

def test_a_held_prompt_leaves_a_handoff_that_clear_alone_takes(tmp_path: Path) -> None:
    """The fresh session the hold offers needs no request to the model: the guard saved the handoff
    pending for the project, and the synchronous SessionStart hook of the session /clear starts injects
    it (the note priced at what the reason quotes)."""
    t = session(tmp_path, FIVE_MIN, 20)
    reason = said(prompt("g1", t))["reason"]  # type: ignore[index]
    [doc] = pending_handoffs()
    assert f"it carries ~{round(doc['carryTokens'] / 1000)}k tokens" in reason
    start = payload("child", tmp_path / "child.jsonl", "SessionStart", source="clear")
    out = said_inject(hook("SessionStart", start, args=("inject",)))
    note = out["hookSpecificOutput"]["additionalContext"]
    assert note.startswith("[session-watcher handoff from session g1, written ")
    assert f"priced at {doc['carryTokens']:,} tokens" in note.split("\n", 1)[0]
    assert pending_handoffs() == []  # taken, once


def said_inject(proc: subprocess.CompletedProcess[bytes]) -> dict[str, Any]:
    assert (proc.returncode, proc.stderr) == (0, b"")
    out: dict[str, Any] = json.loads(proc.stdout)
    return out


def test_going_on_in_the_session_drops_the_guards_handoff(tmp_path: Path) -> None:
    """Sent again within the minute, or /compact: the user stays, and the handoff prepared for a fresh
    session is dropped (a later /clear must not start with a note of an older moment)."""
    t = session(tmp_path, FIVE_MIN, 20)
    assert said(prompt("g1", t))["decision"] == "block"  # type: ignore[index]
    assert len(pending_handoffs()) == 1
    assert said(prompt("g1", t)) is None  # goes ahead
    assert pending_handoffs() == []
    t2 = session(tmp_path, FIVE_MIN, 20, "g2")
    assert said(prompt("g2", t2))["decision"] == "block"  # type: ignore[index]
    assert said(prompt("g2", t2, "/compact keep the plan")) is None
    assert pending_handoffs() == []


def test_going_on_drops_the_guards_handoff_a_killed_take_left_claimed(tmp_path: Path) -> None:
    """A start killed between its claim of the guard's note and its end left the claim
    (`<key>.json.<pid>.taking`); the prompt that went on in the session did not see it, and the
    next /clear started with a note the user had gone on from. The drop puts it back and drops it."""
    folder = Path(os.environ["SESSION_WATCHER_HOME"]) / "state" / "handoffs" / "pending"
    t = session(tmp_path, FIVE_MIN, 20)
    assert said(prompt("g1", t))["decision"] == "block"  # type: ignore[index]
    [note] = folder.glob("*.json")
    note.rename(f"{note}.{(1 << 31) - 2}.taking")  # a pid past any pid_max: the take is gone
    assert said(prompt("g1", t)) is None  # goes ahead
    assert list(folder.iterdir()) == []
    start = payload("child", tmp_path / "child.jsonl", "SessionStart", source="clear")
    proc = hook("SessionStart", start, args=("inject",))
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")


def test_a_handoff_the_user_wrote_is_not_dropped(tmp_path: Path) -> None:
    """Only the guard's own handoff of this session goes when the session goes on: one the user asked
    for (`session-watcher handoff`) stays for the next fresh session."""
    from session_watcher.state import handoffs

    t = session(tmp_path, FIVE_MIN, 20)
    assert said(prompt("g1", t))["decision"] == "block"  # type: ignore[index]
    [doc] = pending_handoffs()
    del doc["by"]
    handoffs.write_pending(doc)
    assert said(prompt("g1", t)) is None  # goes ahead
    assert len(pending_handoffs()) == 1
    assert handoffs.drop(doc["project"], "g1", "guard") is False
    assert handoffs.drop(doc["project"], "other", "guard") is False


def test_short_of_the_edge_a_warning_and_no_hold(tmp_path: Path) -> None:
    """7 minutes after a 5-minute cache's last call: past its lifetime, short of the edge where the
    returns measured show it cold for sure; the prompt goes ahead with a line, no handoff is made."""
    t = session(tmp_path, FIVE_MIN, 7)
    out = said(prompt("g1", t))
    assert out is not None
    assert set(out) == {"systemMessage"}
    # the hook runs a few seconds after the session was written: "7 min ago", or "7 min 2 s ago"
    assert re.fullmatch(r"session-watcher: the cache may have expired \(last call 7 min( \d+ s)? ago; the 5-minute "
                        r"cache lasts ~5 min, surely gone after 8 min\): if so, this prompt re-writes "
                        r"59k tokens \(\$0\.37\)\.", out["systemMessage"]), out
    assert pending_handoffs() == []
    [logged] = warnings_logged()
    assert (logged["asked"], logged["sure"]) == (False, False)


def _queued_gate(tmp_path: Path, sid: str, start: float | None) -> Path:
    """A synthetic session whose gate (call 25) is news at its end (call 27), its first call at
    `start` (None: bench.synth's T0, months ago), folded by the async Stop hook, which queues the
    gate for the next prompt (the `message` channel: an async hook prints nothing)."""
    from tests.test_gate import overstaying

    folder = tmp_path / sid
    folder.mkdir()
    t: Path = overstaying(folder, calls=27, start=start)
    for _ in range(50):
        assert said(hook("Stop", payload(sid, t))) is None
        if (load_state(sid).get("cursor") or {}).get("offset") == t.stat().st_size:
            break
    assert load_state(sid).get("outbox"), "the gate is queued for the next prompt"
    return t


@pytest.mark.parametrize("guard", ["ask", "warn", "off"])
def test_a_gate_queued_before_a_break_past_the_edge_is_not_shown_at_the_prompt(tmp_path: Path, guard: str) -> None:
    """The async Stop hook queued the gate, priced on a warm cache; the user came back months later
    (past the cache's edge for sure): the prompt shows no gate, whatever `guard` says (ask holds
    with its own priced line, warn says it, off says nothing), and the queue is gone. It was shown
    beside the guard's line, "costs more than a fresh start", priced on the warm cache of then
    (issue 37: one price; only alerts first folded after the break were dropped, hooks.run._news)."""
    config(f'guard = "{guard}"\n[notify]\nchannels = ["message"]\nfallback = "none"\n')
    t = _queued_gate(tmp_path, "away", None)
    out = said(prompt("away", t))
    assert "costs more than a fresh start" not in json.dumps(out), out
    # nor its restart line, a handoff typed in the agent: at a cold cache it sends the cold conversation
    assert "/session-watcher:handoff" not in json.dumps(out)
    assert "! session-watcher handoff" not in json.dumps(out)
    if guard == "ask":
        assert out is not None
        assert out["decision"] == "block"
    assert not load_state("away").get("outbox")


def test_a_gate_queued_on_a_warm_cache_is_shown_at_the_prompt_at_the_status_lines_price(tmp_path: Path) -> None:
    """Without the break the queued gate comes at the next prompt, once, quoting what `status` says
    a restart saves at that moment (eoq.restart_saving: one price)."""
    from session_watcher.core.numbers import dollars

    config('[notify]\nchannels = ["message"]\nfallback = "none"\n')
    t = _queued_gate(tmp_path, "warm", time.time())
    out = said(prompt("warm", t))
    assert out is not None
    assert set(out) == {"systemMessage"}, out
    assert "This session now costs more than a fresh start" in out["systemMessage"]
    doc = json.loads(sw("status", "warm", "--json").stdout)
    assert doc["savingUsd"] > 0
    assert f"Restarting now saves {dollars(doc['savingUsd'])} over the next" in out["systemMessage"], out
    assert not load_state("warm").get("outbox")
    assert said(prompt("warm", t)) is None  # shown once


def test_a_gate_queued_mid_turn_is_shown_at_the_prompt_after_the_turns_later_calls(tmp_path: Path) -> None:
    """The async Stop hook queued the gate (call 25) at call 27; the turn went on to call 40 (a long
    agentic turn), folded by later hooks: the next prompt shows the gate, priced now, though its call
    is 15 behind. The queue is not news, judged once when its call was folded (hooks.run._news): a
    prompt that showed only the alerts of its last 5 calls told the user of no gate of a long turn's
    start (the message channel is a Codex thread's only one)."""
    config('[notify]\nchannels = ["message"]\nfallback = "none"\n')
    folder = tmp_path / "long"
    folder.mkdir()
    from tests.test_gate import overstaying

    t: Path = overstaying(folder, calls=40, start=time.time() - 60)
    full = t.read_bytes()
    t.write_bytes(b"\n".join(full.split(b"\n")[:53]) + b"\n")  # the first 27 calls
    for _ in range(50):
        assert said(hook("Stop", payload("long", t))) is None
        if (load_state("long").get("cursor") or {}).get("offset") == t.stat().st_size:
            break
    assert [q["alert"]["call"] for q in load_state("long").get("outbox") or []] == [25]
    t.write_bytes(full)
    for _ in range(50):
        assert said(hook("PostToolUse", payload("long", t, "PostToolUse"))) is None
        if (load_state("long").get("cursor") or {}).get("offset") == t.stat().st_size:
            break
    assert load_state("long")["engine"]["calls"] == 40
    out = said(prompt("long", t))
    assert out is not None
    assert "This session now costs more than a fresh start" in out["systemMessage"], out
    assert not load_state("long").get("outbox")


def test_an_earlier_releases_queued_words_and_odd_entries_are_dropped_unshown(tmp_path: Path) -> None:
    """A state saved by an earlier release queued the words (`{"systemMessage", "kept"}`), priced
    then; beside them, entries of any odd shape: the prompt exits 0, shows none of them (the gate
    queued beside them, priced now, is the one it may show) and leaves nothing queued."""
    from session_watcher.state import store

    config('[notify]\nchannels = ["message"]\nfallback = "none"\n')
    t = _queued_gate(tmp_path, "old", time.time())
    state = store.load(str(state_file("old")), "old")
    assert state is not None
    odd: list[Any] = [{"systemMessage": "old words", "kept": True}, {"terminalSequence": "old words"}, "old words",
                      3, None, [], {"alert": "old words", "channels": ["message"]},
                      {"alert": {}, "channels": ["message"]},
                      {"alert": {"kind": "gate", "call": True}, "channels": [1]},
                      {"alert": {"kind": ["gate"], "call": 26}, "channels": ["message"], "segment": [0]}]
    state["outbox"] = [*odd, *state.get("outbox", [])]
    store.save(str(state_file("old")), state)
    out = said(prompt("old", t))
    assert "old words" not in json.dumps(out)
    assert out is not None
    assert "This session now costs more than a fresh start" in out["systemMessage"]
    assert not load_state("old").get("outbox")
    state = store.load(str(state_file("old")), "old")
    assert state is not None
    state["outbox"] = odd
    store.save(str(state_file("old")), state)
    assert said(prompt("old", t)) is None
    assert not load_state("old").get("outbox")


def test_the_guard_and_the_engines_cold_return_alert_quote_one_saving(tmp_path: Path) -> None:
    """What a fresh session saves at a cold return, as the prompt hook quoted it (warn: no handoff
    prepared, the model's K) and as the engine's `guard` alert records it once the cold call is
    folded: one figure (eoq.restart_saving with the cache cold, net of the prefix a cold call still
    reads)."""
    config('guard = "warn"\n')
    t = session(tmp_path, FIVE_MIN, 20)
    assert said(prompt("g1", t)) is not None
    [logged] = warnings_logged()
    assert logged["savingUsd"] > 0.2
    append_cold_call(t)
    assert hook("Stop", payload("g1", t)).returncode == 0
    [alert] = [a for a in load_state("g1")["alerts"] if a["kind"] == "guard"]
    assert alert["savingUsd"] == pytest.approx(logged["savingUsd"], rel=1e-9)


def test_the_held_prompt_left_before_clear_is_held_again(tmp_path: Path) -> None:
    """The held prompt stays in the input box: typed after it, /clear makes one prompt, which Enter
    would send cold. Within the minute it is held again, saying why; the handoff stays ready."""
    from session_watcher.core import guard

    t = session(tmp_path, FIVE_MIN, 20)
    assert said(prompt("g1", t, "carry on"))["decision"] == "block"  # type: ignore[index]
    again = said(prompt("g1", t, "carry on/clear"))
    assert again == {"decision": "block", "reason": guard.NOT_CLEARED}
    assert "Ctrl+U" in again["reason"]
    assert len(pending_handoffs()) == 1
    assert said(prompt("g1", t, "carry on")) is None  # a prompt sent again still goes ahead
    assert pending_handoffs() == []


# ----------------------------------------------------------------------------- one price (issue 37)

def _cfg(state: dict[str, Any]) -> Config:
    from session_watcher.base import config

    return config.load_cached(state["config"], state["context"]["project"])[0]


def _status_line(sid: str, t: Path) -> str:
    raw = {"session_id": sid, "transcript_path": str(t), "cwd": str(t.parent),
           "model": {"id": "claude-opus-4-6", "display_name": "Opus 4.6"}}
    got = statusline(raw, env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200"})
    assert got.returncode == 0
    return got.stdout.decode()


def test_the_held_prompt_the_status_line_and_status_quote_one_saving(tmp_path: Path) -> None:
    """At a cold return held with a handoff prepared, the saving the guard's reason quotes for the
    fresh session is eoq.restart_saving of the saved state (the cache cold, the restart at the
    prepared handoff's K, not the model's), and the status line drawn then (the real command, on the
    same state file) and `status --json` quote the same figure."""
    from session_watcher.core import eoq
    from session_watcher.core.numbers import dollars

    t = session(tmp_path, FIVE_MIN, 20)
    reason = said(prompt("g1", t))["reason"]  # type: ignore[index]
    quoted = re.search(r"Or a fresh session, (\$[\d,.]+) less over the next (~\d+) calls"
                       r"(?:, until the automatic compaction)?: ", reason)
    assert quoted is not None, reason
    state = load_state("g1")
    [doc] = pending_handoffs()
    assert state["guard"]["carry"]["K"] == doc["K"]  # the record of what the prepared note carries
    q = eoq.quantities(cast("State", state), _cfg(state))
    now = time.time()
    units, usd = eoq.restart_saving(state, q, cold=True, now=now)
    model = eoq.restart_saving(state, q, cold=True)  # no clock: the model's K
    assert units is not None
    assert model[0] is not None
    assert q["K"] is not None
    assert units == pytest.approx(model[0] + q["K"] - doc["K"])
    assert units != model[0]
    assert quoted.group(1) == dollars(usd)
    assert q["horizon"] is not None
    assert quoted.group(2) == f"~{round(q['horizon'] / 5) * 5}"
    assert f"restart saves {dollars(usd)} " in _status_line("g1", t)
    status = json.loads(sw("status", "--session", "g1", "--json").stdout)
    assert status["savingUsd"] == round(usd, 6)  # type: ignore[arg-type]
    assert status["saving"] == round(units, 1)
    assert doc["savingUsd"] == status["savingUsd"]  # the handoff's own document: the same one price


def test_the_prepared_handoffs_price_goes_when_it_is_taken_or_dropped(tmp_path: Path) -> None:
    """The record that prices a session's restart at its prepared handoff goes with the handoff:
    taken by the session /clear starts, dropped by `handoff --drop`, or the session goes on (a
    prompt sent again); then the status line prices the restart at the model's K again."""
    from session_watcher.core import eoq

    for sid, how in (("take", "clear"), ("drop", "drop"), ("again", "again")):
        t = session(tmp_path, FIVE_MIN, 20, sid)
        assert said(prompt(sid, t))["decision"] == "block"  # type: ignore[index]
        assert "carry" in load_state(sid)["guard"]
        if how == "clear":
            start = payload(f"{sid}-child", tmp_path / "child.jsonl", "SessionStart", source="clear")
            assert "additionalContext" in json.dumps(said_inject(hook("SessionStart", start, args=("inject",))))
        elif how == "drop":
            assert sw("handoff", "--drop", "--all").returncode == 0
        else:
            assert said(prompt(sid, t)) is None
        assert pending_handoffs() == []
        state = load_state(sid)
        assert "carry" not in state["guard"], how
        q = eoq.quantities(cast("State", state), _cfg(state))
        assert eoq.restart_saving(state, q, cold=True, now=time.time()) == eoq.restart_saving(state, q, cold=True)


def test_a_session_ended_by_clear_forgets_its_prepared_handoff(tmp_path: Path) -> None:
    """/clear ends the held session (SessionEnd, reason clear) as the fresh one takes the handoff:
    whichever hook gets the session's lock first, the record goes."""
    t = session(tmp_path, FIVE_MIN, 20)
    assert said(prompt("g1", t))["decision"] == "block"  # type: ignore[index]
    assert hook("SessionEnd", payload("g1", t, "SessionEnd", reason="other")).returncode == 0
    assert "carry" in load_state("g1")["guard"]
    assert hook("SessionEnd", payload("g1", t, "SessionEnd", reason="clear")).returncode == 0
    assert "carry" not in load_state("g1")["guard"]
