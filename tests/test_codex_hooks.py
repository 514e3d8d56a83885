"""Codex's speaking hooks as Codex runs them (`hook EVENT codex`, through install.sh's launcher, a
Codex payload on stdin) on real rollouts whose timestamps are shifted so that their last call was N
minutes ago: the cold-cache guard holds a prompt once with Codex's choices priced, the handoff it
prepares reaches the next thread's SessionStart (`clear`) as `additionalContext` with what the work
was, a compaction drops it, and an alert reaches the next prompt as a `systemMessage`; every output
is one JSON object within Codex's schema for the event, or nothing."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, cast

import pytest

from session_watcher.agents.codex.hooks import OUTPUT_KEYS
from tests.codex_lines import FIXTURES
from tests.oracle import hook, sw
from tests.statefile import load_state

if TYPE_CHECKING:
    from pathlib import Path

    from session_watcher.core.shapes import State

pytestmark = pytest.mark.slow  # starts processes (tests/conftest.py: the quick tier)

THREAD = "019f6bcb-eb00-7ea1-99ef-7fe2d29e2bba"  # gpt-5.6-sol: a 30-minute cache floor; 3 user prompts
CHILD = "019fa000-0000-7000-8000-0000000000c1"


def _ts(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def shifted(folder: Path, thread: str, minutes_ago: float) -> Path:
    """A copy of the fixture rollout of `thread`, every timestamp moved so that its last call line
    was `minutes_ago` before now, under Codex's file name."""
    recs = [json.loads(x) for x in (FIXTURES / f"rollout-{thread}.jsonl").read_text().splitlines() if x.strip()]
    last = max(_ts(r["timestamp"]) for r in recs if r["type"] == "token_usage_record"
               or (r["type"] == "event_msg" and r["payload"].get("type") == "token_count"))
    delta = time.time() - minutes_ago * 60 - last
    for r in recs:
        moved = datetime.fromtimestamp(_ts(r["timestamp"]) + delta, UTC)
        r["timestamp"] = moved.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    path = folder / f"rollout-2026-07-16T16-39-00-{thread}.jsonl"
    path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in recs))
    return path


def codex(event: str, payload: dict[str, Any]) -> dict[str, Any] | None:
    """One Codex hook run: exit 0, nothing on stderr, and stdout one JSON object within the event's
    schema keys, or nothing."""
    got = hook(event, {"hook_event_name": event, "model": "gpt-5.6-sol", "permission_mode": "default", **payload},
               args=("codex",))
    assert got.returncode == 0
    out = got.stdout.decode()
    if not out:
        return None
    doc = json.loads(out)
    assert out.endswith("\n")
    assert out.count("\n") == 1  # one object, one line
    assert set(doc) <= OUTPUT_KEYS.get(event, frozenset()), doc
    return dict(doc)


def folded(rollout: Path, project: Path) -> Path:
    """`rollout` after Codex's folding hook (PostModelRequest) has read all of it: a run folds for a
    bounded time and leaves the rest to the next, so how many runs that takes depends on the
    machine; what they add up to does not. The prompt's hook then finds nothing left to fold."""
    fold = {"session_id": THREAD, "transcript_path": str(rollout), "cwd": str(project), "kind": "sampling",
            "request_id": "r1", "attempt_number": 1, "thread_id": THREAD, "status": "ok", "response_id": "resp_1",
            "token_usage": {"input_tokens": 1}}
    data = rollout.read_bytes()
    for _ in range(50):
        assert codex("PostModelRequest", fold) is None
        offset = (load_state(THREAD).get("cursor") or {}).get("offset")
        if offset is not None and b"\n" not in data[offset:]:
            return rollout
    raise AssertionError(f"{rollout}: not read to its end after 50 folding runs")


def prompt(rollout: Path, project: Path, text: str = "go on") -> dict[str, Any] | None:
    return codex("UserPromptSubmit", {"session_id": THREAD, "transcript_path": str(rollout), "cwd": str(project),
                                      "turn_id": "t1", "prompt": text})


def start(project: Path, source: str, session: str = CHILD) -> dict[str, Any] | None:
    return codex("SessionStart", {"session_id": session, "transcript_path": None, "cwd": str(project),
                                  "source": source})


def queued_kinds(thread: str) -> list[str]:
    """The kinds of the alerts queued in the thread's state for a prompt that shows them (hooks.outbox:
    the alert, priced and worded when shown)."""
    return [q["alert"]["kind"] for q in load_state(thread).get("outbox") or []]


def pending(project: Path) -> list[dict[str, Any]]:
    got = sw("handoff", "--show", "--json")
    assert got.returncode == 0, got.stderr
    return [d for d in json.loads(got.stdout) if d["project"] == str(project.resolve())]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    p = tmp_path / "proj"
    p.mkdir()
    return p


def test_a_cold_prompt_is_held_once_and_clear_takes_the_handoff_with_the_work(tmp_path: Path, project: Path) -> None:
    rollout = folded(shifted(tmp_path, THREAD, 180), project)
    held = prompt(rollout, project)
    assert held is not None
    assert held["decision"] == "block"
    reason = held["reason"]
    assert "the cache, kept ~30 min on this model, has expired" in reason  # the model's class, not Claude's 5 min
    assert "send this prompt again within a minute" in reason
    assert "/compact" in reason
    assert "a handoff is ready; /clear, and the new session starts with it" in reason
    assert "Ctrl+U" not in reason  # Codex does not put a held prompt back in the input line
    assert [d["parentSession"] for d in pending(project)] == [THREAD]
    assert start(project, "resume", THREAD) is None  # the old conversation is back: no note
    got = start(project, "clear")
    assert got is not None
    assert set(got) == {"hookSpecificOutput", "systemMessage"}  # the note, and the user's word that it came
    assert got["systemMessage"].startswith(
        f"session-watcher: this session starts with the handoff of session {THREAD[:8]}")
    assert got["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    note = got["hookSpecificOutput"]["additionalContext"]
    assert note.startswith(f"[session-watcher handoff from session {THREAD}")
    # what the work was, from the rollout's own records (the digest read Claude Code's shapes only)
    assert "> do 1 2 and 3, then reply to the discussion:" in note
    assert "The user's latest request there, as typed (of 3; quoted):\n> address pr feedback" in note
    assert "mise/src/http.rs" in note
    assert "> Updated [PR #11066](https://github.com/jdx/mise/pull/11066)." in note
    assert pending(project) == []  # taken once
    assert start(project, "clear", "019fa000-0000-7000-8000-0000000000c2") is None


def test_sent_again_within_a_minute_the_prompt_goes_and_the_handoff_is_dropped(tmp_path: Path, project: Path) -> None:
    rollout = folded(shifted(tmp_path, THREAD, 180), project)
    assert prompt(rollout, project) is not None
    assert len(pending(project)) == 1
    assert prompt(rollout, project) is None
    assert pending(project) == []


def test_a_compaction_drops_the_handoff_the_guard_prepared(tmp_path: Path, project: Path) -> None:
    rollout = folded(shifted(tmp_path, THREAD, 180), project)
    assert prompt(rollout, project) is not None
    assert start(project, "compact", "019fa000-0000-7000-8000-0000000000c3") is None  # another thread's: kept
    assert len(pending(project)) == 1
    assert start(project, "compact", THREAD) is None  # Codex's /compact reaches no prompt hook
    assert pending(project) == []


def claude_start(project: Path, source: str, session: str = "claude-child-1") -> dict[str, Any] | None:
    """Claude Code's synchronous SessionStart hook (`hook SessionStart inject`), a real process: its
    output, or None when silent."""
    got = hook("SessionStart", {"session_id": session, "transcript_path": f"/nonexistent/{session}.jsonl",
                                "cwd": str(project), "hook_event_name": "SessionStart", "source": source},
               args=("inject",))
    assert (got.returncode, got.stderr) == (0, b"")
    return dict(json.loads(got.stdout)) if got.stdout else None


def test_a_codex_threads_handoff_waits_for_the_next_codex_thread_not_a_claude_code_session(
        tmp_path: Path, project: Path) -> None:
    """The guard's handoff of a held Codex prompt names Codex: a Claude Code session started in the
    project meanwhile (a new one, or one cleared) leaves it pending, `handoff --show` says which
    agent's session it waits for, and the next Codex thread takes it."""
    rollout = folded(shifted(tmp_path, THREAD, 180), project)
    assert prompt(rollout, project) is not None  # held: the handoff prepared
    [doc] = pending(project)
    assert (doc["parentSession"], doc["agent"]) == (THREAD, "codex")
    assert claude_start(project, "startup") is None
    assert claude_start(project, "clear", "claude-child-2") is None
    assert [d["parentSession"] for d in pending(project)] == [THREAD]  # still waiting, untouched
    shown = " ".join(sw("handoff", "--show").stdout.decode().split())
    assert f"waiting: the handoff for a Codex session in {project.resolve()} from session {THREAD[:8]}" in shown
    got = start(project, "clear")
    assert got is not None
    assert got["hookSpecificOutput"]["additionalContext"].startswith(f"[session-watcher handoff from session {THREAD}")
    assert pending(project) == []


def test_a_claude_code_handoff_is_not_taken_by_a_codex_thread(project: Path) -> None:
    """The reverse: a note a Claude Code session wrote waits for Claude Code's next session; a Codex
    thread started in the project leaves it pending."""
    from session_watcher.core.handoff import header
    from session_watcher.state import handoffs

    note = header("claude-parent", "2026-12-06 12:00 UTC", 1000, 0.01) + "\nthe work so far"
    handoffs.write_pending({"project": str(project.resolve()), "parentSession": "claude-parent",
                            "createdAt": time.time(), "note": note, "agent": "claude-code"})
    assert start(project, "startup") is None
    assert start(project, "clear", "019fa000-0000-7000-8000-0000000000c4") is None
    assert [d["parentSession"] for d in pending(project)] == ["claude-parent"]
    got = claude_start(project, "clear")
    assert got is not None
    assert got["hookSpecificOutput"]["additionalContext"] == note
    assert pending(project) == []


@pytest.mark.parametrize("agent", ["codex", "claude-code"])
def test_a_handoff_written_before_notes_named_their_agent_is_taken_by_either(project: Path, agent: str) -> None:
    """A pending note without `agent` (an older version wrote it) goes to the next fresh session of
    the project, whichever agent's, as it did."""
    from session_watcher.core.handoff import header
    from session_watcher.state import handoffs

    note = header("old-parent", "2026-12-06 12:00 UTC", 1000, 0.01) + "\nthe work so far"
    handoffs.write_pending({"project": str(project.resolve()), "parentSession": "old-parent",
                            "createdAt": time.time(), "note": note})
    shown = " ".join(sw("handoff", "--show").stdout.decode().split())
    assert f"waiting: the handoff for {project.resolve()} from session old-pare" in shown  # no agent named
    got = start(project, "clear") if agent == "codex" else claude_start(project, "clear")
    assert got is not None
    assert got["hookSpecificOutput"]["additionalContext"] == note
    assert pending(project) == []


def test_an_alert_reaches_the_next_prompt_as_a_system_message(tmp_path: Path, project: Path) -> None:
    """Codex has no status line and cannot write a terminal sequence: the alert a folding hook fired
    (past the sweet spot, warm cache) is queued and shown by the next prompt's hook, which holds
    nothing back; the channel Codex cannot carry is left out."""
    assert sw("config", "set", "notify.channels", '["terminal"]').returncode == 0
    rollout = folded(shifted(tmp_path, THREAD, 1), project)
    got = prompt(rollout, project)
    assert got is not None
    assert set(got) == {"systemMessage"}, got
    assert "costs more than a fresh start" in got["systemMessage"]
    assert prompt(rollout, project) is None  # shown once


def test_after_a_break_the_alerts_of_the_calls_before_it_are_not_news(tmp_path: Path, project: Path) -> None:
    """The thread's last calls are past the sweet spot, and its hooks fold them only 3 h on (the first
    runs on yesterday's thread after an install; the prompt of a `codex exec` folding the call whose
    own async hook exec cut off): the prompt is held with the guard's figures for the cache as it is,
    and the alert of then (its saving priced on a warm cache, over calls that never came) is not
    shown beside it, nor when the prompt is sent again; it stays in the state for `status`. It was
    shown, its restart line taken out, as "Restarting now saves $0.89 over the next ~16 calls" beside
    the hold's "$1.67 less"."""
    assert sw("config", "set", "notify.channels", '["message"]').returncode == 0
    rollout = shifted(tmp_path, THREAD, 180)
    for _ in range(50):  # the prompt's hook folds the thread (a run folds for a bounded time), then holds
        held = prompt(rollout, project)
        if held is not None:
            break
    assert held is not None
    assert held.get("decision") == "block", held
    assert "session-watcher: cold cache" in held["reason"]
    assert "systemMessage" not in held, held
    again = prompt(rollout, project)  # within the minute: it goes
    assert again is None or "costs more than a fresh start" not in json.dumps(again), again
    assert any(a["kind"] in ("gate", "backstop") for a in load_state(THREAD)["alerts"])


@pytest.mark.parametrize("guard", ["warn", "off"])
def test_after_a_break_the_alerts_of_then_are_not_news_whatever_the_guard(tmp_path: Path, project: Path,
                                                                          guard: str) -> None:
    """The same break with the guard set not to hold the prompt: the alert of then is as stale (its
    saving priced on a warm cache, hours late) whether or not the guard speaks, and the advice for
    the cache as it is comes after the prompt's call, the cold return's alert, which the guard's
    setting does not touch. So no prompt shows it, until the rollout is folded to its end."""
    assert sw("config", "set", "notify.channels", '["message"]').returncode == 0
    assert sw("config", "set", "guard", json.dumps(guard)).returncode == 0
    rollout = shifted(tmp_path, THREAD, 180)
    data = rollout.read_bytes()
    said = []
    for _ in range(50):  # the prompt's hook folds the thread (a run folds for a bounded time)
        said.append(prompt(rollout, project))
        offset = (load_state(THREAD).get("cursor") or {}).get("offset")
        if offset is not None and b"\n" not in data[offset:]:
            break
    else:
        raise AssertionError("not read to its end after 50 prompts")
    said.append(prompt(rollout, project))
    assert not any(s is not None and "costs more than a fresh start" in json.dumps(s) for s in said), said
    assert any(a["kind"] in ("gate", "backstop") for a in load_state(THREAD)["alerts"])
    if guard == "warn":  # the guard's own word on the cache as it is, and no hold
        assert any(s is not None and "cold cache" in json.dumps(s) for s in said), said
    assert not any(s is not None and s.get("decision") == "block" for s in said), said


def _under(tmp_path: Path, subcommand: str, event: str, payload: dict[str, Any]) -> tuple[dict[str, Any] | None, str]:
    """One Codex hook run by a process named `codex` whose command line is `codex SUBCOMMAND ...` (a
    shell script, as agents.codex.execout finds the Codex that runs a hook): (the hook's JSON output,
    what went to that process's stderr: under exec, the texts a person reads there)."""
    import subprocess

    from tests.oracle import launcher

    script = tmp_path / "codex"
    script.write_text('#!/bin/sh\nshift\n"$@"\nstatus=$?\nexit $status\n')  # not exec'd: it stays the parent
    script.chmod(0o755)
    raw = json.dumps({"hook_event_name": event, "model": "gpt-5.6-sol", "permission_mode": "default", **payload})
    got = subprocess.run([str(script), subcommand, *launcher("hook", event, "codex")], input=raw.encode(),
                         capture_output=True, timeout=60, check=False)
    assert got.returncode == 0, got.stderr
    out = got.stdout.decode()
    return (json.loads(out) if out else None), got.stderr.decode()


def test_under_exec_a_typed_clear_sent_again_is_told_exec_has_none(tmp_path: Path, project: Path) -> None:
    """Under `codex exec` a typed `/compact` or `/clear` is a prompt to the model: on a cold thread
    the guard holds it. Sent again within the minute, `/clear` was held with Claude Code's words
    ("the input line still held your prompt before /clear. Clear it first (Ctrl+U)"): exec has no
    input line and no /clear; it says so, and names exec's way to the handoff, still ready."""
    from session_watcher.agents.codex.execout import EXEC_CLEAR

    rollout = folded(shifted(tmp_path, THREAD, 180), project)
    ask = {"session_id": THREAD, "transcript_path": str(rollout), "cwd": str(project), "turn_id": "t1"}
    held, shown = _under(tmp_path, "exec", "UserPromptSubmit", {**ask, "prompt": "/clear"})
    assert held is not None
    assert held["decision"] == "block"
    assert EXEC_CLEAR in shown  # the reason, on exec's stderr
    assert "Or /compact" not in shown
    again, shown = _under(tmp_path, "exec", "UserPromptSubmit", {**ask, "prompt": " /clear\n"})
    assert again is not None
    assert again["decision"] == "block"
    assert "Ctrl+U" not in shown
    assert "input line" not in shown
    assert "no /clear" in shown
    assert "Run `codex exec` without `resume` in this project: the handoff is still ready." in shown
    assert len(pending(project)) == 1
    assert _under(tmp_path, "exec", "UserPromptSubmit", {**ask, "prompt": "go on"})[0] is None  # sent again: goes
    assert pending(project) == []


def test_under_exec_a_typed_compact_is_held_as_words_to_the_model(tmp_path: Path, project: Path) -> None:
    """Under `codex exec` a typed `/compact` on a cold thread is held, and the reason says it is no
    command there (the word goes to the model, re-writing the thread, compacting nothing) and where
    a compaction is: the TUI's. A held prompt of other words is held as before."""
    rollout = folded(shifted(tmp_path, THREAD, 180), project)
    ask = {"session_id": THREAD, "transcript_path": str(rollout), "cwd": str(project), "turn_id": "t1"}
    held, shown = _under(tmp_path, "exec", "UserPromptSubmit", {**ask, "prompt": "/compact"})
    assert held is not None
    assert held["decision"] == "block"
    said = " ".join(shown.split())
    assert "Nothing was sent. `codex exec` has no /compact command: it sends the word to the model as a prompt, " \
           "which re-writes" in said, said
    assert "compacts nothing (sent again within a minute, it goes as that prompt). To compact, resume the thread " \
           "in Codex's terminal UI (`codex resume`) and type /compact there: it reads all" in said
    assert "Continue: send this prompt again" not in said


def test_in_the_tui_slash_commands_pass_and_a_warm_compact_under_exec_goes(tmp_path: Path, project: Path) -> None:
    """The TUI's own slash commands pass the guard untouched, cold or not (a `codex` that is not
    exec); under exec a `/compact` on a warm thread goes, as any prompt there does."""
    rollout = folded(shifted(tmp_path, THREAD, 180), project)
    ask = {"session_id": THREAD, "transcript_path": str(rollout), "cwd": str(project), "turn_id": "t1"}
    for typed in ("/compact", " /compact now", "/clear"):  # the alert the fold queued may come along: no hold
        out, shown = _under(tmp_path, "resume", "UserPromptSubmit", {**ask, "prompt": typed})
        assert "decision" not in (out or {})
        assert "cold cache" not in json.dumps(out)
        assert shown == ""  # the TUI's terminal is never written to
    assert pending(project) == []
    warm = folded(shifted(tmp_path, THREAD, 1), project)
    out, shown = _under(tmp_path, "exec", "UserPromptSubmit",
                        {**ask, "transcript_path": str(warm), "prompt": "/compact"})
    assert "decision" not in (out or {})
    assert "cold cache" not in shown
    assert pending(project) == []


@pytest.mark.parametrize(("minutes_ago", "text", "asked"), [
    (1, "/review the diff", 0),  # warm: the prompt goes whichever Codex runs it
    (1, "/compact", 1),  # the TUI's would drop the guard's handoff
    (180, "/review the diff", 1),  # cold: held under exec, passed in the TUI
])
def test_whether_codex_runs_as_exec_is_asked_only_where_it_changes_something(
        tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch, minutes_ago: int, text: str,
        asked: int) -> None:
    """A slash prompt on a Codex thread: whether the hook runs under `codex exec` (its process tree;
    a `ps` of up to five runs where there is no /proc, macOS) is asked only where the answer changes
    what the guard does; it was asked of every slash prompt, a warm one too."""
    from session_watcher.agents.codex import execout
    from session_watcher.base import config
    from session_watcher.hooks.prompt import guard_prompt

    folded(shifted(tmp_path, THREAD, minutes_ago), project)
    calls: list[bool] = []

    def under_exec() -> bool:
        calls.append(True)
        return False

    monkeypatch.setattr(execout, "under_exec", under_exec)
    state = cast("State", load_state(THREAD))
    out, _changed = guard_prompt(state, config.load(str(project)), {"prompt": text})
    assert out is None  # a slash command in the TUI passes, cold or warm
    assert len(calls) == asked


def test_an_alert_left_queued_unseen_under_exec_is_dropped_once_its_cache_has_gone(tmp_path: Path,
                                                                                   project: Path) -> None:
    """Under `codex exec` with its stderr a file opened for overwrite (`2>log`) a prompt leaves the
    queued alert in the state for a prompt that shows it. It stays only while the cache it was
    priced on does: a thread whose last call is 3 h old had its alert queued by the folding hook;
    the exec prompt (held, unseen) drops it, as any prompt past a break beyond the cache's edge does
    (hooks.run._route; it kept it, and only a later prompt dropped it, until every queued alert was
    priced when shown: hooks.outbox), and the next prompt, in the TUI, shows it not (it was shown
    there once, "costs more than a fresh start" priced on a warm cache, hours late)."""
    import subprocess

    from tests.oracle import launcher

    assert sw("config", "set", "notify.channels", '["message"]').returncode == 0
    rollout = folded(shifted(tmp_path, THREAD, 180), project)  # the async fold queues its alert
    assert queued_kinds(THREAD) == ["backstop"], load_state(THREAD).get("outbox")
    script = tmp_path / "codex"
    script.write_text('#!/bin/sh\nshift\n"$@"\nstatus=$?\nexit $status\n')  # not exec'd: it stays the parent
    script.chmod(0o755)
    ask = {"hook_event_name": "UserPromptSubmit", "model": "gpt-5.6-sol", "permission_mode": "default",
           "session_id": THREAD, "transcript_path": str(rollout), "cwd": str(project), "turn_id": "t1",
           "prompt": "go on"}
    log = tmp_path / "exec.log"
    with log.open("w") as err:  # `codex exec ... 2>exec.log`: no O_APPEND, no line of ours may go there
        got = subprocess.run([str(script), "exec", *launcher("hook", "UserPromptSubmit", "codex")],
                             input=json.dumps(ask).encode(), stdout=subprocess.PIPE, stderr=err, timeout=60,
                             check=False)
    assert got.returncode == 0
    held = json.loads(got.stdout)
    assert held.get("decision") == "block", held  # the guard's hold is given all the same
    assert "systemMessage" not in held
    assert "costs more than a fresh start" not in log.read_text()
    assert not load_state(THREAD).get("outbox")  # dropped: priced on a cache gone since
    shown = prompt(rollout, project)  # the TUI, at once: sent again within the minute, the prompt goes
    assert shown is None or "costs more than a fresh start" not in json.dumps(shown), shown
    assert not load_state(THREAD).get("outbox")


def _exec_hook(tmp_path: Path, event: str, payload: dict[str, Any]) -> dict[str, Any] | None:
    """One hook run as `codex exec` runs it with its stderr a file opened for overwrite (`2>log`:
    no line of ours may go there, so what the prompt would show waits, queued): a stand-in `codex`
    script stays the hook's parent; exit 0, nothing in the log."""
    import subprocess

    from tests.oracle import launcher

    script = tmp_path / "codex"
    if not script.exists():
        script.write_text('#!/bin/sh\nshift\n"$@"\nstatus=$?\nexit $status\n')  # not exec'd: it stays the parent
        script.chmod(0o755)
    log = tmp_path / "exec.log"
    body = {"hook_event_name": event, "model": "gpt-5.6-sol", "permission_mode": "default", **payload}
    with log.open("w") as err:
        got = subprocess.run([str(script), "exec", *launcher("hook", event, "codex")], input=json.dumps(body).encode(),
                             stdout=subprocess.PIPE, stderr=err, timeout=60, check=False)
    assert got.returncode == 0
    assert log.read_text() == ""
    return json.loads(got.stdout) if got.stdout.strip() else None


def _cut(rollout: Path, calls: int) -> bytes:
    """The rollout's first lines up to the one that makes its `calls`-th call (replay's count)."""
    from session_watcher.sessions.replay import replay

    data = rollout.read_bytes()
    ends = [i + 1 for i, byte in enumerate(data) if byte == 0x0A]
    probe = rollout.with_name("probe-" + rollout.name)
    lo, hi = 0, len(ends) - 1
    while lo < hi:  # the fewest lines that hold `calls` calls
        mid = (lo + hi) // 2
        probe.write_bytes(data[:ends[mid]])
        if replay(str(probe))[0]["calls"] >= calls:
            hi = mid
        else:
            lo = mid + 1
    probe.unlink()
    return data[:ends[lo]]


def test_a_queued_alert_is_shown_at_the_price_of_when_it_is_shown(tmp_path: Path, project: Path) -> None:
    """The thread's reminder at call 232 is queued by the folding hook; two more calls are folded
    (a later `codex exec`, warm) before a prompt shows it: it quotes what `status` says a restart
    saves then (the one price: eoq.restart_saving), not the $0.89 it was priced at when queued
    (it was shown so, hours or many runs later too)."""
    from session_watcher.core.numbers import dollars

    assert sw("config", "set", "notify.channels", '["message"]').returncode == 0
    rollout = shifted(tmp_path, THREAD, 2)  # warm: a 30-minute cache floor
    whole = rollout.read_bytes()
    head = _cut(rollout, 232)
    rollout.write_bytes(head)
    folded(rollout, project)
    state = load_state(THREAD)
    assert state.get("outbox"), "the reminder waits for a prompt"
    [queued] = [a for a in state["alerts"] if a["call"] == 232]
    assert queued["kind"] == "backstop"
    then = dollars(queued["savingUsd"])
    rollout.write_bytes(whole)  # calls 233 and 234
    folded(rollout, project)
    assert load_state(THREAD)["engine"]["calls"] == 234
    now = json.loads(sw("status", THREAD, "--json").stdout)["savingUsd"]
    assert dollars(now) != then  # the price moved: the test can tell them apart
    got = prompt(rollout, project)
    assert got is not None
    assert f"Restarting now saves {dollars(now)} over the next" in got["systemMessage"], got
    assert then not in got["systemMessage"]
    assert got["systemMessage"].count("session-watcher: ") == 1  # one alert per prompt
    assert prompt(rollout, project) is None


def test_an_alert_queued_under_exec_is_worded_for_the_tui_that_shows_it(tmp_path: Path, project: Path) -> None:
    """A `codex exec` prompt (its stderr a file opened for overwrite: nothing shown) folds the
    thread and queues its reminder; the TUI's next prompt shows it with the TUI's restart, the `!`
    form then /clear (words chosen when shown, base/route.py), not exec's "in another terminal,
    then run `codex exec` without `resume`" (it was worded when queued)."""
    assert sw("config", "set", "notify.channels", '["message"]').returncode == 0
    rollout = shifted(tmp_path, THREAD, 2)
    ask = {"session_id": THREAD, "transcript_path": str(rollout), "cwd": str(project), "turn_id": "t1",
           "prompt": "go on"}
    for _ in range(50):  # the exec prompt's hook folds the thread (a run folds for a bounded time)
        assert _exec_hook(tmp_path, "UserPromptSubmit", ask) is None  # warm: nothing held, nothing seen
        if (load_state(THREAD).get("cursor") or {}).get("offset") == rollout.stat().st_size:
            break
    assert load_state(THREAD).get("outbox"), "the reminder waits for a prompt"
    got = prompt(rollout, project)  # the TUI
    assert got is not None
    text = got["systemMessage"]
    assert "To restart with a handoff: `!" in text, text
    assert "session-watcher handoff` (Codex runs it itself: no request to the model), then /clear here." in text
    assert "another terminal" not in text
    assert "codex exec" not in text


def test_a_warm_exec_prompt_that_could_show_nothing_takes_no_lock(tmp_path: Path, project: Path) -> None:
    """Under `codex exec` with a stderr no line can be added to, a warm prompt with an alert queued
    has nothing to do: the lock-free read says so (Agent.unseen), and the prompt does not wait for
    the session's lock (held here by another hook: it waited its 1 s and logged the lock busy)."""
    import os
    import pathlib

    import filelock

    from tests.statefile import state_file

    assert sw("config", "set", "notify.channels", '["message"]').returncode == 0
    rollout = folded(shifted(tmp_path, THREAD, 2), project)
    assert load_state(THREAD).get("outbox"), "the reminder waits for a prompt"
    ask = {"session_id": THREAD, "transcript_path": str(rollout), "cwd": str(project), "turn_id": "t1",
           "prompt": "go on"}
    log = pathlib.Path(os.environ["SESSION_WATCHER_HOME"]) / "log" / "session-watcher.log"
    with filelock.FileLock(str(state_file(THREAD)) + ".lock"):
        assert _exec_hook(tmp_path, "UserPromptSubmit", ask) is None
    assert not log.exists() or "lock busy" not in log.read_text(), log.read_text()
    assert load_state(THREAD).get("outbox"), "still waiting for a prompt that shows it"
